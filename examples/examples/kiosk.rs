//! A full-screen, kiosk-style host: one borderless window filling the first monitor, the
//! host's standby screen until a Surface has painted, Surfaces as child views in it, the window
//! manager's close ignored, and SIGTERM (systemd stopping the unit) ending the loop cleanly.
//! `lineup kiosk` is the finished program; this is the part an embedder builds on.
//!
//! ```sh
//! cargo run -p lineup-examples --example kiosk             # on a desktop; Ctrl-C ends it
//! xvfb-run -a cargo run -p lineup-examples --example kiosk -- --check
//! ```
//!
//! `--check` ends once the Surface said it is ready and shows on screen in its colour (the
//! standby screen lifted): what CI runs.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::cell::OnceCell;
use std::process::ExitCode;
use std::rc::Rc;

use lineup_examples::ScreenCheck;
use lineup_host::protocol::SurfaceKey;
use lineup_host::{
    event_loop, kiosk_window, on_terminate, HostBuilder, HostDelegate, HostHandle, MonitorChoice,
    StandbyScreen,
};
use serde_json::json;

/// Checks the screen at the Surface's `ready`, then shuts the host down, when checking.
struct Delegate {
    check: Option<ScreenCheck>,
    handle: Rc<OnceCell<HostHandle>>,
}

impl HostDelegate for Delegate {
    fn notify_ready(&mut self, key: &SurfaceKey) {
        println!("ready: {}", key.instance);
        if let (Some(screen), Some(handle)) = (&self.check, self.handle.get()) {
            screen.ask_then_stop(handle, "welcome", WELCOME);
        }
    }
}

fn main() -> ExitCode {
    let check = std::env::args().any(|a| a == "--check");
    match run(check) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kiosk: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(check: bool) -> Result<(), Box<dyn std::error::Error>> {
    let event_loop = event_loop()?;
    let (window, monitor) = kiosk_window(&event_loop, &MonitorChoice::Index(0), "lobby")?;
    println!("kiosk on {monitor:?}");
    let handle = Rc::new(OnceCell::new());
    let screen = ScreenCheck::default();
    let host = HostBuilder::new()
        .child_views_in(window)
        .standby(StandbyScreen::new("Lobby").message("Starting…"))
        .ignore_parent_close()
        .delegate(Delegate {
            check: check.then(|| screen.clone()),
            handle: Rc::clone(&handle),
        })
        .build(&event_loop)?;
    let _ = handle.set(host.handle());
    let stop = host.handle();
    on_terminate(move |signal| {
        println!("{signal}: shutting down");
        let _ = stop.shutdown();
    })?;
    let open = json!({"v": 1, "id": "m-1", "type": "lineup.v1.ui.open", "conversation_id": "lobby",
        "sender": {"kind": "agent", "id": "agent"},
        "payload": {"instance_id": "welcome", "app": {"id": "com.example.welcome", "version": "1.0.0",
            "html": "<main><h1>Welcome</h1></main>",
            "css": "main{display:grid;place-items:center;height:100vh;font:48px sans-serif}\
                    body{margin:0;background:rgb(200,90,40)}", "js": ""}}});
    host.handle().send_inbound(open.to_string().into_bytes())?;
    host.run(event_loop)?;
    if check {
        screen.verdict()?;
    }
    Ok(())
}

/// The welcome Surface's background, which `--check` looks for on screen.
const WELCOME: [u8; 3] = [200, 90, 40];
