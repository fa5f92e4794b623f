//! Withdrawing and hiding capabilities in a running host (R-INV-1, R-INV-4): the handle's
//! requests, and the watch of an operator's
//! [`CapabilityPolicy`] kept outside the process (`lineup capabilities`), applied by difference
//! whenever its change marker moves.

use std::collections::BTreeSet;
use std::rc::Rc;
use std::time::{Duration, Instant};

use lineup_host_core::{
    AgentIdentity, CapabilityName, CapabilityPolicy, PolicyRule, SessionEffects, Sessions,
};

use super::handle::{HostClosed, HostHandle, Inner};

/// How often the host looks at the policy's change marker.
const POLICY_POLL: Duration = Duration::from_millis(250);

/// The policy a host watches and the rules it applied last.
pub(super) struct PolicyWatch {
    policy: Rc<dyn CapabilityPolicy>,
    seen: Option<Option<u64>>,
    applied: BTreeSet<PolicyRule>,
    next: Instant,
}

impl PolicyWatch {
    /// Applies `policy`'s rules to `sessions` before any session is established, and watches
    /// it from then on; the effects are those of sessions opened already, if any.
    pub(super) fn start(
        policy: Rc<dyn CapabilityPolicy>,
        sessions: &mut Sessions,
    ) -> (Self, Vec<SessionEffects>) {
        let seen = policy.change_marker();
        let mut effects = Vec::new();
        let applied = match policy.rules() {
            Ok(rules) => rules,
            Err(e) => {
                tracing::error!("the capability policy cannot be read at start: {e}");
                BTreeSet::new()
            }
        };
        for rule in &applied {
            let done = match rule {
                PolicyRule::Withdrawn(name) if sessions.is_registered(name) => {
                    sessions.unregister_capability(name)
                }
                PolicyRule::Withdrawn(_) => Ok(Vec::new()),
                PolicyRule::Hidden(agent, name) => {
                    sessions.set_capability_visible(agent, name, false)
                }
            };
            match done {
                Ok(fx) => effects.extend(fx),
                Err(e) => {
                    let rule = match rule {
                        PolicyRule::Withdrawn(name) => format!("withdraw {name}"),
                        PolicyRule::Hidden(agent, name) => format!("hide {name} from {agent}"),
                    };
                    tracing::warn!("capability policy rule \"{rule}\" not applied: {e}");
                }
            }
        }
        let watch = Self {
            policy,
            seen: Some(seen),
            applied,
            next: Instant::now() + POLICY_POLL,
        };
        (watch, effects)
    }
}

impl HostHandle {
    /// Withdraws capability `name` from every session, open and future: each gets a new
    /// inventory without it, and a later call to it is answered `unsupported` with `revoked`
    /// (R-INV-4). A withdrawn capability comes back only when a host starts with it again.
    pub fn withdraw_capability(&self, name: CapabilityName) -> Result<(), HostClosed> {
        self.send(Inner::Withdraw { name })
    }

    /// Hides capability `name` from the vouched `agent` (`visible: false`) or shows it again:
    /// that agent's sessions get a new inventory; a call to a hidden one is `revoked` for a
    /// session that was offered it, and unknown to others (R-INV-4, R-ENV-5).
    pub fn set_capability_visible(
        &self,
        agent: AgentIdentity,
        name: CapabilityName,
        visible: bool,
    ) -> Result<(), HostClosed> {
        self.send(Inner::SetVisible {
            agent,
            name,
            visible,
        })
    }
}

/// What the host does about a change of the operator's policy.
pub(super) enum PolicyChange {
    /// Withdraw this capability from every session (R-INV-4).
    Withdraw(CapabilityName),
    /// Show this capability to this agent, or hide it.
    Visible(AgentIdentity, CapabilityName, bool),
}

impl PolicyWatch {
    /// Looks at the operator's policy when due and says what changed since it was last applied
    /// (a withdrawal only of a capability registered here); returns when to look again.
    pub(super) fn poll(&mut self, sessions: &Sessions) -> (Vec<PolicyChange>, Instant) {
        let now = Instant::now();
        if now < self.next {
            return (Vec::new(), self.next);
        }
        self.next = now + POLICY_POLL;
        let next = self.next;
        let marker = self.policy.change_marker();
        if self.seen == Some(marker) {
            return (Vec::new(), next);
        }
        let rules = match self.policy.rules() {
            Ok(rules) => rules,
            Err(e) => {
                tracing::error!("the capability policy cannot be read; the last one holds: {e}");
                return (Vec::new(), next);
            }
        };
        self.seen = Some(marker);
        let added: Vec<PolicyRule> = rules.difference(&self.applied).cloned().collect();
        let removed: Vec<PolicyRule> = self.applied.difference(&rules).cloned().collect();
        self.applied = rules;
        let mut changes = Vec::new();
        for rule in added {
            match rule {
                // Not registered here (never, or withdrawn already): nothing to withdraw.
                PolicyRule::Withdrawn(name) if sessions.is_registered(&name) => {
                    changes.push(PolicyChange::Withdraw(name));
                }
                PolicyRule::Withdrawn(_) => {}
                PolicyRule::Hidden(agent, name) => {
                    changes.push(PolicyChange::Visible(agent, name, false));
                }
            }
        }
        for rule in removed {
            match rule {
                PolicyRule::Withdrawn(name) => tracing::info!(
                    "capability {name} is no longer withdrawn; it is offered again when a host starts with it"
                ),
                PolicyRule::Hidden(agent, name) => {
                    changes.push(PolicyChange::Visible(agent, name, true));
                }
            }
        }
        (changes, next)
    }
}
