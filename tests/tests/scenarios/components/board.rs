//! R-STD-8 (a), (b) where instances share one trusted view (§4 of standard-components.md): the
//! boxes of one board are in one web process; a real click answers only the box under it in the
//! layout the host last drew; a box that moved because another above it grew restarts its own
//! guard, so a click on it at its new place inside the guard is dropped (the same click after the
//! guard answers: the positive control); a hidden board takes no click, and showing it again
//! restarts the guards.

use std::time::Duration;

use lineup_host::platform::{ComponentAction, ComponentBoard, ComponentProcess, ComponentWindow};
use lineup_host::tao::dpi::LogicalSize;
use lineup_host::tao::window::WindowBuilder;
use lineup_host::{ComponentOptions, Rect};
use lineup_host_core::{parse_markdown, ComponentKind, JsonObject, LinkPolicy};
use lineup_tests::ensure;
use lineup_tests::runner::{Outcome, WAIT};
use lineup_tests::view_harness::Harness;
use lineup_tests::x11::{xid_of, X11};
use serde_json::json;

use super::{read, sample, Reported};

/// The guard delay of this board: long enough that a click made right after a move is inside
/// it on a loaded machine.
const GUARD: Duration = Duration::from_secs(2);

/// Whether `reported` holds a `Submit` of `true`.
fn submitted(reported: &Reported) -> bool {
    reported.borrow().iter().any(|a| {
        matches!(a, ComponentAction::Submit { answer, .. } if answer == &serde_json::Value::Bool(true))
    })
}

/// The centre of `window`'s confirm button in the screen's coordinates, for a board at `area`
/// of a window at `origin`.
fn confirm_at(
    h: &mut Harness,
    window: &ComponentWindow,
    origin: (i16, i16),
    area: Rect,
) -> Result<(i16, i16), String> {
    let snapshot = read(h, window)?;
    let [bx, by, bw, bh] = snapshot
        .boxes
        .get("confirm")
        .copied()
        .ok_or("no confirm button")?;
    let to = |v: f64| i16::try_from(v.round() as i64).unwrap_or(i16::MAX);
    Ok((
        origin.0 + to(f64::from(area.x) + bx + bw / 2.0),
        origin.1 + to(f64::from(area.y) + by + bh / 2.0),
    ))
}

pub(super) fn board(h: &mut Harness, x: &X11) -> Outcome {
    let before = lineup_tests::procs::web_processes();
    let parent = WindowBuilder::new()
        .with_title("lineup board test")
        .with_inner_size(LogicalSize::new(640u32, 720u32))
        .build(&h.event_loop)
        .map_err(|e| e.to_string())?;
    let area = Rect {
        x: 20,
        y: 20,
        width: 440,
        height: 680,
    };
    let process = ComponentProcess::new().map_err(|e| e.to_string())?;
    let options = ComponentOptions::new().with_guard_delay(GUARD);
    let board = ComponentBoard::in_parent(&h.event_loop, &parent, area, Some(&process), &options)
        .map_err(|e| e.to_string())?;
    let reported: Vec<Reported> = (0..3).map(|_| Reported::default()).collect();
    let contents = [
        sample(
            ComponentKind::Markdown,
            json!({}),
            json!({"text": "short"}),
            Some("short"),
        ),
        sample(
            ComponentKind::Confirm,
            json!({"title": "First?"}),
            json!({}),
            None,
        ),
        sample(
            ComponentKind::Confirm,
            json!({"title": "Second?"}),
            json!({}),
            None,
        ),
    ];
    let mut windows = Vec::new();
    for (content, sink) in contents.iter().zip(&reported) {
        let sink = std::rc::Rc::clone(sink);
        let window =
            ComponentWindow::in_board(&h.event_loop, &board, content, &options, move |a| {
                sink.borrow_mut().push(a)
            })
            .map_err(|e| e.to_string())?;
        windows.push(window);
    }
    ensure!(
        h.wait_for(WAIT, || windows.iter().all(ComponentWindow::is_shown)),
        "the boxes were never shown"
    );
    let now = lineup_tests::procs::web_processes();
    let new = now.difference(&before).count();
    ensure!(new == 1, "three boxes started {new} web processes");
    ensure!(
        h.wait_for(WAIT, || windows[1].accepts_input()
            && windows[2].accepts_input()),
        "the confirms never took input"
    );
    let origin = x
        .window_origin(xid_of(&parent)?)
        .map_err(|e| e.to_string())?;

    // A click on the second answers the second alone.
    let second = confirm_at(h, &windows[2], origin, area)?;
    x.click(second.0, second.1).map_err(|e| e.to_string())?;
    ensure!(
        h.wait_for(WAIT, || submitted(&reported[2])),
        "the second's click did not answer it: {:?}",
        reported[2].borrow()
    );
    h.settle(Duration::from_millis(300));
    ensure!(
        reported[0].borrow().is_empty() && reported[1].borrow().is_empty(),
        "another box heard the second's answer: {:?} {:?}",
        reported[0].borrow(),
        reported[1].borrow()
    );

    // The box above grows: the first moves down, and its guard starts again.
    let old = confirm_at(h, &windows[1], origin, area)?;
    let long = (1..=10)
        .map(|i| format!("line {i}"))
        .collect::<Vec<_>>()
        .join("\n\n");
    let state = JsonObject::try_from(json!({"text": long})).map_err(|e| format!("{e:?}"))?;
    let tree = parse_markdown(&long, LinkPolicy::Confirm);
    windows[0].update(&state, Some(&tree), false);
    ensure!(
        h.wait_for(WAIT, || !windows[1].accepts_input()),
        "the first's guard did not restart when the box above it grew"
    );
    let moved = confirm_at(h, &windows[1], origin, area)?;
    ensure!(
        moved.1 > old.1 + 40,
        "the first did not move down: {old:?} → {moved:?}"
    );
    x.click(moved.0, moved.1).map_err(|e| e.to_string())?;
    ensure!(
        !windows[1].accepts_input(),
        "inconclusive: the click came after the first's guard delay"
    );
    h.settle(Duration::from_millis(400));
    ensure!(
        reported[1].borrow().is_empty(),
        "a click inside the guard of a box that moved answered it: {:?}",
        reported[1].borrow()
    );

    // Hidden, the board takes no click; shown again, its guards start again.
    ensure!(
        h.wait_for(WAIT, || windows[1].accepts_input()),
        "the first never took input again"
    );
    board.set_visible(false);
    ensure!(
        !windows[1].accepts_input() && !windows[1].is_shown(),
        "a hidden board's box takes input"
    );
    board.set_visible(true);
    ensure!(
        !windows[1].accepts_input(),
        "showing the board again did not restart the guard"
    );

    // The positive control: the same click after the guard answers the first.
    ensure!(
        h.wait_for(WAIT, || windows[1].accepts_input()),
        "the first never took input again"
    );
    h.settle(Duration::from_millis(200));
    x.click(moved.0, moved.1).map_err(|e| e.to_string())?;
    ensure!(
        h.wait_for(WAIT, || submitted(&reported[1])),
        "a click after the guard did not answer the first: {:?}",
        reported[1].borrow()
    );
    drop(windows);
    drop(board);
    drop(parent);
    h.settle(Duration::from_millis(300));
    Ok(())
}
