//! The sessions that ended while capability calls of theirs still ran: their answers are
//! recorded and audited, never sent (R-CAP-5), and the counters of every ended session.

use std::collections::BTreeMap;
use std::time::Duration;

use super::SessionEffects;
use crate::capability::{Answer, Ticket};
use crate::error::UsageError;
use crate::keys::SessionId;
use crate::session::{Effect, Session, Stats};

/// Ended sessions with calls still running, and the counters of all that ended.
///
/// Invariants: a session is kept only while it has a pending call, and none of its effects is
/// an envelope for the agent, which is gone; `stats` holds each ended session's counters once.
#[derive(Default)]
pub(super) struct Ending {
    sessions: BTreeMap<SessionId, Session>,
    stats: Stats,
}

impl Ending {
    /// Session `id` ends: its Surfaces close without a word upstream, its calls waiting for a
    /// decision are cancelled, and it is kept while calls of it still run.
    pub(super) fn end(&mut self, id: SessionId, mut session: Session) -> SessionEffects {
        let effects = session.close_all();
        self.stats += session.stats();
        if has_pending_calls(&session) {
            self.sessions.insert(id, session);
        }
        SessionEffects::of(id, effects)
    }

    /// The counters of every session that ended.
    pub(super) fn stats(&self) -> &Stats {
        &self.stats
    }

    /// The platform's `answer` to `ticket` of ended session `id`, recorded; `None` when `id`
    /// is not kept here.
    pub(super) fn answered(
        &mut self,
        id: SessionId,
        ticket: Ticket,
        answer: Answer,
    ) -> Option<Result<Vec<Effect>, UsageError>> {
        let session = self.sessions.get_mut(&id)?;
        let effects = session.answered(ticket, answer).map(unsent);
        if !has_pending_calls(session) {
            self.sessions.remove(&id);
        }
        Some(effects)
    }

    /// Expires and times out the calls of the ended sessions whose deadline passed.
    pub(super) fn poll(&mut self) -> Vec<SessionEffects> {
        let all = self
            .sessions
            .iter_mut()
            .map(|(id, session)| SessionEffects::of(*id, unsent(session.poll_capabilities())))
            .filter(|step| !step.effects.is_empty())
            .collect();
        self.sessions.retain(|_, s| has_pending_calls(s));
        all
    }

    /// How long until [`Ending::poll`] has work.
    pub(super) fn next_wakeup(&self) -> Option<Duration> {
        self.sessions
            .values()
            .filter_map(Session::next_capability_wakeup)
            .min()
    }
}

/// `effects` without what would go to the agent: it is gone, its answers are on record.
fn unsent(mut effects: Vec<Effect>) -> Vec<Effect> {
    effects.retain(|e| !matches!(e, Effect::Send(_)));
    effects
}

/// Whether `session` has capability calls not answered yet.
pub(super) fn has_pending_calls(session: &Session) -> bool {
    session
        .capabilities()
        .is_some_and(|caps| caps.pending().0 > 0)
}
