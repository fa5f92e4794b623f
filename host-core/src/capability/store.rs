//! The durable store's contract: the records the capability kernel keeps (calls, grants,
//! audit, the revision epoch) and [`CapabilityStore`], the trait a store crate implements
//! (R-CAP-5, R-CAP-6, R-INV-2), beside the records of open components and hibernated Surfaces
//! ([`InstanceStore`], R-STD-15, #29).
//!
//! The kernel reaches both through its [`StorePort`] (decision 0037), the way rustls reaches its
//! session store: it calls the port where a step needs a durable read or write, and the answer
//! is the return value. Effects remain for what is not the store's or comes later (a prompt, the
//! hook, a run, a withdrawal, an activity, what is sent and shown). The table below is the
//! whole contract: every call the kernel makes, and what it does when the store fails.
//!
//! | kernel step | store call | on failure |
//! |---|---|---|
//! | an `app.call`'s key, first (R-CAP-5) | [`CapabilityStore::call`], then [`CapabilityStore::in_flight_elsewhere`] for an unfinished record | no record: the call goes on, and runs only if its `running` write succeeds |
//! | accepted; awaiting consent; answered without running | [`CapabilityStore::put_call`] | goes on (reported) |
//! | allowed: the `running` record, before `Run` | [`CapabilityStore::put_call`] | not run: `failed` `not_recorded` (fail closed) |
//! | ran: the final record, before the `app.result` | [`CapabilityStore::put_call`] | no answer yet: written again after 0.5 s, doubled up to 30 s |
//! | a remembered grant, at every decision (R-CAP-2) | [`CapabilityStore::grant`] | no grant: the user is asked |
//! | the user's "always" | [`CapabilityStore::put_grant`] | not remembered (reported) |
//! | every step (R-CAP-6) | [`CapabilityStore::append_audit`] | goes on (reported) |
//! | an inventory offers new names (R-INV-4) | [`CapabilityStore::remember_offered`] | goes on (reported) |
//! | a vouched session's component or hibernated Surface changes | [`InstanceStore::put_instance`], [`InstanceStore::put_surface`] | goes on: a record is a convenience for a restart |
//! | it closes, wakes or fails a check | [`InstanceStore::forget_instance`] | goes on (reported) |
//! | a vouched session is established | [`InstanceStore::instances`], [`InstanceStore::surfaces`] | nothing restored |
//!
//! and, by the platform, once per host start, before the first session:
//! [`CapabilityStore::unfinished_calls`] (into [`CapabilitySetup::unfinished`]); once per
//! session: [`CapabilityStore::next_revision_epoch`] (into [`CapabilitySetup::revision_epoch`])
//! and [`CapabilityStore::offered`].
//!
//! **Ordering.** A call returns before the kernel's next step: so a call's final record is
//! written before its `app.result` goes out, and its `running` record before its `Run`.
//!
//! [`StorePort`]: crate::StorePort
//! [`InstanceStore`]: crate::InstanceStore
//! [`InstanceStore::put_instance`]: crate::InstanceStore::put_instance
//! [`InstanceStore::put_surface`]: crate::InstanceStore::put_surface
//! [`InstanceStore::forget_instance`]: crate::InstanceStore::forget_instance
//! [`InstanceStore::instances`]: crate::InstanceStore::instances
//! [`InstanceStore::surfaces`]: crate::InstanceStore::surfaces
//! [`CapabilitySetup::revision_epoch`]: crate::CapabilitySetup::revision_epoch
//! [`CapabilitySetup::unfinished`]: crate::CapabilitySetup::unfinished

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::capability::digest::ArgsDigest;
use crate::ids::{
    AgentIdentity, CallId, CapabilityName, ConversationId, OpaqueVersion, Risk, Status,
};
use crate::message::{AppError, AppResult, Timestamp};

/// A number the store hands out once per host start, durably and never twice (R-INV-2): every
/// inventory revision a session sends is `rev-<epoch>-<n>`, so revisions are never reused, also
/// across restarts and across hosts sharing one data directory. A host that serves several
/// sessions asks for one epoch per session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RevisionEpoch(pub u64);

/// The idempotency key of an `app.call`: its conversation and `call_id` (R-CAP-5). Unique in the
/// store.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct CallKey {
    /// The conversation the call belongs to.
    pub conversation_id: ConversationId,
    /// The agent's `call_id`.
    pub call_id: CallId,
}

impl fmt::Display for CallKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.conversation_id, self.call_id)
    }
}

/// Where a call stands. Only [`CallState::Running`] means the handler may have run; the kernel
/// emits `Run` only after the store kept a record in that state (R-CAP-5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
#[non_exhaustive]
pub enum CallState {
    /// Accepted and validated; not run. After a restart it is answered `cancelled`.
    Received,
    /// A consent prompt (or the embedder hook) is open for it; not run. After a restart it is
    /// answered `cancelled`.
    AwaitingConsent,
    /// Its handler was started (or is about to be). After a restart it is never run again and is
    /// answered `failed` with `outcome_unknown`.
    Running,
    /// Answered; the answer is final and every repeat of the key gets it again.
    Finished {
        /// The answer the agent got.
        result: AppResult,
    },
}

impl CallState {
    /// The state's snake_case name (`received`, `awaiting_consent`, `running`, `finished`), for
    /// an indexed column.
    pub fn as_str(&self) -> &'static str {
        match self {
            CallState::Received => "received",
            CallState::AwaitingConsent => "awaiting_consent",
            CallState::Running => "running",
            CallState::Finished { .. } => "finished",
        }
    }

    /// Whether the call is answered.
    pub fn is_finished(&self) -> bool {
        matches!(self, CallState::Finished { .. })
    }
}

/// The durable record of one `app.call`, written before it runs and updated as it moves
/// (R-CAP-5). `put_call` replaces the record of the same [`CallKey`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CallRecord {
    /// The idempotency key.
    pub key: CallKey,
    /// The host start that wrote the record, so a store shared by several hosts can tell whose
    /// unfinished records are orphaned.
    pub epoch: RevisionEpoch,
    /// The vouched agent identity, when there was one.
    pub agent: Option<AgentIdentity>,
    /// The capability the call named (as the agent wrote it; it may be unknown).
    pub capability: CapabilityName,
    /// The registered version, when the capability was known and visible.
    pub version: Option<OpaqueVersion>,
    /// The registered risk, when the capability was known and visible.
    pub risk: Option<Risk>,
    /// The digest of the canonical arguments.
    pub arguments_digest: ArgsDigest,
    /// When the kernel received the call (wall clock).
    pub received_at: Timestamp,
    /// When this version of the record was made (wall clock).
    pub updated_at: Timestamp,
    /// Where the call stands.
    pub state: CallState,
    /// Whose call it is (R-CAP-5, R-SES-1): the vouched identity, or the session's own
    /// unvouched identity ([`crate::unvouched_identity`]). A key's record answers only its
    /// owner; `None` in records written before owners were kept, which answer no one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<AgentIdentity>,
}

impl CallRecord {
    /// A record for a call, as a store that keeps its fields in columns rebuilds it.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        key: CallKey,
        epoch: RevisionEpoch,
        agent: Option<AgentIdentity>,
        capability: CapabilityName,
        version: Option<OpaqueVersion>,
        risk: Option<Risk>,
        arguments_digest: ArgsDigest,
        received_at: Timestamp,
        updated_at: Timestamp,
        state: CallState,
    ) -> Self {
        Self {
            key,
            epoch,
            agent,
            capability,
            version,
            risk,
            arguments_digest,
            received_at,
            updated_at,
            state,
            owner: None,
        }
    }

    /// The same record, owned by `owner`.
    pub fn with_owner(mut self, owner: Option<AgentIdentity>) -> Self {
        self.owner = owner;
        self
    }
}

/// What a remembered grant is for: a vouched agent identity, a capability and its version
/// (R-CAP-2, R-SES-1). A new version of the capability needs a new grant.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct GrantKey {
    /// The vouched agent identity (never the self-asserted `sender.id`).
    pub agent: AgentIdentity,
    /// The capability.
    pub capability: CapabilityName,
    /// Its version.
    pub version: OpaqueVersion,
}

/// A remembered "always" answer to a `user_confirmation` prompt (R-CAP-2). Never written for
/// `system_permission` or `restricted` (R-CAP-3). Revoking it (deleting the record, e.g.
/// `lineup grants revoke`) takes effect at the next decision: the kernel asks the store every
/// time ([`CapabilityStore::grant`]) and caches nothing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct GrantRecord {
    /// What is granted.
    pub key: GrantKey,
    /// When the user granted it (wall clock).
    pub granted_at: Timestamp,
    /// The conversation in which the user granted it.
    pub conversation_id: ConversationId,
    /// The call whose prompt the user answered "always".
    pub call_id: CallId,
}

/// What an audit record is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum AuditKind {
    /// An `app.call` arrived (every call, also one that is answered at once).
    Received,
    /// Someone decided whether it may run; `decision` and `source` say who and what.
    Decision,
    /// Its handler was started.
    Started,
    /// It was answered; `status` says how.
    Answered,
    /// A handler's result arrived after its timeout and was discarded.
    LateResultDiscarded,
    /// A user's "always" was remembered as a grant.
    GrantRemembered,
    /// An unfinished record from before a restart was finished (R-CAP-5).
    Recovered,
    /// The envelope was refused before the pipeline (malformed, wrong sender, a table limit):
    /// `error` says why; a flood of identical ones is one record with a count (R-CAP-6).
    Refused,
    /// The user activated a link in a standard component (R-STD-11): `decision` and `source`
    /// are the host's link confirm's, `status` `completed` when it was opened.
    Link,
}

/// A decision about a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Decision {
    /// It may run, this once.
    Allowed,
    /// It may run, and the user asked to remember that (R-CAP-2).
    AllowedAlways,
    /// It may not run.
    Denied,
    /// Nobody decided: the prompt was dismissed or timed out, or the session ended.
    Cancelled,
    /// Its `expires_at` passed before anyone decided.
    Expired,
}

/// Who or what made a [`Decision`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum DecisionSource {
    /// The host's rules: `display_only` runs without a prompt; an unknown, hidden or revoked
    /// capability, invalid arguments, the waiting cap.
    Policy,
    /// The user, in the consent prompt.
    Prompt,
    /// A grant the user remembered earlier (for this agent identity, or for this conversation
    /// when no identity was vouched).
    RememberedGrant,
    /// The embedder's hook (the OS permission or the extra identity check), for
    /// `system_permission` and `restricted` (R-CAP-3).
    Hook,
    /// The wall clock: `expires_at` passed.
    Deadline,
    /// Recovery after a restart.
    Recovery,
}

/// One entry of the append-only audit (R-CAP-6). The store chains the entries (each carries the
/// digest of the one before it); the kernel only says what happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AuditRecord {
    /// When (wall clock).
    pub at: Timestamp,
    /// What this entry is about.
    pub kind: AuditKind,
    /// The call.
    pub call: CallKey,
    /// The vouched agent identity, when there was one.
    pub agent: Option<AgentIdentity>,
    /// The capability as the call named it.
    pub capability: CapabilityName,
    /// Its registered version, when it was known and visible.
    pub version: Option<OpaqueVersion>,
    /// Its registered risk, when it was known and visible.
    pub risk: Option<Risk>,
    /// The digest of the canonical arguments.
    pub arguments_digest: ArgsDigest,
    /// The decision, for [`AuditKind::Decision`] (and for answers decided by policy).
    pub decision: Option<Decision>,
    /// Who decided.
    pub source: Option<DecisionSource>,
    /// The status of the answer, for [`AuditKind::Answered`] and [`AuditKind::Recovered`].
    pub status: Option<Status>,
    /// A short lowercase explanation (host text; never the agent's `reason` or arguments).
    pub note: String,
    /// The error of a refusal or failure answered (its code, field and limit; never the
    /// refused value), so the audit says why (R-CAP-6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<AppError>,
    /// How many identical refusals this record stands for, when more than one (R-CAP-6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
}

/// The contract of a durable store for capability state (issue item 8), implemented by a crate
/// of its own (SQLite) and called by the kernel through its [`StorePort`](crate::StorePort)
/// (the module's table says when), and by the platform at start; host-core does no I/O itself.
///
/// Every method is a small transaction. A method that returns `Ok` has made its write durable
/// (the kernel runs a handler only then): a host killed at any moment loses no write that
/// returned. Several hosts may share one store.
pub trait CapabilityStore {
    /// The store's error; the kernel gets it as a [`StoreFailure`](crate::StoreFailure) and
    /// handles it as the module's table says.
    type Error: std::error::Error + Send + Sync + 'static;

    /// Hands out the next [`RevisionEpoch`], durably, never the same twice (R-INV-2).
    fn next_revision_epoch(&mut self) -> Result<RevisionEpoch, Self::Error>;

    /// The records not yet [`CallState::Finished`] whose host is gone (in a store used by one
    /// host at a time: every unfinished record). Called once at start; the kernel finishes each
    /// (`cancelled`, or `failed` with `outcome_unknown` for `running`) through `put_call`.
    fn unfinished_calls(&mut self) -> Result<Vec<CallRecord>, Self::Error>;

    /// The record of `key` that `owner` made, if there is one; otherwise any other record of
    /// `key` (another identity's, or one without an owner), so the kernel can tell a key used
    /// elsewhere from a new one (R-CAP-5); `None` when the key was never used.
    fn call(
        &mut self,
        owner: &AgentIdentity,
        key: &CallKey,
    ) -> Result<Option<CallRecord>, Self::Error>;

    /// Whether `record` (unfinished) was written by another host process that is still alive,
    /// so its call is deciding or running there (R-CAP-5); `false` (the default) for a store
    /// used by one process at a time.
    fn in_flight_elsewhere(&mut self, record: &CallRecord) -> Result<bool, Self::Error> {
        let _ = record;
        Ok(false)
    }

    /// Inserts the record, or replaces the record of the same owner and key.
    fn put_call(&mut self, record: &CallRecord) -> Result<(), Self::Error>;

    /// The remembered grant for `key`, if there is one.
    fn grant(&mut self, key: &GrantKey) -> Result<Option<GrantRecord>, Self::Error>;

    /// Remembers a grant (replacing one with the same key).
    fn put_grant(&mut self, grant: &GrantRecord) -> Result<(), Self::Error>;

    /// Every remembered grant, for listing (`lineup grants list`).
    fn grants(&mut self) -> Result<Vec<GrantRecord>, Self::Error>;

    /// Forgets a grant; `Ok(false)` when there was none. Takes effect at the next decision.
    fn revoke_grant(&mut self, key: &GrantKey) -> Result<bool, Self::Error>;

    /// Appends one audit record (the store adds the chain digest).
    fn append_audit(&mut self, record: &AuditRecord) -> Result<(), Self::Error>;

    /// Remembers that vouched `agent` was offered `capabilities` (R-INV-4); a store that keeps
    /// nothing across restarts may ignore it (the default).
    fn remember_offered(
        &mut self,
        agent: &AgentIdentity,
        capabilities: &[CapabilityName],
    ) -> Result<(), Self::Error> {
        let _ = (agent, capabilities);
        Ok(())
    }

    /// Every capability vouched `agent` was ever offered ([`CapabilityStore::remember_offered`]);
    /// none by default.
    fn offered(&mut self, agent: &AgentIdentity) -> Result<Vec<CapabilityName>, Self::Error> {
        let _ = agent;
        Ok(Vec::new())
    }
}
