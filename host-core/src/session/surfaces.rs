//! A session's open Surfaces: the agent's opens, patches and closes of them, and what their
//! webviews report (bridge messages, floods, the user's close, a lost web process, a new
//! document), hibernation's records (R-UI-1..12, R-DIAG-1, #29).

use std::collections::BTreeMap;

use serde_json::json;

use super::common::Common;
use super::entry::{Entry, Patched};
use super::opening::checked_source;
use crate::capability::reported;
use crate::ids::{EventName, InstanceId, MessageId};
use crate::json::JsonObject;
use crate::message::{ClientError, Envelope, UiEvent, UiOpen};
use crate::session_config::CatalogRef;
use crate::{
    BridgeMessage, CloseReason, Effect, ErrorCode, GoneReason, ProtocolError, SurfaceKey,
    SurfaceOpen, SurfaceRecord,
};

/// The refusal of a message that names an instance no Surface or component holds (R-UI-1).
pub(super) fn unknown_instance(instance: &InstanceId, message_type: &str) -> ProtocolError {
    ProtocolError::new(
        ErrorCode::UnknownInstance,
        "R-UI-1",
        format!("{message_type} names instance {instance}, which is not open"),
    )
    .field("payload.instance_id")
}

/// The event the agent hears when a Surface or component closes without its asking.
pub(super) fn close_event() -> EventName {
    EventName::known("close")
}

/// The open Surfaces of one session, by instance id.
///
/// Invariants: a key is current when its session is this one and its generation the entry's;
/// every entry taken out has its record forgotten when the store kept one (#29); a stale key
/// changes nothing.
#[derive(Default)]
pub(super) struct Surfaces {
    table: BTreeMap<InstanceId, Entry>,
}

impl Surfaces {
    /// How many are open.
    pub(super) fn len(&self) -> usize {
        self.table.len()
    }

    /// Whether a Surface holds `instance`.
    pub(super) fn contains(&self, instance: &InstanceId) -> bool {
        self.table.contains_key(instance)
    }

    /// The keys of the open Surfaces, in instance order.
    pub(super) fn keys<'a>(&'a self, common: &'a Common) -> impl Iterator<Item = SurfaceKey> + 'a {
        self.table
            .iter()
            .map(|(instance, e)| common.key(instance, e.generation()))
    }

    /// Whether `key` names a Surface that is open now.
    pub(super) fn is_current(&self, key: &SurfaceKey, common: &Common) -> bool {
        common.owns(key)
            && self
                .table
                .get(&key.instance)
                .is_some_and(|e| e.generation() == key.generation)
    }

    fn current_mut(&mut self, key: &SurfaceKey, common: &Common) -> Option<&mut Entry> {
        if !self.is_current(key, common) {
            return None;
        }
        self.table.get_mut(&key.instance)
    }

    /// Takes `key`'s entry out, when it is current; its record, if the store keeps one, is
    /// forgotten (#29).
    pub(super) fn take_current(&mut self, key: &SurfaceKey, common: &Common) -> Option<Entry> {
        if !self.is_current(key, common) {
            return None;
        }
        let entry = self.table.remove(&key.instance)?;
        forget_record(&key.instance, &entry, common);
        Some(entry)
    }

    /// Closes every Surface for the end of the session, sending nothing upstream.
    pub(super) fn end(&mut self, common: &Common) -> Vec<Effect> {
        std::mem::take(&mut self.table)
            .into_iter()
            .map(|(instance, e)| Effect::Close {
                key: common.key(&instance, e.generation()),
                reason: CloseReason::SessionEnded,
            })
            .collect()
    }

    /// Opens the Surface of `env` when its app passes every check, as the agent's open or, when
    /// `restored`, from a hibernated Surface's record after a restart (#29), which the open
    /// rate does not count and which opens hibernated ([`Effect::OpenHibernated`]).
    /// `make_room` takes a component or an MCP App view holding the id off the screen first
    /// (R-STD-1, R-MCP-3); `others` views of this session count toward `Limits::max_surfaces`
    /// with the Surfaces.
    pub(super) fn open(
        &mut self,
        env: Envelope<UiOpen>,
        (restored, others): (bool, usize),
        common: &mut Common,
        fx: &mut Vec<Effect>,
        make_room: impl FnOnce(&InstanceId, &Common, &mut Vec<Effect>),
    ) -> Result<(), ProtocolError> {
        let UiOpen {
            instance_id,
            app,
            state,
        } = env.payload;
        let source = checked_source(common.config(), app)?;
        // R-SES-1: the limit also bounds the host's web processes over every session.
        if !self.table.contains_key(&instance_id) {
            common.admit_count(self.table.len() + others)?;
        }
        if !restored {
            common.admit_open_rate()?;
        }
        make_room(&instance_id, common, fx);
        let generation = common.generation();
        let entry = Entry::new(
            generation,
            env.id,
            env.sender,
            source,
            state.unwrap_or_default(),
            common.now(),
        );
        let key = common.key(&instance_id, generation);
        let open = entry.open_as(key);
        if restored {
            self.table.insert(instance_id, entry);
            fx.push(Effect::OpenHibernated(open));
            return Ok(());
        }
        match self.table.insert(instance_id.clone(), entry) {
            Some(old) => {
                forget_record(&instance_id, &old, common);
                fx.push(Effect::Replace {
                    old: common.key(&instance_id, old.generation()),
                    open,
                });
            }
            None => fx.push(Effect::Open(open)),
        }
        Ok(())
    }

    /// The agent's `ui.patch` of Surface `instance` by message `by` (R-UI-3).
    pub(super) fn patch(
        &mut self,
        instance: InstanceId,
        state: JsonObject,
        by: MessageId,
        common: &Common,
        fx: &mut Vec<Effect>,
    ) -> Result<(), ProtocolError> {
        let entry = self.table.get_mut(&instance).ok_or_else(|| {
            unknown_instance(&instance, <crate::UiPatch as crate::message::Payload>::TYPE)
        })?;
        match entry.patch(state, by) {
            // #29: asleep, its record follows the latest state.
            Patched::Asleep => self.persist(&instance, common),
            Patched::Deliver(state) => fx.push(Effect::DeliverState {
                key: common.key(&instance, entry.generation()),
                state,
            }),
            Patched::Waiting => {}
        }
        Ok(())
    }

    /// The agent's `ui.close` of Surface `instance`.
    pub(super) fn close(
        &mut self,
        instance: InstanceId,
        reason: Option<String>,
        common: &Common,
        fx: &mut Vec<Effect>,
    ) -> Result<(), ProtocolError> {
        let entry = self.table.remove(&instance).ok_or_else(|| {
            unknown_instance(&instance, <crate::UiClose as crate::message::Payload>::TYPE)
        })?;
        forget_record(&instance, &entry, common);
        fx.push(Effect::Close {
            key: common.key(&instance, entry.generation()),
            reason: CloseReason::Agent(reason),
        });
        Ok(())
    }

    /// Closes the Surface holding `instance`, if one does, for a component's replacing open
    /// (R-UI-1); nothing goes upstream.
    pub(super) fn replace(&mut self, instance: &InstanceId, common: &Common, fx: &mut Vec<Effect>) {
        if let Some(old) = self.table.remove(instance) {
            forget_record(instance, &old, common);
            fx.push(Effect::Close {
                key: common.key(instance, old.generation()),
                reason: CloseReason::Replaced,
            });
        }
    }

    /// See [`Session::handle_bridge`](crate::Session::handle_bridge).
    pub(super) fn handle_bridge(
        &mut self,
        key: &SurfaceKey,
        raw: &str,
        common: &mut Common,
    ) -> Vec<Effect> {
        let mut fx = Vec::new();
        let Some(entry) = self.current_mut(key, common) else {
            common.stats_mut().bridge_stale += 1;
            fx.push(Effect::Dropped {
                key: key.clone(),
                error: ProtocolError::new(
                    ErrorCode::InvalidBridgeMessage,
                    "R-UI-6",
                    format!("message from {key}, which was closed or replaced; it reaches nobody"),
                ),
            });
            return fx;
        };
        let message = match BridgeMessage::decode(raw, common.limits()) {
            Ok(m) => m,
            Err(error) => {
                common.stats_mut().bridge_invalid += 1;
                fx.push(Effect::Dropped {
                    key: key.clone(),
                    error,
                });
                return fx;
            }
        };
        match message {
            BridgeMessage::Ready { document } => {
                entry.ready(key, document, common.stats_mut(), &mut fx)
            }
            BridgeMessage::Event { event, data } => {
                let refusal = entry.undeclared(&event);
                let opener = entry.opener().clone();
                page_event(key, (event, data), refusal, opener, common, &mut fx);
            }
            BridgeMessage::Resize { height } => fx.push(Effect::Resize {
                key: key.clone(),
                height,
            }),
            BridgeMessage::Diagnostic(diagnostic) => {
                let now = common.now();
                let (limits, stats) = common.limits_and_stats();
                entry.diagnostic(key, diagnostic, (now, limits), stats, &mut fx);
            }
            // R-UI-5: counted, never obeyed.
            BridgeMessage::CloseAttempt => common.stats_mut().close_attempts += 1,
        }
        fx
    }

    /// See [`PageInput::DiagnosticsDropped`](crate::PageInput::DiagnosticsDropped).
    pub(super) fn diagnostics_dropped(
        &mut self,
        key: &SurfaceKey,
        count: u64,
        common: &mut Common,
    ) {
        common.stats_mut().diagnostics_suppressed += count;
        if let Some(entry) = self.current_mut(key, common) {
            entry.diagnostics_dropped(count);
        }
    }

    /// See [`PageInput::Oversized`](crate::PageInput::Oversized).
    pub(super) fn bridge_oversized(
        &self,
        key: &SurfaceKey,
        len: usize,
        common: &mut Common,
    ) -> Vec<Effect> {
        if !self.is_current(key, common) {
            common.stats_mut().bridge_stale += 1;
            return Vec::new();
        }
        common.stats_mut().bridge_invalid += 1;
        let limit = common.limits().max_bridge_message_bytes;
        vec![Effect::Dropped {
            key: key.clone(),
            error: ProtocolError::new(
                ErrorCode::InvalidBridgeMessage,
                "R-UI-7",
                format!("bridge message is {len} bytes; the limit is {limit} bytes"),
            )
            .limit(limit),
        }]
    }

    /// See [`PageInput::Flood`](crate::PageInput::Flood).
    pub(super) fn bridge_flood(
        &self,
        key: &SurfaceKey,
        (count, limit): (u64, usize),
        common: &mut Common,
    ) -> Vec<Effect> {
        common.stats_mut().bridge_flooded += count;
        if !self.is_current(key, common) {
            return Vec::new();
        }
        vec![Effect::Dropped {
            key: key.clone(),
            error: ProtocolError::new(
                ErrorCode::InvalidBridgeMessage,
                "R-ENV-4",
                format!(
                    "{count} bridge messages dropped: the page posted while {limit} of its messages were waiting to be handled"
                ),
            )
            .limit(limit),
        }]
    }

    /// See [`PageInput::UserClosed`](crate::PageInput::UserClosed).
    pub(super) fn user_closed(&mut self, key: &SurfaceKey, common: &mut Common) -> Vec<Effect> {
        let mut fx = Vec::new();
        self.close_told(key, CloseReason::User, common, &mut fx);
        fx
    }

    /// See [`PageInput::Gone`](crate::PageInput::Gone): `key` goes away for `reason`, the agent
    /// told once.
    pub(super) fn gone(
        &mut self,
        key: &SurfaceKey,
        reason: GoneReason,
        common: &mut Common,
        fx: &mut Vec<Effect>,
    ) {
        self.close_told(key, CloseReason::Gone(reason), common, fx);
    }

    /// Closes `key` for `reason` and tells its opener `close`, with `data.reason` when it went
    /// away on its own (R-UI-5, R-UI-12); nothing for a stale key.
    fn close_told(
        &mut self,
        key: &SurfaceKey,
        reason: CloseReason,
        common: &mut Common,
        fx: &mut Vec<Effect>,
    ) {
        let Some(entry) = self.take_current(key, common) else {
            return;
        };
        let mut data = serde_json::Map::new();
        if let CloseReason::Gone(gone) = &reason {
            data.insert("reason".to_owned(), json!(gone.as_str()));
        }
        fx.push(Effect::Close {
            key: key.clone(),
            reason,
        });
        let payload = UiEvent {
            instance_id: key.instance.clone(),
            event: close_event(),
            data: JsonObject::from(data),
        };
        let opener = entry.opener().clone();
        fx.push(Effect::Send(common.outbound(payload, Some(opener))));
    }

    /// See [`PageInput::Lost`](crate::PageInput::Lost).
    pub(super) fn lost(
        &mut self,
        key: &SurfaceKey,
        reason: GoneReason,
        common: &mut Common,
    ) -> Vec<Effect> {
        let mut fx = Vec::new();
        let Some(entry) = self.current_mut(key, common) else {
            return fx;
        };
        if !entry.reopen(reason, common.now(), common.limits()) {
            self.gone(key, reason, common, &mut fx);
            return fx;
        }
        let generation = common.generation();
        entry.renew(generation);
        common.stats_mut().reopened += 1;
        fx.push(Effect::Reopen {
            old: key.clone(),
            open: entry.open_as(common.key(&key.instance, generation)),
            reason,
        });
        fx
    }

    /// See [`PageInput::DocumentCommitted`](crate::PageInput::DocumentCommitted) (`counted`)
    /// and [`PageInput::EmbedderReloaded`](crate::PageInput::EmbedderReloaded) (not counted
    /// toward the reload-loop bound).
    pub(super) fn committed(
        &mut self,
        key: &SurfaceKey,
        counted: bool,
        common: &mut Common,
    ) -> Vec<Effect> {
        let mut fx = Vec::new();
        let Some(entry) = self.current_mut(key, common) else {
            return fx;
        };
        if counted && !entry.within_reload_bound(common.now(), common.limits()) {
            self.gone(key, GoneReason::ReloadLoop, common, &mut fx);
            return fx;
        }
        entry.committed(key, common.stats_mut(), &mut fx);
        fx
    }

    /// See [`Session::events_dropped`](crate::Session::events_dropped).
    pub(super) fn events_dropped(
        &self,
        instance: &InstanceId,
        count: u64,
        common: &mut Common,
    ) -> Vec<Effect> {
        let target = self.table.get(instance).map(|e| e.opener().clone());
        let payload = ClientError {
            in_reply_to: None,
            code: ErrorCode::EventsDropped,
            message: format!(
                "{count} events of surface {instance} were dropped because the agent's reader fell behind; answers are never dropped"
            ),
            field: None,
            limit: None,
            instance_id: Some(instance.clone()),
            count: Some(count),
        };
        vec![Effect::Send(common.outbound(payload, target))]
    }

    /// The platform could not create webview `key`; the agent gets a `client.error` in reply to
    /// the open (R-ENV-5).
    pub(super) fn open_failed(
        &mut self,
        key: &SurfaceKey,
        why: &str,
        common: &mut Common,
    ) -> Vec<Effect> {
        let err = ProtocolError::new(
            ErrorCode::SurfaceFailed,
            "R-ENV-5",
            format!("surface {} could not be created: {why}", key.instance),
        );
        self.not_served(key, err, common)
    }

    /// The open of `key` was accepted, but no web process could be given to it: `limit`
    /// Surfaces are live and none can hibernate. It closes, and its opener gets
    /// `too_many_live_surfaces` naming the limit, in reply to the open (R-SES-1).
    pub(super) fn refused_live(
        &mut self,
        key: &SurfaceKey,
        limit: usize,
        common: &mut Common,
    ) -> Vec<Effect> {
        let err = ProtocolError::new(
            ErrorCode::TooManyLiveSurfaces,
            "R-SES-1",
            format!(
                "surface {}: {limit} surfaces are live and none is hidden to make room; \
                 the limit is {limit} (max_live_surfaces); close or hide one first",
                key.instance
            ),
        )
        .field("payload.instance_id")
        .limit(limit);
        self.not_served(key, err, common)
    }

    /// Closes `key`, whose open was accepted but whose view was not made, and refuses that
    /// open with `err` in reply to it; nothing for a stale key.
    fn not_served(
        &mut self,
        key: &SurfaceKey,
        err: ProtocolError,
        common: &mut Common,
    ) -> Vec<Effect> {
        let mut fx = Vec::new();
        if let Some(entry) = self.take_current(key, common) {
            fx.push(Effect::Close {
                key: key.clone(),
                reason: CloseReason::Failed,
            });
            let err = err.in_reply_to(Some(entry.opened_by().clone()));
            fx.extend(common.refusal(err, Some(entry.opener().clone())));
        }
        fx
    }

    /// See [`Session::wake`](crate::Session::wake).
    pub(super) fn wake(&mut self, key: &SurfaceKey, common: &mut Common) -> Option<SurfaceOpen> {
        let entry = self.current_mut(key, common)?;
        entry.new_page();
        let open = entry.open_as(key.clone());
        if entry.is_recorded() {
            common.forget_record(&key.instance);
            entry.set_recorded(false);
        }
        common.stats_mut().woken += 1;
        Some(open)
    }

    /// See [`Session::hibernated`](crate::Session::hibernated).
    pub(super) fn hibernated(&mut self, key: &SurfaceKey, common: &Common) {
        if self.is_current(key, common) {
            self.persist(&key.instance, common);
        }
    }

    /// Keeps the record of Surface `instance` (#29), when the session keeps records, and marks
    /// it recorded.
    fn persist(&mut self, instance: &InstanceId, common: &Common) {
        let (Some((owner, conversation)), Some(entry)) =
            (common.record_owner(), self.table.get_mut(instance))
        else {
            return;
        };
        entry.set_recorded(true);
        let record = entry.record(instance, conversation);
        reported(common.store().put_surface(&owner, &record));
    }

    /// The app center changed: each Surface of an app that `catalog` no longer opens at its
    /// version goes away, the agent told why (R-UI-12).
    pub(super) fn retire(
        &mut self,
        catalog: &CatalogRef,
        common: &mut Common,
        fx: &mut Vec<Effect>,
    ) {
        let retired: Vec<(SurfaceKey, GoneReason)> = self
            .table
            .iter()
            .filter_map(|(instance, e)| {
                let reason = e.retired(catalog)?;
                Some((common.key(instance, e.generation()), reason))
            })
            .collect();
        for (key, reason) in retired {
            self.gone(&key, reason, common, fx);
        }
    }

    /// Opens again, hibernated, the Surfaces of `records` (read back from the store when the
    /// session was established) that belong to this conversation, are held by no Surface
    /// nor by a component (`held`) and pass every check of an agent's open (an installed app's
    /// at the version it was opened with); each one's opener gets `restored {status:"open",
    /// opened_by, state_from}`. A record that fails a check is forgotten.
    pub(super) fn restore(
        &mut self,
        records: Vec<SurfaceRecord>,
        held: impl Fn(&InstanceId) -> bool,
        common: &mut Common,
    ) -> Vec<Effect> {
        let mut fx = Vec::new();
        for record in records {
            let Some(conversation) = common.conversation().cloned() else {
                break;
            };
            if record.conversation != conversation
                || held(&record.instance_id)
                || self.contains(&record.instance_id)
            {
                continue;
            }
            let instance = record.instance_id.clone();
            let env = Envelope {
                id: record.opened_by.clone(),
                conversation_id: conversation,
                sender: record.opener.clone(),
                target: None,
                payload: UiOpen {
                    instance_id: instance.clone(),
                    app: record.app,
                    state: Some(record.state),
                },
            };
            let mut opened = Vec::new();
            if self
                .open(env, (true, 0), common, &mut opened, |_, _, _| {})
                .is_err()
            {
                common.forget_record(&instance);
                continue;
            }
            fx.extend(opened);
            if let Some(entry) = self.table.get_mut(&instance) {
                entry.restored(record.state_from.clone());
            }
            let payload = UiEvent {
                instance_id: instance,
                event: EventName::known("restored"),
                data: JsonObject::try_from(json!({
                    "status": "open",
                    "opened_by": record.opened_by.as_str(),
                    "state_from": record.state_from.as_str(),
                }))
                .unwrap_or_default(),
            };
            fx.push(Effect::Send(common.outbound(payload, Some(record.opener))));
        }
        fx
    }
}

/// Forgets the record of `entry`, Surface `instance`, when the store keeps one: it woke,
/// closed or was replaced (#29).
fn forget_record(instance: &InstanceId, entry: &Entry, common: &Common) {
    if entry.is_recorded() {
        common.forget_record(instance);
    }
}

/// A page event of view `key`: `close` and `restored` are the host's words and never the
/// page's (R-UI-5, #29); one an installed app's manifest does not declare is dropped
/// (`refusal`, R-UI-9); any other goes to the agent that opened the Surface.
fn page_event(
    key: &SurfaceKey,
    (event, data): (EventName, JsonObject),
    refusal: Option<ProtocolError>,
    opener: crate::Party,
    common: &mut Common,
    fx: &mut Vec<Effect>,
) {
    let reserved = match event.as_str() {
        "close" => Some("a page cannot send an event named close; only the user closes a surface"),
        "restored" => {
            Some("a page cannot send an event named restored; only the host restores a surface")
        }
        _ => None,
    };
    if let Some(message) = reserved {
        if event.as_str() == "close" {
            common.stats_mut().forged_close += 1;
        }
        fx.push(Effect::Dropped {
            key: key.clone(),
            error: ProtocolError::new(ErrorCode::InvalidBridgeMessage, "R-UI-5", message)
                .field("event"),
        });
        return;
    }
    if let Some(error) = refusal {
        common.stats_mut().undeclared_events += 1;
        fx.push(Effect::Dropped {
            key: key.clone(),
            error,
        });
        return;
    }
    common.stats_mut().events_forwarded += 1;
    let payload = UiEvent {
        instance_id: key.instance.clone(),
        event,
        data,
    };
    fx.push(Effect::Send(common.outbound(payload, Some(opener))));
}
