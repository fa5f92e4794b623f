//! The `app.call` pipeline of one session (R-SEC-5, R-CAP-2..6): call key first, then known and
//! visible, not expired, valid arguments, consent by risk, a durable `running` record, run, and
//! exactly one `app.result` per `app.call` envelope.

use std::time::Duration;

use super::answers::{
    ended, expired, expired_elsewhere, not_recorded, ran, reused, timed_out, too_many_in_flight,
    unavailable, wrong,
};
use super::call::{Call, Stage, Subject};
use super::context::Context;
use super::decide::{consent, declined, hook_refused, lookup, refusal, Consent, Lookup};
use super::ledger::Ledger;
use super::recorder::Recorder;
use crate::capability::activity::Activity;
use crate::capability::digest::ArgsDigest;
use crate::capability::effect::{
    Answer, CapabilityEffect, CapabilityLimits, ConsentAnswer, ConsentRequest, HandlerError,
    HookRequest, RunRequest, Ticket, WallClock,
};
use crate::capability::port::{reported, KeyRecord};
use crate::capability::store::{
    AuditKind, CallKey, CallRecord, CallState, Decision, DecisionSource, GrantRecord,
};
use crate::capability::Out;
use crate::error::{ProtocolError, UsageError};
use crate::ids::{ConversationId, Risk, Status};
use crate::json::JsonObject;
use crate::message::{AppCall, AppResult, Envelope};

/// How long a call whose key another live host process has waits before it looks again.
const ELSEWHERE_RETRY: Duration = Duration::from_millis(200);

/// How long a call that ran waits before its final record is written again after its first
/// failed write (a locked database, a full disk), doubled after each further one up to
/// [`RECORD_RETRY_MAX`]: its answer goes only once the record is kept, and a store that stays
/// locked is not asked, and waited for, many times a second.
const RECORD_RETRY: Duration = Duration::from_millis(500);

/// The longest wait between two writes of a final record.
const RECORD_RETRY_MAX: Duration = Duration::from_secs(30);

/// A refusal by the policy, never reported as the user's decision.
const POLICY_DENIED: Option<(Decision, DecisionSource)> =
    Some((Decision::Denied, DecisionSource::Policy));

/// The `app.call` pipeline of one session: its calls and the steps that move them. Each call
/// waits in the [`Ledger`] for one answer of the platform (consent, the hook, its run), or for
/// its own time; the store is called synchronously where a step needs it; the [`Recorder`]
/// records every step and gives every answer.
///
/// Invariants: at most [`CapabilityLimits::max_calls_in_flight`] calls are unanswered, counting
/// every repeat that waits on one, and a call that would wait for consent past
/// [`CapabilityLimits::max_waiting_consent`] is refused; `Run` is asked only once the store
/// kept the call's `running` record, and only before its deadline (R-CAP-4, R-CAP-5); a call
/// that ran is answered only once its final record is kept; each call is answered once, to its
/// sender and to every repeat of its key that waited.
pub(super) struct Pipeline {
    /// The calls not answered yet.
    ledger: Ledger,
    /// Their records and audit, and the answers given lately.
    recorder: Recorder,
    limits: CapabilityLimits,
    /// [`crate::Limits::max_call_lifetime`].
    max_lifetime: Duration,
}

impl Pipeline {
    /// No calls yet; each lives at most `max_lifetime`, within `limits`, stamped by `wall`.
    pub(super) fn new(
        wall: Box<dyn WallClock>,
        limits: CapabilityLimits,
        max_lifetime: Duration,
    ) -> Self {
        Self {
            ledger: Ledger::default(),
            recorder: Recorder::new(wall, limits.max_remembered_answers),
            limits,
            max_lifetime,
        }
    }

    /// How many calls are unanswered, and how many of them wait for a decision.
    pub(super) fn pending(&self) -> (usize, usize) {
        self.ledger.pending()
    }

    /// The calls that ran, oldest first.
    pub(super) fn activity(&self) -> impl Iterator<Item = &Activity> + '_ {
        self.recorder.activity()
    }

    /// An `app.call` refused before the pipeline, answered with `status` (R-CAP-6).
    pub(super) fn audit_refusal(&mut self, err: &ProtocolError, status: Status, cx: &Context<'_>) {
        self.recorder.refused(err, status, cx);
    }

    /// Writes out the merged refusals' counted records.
    pub(super) fn flush_refusals(&mut self, cx: &Context<'_>) {
        self.recorder.flush_refusals(cx);
    }

    /// Finishes `record`, unfinished when the session started (R-CAP-5).
    pub(super) fn recover(&self, record: CallRecord, cx: &Context<'_>) {
        self.recorder.recover(record, cx);
    }

    /// An accepted `app.call` of the established conversation, at `monotonic`.
    pub(super) fn call(
        &mut self,
        env: Envelope<AppCall>,
        monotonic: Duration,
        cx: &Context<'_>,
        out: &mut Vec<Out>,
    ) {
        let Envelope {
            payload, sender, ..
        } = env;
        let AppCall {
            call_id,
            capability,
            reason,
            expires_at,
            arguments,
        } = payload;
        let conversation = cx
            .conversation()
            .cloned()
            .unwrap_or_else(|| ConversationId::known("unknown"));
        let subject = Subject {
            key: CallKey {
                conversation_id: conversation,
                call_id: call_id.clone(),
            },
            capability,
            digest: ArgsDigest::of(&arguments),
            version: None,
            risk: None,
            received_at: self.recorder.now(),
        };
        let kind = AuditKind::Received;
        self.recorder
            .audit(&subject, kind, None, "app.call received", cx);
        let max = self.limits.max_calls_in_flight;
        // 1. The call key, before anything else (R-CAP-5).
        if let Some(first) = self.ledger.get(&call_id) {
            if let Some(reused) = reused(&first.subject.capability, &first.subject.digest, &subject)
            {
                return self.recorder.refuse(&subject, reused, sender, cx, out);
            }
            if self.ledger.in_flight() >= max {
                let answer = too_many_in_flight(&subject, max);
                return self.recorder.refuse(&subject, answer, sender, cx, out);
            }
            if let Some(first) = self.ledger.get_mut(&call_id) {
                first.to.push(sender);
            }
            return;
        }
        if let Some(done) = self.recorder.answer_of(&call_id) {
            let result = match reused(&done.capability, &done.digest, &subject) {
                Some(reused) => reused,
                None => done.result.clone(),
            };
            return self.recorder.refuse(&subject, result, sender, cx, out);
        }
        if self.ledger.in_flight() >= max {
            let answer = too_many_in_flight(&subject, max);
            return self.recorder.refuse(&subject, answer, sender, cx, out);
        }
        let lifetime = self.max_lifetime;
        let call = Call::new(subject, reason, expires_at, lifetime, arguments, sender);
        self.look_up(call, monotonic, cx, out);
    }

    /// The platform answers `ticket`.
    pub(super) fn answered(
        &mut self,
        (ticket, answer): (Ticket, Answer),
        monotonic: Duration,
        cx: &mut Context<'_>,
        out: &mut Vec<Out>,
    ) -> Result<(), UsageError> {
        if let Some(subject) = self.ledger.late(ticket) {
            if !matches!(answer, Answer::Ran(_)) {
                return Err(wrong(ticket, "a handler result", &answer));
            }
            let subject = subject.clone();
            self.ledger.forget_late(ticket);
            let note = "a handler result arrived after the timeout and was discarded";
            let kind = AuditKind::LateResultDiscarded;
            self.recorder.audit(&subject, kind, None, note, cx);
            return Ok(());
        }
        // An unknown ticket is a withdrawn prompt or hook answered anyway: ignored.
        let Some(stage) = self.ledger.stage_of(ticket) else {
            return Ok(());
        };
        if !stage.fits(&answer) {
            return Err(wrong(ticket, stage.expects(), &answer));
        }
        let Some(mut call) = self.ledger.take_by_ticket(ticket) else {
            return Ok(());
        };
        if stage.deciding() && self.recorder.now() >= call.expires_at {
            self.expire(call, cx, out);
            return Ok(());
        }
        match answer {
            Answer::Consent(consent) => self.consented(call, consent, monotonic, cx, out),
            Answer::Hook(hook) => match hook_refused(&call.subject, hook) {
                Some((result, decided)) => {
                    self.recorder.finish(call, result, Some(decided), cx, out);
                }
                None => {
                    let source = DecisionSource::Hook;
                    self.recorder
                        .decided(&mut call, Decision::Allowed, source, cx);
                    self.persist_running(call, monotonic, cx, out);
                }
            },
            Answer::Ran(outcome) => self.ran(call, outcome, monotonic, cx, out),
        }
        Ok(())
    }

    /// Expires calls whose deadline passed while they waited for a decision (withdrawing their
    /// prompt), and fails handlers that overran their timeout.
    pub(super) fn poll(&mut self, monotonic: Duration, cx: &Context<'_>, out: &mut Vec<Out>) {
        let now = self.recorder.now();
        let timeout = self.limits.handler_timeout;
        for id in self.ledger.due(now, monotonic, timeout) {
            let Some(call) = self.ledger.take(&id) else {
                continue;
            };
            if matches!(call.stage, Stage::Recording { .. }) {
                self.record_again(call, monotonic, cx, out);
                continue;
            }
            if matches!(call.stage, Stage::Elsewhere { .. }) && now < call.expires_at {
                // Look again: finished there, or its writer gone, or still running.
                self.look_up(call, monotonic, cx, out);
                continue;
            }
            if matches!(call.stage, Stage::Running { .. }) {
                self.ledger.mark_late(call.ticket, call.subject.clone());
                let result = timed_out(&call.subject, timeout);
                self.recorder.finish(call, result, None, cx, out);
            } else {
                self.expire(call, cx, out);
            }
        }
    }

    /// How long until `poll` has something to do, if anything waits on a deadline.
    pub(super) fn next_wakeup(&self, monotonic: Duration) -> Option<Duration> {
        let now = self.recorder.now();
        self.ledger
            .next_due(now, monotonic, self.limits.handler_timeout)
    }

    /// The session ends: every call still waiting for a decision is cancelled and its prompt
    /// withdrawn. Running calls finish on their own.
    pub(super) fn end(&mut self, cx: &Context<'_>, out: &mut Vec<Out>) {
        self.recorder.flush_refusals(cx);
        let waiting = self.ledger.keys_where(|c| c.stage.deciding());
        // A call another process has is that process's to answer: dropped, nothing written.
        self.ledger
            .drop_where(|c| matches!(c.stage, Stage::Elsewhere { .. }));
        for id in waiting {
            let Some(call) = self.ledger.take(&id) else {
                continue;
            };
            call.withdraw(out);
            let result = ended(&call.subject);
            let decided = Some((Decision::Cancelled, DecisionSource::Policy));
            self.recorder.finish(call, result, decided, cx, out);
        }
    }

    // ---- deciding (R-SEC-5, R-CAP-2..5) ----

    /// Looks the call's key up in the store, before anything else (R-CAP-5). A read that
    /// fails finds no record: the call goes on, and runs only if its `running` record is kept
    /// (the store module's table).
    fn look_up(&mut self, call: Call, monotonic: Duration, cx: &Context<'_>, out: &mut Vec<Out>) {
        let record = match cx.store().call(&cx.owner(), &call.subject.key) {
            Ok(Some(KeyRecord::InFlightElsewhere(record)))
                if record.owner.as_ref() == Some(&cx.owner()) =>
            {
                // R-CAP-5: one call, one answer: wait for the other process's outcome.
                let mut call = call;
                call.stage = Stage::Elsewhere {
                    retry: monotonic + ELSEWHERE_RETRY,
                };
                return self.ledger.park(call);
            }
            Ok(Some(KeyRecord::InFlightElsewhere(record) | KeyRecord::Kept(record))) => {
                Some(record)
            }
            Ok(None) | Err(_) => None,
        };
        self.looked_up(call, record, monotonic, cx, out);
    }

    /// What the store holds for the call's key: its `record`, if it has one.
    fn looked_up(
        &mut self,
        call: Call,
        record: Option<Box<CallRecord>>,
        monotonic: Duration,
        cx: &Context<'_>,
        out: &mut Vec<Out>,
    ) {
        match lookup(&call.subject, record, &cx.owner(), cx.agent().is_some()) {
            Lookup::New => self.admit(call, monotonic, cx, out),
            Lookup::Refused(result) => {
                for to in call.to {
                    self.recorder
                        .refuse(&call.subject, result.clone(), to, cx, out);
                }
            }
            Lookup::Recorded(record) => {
                let result = match record.state {
                    CallState::Finished { result } => result,
                    // An unfinished record of a host that is gone (R-CAP-5).
                    _ => self.recorder.recover(*record, cx),
                };
                self.recorder.finish_quietly(call, result, cx, out);
            }
        }
    }

    /// Known and visible, not expired, valid arguments, then consent by risk.
    fn admit(&mut self, mut call: Call, monotonic: Duration, cx: &Context<'_>, out: &mut Vec<Out>) {
        let Some(capability) = cx.visible(&call.subject.capability).cloned() else {
            // R-INV-4: unknown and hidden get the same answer; once offered, `revoked`.
            let result = unavailable(&call.subject, cx.was_offered(&call.subject.capability));
            return self.recorder.finish(call, result, POLICY_DENIED, cx, out);
        };
        call.subject.version = Some(capability.version().clone());
        call.subject.risk = Some(capability.risk());
        if self.recorder.now() >= call.expires_at {
            return self.expire(call, cx, out);
        }
        let (waiting, max) = (self.ledger.pending().1, self.limits.max_waiting_consent);
        if let Some(result) = refusal(&call.subject, &capability, &call.arguments, waiting, max) {
            return self.recorder.finish(call, result, POLICY_DENIED, cx, out);
        }
        call.capability = Some(capability.clone());
        reported(self.recorder.write(&call.subject, CallState::Received, cx));
        let remembered = match consent(&capability, cx.grantee()) {
            Consent::Policy => {
                let source = DecisionSource::Policy;
                self.recorder
                    .decided(&mut call, Decision::Allowed, source, cx);
                return self.persist_running(call, monotonic, cx, out);
            }
            // Asked at every decision (R-CAP-2); a read that fails finds no grant: the user
            // is asked.
            Consent::CheckGrant(key) => cx.store().grant(&key).unwrap_or(false),
            Consent::Remembered => true,
            Consent::Prompt => false,
        };
        if !remembered {
            return self.prompt(call, cx, out);
        }
        let source = DecisionSource::RememberedGrant;
        self.recorder
            .decided(&mut call, Decision::Allowed, source, cx);
        self.allowed(call, monotonic, cx, out);
    }

    /// Asks the user, the call's `awaiting_consent` record written first.
    fn prompt(&mut self, call: Call, cx: &Context<'_>, out: &mut Vec<Out>) {
        let Some(summary) = call.summary(cx.agent()) else {
            return;
        };
        let ticket = self.ledger.ticket();
        let awaiting = CallState::AwaitingConsent;
        reported(self.recorder.write(&call.subject, awaiting, cx));
        out.push(Out::Effect(CapabilityEffect::Prompt(ConsentRequest {
            ticket,
            may_remember: summary.risk == Risk::UserConfirmation,
            call: summary,
            reason: call.reason.clone(),
            expires_at: call.expires_at,
        })));
        self.ledger.wait(call, Stage::Prompting, ticket);
    }

    /// The user answered the prompt with `consent`.
    fn consented(
        &mut self,
        mut call: Call,
        consent: ConsentAnswer,
        monotonic: Duration,
        cx: &mut Context<'_>,
        out: &mut Vec<Out>,
    ) {
        let Some(risk) = call.subject.risk else {
            return;
        };
        if let Some((result, decided)) = declined(&call.subject, consent) {
            return self.recorder.finish(call, result, Some(decided), cx, out);
        }
        let always = consent == ConsentAnswer::AllowAlways && risk.may_be_remembered();
        let decision = if always {
            Decision::AllowedAlways
        } else {
            Decision::Allowed
        };
        let source = DecisionSource::Prompt;
        self.recorder.decided(&mut call, decision, source, cx);
        if always {
            self.remember(&call, cx);
        }
        self.allowed(call, monotonic, cx, out);
    }

    /// After the user's or a remembered grant: the permission check when the risk needs one
    /// (R-CAP-3) or the capability decides with a dialog of its own, else the run.
    fn allowed(&mut self, call: Call, monotonic: Duration, cx: &Context<'_>, out: &mut Vec<Out>) {
        let (Some(risk), Some(capability)) = (call.subject.risk, call.capability.as_ref()) else {
            return;
        };
        if risk.may_be_remembered() && !capability.asks_hook() {
            return self.persist_running(call, monotonic, cx, out);
        }
        let Some(summary) = call.summary(cx.agent()) else {
            return;
        };
        let ticket = self.ledger.ticket();
        out.push(Out::Effect(CapabilityEffect::Hook(HookRequest {
            ticket,
            expires_at: call.expires_at,
            call: summary,
        })));
        self.ledger.wait(call, Stage::Hook, ticket);
    }

    /// R-CAP-2, R-SES-1: "always" for `call`: a vouched identity's grant goes to the store;
    /// without one, it lasts the conversation.
    fn remember(&self, call: &Call, cx: &mut Context<'_>) {
        let Some(version) = call.subject.version.clone() else {
            return;
        };
        let name = call.subject.capability.clone();
        let note = match cx.grantee_mut().remember(name, version) {
            Some(key) => {
                reported(cx.store().put_grant(&GrantRecord {
                    key,
                    granted_at: self.recorder.now(),
                    conversation_id: call.subject.key.conversation_id.clone(),
                    call_id: call.subject.key.call_id.clone(),
                }));
                if cx.agent().is_some() {
                    "remembered for this agent identity"
                } else {
                    "remembered for this conversation of this host process only: no vouched agent identity"
                }
            }
            None => "remembered for this conversation only: no vouched agent identity",
        };
        let decided = Some((Decision::AllowedAlways, DecisionSource::Prompt));
        let kind = AuditKind::GrantRemembered;
        self.recorder.audit(&call.subject, kind, decided, note, cx);
    }

    // ---- running and answering (R-CAP-4..6) ----

    /// R-CAP-5: the `running` record is written, and kept, before the handler runs (at
    /// `monotonic`), and only before the call's deadline (R-CAP-4); a write that fails answers
    /// `failed` `not_recorded`, and nothing runs.
    fn persist_running(
        &mut self,
        call: Call,
        monotonic: Duration,
        cx: &Context<'_>,
        out: &mut Vec<Out>,
    ) {
        if let Err(failure) = self.recorder.write(&call.subject, CallState::Running, cx) {
            let result = not_recorded(&call.subject, &failure.reason());
            return self.recorder.finish(call, result, None, cx, out);
        }
        if self.recorder.now() >= call.expires_at {
            return self.expire(call, cx, out);
        }
        self.run(call, monotonic, cx, out);
    }

    /// The `running` record is kept: the handler runs (at `monotonic`).
    fn run(&mut self, call: Call, monotonic: Duration, cx: &Context<'_>, out: &mut Vec<Out>) {
        let Some(capability) = call.capability.clone() else {
            return;
        };
        let ticket = self.ledger.ticket();
        self.recorder.started(&call, &capability, cx, out);
        out.push(Out::Effect(CapabilityEffect::Run(RunRequest {
            ticket,
            call: call.subject.key.clone(),
            capability: capability.name().clone(),
            version: capability.version().clone(),
            arguments: call.arguments.clone(),
            timeout: self.limits.handler_timeout,
        })));
        let stage = Stage::Running { since: monotonic };
        self.ledger.wait(call, stage, ticket);
    }

    /// The handler gave `outcome` (at `monotonic`).
    fn ran(
        &mut self,
        call: Call,
        outcome: Result<JsonObject, HandlerError>,
        monotonic: Duration,
        cx: &Context<'_>,
        out: &mut Vec<Out>,
    ) {
        let result = ran(&call.subject, outcome);
        self.finish_durably(call, result, monotonic, cx, out);
    }

    /// Answers a call that ran (R-CAP-5): its final record is written, and the answer goes,
    /// with its audit, only once the store kept it; a write that fails is tried again after
    /// [`RECORD_RETRY`], doubled after each failure up to [`RECORD_RETRY_MAX`]
    /// ([`Stage::Recording`]), so that an answer the agent got is never lost to a restart. Were
    /// the host to stop first, the record still says `running`, and the call is answered
    /// `outcome_unknown` after a restart, as one that had no answer.
    fn finish_durably(
        &mut self,
        mut call: Call,
        result: AppResult,
        monotonic: Duration,
        cx: &Context<'_>,
        out: &mut Vec<Out>,
    ) {
        let state = CallState::Finished {
            result: result.clone(),
        };
        if self.recorder.write(&call.subject, state, cx).is_ok() {
            return self.recorder.finish_quietly(call, result, cx, out);
        }
        call.finished = Some(result);
        let wait = RECORD_RETRY
            .saturating_mul(1 << call.record_failures.min(8))
            .min(RECORD_RETRY_MAX);
        call.record_failures = call.record_failures.saturating_add(1);
        call.stage = Stage::Recording {
            retry: monotonic + wait,
        };
        self.ledger.park(call);
    }

    /// Writes the final record of `call` again, after a failed write (at `monotonic`).
    fn record_again(
        &mut self,
        call: Call,
        monotonic: Duration,
        cx: &Context<'_>,
        out: &mut Vec<Out>,
    ) {
        if let Some(result) = call.finished.clone() {
            self.finish_durably(call, result, monotonic, cx, out);
        }
    }

    /// The call's deadline passed before it was decided (R-CAP-4).
    fn expire(&mut self, call: Call, cx: &Context<'_>, out: &mut Vec<Out>) {
        if matches!(call.stage, Stage::Elsewhere { .. }) {
            // The record is the other process's, which answers with the real outcome: this
            // request gets `expired`, and nothing is written over that record (R-CAP-5).
            let result = expired_elsewhere(&call);
            for to in call.to {
                self.recorder
                    .refuse(&call.subject, result.clone(), to, cx, out);
            }
            return;
        }
        call.withdraw(out);
        let result = expired(&call, self.max_lifetime);
        let decided = Some((Decision::Expired, DecisionSource::Deadline));
        self.recorder.finish(call, result, decided, cx, out);
    }
}
