//! A chat app's window: its own GTK header of conversations on top, the Surfaces of the chosen
//! conversation as child views below it, and switching conversations hides one set of Surfaces
//! and shows the other (their pages, states and web processes kept), with no window growth.
//!
//! ```sh
//! cargo run -p lineup-examples --example chat_layout             # on a desktop
//! xvfb-run -a cargo run -p lineup-examples --example chat_layout -- --check
//! ```
//!
//! `--check` switches to each conversation once both Surfaces are ready, reads the window back
//! from the screen after each switch (the chosen conversation's colour shows, the other's does
//! not), checks that the window kept its size from the start, then exits 0.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::cell::{Cell, RefCell};
use std::process::ExitCode;
use std::rc::Rc;
use std::time::{Duration, Instant};

use lineup_host::native::gtk::{self, prelude::*};
use lineup_host::protocol::SurfaceKey;
use lineup_host::tao::event_loop::ControlFlow;
use lineup_host::tao::platform::run_return::EventLoopExtRunReturn;
use lineup_host::tao::platform::unix::WindowExtUnix;
use lineup_host::tao::window::WindowBuilder;
use lineup_host::{event_loop, window_pixels, ChildSlot, HostBuilder, HostDelegate, Rect};
use serde_json::json;

const CONVERSATIONS: [&str; 2] = ["weather", "tasks"];
/// Each conversation's Surface background, which `--check` looks for on screen.
const COLOURS: [[u8; 3]; 2] = [[40, 120, 220], [230, 160, 30]];

/// Hears which Surfaces are ready.
struct Ready(Rc<RefCell<Vec<SurfaceKey>>>);

impl HostDelegate for Ready {
    fn notify_ready(&mut self, key: &SurfaceKey) {
        self.0.borrow_mut().push(key.clone());
    }

    /// One conversation shows at a time, so every Surface gets the whole area under the header
    /// (the default stacks them in a column, which would grow the window to hold them all).
    fn request_child_placement(&mut self, slot: &ChildSlot<'_>) -> Rect {
        Rect {
            x: 0,
            y: 0,
            width: slot.width,
            height: slot.height.saturating_sub(HEADER),
        }
    }
}

/// The header's height, taken from the window's content area (the slot's size).
const HEADER: u32 = 48;

fn main() -> ExitCode {
    let check = std::env::args().any(|a| a == "--check");
    let Ok(mut event_loop) = event_loop() else {
        eprintln!("no display: run it on a desktop or under xvfb-run -a");
        return ExitCode::FAILURE;
    };
    let Ok(window) = WindowBuilder::new()
        .with_title("chat")
        .with_inner_size(lineup_host::tao::dpi::LogicalSize::new(640.0, 480.0))
        .build(&event_loop)
    else {
        return ExitCode::FAILURE;
    };
    let window = Rc::new(window);
    // The app's own widgets, first in the window's box; the host's views go below them.
    let chosen = Rc::new(Cell::new(Some(0usize)));
    let header = gtk::Box::new(gtk::Orientation::Horizontal, 6);
    for (i, name) in CONVERSATIONS.iter().enumerate() {
        let button = gtk::Button::with_label(name);
        let chosen = Rc::clone(&chosen);
        button.connect_clicked(move |_| chosen.set(Some(i)));
        header.pack_start(&button, false, false, 6);
    }
    if let Some(vbox) = window.default_vbox() {
        vbox.pack_start(&header, false, false, 6);
    }
    header.show_all();

    let ready = Rc::new(RefCell::new(Vec::new()));
    let Ok(mut host) = HostBuilder::new()
        .child_views_in(Rc::clone(&window))
        .delegate(Ready(Rc::clone(&ready)))
        .build(&event_loop)
    else {
        return ExitCode::FAILURE;
    };
    let handle = host.handle();
    for (name, [r, g, b]) in CONVERSATIONS.into_iter().zip(COLOURS) {
        let css = format!("body{{background:rgb({r},{g},{b})}} h1{{font:24px sans-serif}}");
        let open = json!({"v": 1, "id": format!("open-{name}"), "type": "lineup.v1.ui.open",
            "conversation_id": format!("c-{name}"), "sender": {"kind": "agent", "id": "agent"},
            "payload": {"instance_id": name, "app": {"id": format!("com.example.{name}"), "version": "1.0.0",
                "html": format!("<h1>{name}</h1>"), "css": css, "js": ""}}});
        let _ = handle.send_inbound(open.to_string().into_bytes());
    }

    let (mut switches, mut shown) = (0, None);
    let size_at_start = window.inner_size();
    event_loop.run_return(|event, target, flow| {
        *flow = host.handle_event(event, target);
        // Both Surfaces open: show the chosen conversation's, hide the other's.
        if ready.borrow().len() < CONVERSATIONS.len() {
            return;
        }
        if let Some(i) = chosen.take() {
            for key in host.surfaces() {
                host.set_surface_visible(&key, key.instance.as_str() == CONVERSATIONS[i]);
            }
            println!("showing {}", CONVERSATIONS[i]);
            shown = check.then(|| (i, Instant::now()));
        }
        // --check: the screen shows the chosen conversation's colour and not the other's.
        if let Some((i, since)) = shown {
            *flow = ControlFlow::WaitUntil(Instant::now() + Duration::from_millis(50));
            let count = |p: &lineup_host::WindowPixels, c| p.count_near([0, 0, 9999, 9999], c, 12);
            let on_screen = window_pixels(&window)
                .is_ok_and(|p| count(&p, COLOURS[i]) > 1000 && count(&p, COLOURS[1 - i]) == 0);
            if on_screen {
                (switches, shown) = (switches + 1, None);
                chosen.set((switches < CONVERSATIONS.len()).then_some(switches));
            } else if since.elapsed() > Duration::from_secs(5) {
                *flow = ControlFlow::Exit;
            }
        }
        if check && switches == CONVERSATIONS.len() {
            *flow = ControlFlow::Exit;
        }
    });
    host.close_all();
    if check && switches < CONVERSATIONS.len() {
        eprintln!(
            "--check: {switches} switches seen on screen, {} Surfaces ready",
            ready.borrow().len()
        );
        return ExitCode::FAILURE;
    }
    // Hidden Surfaces take no room: switching never grows the window.
    let size = window.inner_size();
    if check && size != size_at_start {
        eprintln!("--check: the window went from {size_at_start:?} to {size:?}");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
