//! The host's user event and the handle that feeds a [`Host`] from any thread: inbound
//! envelopes, sessions, reloads, snapshots, the standby screen, shutdown.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use lineup_host_core::{
    AgentIdentity, Answer, CapabilityName, ConversationId, GoneReason, InlineBundle, InstanceId,
    PartyId, SessionEffects, SessionId, SurfaceKey, Ticket,
};
use lineup_webview_shell::tao::event_loop::{EventLoop, EventLoopBuilder};

use lineup_webview_shell::ViewEvent;

use crate::host::{AnnounceDone, HostProxy};
use crate::{HostError, HostUserEvent};

/// The user event of the host's event loop. Opaque: made by [`HostHandle`] and the webviews. An
/// app with user events of its own carries it in a variant of its enum ([`HostUserEvent`]).
/// `Debug` shows an inbound envelope as a length and a digest (logs reach journald).
#[derive(Debug)]
pub struct HostEvent(pub(super) Inner);

#[cfg(test)]
impl HostEvent {
    /// The event [`HostHandle::send_inbound_line`] sends, for tests of its `Debug`.
    pub(crate) fn inbound_line(line: u64, bytes: Vec<u8>) -> Self {
        Self(Inner::Inbound {
            line: Some(line),
            bytes: InboundBytes(bytes),
        })
    }
}

/// An inbound envelope's bytes: the agent's message, its state and arguments included. `Debug`
/// shows a [`Fingerprint`](lineup_host_core::Fingerprint).
pub(super) struct InboundBytes(pub(super) Vec<u8>);

impl std::fmt::Debug for InboundBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        lineup_host_core::Fingerprint::of(&self.0).fmt(f)
    }
}

#[derive(Debug)]
pub(super) enum Inner {
    Inbound {
        line: Option<u64>,
        bytes: InboundBytes,
    },
    Oversized {
        line: Option<u64>,
        len: u64,
    },
    EventsDropped {
        instance: InstanceId,
        count: u64,
    },
    CapabilityAnswer {
        session: SessionId,
        ticket: Ticket,
        answer: Answer,
    },
    OpenSession {
        conversation: ConversationId,
        agent: Option<PartyId>,
    },
    EndSession {
        conversation: ConversationId,
    },
    /// Wakes the loop to apply effects queued outside it.
    Wake,
    /// The host's container in the parent window got a new size (#49 item 3).
    ChildAreaResized,
    /// A new status line for the standby screen.
    StandbyStatus(String),
    /// The standby screen's small indicator over the Surfaces, or none.
    StandbyIndicator(Option<String>),
    View {
        key: SurfaceKey,
        event: ViewEvent,
    },
    /// What a standard component's window reported.
    Component {
        key: SurfaceKey,
        action: lineup_webview_shell::ComponentAction,
    },
    /// The link confirm's answer for a link the user activated in a component (R-STD-11).
    LinkAnswered {
        link: Box<lineup_host_core::ComponentLink>,
        answer: lineup_host_core::ConsentAnswer,
    },
    /// What the embedder's renderer reported for a component it draws (R-STD-16).
    EmbedderComponent {
        key: SurfaceKey,
        input: EmbedderInput,
    },
    Reload {
        instance: InstanceId,
        bundle: InlineBundle,
    },
    ScreenPixels {
        instance: InstanceId,
        done: PixelsDone,
    },
    Snapshot {
        instance: InstanceId,
        done: SnapshotDone,
    },
    Shutdown,
    /// Ends [`Host::run`] once no Surface is open (at once when none is).
    ShutdownWhenEmpty,
    /// [`HostHandle::announce_inventory`].
    AnnounceInventory {
        conversation: ConversationId,
        agent: Option<PartyId>,
        done: AnnounceDone,
    },
    /// [`HostHandle::surfaces_gone`].
    SurfacesGone {
        conversation: Option<ConversationId>,
        reason: GoneReason,
    },
    /// [`HostHandle::send_binary_frame`].
    BinaryFrame {
        len: u64,
    },
    /// [`HostHandle::withdraw_capability`].
    Withdraw {
        name: CapabilityName,
    },
    /// [`HostHandle::set_capability_visible`].
    SetVisible {
        agent: AgentIdentity,
        name: CapabilityName,
        visible: bool,
    },
}

impl Inner {
    /// Whether it is an inbound line a [`HostHandle`] counted ([`HostHandle::inbound_waiting`]).
    pub(super) fn is_inbound(&self) -> bool {
        matches!(
            self,
            Inner::Inbound { .. } | Inner::Oversized { .. } | Inner::BinaryFrame { .. }
        )
    }
}

/// Where a snapshot's PNG bytes (or why there are none) go, from the event-loop thread.
pub(super) struct SnapshotDone(pub(super) Box<dyn FnOnce(Result<Vec<u8>, HostError>) + Send>);

/// Who hears a Surface's screen pixels ([`HostHandle::screen_pixels`]).
pub(super) struct PixelsDone(
    pub(super) Box<dyn FnOnce(Result<crate::WindowPixels, HostError>) + Send>,
);

impl std::fmt::Debug for PixelsDone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PixelsDone")
    }
}

impl std::fmt::Debug for SnapshotDone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SnapshotDone")
    }
}

/// The event loop a [`Host`](crate::Host) runs on, as [`event_loop`] creates it.
pub type HostEventLoop = lineup_webview_shell::tao::event_loop::EventLoop<HostEvent>;

/// Creates the event loop a [`Host`](crate::Host) runs on.
///
/// ## Platform-specific
/// Linux: needs an X11 or Wayland display (`DISPLAY` or `WAYLAND_DISPLAY`); without one, or
/// when it does not open after five attempts over about three seconds, this returns
/// [`HostError::Platform`] rather than letting GTK abort the process. Call it on the thread
/// that runs the loop.
pub fn event_loop() -> Result<EventLoop<HostEvent>, HostError> {
    event_loop_with::<HostEvent>()
}

/// Creates an event loop whose user events are the app's own type `T`, one variant of which
/// carries the host's ([`HostUserEvent`]), checking the display as [`event_loop`] does.
pub fn event_loop_with<T: HostUserEvent>() -> Result<EventLoop<T>, HostError> {
    lineup_webview_shell::open_display()?;
    Ok(EventLoopBuilder::<T>::with_user_event().build())
}

/// The event loop has ended; nothing more can be sent to the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the host's event loop has ended")]
pub struct HostClosed;

/// A `Send + Clone` handle that forwards input into the host's event loop from any thread.
#[derive(Debug, Clone)]
pub struct HostHandle {
    pub(super) proxy: HostProxy,
    /// Inbound lines handed to the event loop and not handled yet, over every clone.
    pub(super) inbound: Arc<AtomicUsize>,
}

impl HostHandle {
    pub(super) fn send(&self, inner: Inner) -> Result<(), HostClosed> {
        let inbound = inner.is_inbound();
        if inbound {
            self.inbound.fetch_add(1, Ordering::Relaxed);
        }
        let sent = self.proxy.send_event(HostEvent(inner));
        if sent.is_err() && inbound {
            self.inbound.fetch_sub(1, Ordering::Relaxed);
        }
        sent.map_err(|_| HostClosed)
    }

    /// How many inbound envelopes (and oversized-line reports) handed over through any handle of
    /// this host the event loop has not handled yet. A reader that stops reading input while
    /// this is high keeps the loop's queue, and the answers it will produce, bounded (R-ENV-4).
    pub fn inbound_waiting(&self) -> usize {
        self.inbound.load(Ordering::Relaxed)
    }

    /// Hands one inbound envelope (agent → client) to the host.
    pub fn send_inbound(&self, bytes: Vec<u8>) -> Result<(), HostClosed> {
        self.send(Inner::Inbound {
            line: None,
            bytes: InboundBytes(bytes),
        })
    }

    /// Hands one inbound envelope to the host, numbered for diagnostics
    /// ([`HostDelegate::notify_rejected`](crate::HostDelegate::notify_rejected) receives the
    /// number).
    pub fn send_inbound_line(&self, line: u64, bytes: Vec<u8>) -> Result<(), HostClosed> {
        self.send(Inner::Inbound {
            line: Some(line),
            bytes: InboundBytes(bytes),
        })
    }

    /// Reports an inbound line of `len` bytes that was too long to be read (R-ENV-4); the agent
    /// gets `client.error` `too_large`.
    pub fn send_oversized_line(&self, line: u64, len: u64) -> Result<(), HostClosed> {
        self.send(Inner::Oversized {
            line: Some(line),
            len,
        })
    }

    /// Reports that `count` page events of Surface `instance` were dropped on the way out because
    /// the agent's reader fell behind (for instance by `lineup_transport`'s `LineWriter`, once its queue
    /// drained). The host's session builds the `client.error` `events_dropped` and sends it
    /// through the outbound callback, like every other outbound message.
    pub fn report_events_dropped(
        &self,
        instance: InstanceId,
        count: u64,
    ) -> Result<(), HostClosed> {
        self.send(Inner::EventsDropped { instance, count })
    }

    /// Reloads Surface `instance` in place with `bundle`: the same webview, window and state,
    /// a new document assembled as for `ui.open` (same CSP, same bridge). The page gets the
    /// current state again after its `ready` (R-UI-10), and the reload does **not** count
    /// toward the reload-loop bound (`Limits::max_documents_per_window`), since the embedder
    /// asked for it, not the page: this is a preview's hot reload. A bundle over
    /// `Limits::max_bundle_bytes` (R-UI-2) or an instance that is not open is refused with a
    /// warning in the log, and nothing changes. Nothing goes to the agent.
    pub fn reload_bundle(
        &self,
        instance: InstanceId,
        bundle: InlineBundle,
    ) -> Result<(), HostClosed> {
        self.send(Inner::Reload { instance, bundle })
    }

    /// Takes WebKit's snapshot of Surface `instance`'s whole document as PNG bytes, once what
    /// the host sent the page before (its state, say) has run and two animation frames have
    /// passed ([`SurfaceView::snapshot_png`](lineup_webview_shell::SurfaceView::snapshot_png)); `done` gets the bytes, or why there are none,
    /// on the event-loop thread.
    pub fn snapshot_png(
        &self,
        instance: InstanceId,
        done: impl FnOnce(Result<Vec<u8>, HostError>) + Send + 'static,
    ) -> Result<(), HostClosed> {
        self.send(Inner::Snapshot {
            instance,
            done: SnapshotDone(Box::new(done)),
        })
    }

    /// Reads back what Surface `instance` shows on screen now ([`SurfaceView::screen_pixels`](lineup_webview_shell::SurfaceView::screen_pixels)):
    /// its window's content area, or its area of the embedder's window; `done` gets the
    /// pixels, or why there are none, on the event-loop thread. For smoke tests that the
    /// Surface is painted where it was placed.
    pub fn screen_pixels(
        &self,
        instance: InstanceId,
        done: impl FnOnce(Result<crate::WindowPixels, HostError>) + Send + 'static,
    ) -> Result<(), HostClosed> {
        self.send(Inner::ScreenPixels {
            instance,
            done: PixelsDone(Box::new(done)),
        })
    }

    /// Opens a session for `conversation`, vouching for `agent` (R-SES-1; `None`: the
    /// builder's [`HostBuilder::vouched_agent`](crate::HostBuilder::vouched_agent)); see [`Host::open_session`](crate::Host::open_session). A refusal (the
    /// session is open already, `max_sessions`) is logged.
    pub fn open_session(
        &self,
        conversation: ConversationId,
        agent: Option<PartyId>,
    ) -> Result<(), HostClosed> {
        self.send(Inner::OpenSession {
            conversation,
            agent,
        })
    }

    /// Ends the session of `conversation`; see [`Host::end_session`](crate::Host::end_session).
    pub fn end_session(&self, conversation: ConversationId) -> Result<(), HostClosed> {
        self.send(Inner::EndSession { conversation })
    }

    /// Sets the status line of the standby screen ([`HostBuilder::standby`](crate::HostBuilder::standby)), cut to
    /// [`MAX_STANDBY_STATUS_CHARS`](crate::platform::MAX_STANDBY_STATUS_CHARS) characters and shown as
    /// text; nothing happens without a standby screen.
    pub fn set_standby_status(&self, status: impl Into<String>) -> Result<(), HostClosed> {
        self.send(Inner::StandbyStatus(status.into()))
    }

    /// Shows `text` in a small host-owned indicator over the Surfaces in the parent window of
    /// [`HostBuilder::child_views_in`](crate::HostBuilder::child_views_in) (say, "Agent away: reconnecting in 4 s"), or hides it
    /// with `None`; cut like [`HostHandle::set_standby_status`] and shown as text. Nothing
    /// happens without a standby screen ([`HostBuilder::standby`](crate::HostBuilder::standby)).
    pub fn set_standby_indicator(&self, text: Option<String>) -> Result<(), HostClosed> {
        self.send(Inner::StandbyIndicator(text))
    }

    /// Hands the host a typed envelope, as an agent would send it: serialized and then checked
    /// exactly like [`HostHandle::send_inbound`]'s bytes (nothing typed skips a check).
    /// [`AgentEnvelopes`](crate::AgentEnvelopes) fills in its id, conversation and sender.
    pub fn send_envelope<P: lineup_host_core::Payload>(
        &self,
        envelope: &lineup_host_core::Envelope<P>,
    ) -> Result<(), HostClosed> {
        match serde_json::to_vec(envelope) {
            Ok(bytes) => self.send_inbound(bytes),
            Err(e) => {
                // Not reached for the protocol's payloads; the host would refuse empty input.
                tracing::error!("an envelope did not serialize: {e}");
                self.send_inbound(Vec::new())
            }
        }
    }

    /// Closes every Surface (nothing goes upstream) and ends [`Host::run`](crate::Host::run).
    pub fn shutdown(&self) -> Result<(), HostClosed> {
        self.send(Inner::Shutdown)
    }

    /// Ends [`Host::run`](crate::Host::run) once the last Surface has closed (by the user, the page or the agent),
    /// at once when none is open. Messages sent before it are handled first, so a `ui.open`
    /// that was the last line of input still opens its Surface. `lineup host --stdio
    /// --until-closed` sends it at end of input.
    pub fn shutdown_when_last_closed(&self) -> Result<(), HostClosed> {
        self.send(Inner::ShutdownWhenEmpty)
    }

    /// Announces the inventory of `conversation` again, for an agent whose transport has just
    /// connected (again): its session's `client.inventory` and `app.list` go to the outbound
    /// callback, under a new revision (R-INV-1, R-INV-2). When the conversation has no session
    /// (it ended, say after `HostBuilder::end_idle_sessions_after`), one is opened, vouching for
    /// `agent` (R-SES-1; `None`: the builder's vouched agent), and announces itself as a new
    /// session does. Then `done` runs on the event-loop thread with whether an inventory was
    /// sent (every session has one, App Capabilities on or off; `false` only when the session
    /// could not be opened).
    pub fn announce_inventory(
        &self,
        conversation: ConversationId,
        agent: Option<PartyId>,
        done: impl FnOnce(bool) + Send + 'static,
    ) -> Result<(), HostClosed> {
        self.send(Inner::AnnounceInventory {
            conversation,
            agent,
            done: AnnounceDone(Box::new(done)),
        })
    }

    /// Every open Surface of `conversation`'s session, or of every session with `None`, goes
    /// away for `reason`: the delegate hears `CloseReason::Gone(reason)` and the agent one
    /// `ui.event` `close` with `data.reason` per Surface (R-UI-12). An agent link uses
    /// [`GoneReason::AgentGone`] once its grace for an absent agent ran out.
    pub fn surfaces_gone(
        &self,
        conversation: Option<ConversationId>,
        reason: GoneReason,
    ) -> Result<(), HostClosed> {
        self.send(Inner::SurfacesGone {
            conversation,
            reason,
        })
    }

    /// Reports an inbound message of `len` bytes that was too large to be read (R-ENV-4), from a
    /// transport without line numbers; the agent gets `client.error` `too_large` naming the size
    /// and the limit. Counted in [`HostHandle::inbound_waiting`] like an inbound envelope.
    pub fn send_oversized(&self, len: u64) -> Result<(), HostClosed> {
        self.send(Inner::Oversized { line: None, len })
    }

    /// Reports a binary frame of `len` bytes that a WebSocket transport received: each envelope
    /// is one text frame, so the agent gets `client.error` `binary_frame` (R-ENV-5). Counted in
    /// [`HostHandle::inbound_waiting`] like an inbound envelope.
    pub fn send_binary_frame(&self, len: u64) -> Result<(), HostClosed> {
        self.send(Inner::BinaryFrame { len })
    }

    /// Withdraws capability `name` from every session, open and future: each gets a new
    /// inventory without it, and a later call to it is answered `unsupported` with `revoked`
    /// (R-INV-4). A withdrawn capability comes back only when a host starts with it again.
    pub fn withdraw_capability(&self, name: CapabilityName) -> Result<(), HostClosed> {
        self.send(Inner::Withdraw { name })
    }

    /// Hides capability `name` from the vouched `agent` (`visible: false`) or shows it again:
    /// that agent's sessions get a new inventory; a call to a hidden one is `revoked` for a
    /// session that was offered it, and unknown to others (R-INV-4, R-ENV-5).
    pub fn set_capability_visible(
        &self,
        agent: AgentIdentity,
        name: CapabilityName,
        visible: bool,
    ) -> Result<(), HostClosed> {
        self.send(Inner::SetVisible {
            agent,
            name,
            visible,
        })
    }
}

/// What reaches the loop from outside its own handling: the inbound lines every
/// [`HostHandle`] of the host counted and the loop has not handled yet (R-ENV-4), and effects
/// made outside the loop (capability recovery, registrations, sessions opened through the API),
/// applied at its next turn.
///
/// Invariants: the count never goes below zero (only a handle, which counted it, makes an
/// inbound event, and a send that failed is uncounted); queued effects are taken in the order
/// they were queued, and the loop is woken for each.
pub(super) struct Intake {
    inbound: Arc<AtomicUsize>,
    pending: VecDeque<SessionEffects>,
}

impl Intake {
    /// Nothing counted yet; `pending` waits for the loop's first turn.
    pub(super) fn new(pending: VecDeque<SessionEffects>) -> Self {
        Self {
            inbound: Arc::new(AtomicUsize::new(0)),
            pending,
        }
    }

    /// A handle that feeds the loop through `proxy` and counts into this intake.
    pub(super) fn handle(&self, proxy: HostProxy) -> HostHandle {
        HostHandle {
            proxy,
            inbound: Arc::clone(&self.inbound),
        }
    }

    /// The loop handled one inbound line a handle counted.
    pub(super) fn handled(&self) {
        let _ = self
            .inbound
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
    }

    /// Whether no inbound line waits for the loop.
    pub(super) fn idle(&self) -> bool {
        self.inbound.load(Ordering::Relaxed) == 0
    }

    /// Queues `effects` made outside the loop's handling and wakes the loop through `proxy` to
    /// apply them.
    pub(super) fn queue(&mut self, effects: SessionEffects, proxy: &HostProxy) {
        self.pending.push_back(effects);
        let _ = proxy.send_event(HostEvent(Inner::Wake));
    }

    /// The effects queued first, to apply now.
    pub(super) fn next(&mut self) -> Option<SessionEffects> {
        self.pending.pop_front()
    }
}

/// What the embedder reports for a component it draws.
#[derive(Debug, Clone)]
pub(super) enum EmbedderInput {
    /// An answer, `via: "embedder"`.
    Answered(lineup_host_core::UserAnswer),
    /// The user closed it.
    Closed,
    /// The user's unsent draft.
    Draft(serde_json::Value),
}
