//! Asking the person yes or no with no HTML: the agent sends a standard `confirm` (R-STD-1) and
//! the host draws it itself, on by default in [`HostBuilder`]. The session's first line lists
//! the nine standard components, each by the digest of its published schema (R-STD-14).
//!
//! ```sh
//! cargo run -p lineup-examples --example ask             # on a desktop: click Publish or Cancel
//! xvfb-run -a cargo run -p lineup-examples --example ask -- --check
//! ```
//!
//! `--check` checks the first line (`client.inventory`: the nine components, in at most 2 KiB),
//! then clicks Publish for real, through the X server as a mouse would, once the confirm's guard
//! delay has passed (R-STD-8), and exits 0 when the agent side hears the answer: `ui.event
//! submit` with `via: "host"`.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::cell::RefCell;
use std::process::ExitCode;
use std::rc::Rc;
use std::time::{Duration, Instant};

use lineup_host::protocol::Message;
use lineup_host::tao::event_loop::ControlFlow;
use lineup_host::tao::platform::run_return::EventLoopExtRunReturn;
use lineup_host::{event_loop, HostBuilder};
use serde_json::{json, Value};

/// The standard components of `lineup.v1` (R-STD-1).
const COMPONENTS: [&str; 9] = [
    "markdown", "text", "status", "progress", "alert", "confirm", "choice", "input", "form",
];
/// The longest first line the check accepts.
const MAX_FIRST_LINE: usize = 2048;
/// How long after the confirm shows the check clicks: past the default guard delay (500 ms).
const CLICK_AFTER: Duration = Duration::from_millis(1500);
/// How long the check waits for the answer before clicking again (a click the guard dropped).
const CLICK_AGAIN: Duration = Duration::from_secs(3);
/// How long the check runs at most.
const CHECK_WITHIN: Duration = Duration::from_secs(60);

fn main() -> ExitCode {
    let check = std::env::args().any(|a| a == "--check");
    match run(check) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ask: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(check: bool) -> Result<(), Box<dyn std::error::Error>> {
    let mut event_loop = event_loop()?;
    // What the host sends the agent; a real embedder writes each line to its agent connection.
    let lines: Rc<RefCell<Vec<String>>> = Rc::default();
    let sent = Rc::clone(&lines);
    let mut host = HostBuilder::new()
        .on_outbound(move |message: &Message| {
            let line = message.to_json();
            println!("host → agent: {line}");
            sent.borrow_mut().push(line);
        })
        .build(&event_loop)?;
    let handle = host.handle();
    // The agent's side: one question, in the host's own words for a confirm.
    let open = json!({
        "v": 1, "id": "m1", "type": "lineup.v1.ui.open", "conversation_id": "c1",
        "sender": {"kind": "agent", "id": "agent"},
        "payload": {"instance_id": "publish", "component": {"id": "confirm", "version": "1",
            "props": {"title": "Publish the report?", "body": "It goes to **everyone** in the team.",
                      "confirm_label": "Publish", "deny_label": "Cancel"}}},
    });
    handle.send_inbound(open.to_string().into_bytes())?;

    let start = Instant::now();
    let mut shown_at = None;
    let mut clicked_at: Option<Instant> = None;
    let mut verdict: Result<(), String> = Err("the check did not end".to_owned());
    let mut ended = false;
    event_loop.run_return(|event, target, flow| {
        *flow = host.handle_event(event, target);
        if ended {
            *flow = ControlFlow::Exit;
            return;
        }
        let answer = lines.borrow().iter().find_map(|l| answered(l));
        ended = answer.is_some();
        if let Some(answer) = &answer {
            println!("agent: the person answered {answer}");
        }
        if !check {
            if answer.is_some() {
                *flow = ControlFlow::Exit;
            }
            return;
        }
        if let Some(answer) = answer {
            verdict = first_line(&lines.borrow()).and_then(|()| match answer.as_str() {
                "submit via host" => Ok(()),
                other => Err(format!("the answer was {other}, not a submit via the host")),
            });
            *flow = ControlFlow::Exit;
            return;
        }
        if start.elapsed() > CHECK_WITHIN {
            verdict = Err(format!("no answer within {CHECK_WITHIN:?}"));
            ended = true;
            *flow = ControlFlow::Exit;
            return;
        }
        *flow = ControlFlow::WaitUntil(Instant::now() + Duration::from_millis(50));
        let Some(key) = host.shown_components().into_iter().next() else {
            return;
        };
        let shown = *shown_at.get_or_insert_with(Instant::now);
        let due = clicked_at.map_or(shown + CLICK_AFTER, |at| at + CLICK_AGAIN);
        if Instant::now() >= due {
            clicked_at = Some(Instant::now());
            // A real click (XTEST), at the middle of the confirm button as the box shows it now.
            host.click_component_for_test(&key, "confirm", |sent| {
                if let Err(e) = sent {
                    eprintln!("ask: the click was not sent: {e}");
                }
            });
        }
    });
    if check {
        verdict?;
        println!("ask: check passed");
    }
    Ok(())
}

/// `"<event> via <via>"` when `line` is the confirm's answer.
fn answered(line: &str) -> Option<String> {
    let v: Value = serde_json::from_str(line).ok()?;
    let event = v["payload"]["event"].as_str().unwrap_or("");
    let answer = matches!(event, "submit" | "cancel");
    (v["type"] == "lineup.v1.ui.event" && v["payload"]["instance_id"] == "publish" && answer).then(
        || {
            format!(
                "{event} via {}",
                v["payload"]["data"]["via"].as_str().unwrap_or("?")
            )
        },
    )
}

/// The first line is the inventory, at most 2 KiB, listing the nine components (R-STD-14).
fn first_line(lines: &[String]) -> Result<(), String> {
    let first = lines.first().ok_or("nothing was sent")?;
    let v: Value = serde_json::from_str(first).map_err(|e| e.to_string())?;
    if v["type"] != "lineup.v1.client.inventory" {
        return Err(format!(
            "the first line is {}, not the inventory",
            v["type"]
        ));
    }
    if first.len() > MAX_FIRST_LINE {
        return Err(format!(
            "the first line is {} bytes, over {MAX_FIRST_LINE}",
            first.len()
        ));
    }
    let listed: Vec<&str> = v["payload"]["standard_components"]
        .as_array()
        .map(|a| a.iter().filter_map(|c| c["id"].as_str()).collect())
        .unwrap_or_default();
    if listed != COMPONENTS {
        return Err(format!("the inventory lists {listed:?}"));
    }
    println!(
        "ask: the first line lists the nine components in {} bytes",
        first.len()
    );
    Ok(())
}
