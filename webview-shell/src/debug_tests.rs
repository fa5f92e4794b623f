//! Logs reach journald (#7 item 7): `Debug` of a state script waiting for the page and of what
//! the consent prompt showed shows a length and a digest, never the text in any form.

use std::collections::BTreeMap;

use lineup_host_core::leaked_form;

use crate::delivery::DeliveryQueue;
use crate::prompt::PromptSnapshot;

const SECRET: &str = "zQ7\"secret-shell-Ω";

#[test]
fn debug_of_a_waiting_state_shows_a_fingerprint() {
    let mut deliveries = DeliveryQueue::default();
    let script = format!(
        "deliver({})",
        serde_json::to_string(SECRET).unwrap_or_default()
    );
    assert!(deliveries.offer(script.clone()).is_some());
    assert!(deliveries.offer(script).is_none(), "the second one waits");
    for shown in [format!("{deliveries:?}"), format!("{deliveries:#?}")] {
        assert!(shown.contains("bytes: "), "a length is shown: {shown}");
        assert_eq!(
            leaked_form(&shown, SECRET),
            None,
            "Debug printed the secret: {shown}"
        );
    }
}

#[test]
fn debug_of_a_prompt_snapshot_shows_a_fingerprint() {
    let snapshot = PromptSnapshot {
        text: BTreeMap::from([("reason".to_owned(), SECRET.to_owned())]),
        arguments: vec![(SECRET.to_owned(), SECRET.to_owned())],
        ..PromptSnapshot::default()
    };
    for shown in [format!("{snapshot:?}"), format!("{snapshot:#?}")] {
        assert!(shown.contains("bytes: "), "a length is shown: {shown}");
        assert_eq!(
            leaked_form(&shown, SECRET),
            None,
            "Debug printed the secret: {shown}"
        );
    }
    // What is not the agent's stays readable.
    assert!(format!("{snapshot:?}").contains("\"reason\""));
}
