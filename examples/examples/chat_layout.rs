//! A chat app's window: its own GTK header of conversations on top, a sidebar on the left, and
//! the host's container (`lineup_host::platform::HostContainer`) beside it with the chosen
//! conversation's Surface and its question (a standard `confirm` the host draws over it). Switching conversations hides one conversation (its Surfaces and
//! standard components together, their pages, states and web processes kept) and shows the
//! other, with no window growth.
//!
//! ```sh
//! cargo run -p lineup-examples --example chat_layout             # on a desktop
//! xvfb-run -a cargo run -p lineup-examples --example chat_layout -- --check
//! ```
//!
//! `--check` switches to each conversation once both Surfaces are ready, reads the window back
//! from the screen after each switch (the chosen conversation's colour fills the container, the
//! other's shows nowhere, the header and the sidebar show no Surface, and the question's card
//! covers the default column at the container's right edge, so its buttons are inside the
//! container), checks that the window kept its size, then exits 0.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::cell::{Cell, RefCell};
use std::process::ExitCode;
use std::rc::Rc;
use std::time::{Duration, Instant};

use lineup_host::native::gtk::{self, prelude::*};
use lineup_host::platform::HostContainer;
use lineup_host::protocol::{ConversationId, SurfaceKey};
use lineup_host::tao::event_loop::ControlFlow;
use lineup_host::tao::platform::run_return::EventLoopExtRunReturn;
use lineup_host::tao::platform::unix::WindowExtUnix;
use lineup_host::tao::window::WindowBuilder;
use lineup_host::{
    event_loop, window_pixels, ChildSlot, HostBuilder, HostDelegate, Rect, WindowPixels,
    COMPONENT_COLUMN_WIDTH, COMPONENT_GAP,
};
use serde_json::json;

const CONVERSATIONS: [&str; 2] = ["weather", "tasks"];
/// Each conversation's Surface background, which `--check` looks for on screen.
const COLOURS: [[u8; 3]; 2] = [[40, 120, 220], [230, 160, 30]];
/// The window and the header's height, in logical pixels.
const WIDTH: u32 = 640;
const HEIGHT: u32 = 480;
const HEADER: u32 = 48;
const SIDEBAR: u32 = 160;

/// Hears which Surfaces are ready; gives each Surface the whole container.
struct Ready(Rc<RefCell<Vec<SurfaceKey>>>);

impl HostDelegate for Ready {
    fn notify_ready(&mut self, key: &SurfaceKey) {
        self.0.borrow_mut().push(key.clone());
    }

    /// One conversation shows at a time, so its Surface gets the whole container: the slot's
    /// size is the container's, and the rectangle is in its coordinates. (Standard components
    /// keep the default: a column at the container's right edge.)
    fn request_child_placement(&mut self, slot: &ChildSlot<'_>) -> Rect {
        Rect {
            x: 0,
            y: 0,
            width: slot.width,
            height: slot.height,
        }
    }
}

fn conversation(name: &str) -> Option<ConversationId> {
    ConversationId::try_from(format!("c-{name}").as_str()).ok()
}

fn main() -> ExitCode {
    let check = std::env::args().any(|a| a == "--check");
    let Ok(mut event_loop) = event_loop() else {
        eprintln!("no display: run it on a desktop or under xvfb-run -a");
        return ExitCode::FAILURE;
    };
    let Ok(window) = WindowBuilder::new()
        .with_title("chat")
        .with_inner_size(lineup_host::tao::dpi::LogicalSize::new(WIDTH, HEIGHT))
        .build(&event_loop)
    else {
        return ExitCode::FAILURE;
    };
    let window = Rc::new(window);
    // The app's own layout: a header of conversations, then the host's container.
    let chosen = Rc::new(Cell::new(Some(0usize)));
    let header = gtk::Box::new(gtk::Orientation::Horizontal, 6);
    header.set_size_request(-1, HEADER as i32);
    for (i, name) in CONVERSATIONS.iter().enumerate() {
        let button = gtk::Button::with_label(name);
        let chosen = Rc::clone(&chosen);
        button.connect_clicked(move |_| chosen.set(Some(i)));
        header.pack_start(&button, false, false, 6);
    }
    let sidebar = gtk::Label::new(Some("conversations"));
    sidebar.set_size_request(SIDEBAR as i32, -1);
    let container = HostContainer::new();
    let row = gtk::Box::new(gtk::Orientation::Horizontal, 0);
    row.pack_start(&sidebar, false, false, 0);
    row.pack_start(&container.widget(), true, true, 0);
    if let Some(vbox) = window.default_vbox() {
        vbox.pack_start(&header, false, false, 0);
        vbox.pack_start(&row, true, true, 0);
    }
    header.show_all();
    row.show_all();

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
            "payload": {"instance_id": name, "app": {"id": format!("com.example.{name}"),
                "version": "1.0.0", "html": format!("<h1>{name}</h1>"), "css": css, "js": ""}}});
        let _ = handle.send_inbound(open.to_string().into_bytes());
        // Each conversation asks a question too: a standard component the host draws over
        // its Surfaces, in the default column at the container's right edge.
        let ask = json!({"v": 1, "id": format!("ask-{name}"), "type": "lineup.v1.ui.open",
            "conversation_id": format!("c-{name}"), "sender": {"kind": "agent", "id": "agent"},
            "payload": {"instance_id": format!("q-{name}"), "component": {"id": "confirm",
                "version": "1", "props": {"title": format!("Publish the {name} report?"),
                "confirm_label": "Publish"}}}});
        let _ = handle.send_inbound(ask.to_string().into_bytes());
    }

    let (mut switches, mut shown) = (0, None);
    let size_at_start = window.inner_size();
    event_loop.run_return(|event, target, flow| {
        *flow = host.handle_event(event, target);
        // Both Surfaces open: show the chosen conversation, hide the other.
        if ready.borrow().len() < CONVERSATIONS.len() {
            return;
        }
        if let Some(i) = chosen.take() {
            for (j, name) in CONVERSATIONS.iter().enumerate() {
                if let Some(id) = conversation(name) {
                    host.set_conversation_visible(&id, i == j);
                }
            }
            println!("showing {}", CONVERSATIONS[i]);
            shown = check.then(|| (i, Instant::now()));
        }
        // --check: what the screen shows after the switch.
        if let Some((i, since)) = shown {
            *flow = ControlFlow::WaitUntil(Instant::now() + Duration::from_millis(50));
            let seen = window_pixels(&window).map(|p| seen(&p, i));
            if seen.as_ref().is_ok_and(Seen::as_asked) {
                (switches, shown) = (switches + 1, None);
                chosen.set((switches < CONVERSATIONS.len()).then_some(switches));
            } else if since.elapsed() > Duration::from_secs(10) {
                eprintln!("--check: {} not shown as asked: {seen:?}", CONVERSATIONS[i]);
                shown = None;
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

/// What the window shows of conversation `i`, in pixels of a colour: the chosen Surface's
/// colour in the container, the other's left of the question's column, and the chosen one's in
/// the header, in the sidebar, on the question's card and in the container left of it.
#[derive(Debug)]
struct Seen {
    container: usize,
    other: usize,
    header: usize,
    sidebar: usize,
    card: usize,
    beside: usize,
}

impl Seen {
    /// Conversation `i` shows as asked: its colour fills the container (the rectangles are in
    /// the container's coordinates and its size, so nothing of the Surface lands under the
    /// header or the sidebar, or past the window), the other's is nowhere, and the question's
    /// card covers its column (with the window's width in place of the container's, the card
    /// would start further right, its left part would show the Surface, and its buttons would
    /// be cut off).
    fn as_asked(&self) -> bool {
        let area = (WIDTH - SIDEBAR) * (HEIGHT - HEADER);
        let filled = u32::try_from(self.container).unwrap_or(u32::MAX) > area * 3 / 4;
        filled
            && self.other == 0
            && self.header == 0
            && self.sidebar == 0
            && self.card == 0
            && self.beside > 1000
    }
}

fn seen(pixels: &WindowPixels, i: usize) -> Seen {
    let (width, height) = (pixels.width(), pixels.height());
    let count = |area: [u32; 4], colour| pixels.count_near(area, colour, 12);
    // The default column: COMPONENT_COLUMN_WIDTH wide, COMPONENT_GAP from the container's right.
    let column_x = width - COMPONENT_GAP - COMPONENT_COLUMN_WIDTH;
    Seen {
        container: count(
            [SIDEBAR, HEADER, width - SIDEBAR, height - HEADER],
            COLOURS[i],
        ),
        sidebar: count([0, HEADER, SIDEBAR, height - HEADER], COLOURS[i]),
        card: count(
            [column_x + 30, HEADER + COMPONENT_GAP + 12, 20, 20],
            COLOURS[i],
        ),
        beside: count(
            [SIDEBAR + 10, HEADER + 10, column_x - SIDEBAR - 20, 100],
            COLOURS[i],
        ),
        // Left of the question's column: its buttons' blue may come near the other colour.
        other: count([0, 0, column_x, height], COLOURS[1 - i]),
        header: count([0, 0, width, HEADER], COLOURS[i]),
    }
}
