//! Table-driven tests of the kernel: a script of inbound envelopes and bridge messages, and the
//! effects, replies and counters it must produce. Each row is named after the rule it guards.
#![allow(clippy::unwrap_used)]

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

#[test]
fn r_ui_1_instance_id_boundaries() {
    for (len, ok) in [(0, false), (1, true), (128, true), (129, false)] {
        let (mut s, _) = primed();
        let id = "a".repeat(len);
        let bytes = open("m1", &id, None);
        if ok {
            assert_eq!(opened_key(&s.handle_inbound(&bytes)).instance.as_str(), id);
        } else {
            let err = client_error(&mut s, &bytes);
            assert_eq!(err["code"], "invalid_field", "len {len}: {err}");
            assert_eq!(err["field"], "payload.instance_id");
            assert_eq!(err["in_reply_to"], "m1");
        }
    }
}

#[test]
fn r_ui_7_event_name_boundaries() {
    for (name, ok) in [
        ("a".repeat(64), true),
        ("a".repeat(65), false),
        ("9x".into(), false),
        ("".into(), false),
        ("has space".into(), false),
        ("a.b_c:d-e".into(), true),
    ] {
        let (mut s, key) = primed();
        let fx = s.handle_bridge(&key, &bridge_event(&name, "{}"));
        assert_eq!(
            matches!(fx.as_slice(), [Effect::Send(Message::UiEvent(_))]),
            ok,
            "{name:?}: {fx:?}"
        );
        assert_eq!(s.stats().bridge_invalid, u64::from(!ok));
    }
}

#[test]
fn r_ui_7_data_must_be_smaller_than_16_kib() {
    let limit = 16 * 1024;
    // {"x":"…"} is 8 bytes plus the string.
    for (size, ok) in [(limit - 1, true), (limit, false), (limit + 1, false)] {
        let data = format!(r#"{{"x":"{}"}}"#, "y".repeat(size - 8));
        assert_eq!(data.len(), size);
        let mut limits = Limits::default();
        limits.max_bridge_message_bytes = 64 * 1024;
        let (mut s, _) = session_with(limits);
        let key = opened_key(&s.handle_inbound(&open("m0", "w", None)));
        let fx = s.handle_bridge(&key, &bridge_event("big", &data));
        assert_eq!(
            matches!(fx.as_slice(), [Effect::Send(Message::UiEvent(_))]),
            ok,
            "size {size}"
        );
        if let [Effect::Dropped { error, .. }] = fx.as_slice() {
            assert_eq!(error.limit, Some(limit as u64));
            assert!(
                error.message.contains(&size.to_string()),
                "{}",
                error.message
            );
        }
    }
}

#[test]
fn r_ui_7_data_must_be_an_object() {
    for data in ["[]", "null", "1", r#""s""#, "true"] {
        let (mut s, key) = primed();
        let fx = s.handle_bridge(&key, &bridge_event("ok", data));
        assert!(
            matches!(fx.as_slice(), [Effect::Dropped { .. }]),
            "{data}: {fx:?}"
        );
    }
}

#[test]
fn r_env_4_depth_at_and_over_the_limit() {
    let limits = Limits::default();
    // The envelope itself nests `state` at depth 3 (envelope, payload, state).
    let nest = |levels: usize| {
        let mut v = json!(1);
        for _ in 0..levels {
            v = json!({ "k": v });
        }
        v
    };
    let at = envelope(
        "m1",
        "ui.patch",
        json!({"instance_id": "base", "state": nest(limits.max_depth - 2)}),
    );
    let over = envelope(
        "m2",
        "ui.patch",
        json!({"instance_id": "base", "state": nest(limits.max_depth - 1)}),
    );
    let (mut s, _) = primed();
    let fx = s.handle_inbound(&at);
    assert!(
        !fx.iter().any(|e| matches!(e, Effect::Rejected(_))),
        "{fx:?}"
    );
    let err = client_error(&mut s, &over);
    assert_eq!(err["code"], "too_deep");
    assert_eq!(err["limit"], limits.max_depth);
    assert_eq!(
        err["in_reply_to"],
        Value::Null,
        "depth is refused before parsing"
    );
}

#[test]
fn r_env_4_raw_size_at_and_over_the_limit() {
    let mut limits = Limits::default();
    limits.max_envelope_bytes = 2048;
    let (mut s, _) = session_with(limits.clone());
    let base = open("m1", "w", Some(json!({"pad": ""})));
    let pad = limits.max_envelope_bytes - base.len();
    let at = open("m1", "w", Some(json!({"pad": "p".repeat(pad)})));
    assert_eq!(at.len(), limits.max_envelope_bytes);
    opened_key(&s.handle_inbound(&at));
    let over = open("m2", "v", Some(json!({"pad": "p".repeat(pad + 1)})));
    let err = client_error(&mut s, &over);
    assert_eq!(err["code"], "too_large");
    assert_eq!(err["limit"], 2048);
    assert!(
        err["message"].as_str().unwrap().contains("2049 bytes"),
        "{err}"
    );
}

#[test]
fn r_ui_2_bundle_size_at_and_over_the_limit() {
    let limit = Limits::default().max_bundle_bytes;
    let css = "main { padding: 16px }".len();
    for (size, ok) in [(limit, true), (limit + 1, false)] {
        let (mut s, _) = primed();
        let html = "h".repeat(size - css);
        let bytes = envelope(
            "m1",
            "ui.open",
            json!({"instance_id": "w", "app": app(&html)}),
        );
        if ok {
            opened_key(&s.handle_inbound(&bytes));
        } else {
            let err = client_error(&mut s, &bytes);
            assert_eq!(err["code"], "bundle_too_large");
            assert_eq!(err["field"], "payload.app");
            assert_eq!(err["limit"], limit);
        }
    }
}

#[test]
fn r_env_1_version_must_be_the_number_1() {
    for (v, code) in [
        (json!(2), "unsupported_version"),
        (json!("1"), "invalid_field"),
        (json!(1.5), "unsupported_version"),
    ] {
        let (mut s, _) = primed();
        let mut msg: Value = serde_json::from_slice(&open("m1", "w", None)).unwrap();
        msg["v"] = v.clone();
        let err = client_error(&mut s, msg.to_string().as_bytes());
        assert_eq!(err["code"], code, "v = {v}");
        assert_eq!(err["field"], "v");
        assert_eq!(err["in_reply_to"], "m1");
    }
}

#[test]
fn r_env_1_missing_fields_are_named() {
    for field in ["v", "id", "type", "conversation_id", "sender", "payload"] {
        let (mut s, _) = primed();
        let mut msg: Value = serde_json::from_slice(&open("m1", "w", None)).unwrap();
        msg.as_object_mut().unwrap().remove(field);
        let err = client_error(&mut s, msg.to_string().as_bytes());
        assert_eq!(err["code"], "missing_field", "{field}: {err}");
        assert_eq!(err["field"], field);
    }
    for (field, path) in [
        ("instance_id", "payload.instance_id"),
        ("app", "payload.app"),
    ] {
        let (mut s, _) = primed();
        let mut msg: Value = serde_json::from_slice(&open("m1", "w", None)).unwrap();
        msg["payload"].as_object_mut().unwrap().remove(field);
        let err = client_error(&mut s, msg.to_string().as_bytes());
        assert_eq!(err["code"], "missing_field");
        assert_eq!(err["field"], path);
    }
}

#[test]
fn r_env_6_bare_fragment_is_refused_naming_the_field() {
    let (mut s, _) = primed();
    let fragment = json!({"type": "lineup.v1.ui.patch",
        "payload": {"instance_id": "weather.dashboard.01", "state": {"city": "上海"}}});
    let err = client_error(&mut s, fragment.to_string().as_bytes());
    assert_eq!(err["code"], "missing_field");
    assert_eq!(err["field"], "v");
}

#[test]
fn duplicate_keys_are_refused() {
    let (mut s, _) = primed();
    let dup = br#"{"v":1,"id":"m1","id":"m2","type":"lineup.v1.ui.close","conversation_id":"conv_01","sender":{"kind":"agent","id":"a"},"payload":{"instance_id":"base"}}"#;
    let err = client_error(&mut s, dup);
    assert_eq!(err["code"], "invalid_json");
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .contains("duplicate key \"id\""),
        "{err}"
    );
    let nested = br#"{"v":1,"id":"m1","type":"lineup.v1.ui.patch","conversation_id":"conv_01","sender":{"kind":"agent","id":"a"},"payload":{"instance_id":"base","state":{"a":1,"a":2}}}"#;
    assert_eq!(client_error(&mut s, nested)["code"], "invalid_json");
    assert!(
        s.is_current(&s.surfaces().next().unwrap()),
        "base is still open"
    );
}

#[test]
fn r_env_3_unknown_ui_type_is_unsupported_never_executed() {
    let (mut s, _) = primed();
    let err = client_error(
        &mut s,
        &envelope("m1", "ui.teleport", json!({"instance_id": "base"})),
    );
    assert_eq!(err["code"], "unsupported");
    assert_eq!(err["in_reply_to"], "m1");
}

#[test]
fn r_env_3_unknown_app_type_with_call_id_gets_an_unsupported_result() {
    let (mut s, _) = primed();
    let reply = refusal(
        &mut s,
        &envelope("m1", "app.launch", json!({"call_id": "c9"})),
    );
    assert_eq!(reply["type"], "lineup.v1.app.result");
    assert_eq!(reply["payload"]["call_id"], "c9");
    assert_eq!(reply["payload"]["status"], "unsupported");
    assert_eq!(reply["payload"].get("error"), None, "{reply}");
    // Without a call_id there is nothing to answer with app.result: client.error instead.
    let err = client_error(&mut s, &envelope("m2", "app.launch", json!({})));
    assert_eq!(err["code"], "unsupported");
}

#[test]
fn r_env_2_other_types_are_unknown() {
    let (mut s, _) = primed();
    for (kind, code) in [
        ("chat.message", "unknown_type"),
        ("ui.event", "wrong_direction"),
        ("client.error", "wrong_direction"),
    ] {
        let bytes = envelope(
            "m1",
            kind,
            json!({"instance_id": "base", "event": "x", "data": {}, "in_reply_to": null, "code": "too_large", "message": "m"}),
        );
        let err = client_error(&mut s, &bytes);
        assert_eq!(err["code"], code, "{kind}: {err}");
    }
}

#[test]
fn r_env_5_app_call_is_answered_unsupported_until_capabilities_exist() {
    let (mut s, _) = primed();
    let fx = s.handle_inbound(&envelope("m1", "app.call", json!({
        "call_id": "call_open_docs_01", "capability": "app.open_url", "reason": "打开部署文档供你核对",
        "expires_at": "2026-08-02T12:10:00Z", "arguments": {"url": "https://example.com/docs"}})));
    let reply = reply(&fx);
    assert_eq!(reply["type"], "lineup.v1.app.result");
    assert_eq!(reply["payload"]["call_id"], "call_open_docs_01");
    assert_eq!(reply["payload"]["status"], "unsupported");
    assert_eq!(reply["payload"].get("error"), None, "{reply}");
    assert_eq!(reply["target"]["id"], "agent_hermes_main");
    assert_eq!(
        s.stats().envelopes_refused,
        0,
        "an unknown capability is an answer, not a refusal"
    );
}

/// A well-formed `app.call`, as a JSON value to break one member of.
fn app_call(call_id: &str) -> Value {
    serde_json::from_slice(&envelope(
        "m1",
        "app.call",
        json!({"call_id": call_id, "capability": "app.open_url", "reason": "打开部署文档",
            "expires_at": "2026-08-02T12:10:00Z", "arguments": {"url": "https://example.com/docs"}}),
    ))
    .unwrap()
}

#[test]
fn r_env_5_a_malformed_app_call_with_a_readable_call_id_gets_a_failed_app_result() {
    type Breaker = fn(&mut Value);
    // (what is broken, how, code, field, what the message must name)
    let table: [(&str, Breaker, &str, &str, &[&str]); 7] = [
        (
            "bad expires_at",
            |m| m["payload"]["expires_at"] = json!("tomorrow"),
            "invalid_field",
            "payload.expires_at",
            &["payload.expires_at", "\"tomorrow\"", "R-CAP-4"],
        ),
        (
            "missing reason",
            |m| {
                m["payload"].as_object_mut().unwrap().remove("reason");
            },
            "missing_field",
            "payload.reason",
            &["payload.reason", "R-CAP-4"],
        ),
        (
            "non-object arguments",
            |m| m["payload"]["arguments"] = json!([1, 2]),
            "invalid_field",
            "payload.arguments",
            &["payload.arguments", "an array", "R-CAP-4"],
        ),
        (
            "capability not a name",
            |m| m["payload"]["capability"] = json!("9 lives"),
            "invalid_field",
            "payload.capability",
            &["payload.capability", "\"9 lives\"", "R-CAP-2"],
        ),
        (
            "wrong v",
            |m| m["v"] = json!(2),
            "unsupported_version",
            "v",
            &["v is 2", "R-ENV-1"],
        ),
        (
            "sender of kind client",
            |m| m["sender"]["kind"] = json!("client"),
            "wrong_sender",
            "sender.kind",
            &["sender.kind", "\"client\"", "R-ENV-1"],
        ),
        (
            "missing id",
            |m| {
                m.as_object_mut().unwrap().remove("id");
            },
            "missing_field",
            "id",
            &["id", "R-ENV-1"],
        ),
    ];
    for (what, breaker, code, field, named) in table {
        let (mut s, _) = primed();
        let mut call = app_call("call_42");
        breaker(&mut call);
        let reply = refusal(&mut s, call.to_string().as_bytes());
        assert_eq!(reply["type"], "lineup.v1.app.result", "{what}: {reply}");
        let payload = &reply["payload"];
        assert_eq!(payload["call_id"], "call_42", "{what}");
        assert_eq!(payload["status"], "failed", "{what}: {payload}");
        assert_eq!(payload["error"]["code"], code, "{what}: {payload}");
        assert_eq!(payload["error"]["field"], field, "{what}: {payload}");
        let message = payload["message"].as_str().unwrap();
        for part in named {
            assert!(message.contains(part), "{what}: {message:?} lacks {part}");
        }
        assert_eq!(s.surfaces().count(), 1, "{what}: a refusal changes nothing");
    }
}

#[test]
fn r_env_5_an_app_call_from_another_conversation_is_answered_failed_in_that_conversation() {
    let (mut s, _) = primed();
    let mut call = app_call("call_43");
    call["conversation_id"] = json!("conv_02");
    let sent = reply(&s.handle_inbound(call.to_string().as_bytes()));
    assert_eq!(sent["type"], "lineup.v1.app.result");
    assert_eq!(
        sent["conversation_id"], "conv_02",
        "the refused envelope's conversation"
    );
    assert_eq!(sent["payload"]["call_id"], "call_43");
    assert_eq!(sent["payload"]["status"], "failed");
    assert_eq!(sent["payload"]["error"]["code"], "wrong_conversation");
    assert_eq!(sent["payload"]["error"]["field"], "conversation_id");
    assert_eq!(s.conversation_id().unwrap().as_str(), "conv_01");
}

#[test]
fn r_env_5_an_app_call_whose_call_id_cannot_be_read_gets_client_error() {
    for call_id in [json!(5), json!(""), Value::Null] {
        let (mut s, _) = primed();
        let mut call = app_call("x");
        call["payload"]["call_id"] = call_id.clone();
        call["payload"]["arguments"] = json!("not an object");
        let err = client_error(&mut s, call.to_string().as_bytes());
        assert_eq!(err["in_reply_to"], "m1", "{call_id}: {err}");
    }
}

#[test]
fn r_env_5_every_answer_carries_the_refused_envelopes_conversation_when_readable() {
    // Readable although the envelope is malformed (no payload): that conversation.
    let mut broken: Value = serde_json::from_slice(&open("m1", "w", None)).unwrap();
    broken["conversation_id"] = json!("conv_other");
    broken.as_object_mut().unwrap().remove("payload");
    for primed_first in [false, true] {
        let mut s = if primed_first { primed().0 } else { session() };
        let sent = reply(&s.handle_inbound(broken.to_string().as_bytes()));
        assert_eq!(sent["payload"]["code"], "missing_field", "{sent}");
        assert_eq!(
            sent["conversation_id"], "conv_other",
            "primed: {primed_first}"
        );
    }
    // Unreadable: the session's conversation, else "unknown".
    let (mut s, _) = primed();
    assert_eq!(
        reply(&s.handle_inbound(b"not json"))["conversation_id"],
        "conv_01"
    );
    let mut fresh = session();
    assert_eq!(
        reply(&fresh.handle_inbound(b"not json"))["conversation_id"],
        "unknown"
    );
    let mut unreadable = broken.clone();
    unreadable["conversation_id"] = json!(7);
    assert_eq!(
        reply(&s.handle_inbound(unreadable.to_string().as_bytes()))["conversation_id"],
        "conv_01"
    );
}

#[test]
fn r_ses_1_a_well_formed_envelope_establishes_even_refused_and_a_malformed_one_does_not() {
    let mut s = session();
    // A wrong sender is not well-formed for the client: it establishes nothing.
    let mut client_sent: Value = serde_json::from_slice(&open("m2", "w", None)).unwrap();
    client_sent["conversation_id"] = json!("conv_A");
    client_sent["sender"]["kind"] = json!("client");
    assert_eq!(
        reply(&s.handle_inbound(client_sent.to_string().as_bytes()))["payload"]["code"],
        "wrong_sender"
    );
    assert_eq!(
        s.conversation_id(),
        None,
        "a malformed envelope changes nothing"
    );
    // A well-formed envelope whose payload is refused establishes conversation A (amended
    // R-SES-1), and opens nothing.
    let mut bad: Value = serde_json::from_slice(&open("m1", "w", None)).unwrap();
    bad["conversation_id"] = json!("conv_A");
    bad["payload"]["app"]["integrity"] = json!(lineup_host_core::InlineBundle::new("x", "", "")
        .unwrap()
        .digest()
        .to_string());
    let fx = s.handle_inbound(bad.to_string().as_bytes());
    assert!(!fx.iter().any(|e| matches!(e, Effect::Open(_))), "{fx:?}");
    let sent = reply(&fx);
    assert_eq!(sent["payload"]["code"], "integrity_mismatch");
    assert_eq!(sent["conversation_id"], "conv_A");
    assert_eq!(s.conversation_id().unwrap().as_str(), "conv_A");
    // So conversation B is another session's: refused here.
    let mut other: Value = serde_json::from_slice(&open("m3", "w", None)).unwrap();
    other["conversation_id"] = json!("conv_B");
    assert_eq!(
        reply(&s.handle_inbound(other.to_string().as_bytes()))["payload"]["code"],
        "wrong_conversation"
    );
    // Positive control: conversation A opens.
    let mut good: Value = serde_json::from_slice(&open("m4", "w", None)).unwrap();
    good["conversation_id"] = json!("conv_A");
    opened_key(&s.handle_inbound(good.to_string().as_bytes()));
    assert_eq!(s.stats().envelopes_accepted, 1);
    assert_eq!(s.stats().envelopes_refused, 3);
}

#[test]
fn r_ses_1_r_env_1_an_envelope_not_sent_by_an_agent_is_refused_and_changes_nothing() {
    let (mut s, key) = primed();
    let mut close: Value =
        serde_json::from_slice(&envelope("c1", "ui.close", json!({"instance_id": "base"})))
            .unwrap();
    close["sender"] = json!({"kind": "client", "id": "desktop"});
    let err = client_error(&mut s, close.to_string().as_bytes());
    assert_eq!(err["code"], "wrong_sender");
    assert_eq!(err["field"], "sender.kind");
    assert_eq!(err["in_reply_to"], "c1");
    assert!(s.is_current(&key), "the instance stays open");
    // Positive control: the same close from the agent closes it.
    close["sender"]["kind"] = json!("agent");
    let fx = s.handle_inbound(close.to_string().as_bytes());
    assert!(matches!(fx.as_slice(), [Effect::Close { .. }]), "{fx:?}");
}

#[test]
fn r_ui_2_placeholder_digest_is_refused_naming_the_field() {
    let (mut s, _) = primed();
    let mut a = app("<main></main>");
    a["integrity"] = json!("sha256-BASE64_DIGEST");
    let err = client_error(
        &mut s,
        &envelope("m1", "ui.open", json!({"instance_id": "w", "app": a})),
    );
    assert_eq!(err["code"], "invalid_field");
    assert_eq!(err["field"], "payload.app.integrity");
    assert!(
        err["message"].as_str().unwrap().contains("placeholder"),
        "{err}"
    );
}

#[test]
fn r_ui_2a_integrity_must_match_when_present() {
    let (mut s, _) = primed();
    let bundle =
        lineup_host_core::InlineBundle::new("<main></main>", "main { padding: 16px }", "").unwrap();
    let mut a = app("<main></main>");
    a["integrity"] = json!(bundle.digest().to_string());
    opened_key(&s.handle_inbound(&envelope(
        "m1",
        "ui.open",
        json!({"instance_id": "w", "app": a.clone()}),
    )));
    a["html"] = json!("<main>changed</main>");
    let err = client_error(
        &mut s,
        &envelope("m2", "ui.open", json!({"instance_id": "v", "app": a})),
    );
    assert_eq!(err["code"], "integrity_mismatch");
    assert_eq!(err["field"], "payload.app.integrity");
}

#[test]
fn r_sec_7_require_integrity_policy() {
    let mut config = SessionConfig::new(PartyId::try_from("desktop").unwrap(), "out");
    config.bundle_policy = lineup_host_core::BundlePolicy::RequireIntegrity;
    let mut s = Session::new(config, Box::new(ManualClock::default())).unwrap();
    s.handle_inbound(&envelope("m0", "ui.close", json!({"instance_id": "none"})));
    let err = client_error(&mut s, &open("m1", "w", None));
    assert_eq!(err["code"], "policy_violation");
    // Positive control: the same bundle with its matching integrity is accepted.
    let bundle =
        lineup_host_core::InlineBundle::new("<main></main>", "main { padding: 16px }", "").unwrap();
    let mut a = app("<main></main>");
    a["integrity"] = json!(bundle.digest().to_string());
    opened_key(&s.handle_inbound(&envelope(
        "m2",
        "ui.open",
        json!({"instance_id": "w", "app": a}),
    )));
}

#[test]
fn r_ui_9_open_by_app_id_is_refused_deterministically() {
    let (mut s, _) = primed();
    let bytes = envelope(
        "m1",
        "ui.open",
        json!({"instance_id": "c", "app": {"id": "com.lineup.svg-canvas", "surface": "canvas"}}),
    );
    for _ in 0..2 {
        let err = client_error(&mut s, &bytes);
        assert_eq!(err["code"], "unsupported");
        assert_eq!(err["field"], "payload.app.surface");
    }
}

#[test]
fn r_ui_6a_breakout_in_js_is_refused() {
    let (mut s, _) = primed();
    let mut a = app("<main></main>");
    a["js"] = json!("var s = '</script><script>alert(1)';");
    let err = client_error(
        &mut s,
        &envelope("m1", "ui.open", json!({"instance_id": "w", "app": a})),
    );
    assert_eq!(err["code"], "invalid_field");
    assert!(
        err["message"].as_str().unwrap().contains("R-UI-6a"),
        "{err}"
    );
}

#[test]
fn r_ui_3_state_only_after_ready_and_patches_before_ready_coalesce() {
    let mut s = session();
    let key = opened_key(&s.handle_inbound(&open("m1", "w", Some(json!({"city": "北京"})))));
    for (i, city) in ["天津", "上海"].iter().enumerate() {
        let fx = s.handle_inbound(&envelope(
            &format!("p{i}"),
            "ui.patch",
            json!({"instance_id": "w", "state": {"city": city}}),
        ));
        assert!(fx.is_empty(), "nothing is delivered before ready: {fx:?}");
    }
    let fx = s.handle_bridge(&key, READY);
    match fx.as_slice() {
        [Effect::Ready(k), Effect::DeliverState { key: k2, state }] => {
            assert_eq!((k, k2), (&key, &key));
            assert_eq!(
                state.to_json(),
                r#"{"city":"上海"}"#,
                "only the latest state"
            );
        }
        other => panic!("{other:?}"),
    }
    // A second ready of the same document delivers nothing, is counted, and changes nothing:
    // a page saying ready twice is not a reload (R-UI-10).
    for _ in 0..200 {
        assert!(matches!(
            s.handle_bridge(&key, READY).as_slice(),
            [Effect::Dropped { .. }]
        ));
    }
    assert_eq!(s.stats().duplicate_ready, 200);
    assert_eq!(s.stats().reloads, 0);
    // A ready of another document with no commit: a document that replaced the Surface's in
    // place (a `javascript:` URL), which has its own document loaded again (R-SEC-2a).
    assert!(matches!(
        s.handle_bridge(&key, READY_OTHER).as_slice(),
        [Effect::Dropped { .. }, Effect::RestoreDocument(k)] if *k == key
    ));
    assert_eq!(s.stats().replaced_documents, 1);
    // A ready without a document id is not the bridge's: refused, nothing changes.
    let keyless = s.handle_bridge(&key, r#"{"namespace":"lineup.surface.v1","type":"ready"}"#);
    assert!(
        matches!(keyless.as_slice(), [Effect::Dropped { error, .. }] if error.field.as_deref() == Some("document")),
        "{keyless:?}"
    );
}

#[test]
fn r_ui_3_open_without_state_starts_empty_and_patch_replaces_whole_state() {
    let mut s = session();
    let key = opened_key(&s.handle_inbound(&open("m1", "w", None)));
    let fx = s.handle_bridge(&key, READY);
    assert!(matches!(&fx[1], Effect::DeliverState { state, .. } if state.to_json() == "{}"));
    s.handle_inbound(&envelope(
        "p1",
        "ui.patch",
        json!({"instance_id": "w", "state": {"a": 1, "b": 2}}),
    ));
    let fx = s.handle_inbound(&envelope(
        "p2",
        "ui.patch",
        json!({"instance_id": "w", "state": {"c": 3}}),
    ));
    assert!(
        matches!(fx.as_slice(), [Effect::DeliverState { state, .. }] if state.to_json() == r#"{"c":3}"#),
        "{fx:?}"
    );
}

#[test]
fn r_ui_3_open_with_null_state_is_refused() {
    let (mut s, _) = primed();
    let err = client_error(&mut s, &open("m1", "w", Some(Value::Null)));
    assert_eq!(err["field"], "payload.state");
}

#[test]
fn r_ui_3_patch_without_object_state_is_refused() {
    for state in [json!(null), json!([1]), json!("s")] {
        let (mut s, _) = primed();
        let err = client_error(
            &mut s,
            &envelope(
                "p1",
                "ui.patch",
                json!({"instance_id": "base", "state": state}),
            ),
        );
        assert_eq!(err["field"], "payload.state", "{err}");
    }
    let (mut s, _) = primed();
    let err = client_error(
        &mut s,
        &envelope("p1", "ui.patch", json!({"instance_id": "base"})),
    );
    assert_eq!(err["code"], "missing_field");
    assert_eq!(err["field"], "payload.state");
}

#[test]
fn r_ui_4_patch_can_never_carry_code() {
    for key in ["app", "html", "css", "js"] {
        let (mut s, _) = primed();
        let mut payload = json!({"instance_id": "base", "state": {}});
        payload[key] = json!("<script>alert(1)</script>");
        let err = client_error(&mut s, &envelope("p1", "ui.patch", payload));
        assert_eq!(err["code"], "patch_carries_code");
        assert_eq!(err["field"], format!("payload.{key}"));
    }
}

#[test]
fn r_ui_1_replace_by_same_id_sends_nothing_and_drops_late_messages() {
    let mut s = session();
    let first = opened_key(&s.handle_inbound(&open("m1", "w", None)));
    let fx = s.handle_inbound(&open("m2", "w", None));
    let second = match fx.as_slice() {
        [Effect::Replace { old, open }] => {
            assert_eq!(old, &first);
            open.key.clone()
        }
        other => panic!("{other:?}"),
    };
    assert_ne!(first.generation, second.generation);
    assert!(
        !fx.iter().any(|e| matches!(e, Effect::Send(_))),
        "no event upstream"
    );
    // A late message of the old generation reaches nobody.
    let fx = s.handle_bridge(&first, &bridge_event("late", "{}"));
    assert!(matches!(fx.as_slice(), [Effect::Dropped { .. }]), "{fx:?}");
    assert_eq!(s.stats().bridge_stale, 1);
    // The successor still works.
    let fx = s.handle_bridge(&second, &bridge_event("fresh", "{}"));
    assert!(matches!(fx.as_slice(), [Effect::Send(Message::UiEvent(_))]));
}

#[test]
fn r_ui_5_agent_close_sends_nothing_upstream() {
    let mut s = session();
    let key = opened_key(&s.handle_inbound(&open("m1", "w", None)));
    let fx = s.handle_inbound(&envelope(
        "c1",
        "ui.close",
        json!({"instance_id": "w", "reason": "completed"}),
    ));
    assert_eq!(
        fx,
        vec![Effect::Close {
            key: key.clone(),
            reason: CloseReason::Agent(Some("completed".into()))
        }]
    );
    assert!(
        s.user_closed(&key).is_empty(),
        "a closed surface cannot be user-closed"
    );
    let err = client_error(
        &mut s,
        &envelope("c2", "ui.close", json!({"instance_id": "w"})),
    );
    assert_eq!(err["code"], "unknown_instance");
}

#[test]
fn r_ui_5_user_close_sends_exactly_one_close_event() {
    let mut s = session();
    let key = opened_key(&s.handle_inbound(&open("m1", "weather.dashboard.01", None)));
    let fx = s.user_closed(&key);
    assert!(matches!(
        &fx[0],
        Effect::Close {
            reason: CloseReason::User,
            ..
        }
    ));
    let sent = reply(&fx);
    assert_eq!(sent["type"], "lineup.v1.ui.event");
    assert_eq!(
        sent["payload"],
        json!({"instance_id": "weather.dashboard.01", "event": "close", "data": {}})
    );
    assert_eq!(
        sent["target"],
        json!({"kind": "agent", "id": "agent_hermes_main"})
    );
    assert!(s.user_closed(&key).is_empty(), "exactly one");
}

#[test]
fn r_ui_5_page_cannot_forge_a_user_close() {
    let (mut s, key) = primed();
    let fx = s.handle_bridge(&key, &bridge_event("close", "{}"));
    assert!(matches!(fx.as_slice(), [Effect::Dropped { .. }]), "{fx:?}");
    assert_eq!(s.stats().forged_close, 1);
    assert!(s.is_current(&key));
}

/// R-UI-5: the bridge reports each `window.close()`; the kernel counts it and does nothing else.
#[test]
fn r_ui_5_window_close_attempts_are_counted_and_never_obeyed() {
    let (mut s, key) = primed();
    let raw = r#"{"namespace":"lineup.surface.v1","type":"close_attempt"}"#;
    for _ in 0..2 {
        let fx = s.handle_bridge(&key, raw);
        assert!(fx.is_empty(), "{fx:?}");
    }
    assert_eq!(s.stats().close_attempts, 2);
    assert_eq!(s.stats().bridge_invalid, 0);
    assert!(s.is_current(&key));
}

#[test]
fn r_sec_4_bad_bridge_messages_are_dropped_and_a_good_one_after_them_is_forwarded() {
    let (mut s, key) = primed();
    let bad = [
        r#"{"namespace":"other","type":"event","event":"x","data":{}}"#.to_owned(),
        r#"{"type":"event","event":"x","data":{}}"#.to_owned(),
        r#"{"namespace":"lineup.surface.v1","type":"event","event":"x"}"#.to_owned(),
        r#"{"namespace":"lineup.surface.v1","type":"teleport"}"#.to_owned(),
        r#"{"namespace":"lineup.surface.v1","type":"resize","height":-1}"#.to_owned(),
        r#"{"namespace":"lineup.surface.v1","type":"resize","height":"9"}"#.to_owned(),
        r#"{"namespace":"lineup.surface.v1","type":"event","event":"x","data":{},"data":{}}"#
            .to_owned(),
        "not json".to_owned(),
        "[]".to_owned(),
        bridge_event("x", &format!("{}1{}", "[".repeat(40), "]".repeat(40))),
        "x".repeat(30 * 1024),
    ];
    for raw in &bad {
        let fx = s.handle_bridge(&key, raw);
        assert!(
            matches!(fx.as_slice(), [Effect::Dropped { .. }]),
            "{raw:.60}: {fx:?}"
        );
    }
    assert_eq!(s.stats().bridge_invalid, bad.len() as u64);
    let fx = s.handle_bridge(&key, &bridge_event("refresh", r#"{"unit":"c"}"#));
    let sent = reply(&fx);
    assert_eq!(
        sent["payload"],
        json!({"instance_id": "base", "event": "refresh", "data": {"unit": "c"}})
    );
}

#[test]
fn r_ui_6_an_instance_id_in_a_bridge_message_changes_nothing() {
    let mut s = session();
    let a = opened_key(&s.handle_inbound(&open("m1", "a", None)));
    opened_key(&s.handle_inbound(&open("m2", "b", None)));
    let forged = r#"{"namespace":"lineup.surface.v1","type":"event","event":"x","data":{},"instance_id":"b"}"#;
    let sent = reply(&s.handle_bridge(&a, forged));
    assert_eq!(sent["payload"]["instance_id"], "a");
}

#[test]
fn resize_is_passed_on_for_clamping() {
    let (mut s, key) = primed();
    let fx = s.handle_bridge(
        &key,
        r#"{"namespace":"lineup.surface.v1","type":"resize","height":100000}"#,
    );
    assert!(matches!(fx.as_slice(), [Effect::Resize { height, .. }] if *height == 100000.0));
}

#[test]
fn concurrent_surface_limit() {
    let mut limits = Limits::default();
    limits.max_surfaces = 2;
    let (mut s, _) = session_with(limits);
    opened_key(&s.handle_inbound(&open("m1", "a", None)));
    opened_key(&s.handle_inbound(&open("m2", "b", None)));
    let err = client_error(&mut s, &open("m3", "c", None));
    assert_eq!(err["code"], "too_many_surfaces");
    assert_eq!(err["limit"], 2);
    // Replacing an open instance does not count as one more.
    opened_key(&s.handle_inbound(&open("m4", "a", None)));
}

#[test]
fn open_rate_limit_uses_the_clock() {
    let mut limits = Limits::default();
    limits.max_opens_per_window = 3;
    limits.open_window = Duration::from_secs(10);
    let (mut s, clock) = session_with(limits);
    for i in 0..3 {
        opened_key(&s.handle_inbound(&open(&format!("m{i}"), "w", None)));
    }
    let err = client_error(&mut s, &open("m9", "w", None));
    assert_eq!(err["code"], "rate_limited");
    clock.0.set(Duration::from_secs(10));
    opened_key(&s.handle_inbound(&open("m10", "w", None)));
}

#[test]
fn wrong_conversation_is_refused() {
    let (mut s, _) = primed();
    let mut msg: Value = serde_json::from_slice(&open("m1", "w", None)).unwrap();
    msg["conversation_id"] = json!("conv_02");
    let fx = s.handle_inbound(msg.to_string().as_bytes());
    let sent = reply(&fx);
    assert_eq!(sent["payload"]["code"], "wrong_conversation");
}

#[test]
fn crash_and_failed_open_remove_the_surface() {
    let mut s = session();
    let key = opened_key(&s.handle_inbound(&open("m1", "w", None)));
    let fx = s.surface_gone(&key, GoneReason::Crashed);
    assert!(matches!(
        fx.as_slice(),
        [
            Effect::Close {
                reason: CloseReason::Gone(GoneReason::Crashed),
                ..
            },
            Effect::Send(_)
        ]
    ));
    // R-UI-12: the agent hears why, as a close event with a reason.
    let sent = reply(&fx);
    assert_eq!(sent["type"], "lineup.v1.ui.event");
    assert_eq!(sent["payload"]["event"], "close");
    assert_eq!(sent["payload"]["data"], json!({"reason": "crashed"}));
    assert!(!s.is_current(&key));
    assert!(s.surface_gone(&key, GoneReason::Crashed).is_empty());
    let key = opened_key(&s.handle_inbound(&open("m2", "w", None)));
    let fx = s.open_failed(&key, "no display");
    let sent = reply(&fx);
    assert_eq!(sent["payload"]["code"], "surface_failed");
    assert_eq!(sent["payload"]["in_reply_to"], "m2");
}

#[test]
fn close_all_sends_nothing_upstream() {
    let mut s = session();
    opened_key(&s.handle_inbound(&open("m1", "a", None)));
    opened_key(&s.handle_inbound(&open("m2", "b", None)));
    let fx = s.close_all();
    assert_eq!(fx.len(), 2);
    assert!(fx.iter().all(|e| matches!(
        e,
        Effect::Close {
            reason: CloseReason::SessionEnded,
            ..
        }
    )));
    assert_eq!(s.surfaces().count(), 0);
}

#[test]
fn outbound_ids_are_unique_and_prefixed() {
    let (mut s, key) = primed();
    let ids: Vec<String> = (0..3)
        .map(|_| {
            reply(&s.handle_bridge(&key, &bridge_event("e", "{}")))["id"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(ids, ["out-1", "out-2", "out-3"]);
}

#[test]
fn decode_is_direction_agnostic_but_the_session_is_not() {
    let bytes = envelope(
        "m1",
        "app.result",
        json!({"call_id": "c", "status": "completed", "result": {"ok": true}}),
    );
    let message = decode(&bytes, &Limits::default()).unwrap();
    assert!(matches!(&message, Message::AppResult(r) if r.payload.status == Status::Completed));
}

#[test]
fn r_env_4_an_oversized_line_gets_too_large_with_a_null_reply_id() {
    let (mut s, _) = primed();
    let fx = s.handle_oversized(5_000_000);
    let sent = reply(&fx);
    assert_eq!(sent["payload"]["code"], "too_large");
    assert_eq!(sent["payload"]["in_reply_to"], Value::Null);
    assert_eq!(sent["payload"]["limit"], 1024 * 1024);
    assert_eq!(s.surfaces().count(), 1);
}

fn patch(id: &str, instance: &str, state: Value) -> Vec<u8> {
    envelope(
        id,
        "ui.patch",
        json!({"instance_id": instance, "state": state}),
    )
}

#[test]
fn r_ui_10_a_reloaded_document_gets_the_current_state_exactly_once_after_its_ready() {
    let mut s = session();
    let key = opened_key(&s.handle_inbound(&open("m1", "w", Some(json!({"n": 1})))));
    // The Surface's own first load is not a reload.
    assert!(s.document_committed(&key).is_empty());
    assert!(matches!(
        s.handle_bridge(&key, READY).as_slice(),
        [Effect::Ready(_), Effect::DeliverState { .. }]
    ));
    // The page reloads itself: a second document commits.
    assert!(matches!(
        s.document_committed(&key).as_slice(),
        [Effect::Reloaded(k)] if *k == key
    ));
    // Patches during the reload coalesce to the latest and are not delivered yet.
    assert!(s
        .handle_inbound(&patch("p1", "w", json!({"n": 2})))
        .is_empty());
    assert!(s
        .handle_inbound(&patch("p2", "w", json!({"n": 3})))
        .is_empty());
    match s.handle_bridge(&key, READY).as_slice() {
        [Effect::Ready(_), Effect::DeliverState { state, .. }] => {
            assert_eq!(state.to_json(), r#"{"n":3}"#);
        }
        other => panic!("the reloaded document gets its state after ready: {other:?}"),
    }
    // Exactly once: a second ready of the same document delivers nothing.
    assert!(matches!(
        s.handle_bridge(&key, READY).as_slice(),
        [Effect::Dropped { .. }]
    ));
    assert_eq!(s.stats().reloads, 1);
}

#[test]
fn r_ui_10_r_ui_12_a_reload_loop_closes_the_surface_with_its_reason() {
    let (mut s, clock) = session_with(Limits::default());
    let key = opened_key(&s.handle_inbound(&open("m1", "w", None)));
    let max = Limits::default().max_documents_per_window;
    // Five documents (the first load included) within the window are allowed.
    for _ in 0..max {
        let fx = s.document_committed(&key);
        assert!(
            !fx.iter().any(|e| matches!(e, Effect::Close { .. })),
            "{fx:?}"
        );
        clock.0.set(clock.0.get() + Duration::from_millis(100));
    }
    // One more within 10 s closes it, and the agent hears why.
    let fx = s.document_committed(&key);
    assert!(matches!(
        fx.first(),
        Some(Effect::Close {
            reason: CloseReason::Gone(GoneReason::ReloadLoop),
            ..
        })
    ));
    let sent = reply(&fx);
    assert_eq!(sent["payload"]["event"], "close");
    assert_eq!(sent["payload"]["data"], json!({"reason": "reload_loop"}));
    assert!(!s.is_current(&key));
}

#[test]
fn r_ui_10_embedder_reloads_keep_the_state_and_never_count_as_a_reload_loop() {
    let (mut s, _clock) = session_with(Limits::default());
    let key = opened_key(&s.handle_inbound(&open("m1", "w", Some(json!({"n": 1})))));
    assert!(s.document_committed(&key).is_empty());
    assert!(matches!(
        s.handle_bridge(&key, READY).as_slice(),
        [Effect::Ready(_), Effect::DeliverState { .. }]
    ));
    let max = Limits::default().max_documents_per_window;
    // Many more embedder reloads than the loop bound, all at the same instant.
    for _ in 0..max * 3 {
        assert!(matches!(
            s.embedder_reloaded(&key).as_slice(),
            [Effect::Reloaded(k)] if *k == key
        ));
        match s.handle_bridge(&key, READY).as_slice() {
            [Effect::Ready(_), Effect::DeliverState { state, .. }] => {
                assert_eq!(state.to_json(), r#"{"n":1}"#);
            }
            other => panic!("each reloaded document gets the state after ready: {other:?}"),
        }
    }
    assert!(s.is_current(&key));
    // Positive control: the page's own reloads at that instant still make a loop.
    let closed = (0..max).any(|_| {
        s.document_committed(&key)
            .iter()
            .any(|e| matches!(e, Effect::Close { .. }))
    });
    assert!(closed && !s.is_current(&key));
}

#[test]
fn r_ui_10_reloads_spread_over_time_are_not_a_loop() {
    let (mut s, clock) = session_with(Limits::default());
    let key = opened_key(&s.handle_inbound(&open("m1", "w", None)));
    for _ in 0..20 {
        let fx = s.document_committed(&key);
        assert!(
            !fx.iter().any(|e| matches!(e, Effect::Close { .. })),
            "{fx:?}"
        );
        clock.0.set(clock.0.get() + Duration::from_secs(3));
    }
    assert!(s.is_current(&key));
}

#[test]
fn events_dropped_is_a_client_error_naming_the_instance_and_count_never_a_ui_event() {
    let (mut s, key) = primed();
    let fx = s.events_dropped(&key.instance, 7);
    let sent = reply(&fx);
    assert_eq!(sent["type"], "lineup.v1.client.error");
    assert_eq!(sent["conversation_id"], "conv_01");
    assert_eq!(sent["payload"]["code"], "events_dropped");
    assert_eq!(sent["payload"]["in_reply_to"], Value::Null);
    assert_eq!(sent["payload"]["instance_id"], "base");
    assert_eq!(sent["payload"]["count"], 7);
    assert!(s.is_current(&key), "reporting drops changes nothing");
}

/// Logs reach journald (#7 item 7): `Debug` of whatever holds guest code, agent state, the
/// agent's words (a call's or a close's `reason`) or event data prints a length and a digest,
/// never the bytes in any form (raw, escaped, as a byte list, hex, base64); so does `Debug` of
/// the framer that cuts the agent's lines and of the lines it cut.
#[test]
fn debug_never_prints_guest_code_agent_state_or_event_data() {
    const SECRET: &str = "zQ7\"secret-state-Ω";
    let mut s = session();
    let mut a = app(&format!("<p>{SECRET}</p>"));
    a["css"] = json!(format!("p::after {{ content: '{SECRET}' }}"));
    a["js"] = json!(format!("let s = '{SECRET}';"));
    let open_bytes = envelope(
        "m1",
        "ui.open",
        json!({"instance_id": "w", "app": a, "state": {"s": SECRET}}),
    );
    let call_bytes = envelope(
        "m2",
        "app.call",
        json!({"call_id": "c1", "capability": "x.y", "reason": SECRET,
            "expires_at": "2026-08-02T12:10:00Z", "arguments": {"s": SECRET}}),
    );
    let close_bytes = envelope(
        "m3",
        "ui.close",
        json!({"instance_id": "w", "reason": SECRET}),
    );
    let mut shown = Vec::new();
    for bytes in [&open_bytes, &call_bytes, &close_bytes] {
        let message = decode(bytes, &Limits::default()).unwrap();
        // Positive control: the secret is in the message, and would show in its JSON.
        assert!(message.to_json().contains("secret-state"));
        shown.push(format!("{message:?}"));
        shown.push(format!("{message:#?}"));
    }
    let fx = s.handle_inbound(&open_bytes);
    let key = opened_key(&fx);
    shown.push(format!("{fx:?}"));
    shown.push(format!("{:?}", s.handle_bridge(&key, READY)));
    shown.push(format!(
        "{:?}",
        s.handle_inbound(&patch("p1", "w", json!({"s": SECRET})))
    ));
    let event = bridge_event("go", &json!({"s": SECRET}).to_string());
    shown.push(format!(
        "{:?}",
        lineup_host_core::BridgeMessage::decode(&event, &Limits::default()).unwrap()
    ));
    shown.push(format!("{:?}", s.handle_bridge(&key, &event)));
    let closed = s.handle_inbound(&close_bytes);
    assert!(
        closed.iter().any(|e| matches!(
            e,
            Effect::Close { reason: CloseReason::Agent(Some(r)), .. } if r == SECRET
        )),
        "the agent's reason reaches the close: {closed:?}"
    );
    shown.push(format!("{closed:?}"));
    shown.push(format!("{closed:#?}"));
    // The agent's stream, cut into lines: a whole line and the start of the next.
    let mut framer = lineup_host_core::LineFramer::new(1 << 20);
    let mut stream = open_bytes.clone();
    stream.push(b'\n');
    stream.extend_from_slice(&call_bytes[..call_bytes.len() / 2]);
    let frames = framer.push(&stream);
    assert_eq!(frames.len(), 1);
    shown.push(format!("{frames:?}"));
    shown.push(format!("{framer:?}"));
    for text in &shown {
        assert!(text.contains("bytes"), "a length is shown: {text}");
        assert_eq!(
            lineup_host_core::leaked_form(text, SECRET),
            None,
            "Debug printed the secret: {text}"
        );
    }
    // Positive control of the check: the derived Debug of the same data would have leaked it.
    let leaky = format!("{:?}", json!({"s": SECRET}));
    assert!(lineup_host_core::leaked_form(&leaky, SECRET).is_some());
}

#[test]
fn r_ses_1_with_a_vouched_agent_another_sender_id_is_refused_and_changes_nothing() {
    let clock = ManualClock::default();
    let mut config = SessionConfig::new(PartyId::try_from("desktop").unwrap(), "out");
    config.agent_id = Some(PartyId::try_from("agent_hermes_main").unwrap());
    let mut s = Session::new(config, Box::new(clock)).unwrap();
    let mut other: Value = serde_json::from_slice(&open("m1", "w", None)).unwrap();
    other["sender"]["id"] = json!("someone_else");
    let err = client_error(&mut s, other.to_string().as_bytes());
    assert_eq!(err["code"], "wrong_sender");
    assert_eq!(err["field"], "sender.id");
    assert_eq!(s.surfaces().count(), 0);
    assert_eq!(s.conversation_id(), None, "a refusal establishes nothing");
    // Positive control: the vouched agent's own open is accepted.
    opened_key(&s.handle_inbound(&open("m2", "w", None)));
}
