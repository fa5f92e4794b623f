//! What a session announces: the capabilities it offers, their revisions, hiding and withdrawal,
//! the app center's applications (R-INV-1..4, R-CAP-1, R-CAP-2).

use crate::capability::Out;
use crate::{
    unvouched_identity, AgentIdentity, AppList, Capabilities, Capability, CapabilityDecl,
    CapabilityEffect, CapabilityName, ClientInventory, ConversationId, InventoryApp, Revision,
    StandardComponent, UsageError, UNVOUCHED_PREFIX,
};

impl Capabilities {
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
    pub(super) fn owner(&self) -> AgentIdentity {
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
    pub(super) fn grant_identity(&self) -> Option<AgentIdentity> {
        if let Some(agent) = &self.agent {
            return Some(agent.clone());
        }
        let scope = self.unvouched_scope.as_deref()?;
        unvouched_identity(scope, self.conversation.as_ref()?)
    }

    pub(super) fn visible_decls(&self) -> Vec<CapabilityDecl> {
        self.registry
            .visible_to(self.agent.as_ref())
            .map(|c| c.decl().clone())
            .collect()
    }

    /// Announces again when what this agent sees changed; a change that does not affect this
    /// session (hiding from another agent) sends nothing.
    pub(super) fn announce_if_changed(&mut self, out: &mut Vec<Out>) {
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

    /// The standard components the driver renders changed: an established session announces a
    /// new inventory revision (R-STD-14, R-INV-2); the same list announces nothing.
    pub(crate) fn set_standard_components(
        &mut self,
        components: Vec<StandardComponent>,
        out: &mut Vec<Out>,
    ) {
        if components == self.standard_components {
            return;
        }
        self.standard_components = components;
        if self.announced.is_some() {
            let decls = self.visible_decls();
            self.announce(decls, out);
        }
    }

    pub(super) fn announce(&mut self, decls: Vec<CapabilityDecl>, out: &mut Vec<Out>) {
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
                standard_components: self.standard_components.clone(),
                applications: self.applications.clone(),
                capabilities: decls.clone(),
            },
            list: AppList {
                capabilities: decls,
            },
        });
    }
}
