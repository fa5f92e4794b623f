//! Table-driven tests of the kernel: a script of inbound envelopes and bridge messages, and the
//! effects, replies and counters it must produce. Each row is named after the rule it guards.
#![allow(clippy::unwrap_used)]

#[path = "kernel/envelopes.rs"]
mod envelopes;
#[path = "kernel/reloads.rs"]
mod reloads;
#[path = "kernel/surfaces.rs"]
mod surfaces;

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use lineup_host_core::{
    decode, Clock, CloseReason, Effect, GoneReason, Limits, Message, PartyId, Session,
    SessionConfig, Status, SurfaceKey,
};
use serde_json::{json, Value};

#[derive(Clone, Default)]
struct ManualClock(Rc<Cell<Duration>>);

impl Clock for ManualClock {
    fn monotonic(&self) -> Duration {
        self.0.get()
    }
}

fn session_with(limits: Limits) -> (Session, ManualClock) {
    let clock = ManualClock::default();
    let mut config = SessionConfig::new(PartyId::try_from("desktop").unwrap(), "out");
    config.limits = limits;
    (
        Session::new(config, Box::new(clock.clone())).unwrap(),
        clock,
    )
}

fn session() -> Session {
    session_with(Limits::default()).0
}

fn envelope(id: &str, kind: &str, payload: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "v": 1, "id": id, "type": format!("lineup.v1.{kind}"), "conversation_id": "conv_01",
        "sender": {"kind": "agent", "id": "agent_hermes_main"}, "payload": payload
    }))
    .unwrap()
}

fn app(html: &str) -> Value {
    json!({"id": "com.lineup.weather.dashboard", "name": "天气面板", "version": "1.0.0",
           "html": html, "css": "main { padding: 16px }", "js": ""})
}

fn open(id: &str, instance: &str, state: Option<Value>) -> Vec<u8> {
    let mut payload = json!({"instance_id": instance, "app": app("<main></main>")});
    if let Some(state) = state {
        payload["state"] = state;
    }
    envelope(id, "ui.open", payload)
}

fn opened_key(effects: &[Effect]) -> SurfaceKey {
    match effects {
        [Effect::Open(open)] => open.key.clone(),
        [Effect::Replace { open, .. }] => open.key.clone(),
        other => panic!("expected one open, got {other:?}"),
    }
}

fn bridge_event(event: &str, data: &str) -> String {
    format!(
        r#"{{"namespace":"lineup.surface.v1","type":"event","event":{},"data":{data}}}"#,
        serde_json::to_string(event).unwrap()
    )
}

const READY: &str = r#"{"namespace":"lineup.surface.v1","type":"ready","document":"0123456789abcdef0123456789abcdef"}"#;
/// A `ready` from another document.
const READY_OTHER: &str = r#"{"namespace":"lineup.surface.v1","type":"ready","document":"fedcba9876543210fedcba9876543210"}"#;

/// The `client.error` (or `app.result`) a refusal produced, as JSON.
fn reply(effects: &[Effect]) -> Value {
    let sent: Vec<&Message> = effects
        .iter()
        .filter_map(|e| match e {
            Effect::Send(m) => Some(m),
            _ => None,
        })
        .collect();
    assert_eq!(sent.len(), 1, "one reply expected: {effects:?}");
    serde_json::from_str(&sent[0].to_json()).unwrap()
}

fn refusal(session: &mut Session, bytes: &[u8]) -> Value {
    let before: Vec<SurfaceKey> = session.surfaces().collect();
    let effects = session.handle_inbound(bytes);
    assert!(
        effects.iter().any(|e| matches!(e, Effect::Rejected(_))),
        "expected a refusal: {effects:?}"
    );
    assert!(
        !effects.iter().any(|e| matches!(
            e,
            Effect::Open(_) | Effect::Replace { .. } | Effect::Close { .. }
        )),
        "a refusal changes nothing: {effects:?}"
    );
    let after: Vec<SurfaceKey> = session.surfaces().collect();
    assert_eq!(before, after, "a refusal changes nothing");
    let reply = reply(&effects);
    assert_eq!(reply["conversation_id"], "conv_01");
    reply
}

fn client_error(session: &mut Session, bytes: &[u8]) -> Value {
    let reply = refusal(session, bytes);
    assert_eq!(reply["type"], "lineup.v1.client.error", "{reply}");
    reply["payload"].clone()
}

/// Opens one Surface so that the conversation is known, and returns its key.
fn primed() -> (Session, SurfaceKey) {
    let mut s = session();
    let key = opened_key(&s.handle_inbound(&open("m0", "base", None)));
    (s, key)
}
