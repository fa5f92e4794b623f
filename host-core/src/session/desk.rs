//! A session's standard components (R-STD-1 … R-STD-7, R-STD-14, R-STD-15, R-STD-17): their
//! opens, patches and closes, the user's answers and drafts, expiry, links, and their records.
//! They share the instance namespace and the open rate window with Surfaces.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Map, Value};

use super::checks::{checked_open, checked_patch, checked_props, checked_state, markdown_of};
use super::common::Common;
use super::degrade::degrade;
use super::records::{keepable_draft, record_of};
use super::surfaces::close_event;
use crate::capability::reported;
use crate::component::{
    AnswerRefusal, ComponentClosed, ComponentEffect, ComponentKey, ComponentKind, ComponentOpen,
    Instance, InstanceRecord, RecordStatus, ShownComponent, Status, UserAnswer, MAX_DRAFT_BYTES,
};
use crate::component_link::{find_link, ComponentLink};
use crate::ids::{shorten, CallId, EventName, InstanceId, MessageId, OpaqueVersion, SurfaceId};
use crate::json::JsonObject;
use crate::markdown::SafeMarkdown;
use crate::message::{Envelope, UiEvent};
use crate::timestamp::Timestamp;
use crate::{AgentIdentity, Effect, ErrorCode, ProtocolError, SurfaceKey};

/// The standard components open in one session, by instance id, and every kind the session
/// offered since it began.
///
/// Invariants: `offered` only grows, so a kind withdrawn after it was offered is told apart
/// from one never offered (`revoked`, R-STD-4). An instance id is open here or among the
/// session's Surfaces, never both (R-STD-1; the session replaces one by the other). Every
/// change of an open instance of a vouched session is kept in the store, and every close
/// forgets it (R-STD-15).
#[derive(Debug, Default)]
pub(super) struct ComponentDesk {
    open: BTreeMap<InstanceId, Instance>,
    offered: BTreeSet<ComponentKind>,
}

impl ComponentDesk {
    /// A desk offering `kinds`, nothing open.
    pub(super) fn offering(kinds: impl IntoIterator<Item = ComponentKind>) -> Self {
        Self {
            open: BTreeMap::new(),
            offered: kinds.into_iter().collect(),
        }
    }

    /// Notes that `kinds` are offered now (they stay counted as offered for good).
    pub(super) fn offer(&mut self, kinds: impl IntoIterator<Item = ComponentKind>) {
        self.offered.extend(kinds);
    }

    /// How many components are open.
    pub(super) fn len(&self) -> usize {
        self.open.len()
    }

    /// Whether a component holds `instance`.
    pub(super) fn contains(&self, instance: &InstanceId) -> bool {
        self.open.contains_key(instance)
    }

    /// The keys of the open components, in instance order.
    pub(super) fn keys<'a>(&'a self, common: &'a Common) -> impl Iterator<Item = SurfaceKey> + 'a {
        self.open
            .iter()
            .map(|(instance, c)| common.key(instance, c.generation))
    }

    /// The earliest `props.expires_at` of the open components.
    pub(super) fn next_expiry(&self) -> Option<Timestamp> {
        self.open.values().filter_map(|c| c.expires_at).min()
    }

    fn current(&self, key: &SurfaceKey, common: &Common) -> Option<&Instance> {
        self.open
            .get(&key.instance)
            .filter(|c| common.owns(key) && c.generation == key.generation)
    }

    fn current_mut(&mut self, key: &SurfaceKey, common: &Common) -> Option<&mut Instance> {
        self.open
            .get_mut(&key.instance)
            .filter(|c| common.owns(key) && c.generation == key.generation)
    }

    /// The kind of `key` when the driver renders it now; `unsupported` or `revoked` otherwise
    /// (R-STD-4).
    fn offered_kind(
        &self,
        key: &ComponentKey,
        common: &Common,
    ) -> Result<ComponentKind, ProtocolError> {
        let set = &common.config().standard_components;
        if let Some(kind) = key.kind().filter(|_| set.contains(key)) {
            return Ok(kind);
        }
        if let Some(kind) = key.kind().filter(|k| self.offered.contains(k)) {
            return Err(ProtocolError::new(
                ErrorCode::Revoked,
                "R-STD-4",
                format!("standard component {kind} v{} was offered and has been withdrawn; it is not rendered now", key.version),
            )
            .field("payload.component.id"));
        }
        let offered = set.versions_of(key.id.as_str());
        let (field, message) = if offered.is_empty() {
            let ids: Vec<&str> = set.kinds().map(ComponentKind::as_str).collect();
            (
                "payload.component.id",
                format!(
                    "standard component {} is not offered by this host; offered: [{}]",
                    shorten(key.id.as_str(), 64),
                    ids.join(", ")
                ),
            )
        } else {
            (
                "payload.component.version",
                format!(
                    "version {} of standard component {} is not offered; versions offered: [{}]",
                    shorten(key.version.as_str(), 32),
                    key.id,
                    offered.join(", ")
                ),
            )
        };
        Err(ProtocolError::new(ErrorCode::Unsupported, "R-STD-4", message).field(field))
    }

    fn markdown(&self, c: &Instance, common: &Common) -> Option<SafeMarkdown> {
        markdown_of(c.kind, &c.props, &c.state, common.config().link_policy)
    }

    /// The agent's `ui.open` with `component`. A display component this host cannot render,
    /// sent with a fallback, is shown as `text` and the agent hears `degraded` after the open
    /// (R-STD-13). The open replaces whatever holds the id, sending nothing upstream (R-UI-1,
    /// R-UI-5): `make_room` closes a Surface holding it.
    pub(super) fn open(
        &mut self,
        env: Envelope<ComponentOpen>,
        common: &mut Common,
        fx: &mut Vec<Effect>,
        make_room: impl FnOnce(&InstanceId, &Common, &mut Vec<Effect>),
    ) -> Result<(), ProtocolError> {
        let ComponentOpen {
            instance_id,
            component,
            placement,
            state,
        } = env.payload;
        let key = ComponentKey {
            id: component.id.clone(),
            version: component.version.clone(),
        };
        let (kind, degraded) = match self.offered_kind(&key, common) {
            Ok(kind) => (kind, None),
            Err(refusal) => {
                let text = ComponentKey::v1(ComponentKind::Text);
                let text_offered = common.config().standard_components.contains(&text);
                let fallback = component.fallback_text.as_deref();
                let degraded = degrade(&key, fallback, refusal, text_offered)?;
                (ComponentKind::Text, Some(degraded))
            }
        };
        let checked = checked_open(kind, component, state, degraded.as_ref())?;
        let limit = common.limits().max_components;
        if !self.open.contains_key(&instance_id) && self.open.len() >= limit {
            return Err(ProtocolError::new(
                ErrorCode::TooManyComponents,
                "R-STD-17",
                format!(
                    "{} standard components are open in this session; the limit is {limit}; close one first",
                    self.open.len()
                ),
            )
            .field("payload.instance_id")
            .limit(limit));
        }
        common.admit_open_rate()?;
        make_room(&instance_id, common, fx);
        self.replace(&instance_id, common, fx);
        let (props, state) = (checked.props, checked.state);
        let instance = new_instance(
            kind,
            (&props, &state),
            (env.id.clone(), env.id, env.sender),
            common,
        );
        let markdown = self.markdown(&instance, common);
        let key = common.key(&instance_id, instance.generation);
        let opener = instance.opener.clone();
        self.open.insert(instance_id.clone(), instance);
        fx.push(Effect::Component(ComponentEffect::Show(ShownComponent {
            key,
            kind,
            props,
            state,
            markdown,
            placement,
            fallback_text: checked.fallback_text,
            draft: None,
            locked: false,
        })));
        if let Some(degraded) = &degraded {
            let event = degraded.event(&instance_id);
            fx.push(Effect::Send(common.outbound(event, Some(opener))));
        }
        self.persist(&instance_id, common);
        Ok(())
    }

    /// Hides the component holding `instance`, if one does, for a replacing open (R-STD-1,
    /// R-UI-1); nothing goes upstream.
    pub(super) fn replace(&mut self, instance: &InstanceId, common: &Common, fx: &mut Vec<Effect>) {
        if let Some(old) = self.open.remove(instance) {
            fx.push(Effect::Component(ComponentEffect::Hide {
                key: common.key(instance, old.generation),
                reason: ComponentClosed::Replaced,
            }));
            common.forget_record(instance);
        }
    }

    /// A `ui.patch` of a component instance (R-STD-2, R-UI-3): the state is checked whole and
    /// replaces the old; an error in it reopens an answered question (R-STD-7). Returns
    /// `Ok(false)` when no component holds the id.
    pub(super) fn patch(
        &mut self,
        instance_id: &InstanceId,
        (state, by): (&JsonObject, MessageId),
        common: &Common,
        fx: &mut Vec<Effect>,
    ) -> Result<bool, ProtocolError> {
        let Some(instance) = self.open.get_mut(instance_id) else {
            return Ok(false);
        };
        let state = checked_patch(instance.kind, &instance.props, state)?;
        let reopened = instance.patched(state.clone(), by);
        let markdown = match instance.kind {
            ComponentKind::Markdown | ComponentKind::Alert => markdown_of(
                instance.kind,
                &instance.props,
                &state,
                common.config().link_policy,
            ),
            _ => None,
        };
        fx.push(Effect::Component(ComponentEffect::Update {
            key: common.key(instance_id, instance.generation),
            state,
            markdown,
            round: instance.round,
            reopened,
        }));
        self.persist(instance_id, common);
        Ok(true)
    }

    /// The agent's `ui.close` of a component instance: hidden, nothing upstream (R-UI-5).
    /// Returns whether a component held the id.
    pub(super) fn close(
        &mut self,
        instance_id: &InstanceId,
        reason: Option<String>,
        common: &Common,
        fx: &mut Vec<Effect>,
    ) -> bool {
        let Some(old) = self.open.remove(instance_id) else {
            return false;
        };
        fx.push(Effect::Component(ComponentEffect::Hide {
            key: common.key(instance_id, old.generation),
            reason: ComponentClosed::Agent(reason),
        }));
        common.forget_record(instance_id);
        true
    }

    /// See [`Session::component_link`](crate::Session::component_link).
    pub(super) fn link(
        &self,
        key: &SurfaceKey,
        url: &str,
        common: &mut Common,
    ) -> Option<ComponentLink> {
        let instance = self.current(key, common)?;
        let tree = self.markdown(instance, common)?;
        let link = find_link(&tree, url)?.clone();
        let agent_id = common.config().agent_id.as_ref();
        let agent = agent_id.and_then(|id| AgentIdentity::try_from(id.as_str()).ok());
        let sender = agent_id.unwrap_or(&instance.opener.id).as_str().to_owned();
        let kind = instance.kind;
        let conversation = common.conversation()?.clone();
        let n = common.numbers().link();
        let activation = CallId::try_from(format!("link:{}:{n}", key.instance)).ok()?;
        Some(ComponentLink {
            key: key.clone(),
            kind,
            link,
            conversation,
            agent,
            sender,
            activation,
        })
    }

    /// See [`Session::component_answered`](crate::Session::component_answered).
    pub(super) fn answered(
        &mut self,
        key: &SurfaceKey,
        answer: &UserAnswer,
        common: &mut Common,
    ) -> Result<Vec<Effect>, AnswerRefusal> {
        // R-STD-6: unique and, with a prefix the embedder makes unique per run, across restarts.
        let upcoming = common.numbers().upcoming_answer();
        let answer_id = format!("{}-ans-{upcoming}", common.config().message_id_prefix);
        let max = common.limits().max_event_data_bytes;
        let Some(instance) = self.current_mut(key, common) else {
            return Err(AnswerRefusal::Stale);
        };
        let (event, data) = instance.answer(answer, &answer_id, max)?;
        let (round, opener) = (instance.round, instance.opener.clone());
        common.numbers().use_answer();
        let payload = UiEvent {
            instance_id: key.instance.clone(),
            event: EventName::known(event),
            data,
        };
        common.stats_mut().events_forwarded += 1;
        let fx = vec![
            Effect::Component(ComponentEffect::Lock {
                key: key.clone(),
                round,
            }),
            Effect::Send(common.outbound(payload, Some(opener))),
        ];
        self.persist(&key.instance, common);
        Ok(fx)
    }

    /// Component `key` goes away for `reason`: hidden, and for the user's close, expiry and a
    /// failed renderer the agent hears `close` (R-UI-5, R-STD-7, R-STD-13); nothing for a
    /// stale key.
    pub(super) fn gone(
        &mut self,
        key: &SurfaceKey,
        reason: ComponentClosed,
        common: &mut Common,
    ) -> Vec<Effect> {
        if self.current(key, common).is_none() {
            return Vec::new();
        }
        let Some(old) = self.open.remove(&key.instance) else {
            return Vec::new();
        };
        let data = match &reason {
            ComponentClosed::Expired => Some("expired"),
            ComponentClosed::RendererFailed => Some("renderer_failed"),
            ComponentClosed::User => None,
            ComponentClosed::Agent(_)
            | ComponentClosed::Replaced
            | ComponentClosed::SessionEnded => {
                return vec![Effect::Component(ComponentEffect::Hide {
                    key: key.clone(),
                    reason,
                })]
            }
        };
        let mut map = Map::new();
        if let Some(why) = data {
            map.insert("reason".into(), Value::from(why));
        }
        let payload = UiEvent {
            instance_id: key.instance.clone(),
            event: close_event(),
            data: JsonObject::from(map),
        };
        let fx = vec![
            Effect::Component(ComponentEffect::Hide {
                key: key.clone(),
                reason,
            }),
            Effect::Send(common.outbound(payload, Some(old.opener))),
        ];
        common.forget_record(&key.instance);
        fx
    }

    /// See [`Session::expire_components`](crate::Session::expire_components).
    pub(super) fn expire(&mut self, now: Timestamp, common: &mut Common) -> Vec<Effect> {
        let due: Vec<SurfaceKey> = self
            .open
            .iter()
            .filter(|(_, c)| c.expires_at.is_some_and(|at| at <= now))
            .map(|(instance, c)| common.key(instance, c.generation))
            .collect();
        due.iter()
            .flat_map(|key| self.gone(key, ComponentClosed::Expired, common))
            .collect()
    }

    /// Hides every component (the session ended), sending nothing upstream.
    pub(super) fn end(&mut self, common: &Common) -> Vec<Effect> {
        std::mem::take(&mut self.open)
            .into_iter()
            .map(|(instance, c)| {
                Effect::Component(ComponentEffect::Hide {
                    key: common.key(&instance, c.generation),
                    reason: ComponentClosed::SessionEnded,
                })
            })
            .collect()
    }

    /// See [`PageInput::ComponentDraft`](crate::PageInput::ComponentDraft).
    pub(super) fn draft(
        &mut self,
        key: &SurfaceKey,
        draft: &Value,
        common: &Common,
    ) -> Vec<Effect> {
        let Some(c) = self.current_mut(key, common) else {
            return Vec::new();
        };
        if c.status != Status::Open || !c.kind.is_question() {
            return Vec::new();
        }
        let Some(kept) = keepable_draft(c.kind, c.props.as_map(), draft) else {
            return Vec::new();
        };
        if kept.to_string().len() > MAX_DRAFT_BYTES {
            return Vec::new();
        }
        c.draft = Some(kept);
        self.persist(&key.instance, common);
        Vec::new()
    }

    /// Keeps the record of `instance` (R-STD-15), when the session keeps records.
    fn persist(&self, instance: &InstanceId, common: &Common) {
        let (Some((owner, conversation)), Some(c)) =
            (common.record_owner(), self.open.get(instance))
        else {
            return;
        };
        let record = record_of(instance, c, conversation);
        reported(common.store().put_instance(&owner, &record));
    }

    /// Shows again the instances of `records` (read back from the store when the session was
    /// established) that belong to this conversation, are held by no component
    /// nor Surface (`held`) and still pass every check of an open; each one's opener gets
    /// `restored {status, opened_by, state_from, round, last?}` (R-STD-15). A record that fails
    /// a check is forgotten.
    pub(super) fn restore(
        &mut self,
        records: Vec<InstanceRecord>,
        held: impl Fn(&InstanceId) -> bool,
        common: &mut Common,
    ) -> Vec<Effect> {
        let mut fx = Vec::new();
        if common.config().standard_components.is_empty() {
            // A host without standard components leaves their records as they are.
            return fx;
        }
        for record in records {
            if Some(&record.conversation) != common.conversation()
                || self.open.contains_key(&record.instance_id)
                || held(&record.instance_id)
            {
                continue;
            }
            if self.restore_one(&record, common, &mut fx).is_err() {
                common.forget_record(&record.instance_id);
            }
        }
        fx
    }

    fn restore_one(
        &mut self,
        record: &InstanceRecord,
        common: &mut Common,
        fx: &mut Vec<Effect>,
    ) -> Result<(), ProtocolError> {
        let invalid = |e: &dyn std::fmt::Display| {
            ProtocolError::new(ErrorCode::InvalidField, "R-STD-15", e.to_string())
        };
        let key = ComponentKey {
            id: SurfaceId::try_from(record.component.as_str()).map_err(|e| invalid(&e))?,
            version: OpaqueVersion::try_from(record.version.as_str()).map_err(|e| invalid(&e))?,
        };
        let kind = self.offered_kind(&key, common)?;
        let props = checked_props(kind, &record.props)?;
        let state = checked_state(kind, &props, &record.state)?;
        if self.open.len() >= common.limits().max_components {
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
        let answered = record.status != RecordStatus::Open;
        let last_event = match record.status {
            RecordStatus::Cancelled => "cancel",
            _ => "submit",
        };
        let by = (
            record.opened_by.clone(),
            record.state_from.clone(),
            record.opener.clone(),
        );
        let mut instance = new_instance(kind, (&props, &state), by, common);
        instance.round = record.round.max(1);
        if answered {
            instance.status = Status::Answered;
        }
        instance.draft.clone_from(&draft);
        instance.last = record.last.clone().map(|data| (last_event, data));
        let markdown = self.markdown(&instance, common);
        let key = common.key(&record.instance_id, instance.generation);
        let (opener, round) = (instance.opener.clone(), instance.round);
        self.open.insert(record.instance_id.clone(), instance);
        fx.push(Effect::Component(ComponentEffect::Show(ShownComponent {
            key,
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
            instance_id: record.instance_id.clone(),
            event: EventName::known("restored"),
            data: JsonObject::from(data),
        };
        fx.push(Effect::Send(common.outbound(payload, Some(opener))));
        Ok(())
    }
}

/// A new open instance of `kind` with `props` and `state`, opened by `opened_by` of `opener` with
/// its state from `state_from`, under the session's next generation: round 1, unanswered.
fn new_instance(
    kind: ComponentKind,
    (props, state): (&JsonObject, &JsonObject),
    (opened_by, state_from, opener): (MessageId, MessageId, crate::Party),
    common: &mut Common,
) -> Instance {
    Instance {
        generation: common.generation(),
        kind,
        expires_at: expiry(props),
        props: props.clone(),
        state: state.clone(),
        opened_by,
        state_from,
        opener,
        round: 1,
        status: Status::Open,
        draft: None,
        last: None,
    }
}

/// When a component with `props` expires, if it does (`props.expires_at`, R-STD-7).
fn expiry(props: &JsonObject) -> Option<Timestamp> {
    props
        .as_map()
        .get("expires_at")
        .and_then(Value::as_str)
        .and_then(Timestamp::parse)
}
