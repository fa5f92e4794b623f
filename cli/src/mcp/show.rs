//! `lineup mcp`'s show mode: the host runs in this process, as `lineup host` builds it (its
//! defaults, its stderr delegate), on the main thread's event loop; the agent (the MCP client
//! and the agent crate's [`Show`] loop) runs on a thread of its own with a tokio runtime,
//! sending its envelopes through [`HostHandle::send_inbound`] as any agent's bytes, and
//! hearing the host's messages from `on_outbound` and each view's ready from the delegate.
//!
//! What `--check` reads is the agent crate's [`UpWatch`]: the host refused nothing this agent
//! sent (a `client.error` naming one fails at once), and after the tool result went out the
//! host answered the view's `ui/initialize` (the delegate's ready; lineup.v1 has no notice of
//! it) or the view spoke. The host hands the view its input and result once it says
//! `initialized` (R-MCP-5).

use std::ffi::OsString;
use std::time::Duration;

use lineup_host::{HostBuilder, HostHandle};
use lineup_host_core::{ConversationId, InstanceId, McpServerId, PartyId};
use lineup_mcp_agent::{Flow, FromHost, McpServer, Outbox, Show, ShowEnd, ShowEvent, UpWatch};
use serde_json::{json, Map, Value};
use tokio::sync::mpsc;

use super::error::McpError;
use super::{print_lines, with_server};
use crate::log::StderrDelegate;

/// The conversation, agent and instance ids of the one view shown.
const CONVERSATION: &str = "mcp";
const AGENT: &str = "lineup-mcp";
const INSTANCE: &str = "mcp-view";

/// The server's command and how to talk to it.
pub(crate) struct Connection {
    /// The program and its arguments.
    pub(crate) command: Vec<OsString>,
    /// How long each answer of the server, and `--check`, may take.
    pub(crate) timeout: Duration,
    /// Whether the server's stderr is shown.
    pub(crate) verbose: bool,
}

/// Shows the view of the server's first tool with one in a host of this process and relays
/// for it: until its window is closed, or with `check`, until it is up (at most the timeout).
pub(crate) fn show(connection: Connection, check: bool) -> Result<(), McpError> {
    let event_loop = lineup_host::event_loop().map_err(host_error)?;
    let (to_agent, from_host) = mpsc::unbounded_channel::<FromHost>();
    let ready = to_agent.clone();
    let host = HostBuilder::new()
        .on_outbound(move |message| {
            let _ = to_agent.send(FromHost::from(message.clone()));
        })
        .delegate(StderrDelegate::telling_ready(move |key| {
            let _ = ready.send(FromHost::ViewReady(key.instance.clone()));
        }))
        .build(&event_loop)
        .map_err(host_error)?;
    let handle = host.handle();
    let agent = std::thread::Builder::new()
        .name("lineup-mcp-agent".to_owned())
        .spawn(move || {
            let done = agent(&connection, check, &handle, from_host);
            // The host closes the view (torn down, R-MCP-8) and its loop ends.
            let _ = handle.shutdown();
            done
        })
        .map_err(McpError::HostStart)?;
    host.run(event_loop).map_err(host_error)?;
    agent.join().unwrap_or_else(|_| {
        Err(McpError::HostStart(std::io::Error::other(
            "the agent panicked",
        )))
    })
}

fn host_error(e: impl std::fmt::Display) -> McpError {
    McpError::HostStart(std::io::Error::other(e.to_string()))
}

/// The agent's thread: connects, shows the view and relays until it closes (or is up).
fn agent(
    connection: &Connection,
    check: bool,
    host: &HostHandle,
    mut from_host: mpsc::UnboundedReceiver<FromHost>,
) -> Result<(), McpError> {
    with_server(connection, async |server| {
        let outbox = Outbox::new(
            ConversationId::try_from(CONVERSATION).map_err(host_error)?,
            PartyId::try_from(AGENT).map_err(host_error)?,
        );
        let instance = InstanceId::try_from(INSTANCE).map_err(host_error)?;
        let id = server_id(server);
        let show = Show::prepare(server, id, None, Map::new(), instance, outbox).await?;
        let chunks = show.first().iter();
        let chunks = chunks.filter(|out| out.kind() == "lineup.v1.mcp.resource");
        print_lines(&[json!({
            "showing": show.shown().tool(),
            "uri": show.shown().uri(),
            "resource_chunks": chunks.count(),
        })])?;
        // The agent's envelopes go in as any agent's bytes, checked alike.
        let to_host = |bytes| host.send_inbound(bytes).is_ok();
        let mut watch = Watch {
            check,
            up: UpWatch::new(&show),
        };
        let relayed = show.run(&mut from_host, to_host, |event| watch.see(event));
        let end = match check {
            true => match tokio::time::timeout(connection.timeout, relayed).await {
                Ok(ran) => ran?.0,
                Err(_) => {
                    return Err(McpError::CheckTimedOut {
                        missing: watch.up.missing(),
                        limit: connection.timeout,
                    })
                }
            },
            false => relayed.await?.0,
        };
        watch.verdict(end)
    })
}

/// The server's id on the wire: the name it gave in `initialize`, else `mcp-server`.
fn server_id(server: &McpServer) -> McpServerId {
    let named = server
        .name()
        .and_then(|name| McpServerId::try_from(name).ok());
    named.unwrap_or_else(|| McpServerId::try_from("mcp-server").unwrap_or_else(|e| unreachable(&e)))
}

#[allow(clippy::panic)]
fn unreachable(e: &dyn std::fmt::Display) -> McpServerId {
    panic!("mcp-server is a valid server id: {e}")
}

/// What the show loop has seen, for the output and for `--check`.
struct Watch {
    check: bool,
    up: UpWatch,
}

impl Watch {
    /// Takes one event: prints what the view tells the agent, and says whether `--check` has
    /// its answer (or a refusal ends the show).
    fn see(&mut self, event: ShowEvent<'_>) -> Flow {
        self.up.see(&event);
        let line = match event {
            ShowEvent::Sent(out) => {
                tracing::debug!("agent → host: {} {}", out.kind(), out.id());
                None
            }
            ShowEvent::HostError(error) => {
                let code = error.code.as_str();
                tracing::warn!("the host reports {code}: {:?}", error.message);
                None
            }
            ShowEvent::Forwarded(ask) => Some(json!({
                "forwarded": ask.method(),
                "tool": ask.tool(),
                "request_id": ask.key().request_id(),
            })),
            ShowEvent::Answered(answer) => Some(match &answer.outcome {
                Ok(_) => json!({"answered": answer.request_id, "ok": true}),
                Err(error) => json!({"answered": answer.request_id, "error": error}),
            }),
            ShowEvent::Note(note) => {
                Some(json!({ note.method(): Value::Object(note.params().clone()) }))
            }
            ShowEvent::Event(event) => Some(json!({
                "event": event.event.as_str(),
                "data": event.data,
            })),
            _ => None,
        };
        if let Err(e) = line.map_or(Ok(()), |line| print_lines(&[line])) {
            tracing::warn!("{e}");
        }
        match (self.up.refused(), self.check && self.up.is_up()) {
            (Some(_), _) | (None, true) => Flow::Stop,
            _ => Flow::Continue,
        }
    }

    /// How the show ended, as the command's outcome: with `--check`, whether the view came
    /// up; without, whether the user closed its window.
    fn verdict(self, end: ShowEnd) -> Result<(), McpError> {
        if let Some(refused) = self.up.refused() {
            return Err(McpError::HostRefused {
                what: refused.kind,
                code: refused.code.clone(),
                message: refused.message.clone(),
            });
        }
        let ended = match end {
            ShowEnd::Closed(None) if !self.check => return Ok(()),
            ShowEnd::Closed(None) => "the view's window was closed".to_owned(),
            ShowEnd::Closed(Some(reason)) => format!("the host closed the view ({reason})"),
            ShowEnd::HostGone => "the host ended".to_owned(),
            _ => "the relay stopped".to_owned(),
        };
        match (self.check, self.up.is_up()) {
            (true, true) => Ok(()),
            (true, false) => Err(McpError::CheckEnded {
                ended,
                missing: self.up.missing(),
            }),
            (false, _) => Err(McpError::ViewEnded { ended }),
        }
    }
}
