//! A chat app's own event loop with its own user events, and the host living in it: the loop's
//! user-event type is the app's enum, one variant of which carries the host's events
//! ([`HostUserEvent`](lineup_host::HostUserEvent), written by `host_user_event!`). The app handles its own events and hands every event to
//! [`Host::handle_event`], which takes the host's and leaves the app's alone.
//!
//! ```sh
//! cargo run -p lineup-examples --example own_events             # on a desktop
//! xvfb-run -a cargo run -p lineup-examples --example own_events -- --check
//! ```
//!
//! `--check` exits 0 once the app's own event and the Surface's event both arrived and the
//! Surface shows on screen in its colour: what CI runs.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::cell::Cell;
use std::process::ExitCode;
use std::rc::Rc;
use std::time::{Duration, Instant};

use lineup_examples::ScreenCheck;
use lineup_host::protocol::Message;
use lineup_host::tao::event::Event;
use lineup_host::tao::event_loop::ControlFlow;
use lineup_host::tao::platform::run_return::EventLoopExtRunReturn;
use lineup_host::{event_loop_with, Host, HostBuilder, HostEvent};
use serde_json::json;

/// The app's user events: its own, and the host's (`host_user_event!` below lets the host
/// live in a loop of this type).
#[derive(Debug)]
enum AppEvent {
    /// A chat message arrived on the app's network thread.
    Chat(String),
    /// The host's own event, passed through untouched.
    Host(HostEvent),
}

lineup_host::host_user_event!(AppEvent::Host);

fn main() -> ExitCode {
    let check = std::env::args().any(|a| a == "--check");
    let Ok(mut event_loop) = event_loop_with::<AppEvent>() else {
        eprintln!("no display: run it on a desktop or under xvfb-run -a");
        return ExitCode::FAILURE;
    };
    let shown = Rc::new(Cell::new(false));
    let seen = Rc::clone(&shown);
    let host: Result<Host, _> = HostBuilder::new()
        .on_outbound(move |m: &Message| {
            if let Message::UiEvent(_) = m {
                println!("host → agent: {}", m.to_json());
                seen.set(true);
            }
        })
        .build(&event_loop);
    let Ok(mut host) = host else {
        return ExitCode::FAILURE;
    };

    // The app's network thread: a chat message for the app, a Surface for the host.
    let app = event_loop.create_proxy();
    let handle = host.handle();
    std::thread::spawn(move || {
        let _ = app.send_event(AppEvent::Chat("The forecast is in.".to_owned()));
        let open = json!({"v": 1, "id": "m-1", "type": "lineup.v1.ui.open", "conversation_id": "c1",
            "sender": {"kind": "agent", "id": "agent"},
            "payload": {"instance_id": "weather", "app": {"id": "com.example.weather", "version": "1.0.0",
                "html": "<p id=t>…</p>", "css": "body { background: rgb(0, 150, 140); }",
                "js": "LineUpSurface.onState(function (s) { t.textContent = s.city; LineUpSurface.event('shown', {}); });"},
                "state": {"city": "Berlin"}}});
        let _ = handle.send_inbound(open.to_string().into_bytes());
    });

    let chats = Cell::new(0);
    let started = Instant::now();
    let asked = Cell::new(false);
    let screen = ScreenCheck::default();
    let handle = host.handle();
    event_loop.run_return(|event, target, flow| {
        // The app's own events are the app's business…
        if let Event::UserEvent(AppEvent::Chat(text)) = &event {
            println!("chat: {text}");
            chats.set(chats.get() + 1);
        }
        // …and every event goes to the host, which takes its own.
        *flow = host.handle_event(event, target);
        // Both arrived: the Surface must show on screen in its colour.
        let done = chats.get() > 0 && shown.get();
        if check && done && !asked.replace(true) {
            screen.ask(&handle, "weather", WEATHER);
        }
        if check && (screen.is_done() || started.elapsed() > Duration::from_secs(20)) {
            *flow = ControlFlow::Exit;
        }
    });
    host.close_all();
    if check && !(chats.get() > 0 && shown.get()) {
        eprintln!(
            "--check: chat {}, Surface event {}",
            chats.get(),
            shown.get()
        );
        return ExitCode::FAILURE;
    }
    if let (true, Err(e)) = (check, screen.verdict()) {
        eprintln!("--check: {e}");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

/// The weather Surface's background, which `--check` looks for on screen.
const WEATHER: [u8; 3] = [0, 150, 140];
