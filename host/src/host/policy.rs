//! Withdrawing and hiding capabilities in a running host (R-INV-1, R-INV-4), as the handle asks
//! ([`HostHandle::withdraw_capability`](super::HostHandle::withdraw_capability)) or as the
//! operator's [`CapabilityPolicy`] kept outside the process (`lineup capabilities`) says: its
//! watch, applied by difference whenever its change marker moves.

use std::collections::BTreeSet;
use std::rc::Rc;
use std::time::{Duration, Instant};

use lineup_host_core::{
    AgentIdentity, AppCatalog, CapabilityName, CapabilityPolicy, PolicyRule, SessionEffects,
    Sessions,
};

use super::factory::AppsWatch;

/// Withdraws capability `name` from every session of `sessions` (R-INV-4): the effects to carry
/// out, or `None` when no capability of that name was registered.
pub(super) fn withdraw(
    sessions: &mut Sessions,
    name: &CapabilityName,
) -> Option<Vec<SessionEffects>> {
    match sessions.unregister_capability(name) {
        Ok(effects) => {
            tracing::info!("capability {name} withdrawn from every session (R-INV-4)");
            Some(effects)
        }
        Err(e) => {
            tracing::warn!("capability {name} not withdrawn: {e}");
            None
        }
    }
}

/// Shows capability `name` to the vouched `agent` (`visible`) or hides it from that agent
/// (R-INV-4): the effects to carry out, or `None` when its visibility was not changed.
pub(super) fn set_visible(
    sessions: &mut Sessions,
    agent: &AgentIdentity,
    name: &CapabilityName,
    visible: bool,
) -> Option<Vec<SessionEffects>> {
    match sessions.set_capability_visible(agent, name, visible) {
        Ok(effects) => {
            let state = if visible { "shown to" } else { "hidden from" };
            tracing::info!("capability {name} {state} agent {agent}");
            Some(effects)
        }
        Err(e) => {
            tracing::warn!("capability {name}: visibility not changed: {e}");
            None
        }
    }
}

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

/// What the host watches outside the process, each looked at when due: the app center's
/// change marker (R-UI-9) and the operator's capability policy.
pub(super) struct Watches {
    apps: Option<AppsWatch>,
    policy: Option<PolicyWatch>,
}

impl Watches {
    /// Watches the app center `apps` from now on, and `policy`, started already.
    pub(super) fn new(apps: Option<Rc<dyn AppCatalog>>, policy: Option<PolicyWatch>) -> Self {
        Self {
            apps: apps.map(AppsWatch::new),
            policy,
        }
    }

    /// Whether the app center's change marker moved since the last look, and when to look
    /// again; `None` without an app center.
    pub(super) fn poll_apps(&mut self) -> Option<(bool, Instant)> {
        self.apps.as_mut().map(AppsWatch::poll)
    }

    /// What changed in the operator's policy since it was last applied to `sessions`, and when
    /// to look again; `None` without a policy.
    pub(super) fn poll_policy(
        &mut self,
        sessions: &Sessions,
    ) -> Option<(Vec<PolicyChange>, Instant)> {
        self.policy.as_mut().map(|policy| policy.poll(sessions))
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
