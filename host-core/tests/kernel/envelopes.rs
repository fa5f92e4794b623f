//! Envelope and field limits (R-ENV-*, R-UI-1, R-UI-2, R-UI-7), `app.call` refused before capabilities exist, and who may send (R-SES-1).

use super::*;

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
fn r_env_1_a_payload_that_is_not_an_object_is_refused_as_the_payload() {
    for (payload, kind) in [
        (json!([1]), "an array"),
        (json!([]), "an array"),
        (json!("w"), "a string"),
        (json!(7), "a number"),
        (json!(true), "a boolean"),
        (Value::Null, "null"),
    ] {
        for message_type in [
            "lineup.v1.ui.open",
            "lineup.v1.ui.patch",
            "lineup.v1.ui.close",
        ] {
            let (mut s, _) = primed();
            let mut msg: Value = serde_json::from_slice(&open("m1", "w", None)).unwrap();
            msg["type"] = json!(message_type);
            msg["payload"] = payload.clone();
            let err = client_error(&mut s, msg.to_string().as_bytes());
            assert_eq!(
                err["code"], "invalid_field",
                "{message_type} {payload}: {err}"
            );
            assert_eq!(err["field"], "payload", "{message_type} {payload}: {err}");
            assert_eq!(err["in_reply_to"], "m1");
            let text = err["message"].as_str().unwrap_or_default();
            assert!(
                text.contains(&format!("payload must be an object, not {kind}")),
                "{message_type} {payload}: {text}"
            );
        }
    }
    // An unknown type is refused as the type, whatever its payload.
    let (mut s, _) = primed();
    let mut msg: Value = serde_json::from_slice(&open("m1", "w", None)).unwrap();
    msg["type"] = json!("lineup.v1.ui.teleport");
    msg["payload"] = json!([1]);
    let err = client_error(&mut s, msg.to_string().as_bytes());
    assert_eq!(err["field"], "type", "{err}");
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
