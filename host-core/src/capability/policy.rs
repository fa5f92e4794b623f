//! The operator's capability policy, kept outside the process (R-INV-1, R-INV-4): which
//! capabilities are withdrawn from every agent and which are hidden from one vouched agent. A
//! running host reads it when its change marker moves and applies the difference: every
//! affected session gets a new inventory, and a call to what it no longer offers is `revoked`.

use std::collections::BTreeSet;

use crate::ids::{AgentIdentity, CapabilityName};

/// One rule of the policy.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PolicyRule {
    /// Withdrawn from every agent: unregistered in a running host (it comes back only when a
    /// host starts without this rule), never offered by one that starts with it.
    Withdrawn(CapabilityName),
    /// Hidden from one vouched agent; shown again when the rule goes.
    Hidden(AgentIdentity, CapabilityName),
}

/// Where a host reads the operator's capability policy (`lineup-store`'s `Store` is one).
pub trait CapabilityPolicy {
    /// Every rule in force. A policy that cannot be read returns `Err` with why, and the host
    /// keeps the rules it applied last.
    ///
    /// # Errors
    /// Why the policy could not be read.
    fn rules(&self) -> Result<BTreeSet<PolicyRule>, String>;

    /// A value that changes whenever the rules may have changed, also through another process.
    fn change_marker(&self) -> Option<u64>;
}
