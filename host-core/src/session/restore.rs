//! R-STD-15 in a session: every change of a vouched session's component instance is kept
//! ([`ComponentEffect::Persist`]), a close forgets it, the user's draft is kept as the view
//! reports it (never a `secret` one), and after a restart the records the driver reads back
//! for the same identity and conversation are checked again and shown, each with a
//! `restored` event for its opener.

use serde_json::{json, Map, Value};

use super::components::PROPS;
use crate::component::{
    check_part, check_props, ComponentEffect, ComponentKey, ComponentKind, Instance,
    InstanceRecord, RecordStatus, ShownComponent, Status as AnswerStatus, MAX_DRAFT_BYTES,
};
use crate::ids::{EventName, OpaqueVersion, SurfaceId};
use crate::message::UiEvent;
use crate::timestamp::Timestamp;
use crate::{
    Effect, ErrorCode, InstanceId, JsonObject, PartyId, ProtocolError, Session, StoredRecords,
    SurfaceKey, Ticket,
};

impl Session {
    /// The record of `instance` as it stands, when this session is vouched and has a
    /// conversation (nothing is kept for an unvouched session, R-STD-15).
    fn record_of(&self, instance: &InstanceId) -> Option<(PartyId, InstanceRecord)> {
        let owner = self.config.agent_id.clone()?;
        let conversation = self.conversation.clone()?;
        let c = self.components.get(instance)?;
        let status = match (&c.status, &c.last) {
            (AnswerStatus::Open, _) => RecordStatus::Open,
            (AnswerStatus::Answered, Some(("cancel", _))) => RecordStatus::Cancelled,
            (AnswerStatus::Answered, _) => RecordStatus::Answered,
        };
        let record = InstanceRecord {
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
        };
        Some((owner, record))
    }

    /// Keeps the record of `instance` (R-STD-15), when there is one to keep.
    pub(super) fn persist_component(&self, instance: &InstanceId, fx: &mut Vec<Effect>) {
        if let Some((owner, record)) = self.record_of(instance) {
            fx.push(Effect::Component(ComponentEffect::Persist {
                owner,
                record: Box::new(record),
            }));
        }
    }

    /// Forgets the record of `instance`: it closed (R-STD-15), woke, or did not pass an open's
    /// checks after a restart.
    pub(super) fn forget_component(&self, instance: &InstanceId, fx: &mut Vec<Effect>) {
        if let (Some(owner), Some(conversation)) =
            (self.config.agent_id.clone(), self.conversation.clone())
        {
            fx.push(Effect::Component(ComponentEffect::Forget {
                owner,
                conversation,
                instance: instance.clone(),
            }));
        }
    }

    /// The request to read this session's records back, when it is vouched and established
    /// (R-STD-15, #29); the driver answers [`Ticket::RECORDS`] with [`crate::Answer::Records`]
    /// through [`Session::answered`].
    pub fn restore_request(&mut self) -> Option<Effect> {
        let owner = self.config.agent_id.clone()?;
        let conversation = self.conversation.clone()?;
        self.components.ask_records();
        Some(Effect::Component(ComponentEffect::Restore {
            ticket: Ticket::RECORDS,
            owner,
            conversation,
        }))
    }

    /// The read-back of this session's records arrived: its components are shown again, then
    /// its hibernated Surfaces opened (R-STD-15, #29). Ignored unless asked for and not yet
    /// answered, as an answer to a withdrawn capability ticket is.
    pub(super) fn records_read(&mut self, records: StoredRecords) -> Vec<Effect> {
        if !self.components.take_records_answer() {
            return Vec::new();
        }
        let mut fx = self.restore_components(records.components);
        fx.extend(self.restore_surfaces(records.surfaces));
        fx
    }

    /// The view of component `key` reports the user's unsent `draft` (R-STD-15): kept with the
    /// instance and in its record, except what a `secret` input holds; dropped when it is not
    /// the shape of the component's answer or larger than [`MAX_DRAFT_BYTES`].
    pub fn component_draft(&mut self, key: &SurfaceKey, draft: &Value) -> Vec<Effect> {
        let Some(c) = self.current_component_mut(key) else {
            return Vec::new();
        };
        if c.status != AnswerStatus::Open || !c.kind.is_question() {
            return Vec::new();
        }
        let Some(kept) = keepable_draft(c.kind, c.props.as_map(), draft) else {
            return Vec::new();
        };
        if kept.to_string().len() > MAX_DRAFT_BYTES {
            return Vec::new();
        }
        c.draft = Some(kept);
        let mut fx = Vec::new();
        self.persist_component(&key.instance.clone(), &mut fx);
        fx
    }

    fn current_component_mut(&mut self, key: &SurfaceKey) -> Option<&mut Instance> {
        let session = self.config.session_id;
        self.components
            .get_mut(&key.instance)
            .filter(|c| key.session == session && c.generation == key.generation)
    }

    /// Shows again the instances of `records` (read back by the driver after a
    /// [`ComponentEffect::Restore`]) that belong to this conversation, are not open now and
    /// still pass every check of an open; each one's opener gets `restored {status,
    /// opened_by, state_from, round, last?}` (R-STD-15). A record that fails a check is
    /// forgotten.
    fn restore_components(&mut self, records: Vec<InstanceRecord>) -> Vec<Effect> {
        let mut fx = Vec::new();
        if self.config.standard_components.is_empty() {
            // A host without standard components leaves their records as they are.
            return fx;
        }
        for record in records {
            if Some(&record.conversation) != self.conversation.as_ref()
                || self.components.contains_key(&record.instance_id)
                || self.surfaces.contains_key(&record.instance_id)
            {
                continue;
            }
            if self.restore_one(&record, &mut fx).is_err() {
                self.forget_component(&record.instance_id, &mut fx);
            }
        }
        fx
    }

    fn restore_one(
        &mut self,
        record: &InstanceRecord,
        fx: &mut Vec<Effect>,
    ) -> Result<(), ProtocolError> {
        let key = ComponentKey {
            id: SurfaceId::try_from(record.component.as_str()).map_err(|e| {
                ProtocolError::new(ErrorCode::InvalidField, "R-STD-15", e.to_string())
            })?,
            version: OpaqueVersion::try_from(record.version.as_str()).map_err(|e| {
                ProtocolError::new(ErrorCode::InvalidField, "R-STD-15", e.to_string())
            })?,
        };
        let kind = self.offered_kind(&key)?;
        let props = check_part(
            &kind.schemas().props,
            PROPS,
            &Value::Object(record.props.as_map().clone()),
        )?;
        let props = JsonObject::try_from(props).unwrap_or_default();
        check_props(kind, props.as_map(), PROPS)?;
        let state = self.checked_state(kind, &props, &record.state)?;
        if self.components.len() >= self.config.limits.max_components {
            return Err(ProtocolError::new(
                ErrorCode::TooManyComponents,
                "R-STD-17",
                "no room for another component".to_owned(),
            ));
        }
        let draft = record
            .draft
            .as_ref()
            .and_then(|d| keepable_draft(kind, props.as_map(), d))
            .filter(|d| d.to_string().len() <= MAX_DRAFT_BYTES);
        let generation = self.numbers.generation();
        let answered = record.status != RecordStatus::Open;
        let last_event = match record.status {
            RecordStatus::Cancelled => "cancel",
            _ => "submit",
        };
        let instance = Instance {
            generation,
            kind,
            props: props.clone(),
            state: state.clone(),
            opened_by: record.opened_by.clone(),
            state_from: record.state_from.clone(),
            opener: record.opener.clone(),
            round: record.round.max(1),
            status: if answered {
                AnswerStatus::Answered
            } else {
                AnswerStatus::Open
            },
            expires_at: props
                .as_map()
                .get("expires_at")
                .and_then(Value::as_str)
                .and_then(Timestamp::parse),
            draft: draft.clone(),
            last: record.last.clone().map(|data| (last_event, data)),
        };
        let markdown = self.markdown_of(kind, &props, &state);
        let instance_id = record.instance_id.clone();
        let opener = instance.opener.clone();
        let round = instance.round;
        self.components.insert(instance_id.clone(), instance);
        fx.push(Effect::Component(ComponentEffect::Show(ShownComponent {
            key: SurfaceKey {
                session: self.config.session_id,
                instance: instance_id.clone(),
                generation,
            },
            kind,
            props,
            state,
            markdown,
            placement: None,
            fallback_text: None,
            draft,
            locked: answered,
        })));
        let mut data = Map::new();
        data.insert("status".into(), json!(record.status.as_str()));
        data.insert("opened_by".into(), json!(record.opened_by.as_str()));
        data.insert("state_from".into(), json!(record.state_from.as_str()));
        data.insert("round".into(), json!(round));
        if let Some(last) = &record.last {
            data.insert("last".into(), Value::Object(last.as_map().clone()));
        }
        let payload = UiEvent {
            instance_id,
            event: EventName::known("restored"),
            data: JsonObject::from(data),
        };
        fx.push(Effect::Send(self.outbound(payload, Some(opener))));
        Ok(())
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
fn keepable_draft(kind: ComponentKind, props: &Map<String, Value>, draft: &Value) -> Option<Value> {
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
