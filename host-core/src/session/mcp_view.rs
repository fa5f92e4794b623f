//! One MCP App view of a session (R-MCP-3 … R-MCP-8): its router, the server it came from and
//! who opened it, and what its router asks carried out as effects and `mcp.*` envelopes.

use std::time::Duration;

use serde_json::{json, Map, Value};

use super::common::Common;
use crate::effect::{CloseReason, Effect, Stats};
use crate::ids::{EventName, McpServerId, MessageId};
use crate::json::JsonObject;
use crate::keys::{Generation, SurfaceKey};
use crate::mcp::{HostOwned, McpOut, McpRouter, McpStats, RpcError, RpcId, ToolNews, REFUSED};
use crate::mcp::{UpstreamRequest, METHOD_NOT_FOUND};
use crate::mcp_effect::McpEffect;
use crate::mcp_upstream::{McpForwarded, McpNotify, McpRequest, McpUpNotification};
use crate::message::{Party, UiEvent};

/// The effect that posts `message` to view `key`.
pub(super) fn post(key: &SurfaceKey, message: String) -> Effect {
    Effect::Mcp(McpEffect::Post {
        key: key.clone(),
        message,
    })
}

/// How many blocked loads one view reports to the agent (R-MCP-10); later ones are counted
/// (`Stats::mcp_blocked_suppressed`), so a view cannot flood the agent with them.
const MAX_BLOCKED_REPORTS: u32 = 32;

/// The `reason` of the `ui/resource-teardown` a view gets before it closes for `why`.
fn teardown_reason(why: &CloseReason) -> &'static str {
    match why {
        CloseReason::Agent(_) => "closed by the agent",
        CloseReason::User => "closed by the user",
        CloseReason::Replaced => "replaced",
        CloseReason::Gone(gone) | CloseReason::Reopened(gone) => gone.as_str(),
        CloseReason::Failed => "failed",
        CloseReason::SessionEnded => "session ended",
    }
}

/// One MCP App view: open, or closing while it answers its teardown.
///
/// Invariants: every [`McpOut`] its router returns is carried out, in order, by
/// `View::carry`: JSON-RPC to the view as [`McpEffect::Post`], its requests and notifications
/// as `mcp.request` and `mcp.notify` to its opener, none longer than
/// `Limits::max_envelope_bytes` (a request that would be is answered with an error instead,
/// R-MCP-4). `counted` is what of the router's counters the session's [`Stats`] hold already.
/// Once `ending` is set (its teardown deadline and why it closes) nothing more of it goes
/// upstream, and each request it still makes is answered with an error. `evals` is how many
/// `script-src` `eval` reports are still the SDK's own at load (one per load: the first, and
/// one more at each reload), counted and not sent; at most [`MAX_BLOCKED_REPORTS`] other
/// blocked loads go to the agent (`blocked_sent`).
pub(super) struct View {
    generation: Generation,
    router: McpRouter,
    server: McpServerId,
    opener: Party,
    opened_by: MessageId,
    counted: McpStats,
    ending: Option<(Duration, CloseReason)>,
    evals: u32,
    blocked_sent: u32,
}

impl View {
    /// A new view of `server` opened by `opener`'s message `opened_by`, its traffic in
    /// `router`.
    pub(super) fn new(
        generation: Generation,
        router: McpRouter,
        server: McpServerId,
        (opener, opened_by): (Party, MessageId),
    ) -> Self {
        Self {
            generation,
            router,
            server,
            opener,
            opened_by,
            counted: McpStats::default(),
            ending: None,
            evals: 1,
            blocked_sent: 0,
        }
    }

    /// Its generation.
    pub(super) fn generation(&self) -> Generation {
        self.generation
    }

    /// Who opened it.
    pub(super) fn opener(&self) -> &Party {
        &self.opener
    }

    /// The `ui.open` that opened it, and who sent that: where a refusal of it goes.
    pub(super) fn open_message(&self) -> (&MessageId, &Party) {
        (&self.opened_by, &self.opener)
    }

    /// Why it closes, once it is closing.
    pub(super) fn closing_for(&self) -> Option<&CloseReason> {
        self.ending.as_ref().map(|(_, why)| why)
    }

    /// When it has timed work next: a forwarded request's deadline, the latest model context
    /// going up, or (closing) its teardown deadline.
    pub(super) fn next_deadline(&self) -> Option<Duration> {
        let teardown = self.ending.as_ref().map(|(at, _)| *at);
        [self.router.poll_timeout(), teardown]
            .into_iter()
            .flatten()
            .min()
    }

    /// Whether it is closing and its teardown deadline is at or before `now`.
    pub(super) fn teardown_due(&self, now: Duration) -> bool {
        self.ending.as_ref().is_some_and(|(at, _)| *at <= now)
    }

    /// A message the view posted; `true` when it answered its teardown (close it now).
    pub(super) fn posted(
        &mut self,
        key: &SurfaceKey,
        text: &str,
        common: &mut Common,
        fx: &mut Vec<Effect>,
    ) -> bool {
        let outs = self.router.from_view(text, common.now());
        self.carry(key, outs, common, fx)
    }

    /// A message of `len` bytes the view posted, dropped where it arrived (R-MCP-6).
    pub(super) fn oversized(
        &mut self,
        key: &SurfaceKey,
        len: usize,
        common: &mut Common,
        fx: &mut Vec<Effect>,
    ) {
        let outs = self.router.oversized(len);
        self.carry(key, outs, common, fx);
    }

    /// The view's policy blocked `blocked` under `directive` in one of its frames (R-MCP-10):
    /// the SDK's own `script-src` `eval` report at load is counted; any other goes to its
    /// opener as `ui.event` `blocked`, up to [`MAX_BLOCKED_REPORTS`], then is counted. A
    /// closing view's goes nowhere.
    pub(super) fn blocked(
        &mut self,
        key: &SurfaceKey,
        (directive, blocked): (&str, &str),
        common: &mut Common,
        fx: &mut Vec<Effect>,
    ) {
        if directive == "script-src" && blocked == "eval" && self.evals > 0 {
            self.evals -= 1;
            common.stats_mut().mcp_eval_reports += 1;
            return;
        }
        if self.ending.is_some() || self.blocked_sent >= MAX_BLOCKED_REPORTS {
            common.stats_mut().mcp_blocked_suppressed += 1;
            return;
        }
        self.blocked_sent += 1;
        let data = json!({"directive": directive, "blocked": blocked});
        let payload = UiEvent {
            instance_id: key.instance.clone(),
            event: EventName::known("blocked"),
            data: JsonObject::try_from(data).unwrap_or_default(),
        };
        fx.push(Effect::Send(
            common.outbound(payload, Some(self.opener.clone())),
        ));
    }

    /// The agent's news of the tool call (R-MCP-5), or why it is out of order.
    pub(super) fn tool_news(
        &mut self,
        key: &SurfaceKey,
        news: &ToolNews,
        common: &mut Common,
        fx: &mut Vec<Effect>,
    ) -> Result<(), String> {
        let outs = self.router.tool_news(news)?;
        self.carry(key, outs, common, fx);
        Ok(())
    }

    /// The agent answered forwarded request `id` (relayed only while it waits).
    pub(super) fn answered(
        &mut self,
        key: &SurfaceKey,
        (id, outcome): (u64, Result<Value, RpcError>),
        common: &mut Common,
        fx: &mut Vec<Effect>,
    ) {
        let outs = self.router.upstream_answered(id, outcome);
        self.carry(key, outs, common, fx);
    }

    /// The agent's progress of forwarded request `id` (relayed only while it waits).
    pub(super) fn progress(
        &mut self,
        key: &SurfaceKey,
        (id, params): (u64, Map<String, Value>),
        common: &mut Common,
        fx: &mut Vec<Effect>,
    ) {
        let outs = self.router.upstream_progress(id, params);
        self.carry(key, outs, common, fx);
    }

    /// The host's answer to the view's request `id` that it took itself (R-MCP-8).
    pub(super) fn host_answer(
        &self,
        key: &SurfaceKey,
        (id, outcome): (&RpcId, Result<Value, RpcError>),
        fx: &mut Vec<Effect>,
    ) {
        if let McpOut::ToView(message) = self.router.host_answer(id, outcome) {
            fx.push(post(key, message));
        }
    }

    /// The agent went away: the view hears the call was cancelled, and each request waiting
    /// for the agent gets an error (R-MCP-5).
    pub(super) fn agent_gone(
        &mut self,
        key: &SurfaceKey,
        common: &mut Common,
        fx: &mut Vec<Effect>,
    ) {
        let outs = self.router.agent_gone();
        self.carry(key, outs, common, fx);
    }

    /// Does the router's timed work due at `now` (R-MCP-6).
    pub(super) fn timeout(
        &mut self,
        key: &SurfaceKey,
        now: Duration,
        common: &mut Common,
        fx: &mut Vec<Effect>,
    ) {
        let outs = self.router.handle_timeout(now);
        self.carry(key, outs, common, fx);
    }

    /// Asks the view to tear down before it closes for `why` (R-MCP-8); `true` when it may
    /// close at once (it never said `initialized`), else it is closing until it answers or
    /// `Limits::mcp_teardown_timeout` passes.
    pub(super) fn teardown(
        &mut self,
        key: &SurfaceKey,
        why: CloseReason,
        common: &Common,
        fx: &mut Vec<Effect>,
    ) -> bool {
        let mut done = false;
        for out in self.router.teardown(teardown_reason(&why)) {
            match out {
                McpOut::ToView(message) => fx.push(post(key, message)),
                McpOut::TornDown => done = true,
                _ => {}
            }
        }
        if !done {
            let deadline = common
                .now()
                .saturating_add(common.limits().mcp_teardown_timeout);
            self.ending = Some((deadline, why));
        }
        done
    }

    /// Carries out `outs` in order; `true` when the view answered its teardown.
    fn carry(
        &mut self,
        key: &SurfaceKey,
        outs: Vec<McpOut>,
        common: &mut Common,
        fx: &mut Vec<Effect>,
    ) -> bool {
        let mut torn_down = false;
        for out in outs {
            match out {
                McpOut::ToView(message) => fx.push(post(key, message)),
                McpOut::Upstream(request) => self.forward(key, request, common, fx),
                McpOut::UpstreamNotification { method, params } => {
                    self.notify(key, (&method, params), common, fx);
                }
                McpOut::UpstreamCancelled { id, reason } => {
                    let params = json!({"requestId": id, "reason": reason});
                    let params = params.as_object().cloned().unwrap_or_default();
                    self.notify(key, ("notifications/cancelled", params), common, fx);
                }
                McpOut::HostOwned(message) => self.host_owned(key, message, fx),
                McpOut::Reloaded if self.ending.is_none() => {
                    // R-MCP-7: the agent hears the view reloaded; its input and result go
                    // again after its `initialized`. Its new load makes the SDK's eval
                    // report again (R-MCP-10).
                    self.evals += 1;
                    let payload = UiEvent {
                        instance_id: key.instance.clone(),
                        event: EventName::known("reloaded"),
                        data: JsonObject::new(),
                    };
                    fx.push(Effect::Send(
                        common.outbound(payload, Some(self.opener.clone())),
                    ));
                }
                McpOut::Reloaded => {}
                McpOut::TornDown => torn_down = true,
            }
        }
        self.count(common.stats_mut());
        torn_down
    }

    /// Adds what the router counted since last time to the session's counters.
    fn count(&mut self, stats: &mut Stats) {
        let now = self.router.stats();
        stats.mcp_refused += now.refused - self.counted.refused;
        stats.mcp_sandbox_dropped += now.sandbox_dropped - self.counted.sandbox_dropped;
        stats.mcp_late += now.late - self.counted.late;
        self.counted = now;
    }

    /// Answers forwarded request `request` with `error` in place of the agent.
    fn refuse_forwarded(
        &mut self,
        key: &SurfaceKey,
        (request, error): (u64, RpcError),
        common: &mut Common,
        fx: &mut Vec<Effect>,
    ) {
        common.stats_mut().mcp_refused += 1;
        for out in self.router.upstream_answered(request, Err(error)) {
            if let McpOut::ToView(message) = out {
                fx.push(post(key, message));
            }
        }
    }

    /// Sends the view's `request` up as `mcp.request`, or answers it with an error when the
    /// view is closing or its envelope would pass R-ENV-4's bound (R-MCP-4, R-MCP-6).
    fn forward(
        &mut self,
        key: &SurfaceKey,
        request: UpstreamRequest,
        common: &mut Common,
        fx: &mut Vec<Effect>,
    ) {
        let method = McpForwarded::named(&request.method);
        let (Some(method), None) = (method, &self.ending) else {
            let error = match method {
                None => RpcError::new(
                    METHOD_NOT_FOUND,
                    format!("{} is not forwarded", request.method),
                ),
                Some(_) => {
                    RpcError::new(REFUSED, format!("{}: the view is closing", request.method))
                }
            };
            return self.refuse_forwarded(key, (request.id, error), common, fx);
        };
        let payload = McpRequest {
            instance_id: key.instance.clone(),
            generation: key.generation.get(),
            server: self.server.clone(),
            request_id: request.id,
            method,
            params: JsonObject::from(request.params),
        };
        let message = common.outbound(payload, Some(self.opener.clone()));
        let (len, limit) = (message.to_json().len(), common.limits().max_envelope_bytes);
        if len > limit {
            let why = format!(
                "{}: its envelope to the agent would be {len} bytes; the limit is {limit} (R-MCP-4, R-ENV-4)",
                method.as_str()
            );
            return self.refuse_forwarded(
                key,
                (request.id, RpcError::new(REFUSED, why)),
                common,
                fx,
            );
        }
        fx.push(Effect::Send(message));
    }

    /// Sends the view's notification up as `mcp.notify` (R-MCP-6); dropped and counted when
    /// the view is closing or its envelope would pass R-ENV-4's bound.
    fn notify(
        &mut self,
        key: &SurfaceKey,
        (method, params): (&str, Map<String, Value>),
        common: &mut Common,
        fx: &mut Vec<Effect>,
    ) {
        let Some(method) = McpUpNotification::named(method).filter(|_| self.ending.is_none())
        else {
            common.stats_mut().mcp_refused += 1;
            return;
        };
        let payload = McpNotify {
            instance_id: key.instance.clone(),
            generation: key.generation.get(),
            server: self.server.clone(),
            method,
            params: JsonObject::from(params),
        };
        let message = common.outbound(payload, Some(self.opener.clone()));
        if message.to_json().len() > common.limits().max_envelope_bytes {
            common.stats_mut().mcp_refused += 1;
            return;
        }
        fx.push(Effect::Send(message));
    }

    /// Hands the host a message it answers itself; a closing view's request is answered with
    /// an error instead, and its notification dropped.
    fn host_owned(&mut self, key: &SurfaceKey, message: HostOwned, fx: &mut Vec<Effect>) {
        if self.ending.is_none() {
            fx.push(Effect::Mcp(McpEffect::HostOwned {
                key: key.clone(),
                message,
            }));
            return;
        }
        if let Some(id) = &message.id {
            let error = RpcError::new(REFUSED, format!("{}: the view is closing", message.method));
            self.host_answer(key, (id, Err(error)), fx);
        }
    }
}
