//! R-STD-13 in an embedder's window: with Surfaces as child views, the built-in renderer puts a
//! component in the same window, where the delegate places it (the default column at the right
//! edge), over the Surface under it: the screen shows the component there and the Surface
//! elsewhere; a click on the component never reaches the Surface (a click beside it does: the
//! positive control); the component answers from the keyboard after a click into it; an agent's
//! close uncovers the Surface again.

use std::rc::Rc;
use std::time::Duration;

use lineup_host::tao::dpi::LogicalSize;
use lineup_host::tao::window::WindowBuilder;
use lineup_host::{ComponentOptions, HostBuilder, COMPONENT_COLUMN_WIDTH, COMPONENT_GAP};
use lineup_tests::ensure;
use lineup_tests::host_harness::{test_app, HostHarness};
use lineup_tests::runner::Outcome;
use lineup_tests::x11::{xid_of, X11};
use serde_json::json;

/// The Surface's page: all green; each pointer press is an event.
const GREEN_JS: &str = "document.documentElement.style.background = 'rgb(0, 192, 0)';\
    document.body.style.height = '100vh';\
    document.addEventListener('pointerdown', function () {\
      LineUpSurface.event('clicked', {});\
    }, true);";

/// Keysyms: Tab, space.
const TAB: u32 = 0xff09;
const SPACE: u32 = 0x20;

fn green(p: [u8; 3]) -> bool {
    p[0] < 40 && p[1] > 150 && p[2] < 40
}

pub(super) fn in_the_window(h: &mut HostHarness) -> Outcome {
    let x = X11::connect().map_err(|e| e.to_string())?;
    let (w, hgt) = (720u32, 400u32);
    let parent = Rc::new(
        WindowBuilder::new()
            .with_title("lineup embedder with components")
            .with_inner_size(LogicalSize::new(w, hgt))
            .build(&h.event_loop)
            .map_err(|e| e.to_string())?,
    );
    let mut t = h.host(
        HostBuilder::new()
            .child_views_in(Rc::clone(&parent))
            .builtin_components(Some(ComponentOptions::default())),
    )?;
    h.open(
        &mut t,
        "under",
        test_app("under", "<p></p>", GREEN_JS),
        None,
    )?;
    t.send(t.agent.envelope(
        "lineup.v1.ui.open",
        json!({"instance_id": "k1", "component": {"id": "confirm", "version": "1",
               "props": {"title": "Restart the worker?", "confirm_label": "Restart"}}}),
    ))?;
    ensure!(
        h.wait(&mut t, |host, _| host
            .shown_components()
            .iter()
            .any(|k| k.instance.as_str() == "k1")),
        "the confirm was never shown: {:?}",
        t.rec.sent()
    );
    let (ox, oy) = x.window_origin(xid_of(&parent)?)?;
    let at = |dx: u32, dy: u32| {
        (
            ox + i16::try_from(dx).unwrap_or(0),
            oy + i16::try_from(dy).unwrap_or(0),
        )
    };
    // The default column: COMPONENT_COLUMN_WIDTH wide, COMPONENT_GAP from the right and top.
    let column_x = w - COMPONENT_COLUMN_WIDTH - COMPONENT_GAP;
    let inside = at(column_x + 30, COMPONENT_GAP + 12);
    let beside = at(40, 40);
    // The component is painted over the Surface when the board's page has drawn it, which a
    // loaded machine delays: wait for the picture, not a fixed time...
    let painted = |x: &X11| x.pixel(inside.0, inside.1).is_ok_and(|p| !green(p));
    // ...and the Surface's page beside it, which may come later still.
    h.wait(&mut t, |_, _| {
        painted(&x) && x.pixel(beside.0, beside.1).is_ok_and(green)
    });
    let shown = x.pixel(inside.0, inside.1)?;
    let surface = x.pixel(beside.0, beside.1)?;
    ensure!(
        green(surface),
        "the Surface is not on screen beside the component: {surface:?}"
    );
    ensure!(
        !green(shown),
        "the Surface's pixels show where the component is: {shown:?}"
    );

    // A click on the component reaches it, not the Surface under it.
    x.click(inside.0, inside.1)?;
    h.settle(&mut t, Duration::from_millis(900));
    ensure!(
        t.rec.events_named("clicked").is_empty(),
        "a click on the component reached the Surface"
    );
    // From the keyboard, after the guard: Tab until the confirm button has the focus (how many
    // Tabs that takes depends on where the click left GTK's focus: the view, or its page), read
    // from the page, then Space answers.
    let k1 = t
        .host
        .shown_components()
        .into_iter()
        .find(|k| k.instance.as_str() == "k1")
        .ok_or("k1 is not shown")?;
    let mut focused = String::new();
    for _ in 0..6 {
        x.key(TAB)?;
        h.settle(&mut t, Duration::from_millis(80));
        focused = super::read_box(h, &mut t, &k1)?.focused;
        if focused == "confirm" {
            break;
        }
    }
    ensure!(
        focused == "confirm",
        "Tab never took the focus to the confirm button: {focused:?}"
    );
    x.key(SPACE)?;
    ensure!(
        h.wait(&mut t, |_, rec| !rec.events_named("submit").is_empty()),
        "no submit: {:?}",
        t.rec.ui_events()
    );
    let submit = t.rec.events_named("submit")[0].clone();
    ensure!(
        submit["instance_id"] == "k1"
            && submit["data"]["answer"] == true
            && submit["data"]["via"] == "host"
            && submit["data"]["input"] == "keyboard",
        "{submit}"
    );
    // The positive control: a click beside the component reaches the Surface.
    x.click(beside.0, beside.1)?;
    ensure!(
        h.wait(&mut t, |_, rec| !rec.events_named("clicked").is_empty()),
        "a click on the Surface did not reach it"
    );
    // The agent's close uncovers the Surface; nothing goes upstream for it (R-UI-5).
    t.send(
        t.agent
            .envelope("lineup.v1.ui.close", json!({"instance_id": "k1"})),
    )?;
    ensure!(
        h.wait(&mut t, |host, _| host.shown_components().is_empty()),
        "the confirm is still shown"
    );
    h.wait(&mut t, |_, _| !painted(&x));
    let after = x.pixel(inside.0, inside.1)?;
    ensure!(
        green(after),
        "the closed component's pixels are still on screen: {after:?}"
    );
    ensure!(
        t.rec
            .ui_events_where(|p| p["instance_id"] == "k1" && p["event"] == "close")
            .is_empty(),
        "an agent's close was answered"
    );
    let result = h.shut_down(t);
    drop(parent);
    result
}
