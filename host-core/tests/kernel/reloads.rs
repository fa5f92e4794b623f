//! Reloads (R-UI-10, R-UI-12), dropped events, and what `Debug` never prints.

use super::*;
use lineup_host_core::PageInput;

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
    assert!(s.handle_page(&key, PageInput::DocumentCommitted).is_empty());
    assert!(matches!(
        s.handle_bridge(&key, READY).as_slice(),
        [Effect::Ready(_), Effect::DeliverState { .. }]
    ));
    // The page reloads itself: a second document commits.
    assert!(matches!(
        s.handle_page(&key, PageInput::DocumentCommitted).as_slice(),
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
        let fx = s.handle_page(&key, PageInput::DocumentCommitted);
        assert!(
            !fx.iter().any(|e| matches!(e, Effect::Close { .. })),
            "{fx:?}"
        );
        clock.0.set(clock.0.get() + Duration::from_millis(100));
    }
    // One more within 10 s closes it, and the agent hears why.
    let fx = s.handle_page(&key, PageInput::DocumentCommitted);
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
    assert!(s.handle_page(&key, PageInput::DocumentCommitted).is_empty());
    assert!(matches!(
        s.handle_bridge(&key, READY).as_slice(),
        [Effect::Ready(_), Effect::DeliverState { .. }]
    ));
    let max = Limits::default().max_documents_per_window;
    // Many more embedder reloads than the loop bound, all at the same instant.
    for _ in 0..max * 3 {
        assert!(matches!(
            s.handle_page(&key, PageInput::EmbedderReloaded).as_slice(),
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
        s.handle_page(&key, PageInput::DocumentCommitted)
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
        let fx = s.handle_page(&key, PageInput::DocumentCommitted);
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
