//! Running and answering a call: the durable `running` record, the handler, expiry, the one
//! `app.result` per envelope, recovery after a restart, and the audit (R-CAP-4..6).

use super::Answered;
use crate::capability::pipeline::{answer_with, Call, Duration, Stage, Subject};
use crate::capability::Out;
use crate::ids::shorten;
use crate::{
    Activity, Answer, AppResult, AuditKind, AuditRecord, CallRecord, CallState, CallSummary,
    Capabilities, CapabilityEffect, Decision, DecisionSource, ErrorCode, HandlerError, JsonObject,
    Party, ProtocolError, RunRequest, Status,
};

impl Capabilities {
    /// An `app.call` refused before the pipeline (malformed, wrong sender, a table limit),
    /// answered with `status`: audited with its code and field, floods merged (R-CAP-6).
    pub(crate) fn audit_refusal(
        &mut self,
        err: &ProtocolError,
        status: Status,
        out: &mut Vec<Out>,
    ) {
        let now = self.wall.now();
        for record in self.refusals.record(err, status, self.grantee.agent(), now) {
            out.push(Out::Effect(CapabilityEffect::Audit(record)));
        }
    }

    /// Writes out the merged refusals' counted records.
    pub(crate) fn flush_refusals(&mut self, out: &mut Vec<Out>) {
        let now = self.wall.now();
        for record in self.refusals.flush(self.grantee.agent(), now) {
            out.push(Out::Effect(CapabilityEffect::Audit(record)));
        }
    }

    /// R-CAP-5: the `running` record is written, and acknowledged, before the handler runs.
    pub(super) fn persist_running(&mut self, call: Call, out: &mut Vec<Out>) {
        let ticket = self.ticket();
        out.push(Out::Effect(CapabilityEffect::PersistCall {
            ack: Some(ticket),
            record: self.record(&call.subject, CallState::Running),
        }));
        self.wait(call, Stage::Persisting, ticket);
    }

    pub(super) fn run(&mut self, call: Call, monotonic: Duration, out: &mut Vec<Out>) {
        let Some(capability) = call.capability.clone() else {
            return;
        };
        let ticket = self.ticket();
        self.audit(
            &call.subject,
            AuditKind::Started,
            None,
            None,
            "handler started",
            out,
        );
        let activity = Activity {
            key: call.subject.key.clone(),
            agent: self.grantee.agent().cloned(),
            capability: capability.name().clone(),
            version: capability.version().clone(),
            risk: capability.risk(),
            reason: call.reason.clone(),
            at: self.wall.now(),
            allowed_by: call.allowed_by.unwrap_or(DecisionSource::Policy),
        };
        self.activity.push(activity.clone());
        out.push(Out::Effect(CapabilityEffect::Activity(activity)));
        out.push(Out::Effect(CapabilityEffect::Run(RunRequest {
            ticket,
            call: call.subject.key.clone(),
            capability: capability.name().clone(),
            version: capability.version().clone(),
            arguments: call.arguments.clone(),
            timeout: self.limits.handler_timeout,
        })));
        self.wait(call, Stage::Running { since: monotonic }, ticket);
    }

    pub(super) fn ran(
        &mut self,
        call: Call,
        outcome: Result<JsonObject, HandlerError>,
        out: &mut Vec<Out>,
    ) {
        let result = match outcome {
            Ok(value) => AppResult {
                call_id: call.subject.key.call_id.clone(),
                status: Status::Completed,
                result: Some(value),
                message: None,
                error: None,
            },
            Err(e) => answer_with(
                &call.subject,
                Status::Failed,
                &format!("the capability failed: {}", shorten(&e.message, 500)),
                Some(ErrorCode::HandlerFailed),
            ),
        };
        self.finish_durably(call, result, out);
    }

    /// Answers a call that ran (R-CAP-5): its final record is written with an acknowledgement,
    /// and the answer goes, with its audit, only once the store kept it; a failed write is
    /// tried again ([`Stage::Recording`]), so that an answer the agent got is never lost to a
    /// restart. Were the host to stop first, the record still says `running`, and the call is
    /// answered `outcome_unknown` after a restart, as one that had no answer.
    fn finish_durably(&mut self, mut call: Call, result: AppResult, out: &mut Vec<Out>) {
        let ticket = self.ticket();
        out.push(Out::Effect(CapabilityEffect::PersistCall {
            ack: Some(ticket),
            record: self.record(
                &call.subject,
                CallState::Finished {
                    result: result.clone(),
                },
            ),
        }));
        call.finished = Some(result);
        self.wait(call, Stage::Recording { retry: None }, ticket);
    }

    /// The store answered the write of the final record of `call`, which ran: kept, the call
    /// is answered; not kept, it is written again after [`RECORD_RETRY`](super::RECORD_RETRY),
    /// doubled after each failure up to [`RECORD_RETRY_MAX`](super::RECORD_RETRY_MAX).
    pub(super) fn recorded(
        &mut self,
        mut call: Call,
        answer: &Answer,
        monotonic: Duration,
        out: &mut Vec<Out>,
    ) {
        let Some(result) = call.finished.take() else {
            return;
        };
        if matches!(answer, Answer::Persisted) {
            return self.finish_quietly(call, result, out);
        }
        call.finished = Some(result);
        let wait = super::RECORD_RETRY
            .saturating_mul(1 << call.record_failures.min(8))
            .min(super::RECORD_RETRY_MAX);
        call.record_failures = call.record_failures.saturating_add(1);
        call.stage = Stage::Recording {
            retry: Some(monotonic + wait),
        };
        self.ledger.park(call);
    }

    /// Writes the final record of `call` again, after a failed write.
    pub(super) fn record_again(&mut self, call: Call, out: &mut Vec<Out>) {
        if let Some(result) = call.finished.clone() {
            self.finish_durably(call, result, out);
        }
    }

    pub(super) fn expire(&mut self, call: Call, out: &mut Vec<Out>) {
        if matches!(call.stage, Stage::Elsewhere { .. }) {
            // The record is the other process's, which answers with the real outcome: this
            // request gets `expired`, and nothing is written over that record (R-CAP-5).
            let result = answer_with(
                &call.subject,
                Status::Expired,
                &format!(
                    "the call expired at {} while another host process still had it; it is not run here (R-CAP-4, R-CAP-5)",
                    call.expires_at
                ),
                None,
            );
            for to in call.to {
                self.refuse(&call.subject, result.clone(), to, out);
            }
            return;
        }
        self.withdraw(&call, out);
        let message = match call.capped_from {
            Some(asked) => format!(
                "the call expired at {} before it was decided; it did not run: its expires_at \
                 {asked} is later than max_call_lifetime ({} s) after it was received (R-CAP-4)",
                call.expires_at,
                self.max_lifetime.as_secs()
            ),
            None => format!(
                "the call expired at {} before it was decided; it did not run (R-CAP-4)",
                call.expires_at
            ),
        };
        let result = answer_with(&call.subject, Status::Expired, &message, None);
        self.finish(
            call,
            result,
            Some((Decision::Expired, DecisionSource::Deadline)),
            out,
        );
    }

    pub(super) fn withdraw(&mut self, call: &Call, out: &mut Vec<Out>) {
        if matches!(call.stage, Stage::Prompting | Stage::Hook) {
            out.push(Out::Effect(CapabilityEffect::Withdraw(call.ticket)));
        }
    }

    /// Answers a call for good: its final record, its audit, one `app.result` to its sender and
    /// to every repeat that waited (R-CAP-4, R-CAP-5).
    pub(super) fn finish(
        &mut self,
        call: Call,
        result: AppResult,
        decision: Option<(Decision, DecisionSource)>,
        out: &mut Vec<Out>,
    ) {
        out.push(Out::Effect(CapabilityEffect::PersistCall {
            ack: None,
            record: self.record(
                &call.subject,
                CallState::Finished {
                    result: result.clone(),
                },
            ),
        }));
        if let Some((d, source)) = decision {
            self.audit(
                &call.subject,
                AuditKind::Decision,
                Some(d),
                Some(source),
                "decided",
                out,
            );
        }
        self.finish_quietly(call, result, out);
    }

    /// Answers a call whose final record is already in the store.
    pub(super) fn finish_quietly(&mut self, call: Call, result: AppResult, out: &mut Vec<Out>) {
        let mut audit = self.audit_record(&call.subject, AuditKind::Answered, None, None, "");
        audit.status = Some(result.status);
        audit.error = result.error.clone();
        audit.note = result
            .error
            .as_ref()
            .map_or_else(|| "answered".to_owned(), |e| e.code.to_string());
        out.push(Out::Effect(CapabilityEffect::Audit(audit)));
        for to in call.to {
            out.push(Out::Answer {
                result: result.clone(),
                to,
            });
        }
        let id = call.subject.key.call_id.clone();
        self.ledger.remember(
            id,
            Answered {
                capability: call.subject.capability,
                digest: call.subject.digest,
                result,
            },
            self.limits.max_remembered_answers,
        );
    }

    /// An answer that is not the call's own (a reused key, a repeat, the in-flight cap): audited,
    /// never recorded under the key.
    pub(super) fn refuse(
        &mut self,
        subject: &Subject,
        result: AppResult,
        to: Party,
        out: &mut Vec<Out>,
    ) {
        let mut audit = self.audit_record(subject, AuditKind::Answered, None, None, "");
        audit.status = Some(result.status);
        audit.error = result.error.clone();
        audit.note = result.error.as_ref().map_or_else(
            || "repeated call_id answered from its record".to_owned(),
            |e| e.code.to_string(),
        );
        out.push(Out::Effect(CapabilityEffect::Audit(audit)));
        out.push(Out::Answer { result, to });
    }

    /// R-CAP-5: a record that never ran is `cancelled`; one that was running is never run again
    /// and is `failed` with `outcome_unknown`. Returns the answer.
    pub(super) fn recover(&self, mut record: CallRecord, out: &mut Vec<Out>) -> AppResult {
        let subject = Subject {
            key: record.key.clone(),
            capability: record.capability.clone(),
            digest: record.arguments_digest.clone(),
            version: record.version.clone(),
            risk: record.risk,
            received_at: record.received_at,
        };
        let result = match &record.state {
            CallState::Finished { result } => return result.clone(),
            CallState::Running => answer_with(
                &subject,
                Status::Failed,
                "the host stopped while the call was running; it is not run again and its outcome is unknown (R-CAP-5)",
                Some(ErrorCode::OutcomeUnknown),
            ),
            _ => answer_with(
                &subject,
                Status::Cancelled,
                "the host stopped before the call was decided; it did not run (R-CAP-5)",
                None,
            ),
        };
        record.state = CallState::Finished {
            result: result.clone(),
        };
        record.updated_at = self.wall.now();
        out.push(Out::Effect(CapabilityEffect::PersistCall {
            ack: None,
            record,
        }));
        let mut audit = self.audit_record(
            &subject,
            AuditKind::Recovered,
            None,
            Some(DecisionSource::Recovery),
            "finished after a restart",
        );
        audit.status = Some(result.status);
        out.push(Out::Effect(CapabilityEffect::Audit(audit)));
        result
    }

    pub(super) fn too_many_in_flight(&self, subject: &Subject) -> AppResult {
        let max = self.limits.max_calls_in_flight;
        let mut result = answer_with(
            subject,
            Status::Failed,
            &format!("{max} calls of this session are unanswered; the limit is {max}; wait for answers and retry"),
            Some(ErrorCode::TooManyCalls),
        );
        if let Some(error) = result.error.as_mut() {
            error.limit = u64::try_from(max).ok();
        }
        result
    }

    pub(super) fn summary(&self, call: &Call) -> Option<CallSummary> {
        let capability = call.capability.as_ref()?;
        Some(CallSummary {
            key: call.subject.key.clone(),
            agent: self.grantee.agent().cloned(),
            capability: capability.name().clone(),
            version: capability.version().clone(),
            risk: capability.risk(),
            arguments: call.arguments.clone(),
        })
    }

    /// Audits a decision; the first that allows the call is what it ran under (its activity).
    pub(super) fn decided(
        &self,
        call: &mut Call,
        decision: Decision,
        source: DecisionSource,
        out: &mut Vec<Out>,
    ) {
        if matches!(decision, Decision::Allowed | Decision::AllowedAlways) {
            call.allowed_by.get_or_insert(source);
        }
        self.audit(
            &call.subject,
            AuditKind::Decision,
            Some(decision),
            Some(source),
            "decided",
            out,
        );
    }

    pub(super) fn record(&self, subject: &Subject, state: CallState) -> CallRecord {
        CallRecord {
            key: subject.key.clone(),
            epoch: self.announcements.epoch(),
            agent: self.grantee.agent().cloned(),
            capability: subject.capability.clone(),
            version: subject.version.clone(),
            risk: subject.risk,
            arguments_digest: subject.digest.clone(),
            received_at: subject.received_at,
            updated_at: self.wall.now(),
            state,
            owner: Some(self.owner()),
        }
    }

    pub(super) fn audit_record(
        &self,
        subject: &Subject,
        kind: AuditKind,
        decision: Option<Decision>,
        source: Option<DecisionSource>,
        note: &str,
    ) -> AuditRecord {
        AuditRecord {
            at: self.wall.now(),
            kind,
            call: subject.key.clone(),
            agent: self.grantee.agent().cloned(),
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

    pub(super) fn audit(
        &self,
        subject: &Subject,
        kind: AuditKind,
        decision: Option<Decision>,
        source: Option<DecisionSource>,
        note: &str,
        out: &mut Vec<Out>,
    ) {
        let record = self.audit_record(subject, kind, decision, source, note);
        out.push(Out::Effect(CapabilityEffect::Audit(record)));
    }
}
