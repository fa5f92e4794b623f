//! The `app.call` pipeline of one session (R-SEC-5, R-CAP-2..6): call key first, then known and
//! visible, not expired, valid arguments, consent by risk, a durable `running` record, run, and
//! exactly one `app.result` per `app.call` envelope.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt;
use std::time::Duration;

use crate::capability::activity::{Activity, ActivityLog};
use crate::capability::effect::{
    unvouched_identity, Answer, CallSummary, CapabilityEffect, CapabilityLimits, CapabilitySetup,
    ConsentAnswer, ConsentRequest, HandlerError, HookAnswer, HookRequest, RunRequest, Ticket,
    WallClock, UNVOUCHED_PREFIX,
};
use crate::capability::refusals::Refusals;
use crate::capability::registry::{Capability, Registry};
use crate::capability::store::{
    ArgsDigest, AuditKind, AuditRecord, CallKey, CallRecord, CallState, Decision, DecisionSource,
    GrantKey, GrantRecord, RevisionEpoch,
};
use crate::error::{ErrorCode, ProtocolError, UsageError};
use crate::ids::{
    shorten, AgentIdentity, CallId, CapabilityName, ConversationId, OpaqueVersion, Revision, Risk,
    Status,
};
use crate::json::JsonObject;
use crate::message::{
    AppCall, AppError, AppList, AppResult, CapabilityDecl, ClientInventory, Envelope, InventoryApp,
    Party, Timestamp,
};

/// How long a call whose key another live host process has waits before it looks again.
const ELSEWHERE_RETRY: Duration = Duration::from_millis(200);

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
    agent: Option<AgentIdentity>,
    wall: Box<dyn WallClock>,
    epoch: RevisionEpoch,
    limits: CapabilityLimits,
    /// [`crate::Limits::max_call_lifetime`].
    max_lifetime: Duration,
    /// The calls that ran (original §5.3).
    activity: ActivityLog,
    next_revision: u64,
    next_ticket: u64,
    conversation: Option<ConversationId>,
    /// The capability list last announced; `None` until the session is established.
    announced: Option<Vec<CapabilityDecl>>,
    /// Every capability name this session was ever offered (R-INV-4 `revoked`).
    offered: BTreeSet<CapabilityName>,
    /// The app center's enabled apps, listed in every inventory (R-INV-3).
    applications: Vec<InventoryApp>,
    calls: BTreeMap<CallId, Call>,
    tickets: BTreeMap<Ticket, CallId>,
    answered: BTreeMap<CallId, Answered>,
    answered_order: VecDeque<CallId>,
    /// Handlers that timed out: a result for them is discarded and audited.
    late: BTreeMap<Ticket, Subject>,
    /// "Always" answers without a vouched identity: they last this conversation (R-SES-1).
    conversation_grants: BTreeSet<(CapabilityName, OpaqueVersion)>,
    /// With it, those answers are kept in the store instead, under
    /// [`unvouched_identity`]`(scope, conversation)`.
    unvouched_scope: Option<String>,
    /// Calls refused before the pipeline, merged per kind for the audit (R-CAP-6).
    refusals: Refusals,
}

impl fmt::Debug for Capabilities {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Capabilities")
            .field("registry", &self.registry)
            .field("agent", &self.agent)
            .field("epoch", &self.epoch)
            .field("calls", &self.calls.len())
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
            agent,
            wall: wall_clock,
            epoch: revision_epoch,
            limits,
            max_lifetime,
            activity: ActivityLog::default(),
            next_revision: 1,
            next_ticket: 1,
            conversation: None,
            announced: None,
            offered: offered_before,
            applications: Vec::new(),
            calls: BTreeMap::new(),
            tickets: BTreeMap::new(),
            answered: BTreeMap::new(),
            answered_order: VecDeque::new(),
            late: BTreeMap::new(),
            conversation_grants: BTreeSet::new(),
            unvouched_scope,
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
        self.agent.as_ref()
    }

    /// The calls that ran in this session, oldest first: what, when, under which grant
    /// (at most [`crate::MAX_ACTIVITY`]; original §5.3).
    pub fn activity(&self) -> impl Iterator<Item = &Activity> + '_ {
        self.activity.entries()
    }

    /// How many calls are unanswered, and how many of them wait for a decision.
    pub fn pending(&self) -> (usize, usize) {
        let deciding = self.calls.values().filter(|c| c.stage.deciding()).count();
        (self.calls.len(), deciding)
    }

    // ---- inventory (R-INV-1..4, R-CAP-1) ----

    /// The session is established in `conversation`: announce the inventory (R-INV-1).
    pub(crate) fn establish(&mut self, conversation: ConversationId, out: &mut Vec<Out>) {
        self.conversation = Some(conversation);
        let decls = self.visible_decls();
        self.announce(decls, out);
    }

    /// Announces the current inventory again, under a new revision, when the session is
    /// established: for an agent that connects again (R-INV-1). Nothing before establishment.
    pub(crate) fn announce_again(&mut self, out: &mut Vec<Out>) {
        if self.conversation.is_some() {
            let decls = self.visible_decls();
            self.announce(decls, out);
        }
    }

    pub(crate) fn register(
        &mut self,
        capability: Capability,
        out: &mut Vec<Out>,
    ) -> Result<(), UsageError> {
        self.registry.register(capability)?;
        self.announce_if_changed(out);
        Ok(())
    }

    pub(crate) fn unregister(
        &mut self,
        name: &CapabilityName,
        out: &mut Vec<Out>,
    ) -> Result<(), UsageError> {
        self.registry.unregister(name)?;
        self.announce_if_changed(out);
        Ok(())
    }

    pub(crate) fn set_visible(
        &mut self,
        agent: &AgentIdentity,
        name: &CapabilityName,
        visible: bool,
        out: &mut Vec<Out>,
    ) {
        self.registry.set_visible(agent, name, visible);
        self.announce_if_changed(out);
    }

    /// Forgets the conversation-scoped "always" for `name` (grants of a vouched identity live in
    /// the store and are revoked there). Returns whether there was one.
    pub(crate) fn forget_conversation_grant(&mut self, name: &CapabilityName) -> bool {
        let before = self.conversation_grants.len();
        self.conversation_grants.retain(|(n, _)| n != name);
        before != self.conversation_grants.len()
    }

    /// Whose calls this session's are (R-CAP-5, R-SES-1): the vouched identity, else the
    /// session's unvouched identity: this process's scope when the embedder gave one, else this
    /// session's revision epoch, which no other session shares.
    fn owner(&self) -> AgentIdentity {
        if let Some(agent) = &self.agent {
            return agent.clone();
        }
        let scope = match &self.unvouched_scope {
            Some(scope) => scope.clone(),
            None => format!("session-{}", self.epoch.0),
        };
        let conversation = self
            .conversation
            .clone()
            .unwrap_or_else(|| ConversationId::known("unknown"));
        unvouched_identity(&scope, &conversation)
            .unwrap_or_else(|| AgentIdentity::known(format!("{UNVOUCHED_PREFIX}{scope}")))
    }

    /// Whose "always" decides this session's `user_confirmation` calls in the store: the
    /// vouched identity, else this process's unvouched identity for the conversation; `None`
    /// keeps them in memory (R-SES-1).
    fn grant_identity(&self) -> Option<AgentIdentity> {
        if let Some(agent) = &self.agent {
            return Some(agent.clone());
        }
        let scope = self.unvouched_scope.as_deref()?;
        unvouched_identity(scope, self.conversation.as_ref()?)
    }

    fn visible_decls(&self) -> Vec<CapabilityDecl> {
        self.registry
            .visible_to(self.agent.as_ref())
            .map(|c| c.decl().clone())
            .collect()
    }

    /// Announces again when what this agent sees changed; a change that does not affect this
    /// session (hiding from another agent) sends nothing.
    fn announce_if_changed(&mut self, out: &mut Vec<Out>) {
        let Some(previous) = &self.announced else {
            return;
        };
        let decls = self.visible_decls();
        if *previous != decls {
            self.announce(decls, out);
        }
    }

    /// The app center's enabled apps changed: an established session announces a new
    /// inventory revision with them (R-INV-2, R-INV-3); the same list announces nothing.
    pub(crate) fn set_applications(&mut self, applications: Vec<InventoryApp>, out: &mut Vec<Out>) {
        if applications == self.applications {
            return;
        }
        self.applications = applications;
        if self.announced.is_some() {
            let decls = self.visible_decls();
            self.announce(decls, out);
        }
    }

    fn announce(&mut self, decls: Vec<CapabilityDecl>, out: &mut Vec<Out>) {
        // R-INV-2: the epoch is handed out once by the store, so `rev-<epoch>-<n>` is never
        // reused, also across restarts.
        let revision = Revision::known(format!("rev-{}-{}", self.epoch.0, self.next_revision));
        self.next_revision += 1;
        let new: Vec<CapabilityName> = decls
            .iter()
            .map(|d| d.name.clone())
            .filter(|name| !self.offered.contains(name))
            .collect();
        self.offered.extend(new.iter().cloned());
        // R-INV-4: what a vouched identity was offered outlives the process, so that a call to
        // one withdrawn across a restart is `revoked` for it (to anyone else it stays unknown).
        if let (Some(agent), false) = (&self.agent, new.is_empty()) {
            out.push(Out::Effect(CapabilityEffect::RememberOffered {
                agent: agent.clone(),
                capabilities: new,
            }));
        }
        self.announced = Some(decls.clone());
        out.push(Out::Announce {
            inventory: ClientInventory {
                revision,
                standard_components: Vec::new(),
                applications: self.applications.clone(),
                capabilities: decls.clone(),
            },
            list: AppList {
                capabilities: decls,
            },
        });
    }

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
            .conversation
            .clone()
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
        if let Some(first) = self.calls.get(&call_id) {
            if let Some(reused) = reused(&first.subject.capability, &first.subject.digest, &subject)
            {
                return self.refuse(&subject, reused, sender, out);
            }
            if self.in_flight() >= self.limits.max_calls_in_flight {
                let answer = self.too_many_in_flight(&subject);
                return self.refuse(&subject, answer, sender, out);
            }
            if let Some(first) = self.calls.get_mut(&call_id) {
                first.to.push(sender);
            }
            return;
        }
        if let Some(done) = self.answered.get(&call_id) {
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
        if let Some(subject) = self.late.get(&ticket) {
            if !matches!(answer, Answer::Ran(_)) {
                return Err(wrong(ticket, "a handler result", &answer));
            }
            let subject = subject.clone();
            self.late.remove(&ticket);
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
        let Some(call_id) = self.tickets.get(&ticket).cloned() else {
            return Ok(());
        };
        let Some(call) = self.calls.get(&call_id) else {
            return Ok(());
        };
        let stage = call.stage;
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
        );
        if !fits {
            return Err(wrong(ticket, stage.expects(), &answer));
        }
        self.tickets.remove(&ticket);
        let Some(mut call) = self.calls.remove(&call_id) else {
            return Ok(());
        };
        if stage.deciding() && self.wall.now() >= call.expires_at {
            self.expire(call, out);
            return Ok(());
        }
        match answer {
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
        let due: Vec<CallId> = self
            .calls
            .iter()
            .filter(|(_, c)| match c.stage {
                Stage::Running { since } => monotonic.saturating_sub(since) >= timeout,
                Stage::Elsewhere { retry } => now >= c.expires_at || monotonic >= retry,
                stage => stage.deciding() && now >= c.expires_at,
            })
            .map(|(id, _)| id.clone())
            .collect();
        for id in due {
            let Some(call) = self.calls.remove(&id) else {
                continue;
            };
            self.tickets.remove(&call.ticket);
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
                self.late.insert(call.ticket, call.subject.clone());
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
        self.calls
            .values()
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
                _ => None,
            })
            .min()
    }

    /// An `app.call` refused before the pipeline (malformed, wrong sender, a table limit),
    /// answered with `status`: audited with its code and field, floods merged (R-CAP-6).
    pub(crate) fn audit_refusal(
        &mut self,
        err: &ProtocolError,
        status: Status,
        out: &mut Vec<Out>,
    ) {
        let now = self.wall.now();
        for record in self.refusals.record(err, status, self.agent.as_ref(), now) {
            out.push(Out::Effect(CapabilityEffect::Audit(record)));
        }
    }

    /// Writes out the merged refusals' counted records.
    pub(crate) fn flush_refusals(&mut self, out: &mut Vec<Out>) {
        let now = self.wall.now();
        for record in self.refusals.flush(self.agent.as_ref(), now) {
            out.push(Out::Effect(CapabilityEffect::Audit(record)));
        }
    }

    /// The session ends: every call still waiting for a lookup or a decision is cancelled and
    /// its prompt withdrawn. Running calls finish on their own.
    pub(crate) fn end(&mut self, out: &mut Vec<Out>) {
        self.flush_refusals(out);
        let waiting: Vec<CallId> = self
            .calls
            .iter()
            .filter(|(_, c)| c.stage.deciding() || c.stage == Stage::LookingUp)
            .map(|(id, _)| id.clone())
            .collect();
        // A call another process has is that process's to answer: dropped, nothing written.
        self.calls
            .retain(|_, c| !matches!(c.stage, Stage::Elsewhere { .. }));
        for id in waiting {
            let Some(call) = self.calls.remove(&id) else {
                continue;
            };
            self.tickets.remove(&call.ticket);
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

    fn looked_up(&mut self, call: Call, record: Option<CallRecord>, out: &mut Vec<Out>) {
        let Some(record) = record else {
            return self.admit(call, out);
        };
        // R-CAP-5, R-SES-1: a key's record answers only the identity that made it.
        if record.owner.as_ref() != Some(&self.owner()) {
            if self.agent.is_some() {
                // Another vouched identity's call (or an ownerless old one): this identity's
                // call is a new one, with its own consent and record.
                return self.admit(call, out);
            }
            let result = answer_with(
                &call.subject,
                Status::Failed,
                &format!(
                    "call_id {} was used before by another session or host process on this data directory; it is not run again (R-CAP-5)",
                    call.subject.key.call_id
                ),
                Some(ErrorCode::CallIdReused),
            );
            for to in call.to {
                self.refuse(&call.subject, result.clone(), to, out);
            }
            return;
        }
        if let Some(reused) = reused(&record.capability, &record.arguments_digest, &call.subject) {
            for to in call.to {
                self.refuse(&call.subject, reused.clone(), to, out);
            }
            return;
        }
        let result = match record.state {
            CallState::Finished { result } => result,
            // An unfinished record of a host that is gone (R-CAP-5).
            _ => self.recover(record, out),
        };
        self.finish_quietly(call, result, out);
    }

    /// Known and visible, not expired, valid arguments, then consent by risk.
    fn admit(&mut self, mut call: Call, out: &mut Vec<Out>) {
        let Some(capability) = self
            .registry
            .visible(&call.subject.capability, self.agent.as_ref())
            .cloned()
        else {
            // R-INV-4: unknown and hidden get the same answer; once offered, `revoked`.
            let name = &call.subject.capability;
            let result = if self.offered.contains(name) {
                answer_with(
                    &call.subject,
                    Status::Unsupported,
                    &format!("capability {name} was revoked; it is not run (R-INV-4)"),
                    Some(ErrorCode::Revoked),
                )
            } else {
                answer_with(
                    &call.subject,
                    Status::Unsupported,
                    &format!("capability {name} is not available on this host (R-INV-4)"),
                    None,
                )
            };
            return self.finish(
                call,
                result,
                Some((Decision::Denied, DecisionSource::Policy)),
                out,
            );
        };
        call.subject.version = Some(capability.version().clone());
        call.subject.risk = Some(capability.risk());
        if self.wall.now() >= call.expires_at {
            return self.expire(call, out);
        }
        if let Err(e) = capability.check(&call.arguments) {
            let at = if e.pointer.is_empty() {
                "/"
            } else {
                &e.pointer
            };
            let mut result = answer_with(
                &call.subject,
                Status::Failed,
                &format!(
                    "arguments at {at} break the input_schema rule {:?}: {} (R-CAP-2)",
                    e.rule, e.detail
                ),
                Some(ErrorCode::InvalidArguments),
            );
            if let Some(error) = result.error.as_mut() {
                error.field = Some(format!("payload.arguments{}", e.pointer));
            }
            return self.finish(
                call,
                result,
                Some((Decision::Denied, DecisionSource::Policy)),
                out,
            );
        }
        // R-CAP-4, R-CAP-6: the capability's own rules, before consent and in every grant
        // state; a policy refusal, never reported as the user's decision.
        if let Err(e) = capability.check_rules(&call.arguments) {
            let pointer = e.pointer();
            let mut result = answer_with(
                &call.subject,
                Status::Failed,
                &format!(
                    "arguments at {pointer} break the {} rule {:?}: {} {} (R-CAP-4); no prompt was shown",
                    capability.name(),
                    e.rule,
                    e.argument,
                    e.detail
                ),
                Some(ErrorCode::InvalidArguments),
            );
            if let Some(error) = result.error.as_mut() {
                error.field = Some(format!("payload.arguments{pointer}"));
                error.limit = e.limit.and_then(|l| u64::try_from(l).ok());
            }
            return self.finish(
                call,
                result,
                Some((Decision::Denied, DecisionSource::Policy)),
                out,
            );
        }
        let risk = capability.risk();
        let max = self.limits.max_waiting_consent;
        if risk != Risk::DisplayOnly && self.pending().1 >= max {
            let mut result = answer_with(
                &call.subject,
                Status::Failed,
                &format!(
                    "{max} calls of this session are waiting for consent; the limit is {max}; wait for an answer and retry"
                ),
                Some(ErrorCode::TooManyCalls),
            );
            if let Some(error) = result.error.as_mut() {
                error.limit = u64::try_from(max).ok();
            }
            return self.finish(
                call,
                result,
                Some((Decision::Denied, DecisionSource::Policy)),
                out,
            );
        }
        call.capability = Some(capability.clone());
        out.push(Out::Effect(CapabilityEffect::PersistCall {
            ack: None,
            record: self.record(&call.subject, CallState::Received),
        }));
        match risk {
            Risk::DisplayOnly => {
                self.decided(&mut call, Decision::Allowed, DecisionSource::Policy, out);
                self.persist_running(call, out);
            }
            Risk::UserConfirmation => match self.grant_identity() {
                // R-CAP-2: asked at every decision, so a revocation elsewhere holds at once.
                Some(agent) => {
                    let ticket = self.ticket();
                    out.push(Out::Effect(CapabilityEffect::CheckGrant {
                        ticket,
                        key: GrantKey {
                            agent,
                            capability: capability.name().clone(),
                            version: capability.version().clone(),
                        },
                    }));
                    self.wait(call, Stage::CheckingGrant, ticket);
                }
                None => {
                    let grant = (capability.name().clone(), capability.version().clone());
                    if self.conversation_grants.contains(&grant) {
                        self.decided(
                            &mut call,
                            Decision::Allowed,
                            DecisionSource::RememberedGrant,
                            out,
                        );
                        self.allowed(call, out);
                    } else {
                        self.prompt(call, out);
                    }
                }
            },
            // R-CAP-3: a prompt every time, never remembered, and the embedder's hook.
            Risk::SystemPermission | Risk::Restricted => self.prompt(call, out),
        }
    }

    fn prompt(&mut self, call: Call, out: &mut Vec<Out>) {
        let Some(summary) = self.summary(&call) else {
            return;
        };
        let ticket = self.ticket();
        out.push(Out::Effect(CapabilityEffect::PersistCall {
            ack: None,
            record: self.record(&call.subject, CallState::AwaitingConsent),
        }));
        out.push(Out::Effect(CapabilityEffect::Prompt(ConsentRequest {
            ticket,
            may_remember: summary.risk == Risk::UserConfirmation,
            call: summary,
            reason: call.reason.clone(),
            expires_at: call.expires_at,
        })));
        self.wait(call, Stage::Prompting, ticket);
    }

    fn consented(&mut self, mut call: Call, consent: ConsentAnswer, out: &mut Vec<Out>) {
        let Some(risk) = call.subject.risk else {
            return;
        };
        match consent {
            ConsentAnswer::Deny => {
                let result = answer_with(
                    &call.subject,
                    Status::Rejected,
                    "the user declined the call",
                    None,
                );
                self.finish(
                    call,
                    result,
                    Some((Decision::Denied, DecisionSource::Prompt)),
                    out,
                );
            }
            ConsentAnswer::Dismissed => {
                let result = answer_with(
                    &call.subject,
                    Status::Cancelled,
                    "the consent prompt was dismissed without an answer; the call did not run",
                    None,
                );
                self.finish(
                    call,
                    result,
                    Some((Decision::Cancelled, DecisionSource::Prompt)),
                    out,
                );
            }
            ConsentAnswer::Allow | ConsentAnswer::AllowAlways => {
                let always = consent == ConsentAnswer::AllowAlways && risk.may_be_remembered();
                let decision = if always {
                    Decision::AllowedAlways
                } else {
                    Decision::Allowed
                };
                self.decided(&mut call, decision, DecisionSource::Prompt, out);
                if always {
                    self.remember(&call, out);
                }
                self.allowed(call, out);
            }
        }
    }

    /// After the user's or a remembered grant: the permission check when the risk needs one
    /// (R-CAP-3) or the capability decides with a dialog of its own, else the run.
    fn allowed(&mut self, call: Call, out: &mut Vec<Out>) {
        let (Some(risk), Some(capability)) = (call.subject.risk, call.capability.as_ref()) else {
            return;
        };
        if risk.may_be_remembered() && !capability.asks_hook() {
            return self.persist_running(call, out);
        }
        let Some(summary) = self.summary(&call) else {
            return;
        };
        let ticket = self.ticket();
        out.push(Out::Effect(CapabilityEffect::Hook(HookRequest {
            ticket,
            expires_at: call.expires_at,
            call: summary,
        })));
        self.wait(call, Stage::Hook, ticket);
    }

    /// R-CAP-2, R-SES-1: a vouched identity's grant goes to the store; without one, it lasts
    /// the conversation.
    fn remember(&mut self, call: &Call, out: &mut Vec<Out>) {
        let Some(version) = call.subject.version.clone() else {
            return;
        };
        match self.grant_identity() {
            Some(agent) => {
                let note = if self.agent.is_some() {
                    "remembered for this agent identity"
                } else {
                    "remembered for this conversation of this host process only: no vouched agent identity"
                };
                out.push(Out::Effect(CapabilityEffect::RememberGrant(GrantRecord {
                    key: GrantKey {
                        agent,
                        capability: call.subject.capability.clone(),
                        version,
                    },
                    granted_at: self.wall.now(),
                    conversation_id: call.subject.key.conversation_id.clone(),
                    call_id: call.subject.key.call_id.clone(),
                })));
                self.audit(
                    &call.subject,
                    AuditKind::GrantRemembered,
                    Some(Decision::AllowedAlways),
                    Some(DecisionSource::Prompt),
                    note,
                    out,
                );
            }
            None => {
                self.conversation_grants
                    .insert((call.subject.capability.clone(), version));
                self.audit(
                    &call.subject,
                    AuditKind::GrantRemembered,
                    Some(Decision::AllowedAlways),
                    Some(DecisionSource::Prompt),
                    "remembered for this conversation only: no vouched agent identity",
                    out,
                );
            }
        }
    }

    /// R-CAP-5: the `running` record is written, and acknowledged, before the handler runs.
    fn persist_running(&mut self, call: Call, out: &mut Vec<Out>) {
        let ticket = self.ticket();
        out.push(Out::Effect(CapabilityEffect::PersistCall {
            ack: Some(ticket),
            record: self.record(&call.subject, CallState::Running),
        }));
        self.wait(call, Stage::Persisting, ticket);
    }

    fn run(&mut self, call: Call, monotonic: Duration, out: &mut Vec<Out>) {
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
            agent: self.agent.clone(),
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

    fn ran(&mut self, call: Call, outcome: Result<JsonObject, HandlerError>, out: &mut Vec<Out>) {
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
        self.finish(call, result, None, out);
    }

    fn expire(&mut self, call: Call, out: &mut Vec<Out>) {
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

    fn withdraw(&mut self, call: &Call, out: &mut Vec<Out>) {
        if matches!(call.stage, Stage::Prompting | Stage::Hook) {
            out.push(Out::Effect(CapabilityEffect::Withdraw(call.ticket)));
        }
    }

    /// Answers a call for good: its final record, its audit, one `app.result` to its sender and
    /// to every repeat that waited (R-CAP-4, R-CAP-5).
    fn finish(
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
    fn finish_quietly(&mut self, call: Call, result: AppResult, out: &mut Vec<Out>) {
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
        self.answered.insert(
            id.clone(),
            Answered {
                capability: call.subject.capability,
                digest: call.subject.digest,
                result,
            },
        );
        self.answered_order.push_back(id);
        while self.answered_order.len() > self.limits.max_remembered_answers {
            if let Some(old) = self.answered_order.pop_front() {
                self.answered.remove(&old);
            }
        }
    }

    /// An answer that is not the call's own (a reused key, a repeat, the in-flight cap): audited,
    /// never recorded under the key.
    fn refuse(&mut self, subject: &Subject, result: AppResult, to: Party, out: &mut Vec<Out>) {
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
    fn recover(&self, mut record: CallRecord, out: &mut Vec<Out>) -> AppResult {
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

    // ---- helpers ----

    fn ticket(&mut self) -> Ticket {
        let t = Ticket(self.next_ticket);
        self.next_ticket += 1;
        t
    }

    fn wait(&mut self, mut call: Call, stage: Stage, ticket: Ticket) {
        call.stage = stage;
        call.ticket = ticket;
        self.tickets
            .insert(ticket, call.subject.key.call_id.clone());
        self.calls.insert(call.subject.key.call_id.clone(), call);
    }

    /// Unanswered calls, counting every repeat that waits on one.
    fn in_flight(&self) -> usize {
        self.calls.values().map(|c| c.to.len()).sum()
    }

    fn too_many_in_flight(&self, subject: &Subject) -> AppResult {
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

    fn summary(&self, call: &Call) -> Option<CallSummary> {
        let capability = call.capability.as_ref()?;
        Some(CallSummary {
            key: call.subject.key.clone(),
            agent: self.agent.clone(),
            capability: capability.name().clone(),
            version: capability.version().clone(),
            risk: capability.risk(),
            arguments: call.arguments.clone(),
        })
    }

    /// Audits a decision; the first that allows the call is what it ran under (its activity).
    fn decided(
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

    fn record(&self, subject: &Subject, state: CallState) -> CallRecord {
        CallRecord {
            key: subject.key.clone(),
            epoch: self.epoch,
            agent: self.agent.clone(),
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

    fn audit_record(
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
            agent: self.agent.clone(),
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

    fn audit(
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
