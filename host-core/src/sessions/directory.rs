//! The open sessions of a table, by id and by conversation, and how long each has been quiet.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::time::Duration;

use super::ending::has_pending_calls;
use super::SessionEffects;
use crate::ids::ConversationId;
use crate::keys::SessionId;
use crate::message::Message;
use crate::session::{Effect, Session};

/// One open session and the start of its quiet.
struct Slot {
    session: Session,
    /// When it last accepted an envelope or held something: the start of its idleness.
    quiet_since: Duration,
}

/// The table's open sessions by id, the conversation each serves, and the next id.
///
/// Invariants: `by_conversation` and `slots` name the same sessions, one per conversation
/// (R-SES-1); ids count up from 1 and are never reused, so a key of an ended session never
/// names a new one; a session's quiet starts again whenever it accepts an envelope or is seen
/// holding something.
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

    /// Adds session `id` serving `conversation`, quiet from `now`.
    pub(super) fn insert(
        &mut self,
        id: SessionId,
        conversation: ConversationId,
        session: Session,
        now: Duration,
    ) {
        self.by_conversation.insert(conversation, id);
        let quiet_since = now;
        self.slots.insert(
            id,
            Slot {
                session,
                quiet_since,
            },
        );
    }

    /// Takes the session of `conversation` out of the table.
    pub(super) fn remove(&mut self, conversation: &ConversationId) -> Option<(SessionId, Session)> {
        let id = self.by_conversation.remove(conversation)?;
        let slot = self.slots.remove(&id)?;
        Some((id, slot.session))
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
    pub(super) fn get(&self, id: SessionId) -> Option<&Session> {
        self.slots.get(&id).map(|slot| &slot.session)
    }

    /// Session `id`, to change.
    pub(super) fn get_mut(&mut self, id: SessionId) -> Option<&mut Session> {
        self.slots.get_mut(&id).map(|slot| &mut slot.session)
    }

    /// The sessions by id, in the order they were established.
    pub(super) fn iter(&self) -> impl Iterator<Item = (SessionId, &Session)> {
        self.slots.iter().map(|(id, slot)| (*id, &slot.session))
    }

    /// The only session, when exactly one is open.
    pub(super) fn only(&self) -> Option<SessionId> {
        match self.slots.len() {
            1 => self.slots.keys().next().copied(),
            _ => None,
        }
    }

    /// How many sessions are open.
    pub(super) fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether none is open.
    pub(super) fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The Surfaces open over every session.
    pub(super) fn surface_count(&self) -> usize {
        self.slots.values().map(|s| s.session.surface_count()).sum()
    }

    /// Runs `f` on every session that `only` lets through, by id, and keeps what is not empty.
    pub(super) fn each(
        &mut self,
        only: impl Fn(SessionId, &Session) -> bool,
        mut f: impl FnMut(&mut Session) -> Vec<Effect>,
    ) -> Vec<SessionEffects> {
        match self.try_each(only, |session| Ok::<_, Infallible>(f(session))) {
            Ok(all) => all,
            Err(never) => match never {},
        }
    }

    /// [`Directory::each`] for a step that may fail: the first error stops it.
    pub(super) fn try_each<E>(
        &mut self,
        only: impl Fn(SessionId, &Session) -> bool,
        mut f: impl FnMut(&mut Session) -> Result<Vec<Effect>, E>,
    ) -> Result<Vec<SessionEffects>, E> {
        let mut all = Vec::new();
        for (id, slot) in self.slots.iter_mut() {
            if !only(*id, &slot.session) {
                continue;
            }
            let effects = f(&mut slot.session)?;
            if !effects.is_empty() {
                all.push(SessionEffects::of(*id, effects));
            }
        }
        Ok(all)
    }

    /// Hands `message` to session `id`, with `elsewhere` Surfaces open in the others; its quiet
    /// starts again at `now` when it accepts the envelope. `None` when `id` is not open.
    pub(super) fn handle_within(
        &mut self,
        id: SessionId,
        message: Message,
        elsewhere: usize,
        now: Duration,
    ) -> Option<Vec<Effect>> {
        let slot = self.slots.get_mut(&id)?;
        let accepted = slot.session.stats().envelopes_accepted;
        let effects = slot.session.handle_message_within(message, elsewhere);
        if slot.session.stats().envelopes_accepted > accepted {
            slot.quiet_since = now;
        }
        Some(effects)
    }

    /// The conversations of the sessions quiet for `idle` at `now`; every session that holds
    /// something is marked busy now.
    pub(super) fn idle(&mut self, now: Duration, idle: Duration) -> Vec<ConversationId> {
        let mut idle_ones = Vec::new();
        for slot in self.slots.values_mut() {
            if holds_something(&slot.session) {
                slot.quiet_since = now;
            } else if now.saturating_sub(slot.quiet_since) >= idle {
                idle_ones.extend(slot.session.conversation_id().cloned());
            }
        }
        idle_ones
    }

    /// How long from `now` until a session quiet now has been quiet for `idle`.
    pub(super) fn next_idle(&self, now: Duration, idle: Duration) -> Option<Duration> {
        self.slots
            .values()
            .filter(|s| !holds_something(&s.session))
            .map(|s| (s.quiet_since + idle).saturating_sub(now))
            .min()
    }
}

/// Whether `session` holds what the user sees or waits for: an open Surface, an open standard
/// component (a question waiting for its answer), or a pending call; such a session is never
/// idle.
fn holds_something(session: &Session) -> bool {
    session.surface_count() > 0 || session.component_count() > 0 || has_pending_calls(session)
}
