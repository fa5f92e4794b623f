//! #49: conversations as the unit an app shows and hides. Two conversations in an embedder's
//! window, each with a `confirm` in the default column (the same place): the one hidden from the
//! start is not shown and takes no click; after a switch, a real click at once where both
//! questions sit answers neither (the hidden one takes no input, the shown one's guard started
//! again when it was shown, R-STD-8 (a), (b)); the same click after the guard answers the shown
//! one only (the positive control).

use std::rc::Rc;
use std::time::Duration;

use lineup_host::tao::dpi::LogicalSize;
use lineup_host::tao::window::WindowBuilder;
use lineup_host::{ComponentOptions, ConversationItem, HostBuilder};
use lineup_host::{COMPONENT_COLUMN_WIDTH, COMPONENT_GAP};
use lineup_host_core::{ConversationId, SurfaceKey};
use lineup_tests::ensure;
use lineup_tests::host_harness::{Agent, HostHarness, TestHost};
use lineup_tests::runner::Outcome;
use lineup_tests::x11::{xid_of, X11};
use serde_json::json;

fn confirm(agent: &Agent, instance: &str, title: &str) -> Vec<u8> {
    agent.envelope(
        "lineup.v1.ui.open",
        json!({"instance_id": instance, "component": {"id": "confirm", "version": "1",
               "props": {"title": title, "confirm_label": "Yes"}}}),
    )
}

/// The box of `key`'s confirm button, read from its page.
fn button(h: &mut HostHarness, t: &mut TestHost, key: &SurfaceKey) -> Result<[f64; 4], String> {
    super::read_box(h, t, key)?
        .boxes
        .get("confirm")
        .copied()
        .ok_or_else(|| "no confirm button".to_owned())
}

fn submits(t: &TestHost, instance: &str) -> usize {
    t.rec.count(instance, "submit")
}

pub(super) fn switched(h: &mut HostHarness) -> Outcome {
    let x = X11::connect().map_err(|e| e.to_string())?;
    let (w, hgt) = (720u32, 480u32);
    let parent = Rc::new(
        WindowBuilder::new()
            .with_title("lineup embedder with two conversations")
            .with_inner_size(LogicalSize::new(w, hgt))
            .build(&h.event_loop)
            .map_err(|e| e.to_string())?,
    );
    let mut t = h.host(
        HostBuilder::new()
            .child_views_in(Rc::clone(&parent))
            .builtin_components(Some(ComponentOptions::default())),
    )?;
    let (a, b) = (Agent::new("conv-a"), Agent::new("conv-b"));
    let conv_a = ConversationId::try_from("conv-a").map_err(|e| format!("{e:?}"))?;
    let conv_b = ConversationId::try_from("conv-b").map_err(|e| format!("{e:?}"))?;
    // Hidden before its first envelope: what it opens starts hidden.
    t.host.set_conversation_visible(&conv_b, false);
    t.send(confirm(&a, "ka", "Question A?"))?;
    t.send(confirm(&b, "kb", "Question B?"))?;
    let mut keys = (None, None);
    ensure!(
        h.wait(&mut t, |host, _| {
            let find = |c: &ConversationId| {
                host.conversation_items(c)
                    .into_iter()
                    .find_map(|i| match i {
                        ConversationItem::Component(k) => Some(k),
                        _ => None,
                    })
            };
            keys = (find(&conv_a), find(&conv_b));
            keys.0.is_some() && keys.1.is_some()
        }),
        "the two questions were never listed: {:?}",
        t.rec.sent()
    );
    let (ka, kb) = (keys.0.ok_or("no a")?, keys.1.ok_or("no b")?);
    ensure!(
        h.wait(&mut t, |host, _| host.shown_components().contains(&ka)),
        "the shown conversation's question was never shown"
    );
    ensure!(
        !t.host.shown_components().contains(&kb),
        "the hidden conversation's question is shown"
    );
    h.settle(&mut t, Duration::from_millis(900));
    let [bx, by, bw, bh] = button(h, &mut t, &ka)?;
    let (ox, oy) = x
        .window_origin(xid_of(&parent)?)
        .map_err(|e| e.to_string())?;
    let column_x = f64::from(w - COMPONENT_COLUMN_WIDTH - COMPONENT_GAP);
    let to = |v: f64| i16::try_from(v.round() as i64).unwrap_or(i16::MAX);
    let at = (
        ox + to(column_x + bx + bw / 2.0),
        oy + to(f64::from(COMPONENT_GAP) + by + bh / 2.0),
    );

    // The switch, then a click at once where both questions sit: neither answers.
    t.host.set_conversation_visible(&conv_a, false);
    t.host.set_conversation_visible(&conv_b, true);
    h.settle(&mut t, Duration::from_millis(100));
    x.click(at.0, at.1).map_err(|e| e.to_string())?;
    h.settle(&mut t, Duration::from_millis(700));
    ensure!(
        submits(&t, "ka") == 0 && submits(&t, "kb") == 0,
        "a click right after the switch answered: {:?}",
        t.rec.ui_events()
    );
    ensure!(
        t.host.shown_components().contains(&kb) && !t.host.shown_components().contains(&ka),
        "after the switch the shown questions are {:?}",
        t.host.shown_components()
    );
    // The positive control: after the guard, the shown one alone answers.
    h.settle(&mut t, Duration::from_millis(600));
    x.click(at.0, at.1).map_err(|e| e.to_string())?;
    ensure!(
        h.wait(&mut t, |_, rec| rec.count("kb", "submit") == 1),
        "a click after the guard did not answer the shown question: {:?}",
        t.rec.ui_events()
    );
    ensure!(submits(&t, "ka") == 0, "the hidden question answered");
    let shut = h.shut_down(t);
    drop(parent);
    shut
}
