//! A Surface's life: integrity, state and patches, closes, bridge messages and the limits on opens (R-UI-2a..R-UI-6a, R-SEC-4, R-SEC-7).

use super::*;
use lineup_host_core::PageInput;

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
        s.handle_page(&key, PageInput::UserClosed).is_empty(),
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
    let fx = s.handle_page(&key, PageInput::UserClosed);
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
    assert!(
        s.handle_page(&key, PageInput::UserClosed).is_empty(),
        "exactly one"
    );
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
    let fx = s.handle_page(&key, PageInput::Gone(GoneReason::Crashed));
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
    assert!(s
        .handle_page(&key, PageInput::Gone(GoneReason::Crashed))
        .is_empty());
    let key = opened_key(&s.handle_inbound(&open("m2", "w", None)));
    let fx = s.handle_page(&key, PageInput::OpenFailed("no display"));
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
