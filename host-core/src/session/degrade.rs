//! R-STD-13's degradation receipts: a display component the host cannot render, opened with a
//! `fallback_text`, is shown as `text` instead, and the agent is told so with a `degraded` event
//! naming what was asked, what is shown, and why. Interactive components never degrade: their
//! `fallback_text` is refused before this is reached.

use serde_json::{json, Value};

use crate::component::{ComponentKey, ComponentKind};
use crate::display::display_text;
use crate::ids::EventName;
use crate::message::UiEvent;
use crate::{ErrorCode, InstanceId, JsonObject, ProtocolError};

/// The most graphemes of `text` state (standard-components.md §3): a fallback is cut to it.
const MAX_TEXT_GRAPHEMES: usize = 4_000;

/// A component shown as `text` in place of the one asked for.
pub(super) struct Degraded {
    /// The component asked for.
    from: ComponentKey,
    /// Why it is not shown: `unknown_component`, `unsupported_version` or
    /// `renderer_declined` (R-STD-13).
    reason: &'static str,
    /// The `text` state that stands in for it: the cleaned fallback, as body text.
    state: JsonObject,
}

/// What stands in for `key`, which `offered_kind` refused with `refusal`: `text` showing
/// `fallback` when the refusal is `unsupported`, the component is not a known interactive one, a
/// fallback came with it and this host renders `text` v1 (`text_offered`); otherwise the
/// refusal.
pub(super) fn degrade(
    key: &ComponentKey,
    fallback: Option<&str>,
    refusal: ProtocolError,
    text_offered: bool,
) -> Result<Degraded, ProtocolError> {
    let Some(fallback) = fallback else {
        return Err(refusal);
    };
    let known = ComponentKind::from_id(key.id.as_str());
    if refusal.code != ErrorCode::Unsupported
        || known.is_some_and(|k| !k.is_display())
        || !text_offered
    {
        return Err(refusal);
    }
    let reason = match (known, key.kind()) {
        (None, _) => "unknown_component",
        (Some(_), None) => "unsupported_version",
        (Some(_), Some(_)) => "renderer_declined",
    };
    // `display_text` marks a cut with an ellipsis, one grapheme more than it keeps.
    let text = display_text(fallback, MAX_TEXT_GRAPHEMES - 1);
    let state = JsonObject::try_from(json!({"text": text, "variant": "body"})).unwrap_or_default();
    Ok(Degraded {
        from: key.clone(),
        reason,
        state,
    })
}

impl Degraded {
    /// The `text` state that stands in for the component.
    pub(super) fn state(&self) -> &JsonObject {
        &self.state
    }

    /// The `degraded {from, to, reason}` event of `instance`, for the agent that opened it.
    pub(super) fn event(&self, instance: &InstanceId) -> UiEvent {
        let data = json!({
            "from": {"id": self.from.id.as_str(), "version": self.from.version.as_str()},
            "to": {"id": ComponentKind::Text.as_str(), "version": "1"},
            "reason": self.reason,
        });
        let data = match data {
            Value::Object(map) => JsonObject::from(map),
            _ => JsonObject::default(),
        };
        UiEvent {
            instance_id: instance.clone(),
            event: EventName::known("degraded"),
            data,
        }
    }
}
