//! Typed models of the `lineup.v1` envelope (R-ENV-1) and its message types (R-ENV-2), plus the
//! host's `lineup.v1.client.error` (R-ENV-5).

use std::fmt;

use serde::de::DeserializeOwned;
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};

use crate::bundle::{InlineBundle, Integrity};
use crate::component::ComponentOpen;
pub use crate::component::{ComponentSchemas, StandardComponent};
use crate::error::ErrorCode;
pub use crate::ids::Party;
use crate::ids::{
    AppId, AppVersion, CallId, CapabilityName, ConversationId, EventName, InstanceId, InvalidValue,
    MessageId, OpaqueVersion, Revision, Risk, Status, SurfaceId,
};
use crate::json::JsonObject;
use crate::mcp_message::{McpAppOpen, McpResource, McpTool};
use crate::mcp_upstream::{McpAnswer, McpNotify, McpProgress, McpRequest};
use crate::redact::Fingerprint;
pub use crate::timestamp::Timestamp;

/// The protocol version every envelope carries in `v` (R-ENV-1).
pub const PROTOCOL_VERSION: u64 = 1;

/// A payload type of the protocol: knows its `type` string.
pub trait Payload: Serialize + DeserializeOwned {
    /// The envelope `type` of this payload, e.g. `lineup.v1.ui.open`.
    const TYPE: &'static str;
}

/// One `lineup.v1` envelope with a typed payload (R-ENV-1). `v` is always `1` and `type` comes
/// from the payload type.
#[derive(Debug, Clone, PartialEq)]
pub struct Envelope<P> {
    /// The message id.
    pub id: MessageId,
    /// The conversation the message belongs to.
    pub conversation_id: ConversationId,
    /// Who sent it.
    pub sender: Party,
    /// Whom it is for, when the sender names a target.
    pub target: Option<Party>,
    /// The typed payload.
    pub payload: P,
}

impl<P: Payload> Serialize for Envelope<P> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("v", &PROTOCOL_VERSION)?;
        map.serialize_entry("id", &self.id)?;
        map.serialize_entry("type", P::TYPE)?;
        map.serialize_entry("conversation_id", &self.conversation_id)?;
        map.serialize_entry("sender", &self.sender)?;
        if let Some(target) = &self.target {
            map.serialize_entry("target", target)?;
        }
        map.serialize_entry("payload", &self.payload)?;
        map.end()
    }
}

macro_rules! payload_type {
    ($ty:ty, $name:literal) => {
        impl Payload for $ty {
            const TYPE: &'static str = $name;
        }
    };
}

/// A component open shares `lineup.v1.ui.open` with a Surface open (R-STD-1).
impl Payload for ComponentOpen {
    const TYPE: &'static str = "lineup.v1.ui.open";
}

/// An MCP App view's open shares `lineup.v1.ui.open` too (R-MCP-3).
impl Payload for McpAppOpen {
    const TYPE: &'static str = "lineup.v1.ui.open";
}
payload_type!(McpResource, "lineup.v1.mcp.resource");
payload_type!(McpTool, "lineup.v1.mcp.tool");
payload_type!(McpAnswer, "lineup.v1.mcp.answer");
payload_type!(McpProgress, "lineup.v1.mcp.progress");
payload_type!(McpRequest, "lineup.v1.mcp.request");
payload_type!(McpNotify, "lineup.v1.mcp.notify");

/// `lineup.v1.ui.open`: create or replace a Surface instance (R-UI-1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UiOpen {
    /// The instance to create; an open with an existing id replaces that instance (R-UI-1).
    pub instance_id: InstanceId,
    /// Where the Surface's code comes from (R-UI-9).
    pub app: SurfaceSource,
    /// The initial state; absent means `{}` (R-UI-3). When present it must be an object
    /// (`null` is refused).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present_object"
    )]
    pub state: Option<JsonObject>,
}
payload_type!(UiOpen, "lineup.v1.ui.open");

/// A member that may be absent but, when present, must be a JSON object (not `null`).
fn present_object<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<JsonObject>, D::Error> {
    JsonObject::deserialize(d).map(Some)
}

/// The source of a Surface (R-UI-9).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawApp", into = "RawApp")]
pub enum SurfaceSource {
    /// An inline bundle sent by the agent.
    Inline(InlineApp),
    /// A Surface of an app installed in the local app center, by id.
    Installed(InstalledSurface),
}

/// An inline app: identity plus bundle (R-UI-2).
#[derive(Debug, Clone, PartialEq)]
pub struct InlineApp {
    /// The reverse-domain app id.
    pub id: AppId,
    /// The display name, untrusted: sanitise before showing it ([`crate::display_title`]).
    pub name: Option<String>,
    /// The SemVer version.
    pub version: AppVersion,
    /// The declared digest of the bundle (R-UI-2a), when the agent sent one.
    pub integrity: Option<Integrity>,
    /// The code.
    pub bundle: InlineBundle,
}

/// A reference to a Surface of an installed app (R-UI-9).
#[derive(Debug, Clone, PartialEq)]
pub struct InstalledSurface {
    /// The app id.
    pub id: AppId,
    /// The app version the agent asks for, if any.
    pub version: Option<AppVersion>,
    /// Which of the app's Surfaces.
    pub surface: SurfaceId,
}

/// The wire shape of `payload.app` before it is told apart into [`SurfaceSource`].
#[derive(Serialize, Deserialize)]
struct RawApp {
    id: AppId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    version: Option<AppVersion>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    integrity: Option<Integrity>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    html: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    css: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    js: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    surface: Option<SurfaceId>,
}

/// The longest app name accepted, in characters.
const MAX_APP_NAME_CHARS: usize = 256;

impl TryFrom<RawApp> for SurfaceSource {
    type Error = InvalidValue;
    fn try_from(raw: RawApp) -> Result<Self, InvalidValue> {
        let has_code = raw.html.is_some() || raw.css.is_some() || raw.js.is_some();
        if let Some(name) = &raw.name {
            let chars = name.chars().count();
            if chars > MAX_APP_NAME_CHARS {
                return Err(InvalidValue::new(
                    "app.name",
                    name,
                    format!("is {chars} characters long; the limit is {MAX_APP_NAME_CHARS}"),
                ));
            }
        }
        match (has_code, raw.surface) {
            (true, Some(surface)) => Err(InvalidValue::new(
                "app",
                surface.as_str(),
                "has both a bundle (html/css/js) and a surface id; send one or the other (R-UI-9)",
            )),
            (false, Some(surface)) => Ok(SurfaceSource::Installed(InstalledSurface {
                id: raw.id,
                version: raw.version,
                surface,
            })),
            (false, None) => Err(InvalidValue::new(
                "app",
                raw.id.as_str(),
                "has neither html/css/js nor a surface id (R-UI-2, R-UI-9)",
            )),
            (true, None) => {
                let missing = [("html", &raw.html), ("css", &raw.css), ("js", &raw.js)]
                    .into_iter()
                    .find(|(_, v)| v.is_none())
                    .map(|(k, _)| k);
                if let Some(field) = missing {
                    return Err(InvalidValue::new(
                        "app",
                        raw.id.as_str(),
                        format!("is missing app.{field}; an inline bundle has html, css and js (R-UI-2)"),
                    ));
                }
                let Some(version) = raw.version else {
                    return Err(InvalidValue::new(
                        "app",
                        raw.id.as_str(),
                        "is missing app.version (SemVer, R-UI-2)",
                    ));
                };
                let bundle = InlineBundle::new(
                    raw.html.unwrap_or_default(),
                    raw.css.unwrap_or_default(),
                    raw.js.unwrap_or_default(),
                )?;
                Ok(SurfaceSource::Inline(InlineApp {
                    id: raw.id,
                    name: raw.name,
                    version,
                    integrity: raw.integrity,
                    bundle,
                }))
            }
        }
    }
}

impl From<SurfaceSource> for RawApp {
    fn from(source: SurfaceSource) -> Self {
        match source {
            SurfaceSource::Inline(app) => RawApp {
                id: app.id,
                name: app.name,
                version: Some(app.version),
                integrity: app.integrity,
                html: Some(app.bundle.html().to_owned()),
                css: Some(app.bundle.css().to_owned()),
                js: Some(app.bundle.js().to_owned()),
                surface: None,
            },
            SurfaceSource::Installed(s) => RawApp {
                id: s.id,
                name: None,
                version: s.version,
                integrity: None,
                html: None,
                css: None,
                js: None,
                surface: Some(s.surface),
            },
        }
    }
}

/// `lineup.v1.ui.patch`: replace an open instance's state (R-UI-3, R-UI-4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UiPatch {
    /// The instance to update.
    pub instance_id: InstanceId,
    /// The new state; it replaces the old one whole (R-UI-3).
    pub state: JsonObject,
}
payload_type!(UiPatch, "lineup.v1.ui.patch");

/// `lineup.v1.ui.close`: the agent closes an instance (R-UI-5). `Debug` shows the agent's
/// reason as a [`Fingerprint`] (logs reach journald).
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct UiClose {
    /// The instance to close.
    pub instance_id: InstanceId,
    /// Why, in the agent's words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}
payload_type!(UiClose, "lineup.v1.ui.close");

impl fmt::Debug for UiClose {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UiClose")
            .field("instance_id", &self.instance_id)
            .field("reason", &self.reason.as_ref().map(Fingerprint::of))
            .finish()
    }
}

/// `lineup.v1.ui.event`: a user action in a Surface, or the user's close (R-UI-5, R-UI-6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UiEvent {
    /// The Surface the event came from.
    pub instance_id: InstanceId,
    /// The event name.
    pub event: EventName,
    /// The event's data, smaller than 16 KiB of JSON (R-UI-7).
    pub data: JsonObject,
}
payload_type!(UiEvent, "lineup.v1.ui.event");

/// One Surface an installed app declares, with its event names (R-INV-1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeclaredSurface {
    /// The Surface id within the app.
    pub id: SurfaceId,
    /// The events it may send.
    pub events: Vec<EventName>,
}

/// An app enabled in the local app center (R-INV-3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InventoryApp {
    /// The app id.
    pub id: AppId,
    /// The installed version.
    pub version: AppVersion,
    /// Its Surfaces.
    pub surfaces: Vec<DeclaredSurface>,
}

/// A declared capability (R-CAP-2). Declaring is never granting (R-CAP-1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CapabilityDecl {
    /// The capability name.
    pub name: CapabilityName,
    /// Its opaque version.
    pub version: OpaqueVersion,
    /// Its risk level.
    pub risk: Risk,
    /// The JSON Schema of its arguments; may be absent (R-CAP-2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_schema: Option<JsonObject>,
}

/// `lineup.v1.client.inventory`: the host's revisioned interface list (R-INV-1..3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientInventory {
    /// The revision; never reused (R-INV-2).
    pub revision: Revision,
    /// Natively rendered components.
    pub standard_components: Vec<StandardComponent>,
    /// Enabled, verified apps.
    pub applications: Vec<InventoryApp>,
    /// Capabilities visible under the current policy.
    pub capabilities: Vec<CapabilityDecl>,
    /// What of MCP App views the host shows, exactly when it shows them (R-MCP-13); absent
    /// otherwise, and an agent's `mcp_app` is then `unsupported`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_apps: Option<crate::mcp_host::McpAppsInventory>,
}
payload_type!(ClientInventory, "lineup.v1.client.inventory");

/// `lineup.v1.app.list`: the capability-only projection of the inventory (R-CAP-1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AppList {
    /// The declared capabilities.
    pub capabilities: Vec<CapabilityDecl>,
}
payload_type!(AppList, "lineup.v1.app.list");

/// `lineup.v1.app.call`: the agent asks to run a declared capability (R-CAP-4). `Debug` shows
/// the reason and the arguments as [`Fingerprint`]s (logs reach journald).
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct AppCall {
    /// The idempotency key (R-CAP-5).
    pub call_id: CallId,
    /// The capability to run.
    pub capability: CapabilityName,
    /// Why, in the agent's words; shown to the user escaped (R-SEC-6).
    pub reason: String,
    /// When the request lapses.
    pub expires_at: Timestamp,
    /// The capability's arguments.
    pub arguments: JsonObject,
}
payload_type!(AppCall, "lineup.v1.app.call");

impl fmt::Debug for AppCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AppCall")
            .field("call_id", &self.call_id)
            .field("capability", &self.capability)
            .field("reason", &Fingerprint::of(&self.reason))
            .field("expires_at", &self.expires_at)
            .field("arguments", &self.arguments)
            .finish()
    }
}

/// `lineup.v1.app.result`: the outcome of an `app.call` (R-CAP-4). `Debug` shows the result and
/// the message as [`Fingerprint`]s: the result is the capability's data, and a message about
/// invalid arguments quotes them (logs reach journald).
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct AppResult {
    /// The call this answers.
    pub call_id: CallId,
    /// The outcome.
    pub status: Status,
    /// The capability's result, for `completed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<JsonObject>,
    /// A human-readable explanation, for any other status *(host choice)*; for a malformed call
    /// it names the field, the value and the rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Why a malformed `app.call` was refused, with status `failed` (R-ENV-5 as amended).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<AppError>,
}
payload_type!(AppResult, "lineup.v1.app.result");

impl fmt::Debug for AppResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AppResult")
            .field("call_id", &self.call_id)
            .field("status", &self.status)
            .field("result", &self.result)
            .field("message", &self.message.as_ref().map(Fingerprint::of))
            .field("error", &self.error)
            .finish()
    }
}

/// The machine-readable part of a `failed` `app.result` answering a malformed `app.call`: the
/// same code, field and limit a `client.error` would carry (R-ENV-5).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppError {
    /// The stable reason, one of the `client.error` codes.
    pub code: ErrorCode,
    /// The offending field as a dotted path, when one is to blame.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// The limit that was exceeded, when one was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u64>,
}

/// `lineup.v1.client.error`: the host's answer to a message it refused that has no answer of its
/// own (R-ENV-5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientError {
    /// The `id` of the refused message, or `null` when it could not be read.
    pub in_reply_to: Option<MessageId>,
    /// The stable reason.
    pub code: ErrorCode,
    /// A sentence naming the value, the limit and the fix.
    pub message: String,
    /// The offending field, when one is to blame.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// The limit that was exceeded, when one was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u64>,
    /// The Surface concerned, for `events_dropped`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_id: Option<InstanceId>,
    /// How many, for `events_dropped`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
}
payload_type!(ClientError, "lineup.v1.client.error");

/// Any message of the protocol, typed.
#[derive(Debug, Clone, PartialEq)]
#[allow(clippy::large_enum_variant)]
pub enum Message {
    /// `lineup.v1.ui.open` (agent → client) of a Surface: `payload.app`.
    UiOpen(Envelope<UiOpen>),
    /// `lineup.v1.ui.open` (agent → client) of a standard component: `payload.component`
    /// instead of `payload.app` (R-STD-1).
    ComponentOpen(Envelope<ComponentOpen>),
    /// `lineup.v1.ui.open` (agent → client) of an MCP App view: `payload.mcp_app` instead of
    /// `payload.app` (R-MCP-3).
    McpAppOpen(Envelope<McpAppOpen>),
    /// `lineup.v1.ui.patch` (agent → client).
    UiPatch(Envelope<UiPatch>),
    /// `lineup.v1.ui.close` (agent → client).
    UiClose(Envelope<UiClose>),
    /// `lineup.v1.app.call` (agent → client).
    AppCall(Envelope<AppCall>),
    /// `lineup.v1.ui.event` (client → agent).
    UiEvent(Envelope<UiEvent>),
    /// `lineup.v1.client.inventory` (client → agent).
    ClientInventory(Envelope<ClientInventory>),
    /// `lineup.v1.app.list` (client → agent).
    AppList(Envelope<AppList>),
    /// `lineup.v1.app.result` (client → agent).
    AppResult(Envelope<AppResult>),
    /// `lineup.v1.client.error` (client → agent).
    ClientError(Envelope<ClientError>),
    /// `lineup.v1.mcp.resource` (agent → client): a chunk of an MCP App view (R-MCP-4).
    McpResource(Envelope<McpResource>),
    /// `lineup.v1.mcp.tool` (agent → client): the tool call's news for a view (R-MCP-5).
    McpTool(Envelope<McpTool>),
    /// `lineup.v1.mcp.answer` (agent → client): the answer to a forwarded request (R-MCP-6).
    McpAnswer(Envelope<McpAnswer>),
    /// `lineup.v1.mcp.progress` (agent → client): progress of a forwarded request (R-MCP-6).
    McpProgress(Envelope<McpProgress>),
    /// `lineup.v1.mcp.request` (client → agent): a view's request, forwarded (R-MCP-6).
    McpRequest(Envelope<McpRequest>),
    /// `lineup.v1.mcp.notify` (client → agent): a view's notification (R-MCP-6).
    McpNotify(Envelope<McpNotify>),
}

/// Who sends a message type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// The agent sends it to the client.
    AgentToClient,
    /// The client sends it to the agent.
    ClientToAgent,
}

macro_rules! for_each_message {
    ($self:expr, $env:ident => $body:expr) => {
        match $self {
            Message::UiOpen($env) => $body,
            Message::ComponentOpen($env) => $body,
            Message::UiPatch($env) => $body,
            Message::UiClose($env) => $body,
            Message::AppCall($env) => $body,
            Message::UiEvent($env) => $body,
            Message::ClientInventory($env) => $body,
            Message::AppList($env) => $body,
            Message::AppResult($env) => $body,
            Message::ClientError($env) => $body,
            Message::McpAppOpen($env) => $body,
            Message::McpResource($env) => $body,
            Message::McpTool($env) => $body,
            Message::McpAnswer($env) => $body,
            Message::McpProgress($env) => $body,
            Message::McpRequest($env) => $body,
            Message::McpNotify($env) => $body,
        }
    };
}

fn type_of<P: Payload>(_: &Envelope<P>) -> &'static str {
    P::TYPE
}

impl Message {
    /// Every known `type` with its direction (R-ENV-2, R-ENV-5).
    pub const TYPES: [(&'static str, Direction); 15] = [
        (UiOpen::TYPE, Direction::AgentToClient),
        (UiPatch::TYPE, Direction::AgentToClient),
        (UiClose::TYPE, Direction::AgentToClient),
        (AppCall::TYPE, Direction::AgentToClient),
        (UiEvent::TYPE, Direction::ClientToAgent),
        (ClientInventory::TYPE, Direction::ClientToAgent),
        (AppList::TYPE, Direction::ClientToAgent),
        (AppResult::TYPE, Direction::ClientToAgent),
        (ClientError::TYPE, Direction::ClientToAgent),
        (McpResource::TYPE, Direction::AgentToClient),
        (McpTool::TYPE, Direction::AgentToClient),
        (McpAnswer::TYPE, Direction::AgentToClient),
        (McpProgress::TYPE, Direction::AgentToClient),
        (McpRequest::TYPE, Direction::ClientToAgent),
        (McpNotify::TYPE, Direction::ClientToAgent),
    ];

    /// The envelope `type`.
    pub fn message_type(&self) -> &'static str {
        for_each_message!(self, env => type_of(env))
    }

    /// The envelope `id`.
    pub fn id(&self) -> &MessageId {
        for_each_message!(self, env => &env.id)
    }

    /// The conversation.
    pub fn conversation_id(&self) -> &ConversationId {
        for_each_message!(self, env => &env.conversation_id)
    }

    /// The sender.
    pub fn sender(&self) -> &Party {
        for_each_message!(self, env => &env.sender)
    }

    /// Who sends this type of message.
    pub fn direction(&self) -> Direction {
        match self {
            Message::UiOpen(_)
            | Message::ComponentOpen(_)
            | Message::UiPatch(_)
            | Message::UiClose(_)
            | Message::AppCall(_)
            | Message::McpAppOpen(_)
            | Message::McpResource(_)
            | Message::McpTool(_)
            | Message::McpAnswer(_)
            | Message::McpProgress(_) => Direction::AgentToClient,
            _ => Direction::ClientToAgent,
        }
    }

    /// The message as compact JSON on one line (no newline inside or at the end).
    pub fn to_json(&self) -> String {
        let encoded = for_each_message!(self, env => serde_json::to_string(env));
        // Every field is a string, number, bool or JSON value: serialisation cannot fail.
        encoded.unwrap_or_default()
    }

    /// The message for a log line: its JSON ([`Message::to_json`]) when that is at most
    /// [`SUMMARY_BYTES`] long; else its type, id and conversation, what it lists when it is a
    /// `client.inventory` or an `app.list`, and its length, so an app that logs what it sends
    /// upstream is not drowned by the inventory.
    ///
    /// ```
    /// use lineup_host_core::{decode, Limits, SUMMARY_BYTES};
    ///
    /// let line = r#"{"v":1,"id":"m1","type":"lineup.v1.ui.close","conversation_id":"c1",
    ///     "sender":{"kind":"agent","id":"a1"},"payload":{"instance_id":"w"}}"#;
    /// let message = decode(line.as_bytes(), &Limits::default()).unwrap();
    /// assert_eq!(message.summary(), message.to_json());
    /// assert!(message.summary().len() <= SUMMARY_BYTES);
    /// ```
    pub fn summary(&self) -> String {
        let json = self.to_json();
        if json.len() <= SUMMARY_BYTES {
            return json;
        }
        let listed = match self {
            Message::ClientInventory(env) => format!(
                ": {} standard components, {} applications, {} capabilities",
                env.payload.standard_components.len(),
                env.payload.applications.len(),
                env.payload.capabilities.len()
            ),
            Message::AppList(env) => format!(": {} capabilities", env.payload.capabilities.len()),
            _ => String::new(),
        };
        format!(
            "{} {} in {}{listed} ({} bytes)",
            self.message_type(),
            self.id(),
            self.conversation_id(),
            json.len()
        )
    }
}

/// The longest message [`Message::summary`] gives whole.
pub const SUMMARY_BYTES: usize = 240;

impl Serialize for Message {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        for_each_message!(self, env => env.serialize(serializer))
    }
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
into_message!(ClientInventory, AppList, ComponentOpen, McpAppOpen);
into_message!(
    McpResource,
    McpTool,
    McpAnswer,
    McpProgress,
    McpRequest,
    McpNotify
);
