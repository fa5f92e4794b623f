//! Bounded decoding of inbound bytes into typed [`Message`]s (R-ENV-1..6): size before parsing,
//! depth before parsing, strict JSON, then typed fields with errors that name the field.

use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::error::{ErrorCode, ProtocolError, Readable};
use crate::ids::{shorten, CallId, CapabilityName, ConversationId, MessageId};
use crate::json::{nesting_depth, parse_strict};
use crate::limits::Limits;
use crate::mcp_message::{McpResource, McpTool};
use crate::mcp_upstream::{McpAnswer, McpNotify, McpProgress, McpRequest};
use crate::message::{
    AppCall, AppList, AppResult, ClientError, ClientInventory, Envelope, Message, Party, Payload,
    SurfaceSource, UiClose, UiEvent, UiOpen, UiPatch, PROTOCOL_VERSION,
};

/// Decodes one envelope from untrusted bytes within `limits`.
///
/// Refusals carry the field, the limit and, as far as they could be read, the `id` and the
/// `conversation_id` of the envelope, and the `call_id` of an `app.call` (R-ENV-5).
///
/// ```
/// use lineup_host_core::{decode, ErrorCode, Limits, Message};
/// let line = br#"{"v":1,"id":"m1","type":"lineup.v1.ui.close","conversation_id":"c1",
///   "sender":{"kind":"agent","id":"a1"},"payload":{"instance_id":"w1","reason":"done"}}"#;
/// assert!(matches!(decode(line, &Limits::default()), Ok(Message::UiClose(_))));
///
/// let bare = br#"{"type":"lineup.v1.ui.close","payload":{"instance_id":"w1"}}"#;
/// let err = decode(bare, &Limits::default()).unwrap_err();
/// assert_eq!(err.code, ErrorCode::MissingField);
/// assert_eq!(err.field.as_deref(), Some("v"));
/// ```
pub fn decode(bytes: &[u8], limits: &Limits) -> Result<Message, ProtocolError> {
    if bytes.len() > limits.max_envelope_bytes {
        return Err(ProtocolError::new(
            ErrorCode::TooLarge,
            "R-ENV-4",
            format!(
                "envelope is {} bytes; the limit is {} bytes",
                bytes.len(),
                limits.max_envelope_bytes
            ),
        )
        .limit(limits.max_envelope_bytes));
    }
    let depth = nesting_depth(bytes, limits.max_depth);
    if depth > limits.max_depth {
        return Err(ProtocolError::new(
            ErrorCode::TooDeep,
            "R-ENV-4",
            format!(
                "envelope nests deeper than {} levels of arrays and objects",
                limits.max_depth
            ),
        )
        .limit(limits.max_depth));
    }
    let value = parse_strict(bytes).map_err(|e| {
        ProtocolError::new(
            ErrorCode::InvalidJson,
            "R-ENV-1",
            format!("envelope is not valid JSON: {e}"),
        )
    })?;
    let Value::Object(object) = value else {
        return Err(ProtocolError::new(
            ErrorCode::InvalidJson,
            "R-ENV-1",
            "envelope must be a JSON object",
        ));
    };
    let mut readable = readable(&object);
    decode_object(object, bytes, limits).map_err(|e| {
        // R-SES-1: only a refusal of the payload leaves the envelope well-formed.
        let payload_only = e.field.as_deref().is_some_and(|f| {
            f == "payload" || f.starts_with("payload.") || f.starts_with("payload/")
        });
        if !payload_only {
            readable.sender = None;
        }
        e.about(readable)
    })
}

/// Reads, leniently, what addresses the answer to `object` should it be refused: each member
/// that is present and valid on its own, whatever else is wrong (R-ENV-5).
fn readable(object: &Map<String, Value>) -> Readable {
    let text = |value: Option<&Value>| value.and_then(Value::as_str).map(str::to_owned);
    let message_type = text(object.get("type")).unwrap_or_default();
    let call_id = if answered_by_app_result(&message_type) {
        text(object.get("payload").and_then(|p| p.get("call_id")))
            .and_then(|s| CallId::try_from(s).ok())
    } else {
        None
    };
    let id = text(object.get("id")).and_then(|s| MessageId::try_from(s).ok());
    let conversation_id =
        text(object.get("conversation_id")).and_then(|s| ConversationId::try_from(s).ok());
    // The envelope fields of an agent-to-client message, all valid (R-ENV-1): such an
    // envelope establishes its session even when its payload is refused (R-SES-1).
    let well_formed = object.get("v") == Some(&Value::from(1))
        && id.is_some()
        && conversation_id.is_some()
        && AGENT_TO_CLIENT.contains(&message_type.as_str());
    let sender = object
        .get("sender")
        .filter(|_| well_formed)
        .and_then(|s| serde_json::from_value::<Party>(s.clone()).ok())
        .map(Box::new);
    let capability = if message_type == AppCall::TYPE {
        text(object.get("payload").and_then(|p| p.get("capability")))
            .and_then(|s| CapabilityName::try_from(s).ok())
            .map(Box::new)
    } else {
        None
    };
    Readable {
        id,
        conversation_id,
        call_id,
        sender,
        capability,
    }
}

/// The message types an agent sends to the client.
const AGENT_TO_CLIENT: [&str; 8] = [
    UiOpen::TYPE,
    UiPatch::TYPE,
    UiClose::TYPE,
    AppCall::TYPE,
    McpResource::TYPE,
    McpTool::TYPE,
    McpAnswer::TYPE,
    McpProgress::TYPE,
];

/// Whether a refused message of this type is answered with `app.result` when its `call_id` can be
/// read: an `app.call`, or a `lineup.v1.app.*` type this host does not know (R-ENV-3, R-ENV-5).
/// The known client-to-agent `app.*` types are not calls and get `client.error`.
fn answered_by_app_result(message_type: &str) -> bool {
    message_type == AppCall::TYPE
        || (message_type.starts_with("lineup.v1.app.")
            && !Message::TYPES
                .iter()
                .any(|(known, _)| *known == message_type))
}

/// Decodes `object`, parsed from `bytes`, into its typed message; `bytes` are read again only to
/// show a refused field's value.
fn decode_object(
    object: Map<String, Value>,
    bytes: &[u8],
    limits: &Limits,
) -> Result<Message, ProtocolError> {
    check_version(object.get("v"))?;
    let message_type = match object.get("type") {
        None => return Err(missing("type", "R-ENV-1")),
        Some(Value::String(s)) => s.clone(),
        Some(other) => {
            return Err(invalid(
                "type",
                "R-ENV-1",
                format!("type must be a string, not {other}"),
            ))
        }
    };
    if !Message::TYPES
        .iter()
        .any(|(known, _)| *known == message_type)
    {
        return Err(unknown_type(&message_type));
    }
    check_payload_is_object(object.get("payload"))?;
    let object = Value::Object(object);
    let message = match message_type.as_str() {
        UiOpen::TYPE if object.pointer("/payload/mcp_app").is_some() => {
            // R-MCP-3: exactly one of `app`, `component` and `mcp_app`.
            if let Some(other) = ["app", "component"]
                .into_iter()
                .find(|f| object.pointer(&format!("/payload/{f}")).is_some())
            {
                return Err(invalid(
                    "payload.mcp_app",
                    "R-MCP-3",
                    format!(
                        "ui.open carries both payload.{other} and payload.mcp_app; send exactly one of app, component and mcp_app"
                    ),
                ));
            }
            Message::McpAppOpen(typed(object, bytes)?)
        }
        UiOpen::TYPE if object.pointer("/payload/component").is_some() => {
            // R-STD-1: exactly one of `app` and `component`.
            if object.pointer("/payload/app").is_some() {
                return Err(invalid(
                    "payload.component",
                    "R-STD-1",
                    "ui.open carries both payload.app and payload.component; send one of them"
                        .to_owned(),
                ));
            }
            Message::ComponentOpen(typed(object, bytes)?)
        }
        UiOpen::TYPE => {
            let env: Envelope<UiOpen> = typed(object, bytes)?;
            check_bundle_size(&env.payload, limits)?;
            Message::UiOpen(env)
        }
        UiPatch::TYPE => {
            check_patch_has_no_code(&object)?;
            Message::UiPatch(typed(object, bytes)?)
        }
        UiClose::TYPE => Message::UiClose(typed(object, bytes)?),
        AppCall::TYPE => Message::AppCall(typed(object, bytes)?),
        UiEvent::TYPE => Message::UiEvent(typed(object, bytes)?),
        ClientInventory::TYPE => Message::ClientInventory(typed(object, bytes)?),
        AppList::TYPE => Message::AppList(typed(object, bytes)?),
        AppResult::TYPE => Message::AppResult(typed(object, bytes)?),
        ClientError::TYPE => Message::ClientError(typed(object, bytes)?),
        McpResource::TYPE => Message::McpResource(typed(object, bytes)?),
        McpTool::TYPE => Message::McpTool(typed(object, bytes)?),
        McpAnswer::TYPE => Message::McpAnswer(typed(object, bytes)?),
        McpProgress::TYPE => Message::McpProgress(typed(object, bytes)?),
        McpRequest::TYPE => Message::McpRequest(typed(object, bytes)?),
        McpNotify::TYPE => Message::McpNotify(typed(object, bytes)?),
        other => return Err(unknown_type(other)),
    };
    Ok(message)
}

/// R-ENV-1: a payload is an object. Checked before the typed read, which would otherwise take an
/// array for a payload's members in order and refuse its first element instead.
fn check_payload_is_object(payload: Option<&Value>) -> Result<(), ProtocolError> {
    let kind = match payload {
        None | Some(Value::Object(_)) => return Ok(()),
        Some(Value::Array(_)) => "an array",
        Some(Value::String(_)) => "a string",
        Some(Value::Number(_)) => "a number",
        Some(Value::Bool(_)) => "a boolean",
        Some(Value::Null) => "null",
    };
    Err(invalid(
        "payload",
        "R-ENV-1",
        format!("payload must be an object, not {kind}"),
    ))
}

fn check_version(v: Option<&Value>) -> Result<(), ProtocolError> {
    match v {
        None => Err(missing("v", "R-ENV-1")),
        Some(Value::Number(n)) if n.as_u64() == Some(PROTOCOL_VERSION) => Ok(()),
        Some(Value::Number(n)) => Err(ProtocolError::new(
            ErrorCode::UnsupportedVersion,
            "R-ENV-1",
            format!("v is {n}; this host speaks version {PROTOCOL_VERSION}"),
        )
        .field("v")),
        Some(other) => Err(invalid(
            "v",
            "R-ENV-1",
            format!("v must be the number {PROTOCOL_VERSION}, not {other}"),
        )),
    }
}

fn unknown_type(message_type: &str) -> ProtocolError {
    let shown = shorten(message_type, 80);
    if ["lineup.v1.ui.", "lineup.v1.app.", "lineup.v1.mcp."]
        .iter()
        .any(|family| message_type.starts_with(family))
    {
        ProtocolError::new(
            ErrorCode::Unsupported,
            "R-ENV-3",
            format!("type {shown:?} is not supported by this host; it was not executed"),
        )
        .field("type")
    } else {
        ProtocolError::new(
            ErrorCode::UnknownType,
            "R-ENV-2",
            format!("type {shown:?} is not a lineup.v1 message type"),
        )
        .field("type")
    }
}

/// The envelope fields, with the payload typed.
#[derive(Deserialize)]
struct WireEnvelope<P> {
    id: MessageId,
    conversation_id: ConversationId,
    sender: Party,
    #[serde(default)]
    target: Option<Party>,
    payload: P,
}

/// The typed envelope, read from `object` by value, so that its strings move into the typed
/// fields instead of being copied; on a refusal, `bytes` are parsed again (a cold path) to show
/// the refused field's value.
fn typed<P: Payload + DeserializeOwned>(
    object: Value,
    bytes: &[u8],
) -> Result<Envelope<P>, ProtocolError> {
    let wire: WireEnvelope<P> = serde_path_to_error::deserialize(object).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        let object = parse_strict(bytes).unwrap_or(Value::Null);
        field_error(&path, &inner, P::TYPE, &object)
    })?;
    Ok(Envelope {
        id: wire.id,
        conversation_id: wire.conversation_id,
        sender: wire.sender,
        target: wire.target,
        payload: wire.payload,
    })
}

/// Turns a serde error at `path` of `object` into an error naming the full field and its value.
fn field_error(path: &str, inner: &str, message_type: &str, object: &Value) -> ProtocolError {
    let rule = match message_type {
        AppCall::TYPE if path.starts_with("payload") => "R-CAP-4",
        McpResource::TYPE => "R-MCP-4",
        McpTool::TYPE => "R-MCP-5",
        McpAnswer::TYPE | McpProgress::TYPE | McpRequest::TYPE | McpNotify::TYPE => "R-MCP-6",
        _ => rule_for(path),
    };
    let parent = if path == "." { "" } else { path };
    // `ComponentRef` and `Placement` refuse unknown members: name the member itself.
    if let Some(rest) = inner.strip_prefix("unknown field `") {
        let name = rest.split('`').next().unwrap_or_default();
        // serde_path_to_error's path already ends at the unknown member.
        let field = if parent.ends_with(&format!(".{name}")) {
            parent.to_owned()
        } else {
            format!("{parent}.{name}")
        };
        return ProtocolError::new(
            ErrorCode::InvalidField,
            "R-STD-3",
            format!("{message_type} field {field} is not a member; unknown members are refused"),
        )
        .field(field);
    }
    if let Some(rest) = inner.strip_prefix("missing field `") {
        let name = rest.split('`').next().unwrap_or_default();
        let field = if parent.is_empty() {
            name.to_owned()
        } else {
            format!("{parent}.{name}")
        };
        let rule = if parent.is_empty() { "R-ENV-1" } else { rule };
        return ProtocolError::new(
            ErrorCode::MissingField,
            rule,
            format!("{message_type} is missing the field {field}"),
        )
        .field(field);
    }
    // `InlineBundle`, `SurfaceSource` and the MCP App types name the member they refuse
    // (`app.js …`, `resource.mime_type …`): point the field at it rather than at its parent.
    let member = inner
        .split_once(' ')
        .and_then(|(member, _)| member.split_once('.'))
        .filter(|(head, _)| parent == *head || parent.ends_with(&format!(".{head}")));
    let field = match member {
        Some((_, rest)) => format!("{parent}.{rest}"),
        None => parent.to_owned(),
    };
    // Guest code is never echoed: its errors name the offending sequence themselves.
    let is_code = [".html", ".css", ".js", "resource.text", "resource.blob"]
        .iter()
        .any(|end| field.ends_with(end));
    let value = match shown_value(object, &field) {
        Some(value) if !is_code && !inner.contains(&value) => format!(" = {value}"),
        _ => String::new(),
    };
    ProtocolError::new(
        ErrorCode::InvalidField,
        rule,
        format!("{message_type} field {field}{value} is invalid: {inner}"),
    )
    .field(field)
}

/// The value at the serde `path` (`payload.capabilities[0].risk`) of `object`, shown briefly for
/// an error message: a scalar as JSON with strings cut to 40 characters, a container by its kind.
fn shown_value(object: &Value, path: &str) -> Option<String> {
    if path.is_empty() {
        return None;
    }
    let pointer: String = path
        .split(['.', '['])
        .map(|segment| format!("/{}", segment.trim_end_matches(']')))
        .collect();
    Some(match object.pointer(&pointer)? {
        Value::String(s) => format!("{:?}", shorten(s, 40)),
        Value::Array(_) => "an array".to_owned(),
        Value::Object(_) => "an object".to_owned(),
        scalar => scalar.to_string(),
    })
}

fn rule_for(path: &str) -> &'static str {
    if path.contains("mcp_app") {
        return "R-MCP-3";
    }
    let last = path.rsplit('.').next().unwrap_or_default();
    match last {
        "instance_id" => "R-UI-1",
        "state" => "R-UI-3",
        "event" | "data" => "R-UI-7",
        "integrity" | "version" | "app" | "id" if path.contains("app") => "R-UI-2",
        "risk" | "input_schema" | "capabilities" => "R-CAP-2",
        "call_id" | "capability" | "expires_at" | "arguments" | "status" => "R-CAP-4",
        "revision" => "R-INV-2",
        _ => "R-ENV-1",
    }
}

fn check_bundle_size(open: &UiOpen, limits: &Limits) -> Result<(), ProtocolError> {
    if let SurfaceSource::Inline(app) = &open.app {
        let size = app.bundle.len();
        if size > limits.max_bundle_bytes {
            return Err(ProtocolError::new(
                ErrorCode::BundleTooLarge,
                "R-UI-2",
                format!(
                    "bundle of app {} is {size} bytes (html + css + js); the limit is {} bytes",
                    app.id, limits.max_bundle_bytes
                ),
            )
            .field("payload.app")
            .limit(limits.max_bundle_bytes));
        }
    }
    Ok(())
}

/// R-UI-4: a patch may carry only `instance_id` and `state`; code in a patch is refused whole.
fn check_patch_has_no_code(object: &Value) -> Result<(), ProtocolError> {
    // R-STD-2: nor may it carry a component or its props (the question is fixed).
    for key in ["app", "html", "css", "js", "bundle", "component", "props"] {
        if object.pointer(&format!("/payload/{key}")).is_some() {
            return Err(ProtocolError::new(
                ErrorCode::PatchCarriesCode,
                "R-UI-4",
                format!(
                    "ui.patch carries payload.{key}; a patch updates only state. To change code, close the instance and open it again with a new version"
                ),
            )
            .field(format!("payload.{key}")));
        }
    }
    Ok(())
}

fn missing(field: &str, rule: &'static str) -> ProtocolError {
    ProtocolError::new(
        ErrorCode::MissingField,
        rule,
        format!("envelope is missing the field {field}"),
    )
    .field(field)
}

fn invalid(field: &str, rule: &'static str, message: String) -> ProtocolError {
    ProtocolError::new(ErrorCode::InvalidField, rule, message).field(field)
}
