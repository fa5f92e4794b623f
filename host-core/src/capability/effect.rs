//! What the capability kernel asks the platform to do ([`CapabilityEffect`]) and what the
//! platform answers later ([`Answer`], by [`Ticket`]); the setup it starts from. Store reads
//! and writes are no effects: the kernel calls its [`StorePort`](crate::StorePort).

use std::collections::BTreeSet;
use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::capability::activity::Activity;
use crate::capability::store::{CallKey, CallRecord, RevisionEpoch};
use crate::ids::{AgentIdentity, CapabilityName, ConversationId, OpaqueVersion, Risk};
use crate::json::JsonObject;
use crate::redact::Fingerprint;
use crate::timestamp::Timestamp;

/// A wall-clock time source, provided by the embedder, beside the monotonic [`crate::Clock`]:
/// `expires_at` (R-CAP-4) and audit times are wall-clock times.
pub trait WallClock {
    /// The current time.
    fn now(&self) -> Timestamp;
}

/// Names one question the kernel asked the platform that is answered later (a consent prompt,
/// the hook, a handler's run); the platform answers it with `Session::answered(ticket, answer)`
/// (or [`Sessions::answered`](crate::Sessions::answered)), the one way such answers come back.
/// Never reused within a session: the capability kernel numbers its questions from 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Ticket(pub u64);

impl fmt::Display for Ticket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// What the user may answer in a consent prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ConsentAnswer {
    /// Run it this once.
    Allow,
    /// Run it and remember (only offered when [`ConsentRequest::may_remember`]; otherwise it
    /// counts as [`ConsentAnswer::Allow`]).
    AllowAlways,
    /// Do not run it: the call is answered `rejected`.
    Deny,
    /// The prompt was dismissed, timed out, or dropped unanswered: `cancelled`.
    Dismissed,
    /// No prompt could be shown (none is configured, or the capability's owner could not word
    /// this call): `failed`, audited as the host's decision, never as the user's.
    Unavailable,
}

/// The registered facts of a call a consent prompt or the embedder's hook decides on. The
/// arguments come from the agent: show them as plain text, escaped and capped (R-SEC-6).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CallSummary {
    /// The call.
    pub key: CallKey,
    /// The vouched agent identity, when there is one; show it as the requester.
    pub agent: Option<AgentIdentity>,
    /// The capability.
    pub capability: CapabilityName,
    /// Its registered version.
    pub version: OpaqueVersion,
    /// Its registered risk; say it in plain words.
    pub risk: Risk,
    /// The arguments, already valid against the capability's schema (untrusted content).
    pub arguments: JsonObject,
}

/// A consent prompt to show (R-CAP-4, R-SEC-6). The agent's `reason` and arguments are
/// untrusted: show them as plain text, escaped and capped ([`crate::display_title`]). Answer with
/// [`Answer::Consent`]; it may be withdrawn with [`CapabilityEffect::Withdraw`].
///
/// `Debug` shows the reason (like the arguments) as a [`Fingerprint`], a length and a digest:
/// it is the agent's text, and logs reach journald.
#[derive(Clone, PartialEq)]
#[non_exhaustive]
pub struct ConsentRequest {
    /// Answer with this ticket.
    pub ticket: Ticket,
    /// What is asked.
    pub call: CallSummary,
    /// The agent's reason (untrusted).
    pub reason: String,
    /// The call's deadline; the kernel withdraws the prompt when it passes.
    pub expires_at: Timestamp,
    /// Whether "always" may be offered (only `user_confirmation`, R-CAP-3).
    pub may_remember: bool,
}

impl fmt::Debug for ConsentRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConsentRequest")
            .field("ticket", &self.ticket)
            .field("call", &self.call)
            .field("reason", &Fingerprint::of(&self.reason))
            .field("expires_at", &self.expires_at)
            .field("may_remember", &self.may_remember)
            .finish()
    }
}

/// The embedder's extra check for `system_permission` and `restricted` calls (the OS permission
/// or the extra identity check, R-CAP-3), asked after the user allowed the call. A platform
/// without such a hook answers `Answer::Hook(false)`: the default is deny.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct HookRequest {
    /// Answer with this ticket.
    pub ticket: Ticket,
    /// The call's deadline ([`crate::Limits::max_call_lifetime`] applied): a dialog shown for
    /// the check goes away by then; the kernel also withdraws the request
    /// ([`CapabilityEffect::Withdraw`]) and answers `expired` (R-CAP-4).
    pub expires_at: Timestamp,
    /// What is asked.
    pub call: CallSummary,
}

/// The permission check's answer ([`Answer::Hook`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum HookAnswer {
    /// The check allows the call: it runs.
    Allow,
    /// The check refuses it: `rejected` (R-CAP-3).
    Deny,
    /// The user closed the check's dialog without choosing (a file chooser's Cancel, Escape,
    /// its window closed): `cancelled`, the user's cancel of a call they had allowed.
    Dismissed,
}

impl From<bool> for HookAnswer {
    /// `true` allows, `false` denies.
    fn from(allowed: bool) -> Self {
        if allowed {
            HookAnswer::Allow
        } else {
            HookAnswer::Deny
        }
    }
}

/// Run a capability's handler, off the GUI thread, and answer with [`Answer::Ran`]. Emitted only
/// after the store kept the call's `running` record (R-CAP-5).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RunRequest {
    /// Answer with this ticket.
    pub ticket: Ticket,
    /// The call.
    pub call: CallKey,
    /// The capability.
    pub capability: CapabilityName,
    /// Its registered version.
    pub version: OpaqueVersion,
    /// The arguments, valid against the capability's schema.
    pub arguments: JsonObject,
    /// How long the kernel waits for the result; a later one is discarded and audited.
    pub timeout: Duration,
}

/// What the capability kernel asks the platform to do: what is not the store's, each answered
/// later by [`Ticket`] or not at all. Effects of one batch are executed in order.
#[derive(Debug, Clone, PartialEq)]
pub enum CapabilityEffect {
    /// Show a consent prompt (one at a time per host, first in first out: the platform's job).
    Prompt(ConsentRequest),
    /// Ask the embedder's hook (default deny).
    Hook(HookRequest),
    /// The prompt or hook request with this ticket is no longer wanted (its deadline passed or
    /// its session ended): take it away; an answer to it is ignored.
    Withdraw(Ticket),
    /// Run the handler.
    Run(RunRequest),
    /// The call's handler starts: it is in the session's activity list now
    /// ([`crate::Capabilities::activity`]). Tell the embedder, and when nothing of the call was
    /// visible ([`Activity::unseen`]: `display_only`, a remembered grant) show the user a
    /// non-blocking notice naming the capability, the agent and the reason (original §5.3).
    Activity(Activity),
}

/// What the platform answers to a [`Ticket`].
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// The user's answer.
    Consent(ConsentAnswer),
    /// The permission check's answer.
    Hook(HookAnswer),
    /// The handler's outcome.
    Ran(Result<JsonObject, HandlerError>),
}

impl Answer {
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Answer::Consent(_) => "a consent answer",
            Answer::Hook(_) => "a hook answer",
            Answer::Ran(_) => "a handler result",
        }
    }
}

/// A handler's error: the call is answered `failed` with `handler_failed` and this message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandlerError {
    /// A lowercase sentence for the agent; it must not carry secrets or paths.
    pub message: String,
}

impl HandlerError {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }
}

/// Bounds of the capability kernel, per session.
///
/// | field | default | rule |
/// |---|---|---|
/// | `max_waiting_consent` | 4 calls waiting for a prompt or the hook | issue item 6 (host choice) |
/// | `max_calls_in_flight` | 32 unanswered calls, repeats waiting on them included | R-ENV-4 (host choice) |
/// | `handler_timeout` | 60 s | host choice |
/// | `max_remembered_answers` | 1024 answered calls kept in memory (older ones are looked up in the store) | host choice |
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CapabilityLimits {
    /// How many calls may wait for consent at once; one more is answered `failed`
    /// (`too_many_calls`).
    pub max_waiting_consent: usize,
    /// How many calls may be unanswered at once; one more is answered `failed`
    /// (`too_many_calls`).
    pub max_calls_in_flight: usize,
    /// How long a started handler may take; then the call is answered `failed`
    /// (`handler_timeout`) and a later result is discarded and audited.
    pub handler_timeout: Duration,
    /// How many answered calls are kept in memory for repeats; the store has them all.
    pub max_remembered_answers: usize,
}

impl Default for CapabilityLimits {
    fn default() -> Self {
        Self {
            max_waiting_consent: 4,
            max_calls_in_flight: 32,
            handler_timeout: Duration::from_secs(60),
            max_remembered_answers: 1024,
        }
    }
}

/// What `Session::enable_capabilities` starts from.
#[non_exhaustive]
pub struct CapabilitySetup {
    /// This session's epoch from [`crate::CapabilityStore::next_revision_epoch`] (R-INV-2).
    pub revision_epoch: RevisionEpoch,
    /// The agent identity the embedder or transport vouches for (R-SES-1); `None` makes
    /// "always" last this conversation only.
    pub agent: Option<AgentIdentity>,
    /// The wall clock.
    pub wall_clock: Box<dyn WallClock>,
    /// The store's unfinished records ([`crate::CapabilityStore::unfinished_calls`]): each is
    /// finished now, `cancelled` when it never ran, `failed` (`outcome_unknown`) when it was
    /// running (R-CAP-5). Hand them to one session only.
    pub unfinished: Vec<CallRecord>,
    /// The bounds.
    pub limits: CapabilityLimits,
    /// Without a vouched identity, where "always" is kept: `Some(scope)` keeps it in the store
    /// under the identity [`unvouched_identity`]`(scope, conversation)`, asked at every decision
    /// like a vouched grant, so it can be listed and revoked from another process (R-SES-1);
    /// `None` keeps it in memory. `scope` names this host process (random, so that no vouched
    /// identity and no other process can hold it).
    pub unvouched_scope: Option<String>,
    /// The capabilities the vouched identity was offered before, in an earlier session or
    /// process ([`crate::CapabilityStore::offered`]): one of them that is not offered now is
    /// answered `revoked`, not plain `unsupported` (R-INV-4).
    pub offered_before: BTreeSet<CapabilityName>,
}

/// The identity under which an unvouched session's "always" is kept in the store: a reserved
/// prefix, the host process's `scope` and the conversation (R-SES-1). A vouched identity never
/// starts with [`UNVOUCHED_PREFIX`] in practice: its scope is random per process.
pub fn unvouched_identity(scope: &str, conversation: &ConversationId) -> Option<AgentIdentity> {
    AgentIdentity::try_from(format!("{UNVOUCHED_PREFIX}{scope}/{conversation}")).ok()
}

/// The prefix of [`unvouched_identity`].
pub const UNVOUCHED_PREFIX: &str = "~unvouched/";

impl CapabilitySetup {
    /// A setup with the default limits, no vouched identity and nothing to recover.
    pub fn new(revision_epoch: RevisionEpoch, wall_clock: Box<dyn WallClock>) -> Self {
        Self {
            revision_epoch,
            agent: None,
            wall_clock,
            unfinished: Vec::new(),
            limits: CapabilityLimits::default(),
            unvouched_scope: None,
            offered_before: BTreeSet::new(),
        }
    }
}

impl fmt::Debug for CapabilitySetup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CapabilitySetup")
            .field("revision_epoch", &self.revision_epoch)
            .field("agent", &self.agent)
            .field("unfinished", &self.unfinished.len())
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}
