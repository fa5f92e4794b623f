//! An agent written as async code on tokio, talking to the host through two channels: the
//! host's outbound messages arrive on a tokio channel (the callback only sends), and the agent's
//! envelopes go in through the `Send + Clone` [`HostHandle`], which never blocks. The event loop
//! stays on the main thread; the runtime is the app's.
//!
//! ```sh
//! cargo run -p lineup-examples --example tokio_agent             # on a desktop
//! xvfb-run -a cargo run -p lineup-examples --example tokio_agent -- --check
//! ```
//!
//! The agent opens a counter, patches it three times as its page reports each state, checks
//! that the counter shows on screen in its colour, closes it and shuts the host down, so the
//! example ends by itself (`--check`, which CI passes, changes nothing); it fails if that takes
//! over 30 s or the counter is not on screen.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::process::ExitCode;
use std::time::Duration;

use lineup_examples::ScreenCheck;
use lineup_host::protocol::Message;
use lineup_host::{event_loop, HostBuilder, HostClosed, HostHandle};
use serde_json::json;
use tokio::sync::mpsc;

fn main() -> ExitCode {
    let Ok(event_loop) = event_loop() else {
        eprintln!("no display: run it on a desktop or under xvfb-run -a");
        return ExitCode::FAILURE;
    };
    let (to_agent, from_host) = mpsc::unbounded_channel::<Message>();
    let Ok(host) = HostBuilder::new()
        .window_size(320, 160)
        .on_outbound(move |message: &Message| {
            let _ = to_agent.send(message.clone());
        })
        .build(&event_loop)
    else {
        return ExitCode::FAILURE;
    };
    let handle = host.handle();
    let Ok(runtime) = tokio::runtime::Runtime::new() else {
        return ExitCode::FAILURE;
    };
    let agent = runtime.spawn(async move {
        let done = tokio::time::timeout(Duration::from_secs(30), agent(&handle, from_host)).await;
        let _ = handle.shutdown();
        done
    });
    if let Err(e) = host.run(event_loop) {
        eprintln!("{e}");
        return ExitCode::FAILURE;
    }
    match runtime.block_on(agent) {
        Ok(Ok(Ok(Ok(())))) => ExitCode::SUCCESS,
        other => {
            eprintln!("tokio_agent: the agent did not finish: {other:?}");
            ExitCode::FAILURE
        }
    }
}

/// The counter's colour, which the agent looks for on screen.
const COUNTER: [u8; 3] = [120, 60, 200];

/// The agent: open, patch on each reported state, check the screen, close.
async fn agent(
    host: &HostHandle,
    mut from_host: mpsc::UnboundedReceiver<Message>,
) -> Result<Result<(), String>, HostClosed> {
    let send = |id: &str, kind: &str, payload: serde_json::Value| {
        let envelope = json!({"v": 1, "id": id, "type": format!("lineup.v1.{kind}"),
            "conversation_id": "c1", "sender": {"kind": "agent", "id": "agent"}, "payload": payload});
        host.send_inbound(envelope.to_string().into_bytes())
    };
    send(
        "m-open",
        "ui.open",
        json!({"instance_id": "counter",
        "app": {"id": "com.example.counter", "version": "1.0.0", "html": "<h1 id=n>…</h1>",
            "css": "body { background: rgb(120, 60, 200); color: white; }",
            "js": "LineUpSurface.onState(function (s) { n.textContent = s.n; LineUpSurface.event('showing', {n: s.n}); });"},
        "state": {"n": 0}}),
    )?;
    while let Some(message) = from_host.recv().await {
        let Message::UiEvent(event) = message else {
            continue;
        };
        let n = event
            .payload
            .data
            .as_map()
            .get("n")
            .and_then(|n| n.as_u64());
        println!("agent: the page shows {n:?}");
        match n {
            Some(n) if n < 3 => {
                tokio::time::sleep(Duration::from_millis(100)).await;
                send(
                    &format!("m-patch-{n}"),
                    "ui.patch",
                    json!({"instance_id": "counter", "state": {"n": n + 1}}),
                )?;
            }
            Some(_) => {
                let screen = ScreenCheck::default();
                screen.ask(host, "counter", COUNTER);
                while !screen.is_done() {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                send("m-close", "ui.close", json!({"instance_id": "counter"}))?;
                return Ok(screen.verdict());
            }
            None => {}
        }
    }
    Err(HostClosed)
}
