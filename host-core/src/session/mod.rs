//! The sans-IO [`Session`]: one conversation's Surface registry. Inbound envelopes and bridge
//! messages go in; [`Effect`]s come out. It performs no I/O and reads time only through [`Clock`].
//!
//! A session is four parts, each a type with its own invariants: [`Common`](common::Common)
//! (configuration, clock, conversation, numbers, counters, and the envelopes it builds), the
//! Surface table ([`Surfaces`](surfaces::Surfaces), each an [`Entry`](entry::Entry)), the
//! standard components' [`ComponentDesk`](desk::ComponentDesk), the MCP App views'
//! [`McpViews`](mcp_views::McpViews), and the capability
//! [`CapabilitySlot`](capabilities::CapabilitySlot). `Session` routes each input to the parts it concerns.

use std::fmt;
use std::time::Duration;

use crate::capability::Capabilities;
use crate::component::{AnswerRefusal, ComponentSet, UserAnswer};
use crate::component_link::ComponentLink;
use crate::decode::decode;
use crate::error::{ErrorCode, ProtocolError, Readable, UsageError};
use crate::ids::{ConversationId, InstanceId, PartyId};
use crate::limits::Limits;
use crate::mcp::{RpcError, RpcId};
use crate::message::{Direction, Envelope, Message, Party, UiOpen};
use crate::page_input::PageInput;
use crate::timestamp::Timestamp;
use crate::{AgentIdentity, Answer, Capability, CapabilityName, CapabilitySetup, Ticket};

pub use crate::effect::{
    CloseReason, Effect, Generation, GoneReason, Stats, SurfaceKey, SurfaceOpen,
};
pub use crate::session_config::{BundlePolicy, CatalogRef, Clock, SessionConfig};

mod capabilities;
mod checks;
mod common;
mod degrade;
mod desk;
mod entry;
mod mcp_view;
mod mcp_views;
mod numbers;
mod opening;
mod opens;
mod records;
mod routes;
mod surfaces;

use capabilities::CapabilitySlot;
use common::Common;
use desk::ComponentDesk;
use mcp_views::McpViews;
use routes::readable;
use surfaces::Surfaces;

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
/// let effects = session.handle_bridge(&key, r#"{"namespace":"lineup.surface.v1","type":"ready","document":"0123456789abcdef"}"#);
/// assert!(matches!(effects.as_slice(), [Effect::Ready(_), Effect::DeliverState { .. }]));
/// ```
pub struct Session {
    common: Common,
    surfaces: Surfaces,
    /// The open standard components; they share the instance namespace with `surfaces`.
    components: ComponentDesk,
    /// The open MCP App views; they share the instance namespace too.
    mcp: McpViews,
    capabilities: CapabilitySlot,
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("conversation", &self.common.conversation())
            .field("surfaces", &self.surfaces.len())
            .field("stats", self.common.stats())
            .finish_non_exhaustive()
    }
}

impl Session {
    /// Creates a session; fails when a limit is unusable.
    pub fn new(config: SessionConfig, clock: Box<dyn Clock>) -> Result<Self, UsageError> {
        config.limits.validate()?;
        if let Err(e) = crate::ids::MessageId::try_from(format!("{}-1", config.message_id_prefix)) {
            return Err(UsageError::InvalidMessageIdPrefix {
                prefix: config.message_id_prefix,
                reason: e.reason,
            });
        }
        Ok(Self {
            components: ComponentDesk::offering(config.standard_components.kinds()),
            mcp: McpViews::new(&config.limits),
            common: Common::new(config, clock),
            surfaces: Surfaces::default(),
            capabilities: CapabilitySlot::default(),
        })
    }

    /// The session's counters.
    pub fn stats(&self) -> &Stats {
        self.common.stats()
    }

    /// The limits in force.
    pub fn limits(&self) -> &Limits {
        self.common.limits()
    }

    /// The conversation, once known.
    pub fn conversation_id(&self) -> Option<&ConversationId> {
        self.common.conversation()
    }

    /// Whether this session has a conversation: it was opened for one, or an envelope
    /// established it (R-SES-1).
    pub(crate) fn is_established(&self) -> bool {
        self.common.conversation().is_some()
    }

    /// The agent this session's transport or embedder vouches for (R-SES-1), if any.
    pub fn agent_id(&self) -> Option<&PartyId> {
        self.common.config().agent_id.as_ref()
    }

    /// The webviews that are open now, in instance order.
    pub fn surfaces(&self) -> impl Iterator<Item = SurfaceKey> + '_ {
        self.surfaces.keys(&self.common)
    }

    /// How many Surfaces are open now, MCP App views included (each is a webview, bounded by
    /// `Limits::max_surfaces` with the Surfaces).
    pub fn surface_count(&self) -> usize {
        self.surfaces.len() + self.mcp.len()
    }

    /// Whether a Surface or an MCP App view holds `instance` (R-UI-1).
    pub(crate) fn shows(&self, instance: &InstanceId) -> bool {
        self.surfaces.contains(instance) || self.mcp.contains(instance)
    }

    /// Whether `key` names a webview that is open now: a Surface's, or an MCP App view's
    /// that is not closing.
    pub fn is_current(&self, key: &SurfaceKey) -> bool {
        self.surfaces.is_current(key, &self.common) || self.mcp.is_open(key, &self.common)
    }

    /// Handles one inbound envelope (agent → client) as raw bytes.
    pub fn handle_inbound(&mut self, bytes: &[u8]) -> Vec<Effect> {
        let mut fx = Vec::new();
        match decode(bytes, self.common.limits()) {
            Ok(message) => self.dispatch(message, &mut fx),
            Err(err) => self.refuse(err, None, &mut fx),
        }
        fx
    }

    /// Refuses an inbound line that was too long to be read at all (R-ENV-4): the framer
    /// discarded its `len` bytes, so the reply cannot name its `id`.
    pub fn handle_oversized(&mut self, len: u64) -> Vec<Effect> {
        let limit = self.common.limits().max_envelope_bytes;
        let err = ProtocolError::new(
            ErrorCode::TooLarge,
            "R-ENV-4",
            format!("envelope is {len} bytes; the limit is {limit} bytes"),
        )
        .limit(limit);
        self.refuse_undecodable(err)
    }

    /// Refuses a binary frame of `len` bytes that a WebSocket transport received (R-ENV-5): each
    /// envelope is one text frame, so its bytes were not read and the reply cannot name its `id`.
    pub fn handle_binary_frame(&mut self, len: u64) -> Vec<Effect> {
        let err = ProtocolError::new(
            ErrorCode::BinaryFrame,
            "R-ENV-5",
            format!(
                "a binary frame of {len} bytes is not an envelope: send each envelope as one text frame"
            ),
        );
        self.refuse_undecodable(err)
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
        self.common.set_elsewhere(open_elsewhere);
        let fx = self.handle_message(message);
        self.common.set_elsewhere(0);
        fx
    }

    /// The checks a decoded message passes before it may change anything (conversation,
    /// direction, sender); the session table asks them before it creates a session.
    pub(crate) fn check_admission(&self, message: &Message) -> Result<(), ProtocolError> {
        self.common.admit_envelope(
            message.conversation_id(),
            message.direction(),
            message.message_type(),
            message.sender(),
        )
    }

    /// [`Session::check_admission`] for a well-formed envelope whose payload was refused
    /// ([`ProtocolError::sender`]).
    pub(crate) fn check_refused_admission(
        &self,
        refused: &ProtocolError,
    ) -> Result<(), ProtocolError> {
        match (&refused.conversation_id, &refused.sender) {
            (Some(conversation), Some(sender)) => self.common.admit_envelope(
                conversation,
                Direction::AgentToClient,
                "lineup.v1 message",
                sender,
            ),
            _ => Err(refused.clone()),
        }
    }

    fn dispatch(&mut self, message: Message, fx: &mut Vec<Effect>) {
        let sender = message.sender().clone();
        let conversation = message.conversation_id().clone();
        let about = readable(&message);
        if let Err(err) = self.check_admission(&message) {
            return self.refuse(err.about(about), Some(sender), fx);
        }
        // Established even when its payload is refused below (R-SES-1, R-INV-1).
        self.establish(&conversation, fx);
        let outcome = match message {
            Message::UiOpen(env) => self.open(env, false, fx),
            Message::ComponentOpen(env) => {
                let (surfaces, mcp) = (&mut self.surfaces, &mut self.mcp);
                let make_room = |i: &InstanceId, c: &Common, fx: &mut Vec<Effect>| {
                    surfaces.replace(i, c, fx);
                    mcp.replace(i, c, fx);
                };
                self.components.open(env, &mut self.common, fx, make_room)
            }
            Message::McpAppOpen(env) => {
                let (surfaces, components) = (&mut self.surfaces, &mut self.components);
                let others = surfaces.len();
                let make_room = |i: &InstanceId, c: &Common, fx: &mut Vec<Effect>| {
                    surfaces.replace(i, c, fx);
                    components.replace(i, c, fx);
                };
                self.mcp.open(env, others, &mut self.common, fx, make_room)
            }
            Message::McpResource(env) => self.mcp.resource(env.payload, &self.common),
            Message::McpTool(env) => self.mcp.tool(env.payload, &mut self.common, fx),
            Message::McpAnswer(env) => self.mcp.answer(env.payload, &mut self.common, fx),
            Message::McpProgress(env) => self.mcp.progress(env.payload, &mut self.common, fx),
            Message::UiPatch(env) if self.mcp.contains(&env.payload.instance_id) => {
                Err(McpViews::no_patch(&env.payload.instance_id))
            }
            Message::UiPatch(env) => {
                let (instance, state) = (env.payload.instance_id, env.payload.state);
                let (common, by) = (&self.common, env.id);
                match self
                    .components
                    .patch(&instance, (&state, by.clone()), common, fx)
                {
                    Ok(false) => self.surfaces.patch(instance, state, by, common, fx),
                    other => other.map(|_| ()),
                }
            }
            Message::UiClose(env) => {
                let (instance, reason) = (env.payload.instance_id, env.payload.reason);
                if self
                    .components
                    .close(&instance, reason.clone(), &self.common, fx)
                    || self.mcp.close(&instance, reason.clone(), &self.common, fx)
                {
                    Ok(())
                } else {
                    self.surfaces.close(instance, reason, &self.common, fx)
                }
            }
            Message::AppCall(env) => {
                fx.extend(self.capabilities.call(env, &mut self.common));
                Ok(())
            }
            _ => Ok(()),
        };
        match outcome {
            Ok(()) => self.common.stats_mut().envelopes_accepted += 1,
            Err(err) => self.refuse(err.about(about), Some(sender), fx),
        }
    }

    /// The agent's `ui.open` of a Surface, or (`restored`) one from a hibernated Surface's
    /// record: a component holding the id is replaced by the Surface (R-STD-1).
    fn open(
        &mut self,
        env: Envelope<UiOpen>,
        restored: bool,
        fx: &mut Vec<Effect>,
    ) -> Result<(), ProtocolError> {
        let (components, mcp) = (&mut self.components, &mut self.mcp);
        let others = mcp.len();
        let make_room = |i: &InstanceId, c: &Common, fx: &mut Vec<Effect>| {
            components.replace(i, c, fx);
            mcp.replace(i, c, fx);
        };
        self.surfaces
            .open(env, (restored, others), &mut self.common, fx, make_room)
    }

    /// R-SES-1: the first well-formed envelope of an admitted agent establishes the conversation
    /// (even when its payload is then refused), and the inventory goes out before any answer
    /// to it (R-INV-1). Once established, nothing.
    fn establish(&mut self, conversation: &ConversationId, fx: &mut Vec<Effect>) {
        if self.common.establish(conversation) {
            fx.extend(self.capabilities.establish(conversation, &mut self.common));
        }
    }

    /// Answers a refused envelope (R-ENV-5); a refused call is audited first (R-CAP-6).
    fn refuse(&mut self, err: ProtocolError, target: Option<Party>, fx: &mut Vec<Effect>) {
        self.capabilities.audit_refusal(&err);
        fx.extend(self.common.refusal(err, target));
    }

    /// Refuses `message` with `err` (the session table's own refusals, e.g.
    /// `too_many_sessions`), answered like any refusal (R-ENV-5); nothing else changes.
    pub(crate) fn refuse_message(&mut self, message: &Message, err: ProtocolError) -> Vec<Effect> {
        let mut fx = Vec::new();
        let err = err.about(readable(message));
        self.refuse(err, Some(message.sender().clone()), &mut fx);
        fx
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
        let target = refused.sender.as_deref().cloned();
        self.refuse(err.about(about), target, &mut fx);
        fx
    }

    /// Refuses an inbound envelope that could not be decoded (R-ENV-5); the session table
    /// answers those itself, in the refused envelope's conversation when it can be read.
    pub(crate) fn refuse_undecodable(&mut self, err: ProtocolError) -> Vec<Effect> {
        let mut fx = Vec::new();
        self.refuse(err, None, &mut fx);
        fx
    }

    /// Establishes the session for a well-formed envelope whose payload could not be decoded
    /// (R-SES-1, [`ProtocolError::sender`]): admitted like any envelope, then the inventory
    /// first (R-INV-1) and the refusal's answer. Without a readable sender and conversation it
    /// is refused like any undecodable envelope.
    pub(crate) fn establish_refusing(&mut self, err: ProtocolError) -> Vec<Effect> {
        let (Some(_), Some(conversation)) = (&err.sender, err.conversation_id.clone()) else {
            return self.refuse_undecodable(err);
        };
        if let Err(admission) = self.check_refused_admission(&err) {
            return self.refuse_about(&err, admission);
        }
        let mut fx = Vec::new();
        self.establish(&conversation, &mut fx);
        let sender = err.sender.as_deref().cloned();
        self.refuse(err, sender, &mut fx);
        fx
    }

    /// The audit records of refusals merged so far (R-CAP-6), written out now.
    pub(crate) fn flush_refusal_audit(&mut self) {
        self.capabilities.flush_refusals();
    }

    /// Announces the session's current `client.inventory` and `app.list` again (R-INV-1), for an
    /// agent whose transport connected again: the same two envelopes a new session sends, under
    /// a new revision (R-INV-2). Empty when capabilities are off (the host then sends no
    /// inventory at all) or the session is not established yet.
    pub fn announce_inventory(&mut self) -> Vec<Effect> {
        self.capabilities
            .with_enabled(&mut self.common, |caps, out| caps.announce_again(out))
    }

    /// Every open Surface goes away for `reason` (R-UI-12), in instance order: each is closed
    /// ([`CloseReason::Gone`]) and the agent gets one `ui.event` `close` with `data.reason` per
    /// Surface, as [`PageInput::Gone`] does for one. For [`GoneReason::AgentGone`], the
    /// embedder's grace for an agent that went away ran out.
    pub fn all_gone(&mut self, reason: GoneReason) -> Vec<Effect> {
        let keys: Vec<SurfaceKey> = self.surfaces().collect();
        let mut fx = Vec::new();
        for key in keys {
            self.surfaces.gone(&key, reason, &mut self.common, &mut fx);
        }
        self.mcp.all_gone(reason, &mut self.common, &mut fx);
        fx
    }

    /// Closes every Surface, sending nothing upstream (the agent's stream ended). Capability
    /// calls still waiting for a lookup or a decision are cancelled (their prompts withdrawn,
    /// their records finished, audited); running ones finish on their own.
    pub fn close_all(&mut self) -> Vec<Effect> {
        let mut fx = self.surfaces.end(&self.common);
        fx.extend(self.components.end(&self.common));
        fx.extend(self.mcp.end(&mut self.common));
        fx.extend(self.capabilities.end(&mut self.common));
        fx
    }

    /// Handles one message posted by the page of webview `key` (R-SEC-4: the identity is the
    /// webview that received it, never a field of the message).
    pub fn handle_bridge(&mut self, key: &SurfaceKey, raw: &str) -> Vec<Effect> {
        self.surfaces.handle_bridge(key, raw, &mut self.common)
    }

    /// `count` page events of Surface `instance` were dropped on the way out because the agent's
    /// reader fell behind; once it caught up it gets one `client.error` `events_dropped` naming
    /// the instance and the count (`in_reply_to: null`). It is never a `ui.event`, which a page
    /// could imitate.
    pub fn events_dropped(&mut self, instance: &InstanceId, count: u64) -> Vec<Effect> {
        self.surfaces
            .events_dropped(instance, count, &mut self.common)
    }

    /// Handles one report of webview `key` (a Surface's, or a standard component's view):
    /// what each one does is on its [`PageInput`] variant. The identity is the webview that
    /// reported it, never a field of a message (R-SEC-4); a stale key changes nothing.
    pub fn handle_page(&mut self, key: &SurfaceKey, input: PageInput<'_>) -> Vec<Effect> {
        let parts = (&mut self.surfaces, &mut self.components, &mut self.mcp);
        routes::page(key, input, &mut self.common, parts)
    }

    /// The host gives hibernated Surface `key` a new webview (it was hidden, and is shown
    /// again): the Surface, its key and its instance stay as they were; the new page is a
    /// first load that gets the current state, the latest patch included, after its `ready`
    /// (R-UI-3). Neither the reopen budget nor the reload-loop bound counts it. Returns what
    /// to create the view from; `None` for a stale key. Its record, if the store keeps one, is
    /// forgotten (#29).
    pub fn wake(&mut self, key: &SurfaceKey) -> Option<SurfaceOpen> {
        self.surfaces.wake(key, &mut self.common)
    }

    /// The host hibernated Surface `key` (#29): a vouched session keeps its record in the
    /// store, so that a restart can bring it back; nothing goes upstream. Nothing for a stale
    /// key.
    pub fn hibernated(&mut self, key: &SurfaceKey) {
        self.surfaces.hibernated(key, &self.common);
    }

    /// The standard components the driver can render changed (R-STD-14): `ui.open` accepts
    /// exactly `set` from now on, one withdrawn since it was offered is `revoked` (R-STD-4), and
    /// an established session with capabilities announces a new inventory revision (R-INV-2).
    /// Open instances stay open.
    pub fn set_standard_components(&mut self, set: ComponentSet) -> Vec<Effect> {
        self.components.offer(set.kinds());
        self.common.set_standard_components(set);
        self.capabilities.components_changed(&mut self.common)
    }

    /// The standard components the driver can render now.
    pub fn standard_components(&self) -> &ComponentSet {
        &self.common.config().standard_components
    }

    /// How many standard component instances are open now (R-STD-17).
    pub fn component_count(&self) -> usize {
        self.components.len()
    }

    /// The keys of the open component instances, in instance order.
    pub fn components(&self) -> impl Iterator<Item = SurfaceKey> + '_ {
        self.components.keys(&self.common)
    }

    /// The user activated the link to `url` in component `key` (after the driver's activation
    /// checks, R-STD-8): the link, when it is one the kernel put in the instance's current
    /// Markdown tree (R-STD-11), for the host's link confirm; `None` for any other URL, a
    /// stale key, or under [`LinkPolicy::Off`](crate::LinkPolicy::Off), where no tree has one.
    pub fn component_link(&mut self, key: &SurfaceKey, url: &str) -> Option<ComponentLink> {
        self.components.link(key, url, &mut self.common)
    }

    /// The user answered component `key` (after the driver's activation checks, R-STD-8): the
    /// answer is checked against the props, the round locked, and `ui.event` `submit` or
    /// `cancel` sent with `{answer?, answer_id, opened_by, state_from, round, via, input}`
    /// (R-STD-6, R-STD-7). A refused answer is dropped and counted; nothing is sent.
    pub fn component_answered(
        &mut self,
        key: &SurfaceKey,
        answer: UserAnswer,
    ) -> Result<Vec<Effect>, AnswerRefusal> {
        routes::component_answered(key, &answer, &mut self.common, &mut self.components)
    }

    /// Every open component whose `props.expires_at` is at or before `now` is locked, hidden,
    /// and the agent gets `ui.event close {reason:"expired"}` (R-STD-7), in instance order.
    pub fn expire_components(&mut self, now: Timestamp) -> Vec<Effect> {
        self.components.expire(now, &mut self.common)
    }

    /// The earliest `props.expires_at` of the open components: when to call
    /// [`Session::expire_components`] next.
    pub fn next_component_expiry(&self) -> Option<Timestamp> {
        self.components.next_expiry()
    }

    /// Reads this session's records back from the store, when it is vouched and established
    /// (R-STD-15, #29): its components are shown again, then its hibernated Surfaces opened,
    /// each checked again like an agent's open and its opener told `restored`. An instance open
    /// already is left as it is, so a second call restores nothing more; a read that fails
    /// restores nothing.
    pub fn restore(&mut self) -> Vec<Effect> {
        let Some((owner, conversation)) = self.common.record_owner() else {
            return Vec::new();
        };
        let Ok((components, surfaces)) = self.common.store().read_records(&owner, &conversation)
        else {
            return Vec::new();
        };
        let (held_surfaces, mcp) = (&self.surfaces, &self.mcp);
        let held = |i: &InstanceId| held_surfaces.contains(i) || mcp.contains(i);
        let mut fx = self.components.restore(components, held, &mut self.common);
        let (held_components, mcp) = (&self.components, &self.mcp);
        let held = |i: &InstanceId| held_components.contains(i) || mcp.contains(i);
        fx.extend(self.surfaces.restore(surfaces, held, &mut self.common));
        fx
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
        self.capabilities
            .start(setup, (registered, hidden), &mut self.common)
    }

    /// The app center changed (an app installed, upgraded, rolled back, disabled or removed,
    /// perhaps by another process): the inventory is announced again when the enabled apps
    /// differ, and each open Surface of an app that is no longer enabled at its version is
    /// closed, the agent told `app_disabled`, `app_removed` or `app_upgraded` (R-UI-12).
    pub fn apps_changed(&mut self) -> Vec<Effect> {
        let mut fx = Vec::new();
        let Some(catalog) = self.common.config().app_catalog.clone() else {
            return fx;
        };
        self.surfaces.retire(&catalog, &mut self.common, &mut fx);
        fx.extend(self.capabilities.apps_changed(&mut self.common));
        fx
    }

    /// The capability kernel, once enabled: its registry and its pending calls.
    pub fn capabilities(&self) -> Option<&Capabilities> {
        self.capabilities.get()
    }

    /// Registers a capability (a name registered twice is an error); an established session
    /// gets a new inventory (R-INV-1).
    pub fn register_capability(
        &mut self,
        capability: Capability,
    ) -> Result<Vec<Effect>, UsageError> {
        self.capabilities
            .with(&mut self.common, |caps, out| caps.register(capability, out))
    }

    /// Unregisters a capability; the session gets a new inventory, and a later call to it is
    /// answered `unsupported` with `revoked` (R-INV-4).
    pub fn unregister_capability(
        &mut self,
        name: &CapabilityName,
    ) -> Result<Vec<Effect>, UsageError> {
        self.capabilities
            .with(&mut self.common, |caps, out| caps.unregister(name, out))
    }

    /// Hides capability `name` from `agent` (or shows it again); this session gets a new
    /// inventory when its agent is `agent`.
    pub fn set_capability_visible(
        &mut self,
        agent: &AgentIdentity,
        name: &CapabilityName,
        visible: bool,
    ) -> Result<Vec<Effect>, UsageError> {
        self.capabilities.with(&mut self.common, |caps, out| {
            caps.set_visible(agent, name, visible, out);
            Ok(())
        })
    }

    /// Forgets the conversation-scoped "always" for `name` (a grant of a vouched identity is
    /// revoked in the store instead); `Ok(false)` when there was none.
    pub fn forget_conversation_grant(&mut self, name: &CapabilityName) -> Result<bool, UsageError> {
        self.capabilities.forget_conversation_grant(name)
    }

    /// The platform answers a question the session asked, by its [`Ticket`]: the user's
    /// consent, the hook's verdict, a handler's result. The one way such answers come back
    /// (the store answers as it is called). An answer of the wrong kind is a [`UsageError`];
    /// an answer to a withdrawn ticket is ignored.
    pub fn answered(&mut self, ticket: Ticket, answer: Answer) -> Result<Vec<Effect>, UsageError> {
        self.capabilities
            .answered((ticket, answer), &mut self.common)
    }

    /// Expires calls whose `expires_at` passed while they waited for a decision and fails
    /// handlers past their timeout. Call it when [`Session::next_capability_wakeup`] says.
    pub fn poll_capabilities(&mut self) -> Vec<Effect> {
        let now = self.common.now();
        self.capabilities
            .with_enabled(&mut self.common, |caps, out| caps.poll(now, out))
    }

    /// How long until [`Session::poll_capabilities`] has work, if any call waits on a deadline.
    pub fn next_capability_wakeup(&self) -> Option<Duration> {
        self.capabilities.next_wakeup(self.common.now())
    }

    /// How long until [`Session::poll_mcp`] has work: an MCP App view's forwarded request
    /// timing out, its latest model context going up (R-MCP-6), or its teardown deadline
    /// (R-MCP-8). [`Sessions::poll_timeout`](crate::Sessions::poll_timeout) includes it.
    pub fn next_mcp_wakeup(&self) -> Option<Duration> {
        let now = self.common.now();
        self.mcp.next_deadline().map(|at| at.saturating_sub(now))
    }

    /// Does the MCP App views' timed work that is due now ([`Session::next_mcp_wakeup`]).
    pub fn poll_mcp(&mut self) -> Vec<Effect> {
        self.mcp.handle_timeout(&mut self.common)
    }

    /// The host's answer to MCP App view `key`'s request `id`, one it took itself
    /// ([`McpEffect::HostOwned`](crate::McpEffect::HostOwned), R-MCP-8): posted to the view
    /// under that id. Nothing for a stale key.
    pub fn mcp_host_answer(
        &mut self,
        key: &SurfaceKey,
        id: &RpcId,
        outcome: Result<serde_json::Value, RpcError>,
    ) -> Vec<Effect> {
        self.mcp.host_answer(key, (id, outcome), &self.common)
    }
}
