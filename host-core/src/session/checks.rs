//! What a standard component's open, patch or record must pass, checked without the session's
//! state: sizes, the frozen schemas, the props and state rules, the fallback, and the Markdown a
//! kind shows (R-STD-2, R-STD-3, R-STD-10, R-STD-13).

use serde_json::Value;

use super::degrade::Degraded;
use crate::component::{
    check_bytes, check_part, check_props, check_state, check_values, invalid, ComponentKind,
    ComponentRef, MAX_COMPONENT_BYTES, MAX_FALLBACK_BYTES,
};
use crate::display::display_text;
use crate::error::{ErrorCode, ProtocolError};
use crate::json::JsonObject;
use crate::markdown::{parse_markdown, SafeMarkdown};
use crate::url_policy::LinkPolicy;

/// Where a component's props are, for refusals.
const PROPS: &str = "payload.component.props";
/// Where a component's state is, for refusals.
const STATE: &str = "payload.state";

/// An open of a component, checked: what it shows.
pub(super) struct CheckedOpen {
    pub(super) props: JsonObject,
    pub(super) state: JsonObject,
    pub(super) fallback_text: Option<String>,
}

/// The open of `component` as `kind` with `state`, or as `text` when it is `degraded`
/// (R-STD-13), checked: sizes before anything is parsed further (R-STD-3), the fallback, the
/// props and the state.
pub(super) fn checked_open(
    kind: ComponentKind,
    component: ComponentRef,
    state: Option<JsonObject>,
    degraded: Option<&Degraded>,
) -> Result<CheckedOpen, ProtocolError> {
    let state = match degraded {
        Some(d) => d.state().clone(),
        None => state.unwrap_or_default(),
    };
    let bytes = serde_json::to_string(&component).map_or(0, |s| s.len()) + state.to_json().len();
    if bytes > MAX_COMPONENT_BYTES {
        return Err(ProtocolError::new(
            ErrorCode::TooLarge,
            "R-STD-3",
            format!("the component and its state are {bytes} bytes of JSON; the limit is {MAX_COMPONENT_BYTES}"),
        )
        .field("payload.component")
        .limit(MAX_COMPONENT_BYTES));
    }
    let fallback_text = match &component.fallback_text {
        None => None,
        Some(_) if !kind.is_display() => {
            return Err(invalid(
                "payload.component.fallback_text",
                format!("{kind} is interactive and never degrades; fallback_text is for display components (R-STD-13)"),
            ))
        }
        Some(text) => {
            check_values(
                &Value::from(text.as_str()),
                "payload.component.fallback_text",
                1,
            )?;
            check_bytes(text, "payload.component.fallback_text", MAX_FALLBACK_BYTES)?;
            Some(display_text(text, usize::MAX))
        }
    };
    // The props of a degraded component belong to the one asked for: `text` has none.
    let props = match degraded {
        Some(_) => JsonObject::new(),
        None => component.props.unwrap_or_default(),
    };
    let props = checked_props(kind, &props)?;
    let state = checked_state(kind, &props, &state)?;
    Ok(CheckedOpen {
        props,
        state,
        fallback_text,
    })
}

/// `props` checked against the props schema of `kind` and its rules, cleaned.
pub(super) fn checked_props(
    kind: ComponentKind,
    props: &JsonObject,
) -> Result<JsonObject, ProtocolError> {
    let props = check_part(
        &kind.schemas().props,
        PROPS,
        &Value::Object(props.as_map().clone()),
    )?;
    let props = JsonObject::try_from(props).unwrap_or_default();
    check_props(kind, props.as_map(), PROPS)?;
    Ok(props)
}

/// `state` checked against the state schema of `kind` and against `props`, cleaned.
pub(super) fn checked_state(
    kind: ComponentKind,
    props: &JsonObject,
    state: &JsonObject,
) -> Result<JsonObject, ProtocolError> {
    let value = Value::Object(state.as_map().clone());
    let cleaned = check_part(&kind.schemas().state, STATE, &value)?;
    let cleaned = JsonObject::try_from(cleaned).unwrap_or_default();
    check_state(kind, props.as_map(), cleaned.as_map(), STATE)?;
    Ok(cleaned)
}

/// A patch's `state` of a `kind` component with `props`: within the size limit (R-STD-3), then
/// checked whole (R-STD-2).
pub(super) fn checked_patch(
    kind: ComponentKind,
    props: &JsonObject,
    state: &JsonObject,
) -> Result<JsonObject, ProtocolError> {
    let bytes = state.to_json().len();
    if bytes > MAX_COMPONENT_BYTES {
        return Err(ProtocolError::new(
            ErrorCode::TooLarge,
            "R-STD-3",
            format!("the state is {bytes} bytes of JSON; the limit is {MAX_COMPONENT_BYTES}"),
        )
        .field(STATE)
        .limit(MAX_COMPONENT_BYTES));
    }
    checked_state(kind, props, state)
}

/// The Markdown sink of `kind`, parsed under `policy` (R-STD-10).
pub(super) fn markdown_of(
    kind: ComponentKind,
    props: &JsonObject,
    state: &JsonObject,
    policy: LinkPolicy,
) -> Option<SafeMarkdown> {
    let text = match kind {
        ComponentKind::Markdown => state.as_map().get("text"),
        ComponentKind::Alert => state.as_map().get("body"),
        ComponentKind::Confirm => props.as_map().get("body"),
        ComponentKind::Form => props.as_map().get("description"),
        ComponentKind::Text
        | ComponentKind::Status
        | ComponentKind::Progress
        | ComponentKind::Choice
        | ComponentKind::Input => None,
    };
    let text = text.and_then(Value::as_str)?;
    Some(parse_markdown(text, policy))
}
