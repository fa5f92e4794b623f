//! `lineup mcp -- <server command…>`: runs an MCP Apps server over its stdio and, as the agent
//! would, lists its tools, calls one, reads a tool's view, or shows the view in `lineup host`
//! and relays its requests to the server (R-MCP-2). The MCP client and the relay are the agent
//! crate's (`lineup-mcp-agent`, shared with the examples); nothing here knows any server or tool
//! by name: any server whose tool names a `ui://` view runs the same way.

mod error;
mod show;

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use lineup_mcp_agent::rmcp::model::JsonObject;
use lineup_mcp_agent::{McpServer, UiTool};
use serde_json::Value;

use error::McpError;
use show::Connection;

/// Runs an MCP server (`-- <command…>`, e.g. `-- node dist/index.js --stdio`) and lists its
/// tools, calls one, or reads a tool's MCP App view; without --list, --tool or --resource, calls
/// the first tool that has a view, shows the view in a host of this process (`lineup host`'s
/// defaults) and relays what the view asks to the server until its window is closed. Output is
/// JSON, one value per line (in show mode: what it shows, each request of the view forwarded and
/// answered, what the view tells the agent); a refusal is one `error: …` line on stderr.
#[derive(Debug, Args)]
pub(crate) struct McpArgs {
    /// Print each tool as a JSON line: `name`, `visibility` (`_meta.ui.visibility`; `["model",
    /// "app"]` when the tool says nothing) and `resourceUri` (`_meta.ui.resourceUri`, or the
    /// deprecated `_meta["ui/resourceUri"]`; `null` when none).
    #[arg(long, conflicts_with_all = ["tool", "resource"])]
    list: bool,
    /// Call this tool and print its result as JSON (exit status 1 when it answers `isError`);
    /// with --resource, read this tool's view instead of calling it.
    #[arg(long, value_name = "NAME")]
    tool: Option<String>,
    /// The tool's arguments, a JSON object (default `{}`).
    #[arg(
        long,
        value_name = "JSON",
        requires = "tool",
        conflicts_with = "resource"
    )]
    args: Option<String>,
    /// Read the tool's view (`resources/read`; the first tool that has one and that a model
    /// may be offered, unless --tool names it) and print `uri`, `mimeType`, `bytes` after
    /// decoding, `sha256` and `ui` (its `_meta.ui`); refused unless its MIME type is
    /// `text/html;profile=mcp-app` and it is at most 8 MiB.
    #[arg(long)]
    resource: bool,
    /// How long to wait for each answer of the server, in seconds (the MCP Apps SDK's is 60).
    #[arg(long, value_name = "SECS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..))]
    timeout_secs: u64,
    /// Show the server's stderr, which server answered, and the envelopes relayed.
    #[arg(long)]
    verbose: bool,
    /// Show the view, then exit 0 once the host has taken the view, the tool's input and its
    /// result and answered the view's `ui/initialize` (it hands the view the input and result
    /// once the view says `initialized`); exit 1 when the host refuses any of them, closes the
    /// view, or --timeout-secs passes first.
    #[arg(long, conflicts_with_all = ["list", "tool", "resource"])]
    check: bool,
    /// The server's command and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "SERVER COMMAND")]
    command: Vec<OsString>,
}

/// What one run of `lineup mcp` does.
enum Mode {
    /// `--list`.
    List,
    /// `--tool NAME [--args JSON]`.
    Call { tool: String, arguments: JsonObject },
    /// `--resource [--tool NAME]`.
    Resource { tool: Option<String> },
    /// None of them: call the first tool with a view, read the view and show it (`--check`:
    /// until it is up).
    Show { check: bool },
}

impl McpArgs {
    /// The mode the flags ask for, `--args` read (before any server starts).
    fn mode(&self) -> Result<Mode, McpError> {
        Ok(match (&self.tool, self.list, self.resource) {
            (_, true, _) => Mode::List,
            (tool, _, true) => Mode::Resource { tool: tool.clone() },
            (Some(tool), _, _) => Mode::Call {
                tool: tool.clone(),
                arguments: arguments(self.args.as_deref())?,
            },
            (None, false, false) => Mode::Show { check: self.check },
        })
    }
}

/// `--args` as a tool's arguments.
fn arguments(text: Option<&str>) -> Result<JsonObject, McpError> {
    let Some(text) = text else {
        return Ok(JsonObject::new());
    };
    match serde_json::from_str(text).map_err(|e| McpError::ArgsNotJson(e.to_string()))? {
        Value::Object(object) => Ok(object),
        Value::Array(_) => Err(McpError::ArgsNotObject("an array")),
        Value::String(_) => Err(McpError::ArgsNotObject("a string")),
        Value::Number(_) => Err(McpError::ArgsNotObject("a number")),
        Value::Bool(_) => Err(McpError::ArgsNotObject("a boolean")),
        Value::Null => Err(McpError::ArgsNotObject("null")),
    }
}

/// Runs `lineup mcp`: exit status 0 when the mode's output is printed, 1 with one plain
/// `error: …` line on stderr otherwise.
pub(crate) fn run(args: McpArgs) -> ExitCode {
    match mcp(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // A plain message for the server's author, not a log line.
            #[allow(clippy::print_stderr)]
            {
                eprintln!("error: {e}");
            }
            ExitCode::FAILURE
        }
    }
}

fn mcp(args: &McpArgs) -> Result<(), McpError> {
    let mode = args.mode()?;
    let connection = Connection {
        command: args.command.clone(),
        timeout: Duration::from_secs(args.timeout_secs),
        verbose: args.verbose,
    };
    match mode {
        Mode::Show { check } => show::show(connection, check),
        mode => with_server(&connection, async |server| serve(server, mode).await),
    }
}

/// Connects to the server on a current-thread runtime made for this one command (as for
/// downloads, fetch.rs), runs `work` against it, and closes it. Every rmcp object is made and
/// dropped inside that runtime (its child process is ended from a task of it).
pub(crate) fn with_server<T>(
    connection: &Connection,
    work: impl AsyncFnOnce(&McpServer) -> Result<T, McpError>,
) -> Result<T, McpError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(McpError::Runtime)?;
    runtime.block_on(async {
        let server =
            McpServer::connect(&connection.command, connection.timeout, connection.verbose).await?;
        if connection.verbose {
            tracing::info!("connected to {}", server.describe());
        }
        let done = work(&server).await;
        server.close().await;
        done
    })
}

/// One mode against a connected server.
async fn serve(server: &McpServer, mode: Mode) -> Result<(), McpError> {
    match mode {
        Mode::List => {
            let lines: Vec<Value> = server.tools().await?.iter().map(UiTool::to_json).collect();
            print_lines(&lines)
        }
        Mode::Call { tool, arguments } => {
            let result = server.call(&tool, arguments).await?.result;
            let line = serde_json::to_value(&result).unwrap_or(Value::Null);
            print_lines(&[line])?;
            match result.is_error {
                Some(true) => Err(McpError::ToolError { name: tool }),
                _ => Ok(()),
            }
        }
        Mode::Resource { tool } => {
            let tools = server.tools().await?;
            let tool = UiTool::pick(&tools, tool.as_deref())?;
            let view = server.read_view(tool.uri()).await?;
            print_lines(&[view.to_json()])
        }
        // Shown by `mcp` itself: it needs the host's event loop on this thread.
        Mode::Show { .. } => Ok(()),
    }
}

/// Each value as one line of JSON on stdout.
pub(crate) fn print_lines(values: &[Value]) -> Result<(), McpError> {
    let mut stdout = std::io::stdout().lock();
    for value in values {
        writeln!(stdout, "{value}").map_err(McpError::Output)?;
    }
    stdout.flush().map_err(McpError::Output)
}
