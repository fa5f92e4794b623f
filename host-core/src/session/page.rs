//! What a Surface's webview reports: bridge messages (`ready`, `event`, `resize`, diagnostics),
//! floods and oversized messages, the user's close, a lost web process, a new document
//! (R-UI-5..7, R-UI-10, R-UI-12, R-DIAG-1).

use crate::recovery::Decision;
use crate::session::{close_event, DiagnosticBudget, Entry};
use crate::{
    BridgeMessage, ClientError, CloseReason, Diagnostic, DocumentId, Effect, ErrorCode, EventName,
    GoneReason, InstanceId, JsonObject, ProtocolError, Session, SurfaceKey, SurfaceOpen, UiEvent,
};

impl Session {
    /// Handles one message posted by the page of webview `key` (R-SEC-4: the identity is the
    /// webview that received it, never a field of the message).
    pub fn handle_bridge(&mut self, key: &SurfaceKey, raw: &str) -> Vec<Effect> {
        let mut fx = Vec::new();
        if !self.is_current(key) {
            self.stats.bridge_stale += 1;
            fx.push(Effect::Dropped {
                key: key.clone(),
                error: ProtocolError::new(
                    ErrorCode::InvalidBridgeMessage,
                    "R-UI-6",
                    format!("message from {key}, which was closed or replaced; it reaches nobody"),
                ),
            });
            return fx;
        }
        let message = match BridgeMessage::decode(raw, &self.config.limits) {
            Ok(m) => m,
            Err(error) => {
                self.stats.bridge_invalid += 1;
                fx.push(Effect::Dropped {
                    key: key.clone(),
                    error,
                });
                return fx;
            }
        };
        match message {
            BridgeMessage::Ready { document } => self.ready(key, document, &mut fx),
            BridgeMessage::Event { event, data } => self.event(key, event, data, &mut fx),
            BridgeMessage::Resize { height } => fx.push(Effect::Resize {
                key: key.clone(),
                height,
            }),
            BridgeMessage::Diagnostic(diagnostic) => self.diagnostic(key, diagnostic, &mut fx),
            // R-UI-5: counted, never obeyed.
            BridgeMessage::CloseAttempt => self.stats.close_attempts += 1,
        }
        fx
    }

    /// The platform dropped `count` diagnostics of webview `key` while too many were waiting to
    /// be handled (`Limits::max_pending_diagnostics`); they count against its budget as
    /// suppressed (R-DIAG-1).
    pub fn diagnostics_dropped(&mut self, key: &SurfaceKey, count: u64) -> Vec<Effect> {
        self.stats.diagnostics_suppressed += count;
        if let Some(entry) = self.surfaces.get_mut(&key.instance) {
            if entry.generation == key.generation {
                entry.diagnostics.suppressed += count;
            }
        }
        Vec::new()
    }

    /// R-DIAG-1: passes `diagnostic` to the embedder within the Surface's budget; past it, one
    /// `suppressed` note per window, and a count of what was dropped once the next window opens.
    pub(super) fn diagnostic(
        &mut self,
        key: &SurfaceKey,
        diagnostic: Diagnostic,
        fx: &mut Vec<Effect>,
    ) {
        let now = self.clock.monotonic();
        let limits = &self.config.limits;
        let (window, max_count, max_bytes) = (
            limits.diagnostic_window,
            limits.max_diagnostics_per_window,
            limits.max_diagnostic_bytes_per_window,
        );
        let Some(entry) = self.surfaces.get_mut(&key.instance) else {
            return;
        };
        let budget = &mut entry.diagnostics;
        if now.saturating_sub(budget.window_start) >= window {
            let dropped = std::mem::take(&mut budget.suppressed);
            *budget = DiagnosticBudget {
                window_start: now,
                ..DiagnosticBudget::default()
            };
            if dropped > 0 {
                fx.push(Effect::Diagnostic {
                    key: key.clone(),
                    diagnostic: Diagnostic::suppressed(format!(
                        "{dropped} diagnostics of this surface were dropped: more than {max_count} \
                         or {max_bytes} bytes within {window:?} (R-DIAG-1)"
                    )),
                });
            }
        }
        let weight = diagnostic.weight();
        if budget.count >= max_count || budget.bytes + weight > max_bytes {
            budget.suppressed += 1;
            self.stats.diagnostics_suppressed += 1;
            if !std::mem::replace(&mut budget.told, true) {
                fx.push(Effect::Diagnostic {
                    key: key.clone(),
                    diagnostic: Diagnostic::suppressed(format!(
                        "this surface passed its diagnostic budget of {max_count} messages or \
                         {max_bytes} bytes within {window:?}; further ones are dropped and counted \
                         (R-DIAG-1)"
                    )),
                });
            }
            return;
        }
        budget.count += 1;
        budget.bytes += weight;
        self.stats.diagnostics += 1;
        fx.push(Effect::Diagnostic {
            key: key.clone(),
            diagnostic,
        });
    }

    /// The platform dropped a message of `len` bytes that the page of webview `key` posted,
    /// before it could be read; it is counted like any invalid bridge message (R-UI-7).
    pub fn handle_bridge_oversized(&mut self, key: &SurfaceKey, len: usize) -> Vec<Effect> {
        if !self.is_current(key) {
            self.stats.bridge_stale += 1;
            return Vec::new();
        }
        self.stats.bridge_invalid += 1;
        let limit = self.config.limits.max_bridge_message_bytes;
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

    /// The platform dropped `count` messages that the page of webview `key` posted while too many
    /// of its messages were still waiting to be handled; they are counted, never forwarded.
    pub fn handle_bridge_flood(
        &mut self,
        key: &SurfaceKey,
        count: u64,
        limit: usize,
    ) -> Vec<Effect> {
        self.stats.bridge_flooded += count;
        if !self.is_current(key) {
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

    /// The user closed webview `key` (window manager, host chrome): exactly one `ui.event close`
    /// goes upstream (R-UI-5).
    pub fn user_closed(&mut self, key: &SurfaceKey) -> Vec<Effect> {
        let mut fx = Vec::new();
        if let Some(entry) = self.take_current(key, &mut fx) {
            fx.push(Effect::Close {
                key: key.clone(),
                reason: CloseReason::User,
            });
            let payload = UiEvent {
                instance_id: key.instance.clone(),
                event: close_event(),
                data: JsonObject::new(),
            };
            fx.push(Effect::Send(self.outbound(payload, Some(entry.opener))));
        }
        fx
    }

    /// Webview `key` went away on its own (R-UI-12): it is closed and the agent gets `ui.event`
    /// `close` with `data.reason`, exactly once; nothing happens for a stale key.
    pub fn surface_gone(&mut self, key: &SurfaceKey, reason: GoneReason) -> Vec<Effect> {
        let mut fx = Vec::new();
        if let Some(entry) = self.take_current(key, &mut fx) {
            self.gone(key, entry, reason, &mut fx);
        }
        fx
    }

    /// The web process of webview `key` died (crashed, killed by the system or a signal) or was
    /// ended because it stopped answering (R-UI-12). Within the Surface's budget
    /// (`Limits::max_reopens_per_window` per `Limits::reopen_window`) it is reopened
    /// ([`Effect::Reopen`]): same instance, a new generation, the same bundle, and its last state
    /// after the new page's `ready`; nothing goes upstream, and messages of the old generation
    /// reach nobody. Past the budget, and always for [`GoneReason::Memory`] and
    /// [`GoneReason::ReloadLoop`], it is closed as by [`Session::surface_gone`]. Nothing happens
    /// for a stale key.
    pub fn surface_lost(&mut self, key: &SurfaceKey, reason: GoneReason) -> Vec<Effect> {
        let mut fx = Vec::new();
        if !self.is_current(key) {
            return fx;
        }
        let now = self.clock.monotonic();
        let limits = &self.config.limits;
        let Some(entry) = self.surfaces.get_mut(&key.instance) else {
            return fx;
        };
        if entry.reopens.decide(reason, now, limits) == Decision::GiveUp {
            if let Some(entry) = self.take_current(key, &mut fx) {
                self.gone(key, entry, reason, &mut fx);
            }
            return fx;
        }
        let generation = self.numbers.generation();
        entry.generation = generation;
        entry.new_page();
        self.stats.reopened += 1;
        fx.push(Effect::Reopen {
            old: key.clone(),
            open: entry.open_as(SurfaceKey {
                session: self.config.session_id,
                instance: key.instance.clone(),
                generation,
            }),
            reason,
        });
        fx
    }

    /// The main frame of webview `key` committed a new document (R-UI-10). The first commit is
    /// the Surface's own load; each later one is a reload: the page gets the current state again
    /// after its next `ready`, exactly once, and patches meanwhile coalesce to the latest. More
    /// than `Limits::max_documents_per_window` commits within `Limits::document_window` close the
    /// Surface as a reload loop (R-UI-12). Same-document navigations (fragments, `pushState`)
    /// are not commits.
    pub fn document_committed(&mut self, key: &SurfaceKey) -> Vec<Effect> {
        let mut fx = Vec::new();
        if !self.is_current(key) {
            return fx;
        }
        let now = self.clock.monotonic();
        let window = self.config.limits.document_window;
        let max = self.config.limits.max_documents_per_window;
        let Some(entry) = self.surfaces.get_mut(&key.instance) else {
            return fx;
        };
        while entry
            .documents
            .front()
            .is_some_and(|t| now.saturating_sub(*t) >= window)
        {
            entry.documents.pop_front();
        }
        entry.documents.push_back(now);
        if entry.documents.len() > max {
            if let Some(entry) = self.take_current(key, &mut fx) {
                self.gone(key, entry, GoneReason::ReloadLoop, &mut fx);
            }
            return fx;
        }
        self.committed(key, &mut fx);
        fx
    }

    /// The main frame of webview `key` committed a document the **embedder** loaded on purpose
    /// (a preview's hot reload of an edited bundle, not the page reloading itself): like
    /// [`Session::document_committed`] the page gets the current state again after its next
    /// `ready` (R-UI-10), but the commit does not count toward the reload-loop bound, so an
    /// author saving often is never closed as a loop (R-UI-12). Nothing for a stale key.
    pub fn embedder_reloaded(&mut self, key: &SurfaceKey) -> Vec<Effect> {
        let mut fx = Vec::new();
        if !self.is_current(key) {
            return fx;
        }
        self.committed(key, &mut fx);
        fx
    }

    /// A commit of webview `key`'s main frame that passed the reload-loop bound: after the
    /// first, a reload, and the page gets the current state after its next `ready` (R-UI-10).
    pub(super) fn committed(&mut self, key: &SurfaceKey, fx: &mut Vec<Effect>) {
        let Some(entry) = self.surfaces.get_mut(&key.instance) else {
            return;
        };
        if entry.committed {
            entry.ready = None;
            self.stats.reloads += 1;
            fx.push(Effect::Reloaded(key.clone()));
        }
        entry.committed = true;
    }

    pub(super) fn gone(
        &mut self,
        key: &SurfaceKey,
        entry: Entry,
        reason: GoneReason,
        fx: &mut Vec<Effect>,
    ) {
        fx.push(Effect::Close {
            key: key.clone(),
            reason: CloseReason::Gone(reason),
        });
        let mut data = serde_json::Map::new();
        data.insert(
            "reason".to_owned(),
            serde_json::Value::String(reason.as_str().to_owned()),
        );
        let payload = UiEvent {
            instance_id: key.instance.clone(),
            event: close_event(),
            data: JsonObject::from(data),
        };
        fx.push(Effect::Send(self.outbound(payload, Some(entry.opener))));
    }

    /// `count` page events of Surface `instance` were dropped on the way out because the agent's
    /// reader fell behind; once it caught up it gets one `client.error` `events_dropped` naming
    /// the instance and the count (`in_reply_to: null`). It is never a `ui.event`, which a page
    /// could imitate.
    pub fn events_dropped(&mut self, instance: &InstanceId, count: u64) -> Vec<Effect> {
        let target = self
            .surfaces
            .get(instance)
            .map(|entry| entry.opener.clone());
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
        vec![Effect::Send(self.outbound(payload, target))]
    }

    /// The platform could not create webview `key`; the agent gets a `client.error` in reply to
    /// the open (R-ENV-5).
    pub fn open_failed(&mut self, key: &SurfaceKey, why: &str) -> Vec<Effect> {
        let err = ProtocolError::new(
            ErrorCode::SurfaceFailed,
            "R-ENV-5",
            format!("surface {} could not be created: {why}", key.instance),
        );
        self.open_not_served(key, err)
    }

    /// Closes `key`, whose open was accepted but whose view was not made, and refuses that
    /// open with `err` in reply to it; nothing for a stale key.
    fn open_not_served(&mut self, key: &SurfaceKey, err: ProtocolError) -> Vec<Effect> {
        let mut fx = Vec::new();
        if let Some(entry) = self.take_current(key, &mut fx) {
            fx.push(Effect::Close {
                key: key.clone(),
                reason: CloseReason::Failed,
            });
            let err = err.in_reply_to(Some(entry.opened_by));
            self.refuse(err, Some(entry.opener), &mut fx);
        }
        fx
    }

    /// The open of `key` was accepted, but no web process could be given to it: `limit`
    /// Surfaces are live and none can hibernate. It closes, and its opener gets
    /// `too_many_live_surfaces` naming the limit, in reply to the open (nothing else goes
    /// upstream for it).
    pub fn open_refused_live(&mut self, key: &SurfaceKey, limit: usize) -> Vec<Effect> {
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
        self.open_not_served(key, err)
    }

    /// The host gives hibernated Surface `key` a new webview (it was hidden, and is shown
    /// again): the Surface, its key and its instance stay as they were; the new page is a
    /// first load that gets the current state, the latest patch included, after its `ready`
    /// (R-UI-3). Neither the reopen budget nor the reload-loop bound counts it. Returns what
    /// to create the view from; `None` for a stale key. Its record, if the store keeps one, is
    /// forgotten through `fx` (#29).
    pub fn wake(&mut self, key: &SurfaceKey, fx: &mut Vec<Effect>) -> Option<SurfaceOpen> {
        if !self.is_current(key) {
            return None;
        }
        let entry = self.surfaces.get_mut(&key.instance)?;
        entry.new_page();
        let open = entry.open_as(key.clone());
        self.stats.woken += 1;
        self.woke(&key.instance, fx);
        Some(open)
    }

    /// The page said `ready` from `document` (R-UI-3): the first since the last commit gets the
    /// state. Another from the same document is dropped and counted, and changes nothing: a
    /// page saying `ready` twice is not a reload (R-UI-10). One from another document without a
    /// commit is a document that replaced the Surface's in place (a `javascript:` URL): the
    /// Surface's own document is loaded again (R-SEC-2a), which counts as a reload.
    pub(super) fn ready(&mut self, key: &SurfaceKey, document: DocumentId, fx: &mut Vec<Effect>) {
        let Some(entry) = self.surfaces.get_mut(&key.instance) else {
            return;
        };
        match &entry.ready {
            Some(taken) if *taken == document => {
                self.stats.duplicate_ready += 1;
                fx.push(Effect::Dropped {
                    key: key.clone(),
                    error: ProtocolError::new(
                        ErrorCode::InvalidBridgeMessage,
                        "R-UI-10",
                        "ready was already received from this document; dropped",
                    )
                    .field("type"),
                });
            }
            Some(_) => {
                self.stats.replaced_documents += 1;
                fx.push(Effect::Dropped {
                    key: key.clone(),
                    error: ProtocolError::new(
                        ErrorCode::InvalidBridgeMessage,
                        "R-SEC-2a",
                        "ready came from another document without a navigation; the surface's document is loaded again",
                    )
                    .field("document"),
                });
                fx.push(Effect::RestoreDocument(key.clone()));
            }
            None => {
                entry.ready = Some(document);
                fx.push(Effect::Ready(key.clone()));
                fx.push(Effect::DeliverState {
                    key: key.clone(),
                    state: entry.state.clone(),
                });
            }
        }
    }

    pub(super) fn event(
        &mut self,
        key: &SurfaceKey,
        event: EventName,
        data: JsonObject,
        fx: &mut Vec<Effect>,
    ) {
        if event.as_str() == "close" {
            self.stats.forged_close += 1;
            fx.push(Effect::Dropped {
                key: key.clone(),
                error: ProtocolError::new(
                    ErrorCode::InvalidBridgeMessage,
                    "R-UI-5",
                    "a page cannot send an event named close; only the user closes a surface",
                )
                .field("event"),
            });
            return;
        }
        if event.as_str() == "restored" {
            // #29: `restored` is the host's word that a Surface came back after a restart.
            fx.push(Effect::Dropped {
                key: key.clone(),
                error: ProtocolError::new(
                    ErrorCode::InvalidBridgeMessage,
                    "R-UI-5",
                    "a page cannot send an event named restored; only the host restores a surface",
                )
                .field("event"),
            });
            return;
        }
        let Some(entry) = self.surfaces.get(&key.instance) else {
            return;
        };
        if let Some(installed) = entry
            .installed
            .as_ref()
            .filter(|i| !i.events.contains(&event))
        {
            let error = ProtocolError::new(
                ErrorCode::InvalidBridgeMessage,
                "R-UI-9",
                format!(
                    "event {:?} is not declared by surface {} of app {} in its manifest",
                    event.as_str(),
                    installed.surface.surface,
                    installed.surface.id
                ),
            )
            .field("event");
            self.stats.undeclared_events += 1;
            fx.push(Effect::Dropped {
                key: key.clone(),
                error,
            });
            return;
        }
        let opener = entry.opener.clone();
        self.stats.events_forwarded += 1;
        let payload = UiEvent {
            instance_id: key.instance.clone(),
            event,
            data,
        };
        fx.push(Effect::Send(self.outbound(payload, Some(opener))));
    }
}
