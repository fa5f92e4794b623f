//! What a step of the `app.call` pipeline reads of the kernel besides the calls: what is
//! registered and visible, whose calls they are, what was offered, and the store it keeps its
//! records in (R-CAP-5, R-INV-4, R-SES-1).

use super::announcements::Announcements;
use super::grantee::Grantee;
use crate::capability::port::StorePort;
use crate::capability::registry::{Capability, Registry};
use crate::capability::store::RevisionEpoch;
use crate::ids::{AgentIdentity, CapabilityName, ConversationId};

/// The kernel's other parts, borrowed for one input: the registry and the announcements to
/// read, the grantee to read and to give a conversation's "always" to, the store port to call.
///
/// Invariant: it lives no longer than the one input it was made for, so what it reads is what
/// the kernel holds now.
pub(super) struct Context<'a> {
    registry: &'a Registry,
    grantee: &'a mut Grantee,
    announcements: &'a Announcements,
    store: &'a StorePort,
}

impl<'a> Context<'a> {
    /// The parts of one kernel, and its store.
    pub(super) fn new(
        registry: &'a Registry,
        grantee: &'a mut Grantee,
        announcements: &'a Announcements,
        store: &'a StorePort,
    ) -> Self {
        Self {
            registry,
            grantee,
            announcements,
            store,
        }
    }

    /// The store, called where a step needs a durable read or write (the store module's
    /// table).
    pub(super) fn store(&self) -> &StorePort {
        self.store
    }

    /// The vouched agent identity, if any.
    pub(super) fn agent(&self) -> Option<&AgentIdentity> {
        self.grantee.agent()
    }

    /// Whose calls these are (R-CAP-5, R-SES-1).
    pub(super) fn owner(&self) -> AgentIdentity {
        self.grantee.owner(self.announcements.epoch())
    }

    /// The session's revision epoch, which the records of its calls carry.
    pub(super) fn epoch(&self) -> RevisionEpoch {
        self.announcements.epoch()
    }

    /// The conversation, once the session is established.
    pub(super) fn conversation(&self) -> Option<&ConversationId> {
        self.grantee.conversation()
    }

    /// The capability `name`, when it is registered and visible to this session's agent.
    pub(super) fn visible(&self, name: &CapabilityName) -> Option<&Capability> {
        self.registry.visible(name, self.grantee.agent())
    }

    /// Whether `name` was ever offered to this session (or its vouched agent before).
    pub(super) fn was_offered(&self, name: &CapabilityName) -> bool {
        self.announcements.was_offered(name)
    }

    /// Whose calls these are, and the conversation's "always" answers.
    pub(super) fn grantee(&self) -> &Grantee {
        self.grantee
    }

    /// The grantee, to give the conversation an "always" answer.
    pub(super) fn grantee_mut(&mut self) -> &mut Grantee {
        self.grantee
    }
}
