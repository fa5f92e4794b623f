//! The calls of one session that are not answered yet, and those answered lately.

use std::collections::{BTreeMap, VecDeque};

use crate::capability::effect::Ticket;
use crate::ids::CallId;

use super::{Answered, Call, Stage, Subject};

/// One session's calls by key: those waiting (each under the ticket of what it waits for),
/// those answered lately (for repeats of their key), and the tickets of handlers that timed
/// out (a result for them is discarded and audited).
///
/// Invariants: each waiting call is under its own key; a ticket names at most one waiting
/// call, the one whose `ticket` it is, and tickets are never reused; `answered` holds at most
/// the bound [`Ledger::remember`] was last given, dropping the oldest first.
#[derive(Default)]
pub(super) struct Ledger {
    calls: BTreeMap<CallId, Call>,
    tickets: BTreeMap<Ticket, CallId>,
    next_ticket: u64,
    answered: BTreeMap<CallId, Answered>,
    answered_order: VecDeque<CallId>,
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

    /// Takes the call `ticket` names out of the ledger, with its ticket.
    pub(super) fn take_by_ticket(&mut self, ticket: Ticket) -> Option<Call> {
        let id = self.tickets.remove(&ticket)?;
        self.calls.remove(&id)
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

    /// The waiting calls.
    pub(super) fn waiting(&self) -> impl Iterator<Item = &Call> {
        self.calls.values()
    }

    /// Unanswered calls, counting every repeat that waits on one.
    pub(super) fn in_flight(&self) -> usize {
        self.calls.values().map(|c| c.to.len()).sum()
    }

    /// The answer kept for key `id`, if it was answered lately.
    pub(super) fn answered(&self, id: &CallId) -> Option<&Answered> {
        self.answered.get(id)
    }

    /// Keeps the answer of key `id`, and at most `max` answers in all.
    pub(super) fn remember(&mut self, id: CallId, answered: Answered, max: usize) {
        self.answered.insert(id.clone(), answered);
        self.answered_order.push_back(id);
        while self.answered_order.len() > max {
            if let Some(old) = self.answered_order.pop_front() {
                self.answered.remove(&old);
            }
        }
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
