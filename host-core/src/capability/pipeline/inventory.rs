//! What a session announces: the capabilities it offers, their revisions, hiding and withdrawal,
//! the app center's applications (R-INV-1..4, R-CAP-1, R-CAP-2).

use crate::capability::Out;
use crate::{
    AgentIdentity, Capabilities, Capability, CapabilityDecl, CapabilityName, ConversationId,
    InventoryApp, StandardComponent, UsageError,
};

impl Capabilities {
    /// The session is established in `conversation`: announce the inventory (R-INV-1).
    pub(crate) fn establish(&mut self, conversation: ConversationId, out: &mut Vec<Out>) {
        self.grantee.establish(conversation);
        let decls = self.visible_decls();
        self.announce(decls, out);
    }

    /// Announces the current inventory again, under a new revision, when the session is
    /// established: for an agent that connects again (R-INV-1). Nothing before establishment.
    pub(crate) fn announce_again(&mut self, out: &mut Vec<Out>) {
        if self.grantee.conversation().is_some() {
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
        self.grantee.forget(name)
    }

    /// Whose calls this session's are (R-CAP-5, R-SES-1).
    pub(super) fn owner(&self) -> AgentIdentity {
        self.grantee.owner(self.announcements.epoch())
    }

    pub(super) fn visible_decls(&self) -> Vec<CapabilityDecl> {
        self.registry
            .visible_to(self.grantee.agent())
            .map(|c| c.decl().clone())
            .collect()
    }

    /// Announces again when what this agent sees changed; a change that does not affect this
    /// session (hiding from another agent) sends nothing.
    pub(super) fn announce_if_changed(&mut self, out: &mut Vec<Out>) {
        let decls = self.visible_decls();
        if self.announcements.differs(&decls) {
            self.announce(decls, out);
        }
    }

    /// The app center's enabled apps changed: an established session announces a new
    /// inventory revision with them (R-INV-2, R-INV-3); the same list announces nothing.
    pub(crate) fn set_applications(&mut self, applications: Vec<InventoryApp>, out: &mut Vec<Out>) {
        if self.announcements.set_applications(applications) && self.announcements.established() {
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
        if self.announcements.set_standard_components(components)
            && self.announcements.established()
        {
            let decls = self.visible_decls();
            self.announce(decls, out);
        }
    }

    pub(super) fn announce(&mut self, decls: Vec<CapabilityDecl>, out: &mut Vec<Out>) {
        self.announcements
            .announce(decls, self.grantee.agent(), out);
    }
}
