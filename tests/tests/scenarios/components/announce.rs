//! R-STD-12's announcements, read back from the page: a box announces through one polite live
//! region of its own, at most once per 2 s with the last change waiting its turn (30 status
//! changes in 1.5 s make at most two announcements, the last one said after the wait), a
//! progress only at each quarter reached, and nothing at all with `announce: false`.

use std::time::Duration;

use lineup_host::{ComponentSnapshot, ComponentWindow};
use lineup_host_core::{ComponentKind, JsonObject};
use lineup_tests::ensure;
use lineup_tests::runner::Outcome;
use lineup_tests::view_harness::Harness;
use lineup_tests::x11::X11;
use serde_json::{json, Value};

use super::{close, mapped, read, recorded, sample};

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

/// Patches `window` with each of `states`, `every` apart.
fn patch(h: &mut Harness, window: &ComponentWindow, states: &[Value], every: Duration) {
    for state in states {
        let state = JsonObject::try_from(state.clone()).unwrap_or_default();
        window.update(&state, None, false);
        h.settle(every);
    }
}

pub(super) fn throttled(h: &mut Harness, x: &X11) -> Outcome {
    let titles: Vec<Value> = (1..=30)
        .map(|i| json!({"status": "in_progress", "title": format!("Step {i}")}))
        .collect();
    for quiet in [false, true] {
        let props = if quiet {
            json!({"announce": false})
        } else {
            json!({})
        };
        let content = sample(
            ComponentKind::Status,
            props,
            json!({"status": "pending", "title": "Step 0"}),
            None,
        );
        let (window, _) = recorded(h, &content)?;
        let xid = mapped(h, x, ComponentKind::Status)?;
        patch(h, &window, &titles, Duration::from_millis(50));
        let during = announced(&read(h, &window)?)?;
        h.settle(Duration::from_millis(2300));
        let after = read(h, &window)?;
        if quiet {
            ensure!(
                announced(&after)? == 0,
                "announce: false announced {}",
                announced(&after)?
            );
        } else {
            ensure!(
                (1..=2).contains(&during),
                "30 changes in 1.5 s made {during} announcements"
            );
            ensure!(
                announced(&after)? <= during + 1 && after.text.contains("In progress: Step 30"),
                "the last change was not said after the wait: {} announcements",
                announced(&after)?
            );
        }
        close(h, x, window, xid);
    }

    // A progress: once per quarter reached, whatever the number of values in between.
    let content = sample(
        ComponentKind::Progress,
        json!({"label": "Upload"}),
        json!({"value": 0}),
        None,
    );
    let (window, _) = recorded(h, &content)?;
    let xid = mapped(h, x, ComponentKind::Progress)?;
    let values: Vec<Value> = (0..=100).map(|v| json!({"value": v})).collect();
    patch(h, &window, &values[..30], Duration::from_millis(100));
    let quarter = announced(&read(h, &window)?)?;
    ensure!(
        quarter <= 2,
        "a progress from 0 to 29 % made {quarter} announcements"
    );
    close(h, x, window, xid);
    Ok(())
}
