//! R-STD-11 in the built-in renderer's page (§5 check 3): a link that passed the URL policy is
//! a control showing its text and its punycode host; `javascript:` and userinfo links are inert
//! text, and under the kiosk's policy every link is; using the control reports the link only
//! with a real input event after the guard delay (a page-made report is dropped), by pointer and
//! by keyboard. What the host then does (its link confirm, the audit, the desktop) is checked
//! through a real host in the `embedder_components` group.

use std::time::Duration;

use lineup_host::platform::{ComponentAction, ComponentWindow};
use lineup_host::ComponentOptions;
use lineup_host_core::{parse_markdown, ComponentKind, InputKind, LinkPolicy};
use lineup_tests::ensure;
use lineup_tests::runner::{Outcome, WAIT};
use lineup_tests::view_harness::Harness;
use lineup_tests::x11::X11;
use serde_json::json;

use super::{close, mapped, read, recorded, sample};

const TEXT: &str = "Read [the guide](https://Bücher.example/guide) or [this](javascript:alert(1)) \
    or [bank](https://bank.example@evil.example/).";
const URL: &str = "https://xn--bcher-kva.example/guide";

/// Keysyms: Tab, space.
const TAB: u32 = 0xff09;
const SPACE: u32 = 0x20;

pub(super) fn links(h: &mut Harness, x: &X11) -> Outcome {
    let content = sample(
        ComponentKind::Markdown,
        json!({}),
        json!({"text": "x"}),
        Some(TEXT),
    );
    let (window, reported) = recorded(h, &content)?;
    let xid = mapped(h, x, ComponentKind::Markdown)?;
    h.settle(Duration::from_millis(300));
    let snapshot = read(h, &window)?;
    let controls: Vec<_> = snapshot.with_role("link").collect();
    ensure!(
        controls.len() == 1,
        "one live link expected, found {:?}",
        controls.iter().map(|e| &e.name).collect::<Vec<_>>()
    );
    let name = &controls[0].name;
    ensure!(
        name.contains("the guide") && name.contains("(xn--bcher-kva.example)"),
        "the link's name is not its text and punycode host: {name:?}"
    );
    ensure!(
        snapshot
            .elements
            .iter()
            .all(|e| !e.attributes.contains_key("href")),
        "an element has an href"
    );
    ensure!(
        snapshot.text.contains("this") && snapshot.text.contains("bank"),
        "the inert links' text is missing: {:?}",
        snapshot.text
    );
    ensure!(
        !snapshot.text.contains("evil.example"),
        "the userinfo link shows a host: {:?}",
        snapshot.text
    );
    ensure!(
        h.wait_for(WAIT, || window.accepts_input()),
        "the guard never opened"
    );

    // The page reports the link with no input event behind it: dropped.
    window.post_from_page_for_test(&json!({"type": "link", "url": URL}).to_string());
    h.settle(Duration::from_millis(600));
    ensure!(
        reported.borrow().is_empty(),
        "a page-made link report got through: {:?}",
        reported.borrow()
    );

    // A real click on the control reports it, by pointer (the positive control).
    let [bx, by, bw, bh] = snapshot
        .boxes
        .get("link-1")
        .copied()
        .ok_or("the link control has no box")?;
    let at = |v: f64| i16::try_from(v.round() as i64).unwrap_or(0);
    x.click_in(xid, at(bx + bw.min(40.0) / 2.0), at(by + bh / 2.0))
        .map_err(|e| e.to_string())?;
    ensure!(
        h.wait_for(WAIT, || reported.borrow().len() == 1),
        "a real click on the link reported nothing"
    );
    let first = reported.borrow()[0].clone();
    ensure!(
        first
            == ComponentAction::Link {
                url: URL.to_owned(),
                input: InputKind::Pointer
            },
        "{first:?}"
    );

    // And from the keyboard: the control takes the focus, Space uses it.
    for _ in 0..4 {
        if read(h, &window)?.focused == "link-1" {
            break;
        }
        x.key(TAB).map_err(|e| e.to_string())?;
        h.settle(Duration::from_millis(100));
    }
    ensure!(
        read(h, &window)?.focused == "link-1",
        "the link never took the keyboard focus"
    );
    x.key(SPACE).map_err(|e| e.to_string())?;
    ensure!(
        h.wait_for(WAIT, || reported.borrow().len() == 2),
        "Space on the link reported nothing"
    );
    let second = reported.borrow()[1].clone();
    ensure!(
        matches!(&second, ComponentAction::Link { url, input: InputKind::Keyboard } if url == URL),
        "{second:?}"
    );
    close(h, x, window, xid);

    // The kiosk's policy: no control at all, the text stays.
    let mut off = content.clone();
    off.markdown = Some(parse_markdown(TEXT, LinkPolicy::Off));
    let window = ComponentWindow::new(&h.event_loop, &off, &ComponentOptions::new(), |_| {})
        .map_err(|e| e.to_string())?;
    let xid = mapped(h, x, ComponentKind::Markdown)?;
    h.settle(Duration::from_millis(300));
    let snapshot = read(h, &window)?;
    ensure!(
        snapshot.with_role("link").count() == 0 && snapshot.text.contains("the guide"),
        "under the kiosk's policy a link is live or its text is gone: {:?}",
        snapshot.text
    );
    close(h, x, window, xid);
    Ok(())
}
