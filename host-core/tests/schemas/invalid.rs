//! The invalid corpus, and refusals only the Rust types make.

use super::*;

/// One row of `corpus/invalid/*.jsonl`.
struct Row {
    at: String,
    rule: String,
    kind: Kind,
    message: Value,
}

fn invalid_rows() -> Vec<Row> {
    let mut rows = Vec::new();
    for path in files(&corpus_dir("invalid"), ".jsonl") {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let kind = if file.starts_with("bridge") {
            Kind::Bridge
        } else {
            Kind::Envelope
        };
        for (i, line) in fs::read_to_string(&path).unwrap().lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let row: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("invalid/{file}:{}: {e}", i + 1));
            let rule = row["rule"].as_str().unwrap_or_default().to_owned();
            let reason = row["reason"].as_str().unwrap_or_default();
            assert!(
                rule.starts_with("R-") && !reason.is_empty(),
                "invalid/{file}:{}: each row has a rule and a reason",
                i + 1
            );
            rows.push(Row {
                at: format!("invalid/{file}:{} ({rule}: {reason})", i + 1),
                rule,
                kind,
                message: row["message"].clone(),
            });
        }
    }
    rows
}

/// A field path as the Rust decoder names it (`payload.capabilities[0].risk`), as a JSON pointer.
fn pointer(field: &str) -> String {
    field
        .split(['.', '['])
        .map(|segment| format!("/{}", segment.trim_end_matches(']')))
        .collect()
}

/// Whether the schema error at `schema_at` and the Rust refusal of `rust_at` (JSON pointers) are
/// about the same member: equal, or one inside the other. The document root counts only for a
/// top-level member, since a root error is how a schema reports a missing member.
fn same_place(schema_at: &str, rust_at: &str) -> bool {
    if schema_at.is_empty() {
        return rust_at.matches('/').count() == 1;
    }
    schema_at == rust_at
        || rust_at.starts_with(&format!("{schema_at}/"))
        || schema_at.starts_with(&format!("{rust_at}/"))
}

#[test]
fn invalid_corpus_is_refused_by_the_schemas_and_the_rust_types() {
    let s = schemas();
    let rows = invalid_rows();
    assert!(rows.len() > 100, "{} invalid rows", rows.len());
    let mut failures = Vec::new();
    for row in &rows {
        let bytes = serde_json::to_vec(&row.message).unwrap();
        // The schema that names the member at fault: the one of the message's own type when it
        // has one (message.json reports a failed `oneOf` at the root).
        let precise = match row.kind {
            Kind::Bridge => &s.bridge,
            Kind::Envelope => row.message["type"]
                .as_str()
                .and_then(|t| s.for_type(t))
                .unwrap_or(&s.message),
        };
        let (schema, rust) = match row.kind {
            Kind::Envelope => {
                let rust = decode(&bytes, &Limits::default());
                // R-ENV-6: a bare fragment is refused naming the first missing field.
                if row.rule == "R-ENV-6" {
                    if let Err(e) = &rust {
                        if e.field.as_deref() != Some("v") {
                            failures.push(format!("{}: names field {:?}, not v", row.at, e.field));
                        }
                    }
                }
                (schema_verdict(&s.message, &row.message), rust.err())
            }
            Kind::Bridge => {
                let text = String::from_utf8(bytes).unwrap();
                let rust = BridgeMessage::decode(&text, &Limits::default());
                (schema_verdict(&s.bridge, &row.message), rust.err())
            }
        };
        if schema.is_ok() || rust.is_none() {
            failures.push(format!(
                "{}: {} / {}",
                row.at,
                show_schema(&schema),
                show_refusal(rust.as_ref())
            ));
            continue;
        }
        // Both refuse; they must also agree on which member is at fault.
        if let Some(field) = rust.as_ref().and_then(|e| e.field.as_deref()) {
            let rust_at = pointer(field);
            let schema_at: Vec<String> = precise
                .iter_errors(&row.message)
                .map(|e| e.instance_path().to_string())
                .collect();
            if !schema_at.iter().any(|at| same_place(at, &rust_at)) {
                failures.push(format!(
                    "{}: both refuse, but the schema blames {schema_at:?} and rust {rust_at:?}",
                    row.at
                ));
            }
        }
    }
    fail_on(failures, "invalid-corpus");
}

/// Parses `text` into the value the schema sees; duplicate keys keep the last.
fn lenient(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

/// The raw text of a minimal envelope of `message_type` whose payload is the raw `payload`, with
/// `v` written as `v`: for inputs a `Value` cannot carry (duplicate keys, `1.0`).
fn raw_envelope(v: &str, message_type: &str, payload: &str) -> String {
    format!(r#"{{"v":{v},"id":"m","type":"lineup.v1.{message_type}","conversation_id":"c","#)
        + &format!(r#""sender":{{"kind":"agent","id":"a"}},"payload":{payload}}}"#)
}

/// Refusals only the Rust decoder can make. The schema sees a parsed value, so it cannot see
/// duplicate keys, nesting depth, byte sizes, sums over several strings, the HTML Standard's
/// script-data states or the difference between `1` and `1.0`; each row checks that the schema does accept the message (the gap is real and
/// listed in `schemas/README.md`) and that Rust refuses it with the expected code.
#[test]
fn rust_only_refusals() {
    let s = schemas();
    let limits = Limits::default();
    let close = r#"{"instance_id":"w1"}"#;
    let open = |app: Value| {
        envelope(
            "m",
            "ui.open",
            AGENT,
            json!({"instance_id": "w1", "app": app}),
        )
    };
    let cases: Vec<(&str, String, ErrorCode)> =
        vec![
        (
            "duplicate key in the envelope",
            raw_envelope("1", "ui.close", close).replace(r#""id":"m""#, r#""id":"m","id":"m2""#),
            ErrorCode::InvalidJson,
        ),
        (
            "duplicate key inside state",
            raw_envelope("1", "ui.patch", r#"{"instance_id":"w1","state":{"a":1,"a":2}}"#),
            ErrorCode::InvalidJson,
        ),
        (
            "nesting depth 33, one over the limit",
            envelope("m", "ui.patch", AGENT, json!({"instance_id": "w1", "state": nested(31)}))
                .to_string(),
            ErrorCode::TooDeep,
        ),
        (
            "envelope over 1 MiB",
            envelope(
                "m",
                "ui.patch",
                AGENT,
                json!({"instance_id": "w1", "state": {"s": "x".repeat(limits.max_envelope_bytes)}}),
            )
            .to_string(),
            ErrorCode::TooLarge,
        ),
        (
            "bundle one byte over 160 KiB, counted in UTF-8 bytes across html, css and js",
            open(json!({"id": "com.example.w", "version": "1.0.0",
                "html": "x".repeat(limits.max_bundle_bytes - 1), "css": "é", "js": ""}))
            .to_string(),
            ErrorCode::BundleTooLarge,
        ),
        (
            "js with a <!-- followed by <script and no --> after it (script-data states)",
            open(json!({"id": "com.example.w", "version": "1.0.0",
                "html": "", "css": "", "js": "x = '<!--<script>'"}))
            .to_string(),
            ErrorCode::InvalidField,
        ),
        ("v written 1.0", raw_envelope("1.0", "ui.close", close), ErrorCode::UnsupportedVersion),
        ("v written 1e0", raw_envelope("1e0", "ui.close", close), ErrorCode::UnsupportedVersion),
        (
            "client.error limit written 5.0",
            raw_envelope(
                "1",
                "client.error",
                r#"{"in_reply_to":null,"code":"too_large","message":"x","limit":5.0}"#,
            ),
            ErrorCode::InvalidField,
        ),
        (
            "app.version major beyond u64",
            open(json!({"id": "com.example.w", "version": "18446744073709551616.0.0",
                "surface": "s"}))
            .to_string(),
            ErrorCode::InvalidField,
        ),
        // R-MCP-3: the tool's _meta names another view than the resource (across members).
        (
            "mcp_app tool meta naming another resource",
            envelope("m", "ui.open", AGENT, json!({"instance_id": "v1", "mcp_app": {
                "server": "s", "resource": {"uri": "ui://a/view.html",
                    "mime_type": "text/html;profile=mcp-app", "text": ""},
                "tool": {"name": "t", "meta": {"ui": {"resourceUri": "ui://b/view.html"}},
                    "call_id": 1}}}))
            .to_string(),
            ErrorCode::InvalidField,
        ),
        // R-MCP-3: 2048 characters, but more than 2048 bytes of UTF-8.
        (
            "mcp_app resource uri of 2048 characters and 2050 bytes",
            envelope("m", "ui.open", AGENT, json!({"instance_id": "v1", "mcp_app": {
                "server": "s", "resource": {"uri": format!("ui://{}éé", "a".repeat(2041)),
                    "mime_type": "text/html;profile=mcp-app", "text": ""},
                "tool": {"name": "t", "meta": {"ui/resourceUri": format!("ui://{}éé", "a".repeat(2041))},
                    "call_id": 1}}}))
            .to_string(),
            ErrorCode::InvalidField,
        ),
        (
            "expires_at a leap second that is not at the end of a month",
            envelope("m", "app.call", AGENT, json!({"call_id": "c1", "capability": "a",
                "reason": "", "expires_at": "2026-08-02T23:59:60Z", "arguments": {}}))
            .to_string(),
            ErrorCode::InvalidField,
        ),
    ];
    let mut failures = Vec::new();
    for (name, text, code) in &cases {
        let schema = schema_verdict(&s.message, &lenient(text));
        let rust = decode(text.as_bytes(), &limits);
        let refused_as_expected = matches!(&rust, Err(e) if e.code == *code);
        if schema.is_err() || !refused_as_expected {
            failures.push(format!(
                "{name}: {} / {} (expected schema ACCEPTS / rust REFUSES with {code})",
                show_schema(&schema),
                show_rust(&rust)
            ));
        }
    }

    let bridge = |event: &str, data: Value| {
        json!({"namespace": NAMESPACE, "type": "event", "event": event, "data": data}).to_string()
    };
    let data_at_limit = "d".repeat(limits.max_event_data_bytes - r#"{"s":""}"#.len());
    let padding = "p".repeat(limits.max_bridge_message_bytes);
    let bridge_cases: Vec<(&str, String)> = vec![
        (
            "bridge event data of exactly 16 KiB of JSON (must be smaller)",
            bridge("big", json!({ "s": data_at_limit })),
        ),
        (
            "bridge message over 20 KiB",
            json!({"namespace": NAMESPACE, "type": "ready",
                   "document": "0123456789abcdef0123456789abcdef", "pad": padding})
            .to_string(),
        ),
        (
            "bridge duplicate key",
            bridge("a", json!({})).replace(r#""event":"a""#, r#""event":"a","event":"b""#),
        ),
        ("bridge nesting depth 33", bridge("deep", nested(32))),
    ];
    for (name, text) in &bridge_cases {
        let schema = schema_verdict(&s.bridge, &lenient(text));
        let rust = BridgeMessage::decode(text, &limits);
        let refused_as_expected =
            matches!(&rust, Err(e) if e.code == ErrorCode::InvalidBridgeMessage);
        if schema.is_err() || !refused_as_expected {
            failures.push(format!(
                "{name}: {} / {} (expected schema ACCEPTS / rust REFUSES)",
                show_schema(&schema),
                show_rust(&rust)
            ));
        }
    }
    fail_on(failures, "rust-only");
}
