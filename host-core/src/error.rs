//! The kernel's errors: [`ProtocolError`] for input the agent or the page got wrong, and
//! [`UsageError`] for calls the embedder got wrong.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::ids::Party;
use crate::ids::{CallId, CapabilityName, ConversationId, MessageId};

/// A stable, machine-readable reason for refusing a message; written in snake_case on the wire
/// (`lineup.v1.client.error`, R-ENV-5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorCode {
    /// The raw message is larger than the configured limit (R-ENV-4).
    TooLarge,
    /// The message nests arrays and objects deeper than the configured limit (R-ENV-4).
    TooDeep,
    /// The bytes are not one well-formed JSON value (UTF-8, no duplicate keys).
    InvalidJson,
    /// A required field is missing (R-ENV-1, R-ENV-6).
    MissingField,
    /// A field has the wrong type or an invalid value.
    InvalidField,
    /// `v` is not `1` (R-ENV-1).
    UnsupportedVersion,
    /// An unknown `lineup.v1.ui.*` / `lineup.v1.app.*` type, or a form this host does not run yet
    /// (R-ENV-3, R-UI-9).
    Unsupported,
    /// A type this host does not know at all.
    UnknownType,
    /// A known type that only the client sends (e.g. `ui.event` sent to the client).
    WrongDirection,
    /// The envelope belongs to another conversation than this session's.
    WrongConversation,
    /// The envelope's `sender.kind` is not `agent`: only the agent sends to the client (R-ENV-1).
    WrongSender,
    /// The inline bundle is larger than the configured limit (R-UI-2).
    BundleTooLarge,
    /// `app.integrity` does not match the bundle's digest (R-UI-2a, R-SEC-7).
    IntegrityMismatch,
    /// The bundle policy requires what the message does not carry (R-SEC-7).
    PolicyViolation,
    /// A patch or close names an instance that is not open.
    UnknownInstance,
    /// A `ui.patch` carries code or app fields; it may only carry `state` (R-UI-4).
    PatchCarriesCode,
    /// Opening one more Surface would exceed the concurrent-Surface limit.
    TooManySurfaces,
    /// Opening one more Surface would need a web process past `Limits::max_live_surfaces`, and
    /// no hidden Surface can hibernate to make room (every one is on screen or holds input).
    TooManyLiveSurfaces,
    /// Opens or replaces arrive faster than the configured rate.
    RateLimited,
    /// The platform could not create the Surface's webview.
    SurfaceFailed,
    /// A bridge message from a Surface page is malformed (never sent upstream; counted).
    InvalidBridgeMessage,
    /// Page events of one Surface were dropped because the agent's reader fell behind; the
    /// `client.error` names the instance and the count (answers are never dropped).
    EventsDropped,
    /// The `arguments` of an `app.call` do not satisfy the capability's `input_schema`; `field`
    /// is `payload.arguments` followed by the JSON pointer of the first failing value.
    InvalidArguments,
    /// The capability was offered to this agent before and has been unregistered or hidden
    /// since; it is answered `unsupported` (R-INV-4).
    Revoked,
    /// An `app.call` reuses a `call_id` of this conversation for another capability or other
    /// arguments, or one that another session or host process without this session's vouched
    /// identity used (R-CAP-5).
    CallIdReused,
    /// Too many calls of this session are waiting (for consent, or in all); the limit is in
    /// `limit`.
    TooManyCalls,
    /// The capability's handler reported an error.
    HandlerFailed,
    /// The capability's handler did not answer within its timeout; a later result is discarded.
    HandlerTimeout,
    /// The call was running when the host stopped; it is never run again and its outcome is
    /// unknown (R-CAP-5).
    OutcomeUnknown,
    /// The call could not be recorded durably, so it was not run (R-CAP-5).
    NotRecorded,
    /// The envelope names a new conversation while the host serves as many sessions as
    /// `Limits::max_sessions` allows; no session was established (R-SES-1).
    TooManySessions,
    /// Opening one more standard component would exceed `Limits::max_components`, counted
    /// apart from Surfaces (R-STD-17); the limit is in `limit`.
    TooManyComponents,
    /// A WebSocket transport received a binary frame: each envelope is one text frame (UTF-8
    /// JSON), so the frame was not read (R-ENV-5).
    BinaryFrame,
    /// A `ui.open` with `mcp_app` names a resource digest whose bytes did not arrive whole
    /// (`mcp.resource` chunks), or were dropped from the session's bounded cache: send them
    /// again, then open (R-MCP-4).
    UnknownResource,
    /// A message about an MCP App view came out of the order its rule allows: the tool call's
    /// news (R-MCP-5) or a resource's chunks (R-MCP-4).
    OutOfOrder,
}

impl ErrorCode {
    /// The snake_case wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::TooLarge => "too_large",
            ErrorCode::TooDeep => "too_deep",
            ErrorCode::InvalidJson => "invalid_json",
            ErrorCode::MissingField => "missing_field",
            ErrorCode::InvalidField => "invalid_field",
            ErrorCode::UnsupportedVersion => "unsupported_version",
            ErrorCode::Unsupported => "unsupported",
            ErrorCode::UnknownType => "unknown_type",
            ErrorCode::WrongDirection => "wrong_direction",
            ErrorCode::WrongConversation => "wrong_conversation",
            ErrorCode::WrongSender => "wrong_sender",
            ErrorCode::BundleTooLarge => "bundle_too_large",
            ErrorCode::IntegrityMismatch => "integrity_mismatch",
            ErrorCode::PolicyViolation => "policy_violation",
            ErrorCode::UnknownInstance => "unknown_instance",
            ErrorCode::PatchCarriesCode => "patch_carries_code",
            ErrorCode::TooManySurfaces => "too_many_surfaces",
            ErrorCode::TooManyLiveSurfaces => "too_many_live_surfaces",
            ErrorCode::RateLimited => "rate_limited",
            ErrorCode::SurfaceFailed => "surface_failed",
            ErrorCode::InvalidBridgeMessage => "invalid_bridge_message",
            ErrorCode::EventsDropped => "events_dropped",
            ErrorCode::InvalidArguments => "invalid_arguments",
            ErrorCode::Revoked => "revoked",
            ErrorCode::CallIdReused => "call_id_reused",
            ErrorCode::TooManyCalls => "too_many_calls",
            ErrorCode::HandlerFailed => "handler_failed",
            ErrorCode::HandlerTimeout => "handler_timeout",
            ErrorCode::OutcomeUnknown => "outcome_unknown",
            ErrorCode::NotRecorded => "not_recorded",
            ErrorCode::TooManySessions => "too_many_sessions",
            ErrorCode::BinaryFrame => "binary_frame",
            ErrorCode::TooManyComponents => "too_many_components",
            ErrorCode::UnknownResource => "unknown_resource",
            ErrorCode::OutOfOrder => "out_of_order",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Input from the agent or a Surface page that the kernel refused. Nothing changed because of it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} ({rule})")]
#[non_exhaustive]
pub struct ProtocolError {
    /// The stable reason.
    pub code: ErrorCode,
    /// The rule id of the requirement the input broke, e.g. `R-UI-7`.
    pub rule: &'static str,
    /// The offending field as a dotted path, e.g. `payload.app.integrity`.
    pub field: Option<String>,
    /// The limit that was exceeded, when a limit was.
    pub limit: Option<u64>,
    /// A lowercase sentence naming the value and, where one applies, the limit and the fix.
    pub message: String,
    /// The `id` of the refused envelope, when it could be read.
    pub in_reply_to: Option<MessageId>,
    /// The `conversation_id` of the refused envelope, when it could be read: the answer carries
    /// it (R-ENV-5).
    pub conversation_id: Option<ConversationId>,
    /// The `call_id` of a refused `app.*` message, when it could be read: such a message is
    /// answered with `app.result` rather than `client.error` (R-ENV-3, R-ENV-5).
    pub call_id: Option<CallId>,
    /// The `sender` of a refused envelope whose envelope fields (`v`, `id`, an agent-to-client
    /// `type`, `conversation_id`, `sender`) were all valid, so that only its payload was
    /// refused: such an envelope establishes its conversation's session (R-SES-1).
    pub sender: Option<Box<Party>>,
    /// The `payload.capability` of a refused `app.call`, when it could be read, for the audit
    /// (R-CAP-6).
    pub capability: Option<Box<CapabilityName>>,
}

impl ProtocolError {
    pub(crate) fn new(code: ErrorCode, rule: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            rule,
            field: None,
            limit: None,
            message: message.into(),
            in_reply_to: None,
            conversation_id: None,
            call_id: None,
            sender: None,
            capability: None,
        }
    }

    pub(crate) fn field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }

    pub(crate) fn limit(mut self, limit: usize) -> Self {
        self.limit = u64::try_from(limit).ok();
        self
    }

    pub(crate) fn in_reply_to(mut self, id: Option<MessageId>) -> Self {
        self.in_reply_to = id;
        self
    }

    /// Names the refused envelope: its `id`, `conversation_id` and, for an `app.call` or an
    /// unknown `app.*` type, its `call_id`, as far as each could be read.
    pub(crate) fn about(mut self, envelope: Readable) -> Self {
        self.in_reply_to = envelope.id;
        self.conversation_id = envelope.conversation_id;
        self.call_id = envelope.call_id;
        self.sender = envelope.sender;
        self.capability = envelope.capability;
        self
    }
}

/// What could be read of a refused envelope to address its answer.
#[derive(Debug, Clone, Default)]
pub(crate) struct Readable {
    /// Its `id`.
    pub(crate) id: Option<MessageId>,
    /// Its `conversation_id`.
    pub(crate) conversation_id: Option<ConversationId>,
    /// Its `payload.call_id`, read only for `app.call` and unknown `app.*` types.
    pub(crate) call_id: Option<CallId>,
    /// Its `sender`, set only when every envelope field is valid (see [`ProtocolError::sender`]).
    pub(crate) sender: Option<Box<Party>>,
    /// Its `payload.capability`, read only for `app.call`.
    pub(crate) capability: Option<Box<CapabilityName>>,
}

/// A call the embedder made that the kernel cannot honour; never caused by agent or page input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UsageError {
    /// A configured limit is zero or otherwise unusable.
    #[error("limit {name} = {value} is invalid: {reason}")]
    InvalidLimit {
        /// The limit's field name in [`crate::Limits`].
        name: &'static str,
        /// The configured value.
        value: u64,
        /// What a usable value looks like.
        reason: &'static str,
    },
    /// A capability of this name is registered already; unregister it first (registering a
    /// name twice is an error).
    #[error("capability {name} is registered already; unregister it before registering it again")]
    CapabilityRegistered {
        /// The name.
        name: String,
    },
    /// No capability of this name is registered.
    #[error("capability {name} is not registered")]
    CapabilityNotRegistered {
        /// The name.
        name: String,
    },
    /// A capability's `input_schema` does not compile (or names a remote or file `$ref`, which
    /// is never resolved).
    #[error("the input_schema of capability {name} does not compile: {reason}")]
    InvalidInputSchema {
        /// The capability's name.
        name: String,
        /// What the schema compiler said.
        reason: String,
    },
    /// The session has no capability kernel (`Session::enable_capabilities` was not called), or
    /// it was enabled a second time.
    #[error("capabilities {reason}")]
    Capabilities {
        /// What is wrong, e.g. `are not enabled in this session; call Session::enable_capabilities first`.
        reason: &'static str,
    },
    /// The platform answered a ticket with an answer of the wrong kind.
    #[error("ticket {ticket} waits for {expected}, not for {got}")]
    WrongAnswer {
        /// The ticket.
        ticket: u64,
        /// The answer the kernel waits for.
        expected: &'static str,
        /// The answer it was given.
        got: &'static str,
    },
    /// A session for this conversation is open already; end it first.
    #[error("a session for conversation {conversation} is open already; end it first")]
    SessionOpen {
        /// The conversation.
        conversation: String,
    },
    /// The host serves as many sessions as `Limits::max_sessions` allows; end one first.
    #[error("{open} sessions are open; the limit is {limit}; end one first")]
    TooManySessions {
        /// How many are open.
        open: usize,
        /// `Limits::max_sessions`.
        limit: usize,
    },
    /// The session could not be started (for example the capability store failed to hand out
    /// a revision epoch).
    #[error("the session cannot be started: {reason}")]
    SessionSetup {
        /// What failed.
        reason: String,
    },
    /// A standard component the kernel has no frozen schema for was named as renderable; the
    /// kernel could neither validate nor list it (R-STD-3, R-STD-14).
    #[error(
        "standard component {component} is not in the v1 catalog; the kernel cannot validate it"
    )]
    UnknownComponent {
        /// The `(id, version)`, as `id vversion`.
        component: String,
    },
    /// The outbound message-id prefix does not make valid message ids.
    #[error("message id prefix {prefix:?} is invalid: ids built from it {reason}")]
    InvalidMessageIdPrefix {
        /// The configured prefix.
        prefix: String,
        /// What is wrong with the ids it makes.
        reason: String,
    },
}
