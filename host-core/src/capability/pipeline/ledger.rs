//! The calls of one session that are not answered yet: what each waits for, and when it is due.

use std::collections::BTreeMap;
use std::time::Duration;

use super::call::{Call, Stage, Subject};
use crate::capability::effect::Ticket;
use crate::ids::CallId;
use crate::message::Timestamp;

/// One session's waiting calls by key, each under the ticket of what it waits for, and the
/// tickets of handlers that timed out (a result for them is discarded and audited).
///
/// Invariants: each waiting call is under its own key; a ticket names at most one waiting
/// call, the one whose `ticket` it is, and tickets are never reused.
#[derive(Default)]
pub(super) struct Ledger {
    calls: BTreeMap<CallId, Call>,
    tickets: BTreeMap<Ticket, CallId>,
    next_ticket: u64,
    late: BTreeMap<Ticket, Subject>,
}

impl Ledger {
    /// A new ticket, never given before in this session.
    pub(super) fn ticket(&mut self) -> Ticket {
        self.next_ticket += 1;
        Ticket(self.next_ticket)
    }

    /// `call` waits at `stage` for what `ticket` will answer.
    pub(super) fn wait(&mut self, mut call: Call, stage: Stage, ticket: Ticket) {
        call.stage = stage;
        call.ticket = ticket;
        let id = call.subject.key.call_id.clone();
        self.tickets.insert(ticket, id.clone());
        self.calls.insert(id, call);
    }

    /// `call` waits for its own deadline (a retry), under no ticket.
    pub(super) fn park(&mut self, call: Call) {
        self.calls.insert(call.subject.key.call_id.clone(), call);
    }

    /// The waiting call of key `id`.
    pub(super) fn get(&self, id: &CallId) -> Option<&Call> {
        self.calls.get(id)
    }

    /// The waiting call of key `id`, to change.
    pub(super) fn get_mut(&mut self, id: &CallId) -> Option<&mut Call> {
        self.calls.get_mut(id)
    }

    /// The stage of the call `ticket` names, if one waits for it.
    pub(super) fn stage_of(&self, ticket: Ticket) -> Option<Stage> {
        let id = self.tickets.get(&ticket)?;
        Some(self.calls.get(id)?.stage)
    }

    /// Takes the call `ticket` names out of the ledger, with its ticket, in hand: what it
    /// waited for has come.
    pub(super) fn take_by_ticket(&mut self, ticket: Ticket) -> Option<Call> {
        let id = self.tickets.remove(&ticket)?;
        let mut call = self.calls.remove(&id)?;
        call.stage = Stage::InHand;
        Some(call)
    }

    /// Takes the waiting call of key `id` out of the ledger, with its ticket.
    pub(super) fn take(&mut self, id: &CallId) -> Option<Call> {
        let call = self.calls.remove(id)?;
        self.tickets.remove(&call.ticket);
        Some(call)
    }

    /// Drops the waiting calls `drop` picks, with their tickets, answering nothing.
    pub(super) fn drop_where(&mut self, drop: impl Fn(&Call) -> bool) {
        let gone: Vec<CallId> = self
            .calls
            .iter()
            .filter(|(_, call)| drop(call))
            .map(|(id, _)| id.clone())
            .collect();
        for id in gone {
            self.take(&id);
        }
    }

    /// The keys of the waiting calls `pick` picks, in key order.
    pub(super) fn keys_where(&self, pick: impl Fn(&Call) -> bool) -> Vec<CallId> {
        self.calls
            .iter()
            .filter(|(_, call)| pick(call))
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// Unanswered calls, counting every repeat that waits on one.
    pub(super) fn in_flight(&self) -> usize {
        self.calls.values().map(|c| c.to.len()).sum()
    }

    /// How many calls are unanswered, and how many of them wait for a decision.
    pub(super) fn pending(&self) -> (usize, usize) {
        let deciding = self.calls.values().filter(|c| c.stage.deciding()).count();
        (self.calls.len(), deciding)
    }

    /// The keys of the calls due at wall time `now` and monotonic time `monotonic`, in key
    /// order: a handler that ran `timeout` or longer, a decision or a call another process has
    /// past its deadline, a look again or a write again at its time.
    pub(super) fn due(
        &self,
        now: Timestamp,
        monotonic: Duration,
        timeout: Duration,
    ) -> Vec<CallId> {
        self.keys_where(|c| match c.stage {
            Stage::Running { since } => monotonic.saturating_sub(since) >= timeout,
            Stage::Elsewhere { retry } => now >= c.expires_at || monotonic >= retry,
            Stage::Recording { retry } => monotonic >= retry,
            stage => stage.deciding() && now >= c.expires_at,
        })
    }

    /// How long from `now` (wall) and `monotonic` until a call is [due](Ledger::due), if one
    /// waits on a time.
    pub(super) fn next_due(
        &self,
        now: Timestamp,
        monotonic: Duration,
        timeout: Duration,
    ) -> Option<Duration> {
        self.calls
            .values()
            .filter_map(|c| match c.stage {
                Stage::Running { since } => Some((since + timeout).saturating_sub(monotonic)),
                Stage::Prompting | Stage::Hook => Some(now.until(&c.expires_at)),
                Stage::Elsewhere { retry } => Some(
                    retry
                        .saturating_sub(monotonic)
                        .min(now.until(&c.expires_at)),
                ),
                Stage::Recording { retry } => Some(retry.saturating_sub(monotonic)),
                Stage::InHand => None,
            })
            .min()
    }

    /// The handler of `ticket` timed out: a result for it is discarded and audited.
    pub(super) fn mark_late(&mut self, ticket: Ticket, subject: Subject) {
        self.late.insert(ticket, subject);
    }

    /// The call whose handler timed out under `ticket`, if it is one.
    pub(super) fn late(&self, ticket: Ticket) -> Option<&Subject> {
        self.late.get(&ticket)
    }

    /// The late result of `ticket` arrived; nothing more is expected for it.
    pub(super) fn forget_late(&mut self, ticket: Ticket) {
        self.late.remove(&ticket);
    }
}
