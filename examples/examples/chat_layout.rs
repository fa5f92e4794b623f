//! A chat app's window: its own GTK header of conversations on top, a sidebar on the left, and
//! the host's container (`lineup_host::platform::HostContainer`) beside it with the chosen
//! conversation's Surface and its question (a standard `confirm` the host draws over it).
//! Switching conversations hides one conversation (its Surfaces and standard components
//! together, their pages, states and web processes kept) and shows the other, with no window
//! growth. The app has its own user events (the agent thread's chat lines) beside the host's,
//! and its own capability, `reports.publish`, which the agent asks for in both conversations:
//! the shown conversation's consent prompt shows at once, a hidden one's waits until the app
//! shows that conversation (`HiddenConversationPrompts::WaitUntilShown`), and each prompt names
//! the conversation by the app's label for it.
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
//! container). Then the agent asks to publish both reports while "tasks" shows: the tasks prompt
//! shows and closes when its call expires, and the container shows the Surface again where the
//! prompt was (nothing of the prompt stays painted over the Surfaces); the weather prompt waits
//! unseen, and shows, naming "Weather", once the app switches back. It checks that the window
//! kept its size and that the app's own chat lines arrived, then exits 0.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::cell::{Cell, RefCell};
use std::process::ExitCode;
use std::rc::Rc;
use std::time::{Duration, Instant};

use lineup_host::native::gtk::{self, prelude::*};
use lineup_host::platform::HostContainer;
use lineup_host::protocol::{
    Capability, CapabilityName, ConversationId, HandlerError, JsonObject, Message, OpaqueVersion,
    Risk, Status, SurfaceKey, Timestamp,
};
use lineup_host::tao::event::Event;
use lineup_host::tao::event_loop::{ControlFlow, EventLoopProxy};
use lineup_host::tao::platform::run_return::EventLoopExtRunReturn;
use lineup_host::tao::platform::unix::WindowExtUnix;
use lineup_host::tao::window::WindowBuilder;
use lineup_host::{
    event_loop_with, screen_pixels_of, typed, ChildSlot, HiddenConversationPrompts, HostBuilder,
    HostDelegate, HostEvent, HostHandle, PromptContent, PromptOptions, PromptQueue, Rect,
    TimestampExt, WindowPixels, COMPONENT_COLUMN_WIDTH, COMPONENT_GAP,
};
use serde_json::json;

const CONVERSATIONS: [&str; 2] = ["weather", "tasks"];
/// The app's names for them, which the consent prompts show.
const LABELS: [&str; 2] = ["Weather", "Tasks"];
/// Each conversation's Surface background, which `--check` looks for on screen.
const COLOURS: [[u8; 3]; 2] = [[40, 120, 220], [230, 160, 30]];
/// The window and the header's height, in logical pixels.
const WIDTH: u32 = 640;
const HEIGHT: u32 = 480;
const HEADER: u32 = 48;
const SIDEBAR: u32 = 160;
/// How long the agent gives the tasks prompt before its call expires: long enough for the
/// first prompt window of the process to show on a loaded machine (it took over 6 s there).
const TASKS_EXPIRY_SECS: u64 = 20;

/// The app's user events: its own (the agent thread's chat lines) and the host's.
#[derive(Debug)]
enum AppEvent {
    /// A line of the chat, for the app to show.
    Chat(String),
    /// The host's own event, passed through untouched.
    Host(HostEvent),
}

lineup_host::host_user_event!(AppEvent::Host);

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

#[derive(serde::Deserialize)]
struct Report {
    report: String,
}

#[derive(serde::Serialize)]
struct Published {
    published: String,
}

fn conversation(name: &str) -> Option<ConversationId> {
    ConversationId::try_from(format!("c-{name}").as_str()).ok()
}

/// The app's own capability: publishing a conversation's report, with the user's consent.
fn publish() -> Result<Capability, Box<dyn std::error::Error>> {
    let schema: JsonObject = serde_json::from_value(json!({
        "type": "object", "required": ["report"],
        "properties": {"report": {"type": "string", "maxLength": 40}}
    }))?;
    Ok(Capability::new(
        CapabilityName::try_from("reports.publish")?,
        OpaqueVersion::try_from("1")?,
        Risk::UserConfirmation,
        schema,
    )?)
}

/// The agent, on a thread of its own: a Surface and a question in each conversation, and a
/// chat line for the app about each.
fn agent(handle: HostHandle, app: EventLoopProxy<AppEvent>) {
    std::thread::spawn(move || {
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
            let _ = app.send_event(AppEvent::Chat(format!("{name}: the report is ready")));
        }
    });
}

/// The agent asks to publish both reports; the tasks call expires after
/// [`TASKS_EXPIRY_SECS`].
fn ask_to_publish(handle: &HostHandle) {
    for name in CONVERSATIONS {
        let expiry = if name == "tasks" {
            TASKS_EXPIRY_SECS
        } else {
            300
        };
        let call = json!({"v": 1, "id": format!("call-{name}"), "type": "lineup.v1.app.call",
            "conversation_id": format!("c-{name}"), "sender": {"kind": "agent", "id": "agent"},
            "payload": {"call_id": format!("publish-{name}"), "capability": "reports.publish",
                "reason": format!("Share the {name} report with the team"),
                "arguments": {"report": name}, "expires_at": Timestamp::in_secs(expiry)}});
        let _ = handle.send_inbound(call.to_string().into_bytes());
    }
}

/// Where `--check` is.
#[derive(Clone, Copy, Debug)]
enum Phase {
    /// Showing conversation `i`, switched at `since`.
    Switching(usize, Instant),
    /// The agent asked; waiting for the tasks prompt to show, expire and leave the screen.
    Asked(Instant),
    /// Switched back to weather; waiting for its held prompt.
    Released(Instant),
    Done,
}

fn main() -> ExitCode {
    let check = std::env::args().any(|a| a == "--check");
    match run(check) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("chat_layout: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(check: bool) -> Result<(), Box<dyn std::error::Error>> {
    let mut event_loop = event_loop_with::<AppEvent>()
        .map_err(|e| format!("no display ({e}): run it on a desktop or under xvfb-run -a"))?;
    let window = Rc::new(
        WindowBuilder::new()
            .with_title("chat")
            .with_inner_size(lineup_host::tao::dpi::LogicalSize::new(WIDTH, HEIGHT))
            .build(&event_loop)?,
    );
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

    // The built-in prompt, kept to hear which requests it shows.
    let prompts = PromptQueue::new(&event_loop, PromptOptions::default())?;
    prompts.attach_to(&window);
    let shown_prompts = Rc::new(RefCell::new(Vec::<String>::new()));
    let heard = Rc::clone(&shown_prompts);
    prompts.on_shown(move |request: &PromptContent| {
        let line = request.conversation_line().unwrap_or_default();
        println!("prompt: {} {line}", request.headline());
        heard.borrow_mut().push(line);
    });
    let results = Rc::new(RefCell::new(Vec::<(String, Status)>::new()));
    let answered = Rc::clone(&results);
    let ready = Rc::new(RefCell::new(Vec::new()));
    let mut host = HostBuilder::new()
        .child_views_in(Rc::clone(&window))
        .delegate(Ready(Rc::clone(&ready)))
        .capability(
            publish()?,
            typed(|r: Report| {
                Ok::<_, HandlerError>(Published {
                    published: r.report,
                })
            }),
        )
        .consent_prompt(prompts)
        .hidden_conversation_prompts(HiddenConversationPrompts::WaitUntilShown)
        .on_outbound(move |message: &Message| {
            if let Message::AppResult(result) = message {
                println!("host → agent: {}", message.to_json());
                let call = result.payload.call_id.as_str().to_owned();
                answered.borrow_mut().push((call, result.payload.status));
            }
        })
        .build(&event_loop)?;
    for (name, label) in CONVERSATIONS.into_iter().zip(LABELS) {
        if let Some(id) = conversation(name) {
            host.set_conversation_label(&id, Some(label));
        }
    }
    let handle = host.handle();
    agent(handle.clone(), event_loop.create_proxy());

    let mut chats = 0;
    let mut covered = false;
    let mut phase = None;
    let mut failure = None;
    let size_at_start = window.inner_size();
    event_loop.run_return(|event, target, flow| {
        // The app's own events are the app's business; every event goes to the host, which
        // takes its own.
        if let Event::UserEvent(AppEvent::Chat(line)) = &event {
            println!("chat: {line}");
            chats += 1;
        }
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
            if !check && phase.is_none() {
                ask_to_publish(&handle);
            }
            phase = Some(match phase {
                Some(Phase::Asked(_)) => Phase::Released(Instant::now()),
                _ => Phase::Switching(i, Instant::now()),
            });
        }
        if !check {
            return;
        }
        *flow = ControlFlow::WaitUntil(Instant::now() + Duration::from_millis(50));
        let shown_lines = shown_prompts.borrow();
        let result = |call: &str| {
            results
                .borrow()
                .iter()
                .find(|(c, _)| c == call)
                .map(|(_, s)| *s)
        };
        let step = match phase {
            // --check: what the screen shows after the switch.
            Some(Phase::Switching(i, since)) => {
                let seen = screen_pixels_of(&window).map(|p| seen(&p, i));
                if seen.as_ref().is_ok_and(Seen::as_asked) && i + 1 < CONVERSATIONS.len() {
                    chosen.set(Some(i + 1));
                    Ok(None)
                } else if seen.as_ref().is_ok_and(Seen::as_asked) {
                    ask_to_publish(&handle);
                    Ok(Some(Phase::Asked(Instant::now())))
                } else if since.elapsed() > Duration::from_secs(10) {
                    Err(format!("{} not shown as asked: {seen:?}", CONVERSATIONS[i]))
                } else {
                    Ok(None)
                }
            }
            // The tasks prompt showed and its call expired: the Surface shows where it was.
            Some(Phase::Asked(since)) => {
                let expired = result("publish-tasks") == Some(Status::Expired);
                let seen = screen_pixels_of(&window).map(|p| seen(&p, 1));
                let weather = conversation("weather").map_or(0, |c| host.waiting_prompts(&c));
                let tasks_prompt = shown_lines.iter().any(|l| l.contains(LABELS[1]));
                // The read-back sees the prompt over the Surface while it shows: without that,
                // it could not see what the prompt leaves behind either.
                if tasks_prompt && !expired && seen.as_ref().is_ok_and(|s| !s.as_asked()) {
                    covered = true;
                }
                if shown_lines.iter().any(|l| l.contains(LABELS[0])) {
                    Err("the weather prompt showed while its conversation was hidden".into())
                } else if expired && weather == 1 && seen.as_ref().is_ok_and(Seen::as_asked) {
                    if tasks_prompt && covered {
                        chosen.set(Some(0));
                        Ok(None)
                    } else {
                        Err(format!(
                            "the tasks call expired; its prompt shown {tasks_prompt}, \
                             seen over the Surface {covered}"
                        ))
                    }
                } else if since.elapsed() > Duration::from_secs(TASKS_EXPIRY_SECS + 15) {
                    Err(format!(
                        "after the tasks prompt: expired {expired}, weather's waiting \
                         {weather}, screen {seen:?}"
                    ))
                } else {
                    Ok(None)
                }
            }
            // Weather shown again: its held prompt shows, naming it.
            Some(Phase::Released(since)) => {
                if shown_lines.iter().any(|l| l.contains(LABELS[0])) {
                    Ok(Some(Phase::Done))
                } else if since.elapsed() > Duration::from_secs(15) {
                    Err("the weather prompt did not show once weather was shown".into())
                } else {
                    Ok(None)
                }
            }
            Some(Phase::Done) | None => Ok(None),
        };
        drop(shown_lines);
        match step {
            Ok(Some(next)) => phase = Some(next),
            Ok(None) => {}
            Err(e) => failure = Some(e),
        }
        if failure.is_some() || matches!(phase, Some(Phase::Done)) {
            *flow = ControlFlow::Exit;
        }
    });
    host.close_all();
    if !check {
        return Ok(());
    }
    if let Some(failure) = failure {
        return Err(format!("--check: {failure}").into());
    }
    if !matches!(phase, Some(Phase::Done)) {
        return Err(format!("--check: ended in {phase:?}").into());
    }
    // Hidden Surfaces take no room: switching never grows the window.
    let size = window.inner_size();
    if size != size_at_start {
        return Err(format!("--check: the window went from {size_at_start:?} to {size:?}").into());
    }
    if chats < CONVERSATIONS.len() {
        return Err(format!("--check: {chats} of the agent's chat lines arrived").into());
    }
    Ok(())
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
    /// Of the container left of the column and below the Surface's heading: pixels of the
    /// chosen colour, and how many there are.
    uncovered: usize,
    uncovered_of: usize,
}

impl Seen {
    /// Conversation `i` shows as asked: its colour fills the container (the rectangles are in
    /// the container's coordinates and its size, so nothing of the Surface lands under the
    /// header or the sidebar, or past the window), the other's is nowhere, and the question's
    /// card covers its column (with the window's width in place of the container's, the card
    /// would start further right, its left part would show the Surface, and its buttons would
    /// be cut off). Left of the column, below the Surface's heading, nothing but the Surface
    /// shows: no strip of a window that was over it and closed stays painted there.
    fn as_asked(&self) -> bool {
        let area = (WIDTH - SIDEBAR) * (HEIGHT - HEADER);
        let filled = u32::try_from(self.container).unwrap_or(u32::MAX) > area * 3 / 4;
        filled
            && self.other == 0
            && self.header == 0
            && self.sidebar == 0
            && self.card == 0
            && self.beside > 1000
            && self.uncovered * 100 >= self.uncovered_of * 99
    }
}

fn seen(pixels: &WindowPixels, i: usize) -> Seen {
    let (width, height) = (pixels.width(), pixels.height());
    let count = |area: [u32; 4], colour| pixels.count_near(area, colour, 12);
    // The default column: COMPONENT_COLUMN_WIDTH wide, COMPONENT_GAP from the container's right.
    let column_x = width - COMPONENT_GAP - COMPONENT_COLUMN_WIDTH;
    let uncovered = [
        SIDEBAR,
        HEADER + 60,
        column_x - SIDEBAR - 10,
        height - HEADER - 70,
    ];
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
        uncovered: count(uncovered, COLOURS[i]),
        uncovered_of: (uncovered[2] * uncovered[3]) as usize,
        // Left of the question's column: its buttons' blue may come near the other colour.
        other: count([0, 0, column_x, height], COLOURS[1 - i]),
        header: count([0, 0, width, HEADER], COLOURS[i]),
    }
}
