//! An app's own capability, `notes.save`: declared with a JSON Schema and a risk, run by a
//! typed handler on a thread of its own, and only after the user's consent (R-CAP-1…4).
//!
//! ```sh
//! cargo run -p lineup-examples --example capability             # on a desktop: the host's prompt asks
//! xvfb-run -a cargo run -p lineup-examples --example capability -- --check
//! ```
//!
//! Interactively the host's own prompt asks the person. `--check` plugs in the app's own
//! consent prompt instead (any `FnMut(PendingConsent)` is one), which prints what it would show
//! and allows; it exits 0 once the `app.result` went out and the agent's note Surface shows on
//! screen in its colour: what CI runs.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::cell::OnceCell;
use std::process::ExitCode;
use std::rc::Rc;

use lineup_examples::ScreenCheck;
use lineup_host::protocol::{
    Capability, CapabilityName, HandlerError, JsonObject, Message, OpaqueVersion, Risk, Status,
    Timestamp,
};
use lineup_host::{event_loop, typed, HostBuilder, HostHandle, PendingConsent, TimestampExt};
use serde_json::json;

#[derive(serde::Deserialize)]
struct Note {
    title: String,
}

#[derive(serde::Serialize)]
struct Saved {
    saved: String,
}

fn main() -> ExitCode {
    let check = std::env::args().any(|a| a == "--check");
    match run(check) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("capability: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(check: bool) -> Result<(), Box<dyn std::error::Error>> {
    let event_loop = event_loop()?;
    let schema: JsonObject = serde_json::from_value(json!({
        "type": "object", "required": ["title"],
        "properties": {"title": {"type": "string", "maxLength": 80}}
    }))?;
    let save = Capability::new(
        CapabilityName::try_from("notes.save")?,
        OpaqueVersion::try_from("1")?,
        Risk::UserConfirmation,
        schema,
    )?;
    let stopper: Rc<OnceCell<HostHandle>> = Rc::default();
    let stop = Rc::clone(&stopper);
    let outcome: Rc<OnceCell<Status>> = Rc::default();
    let answered = Rc::clone(&outcome);
    let screen = ScreenCheck::default();
    let verdict = screen.clone();
    let mut builder = HostBuilder::new()
        .capability(
            save,
            typed(|note: Note| Ok::<_, HandlerError>(Saved { saved: note.title })),
        )
        .on_outbound(move |message: &Message| {
            if let Message::AppResult(result) = message {
                println!("host → agent: {}", message.to_json());
                let _ = answered.set(result.payload.status);
                if let (true, Some(handle)) = (check, stop.get()) {
                    screen.ask_then_stop(handle, "note", NOTE);
                }
            }
        });
    if check {
        builder = builder.consent_prompt(|pending: PendingConsent| {
            let request = pending.request();
            println!(
                "consent: {} asks to run {} because {:?}",
                request.agent(),
                request.capability(),
                request.reason()
            );
            pending.allow();
        });
    }
    let host = builder.build(&event_loop)?;
    let handle = host.handle();
    let _ = stopper.set(handle.clone());
    // The agent shows the note it is about to save, then asks to save it.
    let open = json!({"v": 1, "id": "m-0", "type": "lineup.v1.ui.open", "conversation_id": "c1",
        "sender": {"kind": "agent", "id": "agent"},
        "payload": {"instance_id": "note", "app": {"id": "com.example.note", "version": "1.0.0",
            "html": "<h1>Standup, Friday</h1>", "js": "",
            "css": "body { background: rgb(250, 210, 60); font: 20px sans-serif; }"}}});
    handle.send_inbound(open.to_string().into_bytes())?;
    let call = json!({"v": 1, "id": "m-1", "type": "lineup.v1.app.call", "conversation_id": "c1",
        "sender": {"kind": "agent", "id": "agent"},
        "payload": {"call_id": "call-1", "capability": "notes.save",
            "reason": "Keep the meeting notes", "arguments": {"title": "Standup, Friday"},
            "expires_at": Timestamp::in_secs(60)}});
    handle.send_inbound(call.to_string().into_bytes())?;
    host.run(event_loop)?;
    match outcome.get() {
        Some(Status::Completed) if check => Ok(verdict.verdict()?),
        Some(Status::Completed) => Ok(()),
        other if check => Err(format!("--check: the call ended {other:?}").into()),
        _ => Ok(()),
    }
}

/// The note Surface's background, which `--check` looks for on screen.
const NOTE: [u8; 3] = [250, 210, 60];
