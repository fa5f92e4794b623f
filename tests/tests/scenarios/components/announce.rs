//! R-STD-12's announcements, read back from the page: a box announces through one polite live
//! region of its own, at most once per 2 s with the last change waiting its turn (30 status
//! changes in 1.5 s make at most two announcements, the last one said after the wait), a
//! progress only at each quarter reached (0 to 29 % ends announcing 25 %, not 29 %), and nothing
//! at all with `announce: false`. The three are boxes of one board, patched together.

use std::time::Duration;

use lineup_host::platform::{ComponentBoard, ComponentWindow};
use lineup_host::{ComponentOptions, ComponentSnapshot};
use lineup_host_core::{ComponentKind, JsonObject};
use lineup_tests::ensure;
use lineup_tests::runner::{Outcome, WAIT};
use lineup_tests::view_harness::Harness;
use lineup_tests::x11::X11;
use serde_json::{json, Value};

use super::{read, sample};

/// How many announcements the box made so far.
fn announced(snapshot: &ComponentSnapshot) -> Result<u32, String> {
    snapshot
        .elements
        .iter()
        .find(|e| e.attributes.get("class").map(String::as_str) == Some("announcer"))
        .and_then(|e| e.attributes.get("data-announced"))
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| "no announcer in the box".to_owned())
}

fn state(value: Value) -> JsonObject {
    JsonObject::try_from(value).unwrap_or_default()
}

pub(super) fn throttled(h: &mut Harness, _x: &X11) -> Outcome {
    let options = ComponentOptions::new();
    let board = ComponentBoard::window(&h.event_loop, None, &options).map_err(|e| e.to_string())?;
    let contents = [
        sample(
            ComponentKind::Status,
            json!({}),
            json!({"status": "pending", "title": "Step 0"}),
            None,
        ),
        sample(
            ComponentKind::Status,
            json!({"announce": false}),
            json!({"status": "pending", "title": "Step 0"}),
            None,
        ),
        sample(
            ComponentKind::Progress,
            json!({"label": "Upload"}),
            json!({"value": 0}),
            None,
        ),
    ];
    let mut boxes = Vec::new();
    for content in &contents {
        boxes.push(
            ComponentWindow::in_board(&h.event_loop, &board, content, &options, |_| {})
                .map_err(|e| e.to_string())?,
        );
    }
    ensure!(
        h.wait_for(WAIT, || boxes.iter().all(ComponentWindow::is_shown)),
        "the boxes were never shown"
    );
    let (loud, quiet, progress) = (&boxes[0], &boxes[1], &boxes[2]);
    for i in 1..=30 {
        let title = json!({"status": "in_progress", "title": format!("Step {i}")});
        loud.update(&state(title.clone()), None, false);
        quiet.update(&state(title), None, false);
        progress.update(&state(json!({ "value": i - 1 })), None, false);
        h.settle(Duration::from_millis(50));
    }
    let during = announced(&read(h, loud)?)?;
    ensure!(
        (1..=2).contains(&during),
        "30 changes in 1.5 s made {during} announcements"
    );
    h.settle(Duration::from_millis(2300));
    let after = read(h, loud)?;
    ensure!(
        announced(&after)? <= during + 1 && after.text.contains("In progress: Step 30"),
        "the last change was not said after the wait: {} announcements",
        announced(&after)?
    );
    let silent = announced(&read(h, quiet)?)?;
    ensure!(silent == 0, "announce: false announced {silent}");
    let bar = read(h, progress)?;
    ensure!(
        bar.text.contains("Upload: 25%") && !bar.text.contains("29%") && announced(&bar)? <= 2,
        "a progress from 0 to 29 % announced {} times, last {:?}",
        announced(&bar)?,
        bar.text
    );
    drop(boxes);
    drop(board);
    h.settle(Duration::from_millis(200));
    Ok(())
}
