//! Messages a Surface page posts through the bridge (R-UI-6), decoded and validated on the Rust
//! side, which is the only trust boundary (R-SEC-4).

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::diagnostic::{Diagnostic, RawDiagnostic};
use crate::error::{ErrorCode, ProtocolError};
use crate::ids::EventName;
use crate::json::{nesting_depth, parse_strict, JsonObject};
use crate::limits::Limits;

/// The namespace every upstream bridge message carries (R-UI-6).
pub const BRIDGE_NAMESPACE: &str = "lineup.surface.v1";

/// The id the bridge draws for each document it runs in (`ready`'s `document`): 16 to 64
/// lowercase hexadecimal digits. The page can post any id, so it tells documents apart for the
/// page's own good only: a forged id can cost a page its own document, never anything else.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DocumentId(String);

impl DocumentId {
    /// The shortest and longest ids taken, in hexadecimal digits.
    pub const LENGTHS: std::ops::RangeInclusive<usize> = 16..=64;

    /// The id, if `text` is one.
    ///
    /// ```
    /// use lineup_host_core::DocumentId;
    /// assert!(DocumentId::parse("0123456789abcdef0123456789abcdef").is_some());
    /// assert!(DocumentId::parse("0123").is_none());
    /// assert!(DocumentId::parse("0123456789ABCDEF0123456789abcdef").is_none());
    /// ```
    pub fn parse(text: &str) -> Option<Self> {
        (Self::LENGTHS.contains(&text.len())
            && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
        .then(|| Self(text.to_owned()))
    }

    /// The id's text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A validated message from a Surface page. It carries no instance id: the instance is the
/// webview that received it (R-UI-6, R-SEC-4).
#[derive(Debug, Clone, PartialEq)]
pub enum BridgeMessage {
    /// The guest script has run; the Surface wants its state (R-UI-3). `document` is the id
    /// the bridge drew for the document it runs in: a second `ready` with the same id is a
    /// duplicate (dropped and counted), one with another id without a commit is a document that
    /// replaced the Surface's in place (R-SEC-2a).
    Ready {
        /// The document's id.
        document: DocumentId,
    },
    /// A user action (R-UI-6, R-UI-7).
    Event {
        /// The event name.
        event: EventName,
        /// The event data, smaller than the data limit as received.
        data: JsonObject,
    },
    /// The page asks for a height in CSS pixels; the platform clamps it.
    Resize {
        /// The requested height, finite and not negative.
        height: f64,
    },
    /// The page called `window.close()`: counted ([`Stats::close_attempts`](crate::Stats)),
    /// never obeyed; a page cannot close its Surface (R-UI-5).
    CloseAttempt,
    /// A console message, uncaught error, unhandled rejection or CSP violation the page reports
    /// about itself (R-DIAG-1): page-supplied, for the embedder only, never for the agent.
    Diagnostic(Diagnostic),
}

#[derive(Deserialize)]
struct RawBridge<'a> {
    #[serde(borrow)]
    namespace: Option<&'a RawValue>,
    #[serde(rename = "type", borrow)]
    kind: Option<&'a RawValue>,
    #[serde(borrow)]
    event: Option<&'a RawValue>,
    #[serde(borrow)]
    data: Option<&'a RawValue>,
    #[serde(borrow)]
    height: Option<&'a RawValue>,
    #[serde(borrow)]
    document: Option<&'a RawValue>,
    #[serde(rename = "kind", borrow)]
    diagnostic_kind: Option<&'a RawValue>,
    #[serde(borrow)]
    level: Option<&'a RawValue>,
    #[serde(borrow)]
    message: Option<&'a RawValue>,
    #[serde(borrow)]
    source: Option<&'a RawValue>,
    #[serde(borrow)]
    line: Option<&'a RawValue>,
    #[serde(borrow)]
    column: Option<&'a RawValue>,
    #[serde(borrow)]
    directive: Option<&'a RawValue>,
    #[serde(borrow)]
    blocked: Option<&'a RawValue>,
}

fn refuse(rule: &'static str, message: String) -> ProtocolError {
    ProtocolError::new(ErrorCode::InvalidBridgeMessage, rule, message)
}

impl BridgeMessage {
    /// Decodes one raw message posted by a page.
    ///
    /// ```
    /// use lineup_host_core::{BridgeMessage, Limits};
    /// let raw = r#"{"namespace":"lineup.surface.v1","type":"event","event":"refresh","data":{"unit":"c"}}"#;
    /// let msg = BridgeMessage::decode(raw, &Limits::default()).unwrap();
    /// assert!(matches!(msg, BridgeMessage::Event { .. }));
    /// assert!(BridgeMessage::decode(r#"{"namespace":"x","type":"ready"}"#, &Limits::default()).is_err());
    /// ```
    pub fn decode(raw: &str, limits: &Limits) -> Result<Self, ProtocolError> {
        if raw.len() > limits.max_bridge_message_bytes {
            return Err(refuse(
                "R-UI-7",
                format!(
                    "bridge message is {} bytes; the limit is {} bytes",
                    raw.len(),
                    limits.max_bridge_message_bytes
                ),
            )
            .limit(limits.max_bridge_message_bytes));
        }
        if nesting_depth(raw.as_bytes(), limits.max_depth) > limits.max_depth {
            return Err(refuse(
                "R-ENV-4",
                format!(
                    "bridge message nests deeper than {} levels",
                    limits.max_depth
                ),
            )
            .limit(limits.max_depth));
        }
        // Strict parse first: duplicate keys anywhere are refused.
        parse_strict(raw.as_bytes())
            .map_err(|e| refuse("R-SEC-4", format!("bridge message is not valid JSON: {e}")))?;
        let msg: RawBridge<'_> = serde_json::from_str(raw).map_err(|e| {
            refuse(
                "R-SEC-4",
                format!("bridge message must be a JSON object: {e}"),
            )
        })?;
        let namespace = string_field(msg.namespace, "namespace")?;
        if namespace != BRIDGE_NAMESPACE {
            return Err(refuse(
                "R-SEC-4",
                format!(
                    "namespace {:?} is not {BRIDGE_NAMESPACE:?}",
                    crate::ids::shorten(&namespace, 40)
                ),
            )
            .field("namespace"));
        }
        match string_field(msg.kind, "type")?.as_str() {
            "ready" => {
                let text = string_field(msg.document, "document")?;
                let document = DocumentId::parse(&text).ok_or_else(|| {
                    refuse(
                        "R-UI-10",
                        format!(
                            "document {:?} must be {} to {} lowercase hexadecimal digits",
                            crate::ids::shorten(&text, 40),
                            DocumentId::LENGTHS.start(),
                            DocumentId::LENGTHS.end()
                        ),
                    )
                    .field("document")
                })?;
                Ok(BridgeMessage::Ready { document })
            }
            "close_attempt" => Ok(BridgeMessage::CloseAttempt),
            "event" => {
                let name = string_field(msg.event, "event")?;
                let event = EventName::try_from(name)
                    .map_err(|e| refuse("R-UI-7", e.to_string()).field("event"))?;
                let data = msg.data.ok_or_else(|| {
                    refuse("R-UI-7", "event is missing data".into()).field("data")
                })?;
                let size = data.get().len();
                if size >= limits.max_event_data_bytes {
                    return Err(refuse(
                        "R-UI-7",
                        format!(
                            "event {event} data is {size} bytes of JSON; it must be smaller than {} bytes",
                            limits.max_event_data_bytes
                        ),
                    )
                    .field("data")
                    .limit(limits.max_event_data_bytes));
                }
                let data: JsonObject = serde_json::from_str(data.get()).map_err(|e| {
                    refuse("R-UI-7", format!("event {event} data is invalid: {e}")).field("data")
                })?;
                Ok(BridgeMessage::Event { event, data })
            }
            "resize" => {
                let raw = msg.height.ok_or_else(|| {
                    refuse("R-UI-6", "resize is missing height".into()).field("height")
                })?;
                match serde_json::from_str::<f64>(raw.get()) {
                    Ok(height) if height.is_finite() && height >= 0.0 => {
                        Ok(BridgeMessage::Resize { height })
                    }
                    _ => Err(refuse(
                        "R-UI-6",
                        format!(
                            "resize height {} must be a finite number of at least 0",
                            crate::ids::shorten(raw.get(), 40)
                        ),
                    )
                    .field("height")),
                }
            }
            "diagnostic" => {
                let optional = |raw: Option<&RawValue>, name: &'static str| {
                    raw.map(|raw| string_field(Some(raw), name)).transpose()
                };
                let raw = RawDiagnostic {
                    kind: string_field(msg.diagnostic_kind, "kind")?,
                    level: optional(msg.level, "level")?,
                    message: string_field(msg.message, "message")?,
                    source: optional(msg.source, "source")?,
                    line: position_field(msg.line, "line")?,
                    column: position_field(msg.column, "column")?,
                    directive: optional(msg.directive, "directive")?,
                    blocked: optional(msg.blocked, "blocked")?,
                };
                raw.check(limits.max_diagnostic_text_bytes)
                    .map(BridgeMessage::Diagnostic)
                    .map_err(|e| refuse("R-DIAG-1", e))
            }
            other => Err(refuse(
                "R-UI-6",
                format!(
                    "type {:?} is not ready, event, resize or diagnostic",
                    crate::ids::shorten(other, 40)
                ),
            )
            .field("type")),
        }
    }
}

/// An optional line or column: a whole number from 0 to 2^32 - 1 (0 means unknown).
fn position_field(
    raw: Option<&RawValue>,
    name: &'static str,
) -> Result<Option<u32>, ProtocolError> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    match serde_json::from_str::<u32>(raw.get()) {
        Ok(0) => Ok(None),
        Ok(n) => Ok(Some(n)),
        Err(_) => Err(refuse(
            "R-DIAG-1",
            format!(
                "{name} must be a whole number from 0 to 4294967295, not {}",
                crate::ids::shorten(raw.get(), 40)
            ),
        )
        .field(name)),
    }
}

fn string_field(raw: Option<&RawValue>, name: &'static str) -> Result<String, ProtocolError> {
    let raw = raw.ok_or_else(|| {
        refuse("R-SEC-4", format!("bridge message is missing {name}")).field(name)
    })?;
    serde_json::from_str::<String>(raw.get()).map_err(|_| {
        refuse(
            "R-SEC-4",
            format!(
                "{name} must be a string, not {}",
                crate::ids::shorten(raw.get(), 40)
            ),
        )
        .field(name)
    })
}
