//! Hidden and revoked capabilities (R-INV-4); the registry and the inventory (R-INV-1, R-INV-2, R-CAP-1).

use super::*;

// ---- hidden and revoked capabilities (R-INV-4) ----

fn without_call_id(mut v: Value) -> Value {
    v["call_id"] = Value::Null;
    v
}

#[test]
fn r_inv_4_hidden_and_unknown_get_identical_answers() {
    // Session A: app.secret is registered but hidden from this agent. Session B: it does not
    // exist. The same call gets byte-identical answers.
    let mut hidden = Harness::new(Some("agent-1"));
    let fx = hidden
        .s
        .set_capability_visible(&agent("agent-1"), &name("app.secret"), false)
        .unwrap();
    assert!(
        fx.is_empty(),
        "hiding what was never offered changes nothing: {fx:?}"
    );
    hidden.register(plain("app.secret", "1"));
    assert_eq!(
        hidden.inventories().len(),
        1,
        "a hidden capability sends no new inventory"
    );
    assert_eq!(hidden.inventories()[0]["capabilities"], json!([]));
    let mut unknown = Harness::new(Some("agent-1"));
    hidden.call("c1", "app.secret", json!({"x": 1}), 60);
    unknown.call("c1", "app.secret", json!({"x": 1}), 60);
    let a = serde_json::to_string(&hidden.last_result()).unwrap();
    let b = serde_json::to_string(&unknown.last_result()).unwrap();
    assert_eq!(a, b, "a hidden capability is never revealed");
    assert_eq!(hidden.last_result()["status"], "unsupported");
    assert!(hidden.runs.is_empty());
    // Apart from call_id, another unknown call's answer has the same shape.
    unknown.call("c2", "app.secret", json!({}), 60);
    assert_eq!(
        without_call_id(unknown.results()[0].clone()),
        without_call_id(unknown.results()[1].clone())
    );
}

#[test]
fn r_inv_4_once_offered_then_unregistered_or_hidden_is_revoked() {
    let mut h = Harness::new(Some("agent-1"));
    h.register(open_url(Risk::DisplayOnly));
    h.register(plain("clipboard.write", "1.0"));
    let fx = h.s.unregister_capability(&name("app.open_url")).unwrap();
    h.drive(fx);
    let fx =
        h.s.set_capability_visible(&agent("agent-1"), &name("clipboard.write"), false)
            .unwrap();
    h.drive(fx);
    h.call("c1", "app.open_url", url_args(), 60);
    h.call("c2", "clipboard.write", json!({}), 60);
    // Each call is answered, once, and `revoked`: no answer at all must fail here too.
    let results = h.results();
    assert_eq!(results.len(), 2, "one answer per call: {results:?}");
    for (call_id, r) in ["c1", "c2"].into_iter().zip(&results) {
        assert_eq!(r["call_id"], call_id, "{r}");
        assert_eq!(r["status"], "unsupported", "{call_id}: {r}");
        assert_eq!(r["error"]["code"], "revoked", "{call_id}: {r}");
    }
    assert!(h.runs.is_empty(), "never falls back to running it");
    assert!(matches!(
        h.s.unregister_capability(&name("app.open_url")),
        Err(UsageError::CapabilityNotRegistered { .. })
    ));
}

// ---- the registry and the inventory (R-INV-1, R-INV-2, R-CAP-1) ----

#[test]
fn r_inv_2_revision_changes_on_every_change_and_is_never_reused() {
    let mut store = MemoryStore::default();
    let mut seen = Vec::new();
    for _restart in 0..2 {
        let mut h = Harness::restart(store, Some("agent-1"), CapabilityLimits::default());
        h.register(open_url(Risk::UserConfirmation));
        let fx = h.s.register_capability(open_url(Risk::DisplayOnly));
        assert!(
            matches!(fx, Err(UsageError::CapabilityRegistered { .. })),
            "registering a name twice is an error"
        );
        let fx =
            h.s.set_capability_visible(&agent("agent-1"), &name("app.open_url"), false)
                .unwrap();
        h.drive(fx);
        // Hiding from another agent does not affect this session: nothing is sent.
        let fx =
            h.s.set_capability_visible(&agent("agent-2"), &name("app.open_url"), false)
                .unwrap();
        assert!(fx.is_empty(), "{fx:?}");
        let fx =
            h.s.set_capability_visible(&agent("agent-1"), &name("app.open_url"), true)
                .unwrap();
        h.drive(fx);
        let fx = h.s.unregister_capability(&name("app.open_url")).unwrap();
        h.drive(fx);
        h.register(open_url(Risk::UserConfirmation));
        let inventories = h.inventories();
        assert_eq!(inventories.len(), 6, "start + 5 changes");
        // app.list follows each inventory as its capability-only projection (R-CAP-1).
        let lists: Vec<&Value> = h
            .sent
            .iter()
            .filter(|m| m["type"] == "lineup.v1.app.list")
            .collect();
        assert_eq!(lists.len(), 6);
        for (inv, list) in inventories.iter().zip(&lists) {
            assert_eq!(inv["capabilities"], list["payload"]["capabilities"]);
            assert_eq!(inv["standard_components"], json!([]));
            assert_eq!(inv["applications"], json!([]));
        }
        assert_eq!(
            inventories[1]["capabilities"],
            json!([{"name":"app.open_url","version":"1.0","risk":"user_confirmation",
                    "input_schema":{"type":"object","required":["url"],
                    "properties":{"url":{"type":"string","pattern":"^https?://"}}}}])
        );
        seen.extend(
            inventories
                .iter()
                .map(|i| i["revision"].as_str().unwrap().to_owned()),
        );
        store = std::mem::take(&mut h.store);
    }
    let mut unique = seen.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(
        unique.len(),
        seen.len(),
        "never reused, also across a restart: {seen:?}"
    );
}

#[test]
fn r_inv_1_inventory_comes_before_the_answer_to_the_establishing_envelope() {
    let mono = ManualClock::default();
    let config = SessionConfig::new(PartyId::try_from("desktop").unwrap(), "out");
    let mut s = Session::new(config, Box::new(mono)).unwrap();
    let fx = s
        .enable_capabilities(CapabilitySetup::new(
            RevisionEpoch(3),
            Box::new(ManualWall::default()),
        ))
        .unwrap();
    assert!(fx.is_empty(), "no conversation yet: nothing to send");
    // R-SES-1 (amended): a malformed envelope establishes nothing and gets no inventory:
    // no sender, a sender of another kind, an unreadable conversation.
    for malformed in [
        &br#"{"v":1,"id":"m0","type":"lineup.v1.ui.close","conversation_id":"conv_01","payload":{"instance_id":"nope"}}"#[..],
        br#"{"v":1,"id":"m0","type":"lineup.v1.ui.close","conversation_id":"conv_01","sender":{"kind":"client","id":"a"},"payload":{"instance_id":"nope"}}"#,
        br#"{"v":1,"id":"m0","type":"lineup.v1.ui.close","conversation_id":"","sender":{"kind":"agent","id":"a"},"payload":{"instance_id":"nope"}}"#,
        br#"{"v":2,"id":"m0","type":"lineup.v1.ui.close","conversation_id":"conv_01","sender":{"kind":"agent","id":"a"},"payload":{"instance_id":"nope"}}"#,
    ] {
        let fx = s.handle_inbound(malformed);
        assert!(
            fx.iter()
                .all(|e| !matches!(e, Effect::Send(Message::ClientInventory(_)))),
            "{fx:?}"
        );
        assert!(s.conversation_id().is_none(), "{fx:?}");
    }
    // A well-formed envelope whose payload is refused establishes the session: the inventory
    // and app.list come first, then the refusal.
    let bad = br#"{"v":1,"id":"m0","type":"lineup.v1.ui.close","conversation_id":"conv_01","sender":{"kind":"agent","id":"a"},"payload":{"instance_id":"nope"}}"#;
    let fx = s.handle_inbound(bad);
    let sent: Vec<&Message> = fx
        .iter()
        .filter_map(|e| match e {
            Effect::Send(m) => Some(m),
            _ => None,
        })
        .collect();
    assert!(
        matches!(sent[0], Message::ClientInventory(i) if i.payload.revision.as_str() == "rev-3-1"),
        "{fx:?}"
    );
    assert!(matches!(sent[1], Message::AppList(_)), "{fx:?}");
    assert!(matches!(sent[2], Message::ClientError(_)), "{fx:?}");
    assert_eq!(s.conversation_id().map(|c| c.as_str()), Some("conv_01"));
    // Established once: the next envelope gets no inventory again.
    let call = br#"{"v":1,"id":"m1","type":"lineup.v1.app.call","conversation_id":"conv_01","sender":{"kind":"agent","id":"a"},"payload":{"call_id":"c1","capability":"x.y","reason":"r","expires_at":"2099-01-01T00:00:00Z","arguments":{}}}"#;
    let fx = s.handle_inbound(call);
    assert!(
        fx.iter()
            .all(|e| !matches!(e, Effect::Send(Message::ClientInventory(_)))),
        "{fx:?}"
    );
}

#[test]
fn r_cap_2_a_schema_that_does_not_compile_is_refused_at_registration() {
    let rows = [
        ("wrong keyword type", json!({"type": 5})),
        (
            "remote $ref",
            json!({"$ref": "https://example.com/schema.json"}),
        ),
        ("file $ref", json!({"$ref": "file:///etc/passwd"})),
        (
            "bad pattern",
            json!({"type":"object","properties":{"a":{"pattern":"("}}}),
        ),
    ];
    for (row, schema) in rows {
        let err = Capability::new(
            name("app.bad"),
            OpaqueVersion::try_from("1").unwrap(),
            Risk::DisplayOnly,
            JsonObject::try_from(schema).unwrap(),
        )
        .unwrap_err();
        assert!(
            matches!(err, UsageError::InvalidInputSchema { .. }),
            "{row}: {err}"
        );
        assert!(
            err.to_string().contains("app.bad"),
            "{row}: names it: {err}"
        );
    }
    // A local $ref resolves.
    let ok = json!({"$defs":{"u":{"type":"string"}},"type":"object","properties":{"url":{"$ref":"#/$defs/u"}}});
    assert!(Capability::new(
        name("app.ok"),
        OpaqueVersion::try_from("1").unwrap(),
        Risk::DisplayOnly,
        JsonObject::try_from(ok).unwrap()
    )
    .is_ok());
}

#[test]
fn r_cap_2_schema_failures_name_the_path_and_the_rule() {
    let rows = [
        (
            "missing required",
            json!({}),
            "payload.arguments",
            "required",
        ),
        (
            "wrong type",
            json!({"url": 5}),
            "payload.arguments/url",
            "type",
        ),
        (
            "pattern",
            json!({"url": "ftp://x"}),
            "payload.arguments/url",
            "pattern",
        ),
    ];
    for (row, args, field, rule) in rows {
        let mut h = Harness::new(None);
        h.register(open_url(Risk::UserConfirmation));
        h.call("c1", "app.open_url", args, 60);
        let r = h.last_result();
        assert_eq!(r["status"], "failed", "{row}");
        assert_eq!(r["error"]["code"], "invalid_arguments", "{row}: {r}");
        assert_eq!(r["error"]["field"], field, "{row}: {r}");
        let message = r["message"].as_str().unwrap();
        assert!(
            message.contains(&format!("\"{rule}\"")),
            "{row}: names the rule: {message}"
        );
        assert!(
            h.prompts.is_empty(),
            "{row}: no prompt for invalid arguments"
        );
    }
}
