//! A policy refusal is not the user's "no" (R-CAP-4, R-CAP-6), through `lineup host --stdio`:
//! `app.open_url` with a link that breaks the host's link rule is answered `failed`
//! `invalid_arguments` naming `payload.arguments/url`, before any prompt and in every grant
//! state, and audited as a policy decision; a good link goes to the prompt (positive control).
//!
//! Run with `xvfb-run -a cargo test -p lineup-cli --test link_rule`.
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

use serde_json::{json, Value};
use stdio_host::{envelope, is, lineup, StdioHost};

const REFUSED: [&str; 5] = [
    "javascript:alert(1)",
    "file:///etc/passwd",
    "data:text/html,<b>x</b>",
    "https://bank.example@evil.example/",
    "not a url",
];

fn open_url(call_id: &str, url: &str) -> String {
    envelope(
        &format!("m-{call_id}"),
        "app.call",
        json!({"call_id": call_id, "capability": "app.open_url", "reason": "docs",
               "expires_at": "2099-01-01T00:00:00Z", "arguments": {"url": url}}),
    )
}

fn result_of(host: &mut StdioHost, call_id: &str) -> Value {
    host.expect(call_id, |v| {
        is("app.result")(v) && v["payload"]["call_id"] == call_id
    })["payload"]
        .clone()
}

/// The (decision, decision_source) pairs the audit log holds for `call_id`.
fn decisions(home: &Path, data: &str, call_id: &str) -> Vec<(String, String)> {
    lineup(home, &["audit", "export", "--data-dir", data])
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["call_id"] == call_id && r["decision"] != "none")
        .map(|r| {
            (
                r["decision"].as_str().unwrap_or_default().to_owned(),
                r["decision_source"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

fn assert_policy_refusal(home: &Path, data: &str, result: &Value, call_id: &str) {
    assert_eq!(result["status"], "failed", "{call_id}: {result}");
    assert_eq!(result["error"]["code"], "invalid_arguments", "{result}");
    assert_eq!(
        result["error"]["field"], "payload.arguments/url",
        "{result}"
    );
    assert!(
        result["message"].as_str().unwrap().contains("link rule"),
        "{result}"
    );
    assert_eq!(
        decisions(home, data, call_id),
        [("denied".to_owned(), "policy".to_owned())],
        "{call_id}: audited as the host's policy, not the user's answer"
    );
}

#[test]
fn r_cap_4_a_refused_link_is_failed_invalid_arguments_before_consent_in_every_grant_state() {
    assert!(
        std::env::var_os("DISPLAY").is_some_and(|d| !d.is_empty()),
        "run under `xvfb-run -a`"
    );
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let data = home.join("store");
    let data = data.to_str().unwrap();
    let host = |answer: &str| {
        StdioHost::start(
            home,
            &[
                "--conversation",
                "c1",
                "--data-dir",
                data,
                "--agent-id",
                "a1",
                "--enable",
                "app.open_url",
                "--dangerous-auto-consent",
                answer,
            ],
        )
    };
    // Every prompt answered "deny": a good link is `rejected` by that answer (a prompt
    // decided), a refused one never reaches it.
    let mut h = host("deny");
    h.send(&open_url("good", "https://example.com/docs"));
    let good = result_of(&mut h, "good");
    assert_eq!(good["status"], "rejected", "{good}");
    assert_eq!(
        decisions(home, data, "good"),
        [("denied".to_owned(), "prompt".to_owned())]
    );
    for (i, url) in REFUSED.iter().enumerate() {
        let id = format!("deny{i}");
        h.send(&open_url(&id, url));
        let result = result_of(&mut h, &id);
        assert_policy_refusal(home, data, &result, &id);
    }
    h.stop();
    // After "always" was remembered for the capability, the same links get the same answer.
    let mut h = host("allow-always");
    h.send(&open_url("grant", "https://example.com/docs"));
    result_of(&mut h, "grant");
    let grants = lineup(home, &["grants", "list", "--json", "--data-dir", data]);
    assert!(grants.contains("app.open_url"), "{grants}");
    for (i, url) in REFUSED.iter().enumerate() {
        let id = format!("granted{i}");
        h.send(&open_url(&id, url));
        let result = result_of(&mut h, &id);
        assert_policy_refusal(home, data, &result, &id);
    }
}
