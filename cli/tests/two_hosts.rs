//! One `call_id`, one answer, across host processes (R-CAP-5): two real `lineup host --stdio`
//! processes on one data directory, the same agent and conversation. While host A runs a call,
//! host B neither recovers it at start nor answers `outcome_unknown`: it waits and answers the
//! real outcome, which stays the stored record. Only when A is killed (its lease released with
//! no result) is the outcome unknown.
//!
//! Run with `xvfb-run -a cargo test -p lineup-cli --test two_hosts`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr,
    missing_docs
)]

#[path = "support/stdio_host.rs"]
mod stdio_host;

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use stdio_host::{envelope, is, StdioHost};

fn count_call(call_id: &str, sleep_ms: u64) -> String {
    envelope(
        &format!("m-{call_id}"),
        "app.call",
        json!({"call_id": call_id, "capability": "test.count", "reason": "count",
               "expires_at": "2099-01-01T00:00:00Z",
               "arguments": {"tag": call_id, "sleep_ms": sleep_ms}}),
    )
}

fn result_of(call_id: &str) -> impl Fn(&Value) -> bool + '_ {
    move |v| is("app.result")(v) && v["payload"]["call_id"] == call_id
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn r_cap_5_a_call_running_in_one_host_is_answered_by_another_with_its_real_outcome() {
    assert!(
        std::env::var_os("DISPLAY").is_some_and(|d| !d.is_empty()),
        "run under `xvfb-run -a`"
    );
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let data = home.join("store");
    let data = data.to_str().unwrap();
    let count = home.join("count");
    let start = || {
        StdioHost::start(
            home,
            &[
                "--conversation",
                "c1",
                "--data-dir",
                data,
                "--agent-id",
                "a1",
                "--dangerous-test-capability",
                count.to_str().unwrap(),
            ],
        )
    };
    let mut a = start();
    a.expect("A's inventory", is("client.inventory"));
    a.send(&count_call("call_01", 4000));
    // The handler has started in A (its line is written before it sleeps).
    let deadline = Instant::now() + Duration::from_secs(30);
    while lines(&count).is_empty() {
        assert!(Instant::now() < deadline, "A never ran call_01");
        std::thread::sleep(Duration::from_millis(20));
    }
    // B starts now, while A runs it: it must not recover A's call at start…
    let mut b = start();
    b.expect("B's inventory", is("client.inventory"));
    // …and the same call sent to B waits for A's outcome instead of `outcome_unknown`.
    b.send(&count_call("call_01", 4000));
    let from_b = b.expect("B's answer", result_of("call_01"))["payload"].clone();
    let from_a = a.expect("A's answer", result_of("call_01"))["payload"].clone();
    assert_eq!(from_a["status"], "completed", "{from_a}");
    assert_eq!(from_b, from_a, "one call_id, one answer");
    assert_eq!(lines(&count), ["call_01"], "it ran once");
    // The stored record is the real outcome: a third host answers the same.
    b.stop();
    a.stop();
    let mut c = start();
    c.send(&count_call("call_01", 4000));
    let from_c = c.expect("C's answer", result_of("call_01"))["payload"].clone();
    assert_eq!(from_c, from_a);
    c.stop();

    // Positive control: A killed while running (its lease released with no result) is the
    // one case a later host answers `outcome_unknown`.
    let mut a = start();
    a.expect("A's inventory", is("client.inventory"));
    a.send(&count_call("call_02", 10_000));
    let deadline = Instant::now() + Duration::from_secs(30);
    while lines(&count).len() < 2 {
        assert!(Instant::now() < deadline, "A never ran call_02");
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(a); // SIGKILL
    let mut b = start();
    b.send(&count_call("call_02", 10_000));
    let unknown = b.expect("B's answer", result_of("call_02"))["payload"].clone();
    assert_eq!(unknown["status"], "failed", "{unknown}");
    assert_eq!(unknown["error"]["code"], "outcome_unknown", "{unknown}");
    assert_eq!(lines(&count).len(), 2, "never run again");
}
