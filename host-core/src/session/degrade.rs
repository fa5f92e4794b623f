//! R-STD-13's degradation receipts: a display component the host cannot render, opened with a
//! `fallback_text`, is shown as `text` instead, and the agent is told so with a `degraded` event
//! naming what was asked, what is shown, and why. Interactive components never degrade: their
//! `fallback_text` is refused before this is reached.

use serde_json::{json, Value};

use crate::component::{ComponentKey, ComponentKind};
use crate::display::display_text;
use crate::ids::EventName;
use crate::message::UiEvent;
use crate::{Effect, ErrorCode, InstanceId, JsonObject, Party, ProtocolError, Session};

/// The most graphemes of `text` state (standard-components.md §3): a fallback is cut to it.
const MAX_TEXT_GRAPHEMES: usize = 4_000;

/// A component shown as `text` in place of the one asked for.
pub(super) struct Degraded {
    /// The component asked for.
    pub(super) from: ComponentKey,
    /// Why it is not shown: `unknown_component`, `unsupported_version` or
    /// `renderer_declined` (R-STD-13).
    pub(super) reason: &'static str,
    /// The `text` state that stands in for it: the cleaned fallback, as body text.
    pub(super) state: JsonObject,
}

impl Session {
    /// What stands in for `key`, which `offered_kind` refused with `refusal`: `text` showing
    /// `fallback` when the refusal is `unsupported`, the component is not a known interactive
    /// one, a fallback came with it and this host renders `text` v1; otherwise the refusal.
    pub(super) fn degrade(
        &self,
        key: &ComponentKey,
        fallback: Option<&str>,
        refusal: ProtocolError,
    ) -> Result<Degraded, ProtocolError> {
        let Some(fallback) = fallback else {
            return Err(refusal);
        };
        let known = ComponentKind::from_id(key.id.as_str());
        let text_offered = self
            .config
            .standard_components
            .contains(&ComponentKey::v1(ComponentKind::Text));
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
        let state =
            JsonObject::try_from(json!({"text": text, "variant": "body"})).unwrap_or_default();
        Ok(Degraded {
            from: key.clone(),
            reason,
            state,
        })
    }

    /// The `degraded {from, to, reason}` event of `instance`, for the agent that opened it.
    pub(super) fn degraded_event(
        &mut self,
        instance: &InstanceId,
        degraded: &Degraded,
        opener: Party,
    ) -> Effect {
        let data = json!({
            "from": {"id": degraded.from.id.as_str(), "version": degraded.from.version.as_str()},
            "to": {"id": ComponentKind::Text.as_str(), "version": "1"},
            "reason": degraded.reason,
        });
        let data = match data {
            Value::Object(map) => JsonObject::from(map),
            _ => JsonObject::default(),
        };
        let payload = UiEvent {
            instance_id: instance.clone(),
            event: EventName::known("degraded"),
            data,
        };
        Effect::Send(self.outbound(payload, Some(opener)))
    }
}
