//! What an agent link (a transport that can lose its agent and get it back, such as
//! `lineup host --connect`'s WebSocket) asks of the host through its handle: announce a session's inventory again when the agent connects again
//! (R-INV-1), close every Surface when the agent stayed away too long (`agent_gone`, R-UI-12),
//! and refuse a binary frame (R-ENV-5).
//!
//! The decisions are host-core's ([`Sessions::announce_inventory`], [`Sessions::surfaces_gone`],
//! [`Sessions::handle_binary_frame`]); this module carries them out on the event-loop thread, so
//! every envelope they produce reaches the outbound callback like any other
//! ([`Host`](super::Host) carries out each request).
//!
//! [`Sessions::announce_inventory`]: lineup_host_core::Sessions::announce_inventory
//! [`Sessions::surfaces_gone`]: lineup_host_core::Sessions::surfaces_gone
//! [`Sessions::handle_binary_frame`]: lineup_host_core::Sessions::handle_binary_frame

use lineup_host_core::{ConversationId, GoneReason, PartyId};

use super::handle::{HostClosed, HostHandle, Inner};

/// Called on the event-loop thread once an [`HostHandle::announce_inventory`] request was
/// carried out, with whether a `client.inventory` went to the outbound callback.
pub(super) struct AnnounceDone(pub(super) Box<dyn FnOnce(bool) + Send>);

impl std::fmt::Debug for AnnounceDone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AnnounceDone")
    }
}

impl HostHandle {
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
}
