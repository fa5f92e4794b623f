//! The built-in renderer of standard components, window by window under Xvfb, read back from
//! each page and from the screen's pixels:
//! - R-STD-9: every component of the v1 catalog, in light and in dark, regular and high
//!   contrast, shows its agent text and
//!   paints the theme's background and accent, on screen and in the page's computed style;
//! - R-STD-12: every control has a role and an accessible name, a progress bar its numbers,
//!   status and alert their live roles, a danger confirm focuses deny and nothing else
//!   autofocuses;
//! - R-STD-9, R-STD-10 (§5 checks 1 and 15): hostile text in every Markdown sink and in every
//!   label leaves no handler, link, source or agent string in a class or a style, with a positive
//!   control for the check itself;
//! - R-STD-10 (§5 check 2): images and links in every Markdown sink reach no loopback canary
//!   (which a direct connection does reach: the positive control);
//! - R-STD-8 (§5 check 8): a submit the page posts with no input event, a click right after a
//!   patch, and keys flagged `send_event` are dropped; a real click or key after the guard
//!   answers;
//! - R-STD-11 (§5 check 3): a link is a control showing its punycode host, reported only with a
//!   real click or key; hostile links and every link under the kiosk's policy are inert text;
//! - process cost (§4): windows in one `ComponentProcess` share one web process, and a message
//!   of one reaches only its own window's listener.
#![allow(clippy::print_stdout, clippy::unwrap_used, missing_docs)]

use std::cell::RefCell;
use std::rc::Rc;

use lineup_host::platform::{
    component_window_title, ComponentAction, ComponentContent, ComponentWindow,
};
use lineup_host::{ComponentOptions, ComponentSnapshot, ViewConfig};
use lineup_host_core::{parse_markdown, ComponentKind, LinkPolicy};
use lineup_tests::ensure;
use lineup_tests::home::private_home;
use lineup_tests::runner::WAIT;
use lineup_tests::view_harness::Harness;
use lineup_tests::x11::X11;
use serde_json::{json, Value};

mod announce;
mod board;
mod gate;
mod links;
mod look;
mod words;

use announce::throttled;
use board::board;
use gate::{activation, forged_keys};
use links::links;
use look::{hostile, labelled, no_fetch, themed};

pub(crate) fn run() {
    private_home("components");
    let mut h = Harness::start(ViewConfig::default());
    let x = match X11::connect() {
        Ok(x) => x,
        Err(e) => {
            println!("no X display for the component tests: {e}");
            std::process::exit(1);
        }
    };
    h.run(
        "r_std_9_every_component_in_light_and_dark_shows_its_text_in_the_themes_colours",
        |h| themed(h, &x),
    );
    h.run(
        "r_std_12_every_control_has_a_role_and_a_name_and_only_danger_focuses_deny",
        |h| labelled(h, &x),
    );
    h.run(
        "r_std_10_hostile_text_in_every_sink_leaves_no_handler_link_source_class_or_style",
        |h| hostile(h, &x),
    );
    h.run(
        "r_std_10_no_image_or_link_in_any_markdown_sink_reaches_the_network",
        |h| no_fetch(h, &x),
    );
    h.run(
        "r_std_8_answers_without_a_real_input_event_or_inside_the_guard_are_dropped",
        |h| activation(h, &x),
    );
    h.run(
        "r_std_8_forged_keys_reach_the_page_but_answer_nothing",
        |h| forged_keys(h, &x),
    );
    h.run(
        "r_std_11_a_link_is_a_control_with_its_punycode_host_used_only_by_real_input",
        |h| links(h, &x),
    );
    h.run(
        "r_std_8_boxes_of_one_board_share_a_process_and_a_click_answers_only_the_box_under_it",
        |h| board(h, &x),
    );
    h.run(
        "r_std_12_announcements_are_throttled_by_quarter_and_time_and_announce_false_silences_them",
        |h| throttled(h, &x),
    );
    h.run(
        "r_std_9_the_hosts_own_words_follow_the_language_chinese_and_english",
        |h| words::localized(h, &x),
    );
    h.finish();
}

/// One component to show: its content, and agent strings its page must show.
pub(super) struct Sample {
    content: ComponentContent,
    shows: Vec<&'static str>,
}

pub(super) fn sample(
    kind: ComponentKind,
    props: Value,
    state: Value,
    md: Option<&str>,
) -> ComponentContent {
    let map = |v: Value| v.as_object().cloned().unwrap_or_default();
    ComponentContent {
        kind,
        props: map(props),
        state: map(state),
        markdown: md.map(|text| parse_markdown(text, LinkPolicy::Confirm)),
        draft: None,
        locked: false,
    }
}

/// The v1 catalog, one sample each.
pub(super) fn catalog() -> Vec<Sample> {
    use ComponentKind as K;
    let s = |content, shows: &[&'static str]| Sample {
        content,
        shows: shows.to_vec(),
    };
    vec![
        s(
            sample(
                K::Markdown,
                json!({}),
                json!({"text": "x"}),
                Some("**Build** passed"),
            ),
            &["Build passed"],
        ),
        s(
            sample(
                K::Text,
                json!({}),
                json!({"text": "Queued for review"}),
                None,
            ),
            &["Queued for review"],
        ),
        s(
            sample(
                K::Status,
                json!({}),
                json!({"status": "in_progress", "title": "Migrating",
                       "steps": [{"title": "Backup", "status": "complete"}]}),
                None,
            ),
            &["Migrating", "Backup", "In progress"],
        ),
        s(
            sample(
                K::Progress,
                json!({"label": "Uploading", "cancel_label": "Stop"}),
                json!({"value": 40, "text": "40 of 100 files"}),
                None,
            ),
            &["Uploading", "40 of 100 files", "Stop"],
        ),
        s(
            sample(
                K::Alert,
                json!({"dismissible": true}),
                json!({"severity": "error", "title": "Deploy failed"}),
                Some("Exit 137"),
            ),
            &["Deploy failed", "Exit 137", "Error", "Dismiss"],
        ),
        s(
            sample(
                K::Confirm,
                json!({"title": "Deploy to production?", "confirm_label": "Deploy",
                       "deny_label": "Keep"}),
                json!({}),
                Some("3 services"),
            ),
            &["Deploy to production?", "3 services", "Deploy", "Keep"],
        ),
        s(
            sample(
                K::Choice,
                json!({"label": "Region", "options": [{"value": "eu", "label": "Europe"},
                       {"value": "us", "label": "US", "description": "Virginia"}]}),
                json!({}),
                None,
            ),
            &["Region", "Europe", "US", "Virginia"],
        ),
        s(
            sample(
                K::Input,
                json!({"label": "Ticket title", "type": "text", "description": "Short"}),
                json!({"error": "Too long"}),
                None,
            ),
            &["Ticket title", "Short", "Too long"],
        ),
        s(
            sample(
                K::Form,
                json!({"title": "New user", "fields": [
                    {"name": "email", "kind": "input", "label": "Email", "type": "email"},
                    {"name": "admin", "kind": "toggle", "label": "Admin"}]}),
                json!({"errors": {"email": "Taken"}}),
                Some("All *fields*"),
            ),
            &["New user", "Email", "Admin", "Taken", "All fields"],
        ),
    ]
}

/// Shows `content` in a window of its own and reads it back once it is on screen; returns the
/// window (kept open: drop it to close), its X id and what its page showed.
pub(super) fn show(
    h: &mut Harness,
    x: &X11,
    content: &ComponentContent,
    options: &ComponentOptions,
) -> Result<(ComponentWindow, u32, ComponentSnapshot), String> {
    let window = ComponentWindow::new(&h.event_loop, content, options, |_| {})
        .map_err(|e| format!("{}: {e}", content.kind))?;
    let xid = mapped(h, x, content.kind)?;
    // One frame for the page to paint after the map.
    h.settle(std::time::Duration::from_millis(300));
    let slot: Rc<RefCell<Option<Option<ComponentSnapshot>>>> = Rc::default();
    let fill = Rc::clone(&slot);
    window.snapshot(move |s| *fill.borrow_mut() = Some(s));
    h.wait_for(WAIT, || slot.borrow().is_some());
    let snapshot = slot.borrow_mut().take().flatten();
    let snapshot =
        snapshot.ok_or_else(|| format!("{}: the page could not be read", content.kind))?;
    Ok((window, xid, snapshot))
}

/// The X window of the `kind` component window once X shows it.
pub(super) fn mapped(h: &mut Harness, x: &X11, kind: ComponentKind) -> Result<u32, String> {
    mapped_in(h, x, kind, &ComponentOptions::default())
}

/// [`mapped`] for a window made with `options`, whose language titles it (R-STD-9).
pub(super) fn mapped_in(
    h: &mut Harness,
    x: &X11,
    kind: ComponentKind,
    options: &ComponentOptions,
) -> Result<u32, String> {
    let title = component_window_title(kind, &options.language());
    let mut xid = None;
    ensure!(
        h.wait_for(WAIT, || {
            xid = x.find_window_by_title(&title).filter(|w| x.is_viewable(*w));
            xid.is_some()
        }),
        "{kind} was never shown"
    );
    Ok(xid.unwrap_or_default())
}

/// What `window`'s box shows now.
pub(super) fn read(h: &mut Harness, window: &ComponentWindow) -> Result<ComponentSnapshot, String> {
    let slot: Rc<RefCell<Option<Option<ComponentSnapshot>>>> = Rc::default();
    let fill = Rc::clone(&slot);
    window.snapshot(move |s| *fill.borrow_mut() = Some(s));
    h.wait_for(WAIT, || slot.borrow().is_some());
    let taken = slot.borrow_mut().take().flatten();
    taken.ok_or_else(|| "the page could not be read".to_owned())
}

/// The actions a window reported, in order.
pub(super) type Reported = Rc<RefCell<Vec<ComponentAction>>>;

/// `content` in a window of its own with the default options, and what it reports.
pub(super) fn recorded(
    h: &Harness,
    content: &ComponentContent,
) -> Result<(ComponentWindow, Reported), String> {
    let reported: Reported = Rc::default();
    let sink = Rc::clone(&reported);
    let window = ComponentWindow::new(&h.event_loop, content, &ComponentOptions::new(), move |a| {
        sink.borrow_mut().push(a)
    })
    .map_err(|e| format!("{}: {e}", content.kind))?;
    Ok((window, reported))
}

/// Closes `window` and waits until X no longer shows it.
pub(super) fn close(h: &mut Harness, x: &X11, window: ComponentWindow, xid: u32) {
    drop(window);
    h.wait_for(WAIT, || !x.is_viewable(xid));
}
