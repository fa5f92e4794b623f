//! Where the schemas are stricter than the Rust types, and that the enums and schema files agree.

use super::*;

/// Messages the schemas refuse and the Rust decoder accepts today. Each is a leniency of the
/// Rust types, not of the protocol: the schemas follow the spec. When Rust starts refusing one,
/// move it to `corpus/invalid/`.
#[test]
fn schema_is_stricter_than_rust_here() {
    let s = schemas();
    let close = envelope(
        "m",
        "ui.close",
        AGENT,
        json!({"instance_id": "w1", "reason": "done"}),
    );
    let with = |mut value: Value, pointer: &str, member: Value| {
        let (parent, key) = pointer.rsplit_once('/').unwrap();
        value.pointer_mut(parent).unwrap()[key] = member;
        value
    };
    let open = envelope(
        "m",
        "ui.open",
        AGENT,
        json!({"instance_id": "w1",
        "app": {"id": "com.example.w", "version": "1.0.0", "html": "", "css": "", "js": ""}}),
    );
    let call = envelope(
        "m",
        "app.call",
        AGENT,
        json!({"call_id": "c1", "capability": "app.open_url",
        "reason": "r", "expires_at": "2026-08-02T12:10:00Z", "arguments": {}}),
    );
    let error = envelope(
        "m",
        "client.error",
        CLIENT,
        json!({"in_reply_to": "m0", "code": "too_large", "message": "x"}),
    );
    let mut no_reply = error.clone();
    no_reply["payload"]
        .as_object_mut()
        .unwrap()
        .remove("in_reply_to");
    let cases: Vec<(&str, Value)> = vec![
        // R-ENV-1: target is optional, but when present it is {kind, id}.
        (
            "target is null",
            with(close.clone(), "/target", Value::Null),
        ),
        // R-UI-5: reason is a string.
        (
            "ui.close reason is null",
            with(close, "/payload/reason", Value::Null),
        ),
        // R-UI-2: integrity and name are strings when present.
        (
            "app.integrity is null",
            with(open.clone(), "/payload/app/integrity", Value::Null),
        ),
        (
            "app.name is null",
            with(open.clone(), "/payload/app/name", Value::Null),
        ),
        // R-UI-9: a member of the other form, even null, makes the app ambiguous.
        (
            "inline app with surface null",
            with(open, "/payload/app/surface", Value::Null),
        ),
        // R-CAP-4: RFC 3339's date-time has 'T' between date and time; Rust's parser takes any
        // single byte there.
        (
            "expires_at with a space separator",
            with(
                call.clone(),
                "/payload/expires_at",
                json!("2026-08-02 12:10:00Z"),
            ),
        ),
        (
            "expires_at with an x separator",
            with(call, "/payload/expires_at", json!("2026-08-02x12:10:00Z")),
        ),
        // R-ENV-5: in_reply_to is the id or null, never absent.
        ("client.error without in_reply_to", no_reply),
        (
            "client.error limit is null",
            with(error, "/payload/limit", Value::Null),
        ),
    ];
    let mut failures = Vec::new();
    for (name, value) in &cases {
        let schema = schema_verdict(&s.message, value);
        let rust = decode(&serde_json::to_vec(value).unwrap(), &Limits::default());
        if schema.is_ok() {
            failures.push(format!(
                "{name}: {} (expected REFUSES)",
                show_schema(&schema)
            ));
        }
        if rust.is_err() {
            failures.push(format!(
                "{name}: {}: Rust now refuses it; move it to corpus/invalid",
                show_rust(&rust)
            ));
        }
    }
    fail_on(failures, "schema-stricter");
}

#[test]
fn schema_enums_match_the_rust_types() {
    let s = schemas();
    let defs = &s.document("defs.json")["$defs"];
    let set = |value: &Value| -> BTreeSet<String> {
        value
            .as_array()
            .expect("an enum")
            .iter()
            .map(|v| v.as_str().expect("a string").to_owned())
            .collect()
    };

    let codes = set(&defs["errorCode"]["enum"]);
    assert_eq!(
        codes,
        error_codes_in_rust(),
        "defs.json errorCode vs ErrorCode::as_str"
    );
    for code in &codes {
        let parsed: ErrorCode = serde_json::from_value(json!(code)).unwrap();
        assert_eq!(parsed.as_str(), code);
    }

    let risks: BTreeSet<String> = ALL_RISKS.iter().map(wire).collect();
    assert_eq!(set(&defs["risk"]["enum"]), risks, "defs.json risk vs Risk");
    let statuses: BTreeSet<String> = ALL_STATUSES.iter().map(wire).collect();
    assert_eq!(
        set(&defs["status"]["enum"]),
        statuses,
        "defs.json status vs Status"
    );

    // R-MCP-6: the forwarded methods are the schema's, both ways.
    let forwarded: BTreeSet<String> = McpForwarded::ALL
        .iter()
        .map(|m| m.as_str().to_owned())
        .collect();
    let request = s.document("mcp.request.json");
    assert_eq!(
        set(&request["properties"]["payload"]["properties"]["method"]["enum"]),
        forwarded,
        "mcp.request.json method vs McpForwarded"
    );

    let types: BTreeSet<String> = Message::TYPES.iter().map(|(t, _)| t.to_string()).collect();
    let message = s.document("message.json");
    assert_eq!(
        set(&message["properties"]["type"]["enum"]),
        types,
        "message.json type enum"
    );
    let referenced: BTreeSet<String> = message["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            format!(
                "lineup.v1.{}",
                r["$ref"].as_str().unwrap().trim_end_matches(".json")
            )
        })
        .collect();
    assert_eq!(referenced, types, "message.json oneOf");
    for message_type in &types {
        let file = format!("{}.json", message_type.trim_start_matches("lineup.v1."));
        assert_eq!(
            s.document(&file)["properties"]["type"]["const"],
            json!(message_type),
            "schemas/{file} pins its type"
        );
    }
}

#[test]
fn every_schema_file_is_registered_and_documented() {
    let s = schemas();
    let on_disk: BTreeSet<String> = files(&repo_root().join("schemas"), ".json")
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    let listed: BTreeSet<String> = SCHEMA_FILES.iter().map(|f| f.to_string()).collect();
    assert_eq!(on_disk, listed, "schemas/*.json vs SCHEMA_FILES");
    for (name, doc) in &s.documents {
        for key in ["title", "description"] {
            assert!(
                doc[key].as_str().is_some_and(|t| !t.is_empty()),
                "schemas/{name} lacks a {key}"
            );
        }
        assert!(
            name == "defs.json" || doc["description"].as_str().unwrap().contains("R-"),
            "schemas/{name}: the description cites the rules it encodes"
        );
    }
}
