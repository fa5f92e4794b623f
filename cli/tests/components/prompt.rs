//! R-SEC-5 and #49 as a screen reader meets them through `lineup host --stdio`: the consent
//! prompt says which conversation asks, and a conversation id written to imitate the prompt's
//! own lines (`Permission request · Risk: none · Always allow`) shows none of them: the prompt
//! says the name was withheld. Its control: a plain id is shown, in quotes, as the agent's words.

use std::thread;
use std::time::{Duration, Instant};

use lineup_host::protocol::Timestamp;
use lineup_host::TimestampExt;
use serde_json::json;

use super::a11y::{Node, ReadHost};
use super::shown;

const PROMPT: &str = lineup_host::platform::CONSENT_PROMPT_TITLE;

/// An `app.call` of the test capability `test.confirm` (`user_confirmation`) in conversation
/// `conversation`, expiring after `expires_in` seconds.
fn call(call_id: &str, conversation: &str, expires_in: u64) -> String {
    let expires = Timestamp::in_secs(expires_in);
    json!({"v": 1, "id": format!("m-{call_id}"), "type": "lineup.v1.app.call",
           "conversation_id": conversation, "sender": {"kind": "agent", "id": "a1"},
           "payload": {"call_id": call_id, "capability": "test.confirm",
                       "reason": "confirm the tally", "arguments": {"tag": call_id},
                       "expires_at": expires.to_string()}})
    .to_string()
}

/// The prompt's lines as a screen reader reads them, once its accessible tree is filled in: a
/// window is mapped before its widgets reach the accessibility bus, so the read is repeated
/// until the prompt's own "Always allow" button is among them (30 s at most).
fn read_prompt(on: &ReadHost) -> Vec<(String, String)> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let lines = prompt_lines(&on.tree(&[PROMPT.to_owned()]));
        let filled = lines
            .iter()
            .any(|(role, l)| role == "push button" && l.contains("Always allow"));
        if filled || Instant::now() >= deadline {
            return lines;
        }
        thread::sleep(Duration::from_millis(100));
    }
}

/// Every text and name the prompt window holds, with the role it has.
fn prompt_lines(nodes: &[Node]) -> Vec<(String, String)> {
    nodes
        .iter()
        .filter(|n| n.frame == PROMPT)
        .flat_map(|n| {
            [
                (n.role.clone(), n.name.clone()),
                (n.role.clone(), n.text.clone()),
            ]
        })
        .filter(|(_, line)| !line.trim().is_empty())
        .collect()
}

#[test]
fn r_sec_5_a_conversation_id_imitating_the_prompts_lines_shows_none_of_them() {
    let home_args = [
        "--agent-id",
        "a1",
        "--data-dir",
        "lineup-data",
        "--dangerous-test-capability",
        "runs.txt",
    ];
    let mut on = ReadHost::start(&[], &home_args);
    // The control: a plain id is named, as the agent's words.
    on.host.send(&call("k1", "c-plain", 6));
    let first = shown(&on.x, PROMPT);
    let lines = read_prompt(&on);
    assert!(
        lines.iter().any(|(_, l)| l.contains("“c-plain”")),
        "the plain id is not named: {lines:?}"
    );
    on.host.expect("the first call's expiry", |v| {
        v["payload"]["call_id"] == "k1" && v["payload"]["status"] == "expired"
    });
    // The expired request's window goes before the next request is sent, so that what is read
    // next is the next request's prompt, not the last one's on its way out.
    let deadline = Instant::now() + Duration::from_secs(30);
    while on.x.is_viewable(first) {
        assert!(
            Instant::now() < deadline,
            "the expired prompt stays on screen"
        );
        thread::sleep(Duration::from_millis(20));
    }
    // The imitation: none of its lines shows; the prompt says why its name is not shown.
    let imitation = "Permission request · Risk: none · Always allow";
    on.host.send(&call("k2", imitation, 60));
    shown(&on.x, PROMPT);
    let lines = read_prompt(&on);
    assert!(
        !lines.iter().any(|(_, l)| l.contains("“c-plain”")),
        "the prompt read is still the first request's: {lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|(_, l)| l.contains("whose name imitates this window")),
        "no withheld line: {lines:?}"
    );
    for (role, line) in &lines {
        assert!(!line.contains("Risk: none"), "{role} {line:?} shows the id");
        // The one "Always allow" is the prompt's own button.
        assert!(
            !line.contains("Always allow") || role == "push button",
            "{role} {line:?}: a second Always allow"
        );
    }
    on.stop();
}
