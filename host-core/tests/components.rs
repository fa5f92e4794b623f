//! Standard components through the kernel (R-STD-1 … R-STD-17): every example payload of the
//! spec accepted, hostile ones refused with the exact field and limit, the instance namespace
//! shared with Surfaces, answers checked and sent once per round, expiry, and the inventory.
#![allow(clippy::unwrap_used)]

#[path = "components/answers.rs"]
mod answers;
#[path = "components/inventory.rs"]
mod inventory;
#[path = "components/opens.rs"]
mod opens;

use std::time::Duration;

use lineup_host_core::{
    AnswerRefusal, CapabilitySetup, Clock, CloseReason, ComponentClosed, ComponentEffect,
    ComponentKind, ComponentSet, ConversationId, Effect, InputKind, Limits, LinkPolicy,
    MarkdownNode, Message, PartyId, RevisionEpoch, Session, SessionConfig, SurfaceKey, Timestamp,
    UserAnswer, Via, WallClock,
};
use serde_json::{json, Value};

struct Still;
impl Clock for Still {
    fn monotonic(&self) -> Duration {
        Duration::ZERO
    }
}

struct Wall;
impl WallClock for Wall {
    fn now(&self) -> Timestamp {
        Timestamp::from_unix_seconds(1_785_672_000).unwrap()
    }
}

fn config(set: ComponentSet, limits: Limits) -> SessionConfig {
    let mut config = SessionConfig::new(PartyId::try_from("desktop").unwrap(), "out");
    config.standard_components = set;
    config.limits = limits;
    config
}

fn session() -> Session {
    Session::new(
        config(ComponentSet::all_v1(), Limits::default()),
        Box::new(Still),
    )
    .unwrap()
}

fn envelope(id: &str, kind: &str, payload: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "v": 1, "id": id, "type": format!("lineup.v1.{kind}"), "conversation_id": "c1",
        "sender": {"kind": "agent", "id": "a1"}, "payload": payload
    }))
    .unwrap()
}

fn open(s: &mut Session, id: &str, payload: Value) -> Vec<Effect> {
    s.handle_inbound(&envelope(id, "ui.open", payload))
}

/// The shown component of `fx`, or a panic naming what came out instead.
fn shown(fx: &[Effect]) -> &lineup_host_core::ShownComponent {
    fx.iter()
        .find_map(|e| match e {
            Effect::Component(ComponentEffect::Show(s)) => Some(s),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no Show in {fx:?}"))
}

/// `(code, field, limit)` of the `client.error` in `fx`.
fn refusal(fx: &[Effect]) -> (String, String, Option<u64>) {
    let err = fx
        .iter()
        .find_map(|e| match e {
            Effect::Send(Message::ClientError(env)) => Some(env.payload.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no client.error in {fx:?}"));
    (
        err.code.to_string(),
        err.field.clone().unwrap_or_default(),
        err.limit,
    )
}

fn sent_events(fx: &[Effect]) -> Vec<(String, Value)> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::Send(Message::UiEvent(env)) => Some((
                env.payload.event.as_str().to_owned(),
                serde_json::to_value(&env.payload.data).unwrap(),
            )),
            _ => None,
        })
        .collect()
}

fn component(id: &str, props: Value) -> Value {
    json!({"id": id, "version": "1", "props": props})
}
