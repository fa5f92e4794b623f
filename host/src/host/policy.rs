//! Withdrawing and hiding capabilities in a running host (R-INV-1, R-INV-4): `impl Host` and
//! `impl HostHandle` apart from `host.rs`, and the watch of an operator's
//! [`CapabilityPolicy`] kept outside the process (`lineup capabilities`), applied by difference
//! whenever its change marker moves.

use std::collections::BTreeSet;
use std::rc::Rc;
use std::time::{Duration, Instant};

use lineup_host_core::{
    AgentIdentity, CapabilityName, CapabilityPolicy, PolicyRule, SessionEffects, Sessions,
};
use lineup_webview_shell::tao::event_loop::EventLoopWindowTarget;

use super::{Host, HostClosed, HostEvent, HostHandle, Inner};

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

impl Host {
    /// [`HostHandle::withdraw_capability`] on the loop thread; `false` when no capability of
    /// that name was registered.
    pub fn withdraw_capability(
        &mut self,
        name: &CapabilityName,
        target: &EventLoopWindowTarget<HostEvent>,
    ) -> bool {
        match self.sessions.unregister_capability(name) {
            Ok(effects) => {
                tracing::info!("capability {name} withdrawn from every session (R-INV-4)");
                for fx in effects {
                    self.apply(fx, None, target);
                }
                true
            }
            Err(e) => {
                tracing::warn!("capability {name} not withdrawn: {e}");
                false
            }
        }
    }

    /// [`HostHandle::set_capability_visible`] on the loop thread.
    pub fn set_capability_visible(
        &mut self,
        agent: &AgentIdentity,
        name: &CapabilityName,
        visible: bool,
        target: &EventLoopWindowTarget<HostEvent>,
    ) {
        match self.sessions.set_capability_visible(agent, name, visible) {
            Ok(effects) => {
                let state = if visible { "shown to" } else { "hidden from" };
                tracing::info!("capability {name} {state} agent {agent}");
                for fx in effects {
                    self.apply(fx, None, target);
                }
            }
            Err(e) => tracing::warn!("capability {name}: visibility not changed: {e}"),
        }
    }

    /// Looks at the operator's policy when due and applies what changed; returns when to look
    /// again.
    pub(super) fn poll_policy(
        &mut self,
        target: &EventLoopWindowTarget<HostEvent>,
    ) -> Option<Instant> {
        let watch = self.policy.as_mut()?;
        let now = Instant::now();
        if now < watch.next {
            return Some(watch.next);
        }
        watch.next = now + POLICY_POLL;
        let next = watch.next;
        let marker = watch.policy.change_marker();
        if watch.seen == Some(marker) {
            return Some(next);
        }
        let rules = match watch.policy.rules() {
            Ok(rules) => rules,
            Err(e) => {
                tracing::error!("the capability policy cannot be read; the last one holds: {e}");
                return Some(next);
            }
        };
        watch.seen = Some(marker);
        let added: Vec<PolicyRule> = rules.difference(&watch.applied).cloned().collect();
        let removed: Vec<PolicyRule> = watch.applied.difference(&rules).cloned().collect();
        watch.applied = rules;
        for rule in added {
            match rule {
                PolicyRule::Withdrawn(name) => {
                    // Not registered here (never, or withdrawn already): nothing to withdraw.
                    if self.sessions.is_registered(&name) {
                        self.withdraw_capability(&name, target);
                    }
                }
                PolicyRule::Hidden(agent, name) => {
                    self.set_capability_visible(&agent, &name, false, target);
                }
            }
        }
        for rule in removed {
            match rule {
                PolicyRule::Withdrawn(name) => tracing::info!(
                    "capability {name} is no longer withdrawn; it is offered again when a host starts with it"
                ),
                PolicyRule::Hidden(agent, name) => {
                    self.set_capability_visible(&agent, &name, true, target);
                }
            }
        }
        Some(next)
    }
}
