//! Call records belong to the identity that made them (R-CAP-5, R-SES-1), through real
//! `lineup host --stdio` processes on one data directory: another vouched agent replaying a
//! `call_id` gets a call of its own, never the first agent's result; an unvouched session of
//! another process gets `call_id_reused` and nothing runs; the first agent still gets its
//! stored result.
//!
//! Run with `xvfb-run -a cargo test -p lineup-cli --test call_owners`.
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
use stdio_host::{envelope, is, StdioHost};

fn replay(host: &mut StdioHost, sender: &str) -> Value {
    let line = envelope(
        "m1",
        "app.call",
        json!({"call_id": "call_01", "capability": "test.count", "reason": "count",
               "expires_at": "2099-01-01T00:00:00Z", "arguments": {"tag": "call_01"}}),
    )
    .replace(r#""id":"a1""#, &format!(r#""id":"{sender}""#));
    host.send(&line);
    host.expect("call_01's result", |v| {
        is("app.result")(v) && v["payload"]["call_id"] == "call_01"
    })["payload"]
        .clone()
}

#[test]
fn r_cap_5_a_replayed_call_id_never_hands_one_agents_result_to_another() {
    assert!(
        std::env::var_os("DISPLAY").is_some_and(|d| !d.is_empty()),
        "run under `xvfb-run -a`"
    );
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let data = home.join("store");
    let data = data.to_str().unwrap();
    let count = home.join("count");
    let runs = || {
        std::fs::read_to_string(&count)
            .unwrap_or_default()
            .lines()
            .count()
    };
    let host = |agent: Option<&str>| {
        let mut args = vec![
            "--conversation",
            "c1",
            "--data-dir",
            data,
            "--dangerous-test-capability",
            count.to_str().unwrap(),
        ];
        if let Some(agent) = agent {
            args.extend(["--agent-id", agent]);
        }
        StdioHost::start(home, &args)
    };
    // alice's call runs once.
    let mut alice = host(Some("alice"));
    let first = replay(&mut alice, "alice");
    assert_eq!(first["status"], "completed", "{first}");
    assert_eq!(runs(), 1);
    alice.stop();

    // mallory, another vouched agent in another process, replays the key: a call of its own,
    // run with its own record; never alice's stored result handed over without a decision.
    let mut mallory = host(Some("mallory"));
    let theirs = replay(&mut mallory, "mallory");
    assert_eq!(theirs["status"], "completed", "{theirs}");
    assert_eq!(runs(), 2, "mallory's call ran as a new call");
    mallory.stop();

    // An unvouched session of another process: `call_id_reused`, nothing runs, no result.
    let mut nobody = host(None);
    let reused = replay(&mut nobody, "a1");
    assert_eq!(reused["status"], "failed", "{reused}");
    assert_eq!(reused["error"]["code"], "call_id_reused", "{reused}");
    assert!(reused.get("result").is_none(), "{reused}");
    assert_eq!(runs(), 2);
    nobody.stop();

    // alice again: her stored result, and nothing runs.
    let mut alice = host(Some("alice"));
    let again = replay(&mut alice, "alice");
    assert_eq!(again, first);
    assert_eq!(runs(), 2);
}
