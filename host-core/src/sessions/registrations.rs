//! What the host registered for every session, replayed in each new one.

use crate::error::UsageError;
use crate::{AgentIdentity, Capability, CapabilityName};

/// The host's capability registrations and the capabilities it hid from an agent, in the order
/// they were made, given to every session and replayed in each new one.
///
/// Invariants: no two registrations share a name; a hidden pair is listed at most once.
#[derive(Debug, Default)]
pub(crate) struct Registrations {
    capabilities: Vec<Capability>,
    hidden: Vec<(AgentIdentity, CapabilityName)>,
}

impl Registrations {
    /// Registers `capability`, or refuses a name registered already.
    pub(crate) fn add(&mut self, capability: Capability) -> Result<(), UsageError> {
        if self.contains(capability.name()) {
            return Err(UsageError::CapabilityRegistered {
                name: capability.name().to_string(),
            });
        }
        self.capabilities.push(capability);
        Ok(())
    }

    /// Unregisters `name`, or says it was not registered.
    pub(crate) fn remove(&mut self, name: &CapabilityName) -> Result<(), UsageError> {
        let before = self.capabilities.len();
        self.capabilities.retain(|c| c.name() != name);
        if before == self.capabilities.len() {
            return Err(UsageError::CapabilityNotRegistered {
                name: name.to_string(),
            });
        }
        Ok(())
    }

    /// Whether `name` is registered.
    pub(crate) fn contains(&self, name: &CapabilityName) -> bool {
        self.capabilities.iter().any(|c| c.name() == name)
    }

    /// Hides `name` from `agent`, or shows it again.
    pub(crate) fn set_visible(
        &mut self,
        agent: &AgentIdentity,
        name: &CapabilityName,
        visible: bool,
    ) {
        self.hidden.retain(|(a, n)| !(a == agent && n == name));
        if !visible {
            self.hidden.push((agent.clone(), name.clone()));
        }
    }

    /// The registrations, in order.
    pub(crate) fn capabilities(&self) -> &[Capability] {
        &self.capabilities
    }

    /// What is hidden from whom.
    pub(crate) fn hidden(&self) -> &[(AgentIdentity, CapabilityName)] {
        &self.hidden
    }
}
