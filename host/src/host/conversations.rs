//! Conversations as the unit an app shows and hides (#49): a conversation's Surfaces and
//! standard components go together
//! ([`Host::set_conversation_visible`](super::Host::set_conversation_visible)). A hidden
//! conversation's components take no input (R-STD-8 (a)); shown again, their guard delay starts
//! again (R-STD-8 (b)); what a hidden conversation opens starts hidden.

use lineup_host_core::{SessionId, SurfaceKey};

use super::components::ComponentViews;

/// What a conversation holds, as [`Host::conversation_items`](super::Host::conversation_items)
/// lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConversationItem {
    /// A Surface (an app's webview).
    Surface(SurfaceKey),
    /// A standard component the built-in renderer shows.
    Component(SurfaceKey),
}

/// What the conversation of `session` holds: its Surfaces among `surfaces` (the open ones,
/// hibernated ones included), then the boxes the built-in renderer (`components`) has for it.
pub(super) fn items(
    session: SessionId,
    surfaces: Vec<SurfaceKey>,
    components: Option<&ComponentViews>,
) -> Vec<ConversationItem> {
    let mut items: Vec<ConversationItem> = surfaces
        .into_iter()
        .filter(|k| k.session == session)
        .map(ConversationItem::Surface)
        .collect();
    if let Some(components) = components {
        items.extend(
            components
                .keys()
                .into_iter()
                .filter(|k| k.session == session)
                .map(ConversationItem::Component),
        );
    }
    items
}
