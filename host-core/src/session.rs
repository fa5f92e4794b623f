//! The sans-IO [`Session`]: one conversation's Surface registry. Inbound envelopes and bridge
//! messages go in; [`Effect`]s come out. It performs no I/O and reads time only through [`Clock`].

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt;
use std::time::Duration;

use crate::apps::{refusal_error, reserved_error, Assets, CatalogRefusal};
use crate::bridge::BridgeMessage;
use crate::capability::{Answer, Capabilities, Capability, CapabilitySetup, Out, Ticket};
use crate::decode::decode;
use crate::diagnostic::Diagnostic;
use crate::error::{ErrorCode, ProtocolError, Readable, UsageError};
use crate::ids::{
    shorten, AgentIdentity, AppVersion, CapabilityName, ConversationId, EventName, InstanceId,
    MessageId, PartyId, Status,
};
use crate::json::JsonObject;
use crate::limits::Limits;
use crate::message::{
    AppCall, AppError, AppList, AppResult, ClientError, ClientInventory, Direction, Envelope,
    InlineApp, InstalledSurface, InventoryApp, Message, Party, Payload, SurfaceSource, UiClose,
    UiEvent, UiOpen, UiPatch,
};
use crate::recovery::{Decision, ReopenBudget};

pub use crate::effect::{
    CloseReason, Effect, Generation, GoneReason, Stats, SurfaceKey, SurfaceOpen,
};
pub use crate::session_config::{BundlePolicy, CatalogRef, Clock, SessionConfig};

struct Entry {
    generation: Generation,
    opened_by: MessageId,
    opener: Party,
    /// What the Surface was opened with, kept to reopen it (R-UI-12).
    app: InlineApp,
    /// Its reopens within `Limits::reopen_window` (R-UI-12).
    reopens: ReopenBudget,
    ready: bool,
    state: JsonObject,
    /// When the main frame committed its recent documents, for the reload-loop bound (R-UI-10).
    documents: VecDeque<Duration>,
    /// Whether the main frame committed its first document yet.
    committed: bool,
    /// What the page reported as diagnostics in the current window (R-DIAG-1).
    diagnostics: DiagnosticBudget,
    /// For a Surface of an installed app: which, and the events it declared (R-UI-9).
    installed: Option<OpenedInstalled>,
}

/// The installed app a Surface was opened from.
struct OpenedInstalled {
    surface: InstalledSurface,
    version: AppVersion,
    events: BTreeSet<EventName>,
    assets: Assets,
    signed_by: Option<String>,
}

/// One Surface's diagnostics within the current fixed window (R-DIAG-1).
#[derive(Default)]
struct DiagnosticBudget {
    window_start: Duration,
    count: usize,
    bytes: usize,
    /// Dropped since the last note to the embedder.
    suppressed: u64,
    /// Whether the embedder heard in this window that diagnostics are being dropped.
    told: bool,
}

/// The sans-IO kernel of one conversation.
///
/// ```
/// use std::time::Duration;
/// use lineup_host_core::{Clock, Effect, PartyId, Session, SessionConfig};
///
/// struct Fixed;
/// impl Clock for Fixed { fn monotonic(&self) -> Duration { Duration::ZERO } }
///
/// let config = SessionConfig::new(PartyId::try_from("desktop").unwrap(), "out");
/// let mut session = Session::new(config, Box::new(Fixed)).unwrap();
/// let open = br#"{"v":1,"id":"m1","type":"lineup.v1.ui.open","conversation_id":"c1",
///   "sender":{"kind":"agent","id":"a1"},"payload":{"instance_id":"w1",
///   "app":{"id":"com.example.w","name":"W","version":"1.0.0","html":"<b>hi</b>","css":"","js":""}}}"#;
/// let effects = session.handle_inbound(open);
/// let Some(Effect::Open(surface)) = effects.first() else { panic!("{effects:?}") };
/// assert_eq!(surface.key.instance.as_str(), "w1");
///
/// // The page says it is ready: it gets its state.
/// let key = surface.key.clone();
/// let effects = session.handle_bridge(&key, r#"{"namespace":"lineup.surface.v1","type":"ready"}"#);
/// assert!(matches!(effects.as_slice(), [Effect::Ready(_), Effect::DeliverState { .. }]));
/// ```
pub struct Session {
    config: SessionConfig,
    clock: Box<dyn Clock>,
    conversation: Option<ConversationId>,
    surfaces: BTreeMap<InstanceId, Entry>,
    next_generation: u64,
    next_message: u64,
    recent_opens: VecDeque<Duration>,
    stats: Stats,
    /// The App Capability kernel, once enabled; until then every `app.call` is `unsupported`.
    capabilities: Option<Capabilities>,
    /// Surfaces open in the other sessions of the host's table while an envelope is handled,
    /// so `max_surfaces` also bounds the host in total (R-SES-1); 0 outside a table.
    open_elsewhere: usize,
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("conversation", &self.conversation)
            .field("surfaces", &self.surfaces.len())
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

impl Session {
    /// Creates a session; fails when a limit is unusable.
    pub fn new(config: SessionConfig, clock: Box<dyn Clock>) -> Result<Self, UsageError> {
        config.limits.validate()?;
        if let Err(e) = MessageId::try_from(format!("{}-1", config.message_id_prefix)) {
            return Err(UsageError::InvalidMessageIdPrefix {
                prefix: config.message_id_prefix,
                reason: e.reason,
            });
        }
        Ok(Self {
            conversation: config.conversation_id.clone(),
            config,
            clock,
            surfaces: BTreeMap::new(),
            next_generation: 1,
            next_message: 1,
            recent_opens: VecDeque::new(),
            stats: Stats::default(),
            capabilities: None,
            open_elsewhere: 0,
        })
    }

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
                    Ok(_) | Err(CatalogRefusal::Unavailable(_)) => continue,
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
            if let Some(entry) = self.take_current(&key) {
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
    fn listed_applications(&self) -> Vec<InventoryApp> {
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

    /// The platform answers a capability effect's [`Ticket`]; an answer of the wrong kind is a
    /// [`UsageError`], an answer to a withdrawn ticket is ignored.
    pub fn capability_answered(
        &mut self,
        ticket: Ticket,
        answer: Answer,
    ) -> Result<Vec<Effect>, UsageError> {
        let now = self.clock.monotonic();
        self.with_capabilities(|caps, out| caps.answered(ticket, answer, now, out))
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

    fn with_capabilities(
        &mut self,
        f: impl FnOnce(&mut Capabilities, &mut Vec<Out>) -> Result<(), UsageError>,
    ) -> Result<Vec<Effect>, UsageError> {
        let caps = self.capabilities.as_mut().ok_or(NOT_ENABLED)?;
        let mut out = Vec::new();
        f(caps, &mut out)?;
        Ok(self.capability_effects(out))
    }

    /// Turns the capability kernel's output into effects; every envelope is built here.
    fn capability_effects(&mut self, out: Vec<Out>) -> Vec<Effect> {
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

    /// The session's counters.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// The limits in force.
    pub fn limits(&self) -> &Limits {
        &self.config.limits
    }

    /// The conversation, once known.
    pub fn conversation_id(&self) -> Option<&ConversationId> {
        self.conversation.as_ref()
    }

    /// The webviews that are open now, in instance order.
    pub fn surfaces(&self) -> impl Iterator<Item = SurfaceKey> + '_ {
        self.surfaces.iter().map(|(instance, e)| SurfaceKey {
            session: self.config.session_id,
            instance: instance.clone(),
            generation: e.generation,
        })
    }

    /// Whether `key` names a webview that is open now.
    pub fn is_current(&self, key: &SurfaceKey) -> bool {
        key.session == self.config.session_id
            && self
                .surfaces
                .get(&key.instance)
                .is_some_and(|e| e.generation == key.generation)
    }

    /// Handles one inbound envelope (agent → client) as raw bytes.
    pub fn handle_inbound(&mut self, bytes: &[u8]) -> Vec<Effect> {
        let mut fx = Vec::new();
        match decode(bytes, &self.config.limits) {
            Ok(message) => self.dispatch(message, &mut fx),
            Err(err) => self.refuse(err, None, &mut fx),
        }
        fx
    }

    /// Refuses an inbound line that was too long to be read at all (R-ENV-4): the framer
    /// discarded its `len` bytes, so the reply cannot name its `id`.
    pub fn handle_oversized(&mut self, len: u64) -> Vec<Effect> {
        let limit = self.config.limits.max_envelope_bytes;
        let mut fx = Vec::new();
        let err = ProtocolError::new(
            ErrorCode::TooLarge,
            "R-ENV-4",
            format!("envelope is {len} bytes; the limit is {limit} bytes"),
        )
        .limit(limit);
        self.refuse(err, None, &mut fx);
        fx
    }

    /// Refuses a binary frame of `len` bytes that a WebSocket transport received (R-ENV-5): each
    /// envelope is one text frame, so its bytes were not read and the reply cannot name its `id`.
    pub fn handle_binary_frame(&mut self, len: u64) -> Vec<Effect> {
        let mut fx = Vec::new();
        let err = ProtocolError::new(
            ErrorCode::BinaryFrame,
            "R-ENV-5",
            format!(
                "a binary frame of {len} bytes is not an envelope: send each envelope as one text frame"
            ),
        );
        self.refuse(err, None, &mut fx);
        fx
    }

    /// Handles one inbound message that was already decoded.
    pub fn handle_message(&mut self, message: Message) -> Vec<Effect> {
        let mut fx = Vec::new();
        self.dispatch(message, &mut fx);
        fx
    }

    /// Handles one decoded message of this session's table: `open_elsewhere` Surfaces are open
    /// in its other sessions, and `Limits::max_surfaces` bounds them all together (R-SES-1).
    pub(crate) fn handle_message_within(
        &mut self,
        message: Message,
        open_elsewhere: usize,
    ) -> Vec<Effect> {
        self.open_elsewhere = open_elsewhere;
        let fx = self.handle_message(message);
        self.open_elsewhere = 0;
        fx
    }

    /// The checks a decoded message passes before it may change anything (conversation,
    /// direction, sender); the session table asks them before it creates a session.
    pub(crate) fn check_admission(&self, message: &Message) -> Result<(), ProtocolError> {
        self.admit(message)
    }

    /// The agent this session's transport or embedder vouches for (R-SES-1), if any.
    pub fn agent_id(&self) -> Option<&PartyId> {
        self.config.agent_id.as_ref()
    }

    /// Refuses `message` with `err` (the session table's own refusals, e.g.
    /// `too_many_sessions`), answered like any refusal (R-ENV-5); nothing else changes.
    pub(crate) fn refuse_message(&mut self, message: &Message, err: ProtocolError) -> Vec<Effect> {
        let about = Readable {
            id: Some(message.id().clone()),
            conversation_id: Some(message.conversation_id().clone()),
            call_id: match message {
                Message::AppCall(env) => Some(env.payload.call_id.clone()),
                _ => None,
            },
            sender: None,
            capability: match message {
                Message::AppCall(env) => Some(Box::new(env.payload.capability.clone())),
                _ => None,
            },
        };
        let mut fx = Vec::new();
        self.refuse(err.about(about), Some(message.sender().clone()), &mut fx);
        fx
    }

    /// [`Session::check_admission`] for a well-formed envelope whose payload was refused
    /// ([`ProtocolError::sender`]).
    pub(crate) fn check_refused_admission(
        &self,
        refused: &ProtocolError,
    ) -> Result<(), ProtocolError> {
        match (&refused.conversation_id, &refused.sender) {
            (Some(conversation), Some(sender)) => self.admit_envelope(
                conversation,
                Direction::AgentToClient,
                "lineup.v1 message",
                sender,
            ),
            _ => Err(refused.clone()),
        }
    }

    /// Refuses the well-formed envelope `refused` with the table's own `err` (R-ENV-5);
    /// nothing else changes.
    pub(crate) fn refuse_about(
        &mut self,
        refused: &ProtocolError,
        err: ProtocolError,
    ) -> Vec<Effect> {
        let about = Readable {
            id: refused.in_reply_to.clone(),
            conversation_id: refused.conversation_id.clone(),
            call_id: refused.call_id.clone(),
            sender: None,
            capability: refused.capability.clone(),
        };
        let mut fx = Vec::new();
        self.refuse(
            err.about(about),
            refused.sender.as_deref().cloned(),
            &mut fx,
        );
        fx
    }

    /// Refuses an inbound envelope that could not be decoded (R-ENV-5); the session table
    /// answers those itself, in the refused envelope's conversation when it can be read.
    pub(crate) fn refuse_undecodable(&mut self, err: ProtocolError) -> Vec<Effect> {
        let mut fx = Vec::new();
        self.refuse(err, None, &mut fx);
        fx
    }

    /// How many Surfaces are open now.
    pub fn surface_count(&self) -> usize {
        self.surfaces.len()
    }

    /// Handles one message posted by the page of webview `key` (R-SEC-4: the identity is the
    /// webview that received it, never a field of the message).
    pub fn handle_bridge(&mut self, key: &SurfaceKey, raw: &str) -> Vec<Effect> {
        let mut fx = Vec::new();
        if !self.is_current(key) {
            self.stats.bridge_stale += 1;
            fx.push(Effect::Dropped {
                key: key.clone(),
                error: ProtocolError::new(
                    ErrorCode::InvalidBridgeMessage,
                    "R-UI-6",
                    format!("message from {key}, which was closed or replaced; it reaches nobody"),
                ),
            });
            return fx;
        }
        let message = match BridgeMessage::decode(raw, &self.config.limits) {
            Ok(m) => m,
            Err(error) => {
                self.stats.bridge_invalid += 1;
                fx.push(Effect::Dropped {
                    key: key.clone(),
                    error,
                });
                return fx;
            }
        };
        match message {
            BridgeMessage::Ready => self.ready(key, &mut fx),
            BridgeMessage::Event { event, data } => self.event(key, event, data, &mut fx),
            BridgeMessage::Resize { height } => fx.push(Effect::Resize {
                key: key.clone(),
                height,
            }),
            BridgeMessage::Diagnostic(diagnostic) => self.diagnostic(key, diagnostic, &mut fx),
            // R-UI-5: counted, never obeyed.
            BridgeMessage::CloseAttempt => self.stats.close_attempts += 1,
        }
        fx
    }

    /// The platform dropped `count` diagnostics of webview `key` while too many were waiting to
    /// be handled (`Limits::max_pending_diagnostics`); they count against its budget as
    /// suppressed (R-DIAG-1).
    pub fn diagnostics_dropped(&mut self, key: &SurfaceKey, count: u64) -> Vec<Effect> {
        self.stats.diagnostics_suppressed += count;
        if let Some(entry) = self.surfaces.get_mut(&key.instance) {
            if entry.generation == key.generation {
                entry.diagnostics.suppressed += count;
            }
        }
        Vec::new()
    }

    /// R-DIAG-1: passes `diagnostic` to the embedder within the Surface's budget; past it, one
    /// `suppressed` note per window, and a count of what was dropped once the next window opens.
    fn diagnostic(&mut self, key: &SurfaceKey, diagnostic: Diagnostic, fx: &mut Vec<Effect>) {
        let now = self.clock.monotonic();
        let limits = &self.config.limits;
        let (window, max_count, max_bytes) = (
            limits.diagnostic_window,
            limits.max_diagnostics_per_window,
            limits.max_diagnostic_bytes_per_window,
        );
        let Some(entry) = self.surfaces.get_mut(&key.instance) else {
            return;
        };
        let budget = &mut entry.diagnostics;
        if now.saturating_sub(budget.window_start) >= window {
            let dropped = std::mem::take(&mut budget.suppressed);
            *budget = DiagnosticBudget {
                window_start: now,
                ..DiagnosticBudget::default()
            };
            if dropped > 0 {
                fx.push(Effect::Diagnostic {
                    key: key.clone(),
                    diagnostic: Diagnostic::suppressed(format!(
                        "{dropped} diagnostics of this surface were dropped: more than {max_count} \
                         or {max_bytes} bytes within {window:?} (R-DIAG-1)"
                    )),
                });
            }
        }
        let weight = diagnostic.weight();
        if budget.count >= max_count || budget.bytes + weight > max_bytes {
            budget.suppressed += 1;
            self.stats.diagnostics_suppressed += 1;
            if !std::mem::replace(&mut budget.told, true) {
                fx.push(Effect::Diagnostic {
                    key: key.clone(),
                    diagnostic: Diagnostic::suppressed(format!(
                        "this surface passed its diagnostic budget of {max_count} messages or \
                         {max_bytes} bytes within {window:?}; further ones are dropped and counted \
                         (R-DIAG-1)"
                    )),
                });
            }
            return;
        }
        budget.count += 1;
        budget.bytes += weight;
        self.stats.diagnostics += 1;
        fx.push(Effect::Diagnostic {
            key: key.clone(),
            diagnostic,
        });
    }

    /// The platform dropped a message of `len` bytes that the page of webview `key` posted,
    /// before it could be read; it is counted like any invalid bridge message (R-UI-7).
    pub fn handle_bridge_oversized(&mut self, key: &SurfaceKey, len: usize) -> Vec<Effect> {
        if !self.is_current(key) {
            self.stats.bridge_stale += 1;
            return Vec::new();
        }
        self.stats.bridge_invalid += 1;
        let limit = self.config.limits.max_bridge_message_bytes;
        vec![Effect::Dropped {
            key: key.clone(),
            error: ProtocolError::new(
                ErrorCode::InvalidBridgeMessage,
                "R-UI-7",
                format!("bridge message is {len} bytes; the limit is {limit} bytes"),
            )
            .limit(limit),
        }]
    }

    /// The platform dropped `count` messages that the page of webview `key` posted while too many
    /// of its messages were still waiting to be handled; they are counted, never forwarded.
    pub fn handle_bridge_flood(
        &mut self,
        key: &SurfaceKey,
        count: u64,
        limit: usize,
    ) -> Vec<Effect> {
        self.stats.bridge_flooded += count;
        if !self.is_current(key) {
            return Vec::new();
        }
        vec![Effect::Dropped {
            key: key.clone(),
            error: ProtocolError::new(
                ErrorCode::InvalidBridgeMessage,
                "R-ENV-4",
                format!(
                    "{count} bridge messages dropped: the page posted while {limit} of its messages were waiting to be handled"
                ),
            )
            .limit(limit),
        }]
    }

    /// The user closed webview `key` (window manager, host chrome): exactly one `ui.event close`
    /// goes upstream (R-UI-5).
    pub fn user_closed(&mut self, key: &SurfaceKey) -> Vec<Effect> {
        let mut fx = Vec::new();
        if let Some(entry) = self.take_current(key) {
            fx.push(Effect::Close {
                key: key.clone(),
                reason: CloseReason::User,
            });
            let payload = UiEvent {
                instance_id: key.instance.clone(),
                event: close_event(),
                data: JsonObject::new(),
            };
            fx.push(Effect::Send(self.outbound(payload, Some(entry.opener))));
        }
        fx
    }

    /// Webview `key` went away on its own (R-UI-12): it is closed and the agent gets `ui.event`
    /// `close` with `data.reason`, exactly once; nothing happens for a stale key.
    pub fn surface_gone(&mut self, key: &SurfaceKey, reason: GoneReason) -> Vec<Effect> {
        let mut fx = Vec::new();
        if let Some(entry) = self.take_current(key) {
            self.gone(key, entry, reason, &mut fx);
        }
        fx
    }

    /// The web process of webview `key` died (crashed, killed by the system or a signal) or was
    /// ended because it stopped answering (R-UI-12). Within the Surface's budget
    /// (`Limits::max_reopens_per_window` per `Limits::reopen_window`) it is reopened
    /// ([`Effect::Reopen`]): same instance, a new generation, the same bundle, and its last state
    /// after the new page's `ready`; nothing goes upstream, and messages of the old generation
    /// reach nobody. Past the budget, and always for [`GoneReason::Memory`] and
    /// [`GoneReason::ReloadLoop`], it is closed as by [`Session::surface_gone`]. Nothing happens
    /// for a stale key.
    pub fn surface_lost(&mut self, key: &SurfaceKey, reason: GoneReason) -> Vec<Effect> {
        let mut fx = Vec::new();
        if !self.is_current(key) {
            return fx;
        }
        let now = self.clock.monotonic();
        let limits = &self.config.limits;
        let Some(entry) = self.surfaces.get_mut(&key.instance) else {
            return fx;
        };
        if entry.reopens.decide(reason, now, limits) == Decision::GiveUp {
            if let Some(entry) = self.take_current(key) {
                self.gone(key, entry, reason, &mut fx);
            }
            return fx;
        }
        let generation = Generation(self.next_generation);
        self.next_generation += 1;
        entry.generation = generation;
        // A new page: it says `ready` and gets the state; its first commit is not a reload.
        entry.ready = false;
        entry.committed = false;
        entry.documents.clear();
        self.stats.reopened += 1;
        fx.push(Effect::Reopen {
            old: key.clone(),
            open: SurfaceOpen {
                key: SurfaceKey {
                    session: self.config.session_id,
                    instance: key.instance.clone(),
                    generation,
                },
                app: entry.app.clone(),
                assets: entry
                    .installed
                    .as_ref()
                    .map(|i| i.assets.clone())
                    .unwrap_or_default(),
            },
            reason,
        });
        fx
    }

    /// The main frame of webview `key` committed a new document (R-UI-10). The first commit is
    /// the Surface's own load; each later one is a reload: the page gets the current state again
    /// after its next `ready`, exactly once, and patches meanwhile coalesce to the latest. More
    /// than `Limits::max_documents_per_window` commits within `Limits::document_window` close the
    /// Surface as a reload loop (R-UI-12). Same-document navigations (fragments, `pushState`)
    /// are not commits.
    pub fn document_committed(&mut self, key: &SurfaceKey) -> Vec<Effect> {
        let mut fx = Vec::new();
        if !self.is_current(key) {
            return fx;
        }
        let now = self.clock.monotonic();
        let window = self.config.limits.document_window;
        let max = self.config.limits.max_documents_per_window;
        let Some(entry) = self.surfaces.get_mut(&key.instance) else {
            return fx;
        };
        while entry
            .documents
            .front()
            .is_some_and(|t| now.saturating_sub(*t) >= window)
        {
            entry.documents.pop_front();
        }
        entry.documents.push_back(now);
        if entry.documents.len() > max {
            if let Some(entry) = self.take_current(key) {
                self.gone(key, entry, GoneReason::ReloadLoop, &mut fx);
            }
            return fx;
        }
        self.committed(key, &mut fx);
        fx
    }

    /// The main frame of webview `key` committed a document the **embedder** loaded on purpose
    /// (a preview's hot reload of an edited bundle, not the page reloading itself): like
    /// [`Session::document_committed`] the page gets the current state again after its next
    /// `ready` (R-UI-10), but the commit does not count toward the reload-loop bound, so an
    /// author saving often is never closed as a loop (R-UI-12). Nothing for a stale key.
    pub fn embedder_reloaded(&mut self, key: &SurfaceKey) -> Vec<Effect> {
        let mut fx = Vec::new();
        if !self.is_current(key) {
            return fx;
        }
        self.committed(key, &mut fx);
        fx
    }

    /// A commit of webview `key`'s main frame that passed the reload-loop bound: after the
    /// first, a reload, and the page gets the current state after its next `ready` (R-UI-10).
    fn committed(&mut self, key: &SurfaceKey, fx: &mut Vec<Effect>) {
        let Some(entry) = self.surfaces.get_mut(&key.instance) else {
            return;
        };
        if entry.committed {
            entry.ready = false;
            self.stats.reloads += 1;
            fx.push(Effect::Reloaded(key.clone()));
        }
        entry.committed = true;
    }

    fn gone(&mut self, key: &SurfaceKey, entry: Entry, reason: GoneReason, fx: &mut Vec<Effect>) {
        fx.push(Effect::Close {
            key: key.clone(),
            reason: CloseReason::Gone(reason),
        });
        let mut data = serde_json::Map::new();
        data.insert(
            "reason".to_owned(),
            serde_json::Value::String(reason.as_str().to_owned()),
        );
        let payload = UiEvent {
            instance_id: key.instance.clone(),
            event: close_event(),
            data: JsonObject::from(data),
        };
        fx.push(Effect::Send(self.outbound(payload, Some(entry.opener))));
    }

    /// Announces the session's current `client.inventory` and `app.list` again (R-INV-1), for an
    /// agent whose transport connected again: the same two envelopes a new session sends, under
    /// a new revision (R-INV-2). Empty when capabilities are off (the host then sends no
    /// inventory at all) or the session is not established yet.
    pub fn announce_inventory(&mut self) -> Vec<Effect> {
        let Some(caps) = self.capabilities.as_mut() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        caps.announce_again(&mut out);
        self.capability_effects(out)
    }

    /// Every open Surface goes away for `reason` (R-UI-12), in instance order: each is closed
    /// ([`CloseReason::Gone`]) and the agent gets one `ui.event` `close` with `data.reason` per
    /// Surface, as [`Session::surface_gone`] does for one. For [`GoneReason::AgentGone`], the
    /// embedder's grace for an agent that went away ran out.
    pub fn all_gone(&mut self, reason: GoneReason) -> Vec<Effect> {
        let keys: Vec<SurfaceKey> = self.surfaces().collect();
        let mut fx = Vec::new();
        for key in keys {
            if let Some(entry) = self.take_current(&key) {
                self.gone(&key, entry, reason, &mut fx);
            }
        }
        fx
    }

    /// `count` page events of Surface `instance` were dropped on the way out because the agent's
    /// reader fell behind; once it caught up it gets one `client.error` `events_dropped` naming
    /// the instance and the count (`in_reply_to: null`). It is never a `ui.event`, which a page
    /// could imitate.
    pub fn events_dropped(&mut self, instance: &InstanceId, count: u64) -> Vec<Effect> {
        let target = self
            .surfaces
            .get(instance)
            .map(|entry| entry.opener.clone());
        let payload = ClientError {
            in_reply_to: None,
            code: ErrorCode::EventsDropped,
            message: format!(
                "{count} events of surface {instance} were dropped because the agent's reader fell behind; answers are never dropped"
            ),
            field: None,
            limit: None,
            instance_id: Some(instance.clone()),
            count: Some(count),
        };
        vec![Effect::Send(self.outbound(payload, target))]
    }

    /// The platform could not create webview `key`; the agent gets a `client.error` in reply to
    /// the open (R-ENV-5).
    pub fn open_failed(&mut self, key: &SurfaceKey, why: &str) -> Vec<Effect> {
        let mut fx = Vec::new();
        if let Some(entry) = self.take_current(key) {
            fx.push(Effect::Close {
                key: key.clone(),
                reason: CloseReason::Failed,
            });
            let err = ProtocolError::new(
                ErrorCode::SurfaceFailed,
                "R-ENV-5",
                format!("surface {} could not be created: {why}", key.instance),
            )
            .in_reply_to(Some(entry.opened_by));
            self.refuse(err, Some(entry.opener), &mut fx);
        }
        fx
    }

    /// Closes every Surface, sending nothing upstream (the agent's stream ended). Capability
    /// calls still waiting for a lookup or a decision are cancelled (their prompts withdrawn,
    /// their records finished, audited); running ones finish on their own.
    pub fn close_all(&mut self) -> Vec<Effect> {
        let surfaces = std::mem::take(&mut self.surfaces);
        let session = self.config.session_id;
        let mut fx: Vec<Effect> = surfaces
            .into_iter()
            .map(|(instance, e)| Effect::Close {
                key: SurfaceKey {
                    session,
                    instance,
                    generation: e.generation,
                },
                reason: CloseReason::SessionEnded,
            })
            .collect();
        if let Some(caps) = self.capabilities.as_mut() {
            let mut out = Vec::new();
            caps.end(&mut out);
            // The agent is gone: its answers are on record, none is sent.
            out.retain(|o| matches!(o, Out::Effect(_)));
            fx.extend(self.capability_effects(out));
        }
        fx
    }

    fn take_current(&mut self, key: &SurfaceKey) -> Option<Entry> {
        if self.is_current(key) {
            self.surfaces.remove(&key.instance)
        } else {
            None
        }
    }

    fn dispatch(&mut self, message: Message, fx: &mut Vec<Effect>) {
        let sender = message.sender().clone();
        let conversation = message.conversation_id().clone();
        let about = Readable {
            id: Some(message.id().clone()),
            conversation_id: Some(conversation.clone()),
            call_id: match &message {
                Message::AppCall(env) => Some(env.payload.call_id.clone()),
                _ => None,
            },
            sender: None,
            capability: match &message {
                Message::AppCall(env) => Some(Box::new(env.payload.capability.clone())),
                _ => None,
            },
        };
        if let Err(err) = self.admit(&message) {
            return self.refuse(err.about(about), Some(sender), fx);
        }
        // R-SES-1: a well-formed envelope of an admitted agent establishes the conversation,
        // even when its payload is refused below; the inventory comes before its answer
        // (R-INV-1).
        if self.conversation.is_none() {
            self.conversation = Some(conversation.clone());
            let mut announce = Vec::new();
            if let Some(caps) = self.capabilities.as_mut() {
                caps.establish(conversation, &mut announce);
            }
            let announce = self.capability_effects(announce);
            fx.extend(announce);
        }
        let outcome = match message {
            Message::UiOpen(env) => self.open(env, fx),
            Message::UiPatch(env) => self.patch(env, fx),
            Message::UiClose(env) => self.close(env, fx),
            Message::AppCall(env) => {
                self.app_call(env, fx);
                Ok(())
            }
            _ => Ok(()),
        };
        match outcome {
            Ok(()) => self.stats.envelopes_accepted += 1,
            Err(err) => self.refuse(err.about(about), Some(sender), fx),
        }
    }

    /// The audit records of refusals merged so far (R-CAP-6), written out now.
    pub(crate) fn flush_refusal_audit(&mut self) -> Vec<Effect> {
        let Some(caps) = self.capabilities.as_mut() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        caps.flush_refusals(&mut out);
        self.capability_effects(out)
    }

    /// Establishes the session for a well-formed envelope whose payload could not be decoded
    /// (R-SES-1, [`ProtocolError::sender`]): admitted like any envelope, then the inventory
    /// first (R-INV-1) and the refusal's answer. Without a readable sender and conversation it
    /// is refused like any undecodable envelope.
    pub(crate) fn establish_refusing(&mut self, err: ProtocolError) -> Vec<Effect> {
        let mut fx = Vec::new();
        let (Some(sender), Some(conversation)) =
            (err.sender.as_deref().cloned(), err.conversation_id.clone())
        else {
            self.refuse(err, None, &mut fx);
            return fx;
        };
        if let Err(admission) = self.admit_envelope(
            &conversation,
            Direction::AgentToClient,
            "lineup.v1 message",
            &sender,
        ) {
            return self.refuse_about(&err, admission);
        }
        if self.conversation.is_none() {
            self.conversation = Some(conversation.clone());
            let mut announce = Vec::new();
            if let Some(caps) = self.capabilities.as_mut() {
                caps.establish(conversation, &mut announce);
            }
            let announce = self.capability_effects(announce);
            fx.extend(announce);
        }
        self.refuse(err, Some(sender), &mut fx);
        fx
    }

    /// Whether this session has a conversation: it was opened for one, or an envelope
    /// established it (R-SES-1).
    pub(crate) fn is_established(&self) -> bool {
        self.conversation.is_some()
    }

    /// The checks every decoded inbound envelope passes before it may change anything: its
    /// conversation (R-ENV-1, R-SES-1), its direction (R-ENV-2) and its sender (R-ENV-1).
    fn admit(&self, message: &Message) -> Result<(), ProtocolError> {
        self.admit_envelope(
            message.conversation_id(),
            message.direction(),
            message.message_type(),
            message.sender(),
        )
    }

    /// [`Session::admit`] on an envelope's parts.
    fn admit_envelope(
        &self,
        conversation: &ConversationId,
        direction: Direction,
        message_type: &str,
        sender: &Party,
    ) -> Result<(), ProtocolError> {
        if let Some(ours) = self
            .conversation
            .as_ref()
            .filter(|ours| *ours != conversation)
        {
            return Err(ProtocolError::new(
                ErrorCode::WrongConversation,
                "R-ENV-1",
                format!("conversation_id {conversation} is not this session's conversation {ours}"),
            )
            .field("conversation_id"));
        }
        if direction == Direction::ClientToAgent {
            return Err(ProtocolError::new(
                ErrorCode::WrongDirection,
                "R-ENV-2",
                format!("{message_type} is sent by the client, not to it"),
            )
            .field("type"));
        }
        let kind = &sender.kind;
        if kind.as_str() != AGENT_KIND {
            return Err(ProtocolError::new(
                ErrorCode::WrongSender,
                "R-ENV-1",
                format!(
                    "sender.kind is {:?}; only a sender of kind {AGENT_KIND:?} sends {message_type} to the client",
                    shorten(kind.as_str(), 40),
                ),
            )
            .field("sender.kind"));
        }
        let id = &sender.id;
        if let Some(vouched) = self.config.agent_id.as_ref().filter(|v| *v != id) {
            return Err(ProtocolError::new(
                ErrorCode::WrongSender,
                "R-SES-1",
                format!(
                    "sender.id is {:?}; this session's agent is {:?}, vouched for by the transport",
                    shorten(id.as_str(), 64),
                    vouched.as_str()
                ),
            )
            .field("sender.id"));
        }
        Ok(())
    }

    fn open(&mut self, env: Envelope<UiOpen>, fx: &mut Vec<Effect>) -> Result<(), ProtocolError> {
        let UiOpen {
            instance_id,
            app,
            state,
        } = env.payload;
        let catalog = self.config.app_catalog.clone();
        let (app, installed) = match app {
            SurfaceSource::Inline(app) => {
                // R-UI-9: an id the app center holds or has held is reserved, whatever the
                // bytes: its app opens only by id, and only while enabled.
                if let Some(reservation) = catalog.as_ref().and_then(|c| c.0.reservation(&app.id)) {
                    return Err(reserved_error(&app.id, &reservation));
                }
                (app, None)
            }
            SurfaceSource::Installed(s) => {
                let Some(catalog) = catalog else {
                    return Err(ProtocolError::new(
                        ErrorCode::Unsupported,
                        "R-UI-9",
                        format!(
                            "surface {} of app {} cannot be opened by id: this host has no app center; send an inline bundle",
                            s.surface, s.id
                        ),
                    )
                    .field("payload.app.surface"));
                };
                let resolved = catalog
                    .0
                    .resolve(&s.id, s.version.as_ref(), &s.surface)
                    .map_err(|refusal| refusal_error(&s, &refusal))?;
                let opened = OpenedInstalled {
                    version: resolved.app.version.clone(),
                    surface: s,
                    events: resolved.events,
                    assets: resolved.assets,
                    signed_by: resolved.signed_by,
                };
                (resolved.app, Some(opened))
            }
        };
        let digest = app.bundle.digest();
        let policy = &self.config.bundle_policy;
        if let Some(installed) = &installed {
            if *policy == BundlePolicy::SignedOnly && installed.signed_by.is_none() {
                return Err(ProtocolError::new(
                    ErrorCode::PolicyViolation,
                    "R-SEC-7",
                    format!(
                        "app {} was installed without a trusted signature; the bundle policy is signed-only",
                        installed.surface.id
                    ),
                )
                .field("payload.app.id"));
            }
        } else {
            let refused = match policy {
                BundlePolicy::SignedOnly | BundlePolicy::AppCenterOnly => Some(format!(
                    "the bundle policy is {}: this host opens only installed apps, by id; inline bundles are refused",
                    policy.name()
                )),
                BundlePolicy::Allowlist(allowed) if !allowed.contains(&digest) => Some(format!(
                    "the bundle's digest {digest} is not on this host's allowlist ({} digests)",
                    allowed.len()
                )),
                _ => None,
            };
            if let Some(message) = refused {
                return Err(
                    ProtocolError::new(ErrorCode::PolicyViolation, "R-SEC-7", message)
                        .field("payload.app"),
                );
            }
        }
        match (&app.integrity, policy) {
            (Some(declared), _) if *declared != digest => {
                return Err(ProtocolError::new(
                    ErrorCode::IntegrityMismatch,
                    "R-UI-2a",
                    format!(
                        "integrity {declared} does not match the bundle, whose digest is {digest}"
                    ),
                )
                .field("payload.app.integrity"));
            }
            (None, BundlePolicy::RequireIntegrity) => {
                return Err(ProtocolError::new(
                    ErrorCode::PolicyViolation,
                    "R-SEC-7",
                    format!("the bundle policy requires app.integrity; this bundle's is {digest}"),
                )
                .field("payload.app.integrity"));
            }
            _ => {}
        }
        let replacing = self.surfaces.contains_key(&instance_id);
        let limits = &self.config.limits;
        // R-SES-1: the limit also bounds the host's web processes over every session.
        let total = self.surfaces.len() + self.open_elsewhere;
        if !replacing && total >= limits.max_surfaces {
            let (rule, open) = if self.open_elsewhere > 0 {
                let here = self.surfaces.len();
                let open =
                    format!("{total} surfaces are open on this host ({here} in this conversation)");
                ("R-SES-1", open)
            } else {
                ("R-SEC-2", format!("{total} surfaces are open"))
            };
            return Err(ProtocolError::new(
                ErrorCode::TooManySurfaces,
                rule,
                format!(
                    "{open}; the limit is {}; close one first",
                    limits.max_surfaces
                ),
            )
            .field("payload.instance_id")
            .limit(limits.max_surfaces));
        }
        let now = self.clock.monotonic();
        while self
            .recent_opens
            .front()
            .is_some_and(|t| now.saturating_sub(*t) >= limits.open_window)
        {
            self.recent_opens.pop_front();
        }
        if self.recent_opens.len() >= limits.max_opens_per_window {
            return Err(ProtocolError::new(
                ErrorCode::RateLimited,
                "R-SEC-2",
                format!(
                    "{} opens within {:?}; the limit is {}; wait and retry",
                    self.recent_opens.len(),
                    limits.open_window,
                    limits.max_opens_per_window
                ),
            )
            .field("payload.instance_id")
            .limit(limits.max_opens_per_window));
        }
        self.recent_opens.push_back(now);
        let generation = Generation(self.next_generation);
        self.next_generation += 1;
        let assets = installed
            .as_ref()
            .map(|i| i.assets.clone())
            .unwrap_or_default();
        let entry = Entry {
            generation,
            opened_by: env.id,
            opener: env.sender,
            app: app.clone(),
            reopens: ReopenBudget::default(),
            ready: false,
            state: state.unwrap_or_default(),
            documents: VecDeque::new(),
            committed: false,
            diagnostics: DiagnosticBudget {
                window_start: now,
                ..DiagnosticBudget::default()
            },
            installed,
        };
        let key = SurfaceKey {
            session: self.config.session_id,
            instance: instance_id.clone(),
            generation,
        };
        let open = SurfaceOpen { key, app, assets };
        match self.surfaces.insert(instance_id.clone(), entry) {
            Some(old) => fx.push(Effect::Replace {
                old: SurfaceKey {
                    session: self.config.session_id,
                    instance: instance_id,
                    generation: old.generation,
                },
                open,
            }),
            None => fx.push(Effect::Open(open)),
        }
        Ok(())
    }

    fn patch(&mut self, env: Envelope<UiPatch>, fx: &mut Vec<Effect>) -> Result<(), ProtocolError> {
        let UiPatch { instance_id, state } = env.payload;
        let entry = self
            .surfaces
            .get_mut(&instance_id)
            .ok_or_else(|| unknown_instance(&instance_id, UiPatch::TYPE))?;
        // R-UI-3: the patch replaces the whole state; before `ready`, only the latest is kept.
        entry.state = state;
        if entry.ready {
            fx.push(Effect::DeliverState {
                key: SurfaceKey {
                    session: self.config.session_id,
                    instance: instance_id,
                    generation: entry.generation,
                },
                state: entry.state.clone(),
            });
        }
        Ok(())
    }

    fn close(&mut self, env: Envelope<UiClose>, fx: &mut Vec<Effect>) -> Result<(), ProtocolError> {
        let UiClose {
            instance_id,
            reason,
        } = env.payload;
        let entry = self
            .surfaces
            .remove(&instance_id)
            .ok_or_else(|| unknown_instance(&instance_id, UiClose::TYPE))?;
        fx.push(Effect::Close {
            key: SurfaceKey {
                session: self.config.session_id,
                instance: instance_id,
                generation: entry.generation,
            },
            reason: CloseReason::Agent(reason),
        });
        Ok(())
    }

    /// R-SEC-5: the capability kernel decides; without it every call is answered `unsupported`
    /// (R-ENV-5).
    fn app_call(&mut self, env: Envelope<AppCall>, fx: &mut Vec<Effect>) {
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

    fn ready(&mut self, key: &SurfaceKey, fx: &mut Vec<Effect>) {
        let Some(entry) = self.surfaces.get_mut(&key.instance) else {
            return;
        };
        if entry.ready {
            self.stats.duplicate_ready += 1;
            fx.push(Effect::Dropped {
                key: key.clone(),
                error: ProtocolError::new(
                    ErrorCode::InvalidBridgeMessage,
                    "R-UI-3",
                    "ready was already received from this document; the surface's document is loaded again",
                ),
            });
            fx.push(Effect::RestoreDocument(key.clone()));
            return;
        }
        entry.ready = true;
        fx.push(Effect::Ready(key.clone()));
        fx.push(Effect::DeliverState {
            key: key.clone(),
            state: entry.state.clone(),
        });
    }

    fn event(
        &mut self,
        key: &SurfaceKey,
        event: EventName,
        data: JsonObject,
        fx: &mut Vec<Effect>,
    ) {
        if event.as_str() == "close" {
            self.stats.forged_close += 1;
            fx.push(Effect::Dropped {
                key: key.clone(),
                error: ProtocolError::new(
                    ErrorCode::InvalidBridgeMessage,
                    "R-UI-5",
                    "a page cannot send an event named close; only the user closes a surface",
                )
                .field("event"),
            });
            return;
        }
        let Some(entry) = self.surfaces.get(&key.instance) else {
            return;
        };
        if let Some(installed) = entry
            .installed
            .as_ref()
            .filter(|i| !i.events.contains(&event))
        {
            let error = ProtocolError::new(
                ErrorCode::InvalidBridgeMessage,
                "R-UI-9",
                format!(
                    "event {:?} is not declared by surface {} of app {} in its manifest",
                    event.as_str(),
                    installed.surface.surface,
                    installed.surface.id
                ),
            )
            .field("event");
            self.stats.undeclared_events += 1;
            fx.push(Effect::Dropped {
                key: key.clone(),
                error,
            });
            return;
        }
        let opener = entry.opener.clone();
        self.stats.events_forwarded += 1;
        let payload = UiEvent {
            instance_id: key.instance.clone(),
            event,
            data,
        };
        fx.push(Effect::Send(self.outbound(payload, Some(opener))));
    }

    /// Answers a refused envelope: `app.result` when it has a readable `call_id` (`failed` with
    /// an [`AppError`] for a malformed call, `unsupported` for an unknown `app.*` type),
    /// `client.error` otherwise; in the refused envelope's conversation when it could be read
    /// (R-ENV-5).
    fn refuse(&mut self, err: ProtocolError, target: Option<Party>, fx: &mut Vec<Effect>) {
        self.stats.envelopes_refused += 1;
        let conversation = err.conversation_id.clone();
        if err.call_id.is_some() {
            // R-CAP-6: a refused call is audited with its reason, never its payload.
            let status = if err.code == ErrorCode::Unsupported {
                Status::Unsupported
            } else {
                Status::Failed
            };
            if let Some(caps) = self.capabilities.as_mut() {
                let mut out = Vec::new();
                caps.audit_refusal(&err, status, &mut out);
                fx.extend(out.into_iter().filter_map(|o| match o {
                    Out::Effect(effect) => Some(Effect::Capability(effect)),
                    _ => None,
                }));
            }
        }
        let answer = match &err.call_id {
            Some(call_id) => {
                let failed = err.code != ErrorCode::Unsupported;
                let payload = AppResult {
                    call_id: call_id.clone(),
                    status: if failed {
                        Status::Failed
                    } else {
                        Status::Unsupported
                    },
                    result: None,
                    // The message names the rule; most already do, the rest get it appended.
                    message: Some(if err.message.contains("(R-") {
                        err.message.clone()
                    } else {
                        err.to_string()
                    }),
                    error: failed.then(|| AppError {
                        code: err.code,
                        field: err.field.clone(),
                        limit: err.limit,
                    }),
                };
                self.build(payload, target, conversation)
            }
            None => {
                let payload = ClientError {
                    in_reply_to: err.in_reply_to.clone(),
                    code: err.code,
                    message: err.message.clone(),
                    field: err.field.clone(),
                    limit: err.limit,
                    instance_id: None,
                    count: None,
                };
                self.build(payload, target, conversation)
            }
        };
        fx.push(Effect::Rejected(err));
        fx.push(Effect::Send(answer));
    }

    /// An outbound envelope in the session's conversation.
    fn outbound<P>(&mut self, payload: P, target: Option<Party>) -> Message
    where
        P: Payload,
        Envelope<P>: Into<Message>,
    {
        self.build(payload, target, None)
    }

    /// The one place where outbound envelopes are built: in `conversation` when given (the
    /// conversation of a refused envelope, R-ENV-5), else in the session's, else in `"unknown"`.
    fn build<P>(
        &mut self,
        payload: P,
        target: Option<Party>,
        conversation: Option<ConversationId>,
    ) -> Message
    where
        P: Payload,
        Envelope<P>: Into<Message>,
    {
        let n = self.next_message;
        self.next_message += 1;
        // `Session::new` checked that the prefix makes valid ids.
        let id = MessageId::known(format!("{}-{n}", self.config.message_id_prefix));
        let conversation_id = conversation
            .or_else(|| self.conversation.clone())
            .unwrap_or_else(|| ConversationId::known("unknown"));
        Envelope {
            id,
            conversation_id,
            sender: self.config.client.clone(),
            target,
            payload,
        }
        .into()
    }
}

const NOT_ENABLED: UsageError = UsageError::Capabilities {
    reason: "are not enabled in this session; call Session::enable_capabilities first",
};

/// The `sender.kind` of every envelope the client accepts.
const AGENT_KIND: &str = "agent";

fn unknown_instance(instance: &InstanceId, message_type: &str) -> ProtocolError {
    ProtocolError::new(
        ErrorCode::UnknownInstance,
        "R-UI-1",
        format!("{message_type} names instance {instance}, which is not open"),
    )
    .field("payload.instance_id")
}

fn close_event() -> EventName {
    EventName::known("close")
}

macro_rules! into_message {
    ($($variant:ident),*) => {$(
        impl From<Envelope<$variant>> for Message {
            fn from(env: Envelope<$variant>) -> Message {
                Message::$variant(env)
            }
        }
    )*};
}
into_message!(
    UiOpen,
    UiPatch,
    UiClose,
    AppCall,
    UiEvent,
    AppResult,
    ClientError
);
into_message!(ClientInventory, AppList);
