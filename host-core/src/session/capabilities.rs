//! The session's App Capability kernel: enabling it, the inventory it announces, the embedder's
//! registrations, the platform's answers, and `app.call` (R-SEC-5, R-INV-1..4, R-CAP-1..6).

use crate::session::{Duration, Out, NOT_ENABLED};
use crate::{
    AgentIdentity, Answer, AppCall, AppResult, BundlePolicy, Capabilities, Capability,
    CapabilityName, CapabilitySetup, CatalogRefusal, Effect, Envelope, GoneReason, InventoryApp,
    Session, Status, SurfaceKey, Ticket, UsageError,
};

impl Session {
    /// Turns the App Capability kernel on (once): registration, `client.inventory` and
    /// `app.list`, and the `app.call` pipeline. The unfinished records in `setup` are finished
    /// now (R-CAP-5). If the conversation is configured, the session is established and the
    /// inventory comes out now; otherwise it comes before the answer to the first accepted
    /// envelope (R-INV-1).
    pub fn enable_capabilities(
        &mut self,
        setup: CapabilitySetup,
    ) -> Result<Vec<Effect>, UsageError> {
        self.start_capabilities(setup, &[], &[])
    }

    /// [`Session::enable_capabilities`] with the host's registrations and hidden capabilities
    /// already in place before the session is established, so its first inventory lists them
    /// (the session table fans its registrations out this way).
    pub(crate) fn start_capabilities(
        &mut self,
        setup: CapabilitySetup,
        registered: &[Capability],
        hidden: &[(AgentIdentity, CapabilityName)],
    ) -> Result<Vec<Effect>, UsageError> {
        if self.capabilities.is_some() {
            return Err(UsageError::Capabilities {
                reason: "are enabled already in this session",
            });
        }
        let mut out = Vec::new();
        let mut caps = Capabilities::new(setup, self.config.limits.max_call_lifetime, &mut out)?;
        for capability in registered {
            caps.register(capability.clone(), &mut out)?;
        }
        for (agent, name) in hidden {
            caps.set_visible(agent, name, false, &mut out);
        }
        if self.config.app_catalog.is_some() {
            caps.set_applications(self.listed_applications(), &mut out);
        }
        caps.set_standard_components(self.config.standard_components.inventory(), &mut out);
        if let Some(conversation) = self.conversation.clone() {
            caps.establish(conversation, &mut out);
        }
        self.capabilities = Some(caps);
        Ok(self.capability_effects(out))
    }

    /// The app center changed (an app installed, upgraded, rolled back, disabled or removed,
    /// perhaps by another process): the inventory is announced again when the enabled apps
    /// differ, and each open Surface of an app that is no longer enabled at its version is
    /// closed, the agent told `app_disabled`, `app_removed` or `app_upgraded` (R-UI-12).
    pub fn apps_changed(&mut self) -> Vec<Effect> {
        let mut fx = Vec::new();
        let Some(catalog) = self.config.app_catalog.clone() else {
            return fx;
        };
        let mut gone = Vec::new();
        for (instance, entry) in &self.surfaces {
            let Some(installed) = &entry.installed else {
                continue;
            };
            let asked = &installed.surface;
            let reason =
                match catalog
                    .0
                    .resolve(&asked.id, Some(&installed.version), &asked.surface)
                {
                    // Loaded when it opened: a limit of this host's does not change while it
                    // runs, and an unreadable catalog closes nothing.
                    Ok(_)
                    | Err(CatalogRefusal::Unavailable(_))
                    | Err(CatalogRefusal::OverLimit(_)) => continue,
                    Err(CatalogRefusal::Disabled) => GoneReason::AppDisabled,
                    Err(CatalogRefusal::OtherVersion { .. }) => GoneReason::AppUpgraded,
                    Err(_) => GoneReason::AppRemoved,
                };
            gone.push((instance.clone(), entry.generation, reason));
        }
        for (instance, generation, reason) in gone {
            let key = SurfaceKey {
                session: self.config.session_id,
                instance,
                generation,
            };
            if let Some(entry) = self.take_current(&key, &mut fx) {
                self.gone(&key, entry, reason, &mut fx);
            }
        }
        let applications = self.listed_applications();
        if let Some(caps) = self.capabilities.as_mut() {
            let mut out = Vec::new();
            caps.set_applications(applications, &mut out);
            fx.extend(self.capability_effects(out));
        }
        fx
    }

    /// The catalog's apps this session would open, for the inventory: every enabled, verified
    /// app, less those the bundle policy refuses (R-INV-1, R-INV-3: `signed-only` lists only
    /// apps installed with a trusted signature).
    pub(super) fn listed_applications(&self) -> Vec<InventoryApp> {
        let Some(catalog) = &self.config.app_catalog else {
            return Vec::new();
        };
        let signed_only = self.config.bundle_policy == BundlePolicy::SignedOnly;
        catalog
            .0
            .applications()
            .into_iter()
            .filter(|listed| !signed_only || listed.signed_by.is_some())
            .map(|listed| listed.app)
            .collect()
    }

    /// The capability kernel, once enabled: its registry and its pending calls.
    pub fn capabilities(&self) -> Option<&Capabilities> {
        self.capabilities.as_ref()
    }

    /// Registers a capability (a name registered twice is an error); an established session
    /// gets a new inventory (R-INV-1).
    pub fn register_capability(
        &mut self,
        capability: Capability,
    ) -> Result<Vec<Effect>, UsageError> {
        self.with_capabilities(|caps, out| caps.register(capability, out))
    }

    /// Unregisters a capability; the session gets a new inventory, and a later call to it is
    /// answered `unsupported` with `revoked` (R-INV-4).
    pub fn unregister_capability(
        &mut self,
        name: &CapabilityName,
    ) -> Result<Vec<Effect>, UsageError> {
        self.with_capabilities(|caps, out| caps.unregister(name, out))
    }

    /// Hides capability `name` from `agent` (or shows it again); this session gets a new
    /// inventory when its agent is `agent`.
    pub fn set_capability_visible(
        &mut self,
        agent: &AgentIdentity,
        name: &CapabilityName,
        visible: bool,
    ) -> Result<Vec<Effect>, UsageError> {
        self.with_capabilities(|caps, out| {
            caps.set_visible(agent, name, visible, out);
            Ok(())
        })
    }

    /// Forgets the conversation-scoped "always" for `name` (a grant of a vouched identity is
    /// revoked in the store instead); `Ok(false)` when there was none.
    pub fn forget_conversation_grant(&mut self, name: &CapabilityName) -> Result<bool, UsageError> {
        let caps = self.capabilities.as_mut().ok_or(NOT_ENABLED)?;
        Ok(caps.forget_conversation_grant(name))
    }

    /// The platform answers a question the session asked, by its [`Ticket`]: a capability
    /// effect's (a store read, a durable write's acknowledgement, the user's consent, the
    /// hook, the handler's result) or the read-back of the session's records
    /// ([`Ticket::RECORDS`]). The one way answers come back. An answer of the wrong kind is a
    /// [`UsageError`]; an answer to a withdrawn ticket, or a second read-back, is ignored.
    pub fn answered(&mut self, ticket: Ticket, answer: Answer) -> Result<Vec<Effect>, UsageError> {
        match (ticket == Ticket::RECORDS, answer) {
            (true, Answer::Records(records)) => Ok(self.records_read(*records)),
            (true, other) => Err(UsageError::WrongAnswer {
                ticket: ticket.0,
                expected: "a read-back of records",
                got: other.kind(),
            }),
            (false, answer) => {
                let now = self.clock.monotonic();
                self.with_capabilities(|caps, out| caps.answered(ticket, answer, now, out))
            }
        }
    }

    /// Expires calls whose `expires_at` passed while they waited for a decision and fails
    /// handlers past their timeout. Call it when [`Session::next_capability_wakeup`] says.
    pub fn poll_capabilities(&mut self) -> Vec<Effect> {
        let now = self.clock.monotonic();
        self.with_capabilities(|caps, out| {
            caps.poll(now, out);
            Ok(())
        })
        .unwrap_or_default()
    }

    /// How long until [`Session::poll_capabilities`] has work, if any call waits on a deadline.
    pub fn next_capability_wakeup(&self) -> Option<Duration> {
        let caps = self.capabilities.as_ref()?;
        caps.next_wakeup(self.clock.monotonic())
    }

    pub(super) fn with_capabilities(
        &mut self,
        f: impl FnOnce(&mut Capabilities, &mut Vec<Out>) -> Result<(), UsageError>,
    ) -> Result<Vec<Effect>, UsageError> {
        let caps = self.capabilities.as_mut().ok_or(NOT_ENABLED)?;
        let mut out = Vec::new();
        f(caps, &mut out)?;
        Ok(self.capability_effects(out))
    }

    /// Turns the capability kernel's output into effects; every envelope is built here.
    pub(super) fn capability_effects(&mut self, out: Vec<Out>) -> Vec<Effect> {
        let mut fx = Vec::with_capacity(out.len());
        for item in out {
            match item {
                Out::Effect(effect) => fx.push(Effect::Capability(effect)),
                Out::Answer { result, to } => {
                    fx.push(Effect::Send(self.outbound(result, Some(to))))
                }
                Out::Announce { inventory, list } => {
                    fx.push(Effect::Send(self.outbound(inventory, None)));
                    fx.push(Effect::Send(self.outbound(list, None)));
                }
            }
        }
        fx
    }

    /// R-SEC-5: the capability kernel decides; without it every call is answered `unsupported`
    /// (R-ENV-5).
    pub(super) fn app_call(&mut self, env: Envelope<AppCall>, fx: &mut Vec<Effect>) {
        if let Some(caps) = self.capabilities.as_mut() {
            let mut out = Vec::new();
            caps.call(env, &mut out);
            let effects = self.capability_effects(out);
            fx.extend(effects);
            return;
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
        fx.push(Effect::Send(self.outbound(payload, Some(env.sender))));
    }
}
