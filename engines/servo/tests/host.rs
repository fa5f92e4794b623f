//! The host on Servo (#28): a `lineup_host::Host` built with `HostBuilder::dangerous().engine`
//! over [`ServoHostEngine`], driven through its embedding API under Xvfb. A process of its own
//! (one Servo per process), so `harness = false`, its steps in turn: child views are refused at
//! `build`, a Surface opens in a window of its own and paints its state (read back from the
//! window), the hardening the engine reports is what every view says, hide and show keep the
//! page (a patch sent while hidden is taken), and a close releases the view.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use lineup_host::{HostBuilder, HostError, ShellError};
use lineup_servo::{EngineConfig, ServoHostEngine};
use lineup_webview_shell::tao::event_loop::ControlFlow;
use lineup_webview_shell::tao::platform::run_return::EventLoopExtRunReturn;
use lineup_webview_shell::tao::window::WindowBuilder;
use lineup_webview_shell::SurfaceEngine;
use serde_json::{json, Value};

const WAIT: Duration = Duration::from_secs(60);

const JS: &str = "LineUpSurface.onState(function (s) {\
  document.body.style.background = s.color;\
  LineUpSurface.event('painted', { color: s.color });\
});";

fn envelope(id: &str, kind: &str, payload: Value) -> Vec<u8> {
    json!({
        "v": 1, "id": id, "type": kind, "conversation_id": "c1",
        "sender": { "kind": "agent", "id": "agent" }, "payload": payload,
    })
    .to_string()
    .into_bytes()
}

/// Whether an outbound line is the Surface's `painted` event with `color`.
fn painted(lines: &[Value], color: &str) -> bool {
    lines.iter().any(|m| {
        m["type"] == "lineup.v1.ui.event"
            && m["payload"]["event"] == "painted"
            && m["payload"]["data"]["color"] == color
    })
}

/// How many pixels of the frame the view's window shows are within 8 of `rgb`.
fn shown(host: &lineup_host::Host, key: &lineup_host_core::SurfaceKey, rgb: [u8; 3]) -> usize {
    host.view(key)
        .and_then(|view| view.screen_pixels().ok())
        .map_or(0, |pixels| pixels.count_near([0, 0, 480, 320], rgb, 8))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Painted,
    Hidden,
    Shown,
    Closed,
    Done,
}

#[allow(clippy::print_stdout, clippy::too_many_lines)]
fn main() {
    let mut event_loop = lineup_host::event_loop().expect("a display (run under xvfb-run)");
    let engine: Rc<dyn SurfaceEngine> =
        Rc::new(ServoHostEngine::start(EngineConfig::default()).expect("Servo starts"));

    // Child views are the platform's only: refused at build, before the engine is touched.
    let parent = Rc::new(
        WindowBuilder::new()
            .with_visible(false)
            .build(&event_loop)
            .expect("a parent window"),
    );
    let refused = HostBuilder::new()
        .child_views_in(parent)
        .dangerous()
        .engine(Rc::clone(&engine))
        .build(&event_loop);
    assert!(
        matches!(refused, Err(HostError::Platform(ShellError::Unsupported(_)))),
        "child views on Servo: {:?}",
        refused.err()
    );
    println!("ok child views are refused at build");

    let lines: Rc<RefCell<Vec<Value>>> = Rc::default();
    let sink = Rc::clone(&lines);
    let mut host = HostBuilder::new()
        .warm_pool(0)
        .on_outbound(move |m| {
            sink.borrow_mut()
                .push(serde_json::from_str(&m.to_json()).unwrap_or(Value::Null))
        })
        .dangerous()
        .engine(Rc::clone(&engine))
        .build(&event_loop)
        .expect("the host builds on Servo: its probe passed");
    let handle = host.handle();
    handle
        .send_inbound(envelope(
            "o1",
            "lineup.v1.ui.open",
            json!({
                "instance_id": "s1",
                "app": { "id": "com.example.paint", "name": "Paint", "version": "1.0.0",
                         "html": "<p>paint</p>", "css": "body{margin:0}", "js": JS },
                "state": { "color": "#00c000" },
            }),
        ))
        .expect("the loop runs");

    let started = Instant::now();
    let mut step = Step::Painted;
    let mut failure: Option<String> = None;
    let mut step_at = Instant::now();
    event_loop.run_return(|event, target, flow| {
        let wanted = host.handle_event(event, target);
        *flow = match wanted {
            ControlFlow::Exit => ControlFlow::Exit,
            _ => ControlFlow::WaitUntil(Instant::now() + Duration::from_millis(20)),
        };
        if started.elapsed() > WAIT * 3 {
            failure = Some(format!("timed out at {step:?}"));
            *flow = ControlFlow::Exit;
            return;
        }
        let Some(key) = host.surfaces().first().cloned() else {
            if step == Step::Closed {
                println!("ok a close releases the view");
                step = Step::Done;
            }
            if step == Step::Done {
                *flow = ControlFlow::Exit;
            }
            return;
        };
        let lines = lines.borrow();
        match step {
            Step::Painted => {
                // The Surface's own window shows its state; its hardening is Servo's.
                if painted(&lines, "#00c000") && shown(&host, &key, [0, 192, 0]) > 10_000 {
                    let view = host.view(&key).expect("its view");
                    let hardening = view.hardening();
                    assert_eq!(hardening, engine.hardening());
                    assert!(!hardening.own_context && !hardening.web_sandbox);
                    assert!(view.window().is_some_and(|w| w.is_visible()));
                    println!("ok the Surface paints its state in a window of its own");
                    drop(lines);
                    assert!(host.set_surface_visible(&key, false));
                    handle
                        .send_inbound(envelope(
                            "p1",
                            "lineup.v1.ui.patch",
                            json!({ "instance_id": "s1", "state": { "color": "#0000c0" } }),
                        ))
                        .expect("the loop runs");
                    step = Step::Hidden;
                    step_at = Instant::now();
                }
            }
            Step::Hidden => {
                // Hidden, not closed: the page takes a patch, and the window stays hidden.
                let view = host.view(&key).expect("its view while hidden");
                if view.window().is_some_and(|w| w.is_visible()) {
                    failure = Some("the window of a hidden Surface is visible".to_owned());
                    *flow = ControlFlow::Exit;
                } else if painted(&lines, "#0000c0")
                    && step_at.elapsed() > Duration::from_millis(300)
                {
                    println!("ok a hidden Surface keeps its page and takes a patch");
                    drop(lines);
                    assert!(host.set_surface_visible(&key, true));
                    step = Step::Shown;
                }
            }
            Step::Shown => {
                if shown(&host, &key, [0, 0, 192]) > 10_000 {
                    assert!(host
                        .view(&key)
                        .and_then(|v| v.window())
                        .is_some_and(|w| w.is_visible()));
                    println!("ok shown again, the window shows the patched state");
                    drop(lines);
                    handle
                        .send_inbound(envelope(
                            "c1",
                            "lineup.v1.ui.close",
                            json!({ "instance_id": "s1", "reason": "done" }),
                        ))
                        .expect("the loop runs");
                    step = Step::Closed;
                }
            }
            Step::Closed | Step::Done => {}
        }
    });
    host.close_all();
    drop(host);
    if let Some(failure) = failure {
        panic!("{failure}");
    }
    println!("host on Servo: 5 passed");
}
