//! `lineup mcp`'s show mode: the view goes to a `lineup host --stdio` child of this same binary,
//! so the host is exactly `lineup host` (its defaults, its stdio link, its logs on stderr), and
//! the agent crate's [`Show`] relays for it over the child's stdin and stdout until the view's
//! window is closed; with `--check`, until the view is up.
//!
//! What `--check` reads is the agent crate's [`UpWatch`]: the host refuses nothing this agent
//! sent (a `client.error` naming one fails at once), and the view speaks after its tool result
//! went out. lineup.v1 has no notice to the agent when a view initializes, so a view that asks
//! nothing of its own accord is seen up only once it is used.

use std::process::Stdio;
use std::time::Duration;

use lineup_host_core::{decode, ConversationId, InstanceId, Limits, McpServerId, Message, PartyId};
use lineup_mcp_agent::{Flow, McpServer, Outbox, Show, ShowEnd, ShowEvent, UpWatch};
use serde_json::{json, Map, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use super::error::McpError;
use super::print_lines;

/// The conversation, agent, instance and server ids of the one view shown.
const CONVERSATION: &str = "mcp";
const AGENT: &str = "lineup-mcp";
const INSTANCE: &str = "mcp-view";

/// Calls the server's first tool with a view, shows the view in a `lineup host --stdio` child
/// and relays for it: until the view closes, or with `check`, until it is up (at most
/// `timeout`).
pub(crate) async fn show(
    server: &McpServer,
    check: bool,
    timeout: Duration,
) -> Result<(), McpError> {
    let outbox = Outbox::new(
        ConversationId::try_from(CONVERSATION).map_err(not_an_id)?,
        PartyId::try_from(AGENT).map_err(not_an_id)?,
    );
    let instance = InstanceId::try_from(INSTANCE).map_err(not_an_id)?;
    let show = Show::prepare(
        server,
        server_id(server),
        None,
        Map::new(),
        instance,
        outbox,
    )
    .await?;
    let (to_host, from_agent) = mpsc::unbounded_channel::<Vec<u8>>();
    let (to_agent, mut from_host) = mpsc::unbounded_channel::<Message>();
    let mut host = start_host(from_agent, to_agent)?;
    let mut watch = Watch {
        check,
        up: UpWatch::new(&show),
    };
    let relayed = show.run(&mut from_host, &to_host, |event| watch.see(event));
    let ran = match check {
        true => tokio::time::timeout(timeout, relayed).await.ok(),
        false => Some(relayed.await),
    };
    // The host's stdin closes: it closes the view (torn down, R-MCP-8) and exits.
    drop(to_host);
    let end = match ran {
        Some(ran) => ran?.0,
        None => {
            let _ = host.start_kill();
            return Err(McpError::CheckTimedOut {
                missing: watch.up.missing(),
                limit: timeout,
            });
        }
    };
    match tokio::time::timeout(Duration::from_secs(30), host.wait()).await {
        Ok(Ok(status)) if !status.success() => tracing::warn!("lineup host exited with {status}"),
        Ok(_) => {}
        Err(_) => {
            tracing::warn!("lineup host did not exit within 30 s of its input's end; ended");
            let _ = host.start_kill();
        }
    }
    watch.verdict(end)
}

/// The server's id on the wire: the name it gave in `initialize`, else `mcp-server`.
fn server_id(server: &McpServer) -> McpServerId {
    server
        .name()
        .and_then(|name| McpServerId::try_from(name).ok())
        .or_else(|| McpServerId::try_from("mcp-server").ok())
        .unwrap_or_else(|| unreachable!("mcp-server is a valid server id"))
}

fn not_an_id(e: impl std::fmt::Display) -> McpError {
    McpError::HostStart(std::io::Error::other(e.to_string()))
}

/// Starts `lineup host --stdio` (this binary): what arrives on `from_agent` goes to its stdin,
/// one envelope a line, and each line it writes is decoded and handed to `to_agent`.
fn start_host(
    mut from_agent: mpsc::UnboundedReceiver<Vec<u8>>,
    to_agent: mpsc::UnboundedSender<Message>,
) -> Result<tokio::process::Child, McpError> {
    let lineup = std::env::current_exe().map_err(McpError::HostStart)?;
    let mut child = tokio::process::Command::new(lineup)
        .args(["host", "--stdio"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .map_err(McpError::HostStart)?;
    let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(McpError::HostStart(std::io::Error::other(
            "its stdin or stdout is not a pipe",
        )));
    };
    tokio::spawn(async move {
        while let Some(mut line) = from_agent.recv().await {
            line.push(b'\n');
            if stdin.write_all(&line).await.is_err() || stdin.flush().await.is_err() {
                return;
            }
        }
    });
    tokio::spawn(async move {
        let limits = Limits::default();
        let mut lines = BufReader::new(stdout).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            match decode(line.as_bytes(), &limits) {
                Ok(message) => {
                    if to_agent.send(message).is_err() {
                        return;
                    }
                }
                Err(e) => tracing::warn!("a line of lineup host is not an envelope: {e}"),
            }
        }
    });
    Ok(child)
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
        match event {
            ShowEvent::Sent(out) => tracing::debug!("agent → host: {} {}", out.kind(), out.id()),
            ShowEvent::HostError(error) => {
                tracing::warn!(
                    "the host reports {}: {:?}",
                    error.code.as_str(),
                    error.message
                );
            }
            ShowEvent::Forwarded { method } => tracing::info!("the view asks the server: {method}"),
            ShowEvent::Answered(answer) => {
                if let Err(error) = &answer.outcome {
                    tracing::info!(
                        "answered the view: error {} {:?}",
                        error.code,
                        error.message
                    );
                }
            }
            ShowEvent::Note(note) => {
                let line = json!({ note.method(): Value::Object(note.params().clone()) });
                if let Err(e) = print_lines(&[line]) {
                    tracing::warn!("{e}");
                }
            }
            ShowEvent::Event(event) => {
                tracing::info!("the view's ui.event {}", event.event.as_str())
            }
            _ => {}
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
            ShowEnd::HostGone => "lineup host ended".to_owned(),
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
