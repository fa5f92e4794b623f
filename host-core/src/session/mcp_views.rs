//! A session's MCP App views (R-MCP-3 … R-MCP-8, R-MCP-13): the agent's opens, closes and
//! news of them, the resources it sends by digest, the agent's answers and progress, what the
//! views report, and their deadlines. They share the instance namespace and the open bounds
//! with Surfaces and standard components.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::common::Common;
use super::mcp_view::View;
use super::surfaces::{close_event, unknown_instance};
use crate::effect::{CloseReason, Effect, GoneReason};
use crate::error::{ErrorCode, ProtocolError};
use crate::ids::InstanceId;
use crate::json::JsonObject;
use crate::keys::{Generation, SurfaceKey};
use crate::limits::Limits;
use crate::mcp::{
    McpLimits, McpResources, McpRouter, ResourceDigest, ResourceLimits, ResourceRefusal, RpcError,
    RpcId, ShownTool,
};
use crate::mcp_effect::{McpEffect, McpViewOpen};
use crate::mcp_message::{McpAppOpen, McpHtml, McpResource, McpTool};
use crate::mcp_upstream::{McpAnswer, McpProgress};
use crate::message::{Envelope, Payload, UiEvent};
use crate::page_input::PageInput;

/// The refusal of an MCP App envelope (`field` names the form) by a session that does not
/// show MCP App views (R-MCP-13).
fn unsupported(field: &str) -> ProtocolError {
    ProtocolError::new(
        ErrorCode::Unsupported,
        "R-MCP-13",
        "this host does not show MCP App views (its inventory lists no mcp_apps); send app or component instead",
    )
    .field(field)
}

/// A refused chunk as the agent hears it: the field, the value and the limit (R-MCP-4).
fn chunk_refusal(refusal: ResourceRefusal) -> ProtocolError {
    let (code, field, limit) = match &refusal {
        ResourceRefusal::MalformedDigest(_) => (ErrorCode::InvalidField, "payload.digest", None),
        ResourceRefusal::TooLarge { limit, .. } => {
            (ErrorCode::TooLarge, "payload.size", Some(*limit))
        }
        ResourceRefusal::ChunkTooLarge { limit, .. } => (
            ErrorCode::TooLarge,
            "payload.data",
            u64::try_from(*limit).ok(),
        ),
        ResourceRefusal::NotBase64(_) | ResourceRefusal::Overrun { .. } => {
            (ErrorCode::InvalidField, "payload.data", None)
        }
        ResourceRefusal::OutOfOrder { .. } => (ErrorCode::OutOfOrder, "payload.offset", None),
        ResourceRefusal::SizeChanged { .. } => (ErrorCode::InvalidField, "payload.size", None),
        ResourceRefusal::DigestMismatch { .. } => {
            (ErrorCode::IntegrityMismatch, "payload.digest", None)
        }
        ResourceRefusal::TooManyArriving { limit, .. } => (
            ErrorCode::RateLimited,
            "payload.digest",
            u64::try_from(*limit).ok(),
        ),
    };
    let mut err = ProtocolError::new(code, "R-MCP-4", refusal.to_string()).field(field);
    err.limit = limit;
    err
}

/// The MCP App views of one session, by instance id, the views closing after their teardown,
/// and the resources the agent sent by digest.
///
/// Invariants: an instance id is open here, among the session's Surfaces, or among its
/// components, never two of them (the session replaces one by another, R-UI-1). A view taken
/// out of `open` while it is alive gets its teardown (R-MCP-8) and waits in `closing` under its
/// key until it answers or its deadline passes, then closes; one whose process is gone closes
/// at once. Every view closes by exactly one [`Effect::Close`]. Nothing opens, and no `mcp.*`
/// envelope is taken, unless the configuration enables MCP App views (R-MCP-13).
#[derive(Default)]
pub(super) struct McpViews {
    resources: McpResources,
    open: BTreeMap<InstanceId, View>,
    closing: BTreeMap<SurfaceKey, View>,
}

impl McpViews {
    /// No views, resources bounded by `limits` (`Limits::max_mcp_resource_bytes`).
    pub(super) fn new(limits: &Limits) -> Self {
        let bounds = ResourceLimits {
            max_resource_bytes: u64::try_from(limits.max_mcp_resource_bytes).unwrap_or(u64::MAX),
            ..ResourceLimits::default()
        };
        Self {
            resources: McpResources::new(bounds),
            ..Self::default()
        }
    }

    /// How many views are open (closing ones not counted).
    pub(super) fn len(&self) -> usize {
        self.open.len()
    }

    /// The refusal of a `ui.patch` of view `instance`: a view has no state (R-MCP-5).
    pub(super) fn no_patch(instance: &InstanceId) -> ProtocolError {
        ProtocolError::new(
            ErrorCode::Unsupported,
            "R-MCP-5",
            format!(
                "instance {instance} is an MCP App view: it has no state to patch; send mcp.tool"
            ),
        )
        .field("payload.instance_id")
    }

    /// Whether an open view holds `instance`.
    pub(super) fn contains(&self, instance: &InstanceId) -> bool {
        self.open.contains_key(instance)
    }

    /// The view `key` names, open or closing.
    fn view_mut(&mut self, key: &SurfaceKey, common: &Common) -> Option<&mut View> {
        if !common.owns(key) {
            return None;
        }
        match self.open.get_mut(&key.instance) {
            Some(view) if view.generation() == key.generation => Some(view),
            _ => self.closing.get_mut(key),
        }
    }

    /// Whether `key` names one of these views that is open (not closing).
    pub(super) fn is_open(&self, key: &SurfaceKey, common: &Common) -> bool {
        common.owns(key)
            && (self.open.get(&key.instance)).is_some_and(|v| v.generation() == key.generation)
    }

    /// Whether `key` names one of these views, open or closing.
    pub(super) fn holds(&self, key: &SurfaceKey, common: &Common) -> bool {
        self.is_open(key, common) || (common.owns(key) && self.closing.contains_key(key))
    }

    /// The view limits, when the session shows MCP App views; else `unsupported` naming `field`.
    fn enabled<'a>(common: &'a Common, field: &str) -> Result<&'a McpLimits, ProtocolError> {
        common
            .config()
            .mcp_apps
            .as_ref()
            .ok_or_else(|| unsupported(field))
    }

    /// The HTML of an open and its digest, within `Limits::max_mcp_resource_bytes`.
    fn html(
        &mut self,
        html: McpHtml,
        limits: &Limits,
    ) -> Result<(Arc<[u8]>, ResourceDigest), ProtocolError> {
        let (bytes, form): (Arc<[u8]>, &str) = match html {
            McpHtml::Text(text) => (text.into_bytes().into(), "text"),
            McpHtml::Blob(bytes) => (bytes.into(), "blob"),
            McpHtml::Digest(digest) => {
                let bytes = self.resources.get(&digest).ok_or_else(|| {
                    ProtocolError::new(
                        ErrorCode::UnknownResource,
                        "R-MCP-4",
                        format!(
                            "resource {digest} did not arrive whole in mcp.resource chunks, or was dropped from this session's cache; send it, then open it"
                        ),
                    )
                    .field("payload.mcp_app.resource.digest")
                })?;
                return Ok((bytes, digest));
            }
        };
        let limit = limits.max_mcp_resource_bytes;
        if bytes.len() > limit {
            return Err(ProtocolError::new(
                ErrorCode::TooLarge,
                "R-MCP-4",
                format!(
                    "the view's HTML is {} bytes; the limit is {limit} bytes",
                    bytes.len()
                ),
            )
            .field(format!("payload.mcp_app.resource.{form}"))
            .limit(limit));
        }
        let digest = ResourceDigest::of(&bytes);
        Ok((bytes, digest))
    }

    /// The agent's `ui.open` with `mcp_app` (R-MCP-3): it replaces whatever holds the id,
    /// sending nothing upstream (R-UI-1): `make_room` closes a Surface or a component holding
    /// it, and a view holding it is torn down first (R-MCP-8). `others` Surfaces of this
    /// session count toward `Limits::max_surfaces` with these views.
    pub(super) fn open(
        &mut self,
        env: Envelope<McpAppOpen>,
        others: usize,
        common: &mut Common,
        fx: &mut Vec<Effect>,
        make_room: impl FnOnce(&InstanceId, &Common, &mut Vec<Effect>),
    ) -> Result<(), ProtocolError> {
        let limits = Self::enabled(common, "payload.mcp_app")?.clone();
        let McpAppOpen {
            instance_id,
            mcp_app,
        } = env.payload;
        let (server, resource, tool) = mcp_app.into_parts();
        let (uri, ui, html) = resource.into_parts();
        let (html, digest) = self.html(html, common.limits())?;
        if !self.open.contains_key(&instance_id) {
            common.admit_count(others + self.open.len())?;
        }
        common.admit_open_rate()?;
        make_room(&instance_id, common, fx);
        self.replace(&instance_id, common, fx);
        let generation = common.generation();
        let key = common.key(&instance_id, generation);
        let meta = Value::Object(tool.meta.as_map().clone());
        let router = McpRouter::new(limits, ShownTool::new(tool.name.as_str(), &meta));
        let view = View::new(generation, router, server.clone(), (env.sender, env.id));
        self.open.insert(instance_id, view);
        fx.push(Effect::Mcp(McpEffect::Open(McpViewOpen {
            key,
            server,
            uri,
            ui,
            tool,
            html,
            digest,
        })));
        Ok(())
    }

    /// Takes the view holding `instance` off, if one does, for another open of that id
    /// (R-UI-1): torn down first (R-MCP-8), then closed `Replaced`; nothing goes upstream.
    pub(super) fn replace(&mut self, instance: &InstanceId, common: &Common, fx: &mut Vec<Effect>) {
        if let Some(view) = self.open.remove(instance) {
            let key = common.key(instance, view.generation());
            self.retire(key, view, CloseReason::Replaced, common, fx);
        }
    }

    /// Tears `view` down for `why` and closes it, now or once it answered (R-MCP-8).
    fn retire(
        &mut self,
        key: SurfaceKey,
        mut view: View,
        why: CloseReason,
        common: &Common,
        fx: &mut Vec<Effect>,
    ) {
        if view.teardown(&key, why.clone(), common, fx) {
            fx.push(Effect::Close { key, reason: why });
        } else {
            self.closing.insert(key, view);
        }
    }

    /// The agent's `ui.close` of view `instance`: torn down, then closed; `false` when no view
    /// holds the id.
    pub(super) fn close(
        &mut self,
        instance: &InstanceId,
        reason: Option<String>,
        common: &Common,
        fx: &mut Vec<Effect>,
    ) -> bool {
        let Some(view) = self.open.remove(instance) else {
            return false;
        };
        let key = common.key(instance, view.generation());
        self.retire(key, view, CloseReason::Agent(reason), common, fx);
        true
    }

    /// A chunk of a view's HTML (R-MCP-4), refused naming the field, value and limit.
    pub(super) fn resource(
        &mut self,
        chunk: McpResource,
        common: &Common,
    ) -> Result<(), ProtocolError> {
        Self::enabled(common, "type")?;
        self.resources
            .chunk(
                &chunk.digest.to_string(),
                chunk.size,
                chunk.offset,
                &chunk.data,
            )
            .map(|_| ())
            .map_err(chunk_refusal)
    }

    /// The agent's news of the tool call view `instance` shows (R-MCP-5), refused
    /// `out_of_order` when it comes out of order.
    pub(super) fn tool(
        &mut self,
        news: McpTool,
        common: &mut Common,
        fx: &mut Vec<Effect>,
    ) -> Result<(), ProtocolError> {
        Self::enabled(common, "type")?;
        let McpTool { instance_id, news } = news;
        let Some(view) = self.open.get_mut(&instance_id) else {
            return Err(unknown_instance(&instance_id, McpTool::TYPE));
        };
        let key = common.key(&instance_id, view.generation());
        view.tool_news(&key, &news, common, fx).map_err(|why| {
            ProtocolError::new(ErrorCode::OutOfOrder, "R-MCP-5", why).field("payload.news")
        })
    }

    /// The view of `instance` at `generation`, open or closing, with its key.
    fn by_generation(
        &mut self,
        instance: &InstanceId,
        generation: u64,
        common: &Common,
    ) -> Option<(SurfaceKey, &mut View)> {
        let key = common.key(instance, Generation(generation));
        let view = self.view_mut(&key, common)?;
        Some((key, view))
    }

    /// The agent's answer to a forwarded request (R-MCP-6): relayed while it waits, else
    /// dropped and counted (`Stats::mcp_late`), never relayed.
    pub(super) fn answer(
        &mut self,
        answer: McpAnswer,
        common: &mut Common,
        fx: &mut Vec<Effect>,
    ) -> Result<(), ProtocolError> {
        Self::enabled(common, "type")?;
        let Some((key, view)) = self.by_generation(&answer.instance_id, answer.generation, common)
        else {
            common.stats_mut().mcp_late += 1;
            return Ok(());
        };
        let outcome = answer
            .outcome
            .map(|result| Value::Object(result.into_map()));
        view.answered(&key, (answer.request_id, outcome), common, fx);
        Ok(())
    }

    /// The agent's progress of a forwarded request (R-MCP-6), as [`McpViews::answer`].
    pub(super) fn progress(
        &mut self,
        progress: McpProgress,
        common: &mut Common,
        fx: &mut Vec<Effect>,
    ) -> Result<(), ProtocolError> {
        Self::enabled(common, "type")?;
        let params = progress.params();
        let found = self.by_generation(&progress.instance_id, progress.generation, common);
        let Some((key, view)) = found else {
            common.stats_mut().mcp_late += 1;
            return Ok(());
        };
        view.progress(&key, (progress.request_id, params), common, fx);
        Ok(())
    }

    /// The host's answer to view `key`'s request `id` that it took itself (R-MCP-8); nothing
    /// for a stale key.
    pub(super) fn host_answer(
        &mut self,
        key: &SurfaceKey,
        (id, outcome): (&RpcId, Result<Value, RpcError>),
        common: &Common,
    ) -> Vec<Effect> {
        let mut fx = Vec::new();
        if let Some(view) = self.view_mut(key, common) {
            view.host_answer(key, (id, outcome), &mut fx);
        }
        fx
    }

    /// What view `key` reported ([`PageInput`]); a stale key is counted, nothing follows.
    pub(super) fn page(
        &mut self,
        key: &SurfaceKey,
        input: PageInput<'_>,
        common: &mut Common,
    ) -> Vec<Effect> {
        let mut fx = Vec::new();
        let Some(view) = self.view_mut(key, common) else {
            common.stats_mut().bridge_stale += 1;
            return fx;
        };
        match input {
            PageInput::McpFromView(text) => {
                let torn_down = view.posted(key, text, common, &mut fx);
                if torn_down {
                    self.closed(key, &mut fx);
                }
            }
            PageInput::Oversized { len } => view.oversized(key, len, common, &mut fx),
            PageInput::Flood { count } => common.stats_mut().bridge_flooded += count,
            PageInput::McpRelayDropped(_) => common.stats_mut().mcp_relay_dropped += 1,
            PageInput::McpBlocked { directive, blocked } => {
                view.blocked(key, (directive, blocked), common, &mut fx);
            }
            PageInput::UserClosed => self.user_closed(key, common, &mut fx),
            PageInput::Gone(reason) | PageInput::Lost(reason) => {
                self.gone(key, reason, common, &mut fx);
            }
            PageInput::OpenFailed(why) => {
                let err = ProtocolError::new(
                    ErrorCode::SurfaceFailed,
                    "R-ENV-5",
                    format!("mcp app view {} could not be created: {why}", key.instance),
                );
                self.not_served(key, err, common, &mut fx);
            }
            PageInput::LiveCapReached { limit } => {
                let err = ProtocolError::new(
                    ErrorCode::TooManyLiveSurfaces,
                    "R-SES-1",
                    format!("mcp app view {}: {limit} surfaces are live and none can hibernate; the limit is {limit} (max_live_surfaces)", key.instance),
                )
                .field("payload.instance_id")
                .limit(limit);
                self.not_served(key, err, common, &mut fx);
            }
            // A Surface's or a component's report: not a view's.
            _ => {}
        }
        fx
    }

    /// View `key` (closing) answered its teardown: it closes now.
    fn closed(&mut self, key: &SurfaceKey, fx: &mut Vec<Effect>) {
        if let Some(view) = self.closing.remove(key) {
            let reason = view
                .closing_for()
                .cloned()
                .unwrap_or(CloseReason::SessionEnded);
            fx.push(Effect::Close {
                key: key.clone(),
                reason,
            });
        }
    }

    /// Takes `key`'s view out, open or closing: whether it was open, and the view.
    fn take(&mut self, key: &SurfaceKey) -> Option<(bool, View)> {
        let open = self
            .open
            .get(&key.instance)
            .is_some_and(|v| v.generation() == key.generation);
        if open {
            return self.open.remove(&key.instance).map(|v| (true, v));
        }
        self.closing.remove(key).map(|v| (false, v))
    }

    /// The user closed view `key`: its opener hears `ui.event close` at once (R-UI-5), and it
    /// is torn down, then closed.
    /// A view already closing closes now.
    fn user_closed(&mut self, key: &SurfaceKey, common: &mut Common, fx: &mut Vec<Effect>) {
        match self.take(key) {
            Some((true, view)) => {
                tell_closed(key, &view, None, common, fx);
                self.retire(key.clone(), view, CloseReason::User, common, fx);
            }
            Some((false, view)) => {
                self.closing.insert(key.clone(), view);
                self.closed(key, fx);
            }
            None => {}
        }
    }

    /// View `key`'s web process is gone (R-UI-12): it closes without a teardown, and its
    /// opener hears `ui.event close` with the reason when it was open.
    fn gone(
        &mut self,
        key: &SurfaceKey,
        reason: GoneReason,
        common: &mut Common,
        fx: &mut Vec<Effect>,
    ) {
        let Some((open, view)) = self.take(key) else {
            return;
        };
        fx.push(Effect::Close {
            key: key.clone(),
            reason: CloseReason::Gone(reason),
        });
        if open {
            tell_closed(key, &view, Some(reason), common, fx);
        }
    }

    /// View `key`'s open was accepted, but the view was not made: it closes, and its opener
    /// gets `err` in reply to the open.
    fn not_served(
        &mut self,
        key: &SurfaceKey,
        err: ProtocolError,
        common: &mut Common,
        fx: &mut Vec<Effect>,
    ) {
        let Some((_, view)) = self.take(key) else {
            return;
        };
        fx.push(Effect::Close {
            key: key.clone(),
            reason: CloseReason::Failed,
        });
        let (opened_by, opener) = view.open_message();
        let err = err.in_reply_to(Some(opened_by.clone()));
        fx.extend(common.refusal(err, Some(opener.clone())));
    }

    /// Every open view goes away for `reason` ([`Session::all_gone`](crate::Session::all_gone)):
    /// for [`GoneReason::AgentGone`] each hears the call cancelled and its waiting requests
    /// errors first (R-MCP-5); each opener hears `ui.event close` with the reason, and each
    /// view is torn down, then closed.
    pub(super) fn all_gone(
        &mut self,
        reason: GoneReason,
        common: &mut Common,
        fx: &mut Vec<Effect>,
    ) {
        for (instance, mut view) in std::mem::take(&mut self.open) {
            let key = common.key(&instance, view.generation());
            if reason == GoneReason::AgentGone {
                view.agent_gone(&key, common, fx);
            }
            tell_closed(&key, &view, Some(reason), common, fx);
            self.retire(key, view, CloseReason::Gone(reason), common, fx);
        }
    }

    /// Closes every view for the end of the session (the agent's stream ended): each open one
    /// hears the call cancelled and its waiting requests errors (R-MCP-5); nothing goes
    /// upstream.
    pub(super) fn end(&mut self, common: &mut Common) -> Vec<Effect> {
        let mut fx = Vec::new();
        for (instance, mut view) in std::mem::take(&mut self.open) {
            let key = common.key(&instance, view.generation());
            view.agent_gone(&key, common, &mut fx);
            fx.push(Effect::Close {
                key,
                reason: CloseReason::SessionEnded,
            });
        }
        for (key, _) in std::mem::take(&mut self.closing) {
            fx.push(Effect::Close {
                key,
                reason: CloseReason::SessionEnded,
            });
        }
        fx
    }

    /// The earliest deadline of any view, on the session's clock.
    pub(super) fn next_deadline(&self) -> Option<Duration> {
        self.open
            .values()
            .chain(self.closing.values())
            .filter_map(View::next_deadline)
            .min()
    }

    /// Does what is due at the session's `now`: each open view's timed work (R-MCP-6), and each
    /// closing view past its teardown deadline closed (R-MCP-8).
    pub(super) fn handle_timeout(&mut self, common: &mut Common) -> Vec<Effect> {
        let now = common.now();
        let mut fx = Vec::new();
        for (instance, view) in &mut self.open {
            if view.next_deadline().is_some_and(|at| at <= now) {
                let key = common.key(instance, view.generation());
                view.timeout(&key, now, common, &mut fx);
            }
        }
        let due: Vec<SurfaceKey> = self
            .closing
            .iter()
            .filter(|(_, view)| view.teardown_due(now))
            .map(|(key, _)| key.clone())
            .collect();
        for key in due {
            self.closed(&key, &mut fx);
        }
        for (key, view) in &mut self.closing {
            if view.next_deadline().is_some_and(|at| at <= now) {
                view.timeout(key, now, common, &mut fx);
            }
        }
        fx
    }
}

/// Tells view `key`'s opener it closed: `ui.event close`, with `data.reason` when it went away
/// on its own (R-UI-5, R-UI-12).
fn tell_closed(
    key: &SurfaceKey,
    view: &View,
    reason: Option<GoneReason>,
    common: &mut Common,
    fx: &mut Vec<Effect>,
) {
    let data = match reason {
        Some(gone) => {
            JsonObject::try_from(serde_json::json!({"reason": gone.as_str()})).unwrap_or_default()
        }
        None => JsonObject::new(),
    };
    let payload = UiEvent {
        instance_id: key.instance.clone(),
        event: close_event(),
        data,
    };
    fx.push(Effect::Send(
        common.outbound(payload, Some(view.opener().clone())),
    ));
}
