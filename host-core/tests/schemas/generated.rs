//! Generated valid messages of every kind, at their boundaries, through the schemas and the Rust types.

use super::*;

/// Valid messages built here: every enum value and each bound from the inside.
fn generated_valid() -> Vec<(String, Kind, Value)> {
    let mut out: Vec<(String, Kind, Value)> = Vec::new();
    let mut add = |name: String, value: Value| out.push((name, Kind::Envelope, value));

    for status in ALL_STATUSES {
        let mut payload = json!({"call_id": "call_01", "status": status});
        if status == Status::Completed {
            payload["result"] = json!({"ok": true});
        } else {
            payload["message"] = json!(format!("the call was {}", wire(status)));
        }
        add(
            format!("app.result status {}", wire(status)),
            envelope("m", "app.result", CLIENT, payload),
        );
    }
    for risk in ALL_RISKS {
        let capability = json!({"name": "x.y", "version": "1", "risk": risk, "input_schema": {}});
        add(
            format!("app.list risk {}", wire(risk)),
            envelope(
                "m",
                "app.list",
                CLIENT,
                json!({"capabilities": [capability]}),
            ),
        );
        add(
            format!("client.inventory risk {}", wire(risk)),
            envelope(
                "m",
                "client.inventory",
                CLIENT,
                json!({"revision": "r1",
                "standard_components": [], "applications": [], "capabilities": [capability]}),
            ),
        );
    }
    for code in error_codes_in_rust() {
        // R-ENV-5: a malformed app.call is answered `failed` with the client.error codes.
        add(
            format!("app.result failed with error code {code}"),
            envelope(
                "m",
                "app.result",
                CLIENT,
                json!({"call_id": "call_01", "status": "failed", "message": "refused",
                    "error": {"code": code, "field": "payload.arguments", "limit": 0}}),
            ),
        );
        add(
            format!("client.error code {code}"),
            envelope(
                "m",
                "client.error",
                CLIENT,
                json!({"in_reply_to": "m0", "code": code,
                "message": "refused", "field": "payload", "limit": 0}),
            ),
        );
    }
    add(
        "client.error limit u64::MAX".into(),
        envelope(
            "m",
            "client.error",
            CLIENT,
            json!({"in_reply_to": null, "code": "too_large",
            "message": "refused", "limit": u64::MAX}),
        ),
    );

    // R-UI-1: instance ids of 1 and 128 characters, using every allowed character.
    for len in [1, 2, 66, 128] {
        let id = cycled("", ID_CHARS, len);
        let app = inline_app("<p></p>", "", "");
        add(
            format!("ui.open instance_id of {len}"),
            envelope(
                "m",
                "ui.open",
                AGENT,
                json!({"instance_id": id, "app": app, "state": {"n": len}}),
            ),
        );
        add(
            format!("ui.patch instance_id of {len}"),
            envelope(
                "m",
                "ui.patch",
                AGENT,
                json!({"instance_id": id, "state": {}}),
            ),
        );
        add(
            format!("ui.close instance_id of {len}"),
            envelope("m", "ui.close", AGENT, json!({"instance_id": id})),
        );
        add(
            format!("ui.event instance_id of {len}"),
            envelope(
                "m",
                "ui.event",
                CLIENT,
                json!({"instance_id": id, "event": "go", "data": {}}),
            ),
        );
    }
    for id in ["-", ".", ":", "_", "0", "..", "a:b"] {
        add(
            format!("ui.close instance_id {id:?}"),
            envelope("m", "ui.close", AGENT, json!({"instance_id": id})),
        );
    }
    // R-UI-7: event names of 1 and 64 characters.
    let mut events = Vec::new();
    for (first, len) in [("a", 1), ("Z", 1), ("e", 2), ("e", 64), ("Q", 64)] {
        let event = cycled(first, ID_CHARS, len);
        add(
            format!("ui.event name of {len} starting {first}"),
            envelope(
                "m",
                "ui.event",
                CLIENT,
                json!({"instance_id": "w1", "event": event,
                    "data": {"k": [1, "two", null, true, 2.5]}}),
            ),
        );
        events.push(event);
    }
    add(
        "client.inventory declaring boundary events".into(),
        envelope(
            "m",
            "client.inventory",
            CLIENT,
            json!({"revision": "catalog-44",
            "standard_components": [{"id": "choice", "version": "1"}],
            "applications": [{"id": "com.lineup.svg-canvas", "version": "2.0.0-rc.1",
                "surfaces": [{"id": "canvas", "events": events.clone()},
                    {"id": "empty", "events": []}]}],
            "capabilities": []}),
        ),
    );
    // R-UI-2: app ids at their bounds.
    let label63 = format!("{}z", cycled("a", "bcdefghij-klmnop0123456789", 62));
    let long_id = format!("{label63}.{label63}.{label63}.{}", cycled("z", "y", 63));
    assert_eq!(long_id.len(), 255);
    for id in [
        "a.b",
        "com.lineup.svg-canvas",
        "A.1",
        "x1.2y.z-3",
        &format!("com.{label63}"),
        &long_id,
    ] {
        let mut app = inline_app("", "", "");
        app["id"] = json!(id);
        add(
            format!("ui.open app.id {id}"),
            envelope(
                "m",
                "ui.open",
                AGENT,
                json!({"instance_id": "w1", "app": app}),
            ),
        );
    }
    // R-UI-2: SemVer 2.0 versions from the SemVer specification.
    for version in [
        "0.0.0",
        "1.2.3-alpha",
        "1.0.0-alpha.1",
        "1.0.0-0.3.7",
        "1.0.0-x.7.z.92",
        "1.0.0-x-y-z.--",
        "1.0.0+20130313144700",
        "1.0.0-beta+exp.sha.5114f85",
        "1.0.0+21AF26D3----117B344092BD",
        "1.0.0+001",
        "1.0.0-0A.is.legal",
        "18446744073709551615.0.0",
    ] {
        let mut app = inline_app("", "", "");
        app["version"] = json!(version);
        add(
            format!("ui.open app.version {version}"),
            envelope(
                "m",
                "ui.open",
                AGENT,
                json!({"instance_id": "w1", "app": app}),
            ),
        );
        add(
            format!("ui.open installed app.version {version}"),
            envelope(
                "m",
                "ui.open",
                AGENT,
                json!({"instance_id": "w1",
                    "app": {"id": "com.lineup.svg-canvas", "version": version,
                        "surface": "canvas"}}),
            ),
        );
    }
    // R-UI-2a: integrity equal to the digest of assorted bundles, and a name of 256 characters.
    for (i, (html, css, js)) in [
        (
            "<p>é</p>",
            "p::after { content: '</scrip' }",
            "let x = 1 < 2; // <\\/script>",
        ),
        ("</script></style>", "", ""),
        ("", "", "a"),
        ("ab", "c", ""),
        ("a", "bc", ""),
    ]
    .into_iter()
    .enumerate()
    {
        let mut app = inline_app(html, css, js);
        app["name"] = json!(cycled("名", "天气面板 ", 256));
        add(
            format!("ui.open integrity of bundle {i}"),
            envelope(
                "m",
                "ui.open",
                AGENT,
                json!({"instance_id": "w1", "app": app}),
            ),
        );
    }
    // R-UI-2: a bundle of exactly the 160 KiB limit.
    let html = "x".repeat(160 * 1024 - 4);
    add(
        "ui.open bundle of exactly 160 KiB".into(),
        envelope(
            "m",
            "ui.open",
            AGENT,
            json!({"instance_id": "w1", "app": inline_app(&html, "a{}", "1")}),
        ),
    );
    // R-ENV-4: nesting exactly at the 32-level limit (envelope, payload, state and 29 more).
    add(
        "ui.patch nesting depth 32".into(),
        envelope(
            "m",
            "ui.patch",
            AGENT,
            json!({"instance_id": "w1", "state": nested(30)}),
        ),
    );
    // R-ENV-1: opaque ids at their bounds, and a target.
    for id in ["x", "会话 01 with spaces", &"i".repeat(256)] {
        let mut value = envelope(id, "ui.close", AGENT, json!({"instance_id": "w1"}));
        value["conversation_id"] = json!(id);
        value["target"] = json!({"kind": id, "id": id});
        add(
            format!("ui.close with opaque ids of {} chars", id.chars().count()),
            value,
        );
    }
    // R-CAP-2, R-CAP-4: capability names, versions and timestamps.
    for (capability, version, expires_at) in [
        ("a", "1", "2026-08-02T12:10:00Z"),
        ("A.b-c_d.0", "2024-01 build", "2026-08-02T12:10:00-05:30"),
        (
            &*cycled("c", "apability_", 128),
            &*"v".repeat(64),
            "1999-12-31T23:59:59+14:00",
        ),
    ] {
        add(
            format!("app.call capability {capability}"),
            envelope(
                "m",
                "app.call",
                AGENT,
                json!({"call_id": "c1", "capability": capability, "reason": "",
                    "expires_at": expires_at, "arguments": {"nested": {"list": []}}}),
            ),
        );
        add(
            format!("app.list capability version {version}"),
            envelope(
                "m",
                "app.list",
                CLIENT,
                json!({"capabilities": [
                    {"name": capability, "version": version, "risk": "restricted"}]}),
            ),
        );
    }

    // R-MCP-6: every forwarded method and every notification that goes up, at the bounds of
    // generation and request_id; R-MCP-3: both id forms of the agent's tools/call.
    for (n, method) in McpForwarded::ALL.iter().enumerate() {
        let (generation, request_id) = if n % 2 == 0 {
            (0, u64::MAX)
        } else {
            (u64::MAX, 0)
        };
        add(
            format!("mcp.request {}", method.as_str()),
            envelope(
                "m",
                "mcp.request",
                CLIENT,
                json!({"instance_id": "v1",
                "generation": generation, "server": "s", "request_id": request_id,
                "method": method, "params": {}}),
            ),
        );
    }
    for method in [
        "notifications/message",
        "notifications/cancelled",
        "ui/update-model-context",
    ] {
        add(
            format!("mcp.notify {method}"),
            envelope(
                "m",
                "mcp.notify",
                CLIENT,
                json!({"instance_id": "v1", "generation": 1,
                "server": "s", "method": method, "params": {}}),
            ),
        );
    }
    // An MCP App open whose HTML is `html` (`{"text": …}` or `{"blob": …}`) and whose tool is
    // `tool`, named after `what`.
    let mut add_open = |what: String, html: Value, tool: Value| {
        let mut resource = json!({"uri": "ui://a", "mime_type": "text/html;profile=mcp-app"});
        resource
            .as_object_mut()
            .unwrap()
            .extend(html.as_object().unwrap().clone());
        let mcp_app = json!({"server": "s", "resource": resource, "tool": tool});
        let payload = json!({"instance_id": "v1", "mcp_app": mcp_app});
        add(what, envelope("m", "ui.open", AGENT, payload));
    };
    for call_id in [json!(i64::MIN), json!(i64::MAX), json!(""), json!("call-1")] {
        add_open(
            format!("ui.open mcp_app call_id {call_id}"),
            json!({"text": ""}),
            json!({"name": "t".repeat(128), "meta": {"ui": {"resourceUri": "ui://a"}}, "call_id": call_id}),
        );
    }
    for blob in ["", "YQ==", "YWI=", "YWJj"] {
        add_open(
            format!("ui.open mcp_app blob {blob:?}"),
            json!({ "blob": blob }),
            json!({"name": "t", "meta": {"ui/resourceUri": "ui://a"}, "call_id": 1}),
        );
    }

    // Bridge (R-UI-6, R-UI-7): event names at their bounds, data just under 16 KiB, heights.
    for event in &events {
        out.push((
            format!("bridge event {event}"),
            Kind::Bridge,
            json!({"namespace": NAMESPACE, "type": "event", "event": event, "data": {}}),
        ));
    }
    let filler = "d".repeat(16 * 1024 - 1 - r#"{"s":""}"#.len());
    out.push((
        "bridge event data of 16 KiB - 1".into(),
        Kind::Bridge,
        json!({"namespace": NAMESPACE, "type": "event", "event": "big", "data": {"s": filler}}),
    ));
    for height in [json!(0), json!(1), json!(99999.75), json!(1e300)] {
        out.push((
            format!("bridge resize {height}"),
            Kind::Bridge,
            json!({"namespace": NAMESPACE, "type": "resize", "height": height}),
        ));
    }
    out.push((
        "bridge ready with an ignored instance_id".into(),
        Kind::Bridge,
        json!({"namespace": NAMESPACE, "type": "ready", "instance_id": "other",
               "document": "0123456789abcdef0123456789abcdef"}),
    ));
    out
}

#[test]
fn generated_valid_messages_pass_the_schemas_and_the_rust_types_and_round_trip() {
    let generated = generated_valid();
    assert!(generated.len() > 100, "{} generated", generated.len());
    let mut failures = Vec::new();
    for (name, kind, value) in &generated {
        let bytes = serde_json::to_vec(value).unwrap();
        failures.extend(check_valid(&format!("generated: {name}"), *kind, &bytes));
    }
    fail_on(failures, "generated-valid");
}
