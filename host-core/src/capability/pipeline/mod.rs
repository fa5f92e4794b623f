//! The App Capability kernel of one session (R-SEC-5, R-CAP-1..6, R-INV-1..4).
//!
//! [`Capabilities`] is four parts, each a type with its own invariants: the [`Registry`], the
//! [`Grantee`](grantee::Grantee) (whose calls they are, the conversation's "always" answers),
//! the [`Announcements`](announcements::Announcements) (the inventory's revisions and what they
//! offered), and the [`Pipeline`](calls::Pipeline) of `app.call`s (its waiting calls in a
//! [`Ledger`](ledger::Ledger), what they leave behind in a [`Recorder`](recorder::Recorder)).
//! The pipeline's steps read the other three parts, and call the [`StorePort`], through a
//! [`Context`](context::Context); what decides a call ([`decide`]) and the answers it gets
//! ([`answers`]) are pure functions. `Capabilities` routes each input to the parts it concerns.

use std::fmt;
use std::time::Duration;

use crate::capability::activity::Activity;
use crate::capability::effect::{Answer, CapabilityEffect, CapabilitySetup, Ticket};
use crate::capability::port::{reported, StorePort};
use crate::capability::registry::{Capability, Registry};
use crate::error::{ProtocolError, UsageError};
use crate::ids::{AgentIdentity, CapabilityName, ConversationId, Status};
use crate::message::{AppCall, AppList, AppResult, ClientInventory, Envelope, Party};
use crate::{CapabilityDecl, InventoryApp, StandardComponent};

mod announcements;
mod answers;
mod call;
mod calls;
mod context;
mod decide;
mod grantee;
mod ledger;
mod recorder;

use announcements::Announcements;
use calls::Pipeline;
use context::Context;
use grantee::Grantee;

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

/// The capability state of one session: its registry, whose calls they are, what it announced,
/// its calls.
///
/// Invariant: an inventory is announced whenever what this session's agent sees changes, and
/// only once the session is established (R-INV-1, R-INV-2); every call is decided against the
/// registry and grants as they are when its step runs (R-CAP-2).
pub struct Capabilities {
    /// What the embedder registered, and whom each capability is hidden from.
    registry: Registry,
    /// Whose calls these are; the conversation's own "always" answers.
    grantee: Grantee,
    /// What this session announced, under which revisions.
    announcements: Announcements,
    /// The `app.call`s, and what they left behind.
    pipeline: Pipeline,
    /// Where the calls, grants, audit and offered names are kept.
    store: StorePort,
}

impl fmt::Debug for Capabilities {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Capabilities")
            .field("registry", &self.registry)
            .field("agent", &self.grantee.agent())
            .field("epoch", &self.announcements.epoch())
            .field("calls", &self.pipeline.pending().0)
            .finish_non_exhaustive()
    }
}

impl Capabilities {
    /// Starts from `setup`, keeping its records in `store`: every unfinished record `setup`
    /// carries is finished (R-CAP-5).
    pub(crate) fn new(
        setup: CapabilitySetup,
        max_lifetime: Duration,
        store: StorePort,
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
        let mut me = Self {
            registry: Registry::default(),
            grantee: Grantee::new(agent, unvouched_scope),
            announcements: Announcements::new(revision_epoch, offered_before),
            pipeline: Pipeline::new(wall_clock, limits, max_lifetime),
            store,
        };
        let (pipeline, cx) = me.parts();
        for record in unfinished {
            pipeline.recover(record, &cx);
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
        self.pipeline.activity()
    }

    /// How many calls are unanswered, and how many of them wait for a decision.
    pub fn pending(&self) -> (usize, usize) {
        self.pipeline.pending()
    }

    // ---- the pipeline (R-SEC-5, R-CAP-2..6) ----

    /// An accepted `app.call` of the established conversation, at `monotonic`.
    pub(crate) fn call(&mut self, env: Envelope<AppCall>, monotonic: Duration, out: &mut Vec<Out>) {
        let (pipeline, cx) = self.parts();
        pipeline.call(env, monotonic, &cx, out);
    }

    /// The platform answers `ticket`.
    pub(crate) fn answered(
        &mut self,
        ticket: Ticket,
        answer: Answer,
        monotonic: Duration,
        out: &mut Vec<Out>,
    ) -> Result<(), UsageError> {
        let (pipeline, mut cx) = self.parts();
        pipeline.answered((ticket, answer), monotonic, &mut cx, out)
    }

    /// Expires calls whose deadline passed while they waited for a decision (withdrawing their
    /// prompt), and fails handlers that overran their timeout.
    pub(crate) fn poll(&mut self, monotonic: Duration, out: &mut Vec<Out>) {
        let (pipeline, cx) = self.parts();
        pipeline.poll(monotonic, &cx, out);
    }

    /// How long until `poll` has something to do, if anything waits on a deadline.
    pub(crate) fn next_wakeup(&self, monotonic: Duration) -> Option<Duration> {
        self.pipeline.next_wakeup(monotonic)
    }

    /// The session ends: every call still waiting for a lookup or a decision is cancelled and
    /// its prompt withdrawn. Running calls finish on their own.
    pub(crate) fn end(&mut self, out: &mut Vec<Out>) {
        let (pipeline, cx) = self.parts();
        pipeline.end(&cx, out);
    }

    /// An `app.call` refused before the pipeline (malformed, wrong sender, a table limit),
    /// answered with `status`: audited with its code and field, floods merged (R-CAP-6).
    pub(crate) fn audit_refusal(&mut self, err: &ProtocolError, status: Status) {
        let (pipeline, cx) = self.parts();
        pipeline.audit_refusal(err, status, &cx);
    }

    /// Writes out the merged refusals' counted records.
    pub(crate) fn flush_refusals(&mut self) {
        let (pipeline, cx) = self.parts();
        pipeline.flush_refusals(&cx);
    }

    /// The pipeline, and the other parts its steps read.
    fn parts(&mut self) -> (&mut Pipeline, Context<'_>) {
        let cx = Context::new(
            &self.registry,
            &mut self.grantee,
            &self.announcements,
            &self.store,
        );
        (&mut self.pipeline, cx)
    }

    // ---- the inventory (R-INV-1..4, R-CAP-1, R-CAP-2) ----

    /// The session is established in `conversation`: announce the inventory (R-INV-1).
    pub(crate) fn establish(&mut self, conversation: ConversationId, out: &mut Vec<Out>) {
        self.grantee.establish(conversation);
        self.announce(out);
    }

    /// Announces the current inventory again, under a new revision, when the session is
    /// established: for an agent that connects again (R-INV-1). Nothing before establishment.
    pub(crate) fn announce_again(&mut self, out: &mut Vec<Out>) {
        if self.grantee.conversation().is_some() {
            self.announce(out);
        }
    }

    /// Registers `capability`; the inventory is announced again if this agent sees it.
    pub(crate) fn register(
        &mut self,
        capability: Capability,
        out: &mut Vec<Out>,
    ) -> Result<(), UsageError> {
        self.registry.register(capability)?;
        self.announce_if_changed(out);
        Ok(())
    }

    /// Withdraws `name`; the inventory is announced again if this agent saw it (R-INV-4).
    pub(crate) fn unregister(
        &mut self,
        name: &CapabilityName,
        out: &mut Vec<Out>,
    ) -> Result<(), UsageError> {
        self.registry.unregister(name)?;
        self.announce_if_changed(out);
        Ok(())
    }

    /// Shows or hides `name` from `agent`; the inventory is announced again if this session's
    /// agent is the one.
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
        self.grantee.forget(name)
    }

    /// The app center's enabled apps changed: an established session announces a new
    /// inventory revision with them (R-INV-2, R-INV-3); the same list announces nothing.
    pub(crate) fn set_applications(&mut self, applications: Vec<InventoryApp>, out: &mut Vec<Out>) {
        if self.announcements.set_applications(applications) && self.announcements.established() {
            self.announce(out);
        }
    }

    /// The standard components the driver renders changed: an established session announces a
    /// new inventory revision (R-STD-14, R-INV-2); the same list announces nothing.
    pub(crate) fn set_standard_components(
        &mut self,
        components: Vec<StandardComponent>,
        out: &mut Vec<Out>,
    ) {
        if self.announcements.set_standard_components(components)
            && self.announcements.established()
        {
            self.announce(out);
        }
    }

    /// What of MCP App views the inventory lists (R-MCP-13): set before the first
    /// announcement; a change in an established session announces a new revision.
    pub(crate) fn set_mcp_apps(
        &mut self,
        mcp_apps: Option<crate::mcp_host::McpAppsInventory>,
        out: &mut Vec<Out>,
    ) {
        if self.announcements.set_mcp_apps(mcp_apps) && self.announcements.established() {
            self.announce(out);
        }
    }

    /// What this session's agent sees now.
    fn visible_decls(&self) -> Vec<CapabilityDecl> {
        self.registry
            .visible_to(self.grantee.agent())
            .map(|c| c.decl().clone())
            .collect()
    }

    /// Announces what this session's agent sees now, under the next revision; a vouched
    /// agent's newly offered names are remembered in the store (R-INV-4).
    fn announce(&mut self, out: &mut Vec<Out>) {
        let decls = self.visible_decls();
        let new = self.announcements.announce(decls, out);
        if let (Some(agent), false) = (self.grantee.agent(), new.is_empty()) {
            reported(self.store.remember_offered(agent, &new));
        }
    }

    /// Announces again when what this agent sees changed; a change that does not affect this
    /// session (hiding from another agent) sends nothing.
    fn announce_if_changed(&mut self, out: &mut Vec<Out>) {
        if self.announcements.differs(&self.visible_decls()) {
            self.announce(out);
        }
    }
}
