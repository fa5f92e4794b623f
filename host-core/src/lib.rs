//! The sans-IO protocol kernel of lineup-host.
//!
//! lineup-host shows LineUp UI Surfaces (untrusted HTML/CSS/JS sent by an AI agent) in isolated
//! webviews. This crate is the part without I/O: typed `lineup.v1` messages, bounded decoding of
//! untrusted bytes, and a [`Session`] per conversation that turns inbound envelopes and bridge
//! messages into [`Effect`]s (open, replace, deliver state, close, send, and reopen a Surface whose
//! web process was lost, [`PageInput::Lost`]). It has no webview, no threads, and reads
//! time only through the [`Clock`] the embedder provides.
//!
//! App Capabilities (`app.call`) are a kernel of their own that a session runs once the embedder
//! calls [`Session::enable_capabilities`]: the registry ([`Capability`]), the inventory, consent
//! by risk, exactly-once execution and the audit. The kernel keeps its records through the
//! [`StorePort`] the platform provides ([`SessionConfig::store`], over a [`CapabilityStore`]),
//! called as each step needs it; what comes later (consent, the hook, a handler's run) it asks
//! as [`CapabilityEffect`]s, which the platform answers by [`Ticket`].
//!
//! MCP App views (`ui.open` with `mcp_app`, the `mcp.*` envelopes) are shown by a session whose
//! [`SessionConfig::mcp_apps`] is set: each view's JSON-RPC passes its [`mcp::McpRouter`],
//! what the platform does for it comes out as [`McpEffect`]s, and what the host answers itself
//! is [`mcp_host::host_reply`]'s.
//!
//! ```
//! use std::time::Duration;
//! use lineup_host_core::{Clock, Effect, Message, PartyId, Session, SessionConfig};
//!
//! struct Fixed;
//! impl Clock for Fixed { fn monotonic(&self) -> Duration { Duration::ZERO } }
//!
//! let mut session = Session::new(
//!     SessionConfig::new(PartyId::try_from("desktop").unwrap(), "out"),
//!     Box::new(Fixed),
//! ).unwrap();
//!
//! // The agent opens a Surface…
//! let open = br#"{"v":1,"id":"m1","type":"lineup.v1.ui.open","conversation_id":"c1",
//!   "sender":{"kind":"agent","id":"a1"},"payload":{"instance_id":"w1","app":{
//!   "id":"com.example.w","version":"1.0.0","html":"<button>go</button>","css":"","js":""}}}"#;
//! let Effect::Open(surface) = &session.handle_inbound(open)[0] else { unreachable!() };
//! let key = surface.key.clone();
//!
//! // …the page posts an event through the bridge, identified by the webview that received it…
//! let effects = session.handle_bridge(&key,
//!     r#"{"namespace":"lineup.surface.v1","type":"event","event":"go","data":{"n":1}}"#);
//!
//! // …and the agent receives a `ui.event`.
//! let [Effect::Send(Message::UiEvent(event))] = effects.as_slice() else { unreachable!() };
//! assert_eq!(event.payload.event.as_str(), "go");
//! ```
#![forbid(unsafe_code)]

mod apps;
mod breakout;
mod bridge;
mod bundle;
mod capability;
mod component;
mod component_link;
mod decode;
mod diagnostic;
mod display;
mod effect;
mod error;
mod framing;
pub mod fuzz_targets;
mod ids;
mod json;
mod keys;
mod language;
mod limits;
mod link;
mod lookalike;
mod markdown;
pub mod mcp;
mod mcp_effect;
pub mod mcp_host;
mod mcp_message;
mod mcp_upstream;
mod message;
mod page_input;
mod recovery;
mod redact;
mod session;
mod session_config;
mod sessions;
mod source;
mod surface_record;
mod timestamp;
mod url_policy;
mod words;

pub use apps::{
    AppCatalog, Asset, Assets, CatalogRefusal, ListedApp, Reservation, ResolvedSurface, SCRIPT_MIME,
};
pub use breakout::Breakout;
pub use bridge::{BridgeMessage, DocumentId, BRIDGE_NAMESPACE};
pub use bundle::{InlineBundle, Integrity};
pub use capability::{
    unvouched_identity, Activity, Answer, AnswerSink, ArgsDigest, ArgumentRule, AuditKind,
    AuditRecord, CallKey, CallRecord, CallState, CallSummary, Capabilities, Capability,
    CapabilityEffect, CapabilityLimits, CapabilityPolicy, CapabilityProvider, CapabilitySetup,
    CapabilityStore, ConsentAnswer, ConsentRequest, Decision, DecisionSource, GrantKey,
    GrantRecord, HandlerError, HookAnswer, HookRequest, MemoryStore, PolicyRule, PromptWording,
    Registry, RevisionEpoch, RunRequest, StoreFailure, StoreOp, StorePort, Ticket, WallClock,
    MAX_ACTIVITY, UNVOUCHED_PREFIX,
};
pub use component::{
    validate_answer, AnswerRefusal, ComponentClosed, ComponentEffect, ComponentKey, ComponentKind,
    ComponentOpen, ComponentRef, ComponentSet, InputKind, InstanceRecord, InstanceStore,
    InstanceStoreError, Placement, RecordStatus, ShownComponent, UserAnswer, Via,
    DEFAULT_MAX_LENGTH, MAX_COMPONENT_BYTES, MAX_COMPONENT_DEPTH, MAX_DRAFT_BYTES,
    MAX_FALLBACK_BYTES, MAX_RECORDS_PER_IDENTITY, MAX_SAFE_INTEGER, RECORD_TTL_SECS, V1,
};
pub use component_link::{link_action, ComponentLink, LINK_ACTION};
pub use decode::decode;
pub use diagnostic::{
    csp_hint, CspViolation, Diagnostic, DiagnosticKind, DiagnosticLevel, PageText,
};
pub use display::{display_line, display_text, display_title, MAX_TITLE_GRAPHEMES};
pub use error::{ErrorCode, ProtocolError, UsageError};
pub use framing::{Frame, LineFramer};
pub use ids::{
    AgentIdentity, AppId, AppVersion, CallId, CapabilityName, ConversationId, EventName,
    InstanceId, InvalidValue, McpServerId, McpToolName, MessageId, OpaqueVersion, PartyId,
    Revision, Risk, Status, SurfaceId,
};
pub use json::JsonObject;
pub use language::LanguageTag;
pub use limits::Limits;
pub use link::{check_link, Link, LinkRefusal};
pub use lookalike::{glance, imitates_consent_prompt_line, CONSENT_PROMPT_TITLE};
pub use markdown::{
    parse_markdown, MarkdownNode, SafeMarkdown, IMAGE_MARKER, MAX_MARKDOWN_DEPTH,
    MAX_MARKDOWN_NODES, MAX_TABLE_COLUMNS, MAX_TABLE_ROWS,
};
pub use mcp_effect::{McpEffect, McpViewOpen};
pub use mcp_message::{
    McpApp, McpAppOpen, McpAppResource, McpAppTool, McpCsp, McpHtml, McpResource, McpTool,
    McpUiMeta, MAX_MCP_URI_BYTES, MCP_APP_MIME,
};
pub use mcp_upstream::{
    McpAnswer, McpForwarded, McpNotify, McpProgress, McpRequest, McpUpNotification,
};
pub use message::{
    AppCall, AppError, AppList, AppResult, CapabilityDecl, ClientError, ClientInventory,
    ComponentSchemas, DeclaredSurface, Direction, Envelope, InlineApp, InstalledSurface,
    InventoryApp, Message, Party, Payload, StandardComponent, SurfaceSource, Timestamp, UiClose,
    UiEvent, UiOpen, UiPatch, PROTOCOL_VERSION, SUMMARY_BYTES,
};
pub use page_input::{McpRelayDrop, PageInput};
pub use redact::{leaked_form, Fingerprint};
pub use session::{
    BundlePolicy, CatalogRef, Clock, CloseReason, Effect, Generation, GoneReason, Session,
    SessionConfig, Stats, SurfaceKey, SurfaceOpen,
};
pub use sessions::{SessionEffects, SessionFactory, SessionId, Sessions};
pub use source::{SourceFiles, SourcePart, SourcePosition};
pub use surface_record::{SurfaceRecord, SURFACE_RECORD_KIND};
pub use url_policy::{open_url_host, safe_link, LinkPolicy, SafeLink, MAX_URL_BYTES};
pub use words::{host_word, host_word_everywhere, host_word_with, host_words};
