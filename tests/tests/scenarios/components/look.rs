//! What the component pages show: the theme's colours on screen and in the page (R-STD-9),
//! roles and names (R-STD-12), and no handler, link, source, class or style from hostile text,
//! nor any request from an image or link in a Markdown sink (R-STD-10).

use std::time::Duration;

use lineup_host::platform::SnapshotElement;
use lineup_host::{apply_theme, ComponentOptions, Theme};
use lineup_host_core::ComponentKind;
use lineup_tests::canary::Canary;
use lineup_tests::ensure;
use lineup_tests::runner::{Outcome, WAIT};
use lineup_tests::view_harness::Harness;
use lineup_tests::x11::X11;
use serde_json::{json, Value};

use super::{catalog, close, sample, show};

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

pub(super) fn themed(h: &mut Harness, x: &X11) -> Outcome {
    // Light and dark, each regular and high contrast (§5 check 15).
    let themes = [
        (
            Theme::Light,
            false,
            [0xff, 0xff, 0xff],
            [0x0a, 0x66, 0xd8],
            "#0a66d8",
        ),
        (
            Theme::Dark,
            false,
            [0x1e, 0x1f, 0x22],
            [0x5e, 0xa1, 0xff],
            "#5ea1ff",
        ),
        (
            Theme::Light,
            true,
            [0xff, 0xff, 0xff],
            [0x00, 0x00, 0xc0],
            "#0000c0",
        ),
        (
            Theme::Dark,
            true,
            [0x00, 0x00, 0x00],
            [0xff, 0xff, 0x00],
            "#ffff00",
        ),
    ];
    for (theme, high_contrast, background, accent, accent_css) in themes {
        let options = ComponentOptions::new().with_high_contrast(high_contrast);
        apply_theme(theme);
        for sample in catalog() {
            let kind = sample.content.kind;
            let (window, xid, snapshot) = show(h, x, &sample.content, &options)?;
            for text in &sample.shows {
                ensure!(
                    snapshot.text.contains(text),
                    "{theme:?} (high contrast {high_contrast}) {kind}: {text:?} is not in the page's text"
                );
            }
            ensure!(
                snapshot.background == css(background) && snapshot.accent == accent_css,
                "{theme:?} (high contrast {high_contrast}) {kind}: background {} accent {}",
                snapshot.background,
                snapshot.accent
            );
            let (ox, oy) = x.window_origin(xid).map_err(|e| e.to_string())?;
            // The window maps once the page rendered; its first frame may follow a moment later.
            let painted = h.wait_for(Duration::from_secs(5), || {
                x.pixel(ox + 3, oy + 3)
                    .is_ok_and(|p| near(p, background, 2))
            });
            let pixel = x.pixel(ox + 3, oy + 3).map_err(|e| e.to_string())?;
            ensure!(
                painted,
                "{theme:?} (high contrast {high_contrast}) {kind}: the screen shows {pixel:?} where the background is"
            );
            if let Some(id) = accent_element(kind) {
                let [bx, by, _, bh] = snapshot.boxes.get(id).copied().unwrap_or_default();
                let (px, py) = (ox + (bx + 8.0) as i16, oy + (by + bh / 2.0) as i16);
                let pixel = x.pixel(px, py).map_err(|e| e.to_string())?;
                ensure!(
                    near(pixel, accent, 8),
                    "{theme:?} (high contrast {high_contrast}) {kind}: the screen shows {pixel:?} inside #{id}, not {accent:?}"
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

pub(super) fn labelled(h: &mut Harness, x: &X11) -> Outcome {
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

pub(super) fn hostile(h: &mut Harness, x: &X11) -> Outcome {
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

pub(super) fn no_fetch(h: &mut Harness, x: &X11) -> Outcome {
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
