//! The smallest host: one window, one Surface sent as a typed envelope, and its events printed.
//!
//! ```sh
//! cargo run -p lineup-examples --example minimal             # on a desktop: click the button
//! xvfb-run -a cargo run -p lineup-examples --example minimal -- --check
//! ```
//!
//! `--check` exits 0 once the page's first event reached the agent side and its button shows on
//! screen in its colour: what CI runs.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::cell::OnceCell;
use std::process::ExitCode;
use std::rc::Rc;

use lineup_examples::ScreenCheck;
use lineup_host::protocol::{
    AppId, AppVersion, ConversationId, InlineApp, InlineBundle, InstanceId, Message, PartyId,
    SurfaceSource, UiOpen,
};
use lineup_host::{event_loop, AgentEnvelopes, HostBuilder, HostHandle};

fn main() -> ExitCode {
    let check = std::env::args().any(|a| a == "--check");
    match run(check) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("minimal: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(check: bool) -> Result<(), Box<dyn std::error::Error>> {
    let event_loop = event_loop()?;
    // The outbound callback is set before the host exists; `--check` stops the host through a
    // handle it gets once it does.
    let stopper: Rc<OnceCell<HostHandle>> = Rc::default();
    let stop = Rc::clone(&stopper);
    let screen = ScreenCheck::default();
    let verdict = screen.clone();
    let host = HostBuilder::new()
        .window_size(360, 160)
        .on_outbound(move |message: &Message| {
            // What the host sends the agent; a real embedder writes it to its agent connection.
            println!("host → agent: {}", message.to_json());
            if let (true, Message::UiEvent(_), Some(handle)) = (check, message, stop.get()) {
                screen.ask_then_stop(handle, "hello", BUTTON);
            }
        })
        .build(&event_loop)?;
    let handle = host.handle();
    let _ = stopper.set(handle.clone());

    // The agent's side: a Surface, typed; ids, conversation and sender filled in.
    let mut agent =
        AgentEnvelopes::new(ConversationId::try_from("c1")?, PartyId::try_from("agent")?);
    let js = "document.querySelector('button').onclick = function () { LineUpSurface.event('hello', {}); };\
              LineUpSurface.event('loaded', {});";
    let open = agent.envelope(UiOpen {
        instance_id: InstanceId::try_from("hello".to_owned())?,
        app: SurfaceSource::Inline(InlineApp {
            id: AppId::try_from("com.example.hello")?,
            name: Some("Hello".to_owned()),
            version: AppVersion::try_from("1.0.0")?,
            integrity: None,
            bundle: InlineBundle::new("<button>Say hello</button>", CSS, js)?,
        }),
        state: None,
    });
    handle.send_envelope(&open)?;
    host.run(event_loop)?; // until shutdown (or the window is closed)
    if check {
        verdict.verdict()?;
    }
    Ok(())
}

/// The button's colour, which `--check` looks for on screen.
const BUTTON: [u8; 3] = [30, 110, 220];
const CSS: &str = "button { background: rgb(30, 110, 220); color: white; border: 0; \
    font: 18px sans-serif; padding: 24px 48px; }";
