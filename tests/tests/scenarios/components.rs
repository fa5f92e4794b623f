//! The built-in renderer of standard components, window by window under Xvfb, read back from
//! each page and from the screen's pixels:
//! - R-STD-9: every component of the v1 catalog, in light and in dark, shows its agent text and
//!   paints the theme's background and accent, on screen and in the page's computed style;
//! - R-STD-12: every control has a role and an accessible name, a progress bar its numbers,
//!   status and alert their live roles, a danger confirm focuses deny and nothing else
//!   autofocuses;
//! - R-STD-9, R-STD-10 (§5 checks 1 and 15): hostile text in every Markdown sink and in every
//!   label leaves no handler, link, source or agent string in a class or a style, with a positive
//!   control for the check itself;
//! - R-STD-10 (§5 check 2): images and links in every Markdown sink reach no loopback canary
//!   (which a direct connection does reach: the positive control);
//! - R-STD-8 (§5 check 8): a submit the page posts with no input event, and a click right after
//!   a patch, are dropped; a real click after the guard answers;
//! - process cost (§4): windows in one `ComponentProcess` share one web process, and a message
//!   of one reaches only its own window's listener.
#![allow(clippy::print_stdout, clippy::unwrap_used, missing_docs)]

use std::cell::RefCell;
use std::rc::Rc;

use lineup_host::ViewConfig;
use lineup_host::{
    apply_theme, component_window_title, ComponentAction, ComponentContent, ComponentOptions,
    ComponentProcess, ComponentSnapshot, ComponentWindow, SnapshotElement, Theme,
    PATCH_GUARD_INTERVAL,
};
use lineup_host_core::{parse_markdown, ComponentKind, InputKind, JsonObject, LinkPolicy};
use lineup_tests::canary::Canary;
use lineup_tests::ensure;
use lineup_tests::home::private_home;
use lineup_tests::runner::{Outcome, WAIT};
use lineup_tests::view_harness::Harness;
use lineup_tests::x11::X11;
use serde_json::{json, Value};

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
        "a_conversations_components_share_one_web_process_and_each_answer_reaches_its_own",
        |h| shared(h, &x),
    );
    h.finish();
}

/// One component to show: its content, and agent strings its page must show.
struct Sample {
    content: ComponentContent,
    shows: Vec<&'static str>,
}

fn sample(kind: ComponentKind, props: Value, state: Value, md: Option<&str>) -> ComponentContent {
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
fn catalog() -> Vec<Sample> {
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
fn show(
    h: &mut Harness,
    x: &X11,
    content: &ComponentContent,
    options: &ComponentOptions,
) -> Result<(ComponentWindow, u32, ComponentSnapshot), String> {
    let window = ComponentWindow::new(&h.event_loop, content, options, |_| {})
        .map_err(|e| format!("{}: {e}", content.kind))?;
    let title = component_window_title(content.kind);
    let mut xid = None;
    ensure!(
        h.wait_for(WAIT, || {
            xid = x.find_window_by_title(&title).filter(|w| x.is_viewable(*w));
            xid.is_some()
        }),
        "{} was never shown",
        content.kind
    );
    // One frame for the page to paint after the map.
    h.settle(std::time::Duration::from_millis(300));
    let slot: Rc<RefCell<Option<Option<ComponentSnapshot>>>> = Rc::default();
    let fill = Rc::clone(&slot);
    window.snapshot(move |s| *fill.borrow_mut() = Some(s));
    h.wait_for(WAIT, || slot.borrow().is_some());
    let snapshot = slot.borrow_mut().take().flatten();
    let snapshot =
        snapshot.ok_or_else(|| format!("{}: the page could not be read", content.kind))?;
    Ok((window, xid.unwrap_or_default(), snapshot))
}

/// Closes `window` and waits until X no longer shows it.
fn close(h: &mut Harness, x: &X11, window: ComponentWindow, xid: u32) {
    drop(window);
    h.wait_for(WAIT, || !x.is_viewable(xid));
}

/// Whether two colours are within `tolerance` on every channel.
fn near(a: [u8; 3], b: [u8; 3], tolerance: u8) -> bool {
    a.iter().zip(b).all(|(p, q)| p.abs_diff(q) <= tolerance)
}

fn css(rgb: [u8; 3]) -> String {
    format!("rgb({}, {}, {})", rgb[0], rgb[1], rgb[2])
}

/// The element of the page whose filled box carries the accent, by id.
fn accent_element(kind: ComponentKind) -> Option<&'static str> {
    match kind {
        ComponentKind::Confirm => Some("confirm"),
        ComponentKind::Progress => Some("bar"),
        _ => None,
    }
}

fn themed(h: &mut Harness, x: &X11) -> Outcome {
    let themes = [
        (
            Theme::Light,
            [0xff, 0xff, 0xff],
            [0x0a, 0x66, 0xd8],
            "#0a66d8",
        ),
        (
            Theme::Dark,
            [0x1e, 0x1f, 0x22],
            [0x5e, 0xa1, 0xff],
            "#5ea1ff",
        ),
    ];
    let options = ComponentOptions::new();
    for (theme, background, accent, accent_css) in themes {
        apply_theme(theme);
        for sample in catalog() {
            let kind = sample.content.kind;
            let (window, xid, snapshot) = show(h, x, &sample.content, &options)?;
            for text in &sample.shows {
                ensure!(
                    snapshot.text.contains(text),
                    "{theme:?} {kind}: {text:?} is not in the page's text"
                );
            }
            ensure!(
                snapshot.background == css(background) && snapshot.accent == accent_css,
                "{theme:?} {kind}: background {} accent {}",
                snapshot.background,
                snapshot.accent
            );
            let (ox, oy) = x.window_origin(xid).map_err(|e| e.to_string())?;
            let pixel = x.pixel(ox + 3, oy + 3).map_err(|e| e.to_string())?;
            ensure!(
                near(pixel, background, 2),
                "{theme:?} {kind}: the screen shows {pixel:?} where the background is"
            );
            if let Some(id) = accent_element(kind) {
                let [bx, by, _, bh] = snapshot.boxes.get(id).copied().unwrap_or_default();
                let (px, py) = (ox + (bx + 8.0) as i16, oy + (by + bh / 2.0) as i16);
                let pixel = x.pixel(px, py).map_err(|e| e.to_string())?;
                ensure!(
                    near(pixel, accent, 8),
                    "{theme:?} {kind}: the screen shows {pixel:?} inside #{id}, not {accent:?}"
                );
            }
            close(h, x, window, xid);
        }
    }
    apply_theme(Theme::Light);
    Ok(())
}

/// The roles every interactive element must have a name for (R-STD-12).
const NAMED_ROLES: [&str; 8] = [
    "button",
    "checkbox",
    "radio",
    "switch",
    "textbox",
    "spinbutton",
    "progressbar",
    "group",
];

fn labelled(h: &mut Harness, x: &X11) -> Outcome {
    let options = ComponentOptions::new();
    let mut danger = sample(
        ComponentKind::Confirm,
        json!({"title": "Drop the table?", "tone": "danger"}),
        json!({}),
        None,
    );
    danger.props.insert("tone".into(), json!("danger"));
    let info = sample(
        ComponentKind::Alert,
        json!({}),
        json!({"severity": "info", "title": "Heads up"}),
        None,
    );
    let indeterminate = sample(
        ComponentKind::Progress,
        json!({"label": "Waiting"}),
        json!({"value": null}),
        None,
    );
    let contents = catalog()
        .into_iter()
        .map(|s| s.content)
        .chain([danger, info, indeterminate]);
    for content in contents {
        let kind = content.kind;
        let (window, xid, snapshot) = show(h, x, &content, &options)?;
        for e in &snapshot.elements {
            ensure!(
                !NAMED_ROLES.contains(&e.role.as_str()) || !e.name.trim().is_empty(),
                "{kind}: a {} ({}) has no accessible name",
                e.tag,
                e.role
            );
        }
        let bars: Vec<&SnapshotElement> = snapshot.with_role("progressbar").collect();
        if kind == ComponentKind::Progress {
            let determinate = content.state.get("value").is_some_and(Value::is_number);
            ensure!(bars.len() == 1, "{kind}: {} progress bars", bars.len());
            let a = &bars[0].attributes;
            ensure!(
                a.get("aria-valuemin").map(String::as_str) == Some("0")
                    && a.contains_key("aria-valuemax")
                    && a.contains_key("aria-valuenow") == determinate,
                "{kind}: progress bar attributes {a:?}"
            );
        }
        let role = |r: &str| snapshot.with_role(r).count();
        match (kind, content.state.get("severity").and_then(Value::as_str)) {
            (ComponentKind::Status, _) => ensure!(role("status") == 1, "status has no region"),
            (ComponentKind::Alert, Some("error")) => {
                ensure!(role("alert") == 1, "an error alert is not role=alert");
            }
            (ComponentKind::Alert, _) => {
                ensure!(
                    role("alert") == 0 && role("status") == 1,
                    "an info alert interrupts"
                );
            }
            _ => {}
        }
        let danger = content.props.get("tone") == Some(&json!("danger"));
        let expected_focus = if danger { "deny" } else { "" };
        ensure!(
            snapshot.focused == expected_focus,
            "{kind}: focus on {:?}, expected {expected_focus:?}",
            snapshot.focused
        );
        close(h, x, window, xid);
    }
    Ok(())
}

/// Every attribute of `elements` that could run code, load something or carry agent text into
/// the look: an `on*` handler, `href`, `src`, `srcset`, `style`, or a class or style holding
/// `marker`; and every element outside the renderer's tags.
fn unsafe_parts(elements: &[SnapshotElement], marker: &str) -> Vec<String> {
    const TAGS: [&str; 38] = [
        "main",
        "footer",
        "div",
        "p",
        "span",
        "h1",
        "h2",
        "h3",
        "h4",
        "em",
        "strong",
        "s",
        "code",
        "pre",
        "ul",
        "ol",
        "li",
        "blockquote",
        "table",
        "thead",
        "tbody",
        "tr",
        "th",
        "td",
        "hr",
        "br",
        "input",
        "textarea",
        "label",
        "fieldset",
        "legend",
        "button",
        "progress",
        "script",
        "section",
        "small",
        "b",
        "i",
    ];
    let mut found = Vec::new();
    for e in elements {
        if !TAGS.contains(&e.tag.as_str()) {
            found.push(format!("<{}>", e.tag));
        }
        for (name, value) in &e.attributes {
            let code = name.starts_with("on")
                || ["href", "src", "srcset", "style"].contains(&name.as_str());
            let agent_look = (name == "class" || name == "style") && value.contains(marker);
            if code || agent_look {
                found.push(format!("<{} {name}={value:?}>", e.tag));
            }
        }
    }
    found
}

fn hostile(h: &mut Harness, x: &X11) -> Outcome {
    // The check itself: a planted handler, link and class are each found (positive control).
    let planted = SnapshotElement::default();
    let mut planted_all = Vec::new();
    for (tag, name, value) in [
        ("img", "onerror", "x"),
        ("a", "href", "javascript:x"),
        ("span", "class", "zz-evil"),
    ] {
        let mut e = planted.clone();
        e.tag = tag.to_owned();
        e.attributes.insert(name.to_owned(), value.to_owned());
        planted_all.push(e);
    }
    ensure!(
        unsafe_parts(&planted_all, "zz-evil").len() == 5,
        "the check misses planted parts: {:?}",
        unsafe_parts(&planted_all, "zz-evil")
    );

    let marker = "zz-evil";
    let xss = format!(
        "<img src=x onerror=alert(1)> <svg onload=alert(1)> [a](javascript:alert(1)) \
         [b](&#x6A;avascript:alert(1)) <javascript:alert(1)> [c][r] ![i](http://127.0.0.1:9/p) \
         [d](data:text/html,x) [e](vbscript:x) [f](file:///etc/passwd) [g](lineup-host://view/) \
         [h](//evil.example) [i](java\tscript:x) <a href=\"https://evil.example\" class=\"{marker}\">x</a> \
         <style>body{{background:red}}</style> <b style=\"color:red\">{marker}</b>\n\n[r]: javascript:alert(1)"
    );
    let label = format!("\" class=\"{marker}\" style=\"color:red\" onclick=\"x");
    let options = ComponentOptions::new();
    let contents = [
        sample(
            ComponentKind::Markdown,
            json!({}),
            json!({"text": "x"}),
            Some(&xss),
        ),
        sample(
            ComponentKind::Alert,
            json!({}),
            json!({"severity": "warning", "title": label}),
            Some(&xss),
        ),
        sample(
            ComponentKind::Confirm,
            json!({"title": label, "confirm_label": label, "deny_label": label}),
            json!({}),
            Some(&xss),
        ),
        sample(
            ComponentKind::Form,
            json!({"title": label, "fields": [
                {"name": "a", "kind": "input", "label": label, "placeholder": label},
                {"name": "b", "kind": "choice", "label": label,
                 "options": [{"value": label, "label": label}]}]}),
            json!({}),
            Some(&xss),
        ),
    ];
    for content in contents {
        let kind = content.kind;
        let (window, xid, snapshot) = show(h, x, &content, &options)?;
        let found = unsafe_parts(&snapshot.elements, marker);
        ensure!(found.is_empty(), "{kind}: {found:?}");
        ensure!(
            snapshot.text.contains(marker) || kind != ComponentKind::Markdown,
            "{kind}: the agent's text was not shown as text"
        );
        close(h, x, window, xid);
    }
    Ok(())
}

fn no_fetch(h: &mut Harness, x: &X11) -> Outcome {
    let canary = Canary::start().map_err(|e| e.to_string())?;
    let md = format!(
        "![a]({}) <img src=\"{}\"> [c]({}) <{}> [d][r]\n\n[r]: {}",
        canary.url("image"),
        canary.url("raw-image"),
        canary.url("link"),
        canary.url("autolink"),
        canary.url("reference"),
    );
    let options = ComponentOptions::new();
    let sinks = [
        sample(
            ComponentKind::Markdown,
            json!({}),
            json!({"text": "x"}),
            Some(&md),
        ),
        sample(
            ComponentKind::Alert,
            json!({}),
            json!({"severity": "info", "title": "t"}),
            Some(&md),
        ),
        sample(
            ComponentKind::Confirm,
            json!({"title": "t"}),
            json!({}),
            Some(&md),
        ),
        sample(
            ComponentKind::Form,
            json!({"fields": [{"name": "a", "kind": "toggle", "label": "A"}]}),
            json!({}),
            Some(&md),
        ),
    ];
    let mut open = Vec::new();
    for content in sinks {
        let (window, xid, snapshot) = show(h, x, &content, &options)?;
        let found = unsafe_parts(&snapshot.elements, "\u{0}");
        ensure!(found.is_empty(), "{}: {found:?}", content.kind);
        open.push((window, xid));
    }
    h.settle(std::time::Duration::from_millis(1500));
    let reached = canary.connections();
    for (window, xid) in open {
        close(h, x, window, xid);
    }
    ensure!(reached == 0, "{reached} connection(s) reached the canary");
    // The positive control: the canary counts a connection that does reach it.
    let url = canary.url("");
    let addr = url.trim_start_matches("http://").trim_end_matches('/');
    std::net::TcpStream::connect(addr).map_err(|e| e.to_string())?;
    ensure!(
        h.wait_for(WAIT, || canary.connections() == 1),
        "the canary did not count a direct connection"
    );
    Ok(())
}

/// The answers a window reported, in order.
type Reported = Rc<RefCell<Vec<ComponentAction>>>;

fn activation(h: &mut Harness, x: &X11) -> Outcome {
    let content = sample(
        ComponentKind::Confirm,
        json!({"title": "Deploy?", "confirm_label": "Deploy"}),
        json!({}),
        None,
    );
    let reported: Reported = Rc::default();
    let sink = Rc::clone(&reported);
    let window = ComponentWindow::new(
        &h.event_loop,
        &content,
        &ComponentOptions::new(),
        move |a| {
            sink.borrow_mut().push(a);
        },
    )
    .map_err(|e| e.to_string())?;
    let title = component_window_title(ComponentKind::Confirm);
    let mut xid = None;
    ensure!(
        h.wait_for(WAIT, || {
            xid = x.find_window_by_title(&title).filter(|w| x.is_viewable(*w));
            xid.is_some()
        }),
        "the confirm was never shown"
    );
    let xid = xid.unwrap_or_default();
    ensure!(
        h.wait_for(WAIT, || window.accepts_input()),
        "the guard never opened"
    );
    // The page posts an answer with no input event behind it: dropped.
    window.post_from_page_for_test(r#"{"type":"submit","answer":true}"#);
    h.settle(std::time::Duration::from_millis(600));
    ensure!(
        reported.borrow().is_empty(),
        "a page-made submit answered: {:?}",
        reported.borrow()
    );
    let click = |x: &X11| -> Outcome {
        let (w, hh) = x.window_size(xid).map_err(|e| e.to_string())?;
        let cx = i16::try_from(w).unwrap_or(0) - 20 - 60;
        let cy = i16::try_from(hh).unwrap_or(0) - 10 - 17;
        x.click_in(xid, cx, cy).map_err(|e| e.to_string())
    };
    // A real click after the guard answers (the positive control), with the pointer's kind.
    click(x)?;
    ensure!(
        h.wait_for(WAIT, || reported.borrow().len() == 1),
        "a real click after the guard did not answer"
    );
    ensure!(
        matches!(
            reported.borrow()[0],
            ComponentAction::Submit {
                input: InputKind::Pointer,
                ..
            }
        ),
        "{:?}",
        reported.borrow()
    );
    // A patch the user sees restarts the guard: a click right after it is dropped...
    window.update(&JsonObject::default(), None, true);
    click(x)?;
    h.settle(std::time::Duration::from_millis(300));
    ensure!(
        reported.borrow().len() == 1,
        "a click right after a patch answered: {:?}",
        reported.borrow()
    );
    // ...and one after the guard delay answers again.
    h.settle(std::time::Duration::from_millis(500));
    click(x)?;
    ensure!(
        h.wait_for(WAIT, || reported.borrow().len() == 2),
        "a click after the patch's guard did not answer"
    );
    // Patches restart the guard at most once per PATCH_GUARD_INTERVAL: a second patch within
    // it leaves the question answerable, so patching cannot keep it locked...
    let error = |text: &str| JsonObject::try_from(json!({"error": text})).unwrap_or_default();
    window.update(&error("one"), None, true);
    click(x)?;
    ensure!(
        h.wait_for(WAIT, || reported.borrow().len() == 3),
        "a second patch inside the interval restarted the guard"
    );
    // ...and a patch that changes nothing shown restarts nothing either.
    h.settle(PATCH_GUARD_INTERVAL);
    window.update(&error("one"), None, false);
    click(x)?;
    ensure!(
        h.wait_for(WAIT, || reported.borrow().len() == 4),
        "a patch that changed nothing restarted the guard"
    );
    close(h, x, window, xid);
    Ok(())
}

fn shared(h: &mut Harness, x: &X11) -> Outcome {
    let before = lineup_tests::procs::web_processes();
    let process = ComponentProcess::new().map_err(|e| e.to_string())?;
    let options = ComponentOptions::new();
    let reported: Vec<Reported> = vec![Rc::default(), Rc::default(), Rc::default()];
    let mut windows = Vec::new();
    for (i, kind) in [
        ComponentKind::Markdown,
        ComponentKind::Text,
        ComponentKind::Confirm,
    ]
    .into_iter()
    .enumerate()
    {
        let content = match kind {
            ComponentKind::Confirm => sample(kind, json!({"title": "Shared?"}), json!({}), None),
            ComponentKind::Text => sample(kind, json!({}), json!({"text": "t"}), None),
            _ => sample(kind, json!({}), json!({"text": "m"}), Some("**m**")),
        };
        let sink = Rc::clone(&reported[i]);
        let window =
            ComponentWindow::in_process(&h.event_loop, &process, &content, &options, move |a| {
                sink.borrow_mut().push(a);
            })
            .map_err(|e| e.to_string())?;
        windows.push(window);
    }
    let title = component_window_title(ComponentKind::Confirm);
    let mut xid = None;
    ensure!(
        h.wait_for(WAIT, || {
            xid = x.find_window_by_title(&title).filter(|w| x.is_viewable(*w));
            xid.is_some()
        }),
        "the shared confirm was never shown"
    );
    let xid = xid.unwrap_or_default();
    h.settle(std::time::Duration::from_millis(500));
    let now = lineup_tests::procs::web_processes();
    let new: Vec<&u32> = now.difference(&before).collect();
    ensure!(
        new.len() == 1,
        "three windows started {} web processes",
        new.len()
    );
    // Each page rendered through the shared handler: every window was shown (the page's
    // `rendered` reached its own window), and a click answers the confirm alone.
    ensure!(
        h.wait_for(WAIT, || windows[2].accepts_input()),
        "the confirm never took input"
    );
    let (w, hh) = x.window_size(xid).map_err(|e| e.to_string())?;
    let (cx, cy) = (
        i16::try_from(w).unwrap_or(0) - 80,
        i16::try_from(hh).unwrap_or(0) - 27,
    );
    x.click_in(xid, cx, cy).map_err(|e| e.to_string())?;
    ensure!(
        h.wait_for(WAIT, || !reported[2].borrow().is_empty()),
        "the shared confirm's click did not answer"
    );
    ensure!(
        reported[0].borrow().is_empty() && reported[1].borrow().is_empty(),
        "another window heard the confirm's answer"
    );
    for window in windows {
        drop(window);
    }
    h.settle(std::time::Duration::from_millis(300));
    Ok(())
}
