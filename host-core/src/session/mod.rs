//! The sans-IO [`Session`]: one conversation's Surface registry. Inbound envelopes and bridge
//! messages go in; [`Effect`]s come out. It performs no I/O and reads time only through [`Clock`].

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt;
use std::time::Duration;

use crate::apps::{refusal_error, reserved_error, Assets};
use crate::bridge::DocumentId;
use crate::capability::{Capabilities, Out};
use crate::component::ComponentOpen;
use crate::decode::decode;
use crate::error::{ErrorCode, ProtocolError, Readable, UsageError};
use crate::ids::{shorten, AppVersion, ConversationId, EventName, InstanceId, MessageId, PartyId};
use crate::json::JsonObject;
use crate::limits::Limits;
use crate::message::{
    AppCall, AppList, AppResult, ClientError, ClientInventory, Envelope, InlineApp,
    InstalledSurface, Message, Party, UiClose, UiEvent, UiOpen, UiPatch,
};
use crate::recovery::ReopenBudget;
use crate::source::SourceFiles;

pub use crate::effect::{
    CloseReason, Effect, Generation, GoneReason, Stats, SurfaceKey, SurfaceOpen,
};
pub use crate::session_config::{BundlePolicy, CatalogRef, Clock, SessionConfig};

mod agent;
mod capabilities;
mod desk;
mod numbers;
mod opens;

use desk::ComponentDesk;
use numbers::Numbers;
use opens::Opens;
mod components;
mod degrade;
mod page;
mod refuse;
mod restore;
mod sleep;

struct Entry {
    generation: Generation,
    opened_by: MessageId,
    /// The `id` of the last open or patch applied (R-UI-3).
    state_from: MessageId,
    /// Whether the store keeps a record of it: it is hibernated, or restored and not woken
    /// since (#29). Forgotten when it wakes or closes.
    recorded: bool,
    opener: Party,
    /// What the Surface was opened with, kept to reopen it (R-UI-12).
    app: InlineApp,
    /// Its reopens within `Limits::reopen_window` (R-UI-12).
    reopens: ReopenBudget,
    /// The document whose `ready` was taken since the last commit (R-UI-3, R-UI-10).
    ready: Option<DocumentId>,
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

impl Entry {
    /// A new page will load in a new view: it says `ready` and gets the state, and its first
    /// commit is a load, not a reload (R-UI-3, R-UI-10).
    fn new_page(&mut self) {
        self.ready = None;
        self.committed = false;
        self.documents.clear();
    }

    /// What the host makes that new view from, under `key`.
    fn open_as(&self, key: SurfaceKey) -> SurfaceOpen {
        let installed = self.installed.as_ref();
        SurfaceOpen {
            key,
            app: self.app.clone(),
            assets: installed.map(|i| i.assets.clone()).unwrap_or_default(),
            sources: installed.map(|i| i.sources.clone()).unwrap_or_default(),
        }
    }
}

/// The installed app a Surface was opened from.
struct OpenedInstalled {
    surface: InstalledSurface,
    version: AppVersion,
    events: BTreeSet<EventName>,
    assets: Assets,
    sources: SourceFiles,
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
/// let effects = session.handle_bridge(&key, r#"{"namespace":"lineup.surface.v1","type":"ready","document":"0123456789abcdef"}"#);
/// assert!(matches!(effects.as_slice(), [Effect::Ready(_), Effect::DeliverState { .. }]));
/// ```
pub struct Session {
    config: SessionConfig,
    clock: Box<dyn Clock>,
    conversation: Option<ConversationId>,
    surfaces: BTreeMap<InstanceId, Entry>,
    /// The open standard components; they share the instance namespace with `surfaces`.
    components: ComponentDesk,
    numbers: Numbers,
    opens: Opens,
    stats: Stats,
    /// The App Capability kernel, once enabled; until then every `app.call` is `unsupported`.
    capabilities: Option<Capabilities>,
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
            components: ComponentDesk::offering(config.standard_components.kinds()),
            conversation: config.conversation_id.clone(),
            config,
            clock,
            surfaces: BTreeMap::new(),
            numbers: Numbers::default(),
            opens: Opens::default(),
            stats: Stats::default(),
            capabilities: None,
        })
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
        self.opens.set_elsewhere(open_elsewhere);
        let fx = self.handle_message(message);
        self.opens.set_elsewhere(0);
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

    /// Refuses the well-formed envelope `refused` with the table's own `err` (R-ENV-5);
    /// How many Surfaces are open now.
    pub fn surface_count(&self) -> usize {
        self.surfaces.len()
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
            if let Some(entry) = self.take_current(&key, &mut fx) {
                self.gone(&key, entry, reason, &mut fx);
            }
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
        self.hide_all_components(&mut fx);
        if let Some(caps) = self.capabilities.as_mut() {
            let mut out = Vec::new();
            caps.end(&mut out);
            // The agent is gone: its answers are on record, none is sent.
            out.retain(|o| matches!(o, Out::Effect(_)));
            fx.extend(self.capability_effects(out));
        }
        fx
    }

    /// Takes `key`'s entry out, when it is current; its record, if the store keeps one, is
    /// forgotten (#29).
    fn take_current(&mut self, key: &SurfaceKey, fx: &mut Vec<Effect>) -> Option<Entry> {
        if !self.is_current(key) {
            return None;
        }
        let entry = self.surfaces.remove(&key.instance)?;
        self.forget_surface_record(&key.instance, &entry, fx);
        Some(entry)
    }

    /// R-SES-1: the first well-formed envelope of an admitted agent establishes the conversation
    /// (even when its payload is then refused), and the inventory goes out before any answer
    /// to it (R-INV-1). Once established, nothing.
    fn establish(&mut self, conversation: &ConversationId, fx: &mut Vec<Effect>) {
        if self.conversation.is_some() {
            return;
        }
        self.conversation = Some(conversation.clone());
        let mut announce = Vec::new();
        if let Some(caps) = self.capabilities.as_mut() {
            caps.establish(conversation.clone(), &mut announce);
        }
        let announce = self.capability_effects(announce);
        fx.extend(announce);
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
        // Established even when its payload is refused below (R-SES-1, R-INV-1).
        self.establish(&conversation, fx);
        let outcome = match message {
            Message::UiOpen(env) => self.open(env, fx),
            Message::ComponentOpen(env) => self.open_component(env, fx),
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

    /// Whether this session has a conversation: it was opened for one, or an envelope
    /// established it (R-SES-1).
    pub(crate) fn is_established(&self) -> bool {
        self.conversation.is_some()
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
into_message!(ClientInventory, AppList, ComponentOpen);
