//! One `app.call` as the pipeline holds it: the facts every record of it repeats, what it waits
//! for, its deadline, and the answer kept for repeats of its key (R-CAP-4, R-CAP-5).

use std::time::Duration;

use crate::capability::digest::ArgsDigest;
use crate::capability::effect::{Answer, CallSummary, CapabilityEffect, Ticket};
use crate::capability::registry::Capability;
use crate::capability::store::{CallKey, CallRecord, DecisionSource};
use crate::capability::Out;
use crate::ids::{AgentIdentity, CapabilityName, OpaqueVersion, Risk};
use crate::json::JsonObject;
use crate::message::{AppResult, Party, Timestamp};

/// The facts every audit record and stored record of a call repeats.
///
/// Invariant: `version` and `risk` are set together, once the capability is known and visible
/// to the caller (R-INV-4); `digest` is the digest of the call's own arguments.
#[derive(Debug, Clone)]
pub(super) struct Subject {
    pub(super) key: CallKey,
    pub(super) capability: CapabilityName,
    pub(super) digest: ArgsDigest,
    pub(super) version: Option<OpaqueVersion>,
    pub(super) risk: Option<Risk>,
    pub(super) received_at: Timestamp,
}

impl Subject {
    /// The facts of a call as its stored `record` keeps them (R-CAP-5).
    pub(super) fn of_record(record: &CallRecord) -> Self {
        Self {
            key: record.key.clone(),
            capability: record.capability.clone(),
            digest: record.arguments_digest.clone(),
            version: record.version.clone(),
            risk: record.risk,
            received_at: record.received_at,
        }
    }
}

/// What a waiting call waits for: an answer by its ticket, or its own time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stage {
    /// Waiting for nothing: the pipeline moves it on within the input at hand (a new call, or
    /// one whose answer just came).
    InHand,
    Prompting,
    Hook,
    Running {
        since: Duration,
    },
    /// The key's call is deciding or running in another live host process: look again at
    /// `retry` (monotonic), until it is finished or the call's deadline passes (R-CAP-5).
    Elsewhere {
        retry: Duration,
    },
    /// The call ran and the store did not keep its final record: written again at `retry`
    /// (monotonic); its answer goes once it is kept (R-CAP-5: an answer the agent got is never
    /// lost).
    Recording {
        retry: Duration,
    },
}

impl Stage {
    /// What the platform is to answer at this stage, for a [`UsageError::WrongAnswer`].
    ///
    /// [`UsageError::WrongAnswer`]: crate::UsageError::WrongAnswer
    pub(super) fn expects(self) -> &'static str {
        match self {
            Stage::InHand => "nothing: the call is not waiting",
            Stage::Prompting => "a consent answer",
            Stage::Hook => "a hook answer",
            Stage::Running { .. } => "a handler result",
            Stage::Elsewhere { .. } => "nothing: another host process has the call",
            Stage::Recording { .. } => "nothing: the final record is written again in time",
        }
    }

    /// Whether `answer` is what this stage waits for.
    pub(super) fn fits(self, answer: &Answer) -> bool {
        matches!(
            (self, answer),
            (Stage::Prompting, Answer::Consent(_))
                | (Stage::Hook, Answer::Hook(_))
                | (Stage::Running { .. }, Answer::Ran(_))
        )
    }

    /// Waiting for someone's decision: bounded by `expires_at` and by the waiting cap.
    pub(super) fn deciding(self) -> bool {
        matches!(self, Stage::Prompting | Stage::Hook)
    }
}

/// A call that is not answered yet.
///
/// Invariants: `expires_at` is never later than `max_call_lifetime` after its receipt, and
/// `capped_from` is the agent's own later deadline when it was brought forward (R-CAP-4);
/// `capability` is set once the call is admitted, `finished` only while its final record is
/// written ([`Stage::Recording`]); `to` is never empty.
pub(super) struct Call {
    pub(super) subject: Subject,
    pub(super) reason: String,
    /// The call's deadline: its `expires_at`, brought forward to `max_call_lifetime` after its
    /// receipt when later (R-CAP-4).
    pub(super) expires_at: Timestamp,
    /// The agent's own `expires_at` when `max_call_lifetime` brought it forward.
    pub(super) capped_from: Option<Timestamp>,
    /// What first allowed it: the policy (`display_only`), the prompt, a remembered grant.
    pub(super) allowed_by: Option<DecisionSource>,
    pub(super) arguments: JsonObject,
    pub(super) capability: Option<Capability>,
    /// The sender of the call, then of every repeat of its key that waits for the same answer.
    pub(super) to: Vec<Party>,
    pub(super) stage: Stage,
    /// What it waits for under [`Stage::Prompting`], [`Stage::Hook`] and [`Stage::Running`]
    /// (`Ticket(0)`, which the ledger never hands out, before it first waited); stale at any
    /// other stage.
    pub(super) ticket: Ticket,
    /// The answer of a call that ran, while its final record is written ([`Stage::Recording`]).
    pub(super) finished: Option<AppResult>,
    /// The failed writes of that record so far.
    pub(super) record_failures: u32,
}

impl Call {
    /// A call from `sender` received as `subject`, in hand. Its deadline is the agent's
    /// `expires_at`, brought forward to `max_lifetime` after its receipt when later: no decision
    /// waits longer than `max_call_lifetime`, whatever the agent asked (R-CAP-4).
    pub(super) fn new(
        subject: Subject,
        reason: String,
        expires_at: Timestamp,
        max_lifetime: Duration,
        arguments: JsonObject,
        sender: Party,
    ) -> Self {
        let latest = subject.received_at.checked_add(max_lifetime);
        let (expires_at, capped_from) = match latest {
            Some(latest) if latest < expires_at => (latest, Some(expires_at)),
            _ => (expires_at, None),
        };
        Self {
            subject,
            reason,
            expires_at,
            capped_from,
            allowed_by: None,
            arguments,
            capability: None,
            to: vec![sender],
            stage: Stage::InHand,
            ticket: Ticket(0),
            finished: None,
            record_failures: 0,
        }
    }

    /// What the user or the embedder is shown of the call, once it is admitted; `agent` is the
    /// vouched identity, if any.
    pub(super) fn summary(&self, agent: Option<&AgentIdentity>) -> Option<CallSummary> {
        let capability = self.capability.as_ref()?;
        Some(CallSummary {
            key: self.subject.key.clone(),
            agent: agent.cloned(),
            capability: capability.name().clone(),
            version: capability.version().clone(),
            risk: capability.risk(),
            arguments: self.arguments.clone(),
        })
    }

    /// Withdraws the prompt or the hook the call waits for, if it waits for one.
    pub(super) fn withdraw(&self, out: &mut Vec<Out>) {
        if matches!(self.stage, Stage::Prompting | Stage::Hook) {
            out.push(Out::Effect(CapabilityEffect::Withdraw(self.ticket)));
        }
    }
}

/// An answered call, kept for repeats of its key.
pub(super) struct Answered {
    pub(super) capability: CapabilityName,
    pub(super) digest: ArgsDigest,
    pub(super) result: AppResult,
}
