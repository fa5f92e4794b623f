//! A session's App Capability kernel, once enabled: the inventory it announces, the embedder's
//! registrations, the platform's answers, and `app.call`, its output turned into the session's
//! effects and envelopes (R-SEC-5, R-INV-1..4, R-CAP-1..6).

use std::time::Duration;

use super::common::Common;
use crate::capability::Out;
use crate::session_config::SessionConfig;
use crate::{
    AgentIdentity, Answer, AppCall, AppResult, BundlePolicy, Capabilities, Capability,
    CapabilityName, CapabilitySetup, ConversationId, Effect, Envelope, ErrorCode, InventoryApp,
    ProtocolError, Status, Ticket, UsageError,
};

const NOT_ENABLED: UsageError = UsageError::Capabilities {
    reason: "are not enabled in this session; call Session::enable_capabilities first",
};

/// The session's capability kernel, once enabled; until then every `app.call` is answered
/// `unsupported`.
///
/// Invariant: enabled at most once; every output of the kernel becomes an effect or an
/// envelope built by the session's [`Common`], none is dropped except the answers of a session
/// whose agent is gone ([`CapabilitySlot::end`]).
#[derive(Default)]
pub(super) struct CapabilitySlot {
    kernel: Option<Capabilities>,
}

impl CapabilitySlot {
    /// The kernel, once enabled.
    pub(super) fn get(&self) -> Option<&Capabilities> {
        self.kernel.as_ref()
    }

    /// Enables the kernel with `registered` and `hidden` in place before its first inventory.
    pub(super) fn start(
        &mut self,
        setup: CapabilitySetup,
        (registered, hidden): (&[Capability], &[(AgentIdentity, CapabilityName)]),
        common: &mut Common,
    ) -> Result<Vec<Effect>, UsageError> {
        if self.kernel.is_some() {
            return Err(UsageError::Capabilities {
                reason: "are enabled already in this session",
            });
        }
        let mut out = Vec::new();
        let lifetime = common.limits().max_call_lifetime;
        let store = common.store().clone();
        let mut caps = Capabilities::new(setup, lifetime, store)?;
        for capability in registered {
            caps.register(capability.clone(), &mut out)?;
        }
        for (agent, name) in hidden {
            caps.set_visible(agent, name, false, &mut out);
        }
        let config = common.config();
        if config.app_catalog.is_some() {
            caps.set_applications(listed_applications(config), &mut out);
        }
        caps.set_standard_components(config.standard_components.inventory(), &mut out);
        let mcp_apps = config
            .mcp_apps
            .as_ref()
            .map(crate::mcp_host::McpAppsInventory::of);
        caps.set_mcp_apps(mcp_apps, &mut out);
        if let Some(conversation) = common.conversation().cloned() {
            caps.establish(conversation, &mut out);
        }
        self.kernel = Some(caps);
        Ok(effects(out, common))
    }

    /// Runs `f` on the kernel and turns its output into effects; [`UsageError`] when it is not
    /// enabled.
    pub(super) fn with(
        &mut self,
        common: &mut Common,
        f: impl FnOnce(&mut Capabilities, &mut Vec<Out>) -> Result<(), UsageError>,
    ) -> Result<Vec<Effect>, UsageError> {
        let caps = self.kernel.as_mut().ok_or(NOT_ENABLED)?;
        let mut out = Vec::new();
        f(caps, &mut out)?;
        Ok(effects(out, common))
    }

    /// [`CapabilitySlot::with`], nothing when the kernel is not enabled.
    pub(super) fn with_enabled(
        &mut self,
        common: &mut Common,
        f: impl FnOnce(&mut Capabilities, &mut Vec<Out>),
    ) -> Vec<Effect> {
        self.with(common, |caps, out| {
            f(caps, out);
            Ok(())
        })
        .unwrap_or_default()
    }

    /// The session is established in `conversation`: the kernel announces its inventory.
    pub(super) fn establish(
        &mut self,
        conversation: &ConversationId,
        common: &mut Common,
    ) -> Vec<Effect> {
        self.with_enabled(common, |caps, out| {
            caps.establish(conversation.clone(), out)
        })
    }

    /// The app center changed: the inventory lists the apps this session would open now.
    pub(super) fn apps_changed(&mut self, common: &mut Common) -> Vec<Effect> {
        let applications = listed_applications(common.config());
        self.with_enabled(common, |caps, out| caps.set_applications(applications, out))
    }

    /// The standard components offered changed: the inventory lists them (R-INV-2).
    pub(super) fn components_changed(&mut self, common: &mut Common) -> Vec<Effect> {
        let inventory = common.config().standard_components.inventory();
        self.with_enabled(common, |caps, out| {
            caps.set_standard_components(inventory, out)
        })
    }

    /// Forgets the conversation-scoped "always" for `name`.
    pub(super) fn forget_conversation_grant(
        &mut self,
        name: &CapabilityName,
    ) -> Result<bool, UsageError> {
        let caps = self.kernel.as_mut().ok_or(NOT_ENABLED)?;
        Ok(caps.forget_conversation_grant(name))
    }

    /// How long until the kernel has work, if any call waits on a deadline.
    pub(super) fn next_wakeup(&self, now: Duration) -> Option<Duration> {
        self.kernel.as_ref()?.next_wakeup(now)
    }

    /// The agent's stream ended: calls still waiting for a decision are cancelled
    /// (their prompts withdrawn, their records finished, audited); running ones finish on their
    /// own. The agent is gone: its answers are on record, none is sent.
    pub(super) fn end(&mut self, common: &mut Common) -> Vec<Effect> {
        let Some(caps) = self.kernel.as_mut() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        caps.end(&mut out);
        out.retain(|o| matches!(o, Out::Effect(_)));
        effects(out, common)
    }

    /// R-CAP-6: a refused call (`err` names its `call_id`) is audited with its reason, never
    /// its payload.
    pub(super) fn audit_refusal(&mut self, err: &ProtocolError) {
        let (Some(caps), Some(_)) = (self.kernel.as_mut(), &err.call_id) else {
            return;
        };
        let status = if err.code == ErrorCode::Unsupported {
            Status::Unsupported
        } else {
            Status::Failed
        };
        caps.audit_refusal(err, status);
    }

    /// Writes out the merged refusals' counted audit records (R-CAP-6).
    pub(super) fn flush_refusals(&mut self) {
        if let Some(caps) = self.kernel.as_mut() {
            caps.flush_refusals();
        }
    }

    /// The platform's `answer` to `ticket`, at `now`.
    pub(super) fn answered(
        &mut self,
        (ticket, answer): (Ticket, Answer),
        common: &mut Common,
    ) -> Result<Vec<Effect>, UsageError> {
        let now = common.now();
        self.with(common, |caps, out| caps.answered(ticket, answer, now, out))
    }

    /// R-SEC-5: the kernel decides; without it every call is answered `unsupported` (R-ENV-5).
    pub(super) fn call(&mut self, env: Envelope<AppCall>, common: &mut Common) -> Vec<Effect> {
        if let Some(caps) = self.kernel.as_mut() {
            let mut out = Vec::new();
            caps.call(env, common.now(), &mut out);
            return effects(out, common);
        }
        let payload = AppResult {
            call_id: env.payload.call_id,
            status: Status::Unsupported,
            result: None,
            message: Some(format!(
                "capability {} is not available on this host",
                env.payload.capability
            )),
            error: None,
        };
        vec![Effect::Send(common.outbound(payload, Some(env.sender)))]
    }
}

/// Turns the capability kernel's output into effects; every envelope is built here.
fn effects(out: Vec<Out>, common: &mut Common) -> Vec<Effect> {
    let mut fx = Vec::with_capacity(out.len());
    for item in out {
        match item {
            Out::Effect(effect) => fx.push(Effect::Capability(effect)),
            Out::Answer { result, to } => fx.push(Effect::Send(common.outbound(result, Some(to)))),
            Out::Announce { inventory, list } => {
                fx.push(Effect::Send(common.outbound(inventory, None)));
                fx.push(Effect::Send(common.outbound(list, None)));
            }
        }
    }
    fx
}

/// The catalog's apps a session under `config` would open, for the inventory: every enabled,
/// verified app, less those the bundle policy refuses (R-INV-1, R-INV-3: `signed-only` lists
/// only apps installed with a trusted signature).
fn listed_applications(config: &SessionConfig) -> Vec<InventoryApp> {
    let Some(catalog) = &config.app_catalog else {
        return Vec::new();
    };
    let signed_only = config.bundle_policy == BundlePolicy::SignedOnly;
    catalog
        .0
        .applications()
        .into_iter()
        .filter(|listed| !signed_only || listed.signed_by.is_some())
        .map(|listed| listed.app)
        .collect()
}
