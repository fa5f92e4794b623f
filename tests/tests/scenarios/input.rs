//! Real X input to real Surface webviews under Xvfb: XTEST clicks reach the page (and nothing
//! else), the context menu stays shut, a click-driven `window.open` is refused, a window manager's
//! `WM_DELETE_WINDOW` becomes `UserCloseRequested` (R-UI-5), and child views are laid out where
//! the embedder puts them.
#![allow(clippy::print_stdout, clippy::unwrap_used, missing_docs)]

use std::time::Duration;

use gtk::prelude::*;
use lineup_host::platform::{Placement, SurfaceView, ViewEvent};
use lineup_host::{Rect, ViewConfig};
use lineup_tests::ensure;
use lineup_tests::home::private_home;
use lineup_tests::runner::{Outcome, WAIT};
use lineup_tests::view_harness::{pump, Harness, Log, Page};
use lineup_tests::x11::{xid_of, X11};
use serde_json::json;
use tao::dpi::LogicalSize;
use tao::window::WindowBuilder;

pub(crate) fn run() {
    private_home("input");
    let mut h = Harness::start(ViewConfig::default());
    let x = match X11::connect() {
        Ok(x) => x,
        Err(e) => {
            println!("no X display for the input tests: {e}");
            std::process::exit(1);
        }
    };
    h.run("xtest_click_reaches_the_page_as_trusted_input", |h| {
        real_click(h, &x)
    });
    h.run("context_menu_never_opens", |h| context_menu(h, &x));
    h.run("r_sec_2_window_open_from_a_click_refused", |h| {
        window_open_click(h, &x)
    });
    h.run("r_ui_5_wm_delete_window_is_one_user_close_request", |h| {
        wm_delete(h, &x)
    });
    h.run("child_views_laid_out_and_relaid_in_one_window", |h| {
        child_views(h, &x)
    });
    h.finish();
}

const BUTTON_PAGE: &str = r#"<button id="b" style="position: fixed; left: 40px; top: 30px; width: 140px; height: 60px">Go</button>"#;

/// Reports the button's centre, and every click and context-menu event on it.
const BUTTON_JS: &str = r#"
var b = document.getElementById('b');
b.addEventListener('click', function (e) { post('clicked', { trusted: e.isTrusted }); });
b.addEventListener('contextmenu', function (e) { post('contextmenu', { trusted: e.isTrusted }); });
var r = b.getBoundingClientRect();
post('layout', { x: Math.round(r.left + r.width / 2), y: Math.round(r.top + r.height / 2) });
"#;

/// Opens a one-button page in its own window and returns the button's root coordinates.
fn button_view(
    h: &mut Harness,
    x: &X11,
    page: &Page,
) -> Result<(SurfaceView, Log, (i16, i16)), String> {
    let (view, log) = h.open(page)?;
    // Mapped, laid out and painted before any input goes to it.
    h.settle(Duration::from_millis(400));
    let layout = log
        .first_post("layout")
        .ok_or("the page reported no layout")?;
    let window = view.window().ok_or("a window placement has a window")?;
    let (ox, oy) = x.window_origin(xid_of(window)?)?;
    let bx = i16::try_from(layout["x"].as_i64().unwrap_or(0)).unwrap_or(0);
    let by = i16::try_from(layout["y"].as_i64().unwrap_or(0)).unwrap_or(0);
    Ok((view, log, (ox + bx, oy + by)))
}

fn real_click(h: &mut Harness, x: &X11) -> Outcome {
    let (view, log, (bx, by)) = button_view(h, x, &Page::new(BUTTON_PAGE, BUTTON_JS))?;
    x.click(bx, by)?;
    let clicked = h.wait(&[], || !log.posts("clicked").is_empty());
    ensure!(
        clicked,
        "the click at ({bx}, {by}) never reached the page: {:?}",
        log.events()
    );
    ensure!(
        log.first_post("clicked") == Some(json!({ "trusted": true })),
        "the click was not trusted input: {:?}",
        log.posts("clicked")
    );
    // A click beside the button is not a click on it.
    x.click(bx + 150, by + 100)?;
    h.settle(Duration::from_millis(300));
    ensure!(
        log.posts("clicked").len() == 1,
        "a click off the button counted"
    );
    view.close();
    Ok(())
}

fn visible_popups() -> usize {
    gtk::Window::list_toplevels()
        .into_iter()
        .filter_map(|w| w.downcast::<gtk::Window>().ok())
        .filter(|w| w.window_type() == gtk::WindowType::Popup && w.is_visible())
        .count()
}

fn context_menu(h: &mut Harness, x: &X11) -> Outcome {
    let (view, log, (bx, by)) = button_view(h, x, &Page::new(BUTTON_PAGE, BUTTON_JS))?;
    let popups = visible_popups();
    x.click_button(bx, by, 3)?;
    // Control: the right click did reach the page.
    let reached = h.wait(&[], || !log.posts("contextmenu").is_empty());
    ensure!(
        reached,
        "the right click never reached the page: {:?}",
        log.events()
    );
    h.settle(Duration::from_millis(300));
    ensure!(visible_popups() == popups, "a popup menu opened");
    // An open menu would hold the pointer grab and swallow this click.
    x.click(bx, by)?;
    let clicked = h.wait(&[], || !log.posts("clicked").is_empty());
    ensure!(
        clicked,
        "a left click after the right click was swallowed: {:?}",
        log.events()
    );
    view.close();
    Ok(())
}

const OPEN_ON_CLICK_JS: &str = r#"
var b = document.getElementById('b');
b.addEventListener('click', function () {
  var w = window.open('https://example.com/');
  post('opened', { isNull: w === null });
});
var r = b.getBoundingClientRect();
post('layout', { x: Math.round(r.left + r.width / 2), y: Math.round(r.top + r.height / 2) });
"#;

fn window_open_click(h: &mut Harness, x: &X11) -> Outcome {
    for page in [
        Page::new(BUTTON_PAGE, OPEN_ON_CLICK_JS),
        // Positive control: without the CSP sandbox the popup reaches the shell, which refuses it.
        Page::new(BUTTON_PAGE, OPEN_ON_CLICK_JS).without_csp(),
    ] {
        let (view, log, (bx, by)) = button_view(h, x, &page)?;
        let windows = gtk::Window::list_toplevels().len();
        x.click(bx, by)?;
        let opened = h.wait(&[], || !log.posts("opened").is_empty());
        ensure!(
            opened,
            "the click did not run window.open: {:?}",
            log.events()
        );
        ensure!(
            log.first_post("opened") == Some(json!({ "isNull": true })),
            "window.open returned a window: {:?}",
            log.posts("opened")
        );
        if page.no_csp {
            let refused = h.wait(&[], || {
                log.has(|e| *e == ViewEvent::NewWindowRefused("https://example.com/".to_owned()))
            });
            ensure!(
                refused,
                "control: the shell did not refuse the popup: {:?}",
                log.events()
            );
        }
        h.settle(Duration::from_millis(300));
        ensure!(
            gtk::Window::list_toplevels().len() == windows,
            "a new window appeared"
        );
        view.close();
    }
    Ok(())
}

fn wm_delete(h: &mut Harness, x: &X11) -> Outcome {
    let echo = "LineUpSurface.onState(function (s) { post('echo', s); });";
    let (view, log) = h.open(&Page::new("<p>close me</p>", echo))?;
    h.settle(Duration::from_millis(200));
    let window = view.window().ok_or("a window placement has a window")?;
    x.request_close(xid_of(window)?)?;
    let requested = pump(&mut h.event_loop, &[&view], WAIT, || {
        log.has(|e| *e == ViewEvent::UserCloseRequested)
    });
    ensure!(requested, "no UserCloseRequested: {:?}", log.events());
    pump(
        &mut h.event_loop,
        &[&view],
        Duration::from_millis(300),
        || false,
    );
    ensure!(
        log.count(|e| *e == ViewEvent::UserCloseRequested) == 1,
        "one WM_DELETE_WINDOW must give exactly one close request: {:?}",
        log.events()
    );
    // The shell decides nothing: the window and its page are still there.
    ensure!(
        view.window().is_some_and(|w| w.is_visible()),
        "the window went away"
    );
    view.deliver_state(r#"{"still":"open"}"#)
        .map_err(|e| e.to_string())?;
    let alive = h.wait(&[], || !log.posts("echo").is_empty());
    ensure!(
        alive,
        "the page is gone after the close request: {:?}",
        log.events()
    );
    view.close();
    Ok(())
}

const CHILD_PAGE: &str = r#"<button id="b" style="position: fixed; left: 0; top: 0; width: 100%; height: 100%">child</button>"#;

const CHILD_JS: &str = r#"
function size() { post('size', { w: innerWidth, h: innerHeight }); }
size();
addEventListener('resize', size);
document.getElementById('b').addEventListener('click', function () { post('clicked', {}); });
"#;

fn last_size(log: &Log) -> Option<serde_json::Value> {
    log.posts("size").into_iter().last()
}

fn child_views(h: &mut Harness, x: &X11) -> Outcome {
    let parent = WindowBuilder::new()
        .with_title("embedder")
        .with_inner_size(LogicalSize::new(600, 320))
        .build(&h.event_loop)
        .map_err(|e| e.to_string())?;
    let left_bounds = Rect {
        x: 0,
        y: 0,
        width: 300,
        height: 300,
    };
    let right_bounds = Rect {
        x: 300,
        y: 0,
        width: 300,
        height: 300,
    };
    let page = Page::new(CHILD_PAGE, CHILD_JS);
    let (left, left_log) = h.open_at(
        &page,
        Placement::Child {
            parent: &parent,
            bounds: left_bounds,
        },
    )?;
    let (right, right_log) = h.open_at(
        &page,
        Placement::Child {
            parent: &parent,
            bounds: right_bounds,
        },
    )?;
    let sized = h.wait(&[], || {
        last_size(&left_log) == Some(json!({ "w": 300, "h": 300 }))
            && last_size(&right_log) == Some(json!({ "w": 300, "h": 300 }))
    });
    ensure!(
        sized,
        "children not at their bounds: left {:?} right {:?}",
        left_log.posts("size"),
        right_log.posts("size")
    );

    // Re-layout: the right view shrinks to 200x150.
    right
        .set_bounds(Rect {
            x: 300,
            y: 0,
            width: 200,
            height: 150,
        })
        .map_err(|e| e.to_string())?;
    let resized = h.wait(&[], || {
        last_size(&right_log) == Some(json!({ "w": 200, "h": 150 }))
    });
    ensure!(
        resized,
        "set_bounds did not resize: {:?}",
        right_log.posts("size")
    );
    h.settle(Duration::from_millis(300));

    // Clicks land in the view under the pointer, and nowhere once the pointer is off both.
    let (ox, oy) = x.window_origin(xid_of(&parent)?)?;
    x.click(ox + 400, oy + 75)?;
    ensure!(
        h.wait(&[], || !right_log.posts("clicked").is_empty()),
        "the click inside the right view missed it"
    );
    x.click(ox + 150, oy + 150)?;
    ensure!(
        h.wait(&[], || !left_log.posts("clicked").is_empty()),
        "the click inside the left view missed it"
    );
    x.click(ox + 450, oy + 250)?;
    h.settle(Duration::from_millis(300));
    ensure!(
        left_log.posts("clicked").len() == 1 && right_log.posts("clicked").len() == 1,
        "a click outside both views reached one: left {} right {}",
        left_log.posts("clicked").len(),
        right_log.posts("clicked").len()
    );
    left.close();
    right.close();
    drop(parent);
    Ok(())
}
