//! What an agent link (a transport that can lose its agent and get it back, such as
//! `lineup host --connect`'s WebSocket) asks of the host through its handle
//! ([`HostHandle::announce_inventory`], [`HostHandle::surfaces_gone`],
//! [`HostHandle::send_binary_frame`]): announce a session's inventory again when the agent
//! connects again (R-INV-1), close every Surface when the agent stayed away too long
//! (`agent_gone`, R-UI-12), and refuse a binary frame (R-ENV-5).
//!
//! The decisions are host-core's ([`Sessions::announce_inventory`], [`Sessions::surfaces_gone`],
//! [`Sessions::handle_binary_frame`]); the host carries them out on the event-loop thread, so
//! every envelope they produce reaches the outbound callback like any other.
//!
//! [`HostHandle::announce_inventory`]: super::HostHandle::announce_inventory
//! [`HostHandle::surfaces_gone`]: super::HostHandle::surfaces_gone
//! [`HostHandle::send_binary_frame`]: super::HostHandle::send_binary_frame
//! [`Sessions::announce_inventory`]: lineup_host_core::Sessions::announce_inventory
//! [`Sessions::surfaces_gone`]: lineup_host_core::Sessions::surfaces_gone
//! [`Sessions::handle_binary_frame`]: lineup_host_core::Sessions::handle_binary_frame

use lineup_host_core::{ConversationId, Effect, Message, PartyId, SessionEffects, Sessions};

/// Called on the event-loop thread once an [`HostHandle::announce_inventory`] request was
/// carried out, with whether a `client.inventory` went to the outbound callback.
///
/// [`HostHandle::announce_inventory`]: super::HostHandle::announce_inventory
pub(super) struct AnnounceDone(pub(super) Box<dyn FnOnce(bool) + Send>);

impl std::fmt::Debug for AnnounceDone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AnnounceDone")
    }
}

/// What announcing the inventory of `conversation` again takes: its session's
/// [`Sessions::announce_inventory`], or, when the conversation has no session (it ended), a
/// session opened again vouching for `agent` (R-SES-1), which announces itself as a new one
/// does. `None` when none can be opened.
pub(super) fn announce_again(
    sessions: &mut Sessions,
    conversation: ConversationId,
    agent: Option<PartyId>,
) -> Option<SessionEffects> {
    if let Some(effects) = sessions.announce_inventory(&conversation) {
        return Some(effects);
    }
    match sessions.open_session(conversation.clone(), agent) {
        Ok(effects) => {
            tracing::info!("conversation {conversation}: session opened again (R-SES-1)");
            Some(effects)
        }
        Err(e) => {
            tracing::warn!("conversation {conversation}: no session to announce: {e}");
            None
        }
    }
}

/// Whether `effects` send a `client.inventory`.
pub(super) fn announces(effects: &SessionEffects) -> bool {
    effects
        .effects
        .iter()
        .any(|e| matches!(e, Effect::Send(Message::ClientInventory(_))))
}
