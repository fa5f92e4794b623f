//! What a session's calls leave behind: their stored records and audit records, stamped by the
//! wall clock; their answers, the latest kept for repeats of their key; the calls that ran
//! (original §5.3); the calls refused before the pipeline, merged per kind (R-CAP-4..6).

use std::collections::{BTreeMap, VecDeque};

use super::answers::recovered;
use super::call::{Answered, Call, Subject};
use super::context::Context;
use crate::capability::activity::{Activity, ActivityLog};
use crate::capability::effect::{CapabilityEffect, WallClock};
use crate::capability::port::{reported, StoreFailure};
use crate::capability::refusals::Refusals;
use crate::capability::registry::Capability;
use crate::capability::store::{
    AuditKind, AuditRecord, CallRecord, CallState, Decision, DecisionSource,
};
use crate::capability::Out;
use crate::error::ProtocolError;
use crate::ids::{CallId, Status};
use crate::message::{AppResult, Party, Timestamp};

/// The wall clock every record is stamped with, the answers given lately, the activity list
/// and the merged refusals; every answer leaves the pipeline here.
///
/// Invariants: every answer sent is audited (R-CAP-6); a call's own answer is its final record,
/// written before it is sent ([`Recorder::finish`]) or kept by the store already
/// ([`Recorder::finish_quietly`]), and is kept for repeats of its key, at most `max_answers`
/// of them, the oldest dropped first; an answer that is not the call's own
/// ([`Recorder::refuse`]) is never recorded under its key (R-CAP-5). Every record carries the
/// wall clock's time when it was made and the session's vouched agent, a stored record also
/// its owner and epoch (R-SES-1); an audit record holds the digest of a call's arguments, never
/// the arguments. The activity list holds at most [`crate::MAX_ACTIVITY`] entries, oldest
/// first.
pub(super) struct Recorder {
    wall: Box<dyn WallClock>,
    /// The answers given lately, by key, and the keys oldest first.
    answers: BTreeMap<CallId, Answered>,
    answer_order: VecDeque<CallId>,
    max_answers: usize,
    /// The calls that ran (original §5.3).
    activity: ActivityLog,
    /// Calls refused before the pipeline, merged per kind for the audit (R-CAP-6).
    refusals: Refusals,
}

impl Recorder {
    /// Nothing recorded yet; records are stamped by `wall`, and at most `max_answers` answers
    /// are kept for repeats.
    pub(super) fn new(wall: Box<dyn WallClock>, max_answers: usize) -> Self {
        Self {
            wall,
            answers: BTreeMap::new(),
            answer_order: VecDeque::new(),
            max_answers,
            activity: ActivityLog::default(),
            refusals: Refusals::default(),
        }
    }

    /// The answer given lately under key `id`, if one was.
    pub(super) fn answer_of(&self, id: &CallId) -> Option<&Answered> {
        self.answers.get(id)
    }

    /// The wall clock's time now.
    pub(super) fn now(&self) -> Timestamp {
        self.wall.now()
    }

    /// The calls that ran, oldest first.
    pub(super) fn activity(&self) -> impl Iterator<Item = &Activity> + '_ {
        self.activity.entries()
    }

    /// Writes the record of the call of `subject` in `state` (R-CAP-5); `Ok` once it is
    /// durable.
    pub(super) fn write(
        &self,
        subject: &Subject,
        state: CallState,
        cx: &Context<'_>,
    ) -> Result<(), StoreFailure> {
        cx.store().put_call(&self.record(subject, state, cx))
    }

    /// The stored record of the call of `subject` in `state` (R-CAP-5).
    fn record(&self, subject: &Subject, state: CallState, cx: &Context<'_>) -> CallRecord {
        CallRecord {
            key: subject.key.clone(),
            epoch: cx.epoch(),
            agent: cx.agent().cloned(),
            capability: subject.capability.clone(),
            version: subject.version.clone(),
            risk: subject.risk,
            arguments_digest: subject.digest.clone(),
            received_at: subject.received_at,
            updated_at: self.wall.now(),
            state,
            owner: Some(cx.owner()),
        }
    }

    /// An audit record of the call of `subject`: what happened (`kind`), the decision and who
    /// made it, if any, and a `note` (R-CAP-6).
    fn audit_record(
        &self,
        subject: &Subject,
        kind: AuditKind,
        decision: Option<Decision>,
        source: Option<DecisionSource>,
        note: &str,
        cx: &Context<'_>,
    ) -> AuditRecord {
        AuditRecord {
            at: self.wall.now(),
            kind,
            call: subject.key.clone(),
            agent: cx.agent().cloned(),
            capability: subject.capability.clone(),
            version: subject.version.clone(),
            risk: subject.risk,
            arguments_digest: subject.digest.clone(),
            decision,
            source,
            status: None,
            note: note.to_owned(),
            error: None,
            count: None,
        }
    }

    /// Audits the call of `subject`: [`Recorder::audit_record`] with the decision made, if any.
    pub(super) fn audit(
        &self,
        subject: &Subject,
        kind: AuditKind,
        decided: Option<(Decision, DecisionSource)>,
        note: &str,
        cx: &Context<'_>,
    ) {
        let (decision, source) = decided.unzip();
        let record = self.audit_record(subject, kind, decision, source, note, cx);
        reported(cx.store().append_audit(&record));
    }

    /// Audits a decision; the first that allows the call is what it ran under (its activity).
    pub(super) fn decided(
        &self,
        call: &mut Call,
        decision: Decision,
        source: DecisionSource,
        cx: &Context<'_>,
    ) {
        if matches!(decision, Decision::Allowed | Decision::AllowedAlways) {
            call.allowed_by.get_or_insert(source);
        }
        self.audit_decision(&call.subject, (decision, source), cx);
    }

    /// Audits the decision `decided` about the call of `subject`.
    fn audit_decision(
        &self,
        subject: &Subject,
        decided: (Decision, DecisionSource),
        cx: &Context<'_>,
    ) {
        let kind = AuditKind::Decision;
        self.audit(subject, kind, Some(decided), "decided", cx);
    }

    /// Audits the answer `result` to the call of `subject`: its status, and its error code as
    /// the note, else `plain`.
    fn audit_answer(&self, subject: &Subject, result: &AppResult, plain: &str, cx: &Context<'_>) {
        let mut audit = self.audit_record(subject, AuditKind::Answered, None, None, "", cx);
        audit.status = Some(result.status);
        audit.error = result.error.clone();
        audit.note = result
            .error
            .as_ref()
            .map_or_else(|| plain.to_owned(), |e| e.code.to_string());
        reported(cx.store().append_audit(&audit));
    }

    /// Answers a call for good: its final record (the answer goes whether or not the store
    /// kept it: the call did not run), the decision made, if any, its audit, one `app.result`
    /// to its sender and to every repeat that waited (R-CAP-4, R-CAP-5).
    pub(super) fn finish(
        &mut self,
        call: Call,
        result: AppResult,
        decided: Option<(Decision, DecisionSource)>,
        cx: &Context<'_>,
        out: &mut Vec<Out>,
    ) {
        let state = CallState::Finished {
            result: result.clone(),
        };
        reported(self.write(&call.subject, state, cx));
        if let Some(decided) = decided {
            self.audit_decision(&call.subject, decided, cx);
        }
        self.finish_quietly(call, result, cx, out);
    }

    /// Answers a call whose final record is already in the store.
    pub(super) fn finish_quietly(
        &mut self,
        call: Call,
        result: AppResult,
        cx: &Context<'_>,
        out: &mut Vec<Out>,
    ) {
        self.audit_answer(&call.subject, &result, "answered", cx);
        for to in call.to {
            out.push(Out::Answer {
                result: result.clone(),
                to,
            });
        }
        let id = call.subject.key.call_id.clone();
        let answered = Answered {
            capability: call.subject.capability,
            digest: call.subject.digest,
            result,
        };
        self.answers.insert(id.clone(), answered);
        self.answer_order.push_back(id);
        while self.answer_order.len() > self.max_answers {
            if let Some(old) = self.answer_order.pop_front() {
                self.answers.remove(&old);
            }
        }
    }

    /// An answer that is not the call's own (a reused key, a repeat, the in-flight cap): audited,
    /// never recorded under the key.
    pub(super) fn refuse(
        &self,
        subject: &Subject,
        result: AppResult,
        to: Party,
        cx: &Context<'_>,
        out: &mut Vec<Out>,
    ) {
        let plain = "repeated call_id answered from its record";
        self.audit_answer(subject, &result, plain, cx);
        out.push(Out::Answer { result, to });
    }

    /// The handler of `call`, admitted as `capability`, starts: audited, and an activity kept
    /// and reported (original §5.3).
    pub(super) fn started(
        &mut self,
        call: &Call,
        capability: &Capability,
        cx: &Context<'_>,
        out: &mut Vec<Out>,
    ) {
        let note = "handler started";
        self.audit(&call.subject, AuditKind::Started, None, note, cx);
        let activity = Activity {
            key: call.subject.key.clone(),
            agent: cx.agent().cloned(),
            capability: capability.name().clone(),
            version: capability.version().clone(),
            risk: capability.risk(),
            reason: call.reason.clone(),
            at: self.wall.now(),
            allowed_by: call.allowed_by.unwrap_or(DecisionSource::Policy),
        };
        self.activity.push(activity.clone());
        out.push(Out::Effect(CapabilityEffect::Activity(activity)));
    }

    /// R-CAP-5: finishes `record`, found unfinished after a restart: a record that never ran is
    /// `cancelled`; one that was running is never run again and is `failed` with
    /// `outcome_unknown`. Written and audited; returns the answer (a finished record's own).
    pub(super) fn recover(&self, mut record: CallRecord, cx: &Context<'_>) -> AppResult {
        let subject = Subject::of_record(&record);
        let result = match &record.state {
            CallState::Finished { result } => return result.clone(),
            state => recovered(&subject, matches!(state, CallState::Running)),
        };
        record.state = CallState::Finished {
            result: result.clone(),
        };
        record.updated_at = self.wall.now();
        reported(cx.store().put_call(&record));
        let mut audit = self.audit_record(
            &subject,
            AuditKind::Recovered,
            None,
            Some(DecisionSource::Recovery),
            "finished after a restart",
            cx,
        );
        audit.status = Some(result.status);
        reported(cx.store().append_audit(&audit));
        result
    }

    /// An `app.call` refused before the pipeline (malformed, wrong sender, a table limit),
    /// answered with `status`: audited with its code and field, floods merged (R-CAP-6).
    pub(super) fn refused(&mut self, err: &ProtocolError, status: Status, cx: &Context<'_>) {
        let now = self.wall.now();
        for record in self.refusals.record(err, status, cx.agent(), now) {
            reported(cx.store().append_audit(&record));
        }
    }

    /// Writes out the merged refusals' counted records.
    pub(super) fn flush_refusals(&mut self, cx: &Context<'_>) {
        let now = self.wall.now();
        for record in self.refusals.flush(cx.agent(), now) {
            reported(cx.store().append_audit(&record));
        }
    }
}
