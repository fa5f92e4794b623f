//! The audit says everything and why (R-CAP-6), through `lineup host --stdio` and
//! `lineup audit export|verify`: every refused `app.call` (malformed, wrong sender, expired,
//! invalid arguments, a session-table limit) is a record with its error code and field, never
//! the refused payload; a flood of identical refusals is one record plus one counted record.
//!
//! Run with `xvfb-run -a cargo test -p lineup-cli --test audit_reasons`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr,
    missing_docs
)]

#[path = "support/stdio_host.rs"]
mod stdio_host;

use serde_json::{json, Value};
use stdio_host::{is, lineup, StdioHost};

fn call(conversation: &str, sender: &str, call_id: &str, payload_extra: Value) -> String {
    let mut payload = json!({"call_id": call_id, "capability": "test.count", "reason": "count",
                             "expires_at": "2099-01-01T00:00:00Z", "arguments": {"tag": call_id}});
    for (k, v) in payload_extra.as_object().unwrap() {
        payload[k] = v.clone();
    }
    json!({"v": 1, "id": format!("m-{call_id}"), "type": "lineup.v1.app.call",
           "conversation_id": conversation, "sender": {"kind": "agent", "id": sender},
           "payload": payload})
    .to_string()
}

#[test]
fn r_cap_6_every_refused_call_is_audited_with_its_reason_and_floods_are_counted() {
    assert!(
        std::env::var_os("DISPLAY").is_some_and(|d| !d.is_empty()),
        "run under `xvfb-run -a`"
    );
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let data = home.join("store");
    let data = data.to_str().unwrap();
    let count = home.join("count");
    let mut host = StdioHost::start(
        home,
        &[
            "--conversation",
            "c1",
            "--data-dir",
            data,
            "--agent-id",
            "a1",
            "--max-sessions",
            "1",
            "--dangerous-test-capability",
            count.to_str().unwrap(),
        ],
    );
    let secret = "SECRET-PAYLOAD-7f3a";
    let cases = [
        // (call_id, line, the code the audit must hold)
        (
            "malformed",
            call("c1", "a1", "malformed", json!({"arguments": 5})),
            "invalid_field",
        ),
        (
            "sender",
            call("c1", "mallory", "sender", json!({})),
            "wrong_sender",
        ),
        (
            "args",
            call(
                "c1",
                "a1",
                "args",
                json!({"arguments": {"tag": 5, "note": secret}}),
            ),
            "invalid_arguments",
        ),
        (
            "table",
            call("c2", "a1", "table", json!({})),
            "too_many_sessions",
        ),
    ];
    for (id, line, _) in &cases {
        host.send(line);
        host.expect(id, |v| {
            is("app.result")(v) && v["payload"]["call_id"] == *id
        });
    }
    // An expired deadline.
    host.send(&call(
        "c1",
        "a1",
        "late",
        json!({"expires_at": "2001-01-01T00:00:00Z"}),
    ));
    let late = host.expect("late", |v| {
        is("app.result")(v) && v["payload"]["call_id"] == "late"
    });
    assert_eq!(late["payload"]["status"], "expired", "{late}");
    // A flood of identical malformed calls.
    for i in 0..200 {
        host.send(&call(
            "c1",
            "a1",
            &format!("flood{i}"),
            json!({"arguments": 5}),
        ));
    }
    host.expect("the last flood answer", |v| {
        is("app.result")(v) && v["payload"]["call_id"] == "flood199"
    });
    host.stop();

    let export = lineup(home, &["audit", "export", "--data-dir", data]);
    let records: Vec<Value> = export
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        !export.contains(secret),
        "the refused payload is never kept"
    );
    for (id, _, code) in &cases {
        let found: Vec<&Value> = records
            .iter()
            .filter(|r| r["call_id"] == *id && r["code"] == *code)
            .collect();
        assert!(
            !found.is_empty(),
            "no record of {id} with code {code}: {export}"
        );
    }
    let args = records
        .iter()
        .find(|r| r["call_id"] == "args" && r["code"] == "invalid_arguments")
        .unwrap();
    assert_eq!(args["field"], "payload.arguments/tag", "{args}");
    assert!(
        records
            .iter()
            .any(|r| r["call_id"] == "late" && r["status"] == "expired"),
        "{export}"
    );
    // The flood (and the first malformed call, of the same kind) is two records: the first,
    // and one counting the rest.
    let flood: Vec<&Value> = records
        .iter()
        .filter(|r| r["kind"] == "refused" && r["code"] == "invalid_field")
        .collect();
    assert_eq!(flood.len(), 2, "{flood:#?}");
    assert_eq!(flood[1]["count"], 200, "{flood:#?}");
    lineup(home, &["audit", "verify", "--data-dir", data]);
}
