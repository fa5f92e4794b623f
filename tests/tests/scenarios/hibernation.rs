//! Many Surfaces at the memory of the few on screen (#29), through a real host whose Surfaces
//! are child views of the test's window, with `max_live_surfaces` 2 so every rule shows with a
//! few real webviews:
//! - a hidden Surface hibernates when another needs a web process (its view and web process
//!   go; it stays open), and the least recently shown hidden one goes first;
//! - shown again it wakes: the picture of what it last showed is on screen before its new page
//!   says `ready` (that page spends its first 1.5 s busy), then the page gets the state of the
//!   last patch sent while it slept, never an older one; no event is lost or delivered twice;
//! - a hidden Surface with presses since its state was last set is not hibernated: the open
//!   that needs its room is refused `too_many_live_surfaces` naming the limit, and after a patch
//!   it hibernates (the positive control);
//! - hibernated Surfaces are open: `max_surfaces` counts them, and the agent's close ends one
//!   with nothing upstream (R-UI-5);
//! - a wake that cannot get a webview (the process's cap on webviews reached by Surfaces shown
//!   past the live cap) closes that Surface `crashed` upstream, once, and leaves the others;
//! - a hibernated Surface of an installed app still closes `app_disabled` when the app center
//!   disables its app (R-INV-4);
//! - a hibernated Surface's record brings it back after a restart (`restart.rs`).
#![allow(clippy::print_stdout, clippy::unwrap_used, missing_docs)]

mod restart;

use std::rc::Rc;
use std::time::{Duration, Instant};

use lineup_host::protocol::{
    AppCatalog, AppId, AppVersion, Assets, CatalogRefusal, DeclaredSurface, EventName, InlineApp,
    InlineBundle, InventoryApp, Limits, ListedApp, Reservation, ResolvedSurface, SourceFiles,
    SurfaceId,
};
use lineup_host::tao::dpi::LogicalSize;
use lineup_host::tao::window::{Window, WindowBuilder};
use lineup_host::{window_pixels, HostBuilder};
use lineup_tests::ensure;
use lineup_tests::home::private_home;
use lineup_tests::host_harness::{test_app, HostHarness, Recorder, TestHost};
use lineup_tests::runner::Outcome;
use lineup_tests::x11::{xid_of, X11};
use serde_json::{json, Value};

pub(crate) fn run() {
    private_home("hibernation");
    let mut h = HostHarness::start();
    h.run(
        "hidden_surfaces_hibernate_least_recently_shown_first_and_wake_with_the_latest_state",
        hibernate_and_wake,
    );
    h.run(
        "hidden_for_the_delay_a_surface_hibernates_unless_it_holds_input_which_the_embedder_may_force",
        after_a_delay,
    );
    h.run(
        "a_wake_that_gets_no_webview_closes_the_surface_crashed",
        a_failed_wake,
    );
    h.run(
        "a_hibernated_app_surface_closes_app_disabled_when_its_app_is_disabled",
        app_disabled_while_hibernated,
    );
    h.run(
        "a_hibernated_surface_comes_back_after_a_restart_with_its_last_state",
        restart::a_hibernated_surface_comes_back_after_a_restart,
    );
    h.finish();
}

/// The page: busy for its first 1.5 s (so its `ready` comes late), then paints the state's
/// colour and says so.
const PAGE_JS: &str = "var t0 = Date.now(); while (Date.now() - t0 < 1500) {}\
    document.body.style.height = '100vh';\
    LineUpSurface.onState(function (s) {\
      document.documentElement.style.background = s.color;\
      LineUpSurface.event('painted', { color: s.color });\
    });";

const RED: [u8; 3] = [200, 40, 40];
const BLUE: [u8; 3] = [40, 80, 200];
const GREEN: [u8; 3] = [40, 170, 60];
const PURPLE: [u8; 3] = [130, 40, 160];

fn css(c: [u8; 3]) -> String {
    format!("rgb({}, {}, {})", c[0], c[1], c[2])
}

/// How many pixels of `parent` show `colour` now.
fn on_screen(parent: &Window, colour: [u8; 3]) -> usize {
    window_pixels(parent)
        .map(|p| p.count_near([0, 0, p.width(), p.height()], colour, 12))
        .unwrap_or(0)
}

/// Lets the loop run until `parent` shows `colour` on more than 1,000 pixels, for at most
/// five seconds (painting makes no event the harness would wake for, so it looks every 50 ms).
fn shows(h: &mut HostHarness, t: &mut TestHost, parent: &Window, colour: [u8; 3]) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(5) {
        if on_screen(parent, colour) > 1000 {
            return true;
        }
        h.settle(t, Duration::from_millis(50));
    }
    false
}

/// The colours `instance`'s page reported painting, in order.
fn painted(rec: &Recorder, instance: &str) -> Vec<String> {
    rec.data(instance, "painted")
        .iter()
        .map(|d| d["color"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// The `client.error`s sent so far: (code, limit).
fn refusals(rec: &Recorder) -> Vec<(String, Value)> {
    rec.sent()
        .into_iter()
        .filter(|m| m["type"] == "lineup.v1.client.error")
        .map(|m| {
            (
                m["payload"]["code"].as_str().unwrap_or_default().to_owned(),
                m["payload"]["limit"].clone(),
            )
        })
        .collect()
}

fn open(h: &mut HostHarness, t: &mut TestHost, instance: &str, colour: [u8; 3]) -> Outcome {
    h.open(
        t,
        instance,
        test_app(instance, "<p></p>", PAGE_JS),
        Some(json!({"color": css(colour)})),
    )?;
    ensure!(
        h.wait(t, |_, rec| painted(rec, instance).len() == 1),
        "{instance} never painted"
    );
    Ok(())
}

/// The test's 600 × 300 window titled `title`.
fn parent_window(h: &HostHarness, title: &str) -> Result<Rc<Window>, String> {
    WindowBuilder::new()
        .with_title(title)
        .with_inner_size(LogicalSize::new(600u32, 300u32))
        .build(&h.event_loop)
        .map(Rc::new)
        .map_err(|e| e.to_string())
}

/// The test's 600 × 300 window titled `title`, and a host whose Surfaces are its child views,
/// under `limits`.
fn window_host(
    h: &mut HostHarness,
    title: &str,
    limits: Limits,
) -> Result<(Rc<Window>, TestHost), String> {
    let parent = parent_window(h, title)?;
    let t = h.host(
        HostBuilder::new()
            .child_views_in(Rc::clone(&parent))
            .limits(limits),
    )?;
    Ok((parent, t))
}

fn hibernate_and_wake(h: &mut HostHarness) -> Outcome {
    let x = X11::connect().map_err(|e| e.to_string())?;
    let mut limits = Limits::default();
    limits.max_live_surfaces = 2;
    limits.max_surfaces = 4;
    let (parent, mut t) = window_host(h, "lineup hibernation", limits)?;
    open(h, &mut t, "a", RED)?;
    open(h, &mut t, "b", BLUE)?;
    let key = |t: &TestHost, i: &str| t.key(i).ok_or(format!("no key for {i}"));
    let (a, b) = (key(&t, "a")?, key(&t, "b")?);
    ensure!(shows(h, &mut t, &parent, RED), "a is not on screen");

    // A hidden Surface hibernates when a third needs a web process.
    t.host.set_surface_visible(&a, false);
    open(h, &mut t, "c", GREEN)?;
    let c = key(&t, "c")?;
    ensure!(
        t.host.is_hibernated(&a) && t.host.view(&a).is_none(),
        "a hidden Surface did not hibernate"
    );
    ensure!(
        t.host.surfaces().contains(&a),
        "a hibernated Surface is not open any more"
    );
    // Patches while it sleeps: only the latest may reach its next page.
    t.send(t.agent.patch("a", json!({"color": "rgb(230, 200, 20)"})))?;
    t.send(t.agent.patch("a", json!({"color": css(PURPLE)})))?;
    h.settle(&mut t, Duration::from_millis(200));

    // Both others hidden, b shown longer ago: showing a hibernates b, not c.
    t.host.set_surface_visible(&b, false);
    t.host.set_surface_visible(&c, false);
    t.host.set_surface_visible(&a, true);
    let woke = Instant::now();
    ensure!(
        h.wait(&mut t, |host, _| host.view(&a).is_some()),
        "a was not woken"
    );
    ensure!(
        t.host.is_hibernated(&b) && !t.host.is_hibernated(&c),
        "the least recently shown hidden Surface (b) was not the one hibernated"
    );
    // Before its page's `ready` (1.5 s away), its picture stands in.
    let mut picture = false;
    while woke.elapsed() < Duration::from_millis(1200) && !picture {
        h.settle(&mut t, Duration::from_millis(50));
        picture = on_screen(&parent, RED) > 1000;
    }
    ensure!(
        picture && painted(&t.rec, "a").len() == 1,
        "the picture did not stand in before the woken page was ready"
    );
    // Then the page gets the latest state, once; nothing older, nothing twice.
    ensure!(
        h.wait(&mut t, |_, rec| painted(rec, "a").len() == 2),
        "the woken page never painted"
    );
    let colours = painted(&t.rec, "a");
    ensure!(
        colours == [css(RED), css(PURPLE)],
        "a's pages painted {colours:?}"
    );
    ensure!(
        shows(h, &mut t, &parent, PURPLE),
        "the woken Surface does not show its latest state"
    );
    ensure!(
        painted(&t.rec, "b") == [css(BLUE)] && painted(&t.rec, "c") == [css(GREEN)],
        "events of the others were lost or repeated: {:?} {:?}",
        painted(&t.rec, "b"),
        painted(&t.rec, "c")
    );

    // A hidden Surface with presses since its state was set is not hibernated.
    t.host.set_surface_visible(&c, true);
    h.settle(&mut t, Duration::from_millis(400));
    let (ox, oy) = x.window_origin(xid_of(&parent)?)?;
    x.click(ox + 560, oy + 150)?; // the right column: c
    h.settle(&mut t, Duration::from_millis(200));
    t.host.set_surface_visible(&c, false);
    t.send(t.agent.open("d", test_app("d", "<p></p>", PAGE_JS), None))?;
    ensure!(
        h.wait(&mut t, |_, rec| !refusals(rec).is_empty()),
        "an open past the live cap with nothing to hibernate was not refused"
    );
    ensure!(
        refusals(&t.rec) == [("too_many_live_surfaces".to_owned(), json!(2))]
            && !t.host.is_hibernated(&c),
        "{:?}",
        refusals(&t.rec)
    );
    // A patch sets its state: now it may hibernate (the positive control).
    t.send(t.agent.patch("c", json!({"color": css(GREEN)})))?;
    h.settle(&mut t, Duration::from_millis(300));
    open(h, &mut t, "e", BLUE)?;
    ensure!(
        t.host.is_hibernated(&c),
        "c did not hibernate after its patch"
    );

    // Hibernated Surfaces are open: a, b, c and e fill max_surfaces 4.
    t.send(t.agent.open("f", test_app("f", "<p></p>", PAGE_JS), None))?;
    ensure!(
        h.wait(&mut t, |_, rec| refusals(rec).len() == 2),
        "a fifth open was not refused"
    );
    ensure!(
        refusals(&t.rec)[1] == ("too_many_surfaces".to_owned(), json!(4)),
        "{:?}",
        refusals(&t.rec)
    );
    // The agent closes a hibernated Surface: it is gone, and nothing goes upstream for it.
    let sent = t.rec.sent_count();
    t.send(t.agent.close("b", "done"))?;
    ensure!(
        h.wait(&mut t, |host, _| !host.surfaces().contains(&b)),
        "a hibernated Surface stayed open after the agent closed it"
    );
    h.settle(&mut t, Duration::from_millis(200));
    ensure!(
        !t.host.is_hibernated(&b) && t.rec.sent_count() == sent,
        "closing a hibernated Surface sent {:?}",
        &t.rec.sent()[sent..]
    );
    h.shut_down(t)
}

fn after_a_delay(h: &mut HostHarness) -> Outcome {
    let x = X11::connect().map_err(|e| e.to_string())?;
    let mut limits = Limits::default();
    limits.hibernate_hidden_after = Some(Duration::from_millis(1500));
    let (parent, mut t) = window_host(h, "lineup hibernation delay", limits)?;
    open(h, &mut t, "a", RED)?;
    open(h, &mut t, "b", BLUE)?;
    let (a, b) = (t.key("a").ok_or("no a")?, t.key("b").ok_or("no b")?);
    ensure!(shows(h, &mut t, &parent, BLUE), "b is not on screen");
    // b takes a click (the right column), then both are hidden.
    let (ox, oy) = x.window_origin(xid_of(&parent)?)?;
    x.click(ox + 500, oy + 150)?;
    h.settle(&mut t, Duration::from_millis(200));
    t.host.set_surface_visible(&a, false);
    t.host.set_surface_visible(&b, false);
    h.settle(&mut t, Duration::from_millis(600));
    ensure!(
        !t.host.is_hibernated(&a) && !t.host.is_hibernated(&b),
        "hibernated before the delay"
    );
    ensure!(
        h.wait(&mut t, |host, _| host.is_hibernated(&a)),
        "a hidden Surface did not hibernate after the delay"
    );
    h.settle(&mut t, Duration::from_millis(1000));
    ensure!(
        !t.host.is_hibernated(&b),
        "a hidden Surface holding input hibernated by itself"
    );
    // The embedder may force it.
    ensure!(t.host.hibernate(&b), "a forced hibernation was refused");
    ensure!(
        t.host.is_hibernated(&b) && t.host.view(&b).is_none(),
        "the forced hibernation left its view"
    );
    ensure!(
        !t.host.hibernate(&b),
        "a hibernated Surface hibernated twice"
    );
    h.shut_down(t)
}

/// With `max_live_surfaces` 1 and no warm pool the host makes at most two webviews (the live
/// cap, plus one for a Surface the user shows while nothing hidden can hibernate). Showing a
/// second hibernated Surface past that gets no webview: it closes `crashed` (R-UI-12), once.
fn a_failed_wake(h: &mut HostHarness) -> Outcome {
    let mut limits = Limits::default();
    limits.max_live_surfaces = 1;
    let parent = parent_window(h, "lineup hibernation failed wake")?;
    let mut t = h.host(
        HostBuilder::new()
            .child_views_in(Rc::clone(&parent))
            .warm_pool(0)
            .limits(limits),
    )?;
    let key = |t: &TestHost, i: &str| t.key(i).ok_or(format!("no key for {i}"));
    open(h, &mut t, "a", RED)?;
    let a = key(&t, "a")?;
    t.host.set_surface_visible(&a, false);
    open(h, &mut t, "d", BLUE)?;
    let d = key(&t, "d")?;
    t.host.set_surface_visible(&d, false);
    open(h, &mut t, "b", GREEN)?;
    ensure!(
        t.host.is_hibernated(&a) && t.host.is_hibernated(&d),
        "a and d did not hibernate"
    );
    // b is shown: a wakes past the live cap, in the second (last) webview.
    t.host.set_surface_visible(&a, true);
    ensure!(
        h.wait(&mut t, |_, rec| painted(rec, "a").len() == 2),
        "a did not wake past the live cap"
    );
    // d gets no webview: closed `crashed`, once; the others stay.
    t.host.set_surface_visible(&d, true);
    let closed = |rec: &Recorder| rec.data("d", "close");
    ensure!(
        h.wait(&mut t, |_, rec| !closed(rec).is_empty()),
        "a wake that got no webview did not close the Surface"
    );
    h.settle(&mut t, Duration::from_millis(300));
    let closes = closed(&t.rec);
    ensure!(
        closes.len() == 1 && closes[0]["reason"] == "crashed",
        "{closes:?}"
    );
    ensure!(
        !t.host.surfaces().contains(&d)
            && t.host.view(&a).is_some()
            && t.host.view(&key(&t, "b")?).is_some(),
        "the failed wake took the others with it"
    );
    h.shut_down(t)
}

/// One installed app, `com.example.dash` with Surface `main` declaring `painted`, enabled until
/// [`DashCatalog::disable`]; the change marker moves then, as a store's revision does.
struct DashCatalog {
    enabled: std::cell::Cell<bool>,
    marker: std::cell::Cell<u64>,
}

impl DashCatalog {
    const HTML: &'static str = "<p></p>";
    const JS: &'static str = "document.body.style.height = '100vh';\
        LineUpSurface.onState(function (s) {\
          document.documentElement.style.background = s.color;\
          LineUpSurface.event('painted', { color: s.color });\
        });";

    fn disable(&self) {
        self.enabled.set(false);
        self.marker.set(self.marker.get() + 1);
    }

    fn id() -> AppId {
        AppId::try_from("com.example.dash").unwrap_or_else(|_| unreachable!())
    }

    fn version() -> AppVersion {
        AppVersion::try_from("1.0.0").unwrap_or_else(|_| unreachable!())
    }

    fn events() -> Vec<EventName> {
        vec![EventName::try_from("painted").unwrap_or_else(|_| unreachable!())]
    }
}

impl AppCatalog for DashCatalog {
    fn applications(&self) -> Vec<ListedApp> {
        if !self.enabled.get() {
            return Vec::new();
        }
        vec![ListedApp {
            app: InventoryApp {
                id: Self::id(),
                version: Self::version(),
                surfaces: vec![DeclaredSurface {
                    id: SurfaceId::try_from("main").unwrap_or_else(|_| unreachable!()),
                    events: Self::events(),
                }],
            },
            signed_by: None,
        }]
    }

    fn resolve(
        &self,
        id: &AppId,
        _version: Option<&AppVersion>,
        surface: &SurfaceId,
    ) -> Result<ResolvedSurface, CatalogRefusal> {
        if *id != Self::id() || surface.as_str() != "main" {
            return Err(CatalogRefusal::Unknown);
        }
        if !self.enabled.get() {
            return Err(CatalogRefusal::Disabled);
        }
        let bundle = InlineBundle::new(Self::HTML, "", Self::JS)
            .map_err(|e| CatalogRefusal::Unavailable(e.to_string()))?;
        Ok(ResolvedSurface {
            app: InlineApp {
                id: Self::id(),
                name: Some("Dash".into()),
                version: Self::version(),
                integrity: Some(bundle.digest()),
                bundle,
            },
            events: Self::events().into_iter().collect(),
            assets: Assets::default(),
            sources: SourceFiles::default(),
            signed_by: None,
        })
    }

    fn reservation(&self, id: &AppId) -> Option<Reservation> {
        (id.as_str().eq_ignore_ascii_case("com.example.dash")).then(|| {
            if self.enabled.get() {
                Reservation::Enabled(Self::id())
            } else {
                Reservation::Disabled(Self::id())
            }
        })
    }

    fn change_marker(&self) -> Option<u64> {
        Some(self.marker.get())
    }
}

/// A Surface of an installed app, hibernated, closes `app_disabled` when its app is disabled:
/// once, and it is neither open nor asleep afterwards.
fn app_disabled_while_hibernated(h: &mut HostHarness) -> Outcome {
    let catalog = Rc::new(DashCatalog {
        enabled: std::cell::Cell::new(true),
        marker: std::cell::Cell::new(1),
    });
    let parent = parent_window(h, "lineup hibernation app")?;
    let mut t = h.host(
        HostBuilder::new()
            .child_views_in(Rc::clone(&parent))
            .app_center(catalog.clone()),
    )?;
    t.send(t.agent.open(
        "s",
        json!({"id": "com.example.dash", "surface": "main"}),
        Some(json!({"color": css(RED)})),
    ))?;
    ensure!(
        h.wait(&mut t, |_, rec| painted(rec, "s").len() == 1),
        "the installed app's Surface never painted"
    );
    let s = t.key("s").ok_or("no key for s")?;
    t.host.set_surface_visible(&s, false);
    ensure!(
        t.host.hibernate(&s) && t.host.is_hibernated(&s),
        "the hidden Surface did not hibernate"
    );
    catalog.disable();
    ensure!(
        h.wait(&mut t, |_, rec| !rec.data("s", "close").is_empty()),
        "a hibernated Surface of a disabled app was not closed"
    );
    h.settle(&mut t, Duration::from_millis(300));
    let closes = t.rec.data("s", "close");
    ensure!(
        closes.len() == 1 && closes[0]["reason"] == "app_disabled",
        "{closes:?}"
    );
    ensure!(
        !t.host.surfaces().contains(&s) && !t.host.is_hibernated(&s),
        "the closed Surface is still open or asleep"
    );
    h.shut_down(t)
}
