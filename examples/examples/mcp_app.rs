//! An embedder that shows an MCP App: it plays the agent with `lineup-mcp-agent` (the rmcp
//! client and the relay `lineup mcp` uses), starts the MCP server given on its command line,
//! calls its first tool with a view, shows the view in its window through `lineup_host::Host`,
//! and relays what the view asks to the server. The host holds no MCP client (R-MCP-1).
//!
//! ```sh
//! S=~/.cache/lineup-mcp-servers   # bash scripts/mcp-servers.sh fills it
//! cargo run -p lineup-examples --example mcp_app -- \
//!     -- $S/bin/node $S/node_modules/@modelcontextprotocol/server-customer-segmentation/dist/index.js --stdio
//! xvfb-run -a cargo run -p lineup-examples --example mcp_app -- --check -- <the same command>
//! ```
//!
//! `--check` exits 0 once the host took the view, the tool's input and its result and answered
//! the view's `ui/initialize` (this embedder's `HostDelegate::notify_ready`), or the view spoke;
//! 1 on a refusal or after 60 s.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::ffi::OsString;
use std::process::ExitCode;
use std::time::Duration;

use lineup_host::protocol::{ConversationId, InstanceId, Message, PartyId, SurfaceKey};
use lineup_host::{event_loop, HostBuilder, HostDelegate, HostHandle};
use lineup_mcp_agent::{Flow, FromHost, McpServer, Outbox, Show, ShowEvent, UpWatch};
use tokio::sync::mpsc;

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let check = args.first().is_some_and(|a| a == "--check");
    let server = match args.get(usize::from(check)) {
        Some(dashes) if dashes == "--" => args[usize::from(check) + 1..].to_vec(),
        _ => Vec::new(),
    };
    if server.is_empty() {
        eprintln!("usage: mcp_app [--check] -- <MCP server command…>");
        return ExitCode::from(2);
    }
    let Ok(event_loop) = event_loop() else {
        eprintln!("no display: run it on a desktop or under xvfb-run -a");
        return ExitCode::FAILURE;
    };
    let (to_agent, from_host) = mpsc::unbounded_channel::<FromHost>();
    let ready = Ready(to_agent.clone());
    let host = HostBuilder::new()
        .window_size(900, 700)
        .on_outbound(move |message: &Message| {
            let _ = to_agent.send(FromHost::from(message.clone()));
        })
        .delegate(ready)
        .build(&event_loop);
    let (Ok(host), Ok(runtime)) = (host, tokio::runtime::Runtime::new()) else {
        return ExitCode::FAILURE;
    };
    let handle = host.handle();
    let agent = runtime.spawn(async move {
        let relay = agent(&server, check, &handle, from_host);
        let done = match check {
            true => tokio::time::timeout(Duration::from_secs(60), relay)
                .await
                .unwrap_or_else(|_| Err("the view was not up within 60 s".to_owned())),
            false => relay.await,
        };
        let _ = handle.shutdown();
        done
    });
    if let Err(e) = host.run(event_loop) {
        eprintln!("{e}");
        return ExitCode::FAILURE;
    }
    match runtime.block_on(agent) {
        Ok(Ok(())) => ExitCode::SUCCESS,
        other => {
            eprintln!("mcp_app: {other:?}");
            ExitCode::FAILURE
        }
    }
}

/// Tells the agent each view the host has answered `ui/initialize` for.
struct Ready(mpsc::UnboundedSender<FromHost>);

impl HostDelegate for Ready {
    fn notify_ready(&mut self, key: &SurfaceKey) {
        let _ = self.0.send(FromHost::ViewReady(key.instance.clone()));
    }
}

/// The agent: the server's first tool with a view, shown and relayed until the view closes
/// (with `check`, until it is up).
async fn agent(
    command: &[OsString],
    check: bool,
    host: &HostHandle,
    mut from_host: mpsc::UnboundedReceiver<FromHost>,
) -> Result<(), String> {
    let text = |e: &dyn std::fmt::Display| e.to_string();
    let server = McpServer::connect(command, Duration::from_secs(60), false)
        .await
        .map_err(|e| text(&e))?;
    let conversation = ConversationId::try_from("c1").map_err(|e| text(&e))?;
    let outbox = Outbox::new(
        conversation,
        PartyId::try_from("agent").map_err(|e| text(&e))?,
    );
    // The server's own name is its id on the wire; any opaque id would do.
    let id = server.name().unwrap_or_else(|| "mcp-server".to_owned());
    let show = Show::prepare(
        &server,
        id.try_into().map_err(|e| text(&e))?,
        None,
        Default::default(),
        InstanceId::try_from("view").map_err(|e| text(&e))?,
        outbox,
    )
    .await
    .map_err(|e| text(&e))?;
    // The agent's envelopes go in through the host's handle, as bytes from any agent would.
    let to_host = |bytes| host.send_inbound(bytes).is_ok();
    let mut up = UpWatch::new(&show);
    let relayed = show.run(&mut from_host, to_host, |event| {
        up.see(&event);
        match &event {
            ShowEvent::Note(note) => {
                println!("view → agent: {} {:?}", note.method(), note.params())
            }
            ShowEvent::Forwarded(ask) => {
                println!("view → server: {} {:?}", ask.method(), ask.tool())
            }
            _ => {}
        }
        match up.refused().is_some() || (check && up.is_up()) {
            true => Flow::Stop,
            false => Flow::Continue,
        }
    });
    let (end, _relay) = relayed.await.map_err(|e| text(&e))?;
    server.close().await;
    if let Some(refused) = up.refused() {
        return Err(format!("the host refused {}: {refused:?}", refused.kind));
    }
    match (check, up.is_up()) {
        (true, false) => Err(format!("{end:?} before a {}", up.missing())),
        _ => Ok(()),
    }
}
