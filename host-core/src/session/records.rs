//! A standard component's record (R-STD-15): what the store keeps of an open instance (never
//! what a `secret` input holds), and the draft the view may report.

use serde_json::{Map, Value};

use crate::component::{ComponentKind, Instance, InstanceRecord, RecordStatus, Status};
use crate::ids::{ConversationId, InstanceId};
use crate::json::JsonObject;

/// The record of component `instance` of `conversation` as it stands.
pub(super) fn record_of(
    instance: &InstanceId,
    c: &Instance,
    conversation: ConversationId,
) -> InstanceRecord {
    let status = match (&c.status, &c.last) {
        (Status::Open, _) => RecordStatus::Open,
        (Status::Answered, Some(("cancel", _))) => RecordStatus::Cancelled,
        (Status::Answered, _) => RecordStatus::Answered,
    };
    InstanceRecord {
        conversation,
        instance_id: instance.clone(),
        component: c.kind.as_str().to_owned(),
        version: crate::component::V1.to_owned(),
        props: c.props.clone(),
        state: c.state.clone(),
        opened_by: c.opened_by.clone(),
        state_from: c.state_from.clone(),
        opener: c.opener.clone(),
        status,
        round: c.round,
        draft: c.draft.clone(),
        last: c
            .last
            .as_ref()
            .map(|(_, data)| recordable_last(c.kind, c.props.as_map(), data)),
    }
}

/// The data of an answer as a record keeps it (R-STD-15, §3): everything but what a `secret`
/// input holds: an `input` of type `secret` keeps no `answer`, a `form` none of its `secret`
/// fields; `answer_id`, `round` and the rest stay, so the agent's `restored.last` still names
/// the answer it got.
fn recordable_last(
    kind: ComponentKind,
    props: &Map<String, Value>,
    data: &JsonObject,
) -> JsonObject {
    let mut kept = data.as_map().clone();
    match kind {
        ComponentKind::Input if is_secret(props) => {
            kept.remove("answer");
        }
        ComponentKind::Form => {
            let secret_fields: Vec<&str> = props
                .get("fields")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_object)
                .filter(|field| is_secret(field))
                .filter_map(|field| field.get("name").and_then(Value::as_str))
                .collect();
            if let Some(Value::Object(answer)) = kept.get_mut("answer") {
                for name in secret_fields {
                    answer.remove(name);
                }
            }
        }
        _ => {}
    }
    JsonObject::from(kept)
}

/// Whether an `input`'s props, or a `form` field, is of type `secret`.
fn is_secret(field: &Map<String, Value>) -> bool {
    field.get("type").and_then(Value::as_str) == Some("secret")
}

/// What of `draft` may be kept for a `kind` question with `props`: the shape of its answer,
/// with nothing a `secret` input holds; `None` when nothing may be kept.
pub(super) fn keepable_draft(
    kind: ComponentKind,
    props: &Map<String, Value>,
    draft: &Value,
) -> Option<Value> {
    let secret = is_secret;
    let scalar = |v: &Value| matches!(v, Value::String(_) | Value::Number(_) | Value::Null);
    let pick = |v: &Value| match v {
        Value::String(_) | Value::Null => true,
        Value::Array(items) => items.iter().all(Value::is_string),
        _ => false,
    };
    match kind {
        ComponentKind::Input if !secret(props) && scalar(draft) => Some(draft.clone()),
        ComponentKind::Choice if pick(draft) => Some(draft.clone()),
        ComponentKind::Form => {
            let given = draft.as_object()?;
            let mut kept = Map::new();
            for field in props.get("fields").and_then(Value::as_array)? {
                let Some(field) = field.as_object() else {
                    continue;
                };
                let Some(name) = field.get("name").and_then(Value::as_str) else {
                    continue;
                };
                let Some(value) = given.get(name) else {
                    continue;
                };
                let ok = match field.get("kind").and_then(Value::as_str) {
                    Some("toggle") => value.is_boolean(),
                    Some("choice") => pick(value),
                    _ => !secret(field) && scalar(value),
                };
                if ok {
                    kept.insert(name.to_owned(), value.clone());
                }
            }
            Some(Value::Object(kept))
        }
        _ => None,
    }
}
