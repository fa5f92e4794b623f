//! `lineup-servo preview DIR`: a bundle folder shown by Servo in a window of its own, as
//! `lineup preview` shows it with WebKitGTK; with `--screenshot FILE`, the window's frame once
//! the state is in is written as PNG and the preview ends.
//!
//! `lineup-servo host --stdio --dangerous-weaker-isolation`: `lineup host --stdio` with Servo
//! showing the Surfaces (`host.rs`), which `lineup host --engine servo` runs.

use std::cell::RefCell;
use std::path::PathBuf;
use std::process::ExitCode;
use std::rc::Rc;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand};
use lineup_authoring::BundleFolder;
use lineup_servo::{EngineConfig, ProbeStatus, ServoEngine, SurfaceWindow, ViewEvent};
use lineup_surface_runtime::{DocumentOptions, SurfaceDocument, SurfaceServer, SurfaceToken};
use tao::event::{Event, WindowEvent};
use tao::event_loop::{ControlFlow, EventLoopBuilder};

#[derive(Parser)]
#[command(name = "lineup-servo", about = "Surfaces shown by Servo")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Shows a bundle folder (index.html, style.css, script.js, state.json) in a window.
    Preview {
        /// The bundle folder.
        dir: PathBuf,
        /// Writes what the window shows, once the state is in, to this PNG file and ends.
        #[arg(long)]
        screenshot: Option<PathBuf>,
        /// The view's width in pixels.
        #[arg(long, default_value_t = 640)]
        width: u32,
        /// The view's height in pixels.
        #[arg(long, default_value_t = 420)]
        height: u32,
    },
    /// Hosts Surfaces for an agent that speaks lineup.v1 on stdin and stdout, shown by Servo.
    Host(host::HostArgs),
}

mod host;

/// How long the page is given to draw its state before the screenshot is taken.
const SETTLE: Duration = Duration::from_millis(1500);

#[derive(Debug)]
struct Wake;

#[allow(clippy::print_stderr)]
fn main() -> ExitCode {
    let outcome = match Cli::parse().command {
        Command::Preview {
            dir,
            screenshot,
            width,
            height,
        } => preview(dir, screenshot, width, height),
        Command::Host(args) => host::run(args),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("lineup-servo: {message}");
            ExitCode::FAILURE
        }
    }
}

#[allow(clippy::print_stderr)]
fn preview(
    dir: PathBuf,
    screenshot: Option<PathBuf>,
    width: u32,
    height: u32,
) -> Result<(), String> {
    let folder = BundleFolder::read(&dir).map_err(|e| e.to_string())?;
    let state = folder
        .state()
        .map(|s| serde_json::to_string(s).unwrap_or_default());
    let document = SurfaceDocument::assemble(folder.bundle(), &DocumentOptions::default());
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| e.to_string())?;
    let server = SurfaceServer::new(SurfaceToken::from_random_bytes(bytes), document);

    let event_loop = EventLoopBuilder::<Wake>::with_user_event().build();
    let proxy = Mutex::new(event_loop.create_proxy());
    // A turn of the loop every 50 ms whatever Servo does: the loop's own timed wake-up does not
    // come while Servo's threads are idle, and the screenshot's settle time must pass.
    let ticker = event_loop.create_proxy();
    std::thread::spawn(move || {
        while ticker.send_event(Wake).is_ok() {
            std::thread::sleep(Duration::from_millis(50));
        }
    });
    let engine = ServoEngine::start(EngineConfig::default(), move || {
        if let Ok(proxy) = proxy.lock() {
            let _ = proxy.send_event(Wake);
        }
    })
    .map_err(|e| e.to_string())?;
    // R-SEC-8: the Surface is served only once the isolation probe passed.
    match engine.wait_for_probe(Duration::from_secs(60)) {
        ProbeStatus::Passed => {}
        other => return Err(format!("the isolation probe: {other:?}")),
    }
    let mut window = SurfaceWindow::new(
        &event_loop,
        &format!("{} — Servo", folder.name()),
        width,
        height,
    )
    .map_err(|e| e.to_string())?;
    let ready = Rc::new(RefCell::new(false));
    let seen = Rc::clone(&ready);
    let view = engine
        .open(server, width, height, move |event| match &event {
            ViewEvent::Ipc(message) if message.contains(r#""type":"ready""#) => {
                eprintln!("page: ready");
                *seen.borrow_mut() = true;
            }
            ViewEvent::Ipc(message) => eprintln!("page: {message}"),
            other => eprintln!("view: {other:?}"),
        })
        .map_err(|e| e.to_string())?;
    let mut state_sent_at: Option<Instant> = None;
    let outcome: Rc<RefCell<Result<(), String>>> = Rc::new(RefCell::new(Ok(())));
    let result = Rc::clone(&outcome);

    // Servo must shut down (its Drop) before the process ends: SpiderMonkey's static
    // destructors crash when its threads still run.
    let mut live = Some((view, engine));
    event_loop.run(move |event, _target, control_flow| {
        *control_flow = ControlFlow::WaitUntil(Instant::now() + Duration::from_millis(50));
        let Some((view, engine)) = live.as_ref() else {
            return;
        };
        engine.spin();
        if *ready.borrow() && state_sent_at.is_none() {
            if let Some(state) = &state {
                if let Err(e) = view.deliver_state(state) {
                    *result.borrow_mut() = Err(e.to_string());
                    *control_flow = ControlFlow::Exit;
                }
            }
            state_sent_at = Some(Instant::now());
        }
        if let Event::WindowEvent {
            window_id, event, ..
        } = &event
        {
            if matches!(event, WindowEvent::CloseRequested) {
                *control_flow = ControlFlow::Exit;
            }
            window.handle_window_event(view, *window_id, event);
        }
        if let Err(e) = window.present(view) {
            *result.borrow_mut() = Err(e.to_string());
            *control_flow = ControlFlow::Exit;
        }
        if let (Some(path), Some(at)) = (&screenshot, state_sent_at) {
            if at.elapsed() >= SETTLE {
                let written = match window.frame() {
                    Some(frame) => frame.save(path).map_err(|e| e.to_string()),
                    None => Err("the window showed no frame".to_owned()),
                };
                *result.borrow_mut() = written;
                *control_flow = ControlFlow::Exit;
            }
        }
        if *control_flow == ControlFlow::Exit {
            let code = i32::from(result.borrow().is_err());
            if let Err(e) = &*result.borrow() {
                eprintln!("lineup-servo: {e}");
            }
            if let Some((view, engine)) = live.take() {
                view.close();
                drop(engine);
            }
            std::process::exit(code);
        }
    });
}
