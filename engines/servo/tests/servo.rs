//! The Servo backend's suite (#28), against a real Servo under Xvfb: one process, one Servo, so
//! one `harness = false` binary whose scenarios run in turn. `-- crash` runs the crash scenario
//! alone, in an engine with `ServoTestUtils` on (a page's way to panic its script thread).

use std::cell::RefCell;
use std::net::TcpListener;
use std::rc::Rc;
use std::time::{Duration, Instant};

use lineup_host_core::InlineBundle;
use lineup_servo::{EngineConfig, JSValue, ProbeStatus, ServoEngine, ServoSurface, ViewEvent};
use lineup_surface_runtime::{DocumentOptions, SurfaceDocument, SurfaceServer, SurfaceToken};
use servo::{ClipboardAction, InputEvent};

#[path = "servo/bench.rs"]
mod bench;

type Events = Rc<RefCell<Vec<ViewEvent>>>;

/// A value a callback fills in later.
type Slot<T> = Rc<RefCell<Option<T>>>;

const WAIT: Duration = Duration::from_secs(60);

struct Lab {
    engine: ServoEngine,
    next: std::cell::Cell<u8>,
}

struct Opened {
    surface: ServoSurface,
    events: Events,
}

impl Lab {
    fn new(config: EngineConfig) -> Self {
        let engine = ServoEngine::start(config, || {}).expect("Servo starts");
        // R-SEC-8: nothing is served before the probe passed.
        let status = engine.wait_for_probe(WAIT);
        assert_eq!(status, ProbeStatus::Passed, "the isolation probe");
        Self {
            engine,
            next: std::cell::Cell::new(1),
        }
    }

    fn open_with(&self, html: &str, js: &str, options: &DocumentOptions) -> Opened {
        let bundle = InlineBundle::new(html, "body{margin:0;background:#fff}", js).expect("bundle");
        let document = SurfaceDocument::assemble(&bundle, options);
        let n = self.next.get();
        self.next.set(n + 1);
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).expect("random");
        bytes[0] = n;
        let server = SurfaceServer::new(SurfaceToken::from_random_bytes(bytes), document);
        let events: Events = Rc::default();
        let sink = Rc::clone(&events);
        let surface = self
            .engine
            .open(server, 480, 320, move |event| sink.borrow_mut().push(event))
            .expect("open");
        Opened { surface, events }
    }

    fn open(&self, html: &str, js: &str) -> Opened {
        self.open_with(html, js, &DocumentOptions::default())
    }

    /// Spins Servo until `done` holds; false after [`WAIT`].
    fn spin_until(&self, mut done: impl FnMut() -> bool) -> bool {
        let deadline = Instant::now() + WAIT;
        while Instant::now() < deadline {
            self.engine.spin();
            if done() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        false
    }

    /// Spins for `time` whatever happens.
    fn spin_for(&self, time: Duration) {
        let deadline = Instant::now() + time;
        while Instant::now() < deadline {
            self.engine.spin();
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    fn eval(&self, surface: &ServoSurface, script: &str) -> Result<JSValue, String> {
        let out: Slot<Result<JSValue, String>> = Rc::default();
        let sink = Rc::clone(&out);
        surface.evaluate(script, move |r| *sink.borrow_mut() = Some(r));
        if !self.spin_until(|| out.borrow().is_some()) {
            return Err(format!("no answer to {script}"));
        }
        out.take().unwrap_or_else(|| Err("no answer".into()))
    }

    /// Waits for the page's `ready` (the bridge ran and the guest script finished).
    fn ready(&self, opened: &Opened) -> Result<(), String> {
        if self.spin_until(|| {
            ipc(&opened.events)
                .iter()
                .any(|m| m.contains(r#""type":"ready""#))
        }) {
            Ok(())
        } else {
            Err(format!("no ready; events {:?}", opened.events.borrow()))
        }
    }
}

/// The bridge messages a view posted, in order.
fn ipc(events: &Events) -> Vec<String> {
    events
        .borrow()
        .iter()
        .filter_map(|e| match e {
            ViewEvent::Ipc(m) => Some(m.clone()),
            _ => None,
        })
        .collect()
}

fn check(condition: bool, what: &str) -> Result<(), String> {
    if condition {
        Ok(())
    } else {
        Err(what.to_owned())
    }
}

fn string(value: Result<JSValue, String>) -> String {
    match value {
        Ok(JSValue::String(s)) => s,
        other => format!("{other:?}"),
    }
}

/// R-UI-6a, R-UI-3, R-SEC-4: the bridge is there before the guest's first line; state goes in
/// through the delivery key and events come out on the console channel, as this view's.
fn bridge_round_trips(lab: &Lab) -> Result<(), String> {
    let page = lab.open(
        "<p id=t>waiting</p>",
        "LineUpSurface.event('first', {bridge: typeof LineUpSurface});\
         LineUpSurface.onState(function (s) { document.getElementById('t').textContent = s.city;\
           LineUpSurface.event('got', {city: s.city}); LineUpSurface.resize(123); });",
    );
    lab.ready(&page)?;
    let first = ipc(&page.events);
    check(
        first
            .first()
            .is_some_and(|m| m.contains(r#""event":"first","data":{"bridge":"object"}"#)),
        &format!("the guest's first line saw the bridge: {first:?}"),
    )?;
    page.surface
        .deliver_state(r#"{"city":"上海"}"#)
        .map_err(|e| e.to_string())?;
    check(
        lab.spin_until(|| {
            ipc(&page.events)
                .iter()
                .any(|m| m.contains(r#""city":"上海""#))
        }),
        &format!("the state round trip: {:?}", ipc(&page.events)),
    )?;
    check(
        lab.spin_until(|| {
            ipc(&page.events)
                .iter()
                .any(|m| m.contains(r#""type":"resize","height":123"#))
        }),
        "the resize message",
    )?;
    // R-UI-6: a forged delivery without the key changes nothing.
    let forged = lab.eval(
        &page.surface,
        "try { LineUpSurface.__deliverState('0'.repeat(32), '{\"city\":\"x\"}'); } catch (e) {}\
         document.getElementById('t').textContent",
    );
    check(string(forged) == "上海", "a forged delivery was ignored")?;
    Ok(())
}

/// R-SEC-2, R-SEC-8: the document's CSP applies: opaque origin, no eval, no storage.
fn csp_sandbox_applies(lab: &Lab) -> Result<(), String> {
    let page = lab.open("<p>probe</p>", "");
    lab.ready(&page)?;
    let origin = string(lab.eval(&page.surface, "self.origin"));
    check(origin == "null", &format!("opaque origin, got {origin}"))?;
    let eval = string(lab.eval(
        &page.surface,
        "(function(){ try { (0, eval)('1'); return 'eval ran'; } catch (e) { return 'blocked ' + e.name; } })()",
    ));
    check(
        eval.starts_with("blocked"),
        &format!("eval blocked: {eval}"),
    )?;
    let storage = string(lab.eval(
        &page.surface,
        "(function(){ try { localStorage.setItem('k','v'); return 'stored'; } catch (e) { return 'threw ' + e.name; } })()",
    ));
    check(
        storage.starts_with("threw"),
        &format!("localStorage throws: {storage}"),
    )?;
    // Positive control: without the CSP, eval runs. (The origin of a `lineup-surface:` URL is
    // opaque in Servo with or without the CSP: a URL of a non-special scheme has an opaque
    // origin, so storage is unavailable either way.)
    let open = lab.open_with(
        "<p>no csp</p>",
        "",
        &DocumentOptions::default().dangerous().without_csp(),
    );
    lab.ready(&open)?;
    let eval = string(lab.eval(
        &open.surface,
        "(function(){ try { (0, eval)('1'); return 'eval ran'; } catch (e) { return 'blocked ' + e.name; } })()",
    ));
    check(
        eval == "eval ran",
        &format!("without the CSP eval runs: {eval}"),
    )?;
    Ok(())
}

/// R-SEC-3: nothing reaches the network, with the CSP and (positive control of the second layer)
/// without it, where only the delegate's cancel stands between the page and the canary.
fn no_network(lab: &Lab) -> Result<(), String> {
    let canary = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    canary.set_nonblocking(true).map_err(|e| e.to_string())?;
    let port = canary.local_addr().map_err(|e| e.to_string())?.port();
    let js = format!(
        "fetch('http://127.0.0.1:{port}/f').catch(function(){{}});\
         new Image().src = 'http://127.0.0.1:{port}/i';\
         var x = new XMLHttpRequest(); try {{ x.open('GET', 'http://127.0.0.1:{port}/x'); x.send(); }} catch (e) {{}}"
    );
    let strict = lab.open("<p>net</p>", &js);
    let open = lab.open_with(
        "<p>net</p>",
        &js,
        &DocumentOptions::default().dangerous().without_csp(),
    );
    lab.ready(&strict)?;
    lab.ready(&open)?;
    lab.spin_for(Duration::from_millis(1500));
    let mut reached = 0;
    while canary.accept().is_ok() {
        reached += 1;
    }
    check(
        reached == 0,
        &format!("{reached} connections reached the canary"),
    )?;
    // Positive control: the canary counts a connection when one comes.
    let _probe = std::net::TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
    std::thread::sleep(Duration::from_millis(50));
    check(canary.accept().is_ok(), "the canary sees a real connection")?;
    Ok(())
}

/// R-SEC-2, R-UI-5: navigation, popups, dialogs and window.close() are refused and the page
/// lives on and still takes a state.
fn refusals(lab: &Lab) -> Result<(), String> {
    let page = lab.open(
        "<p id=t>here</p>",
        "LineUpSurface.onState(function (s) { LineUpSurface.event('state', s); });",
    );
    lab.ready(&page)?;
    // `window.open` and `confirm` never reach the delegate: the CSP's sandbox (no
    // `allow-popups`, no `allow-modals`) refuses them first; their answers are the check.
    let popup = string(lab.eval(&page.surface, "String(window.open('https://example.com/'))"));
    check(popup == "null", &format!("window.open gives null: {popup}"))?;
    let confirm = string(lab.eval(&page.surface, "String(confirm('sure?'))"));
    check(
        confirm == "false",
        &format!("confirm answered false: {confirm}"),
    )?;
    lab.eval(&page.surface, "window.close(); 1")
        .map_err(|e| format!("window.close: {e}"))?;
    // The page navigates itself, as a guest would: to another Surface's URL (the delegate's
    // refusal, R-SEC-2a) and to the web (cancelled at the network layer, R-SEC-3). The
    // evaluation may end with the document it ran in, so its own answer is not awaited.
    page.surface.evaluate(
        "setTimeout(function () { location.href = 'lineup-surface://00112233445566778899aabbccddeeff/'; }, 0); 1",
        |_| {},
    );
    check(
        lab.spin_until(|| {
            page.events
                .borrow()
                .iter()
                .any(|e| matches!(e, ViewEvent::NavigationRefused(_)))
        }),
        &format!("navigation refused: {:?}", page.events.borrow()),
    )?;
    page.surface.evaluate(
        "setTimeout(function () { location.href = 'https://example.com/'; }, 0); 1",
        |_| {},
    );
    lab.spin_for(Duration::from_millis(500));
    let still = string(lab.eval(
        &page.surface,
        "document.getElementById('t').textContent + ' ' + location.href",
    ));
    check(
        still == format!("here {}", page.surface.url()),
        &format!("the page stayed: {still}"),
    )?;
    page.surface
        .deliver_state(r#"{"n":2}"#)
        .map_err(|e| e.to_string())?;
    check(
        lab.spin_until(|| {
            ipc(&page.events)
                .iter()
                .any(|m| m.contains(r#""event":"state","data":{"n":2}"#))
        }),
        "the page still takes a state",
    )?;
    Ok(())
}

/// R-UI-5 on Servo: another window's `close` (an empty iframe's) called on the page's own
/// window gets past the bridge, and Servo closes the view asking no one; the loss is reported as
/// a crash, never silent.
fn close_through_another_window(lab: &Lab) -> Result<(), String> {
    let page = lab.open("<p>here</p>", "");
    lab.ready(&page)?;
    page.surface.evaluate(
        "var f = document.createElement('iframe'); document.body.appendChild(f);\
         setTimeout(function () { f.contentWindow.close.call(window); }, 0); 1",
        |_| {},
    );
    lab.spin_for(Duration::from_millis(800));
    let alive = string(lab.eval(&page.surface, "'alive'"));
    let crashed = page
        .events
        .borrow()
        .iter()
        .any(|e| matches!(e, ViewEvent::Crashed));
    println!("  close through an iframe's close: page {alive}, crashed reported {crashed}");
    check(
        alive == "alive" || crashed,
        &format!("the view closed silently: {:?}", page.events.borrow()),
    )
}

/// R-UI-10: a page's own reload commits the Surface's document again and says `ready` again
/// (a new document id); the embedder's `replace_document` serves a new bundle under the same
/// token, and the page shows it.
fn reloads(lab: &Lab) -> Result<(), String> {
    let page = lab.open("<p id=t>first</p>", "");
    lab.ready(&page)?;
    let readies = || {
        ipc(&page.events)
            .iter()
            .filter(|m| m.contains(r#""type":"ready""#))
            .count()
    };
    let commits = || {
        page.events
            .borrow()
            .iter()
            .filter(|e| matches!(e, ViewEvent::DocumentCommitted))
            .count()
    };
    page.surface.evaluate(
        "setTimeout(function () { location.reload(); }, 0); 1",
        |_| {},
    );
    check(
        lab.spin_until(|| readies() == 2 && commits() == 2),
        &format!("a reload: {} commits, {} readies", commits(), readies()),
    )?;
    let documents: std::collections::HashSet<String> = ipc(&page.events)
        .iter()
        .filter(|m| m.contains(r#""type":"ready""#))
        .cloned()
        .collect();
    check(
        documents.len() == 2,
        "each document says ready with its own id",
    )?;
    let bundle = InlineBundle::new("<p id=t>second</p>", "", "").map_err(|e| e.to_string())?;
    page.surface
        .replace_document(SurfaceDocument::assemble(
            &bundle,
            &DocumentOptions::default(),
        ))
        .map_err(|e| e.to_string())?;
    check(
        lab.spin_until(|| readies() == 3),
        "the replaced document says ready",
    )?;
    let text = string(lab.eval(&page.surface, "document.getElementById('t').textContent"));
    check(
        text == "second",
        &format!("the replaced document shows {text:?}"),
    )
}

/// R-SEC-5: a Surface's copy stays its own: another Surface's paste gets nothing of it (Servo's
/// fallback would share one string between every view), and the copying Surface's own paste gets
/// it back (the positive control that copy and paste work at all).
fn clipboard_per_surface(lab: &Lab) -> Result<(), String> {
    let field = "<p id=p>secret-a</p><textarea id=t></textarea>";
    let a = lab.open(field, "");
    let b = lab.open(field, "document.getElementById('p').textContent = 'other';");
    lab.ready(&a)?;
    lab.ready(&b)?;
    lab.eval(
        &a.surface,
        "getSelection().selectAllChildren(document.getElementById('p')); 1",
    )?;
    a.surface
        .notify_input(InputEvent::EditingAction(ClipboardAction::Copy));
    lab.spin_for(Duration::from_millis(300));
    let paste = |opened: &Opened| -> Result<String, String> {
        lab.eval(&opened.surface, "document.getElementById('t').focus(); 1")?;
        opened
            .surface
            .notify_input(InputEvent::EditingAction(ClipboardAction::Paste));
        lab.spin_for(Duration::from_millis(300));
        Ok(string(lab.eval(
            &opened.surface,
            "document.getElementById('t').value",
        )))
    };
    let in_b = paste(&b)?;
    let in_a = paste(&a)?;
    check(in_b.is_empty(), &format!("another Surface pasted {in_b:?}"))?;
    check(
        in_a == "secret-a",
        &format!("the copying Surface pasted {in_a:?}"),
    )
}

/// R-SEC-2: one Surface cannot reach another's document or messages.
fn surfaces_apart(lab: &Lab) -> Result<(), String> {
    let a = lab.open(
        "<p>a</p>",
        "var c = new BroadcastChannel('lineup'); setTimeout(function(){ c.postMessage('from a'); }, 50);",
    );
    let b = lab.open(
        "<p>b</p>",
        "var c = new BroadcastChannel('lineup'); c.onmessage = function (m) { LineUpSurface.event('heard', {m: String(m.data)}); };",
    );
    lab.ready(&a)?;
    lab.ready(&b)?;
    // B, even without its CSP, asks for A's document: the scheme answers only A's webview.
    let c = lab.open_with(
        "<p>c</p>",
        "",
        &DocumentOptions::default().dangerous().without_csp(),
    );
    lab.ready(&c)?;
    let script = format!(
        "fetch('{}').then(function (r) {{ return 'status ' + r.status; }}, function (e) {{ return 'failed ' + e.name; }})",
        a.surface.url()
    );
    let got = string(lab.eval(&c.surface, &script));
    check(
        !got.contains("200"),
        &format!("another Surface's document was not served: {got}"),
    )?;
    lab.eval(&a.surface, "c.postMessage('again'); 1")?;
    lab.spin_for(Duration::from_millis(500));
    check(
        !ipc(&b.events).iter().any(|m| m.contains("heard")),
        "a BroadcastChannel message crossed Surfaces",
    )?;
    Ok(())
}

/// The Surface renders: a screenshot with the page's colours in it.
fn renders(lab: &Lab, out: &std::path::Path) -> Result<(), String> {
    let page = lab.open(
        "<div id=bar style='width:200px;height:100px;background:rgb(200,30,40)'></div><p id=t></p>",
        "LineUpSurface.onState(function (s) { document.getElementById('t').textContent = s.label; });",
    );
    lab.ready(&page)?;
    page.surface
        .deliver_state(r#"{"label":"Shanghai 21°"}"#)
        .map_err(|e| e.to_string())?;
    lab.spin_for(Duration::from_millis(300));
    let png: Slot<Result<Vec<u8>, String>> = Rc::default();
    let sink = Rc::clone(&png);
    page.surface
        .screenshot_png(move |r| *sink.borrow_mut() = Some(r.map_err(|e| e.to_string())));
    check(lab.spin_until(|| png.borrow().is_some()), "a screenshot")?;
    let bytes = png.take().unwrap_or_else(|| Err("none".into()))?;
    std::fs::write(out, &bytes).map_err(|e| e.to_string())?;
    let image = image::load_from_memory(&bytes)
        .map_err(|e| e.to_string())?
        .to_rgba8();
    let red = image
        .pixels()
        .filter(|p| p[0] > 180 && p[1] < 60 && p[2] < 70)
        .count();
    check(
        red > 15_000,
        &format!("{red} red pixels of the 200×100 bar"),
    )?;
    Ok(())
}

/// `lineup-servo preview` (what `lineup preview --engine servo` runs) shows the chart example
/// with its state: the window's frame, written as PNG, has the line drawn from `state.json`.
fn preview_screenshot(out: &std::path::Path) -> Result<(), String> {
    let chart =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/surfaces/chart");
    let _ = std::fs::remove_file(out);
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_lineup-servo"))
        .arg("preview")
        .arg(&chart)
        .arg("--screenshot")
        .arg(out)
        .status()
        .map_err(|e| e.to_string())?;
    check(status.success(), &format!("lineup-servo preview: {status}"))?;
    let image = image::open(out).map_err(|e| e.to_string())?.to_rgba8();
    // The series line: the theme's accent, rgb(10, 102, 216).
    let line = image
        .pixels()
        .filter(|p| p[2] > 170 && p[0] < 80 && (70..150).contains(&p[1]))
        .count();
    check(
        line > 300,
        &format!("{line} pixels of the series line in {}", out.display()),
    )
}

/// A script thread's panic is reported as `crashed` and the engine lives on.
fn crash(lab: &Lab) -> Result<(), String> {
    let other = lab.open("<p>other</p>", "");
    lab.ready(&other)?;
    let victim = lab.open("<p>victim</p>", "");
    lab.ready(&victim)?;
    victim.surface.evaluate(
        "setTimeout(function () { ServoTestUtils.panic(); }, 0); 1",
        |_| {},
    );
    check(
        lab.spin_until(|| {
            victim
                .events
                .borrow()
                .iter()
                .any(|e| matches!(e, ViewEvent::Crashed))
        }),
        &format!(
            "the crash was reported: {:?} {:?}",
            victim.events.borrow(),
            ipc(&victim.events)
        ),
    )?;
    let fresh = lab.open("<p>after</p>", "");
    lab.ready(&fresh)?;
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let crash_only = args.iter().any(|a| a == "crash");
    if args.iter().any(|a| a == "probe-control") {
        // R-SEC-8's positive control: the probe page served without its CSP runs eval, and the
        // probe fails closed; no Surface opens.
        let engine =
            ServoEngine::start(EngineConfig::default().dangerous_probe_without_csp(), || {})
                .expect("Servo starts");
        let status = engine.wait_for_probe(WAIT);
        let refused = engine.open(
            SurfaceServer::new(
                SurfaceToken::from_random_bytes([9; 16]),
                SurfaceDocument::assemble(
                    &InlineBundle::new("<p>x</p>", "", "").expect("bundle"),
                    &DocumentOptions::default(),
                ),
            ),
            64,
            64,
            |_| {},
        );
        let failed = matches!(&status, ProbeStatus::Failed(why) if why.contains("eval ran"));
        println!(
            "servo: probe_control: {status:?}; open: {:?}",
            refused.as_ref().err()
        );
        drop(engine);
        if !failed || refused.is_ok() {
            println!("servo: probe_control ... FAILED");
            std::process::exit(1);
        }
        println!("servo: probe_control ... ok");
        return;
    }
    if args.iter().any(|a| a == "bench") {
        bench::bench(Instant::now());
        return;
    }
    let out = std::path::PathBuf::from(
        std::env::var("CARGO_TARGET_TMPDIR")
            .unwrap_or_else(|_| std::env::temp_dir().display().to_string()),
    );
    let started = Instant::now();
    type Scenario<'a> = (&'a str, Box<dyn Fn(&Lab) -> Result<(), String> + 'a>);
    let (lab, scenarios): (Lab, Vec<Scenario<'_>>) = if crash_only {
        (
            Lab::new(EngineConfig::default().dangerous_with_test_helpers()),
            vec![("crash", Box::new(crash))],
        )
    } else {
        let png = out.join("servo-surface.png");
        let preview_png = out.join("servo-preview-chart.png");
        (
            Lab::new(EngineConfig::default()),
            vec![
                ("bridge_round_trips", Box::new(bridge_round_trips)),
                ("csp_sandbox_applies", Box::new(csp_sandbox_applies)),
                ("no_network", Box::new(no_network)),
                ("refusals", Box::new(refusals)),
                ("surfaces_apart", Box::new(surfaces_apart)),
                ("clipboard_per_surface", Box::new(clipboard_per_surface)),
                ("reloads", Box::new(reloads)),
                (
                    "close_through_another_window",
                    Box::new(close_through_another_window),
                ),
                ("renders", Box::new(move |lab| renders(lab, &png))),
                (
                    "preview_screenshot",
                    Box::new(move |_| preview_screenshot(&preview_png)),
                ),
            ],
        )
    };
    // Other arguments (but cargo's own flags) pick scenarios by part of their name.
    let filters: Vec<&String> = args[1..]
        .iter()
        .filter(|a| {
            !a.starts_with('-') && !["crash", "bench", "probe-control"].contains(&a.as_str())
        })
        .collect();
    let scenarios: Vec<_> = scenarios
        .into_iter()
        .filter(|(name, _)| filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str())))
        .collect();
    let mut failed = 0;
    for (name, scenario) in &scenarios {
        let at = Instant::now();
        match scenario(&lab) {
            Ok(()) => println!("servo: {name} ... ok ({} ms)", at.elapsed().as_millis()),
            Err(why) => {
                failed += 1;
                println!("servo: {name} ... FAILED: {why}");
            }
        }
    }
    println!(
        "servo: {} passed, {failed} failed in {} ms",
        scenarios.len() - failed,
        started.elapsed().as_millis()
    );
    if failed > 0 {
        std::process::exit(1);
    }
}
