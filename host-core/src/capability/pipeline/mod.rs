//! The `app.call` pipeline of one session (R-SEC-5, R-CAP-2..6): call key first, then known and
//! visible, not expired, valid arguments, consent by risk, a durable `running` record, run, and
//! exactly one `app.result` per `app.call` envelope.

use std::fmt;
use std::time::Duration;

use crate::capability::activity::{Activity, ActivityLog};
use crate::capability::effect::{
    Answer, CapabilityEffect, CapabilityLimits, CapabilitySetup, HookAnswer, Ticket, WallClock,
};
use crate::capability::refusals::Refusals;
use crate::capability::registry::{Capability, Registry};
use crate::capability::store::{ArgsDigest, AuditKind, CallKey, Decision, DecisionSource};
use crate::error::{ErrorCode, UsageError};
use crate::ids::{
    shorten, AgentIdentity, CapabilityName, ConversationId, OpaqueVersion, Risk, Status,
};
use crate::json::JsonObject;
use crate::message::{
    AppCall, AppError, AppList, AppResult, ClientInventory, Envelope, Party, Timestamp,
};

/// How long a call whose key another live host process has waits before it looks again.
mod announcements;
mod decide;
mod grantee;

use grantee::Grantee;
mod ledger;

use ledger::Ledger;

use announcements::Announcements;
mod finish;
mod inventory;

const ELSEWHERE_RETRY: Duration = Duration::from_millis(200);

/// How long a call that ran waits before its final record is written again after its first
/// failed write (a locked database, a full disk), doubled after each further one up to
/// [`RECORD_RETRY_MAX`]: its answer goes only once the record is kept, and a store that stays
/// locked is not asked, and waited for, many times a second.
const RECORD_RETRY: Duration = Duration::from_millis(500);

/// The longest wait between two writes of a final record.
const RECORD_RETRY_MAX: Duration = Duration::from_secs(30);

/// What the pipeline hands the session, which builds every outbound envelope itself.
#[derive(Debug)]
pub(crate) enum Out {
    /// An effect for the platform.
    Effect(CapabilityEffect),
    /// An `app.result` for the agent.
    Answer { result: AppResult, to: Party },
    /// A new inventory and its `app.list` projection (R-INV-1, R-CAP-1).
    Announce {
        inventory: ClientInventory,
        list: AppList,
    },
}

/// The facts every audit record and stored record of a call repeats.
#[derive(Debug, Clone)]
struct Subject {
    key: CallKey,
    capability: CapabilityName,
    digest: ArgsDigest,
    version: Option<OpaqueVersion>,
    risk: Option<Risk>,
    received_at: Timestamp,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    LookingUp,
    CheckingGrant,
    Prompting,
    Hook,
    Persisting,
    Running {
        since: Duration,
    },
    /// The key's call is deciding or running in another live host process: look again at
    /// `retry` (monotonic), until it is finished or the call's deadline passes (R-CAP-5).
    Elsewhere {
        retry: Duration,
    },
    /// The call ran; its final record is being written, and its answer goes once the store
    /// acknowledged it (R-CAP-5: an answer the agent got is never lost). After a failed write,
    /// written again at `retry` (monotonic).
    Recording {
        retry: Option<Duration>,
    },
}

impl Stage {
    fn expects(self) -> &'static str {
        match self {
            Stage::LookingUp => "a call lookup",
            Stage::CheckingGrant => "a grant check",
            Stage::Prompting => "a consent answer",
            Stage::Hook => "a hook answer",
            Stage::Persisting => "a persist acknowledgement",
            Stage::Running { .. } => "a handler result",
            Stage::Elsewhere { .. } => "nothing: another host process has the call",
            Stage::Recording { .. } => "a persist acknowledgement of the final record",
        }
    }

    /// Waiting for someone's decision: bounded by `expires_at` and by the waiting cap.
    fn deciding(self) -> bool {
        matches!(self, Stage::CheckingGrant | Stage::Prompting | Stage::Hook)
    }
}

/// A call that is not answered yet.
struct Call {
    subject: Subject,
    reason: String,
    /// The call's deadline: its `expires_at`, brought forward to `max_call_lifetime` after its
    /// receipt when later (R-CAP-4).
    expires_at: Timestamp,
    /// The agent's own `expires_at` when `max_call_lifetime` brought it forward.
    capped_from: Option<Timestamp>,
    /// What first allowed it: the policy (`display_only`), the prompt, a remembered grant.
    allowed_by: Option<DecisionSource>,
    arguments: JsonObject,
    capability: Option<Capability>,
    /// The sender of the call, then of every repeat of its key that waits for the same answer.
    to: Vec<Party>,
    stage: Stage,
    ticket: Ticket,
    /// The answer of a call that ran, while its final record is written ([`Stage::Recording`]).
    finished: Option<AppResult>,
    /// The failed writes of that record so far.
    record_failures: u32,
}

/// An answered call, kept for repeats of its key.
struct Answered {
    capability: CapabilityName,
    digest: ArgsDigest,
    result: AppResult,
}

/// The capability state of one session: its registry, what it announced, its calls.
pub struct Capabilities {
    registry: Registry,
    wall: Box<dyn WallClock>,
    limits: CapabilityLimits,
    /// [`crate::Limits::max_call_lifetime`].
    max_lifetime: Duration,
    /// The calls that ran (original §5.3).
    activity: ActivityLog,
    /// Whose calls these are; the conversation's own "always" answers.
    grantee: Grantee,
    /// What this session announced, under which revisions.
    announcements: Announcements,
    /// The calls not answered yet, and those answered lately.
    ledger: Ledger,
    /// Calls refused before the pipeline, merged per kind for the audit (R-CAP-6).
    refusals: Refusals,
}

impl fmt::Debug for Capabilities {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Capabilities")
            .field("registry", &self.registry)
            .field("agent", &self.grantee.agent())
            .field("epoch", &self.announcements.epoch())
            .field("calls", &self.ledger.waiting().count())
            .finish_non_exhaustive()
    }
}

impl Capabilities {
    /// Starts from `setup`: every unfinished record it carries is finished (R-CAP-5).
    pub(crate) fn new(
        setup: CapabilitySetup,
        max_lifetime: Duration,
        out: &mut Vec<Out>,
    ) -> Result<Self, UsageError> {
        let CapabilitySetup {
            revision_epoch,
            agent,
            wall_clock,
            unfinished,
            limits,
            unvouched_scope,
            offered_before,
        } = setup;
        if limits.max_waiting_consent == 0
            || limits.max_calls_in_flight == 0
            || limits.max_remembered_answers == 0
            || limits.handler_timeout.is_zero()
        {
            return Err(UsageError::Capabilities {
                reason: "limits must all be at least 1 (and the handler timeout above zero)",
            });
        }
        let me = Self {
            registry: Registry::default(),
            wall: wall_clock,
            limits,
            max_lifetime,
            activity: ActivityLog::default(),
            grantee: Grantee::new(agent, unvouched_scope),
            announcements: Announcements::new(revision_epoch, offered_before),
            ledger: Ledger::default(),
            refusals: Refusals::default(),
        };
        for record in unfinished {
            me.recover(record, out);
        }
        Ok(me)
    }

    /// The registry.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The vouched agent identity of this session, if any.
    pub fn agent(&self) -> Option<&AgentIdentity> {
        self.grantee.agent()
    }

    /// The calls that ran in this session, oldest first: what, when, under which grant
    /// (at most [`crate::MAX_ACTIVITY`]; original §5.3).
    pub fn activity(&self) -> impl Iterator<Item = &Activity> + '_ {
        self.activity.entries()
    }

    /// How many calls are unanswered, and how many of them wait for a decision.
    pub fn pending(&self) -> (usize, usize) {
        let deciding = self.ledger.waiting().filter(|c| c.stage.deciding()).count();
        (self.ledger.waiting().count(), deciding)
    }

    // ---- inventory (R-INV-1..4, R-CAP-1) ----

    // ---- the pipeline ----

    /// An accepted `app.call` of the established conversation.
    pub(crate) fn call(&mut self, env: Envelope<AppCall>, out: &mut Vec<Out>) {
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
        let conversation = self
            .grantee
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
            received_at: self.wall.now(),
        };
        // R-CAP-4: no decision waits longer than `max_call_lifetime`, whatever the agent asked.
        let latest = subject.received_at.checked_add(self.max_lifetime);
        let (expires_at, capped_from) = match latest {
            Some(latest) if latest < expires_at => (latest, Some(expires_at)),
            _ => (expires_at, None),
        };
        self.audit(
            &subject,
            AuditKind::Received,
            None,
            None,
            "app.call received",
            out,
        );
        // 1. The call key, before anything else (R-CAP-5).
        if let Some(first) = self.ledger.get(&call_id) {
            if let Some(reused) = reused(&first.subject.capability, &first.subject.digest, &subject)
            {
                return self.refuse(&subject, reused, sender, out);
            }
            if self.in_flight() >= self.limits.max_calls_in_flight {
                let answer = self.too_many_in_flight(&subject);
                return self.refuse(&subject, answer, sender, out);
            }
            if let Some(first) = self.ledger.get_mut(&call_id) {
                first.to.push(sender);
            }
            return;
        }
        if let Some(done) = self.ledger.answered(&call_id) {
            let result = match reused(&done.capability, &done.digest, &subject) {
                Some(reused) => reused,
                None => done.result.clone(),
            };
            return self.refuse(&subject, result, sender, out);
        }
        if self.in_flight() >= self.limits.max_calls_in_flight {
            let answer = self.too_many_in_flight(&subject);
            return self.refuse(&subject, answer, sender, out);
        }
        let ticket = self.ticket();
        out.push(Out::Effect(CapabilityEffect::LookupCall {
            ticket,
            key: subject.key.clone(),
            owner: self.owner(),
        }));
        self.wait(
            Call {
                subject,
                reason,
                expires_at,
                capped_from,
                allowed_by: None,
                arguments,
                capability: None,
                to: vec![sender],
                stage: Stage::LookingUp,
                ticket,
                finished: None,
                record_failures: 0,
            },
            Stage::LookingUp,
            ticket,
        );
    }

    /// The platform answers `ticket`.
    pub(crate) fn answered(
        &mut self,
        ticket: Ticket,
        answer: Answer,
        monotonic: Duration,
        out: &mut Vec<Out>,
    ) -> Result<(), UsageError> {
        if matches!(answer, Answer::Records(_)) {
            return Err(wrong(ticket, "a capability answer", &answer));
        }
        if let Some(subject) = self.ledger.late(ticket) {
            if !matches!(answer, Answer::Ran(_)) {
                return Err(wrong(ticket, "a handler result", &answer));
            }
            let subject = subject.clone();
            self.ledger.forget_late(ticket);
            self.audit(
                &subject,
                AuditKind::LateResultDiscarded,
                None,
                None,
                "a handler result arrived after the timeout and was discarded",
                out,
            );
            return Ok(());
        }
        // An unknown ticket is a withdrawn prompt or hook answered anyway: ignored.
        let Some(stage) = self.ledger.stage_of(ticket) else {
            return Ok(());
        };
        let fits = matches!(
            (stage, &answer),
            (Stage::LookingUp, Answer::Call(_) | Answer::CallElsewhere(_))
                | (Stage::CheckingGrant, Answer::Grant(_))
                | (Stage::Prompting, Answer::Consent(_))
                | (Stage::Hook, Answer::Hook(_))
                | (
                    Stage::Persisting,
                    Answer::Persisted | Answer::PersistFailed(_)
                )
                | (Stage::Running { .. }, Answer::Ran(_))
                | (
                    Stage::Recording { .. },
                    Answer::Persisted | Answer::PersistFailed(_)
                )
        );
        if !fits {
            return Err(wrong(ticket, stage.expects(), &answer));
        }
        let Some(mut call) = self.ledger.take_by_ticket(ticket) else {
            return Ok(());
        };
        if stage.deciding() && self.wall.now() >= call.expires_at {
            self.expire(call, out);
            return Ok(());
        }
        if let Stage::Recording { .. } = stage {
            self.recorded(call, &answer, monotonic, out);
            return Ok(());
        }
        match answer {
            // Refused above, before the call was taken.
            Answer::Records(_) => {}
            Answer::Call(record) => self.looked_up(call, record.map(|r| *r), out),
            Answer::CallElsewhere(record) if record.owner.as_ref() == Some(&self.owner()) => {
                // R-CAP-5: one call, one answer: wait for the other process's outcome.
                let ticket = self.ticket();
                let retry = monotonic + ELSEWHERE_RETRY;
                self.wait(call, Stage::Elsewhere { retry }, ticket);
            }
            Answer::CallElsewhere(record) => self.looked_up(call, Some(*record), out),
            Answer::Grant(true) => {
                self.decided(
                    &mut call,
                    Decision::Allowed,
                    DecisionSource::RememberedGrant,
                    out,
                );
                self.allowed(call, out);
            }
            Answer::Grant(false) => self.prompt(call, out),
            Answer::Consent(consent) => self.consented(call, consent, out),
            Answer::Hook(HookAnswer::Allow) => {
                self.decided(&mut call, Decision::Allowed, DecisionSource::Hook, out);
                self.persist_running(call, out);
            }
            Answer::Hook(HookAnswer::Dismissed) => {
                let result = answer_with(
                    &call.subject,
                    Status::Cancelled,
                    "the user closed the capability's dialog without choosing; the call did not run",
                    None,
                );
                self.finish(
                    call,
                    result,
                    Some((Decision::Cancelled, DecisionSource::Hook)),
                    out,
                );
            }
            Answer::Hook(HookAnswer::Deny) => {
                let result = answer_with(
                    &call.subject,
                    Status::Rejected,
                    "the host's permission check refused the call (R-CAP-3)",
                    None,
                );
                self.finish(
                    call,
                    result,
                    Some((Decision::Denied, DecisionSource::Hook)),
                    out,
                );
            }
            // R-CAP-4: the effect starts only before the deadline.
            Answer::Persisted if self.wall.now() >= call.expires_at => self.expire(call, out),
            Answer::Persisted => self.run(call, monotonic, out),
            Answer::PersistFailed(why) => {
                let result = answer_with(
                    &call.subject,
                    Status::Failed,
                    &format!(
                        "the call could not be recorded durably, so it was not run: {} (R-CAP-5)",
                        shorten(&why, 200)
                    ),
                    Some(ErrorCode::NotRecorded),
                );
                self.finish(call, result, None, out);
            }
            Answer::Ran(outcome) => self.ran(call, outcome, out),
        }
        Ok(())
    }

    /// Expires calls whose deadline passed while they waited for a decision (withdrawing their
    /// prompt), and fails handlers that overran their timeout.
    pub(crate) fn poll(&mut self, monotonic: Duration, out: &mut Vec<Out>) {
        let now = self.wall.now();
        let timeout = self.limits.handler_timeout;
        let due = self.ledger.keys_where(|c| match c.stage {
            Stage::Running { since } => monotonic.saturating_sub(since) >= timeout,
            Stage::Elsewhere { retry } => now >= c.expires_at || monotonic >= retry,
            Stage::Recording { retry } => retry.is_some_and(|r| monotonic >= r),
            stage => stage.deciding() && now >= c.expires_at,
        });
        for id in due {
            let Some(call) = self.ledger.take(&id) else {
                continue;
            };
            if matches!(call.stage, Stage::Recording { .. }) {
                self.record_again(call, out);
                continue;
            }
            if matches!(call.stage, Stage::Elsewhere { .. }) && now < call.expires_at {
                // Look again: finished there, or its writer gone, or still running.
                let ticket = self.ticket();
                out.push(Out::Effect(CapabilityEffect::LookupCall {
                    ticket,
                    key: call.subject.key.clone(),
                    owner: self.owner(),
                }));
                self.wait(call, Stage::LookingUp, ticket);
                continue;
            }
            if matches!(call.stage, Stage::Running { .. }) {
                self.ledger.mark_late(call.ticket, call.subject.clone());
                let result = answer_with(
                    &call.subject,
                    Status::Failed,
                    &format!(
                        "the capability did not answer within {} s; a later result is discarded",
                        timeout.as_secs()
                    ),
                    Some(ErrorCode::HandlerTimeout),
                );
                self.finish(call, result, None, out);
            } else {
                self.expire(call, out);
            }
        }
    }

    /// How long until `poll` has something to do, if anything waits on a deadline.
    pub(crate) fn next_wakeup(&self, monotonic: Duration) -> Option<Duration> {
        let now = self.wall.now();
        self.ledger
            .waiting()
            .filter_map(|c| match c.stage {
                Stage::Running { since } => {
                    Some((since + self.limits.handler_timeout).saturating_sub(monotonic))
                }
                stage if stage.deciding() => Some(now.until(&c.expires_at)),
                Stage::Elsewhere { retry } => Some(
                    retry
                        .saturating_sub(monotonic)
                        .min(now.until(&c.expires_at)),
                ),
                Stage::Recording { retry: Some(retry) } => Some(retry.saturating_sub(monotonic)),
                _ => None,
            })
            .min()
    }

    /// The session ends: every call still waiting for a lookup or a decision is cancelled and
    /// its prompt withdrawn. Running calls finish on their own.
    pub(crate) fn end(&mut self, out: &mut Vec<Out>) {
        self.flush_refusals(out);
        let waiting = self
            .ledger
            .keys_where(|c| c.stage.deciding() || c.stage == Stage::LookingUp);
        // A call another process has is that process's to answer: dropped, nothing written.
        self.ledger
            .drop_where(|c| matches!(c.stage, Stage::Elsewhere { .. }));
        for id in waiting {
            let Some(call) = self.ledger.take(&id) else {
                continue;
            };
            self.withdraw(&call, out);
            let result = answer_with(
                &call.subject,
                Status::Cancelled,
                "the session ended before the call was decided; it did not run",
                None,
            );
            self.finish(
                call,
                result,
                Some((Decision::Cancelled, DecisionSource::Policy)),
                out,
            );
        }
    }

    // ---- steps ----

    // ---- helpers ----

    fn ticket(&mut self) -> Ticket {
        self.ledger.ticket()
    }

    fn wait(&mut self, call: Call, stage: Stage, ticket: Ticket) {
        self.ledger.wait(call, stage, ticket);
    }

    /// Unanswered calls, counting every repeat that waits on one.
    fn in_flight(&self) -> usize {
        self.ledger.in_flight()
    }
}

/// The `failed` answer to a key reused for another capability or other arguments (R-CAP-5), or
/// `None` when the call is a true repeat.
fn reused(capability: &CapabilityName, digest: &ArgsDigest, call: &Subject) -> Option<AppResult> {
    if *capability == call.capability && *digest == call.digest {
        return None;
    }
    let what = if *capability != call.capability {
        format!("capability {capability}")
    } else {
        "other arguments".to_owned()
    };
    Some(answer_with(
        call,
        Status::Failed,
        &format!(
            "call_id reused: {} was already used in this conversation for {what}; use a new call_id (R-CAP-5)",
            call.key.call_id
        ),
        Some(ErrorCode::CallIdReused),
    ))
}

fn answer_with(
    subject: &Subject,
    status: Status,
    message: &str,
    code: Option<ErrorCode>,
) -> AppResult {
    AppResult {
        call_id: subject.key.call_id.clone(),
        status,
        result: None,
        message: Some(message.to_owned()),
        error: code.map(|code| AppError {
            code,
            field: None,
            limit: None,
        }),
    }
}

fn wrong(ticket: Ticket, expected: &'static str, got: &Answer) -> UsageError {
    UsageError::WrongAnswer {
        ticket: ticket.0,
        expected,
        got: got.kind(),
    }
}
