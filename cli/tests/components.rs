//! Standard components rendered by the host itself, over `lineup host --stdio
//! --builtin-components` with the real GTK window under Xvfb, driven by XTEST.
//!
//! R-STD-14: `client.inventory` lists `markdown`, `confirm` and `choice` v1. R-STD-8: a click
//! on the confirm button before the guard delay gives nothing; one after it gives exactly one
//! `ui.event submit` with `answer: true`, `via: "host"`, `input: "pointer"`, `round: 1` and
//! `opened_by` the open's id (R-STD-6); a second click gives no second `submit` (R-STD-7).
//! Enter never confirms; Escape after the guard is `cancel` with `input: "keyboard"`.
//!
//! Run with `xvfb-run -a cargo test -p lineup-cli --test components`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr,
    missing_docs
)]

#[path = "support/stdio_host.rs"]
mod stdio_host;

use std::thread;
use std::time::{Duration, Instant};

use lineup_tests::x11::X11;
use serde_json::{json, Value};
use stdio_host::{envelope, is, StdioHost};

const TITLE: &str = "confirm — LineUp question";

/// One test at a time on the display: their windows and keys must not cross.
fn screen() -> std::sync::MutexGuard<'static, ()> {
    static SCREEN: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SCREEN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A connection to the display, retried while Xvfb resets after its last client left.
fn display() -> X11 {
    assert!(
        std::env::var_os("DISPLAY").is_some(),
        "no DISPLAY: run under `xvfb-run -a`"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match X11::connect() {
            Ok(x) => return x,
            Err(e) if Instant::now() > deadline => panic!("no display: {e}"),
            Err(_) => thread::sleep(Duration::from_millis(100)),
        }
    }
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

/// Clicks the confirm button: the last button of the footer, at a fixed place from the
/// window's bottom right corner (120 × 34 px buttons, 20 px right and 10 px bottom padding).
fn click_confirm(x: &X11, window: u32) {
    let (w, h) = x.window_size(window).unwrap();
    let cx = i16::try_from(w).unwrap() - 20 - 60;
    let cy = i16::try_from(h).unwrap() - 10 - 17;
    x.click_in(window, cx, cy).unwrap();
}

fn submits(host: &StdioHost) -> Vec<Value> {
    host.seen
        .iter()
        .map(|(_, v)| v)
        .filter(|v| is("ui.event")(v) && v["payload"]["event"] == "submit")
        .cloned()
        .collect()
}

#[test]
fn r_std_8_a_confirm_is_answered_once_by_a_real_click_after_the_guard() {
    let _screen = screen();
    let x = display();
    let tmp = tempfile::tempdir().unwrap();
    let mut host = StdioHost::start(tmp.path(), &["--builtin-components"]);
    host.send(&envelope(
        "m-1",
        "ui.open",
        json!({"instance_id": "deploy.ok", "component": {"id": "confirm", "version": "1",
               "props": {"title": "Deploy to production?", "body": "3 services, **no** migrations. <b>x</b>",
                         "confirm_label": "Deploy", "deny_label": "Keep"}}}),
    ));
    let inventory = host.expect("client.inventory", is("client.inventory"));
    let listed: Vec<(String, String)> = inventory["payload"]["standard_components"]
        .as_array()
        .unwrap_or_else(|| panic!("no standard_components: {inventory}"))
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap_or_default().to_owned(),
                c["version"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    for id in ["markdown", "confirm", "choice"] {
        assert!(
            listed.contains(&(id.to_owned(), "1".to_owned())),
            "{id} v1 not listed: {listed:?}"
        );
    }

    // R-STD-8 (b): a click at once, inside the guard delay, is dropped.
    let window = shown(&x, TITLE);
    click_confirm(&x, window);
    host.drain(Duration::from_millis(1500));
    assert!(
        submits(&host).is_empty(),
        "a click inside the guard delay answered: {:?}",
        submits(&host)
    );
    assert!(
        !host.seen.iter().any(|(_, v)| is("ui.event")(v)),
        "no event at all: {:?}",
        host.seen
    );

    // After the guard: exactly one submit, made by the host from a pointer release.
    click_confirm(&x, window);
    let submit = host.expect("the submit", |v| {
        is("ui.event")(v) && v["payload"]["event"] == "submit"
    });
    assert_eq!(submit["payload"]["instance_id"], "deploy.ok");
    let data = &submit["payload"]["data"];
    assert_eq!(data["answer"], true, "{submit}");
    assert_eq!(data["via"], "host", "{submit}");
    assert_eq!(data["input"], "pointer", "{submit}");
    assert_eq!(data["round"], 1, "{submit}");
    assert_eq!(data["opened_by"], "m-1", "{submit}");
    assert_eq!(data["state_from"], "m-1", "{submit}");
    assert!(data["answer_id"].as_str().is_some_and(|id| !id.is_empty()));

    // R-STD-7: the round is answered; a second click sends nothing more.
    thread::sleep(Duration::from_millis(300));
    click_confirm(&x, window);
    host.drain(Duration::from_millis(2000));
    assert_eq!(submits(&host).len(), 1, "{:?}", submits(&host));
    host.stop();
}

/// XK_Return, XK_Escape.
const RETURN: u32 = 0xff0d;
const ESCAPE: u32 = 0xff1b;

#[test]
fn r_std_8_enter_never_confirms_and_escape_cancels_from_the_keyboard() {
    let _screen = screen();
    let x = display();
    let tmp = tempfile::tempdir().unwrap();
    let mut host = StdioHost::start(tmp.path(), &["--builtin-components"]);
    host.send(&envelope(
        "m-2",
        "ui.open",
        json!({"instance_id": "drop.db", "component": {"id": "confirm", "version": "1",
               "props": {"title": "Drop the database?", "tone": "danger"}}}),
    ));
    let window = shown(&x, TITLE);
    x.focus(window).unwrap();
    // Past the danger guard delay (1 s): Enter still answers nothing.
    thread::sleep(Duration::from_millis(1500));
    x.key(RETURN).unwrap();
    host.drain(Duration::from_millis(1500));
    assert!(
        !host.seen.iter().any(|(_, v)| is("ui.event")(v)),
        "Enter answered: {:?}",
        host.seen
    );
    x.key(ESCAPE).unwrap();
    let cancel = host.expect("the cancel", |v| {
        is("ui.event")(v) && v["payload"]["event"] == "cancel"
    });
    let data = &cancel["payload"]["data"];
    assert!(data.get("answer").is_none(), "{cancel}");
    assert_eq!(data["via"], "host", "{cancel}");
    assert_eq!(data["input"], "keyboard", "{cancel}");
    assert_eq!(data["opened_by"], "m-2", "{cancel}");
    host.stop();
}
