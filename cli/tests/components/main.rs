//! Standard components rendered by the host itself, over `lineup host --stdio
//! --builtin-components`, with the real GTK windows under Xvfb driven by XTEST: every component
//! of the v1 catalog opens, shows, and answers through a real click or key press (R-STD-1,
//! R-STD-6, R-STD-8, R-STD-14).
//!
//! Run with `xvfb-run -a cargo test -p lineup-cli --test components`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr,
    missing_docs
)]

#[path = "../support/screen.rs"]
mod screen;
#[path = "../support/stdio_host.rs"]
mod stdio_host;

mod a11y;
mod announce;
mod board;
mod catalog;
mod confirm;
mod deep;
mod prompt;
mod questions;
mod restore;

use std::thread;
use std::time::{Duration, Instant};

use lineup_tests::x11::X11;
use screen::{display, screen};
use serde_json::json;
use serde_json::Value;
use stdio_host::{envelope, is, StdioHost};

/// The v1 catalog (standard-components.md §3).
const CATALOG: [&str; 9] = [
    "markdown", "text", "status", "progress", "alert", "confirm", "choice", "input", "form",
];

/// Keysyms: Return, Escape, Tab, Down, space.
const RETURN: u32 = 0xff0d;
const ESCAPE: u32 = 0xff1b;
const TAB: u32 = 0xff09;
const DOWN: u32 = 0xff54;
const SPACE: u32 = 0x20;

/// The name of a component's document (and of its window when it has one of its own): its
/// id, then the host's marker.
fn title(id: &str) -> String {
    format!("{id} — LineUp question")
}

/// The title of the window a conversation's components stack in (R-STD-13).
const STACK: &str = "questions — LineUp question";

/// The stack `window`, once it is taller than `height`: a component added below the others
/// was shown. Returns the new height.
fn grown(x: &X11, window: u32, height: u16) -> u16 {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (_, now) = x.window_size(window).unwrap();
        if now > height {
            // The layout settles (and restarts the guards) before the caller goes on.
            thread::sleep(Duration::from_millis(100));
            return x.window_size(window).unwrap().1;
        }
        assert!(
            Instant::now() < deadline,
            "the stack did not grow past {height} px"
        );
        thread::sleep(Duration::from_millis(20));
    }
}

/// The stack window's height now.
fn height(x: &X11, window: u32) -> u16 {
    x.window_size(window).unwrap().1
}

/// The viewable window titled `title`, waiting up to 30 s for it.
fn shown(x: &X11, title: &str) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(w) = x.find_window_by_title(title).filter(|w| x.is_viewable(*w)) {
            return w;
        }
        assert!(Instant::now() < deadline, "no {title:?} window was shown");
        thread::sleep(Duration::from_millis(20));
    }
}

/// Clicks the last button of the footer (confirm, submit, a progress's cancel, an alert's
/// dismiss) of the bottom component of `window`, at a fixed place from the window's bottom
/// right corner (120 × 34 px buttons, 20 px right and 10 px bottom padding).
fn click_last_button(x: &X11, window: u32) {
    let (w, h) = x.window_size(window).unwrap();
    let cx = i16::try_from(w).unwrap() - 20 - 60;
    let cy = i16::try_from(h).unwrap() - 10 - 17;
    x.click_in(window, cx, cy).unwrap();
}

/// Clicks the last button of `window` until the host sends what `answered` matches, and returns
/// it: a click the guard still drops (on a loaded machine the box may take focus, which restarts
/// the guard, later than the test waited) sends nothing, so it is clicked again, every 3 s, at
/// most five times. R-STD-7 keeps a round to one answer whatever the clicks; the callers check
/// the count.
fn click_until(
    x: &X11,
    window: u32,
    host: &mut StdioHost,
    what: &str,
    answered: impl Fn(&Value) -> bool,
) -> Value {
    for _ in 0..5 {
        click_last_button(x, window);
        if let Some((_, value)) = host.wait_for(Duration::from_secs(3), &answered) {
            return value;
        }
    }
    panic!(
        "no {what} after five clicks 3 s apart; saw {:#?}",
        host.seen
    );
}

/// Gives `window` the keyboard and waits past the guard delay (R-STD-8, 500 ms) that focus,
/// a box shown and a relayout restart: until no restart was logged for 750 ms, however long a
/// loaded machine takes to settle. Each restart is seen after it happened, so the wait is never
/// shorter than the guard's.
fn focus_past_guard(host: &StdioHost, x: &X11, window: u32) {
    x.focus(window).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut seen = (stdio_host::guard_restarts(host), Instant::now());
    loop {
        thread::sleep(Duration::from_millis(50));
        let restarts = stdio_host::guard_restarts(host);
        if restarts != seen.0 {
            seen = (restarts, Instant::now());
        } else if seen.1.elapsed() >= Duration::from_millis(750) {
            // The window's own restart is logged: the wait above watched the real guard.
            assert!(
                restarts > 0,
                "the host logged no '{}'",
                stdio_host::GUARD_RESTARTED
            );
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the input guard kept restarting for 30 s"
        );
    }
}

/// The `ui.event`s named `event` the host sent so far.
fn events(host: &StdioHost, event: &str) -> Vec<Value> {
    host.seen
        .iter()
        .map(|(_, v)| v)
        .filter(|v| is("ui.event")(v) && v["payload"]["event"] == event)
        .cloned()
        .collect()
}

fn submits(host: &StdioHost) -> Vec<Value> {
    events(host, "submit")
}

/// A display, its lock, and a `lineup host --stdio --builtin-components` that was sent a
/// `ui.open` of `component` as `instance` (envelope id `id`).
fn start_with(id: &str, instance: &str, component: Value) -> (Started, StdioHost) {
    let lock = screen();
    let x = display();
    let tmp = tempfile::tempdir().unwrap();
    let mut host = StdioHost::start(tmp.path(), &["--builtin-components"]);
    host.send(&envelope(
        id,
        "ui.open",
        json!({"instance_id": instance, "component": component}),
    ));
    (
        Started {
            x,
            _tmp: tmp,
            _lock: lock,
        },
        host,
    )
}

/// What [`start_with`] keeps alive beside the host.
struct Started {
    x: X11,
    _tmp: tempfile::TempDir,
    _lock: std::sync::MutexGuard<'static, ()>,
}
