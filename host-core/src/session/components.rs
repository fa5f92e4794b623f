//! The session's standard components (R-STD-1 … R-STD-7, R-STD-14, R-STD-17): `ui.open` with
//! `component`, their patches and closes, the set the driver renders, the user's answers and
//! expiry. They share the instance namespace and the open rate window with Surfaces.

use serde_json::Value;

use crate::component::{
    check_bytes, check_part, check_props, check_state, invalid, AnswerRefusal, ComponentClosed,
    ComponentEffect, ComponentKey, ComponentKind, ComponentOpen, ComponentSet, Instance,
    ShownComponent, Status as AnswerStatus, UserAnswer, MAX_COMPONENT_BYTES, MAX_FALLBACK_BYTES,
};
use crate::component_link::{find_link, ComponentLink};
use crate::display::display_text;
use crate::ids::CallId;
use crate::markdown::{parse_markdown, SafeMarkdown};
use crate::session::{close_event, shorten};
use crate::timestamp::Timestamp;
use crate::{
    AgentIdentity, CloseReason, Effect, Envelope, ErrorCode, EventName, InstanceId, JsonObject,
    MessageId, ProtocolError, Session, SurfaceKey, UiEvent,
};

pub(super) const PROPS: &str = "payload.component.props";
const STATE: &str = "payload.state";

impl Session {
    /// The standard components the driver can render changed (R-STD-14): `ui.open` accepts
    /// exactly `set` from now on, one withdrawn since it was offered is `revoked` (R-STD-4), and
    /// an established session with capabilities announces a new inventory revision (R-INV-2).
    /// Open instances stay open.
    pub fn set_standard_components(&mut self, set: ComponentSet) -> Vec<Effect> {
        self.components.offer(set.kinds());
        self.config.standard_components = set;
        let inventory = self.config.standard_components.inventory();
        let mut out = Vec::new();
        if let Some(caps) = self.capabilities.as_mut() {
            caps.set_standard_components(inventory, &mut out);
        }
        self.capability_effects(out)
    }

    /// The standard components the driver can render now.
    pub fn standard_components(&self) -> &ComponentSet {
        &self.config.standard_components
    }

    /// How many standard component instances are open now (R-STD-17).
    pub fn component_count(&self) -> usize {
        self.components.len()
    }

    /// The keys of the open component instances, in instance order.
    pub fn components(&self) -> impl Iterator<Item = SurfaceKey> + '_ {
        self.components.iter().map(|(instance, c)| SurfaceKey {
            session: self.config.session_id,
            instance: instance.clone(),
            generation: c.generation,
        })
    }

    pub(super) fn open_component(
        &mut self,
        env: Envelope<ComponentOpen>,
        fx: &mut Vec<Effect>,
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
        // R-STD-13: a display component this host cannot render, sent with a fallback, is
        // shown as `text`; the agent hears `degraded` after the open.
        let (kind, degraded) = match self.offered_kind(&key) {
            Ok(kind) => (kind, None),
            Err(refusal) => {
                let degraded = self.degrade(&key, component.fallback_text.as_deref(), refusal)?;
                (ComponentKind::Text, Some(degraded))
            }
        };
        let state = match &degraded {
            Some(d) => d.state.clone(),
            None => state.unwrap_or_default(),
        };
        // R-STD-3: sizes before anything is parsed further.
        let bytes =
            serde_json::to_string(&component).map_or(0, |s| s.len()) + state.to_json().len();
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
                crate::component::check_values(
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
            Some(_) => Value::Object(serde_json::Map::new()),
            None => Value::Object(component.props.unwrap_or_default().into_map()),
        };
        let compiled = kind.schemas();
        let props = check_part(&compiled.props, PROPS, &props)?;
        let props = JsonObject::try_from(props).unwrap_or_default();
        check_props(kind, props.as_map(), PROPS)?;
        let state = self.checked_state(kind, &props, &state)?;
        let replacing = self.components.contains_key(&instance_id);
        let limit = self.config.limits.max_components;
        if !replacing && self.components.len() >= limit {
            return Err(ProtocolError::new(
                ErrorCode::TooManyComponents,
                "R-STD-17",
                format!(
                    "{} standard components are open in this session; the limit is {limit}; close one first",
                    self.components.len()
                ),
            )
            .field("payload.instance_id")
            .limit(limit));
        }
        self.admit_open_rate()?;
        // R-UI-1: the open replaces whatever holds the id, sending nothing upstream (R-UI-5).
        self.replace_instance(&instance_id, fx);
        let generation = self.numbers.generation();
        let expires_at = props
            .as_map()
            .get("expires_at")
            .and_then(Value::as_str)
            .and_then(Timestamp::parse);
        let markdown = self.markdown_of(kind, &props, &state);
        let instance = Instance {
            generation,
            kind,
            props: props.clone(),
            state: state.clone(),
            opened_by: env.id.clone(),
            state_from: env.id,
            opener: env.sender,
            round: 1,
            status: AnswerStatus::Open,
            expires_at,
            draft: None,
            last: None,
        };
        let key = SurfaceKey {
            session: self.config.session_id,
            instance: instance_id.clone(),
            generation,
        };
        let opener = instance.opener.clone();
        self.components.insert(instance_id.clone(), instance);
        fx.push(Effect::Component(ComponentEffect::Show(ShownComponent {
            key,
            kind,
            props,
            state,
            markdown,
            placement,
            fallback_text,
            draft: None,
            locked: false,
        })));
        if let Some(degraded) = &degraded {
            let event = self.degraded_event(&instance_id, degraded, opener);
            fx.push(event);
        }
        self.persist_component(&instance_id, fx);
        Ok(())
    }

    /// The kind of `key` when the driver renders it now; `unsupported` or `revoked` otherwise
    /// (R-STD-4).
    pub(super) fn offered_kind(&self, key: &ComponentKey) -> Result<ComponentKind, ProtocolError> {
        let set = &self.config.standard_components;
        if let Some(kind) = key.kind().filter(|_| set.contains(key)) {
            return Ok(kind);
        }
        if let Some(kind) = key.kind().filter(|k| self.components.was_offered(k)) {
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

    /// `state` checked against the state schema of `kind` and against `props`, cleaned.
    pub(super) fn checked_state(
        &self,
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

    /// The Markdown sink of `kind`, parsed (R-STD-10).
    pub(super) fn markdown_of(
        &self,
        kind: ComponentKind,
        props: &JsonObject,
        state: &JsonObject,
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
        Some(parse_markdown(text, self.config.link_policy))
    }

    /// Takes whatever holds `instance` off the screen for a replacing open (R-UI-1): a Surface
    /// is closed, a component hidden, nothing goes upstream.
    pub(super) fn replace_instance(&mut self, instance: &InstanceId, fx: &mut Vec<Effect>) {
        let session = self.config.session_id;
        if let Some(old) = self.surfaces.remove(instance) {
            self.forget_surface_record(instance, &old, fx);
            fx.push(Effect::Close {
                key: SurfaceKey {
                    session,
                    instance: instance.clone(),
                    generation: old.generation,
                },
                reason: CloseReason::Replaced,
            });
        }
        if let Some(old) = self.components.remove(instance) {
            fx.push(Effect::Component(ComponentEffect::Hide {
                key: SurfaceKey {
                    session,
                    instance: instance.clone(),
                    generation: old.generation,
                },
                reason: ComponentClosed::Replaced,
            }));
            self.forget_component(instance, fx);
        }
    }

    /// Hides the component holding `instance`, if one does, for a Surface's replacing open
    /// (R-STD-1, R-UI-1); nothing goes upstream.
    pub(super) fn replace_instance_component(
        &mut self,
        instance: &InstanceId,
        fx: &mut Vec<Effect>,
    ) {
        if let Some(old) = self.components.remove(instance) {
            fx.push(Effect::Component(ComponentEffect::Hide {
                key: SurfaceKey {
                    session: self.config.session_id,
                    instance: instance.clone(),
                    generation: old.generation,
                },
                reason: ComponentClosed::Replaced,
            }));
            self.forget_component(instance, fx);
        }
    }

    /// A `ui.patch` of a component instance (R-STD-2, R-UI-3): the state is checked whole and
    /// replaces the old; an error in it reopens an answered question (R-STD-7). Returns
    /// `Ok(false)` when no component holds the id.
    pub(super) fn patch_component(
        &mut self,
        instance_id: &InstanceId,
        by: MessageId,
        state: &JsonObject,
        fx: &mut Vec<Effect>,
    ) -> Result<bool, ProtocolError> {
        let Some((kind, props)) = self
            .components
            .get(instance_id)
            .map(|c| (c.kind, c.props.clone()))
        else {
            return Ok(false);
        };
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
        let state = self.checked_state(kind, &props, state)?;
        let markdown = match kind {
            ComponentKind::Markdown | ComponentKind::Alert => {
                self.markdown_of(kind, &props, &state)
            }
            ComponentKind::Text
            | ComponentKind::Status
            | ComponentKind::Progress
            | ComponentKind::Confirm
            | ComponentKind::Choice
            | ComponentKind::Input
            | ComponentKind::Form => None,
        };
        let session = self.config.session_id;
        let Some(instance) = self.components.get_mut(instance_id) else {
            return Ok(false);
        };
        let reopened = instance.patched(state.clone(), by);
        fx.push(Effect::Component(ComponentEffect::Update {
            key: SurfaceKey {
                session,
                instance: instance_id.clone(),
                generation: instance.generation,
            },
            state,
            markdown,
            round: instance.round,
            reopened,
        }));
        self.persist_component(instance_id, fx);
        Ok(true)
    }

    /// The agent's `ui.close` of a component instance: hidden, nothing upstream (R-UI-5).
    /// Returns whether a component held the id.
    pub(super) fn close_component(
        &mut self,
        instance_id: &InstanceId,
        reason: Option<String>,
        fx: &mut Vec<Effect>,
    ) -> bool {
        let Some(old) = self.components.remove(instance_id) else {
            return false;
        };
        fx.push(Effect::Component(ComponentEffect::Hide {
            key: SurfaceKey {
                session: self.config.session_id,
                instance: instance_id.clone(),
                generation: old.generation,
            },
            reason: ComponentClosed::Agent(reason),
        }));
        self.forget_component(instance_id, fx);
        true
    }

    /// The user activated the link to `url` in component `key` (after the driver's activation
    /// checks, R-STD-8): the link, when it is one the kernel put in the instance's current
    /// Markdown tree (R-STD-11), for the host's link confirm; `None` for any other URL, a
    /// stale key, or under [`LinkPolicy::Off`](crate::LinkPolicy::Off), where no tree has one.
    pub fn component_link(&mut self, key: &SurfaceKey, url: &str) -> Option<ComponentLink> {
        let instance = self.current_component(key)?;
        let tree = self.markdown_of(instance.kind, &instance.props, &instance.state)?;
        let link = find_link(&tree, url)?.clone();
        let kind = instance.kind;
        let agent = self
            .config
            .agent_id
            .as_ref()
            .and_then(|id| AgentIdentity::try_from(id.as_str()).ok());
        let sender = match &self.config.agent_id {
            Some(id) => id.as_str().to_owned(),
            None => instance.opener.id.as_str().to_owned(),
        };
        let conversation = self.conversation.clone()?;
        let activation =
            CallId::try_from(format!("link:{}:{}", key.instance, self.numbers.link())).ok()?;
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

    fn current_component(&self, key: &SurfaceKey) -> Option<&Instance> {
        self.components
            .get(&key.instance)
            .filter(|c| key.session == self.config.session_id && c.generation == key.generation)
    }

    /// The user answered component `key` (after the driver's activation checks, R-STD-8): the
    /// answer is checked against the props, the round locked, and `ui.event` `submit` or
    /// `cancel` sent with `{answer?, answer_id, opened_by, state_from, round, via, input}`
    /// (R-STD-6, R-STD-7). A refused answer is dropped and counted; nothing is sent.
    pub fn component_answered(
        &mut self,
        key: &SurfaceKey,
        answer: UserAnswer,
    ) -> Result<Vec<Effect>, AnswerRefusal> {
        let result = self.answer_component(key, &answer);
        if result.is_err() {
            self.stats.answers_dropped += 1;
        }
        result
    }

    fn answer_component(
        &mut self,
        key: &SurfaceKey,
        answer: &UserAnswer,
    ) -> Result<Vec<Effect>, AnswerRefusal> {
        if self.current_component(key).is_none() {
            return Err(AnswerRefusal::Stale);
        }
        // R-STD-6: unique and, with a prefix the embedder makes unique per run, across restarts.
        let answer_id = format!(
            "{}-ans-{}",
            self.config.message_id_prefix,
            self.numbers.upcoming_answer()
        );
        let max = self.config.limits.max_event_data_bytes;
        let Some(instance) = self.components.get_mut(&key.instance) else {
            return Err(AnswerRefusal::Stale);
        };
        let (event, data) = instance.answer(answer, &answer_id, max)?;
        self.numbers.use_answer();
        let (round, opener) = (instance.round, instance.opener.clone());
        let payload = UiEvent {
            instance_id: key.instance.clone(),
            event: EventName::known(event),
            data,
        };
        self.stats.events_forwarded += 1;
        let mut fx = vec![
            Effect::Component(ComponentEffect::Lock {
                key: key.clone(),
                round,
            }),
            Effect::Send(self.outbound(payload, Some(opener))),
        ];
        self.persist_component(&key.instance, &mut fx);
        Ok(fx)
    }

    /// The user closed component `key`: it is hidden and exactly one `ui.event close {}` goes
    /// upstream (R-UI-5); nothing for a stale key.
    pub fn component_closed_by_user(&mut self, key: &SurfaceKey) -> Vec<Effect> {
        self.component_gone(key, ComponentClosed::User)
    }

    /// The renderer of component `key` failed after its open was accepted: it is hidden and the
    /// agent gets `ui.event close {reason:"renderer_failed"}` (R-STD-13).
    pub fn component_failed(&mut self, key: &SurfaceKey) -> Vec<Effect> {
        self.component_gone(key, ComponentClosed::RendererFailed)
    }

    /// Every open component whose `props.expires_at` is at or before `now` is locked, hidden,
    /// and the agent gets `ui.event close {reason:"expired"}` (R-STD-7), in instance order.
    pub fn expire_components(&mut self, now: Timestamp) -> Vec<Effect> {
        let due: Vec<SurfaceKey> = self
            .components()
            .filter(|k| {
                self.components
                    .get(&k.instance)
                    .and_then(|c| c.expires_at)
                    .is_some_and(|at| at <= now)
            })
            .collect();
        due.iter()
            .flat_map(|key| self.component_gone(key, ComponentClosed::Expired))
            .collect()
    }

    /// The earliest `props.expires_at` of the open components: when to call
    /// [`Session::expire_components`] next.
    pub fn next_component_expiry(&self) -> Option<Timestamp> {
        self.components.values().filter_map(|c| c.expires_at).min()
    }

    fn component_gone(&mut self, key: &SurfaceKey, reason: ComponentClosed) -> Vec<Effect> {
        if self.current_component(key).is_none() {
            return Vec::new();
        }
        let Some(old) = self.components.remove(&key.instance) else {
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
        let mut map = serde_json::Map::new();
        if let Some(why) = data {
            map.insert("reason".into(), Value::from(why));
        }
        let payload = UiEvent {
            instance_id: key.instance.clone(),
            event: close_event(),
            data: JsonObject::from(map),
        };
        let mut fx = vec![
            Effect::Component(ComponentEffect::Hide {
                key: key.clone(),
                reason,
            }),
            Effect::Send(self.outbound(payload, Some(old.opener))),
        ];
        self.forget_component(&key.instance, &mut fx);
        fx
    }

    /// Hides every component (the session ended), sending nothing upstream.
    pub(super) fn hide_all_components(&mut self, fx: &mut Vec<Effect>) {
        let session = self.config.session_id;
        let components = self.components.take_all();
        fx.extend(components.into_iter().map(|(instance, c)| {
            Effect::Component(ComponentEffect::Hide {
                key: SurfaceKey {
                    session,
                    instance,
                    generation: c.generation,
                },
                reason: ComponentClosed::SessionEnded,
            })
        }));
    }
}
