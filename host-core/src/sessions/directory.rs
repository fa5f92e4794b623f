//! The open sessions of a table, by id and by conversation.

use std::collections::BTreeMap;

use crate::ids::ConversationId;
use crate::keys::SessionId;

use super::Slot;

/// The table's open sessions by id, the conversation each serves, and the next id.
///
/// Invariants: `by_conversation` and `slots` name the same sessions, one per conversation
/// (R-SES-1); ids count up from 1 and are never reused, so a key of an ended session never
/// names a new one.
pub(super) struct Directory {
    slots: BTreeMap<SessionId, Slot>,
    by_conversation: BTreeMap<ConversationId, SessionId>,
    next_id: u64,
}

impl Default for Directory {
    fn default() -> Self {
        Self {
            slots: BTreeMap::new(),
            by_conversation: BTreeMap::new(),
            next_id: 1,
        }
    }
}

impl std::fmt::Debug for Directory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.by_conversation.fmt(f)
    }
}

impl Directory {
    /// An id no session of this table had.
    pub(super) fn new_id(&mut self) -> SessionId {
        let id = SessionId(self.next_id);
        self.next_id += 1;
        id
    }

    /// Adds session `id` serving `conversation`.
    pub(super) fn insert(&mut self, id: SessionId, conversation: ConversationId, slot: Slot) {
        self.by_conversation.insert(conversation, id);
        self.slots.insert(id, slot);
    }

    /// Takes the session of `conversation` out of the table.
    pub(super) fn remove(&mut self, conversation: &ConversationId) -> Option<(SessionId, Slot)> {
        let id = self.by_conversation.remove(conversation)?;
        let slot = self.slots.remove(&id)?;
        Some((id, slot))
    }

    /// The session serving `conversation`.
    pub(super) fn id_of(&self, conversation: &ConversationId) -> Option<SessionId> {
        self.by_conversation.get(conversation).copied()
    }

    /// The conversations served.
    pub(super) fn conversations(&self) -> impl Iterator<Item = &ConversationId> {
        self.by_conversation.keys()
    }

    /// Session `id`.
    pub(super) fn get(&self, id: &SessionId) -> Option<&Slot> {
        self.slots.get(id)
    }

    /// Session `id`, to change.
    pub(super) fn get_mut(&mut self, id: &SessionId) -> Option<&mut Slot> {
        self.slots.get_mut(id)
    }

    /// The sessions by id.
    pub(super) fn iter(&self) -> impl Iterator<Item = (&SessionId, &Slot)> {
        self.slots.iter()
    }

    /// The sessions by id, to change.
    pub(super) fn iter_mut(&mut self) -> impl Iterator<Item = (&SessionId, &mut Slot)> {
        self.slots.iter_mut()
    }

    /// The ids, in order.
    pub(super) fn keys(&self) -> impl Iterator<Item = &SessionId> {
        self.slots.keys()
    }

    /// The sessions.
    pub(super) fn values(&self) -> impl Iterator<Item = &Slot> {
        self.slots.values()
    }

    /// How many sessions are open.
    pub(super) fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether none is open.
    pub(super) fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }
}
