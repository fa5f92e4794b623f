//! Why `lineup mcp` stopped: each refusal names the value and, where there is one, the limit.

use std::time::Duration;

/// A failure of `lineup mcp`, printed as one `error: …` line. Text from the server or the host
/// is quoted with escapes, so it cannot write control characters to the terminal.
#[derive(Debug, thiserror::Error)]
pub(crate) enum McpError {
    /// `--args` is not JSON.
    #[error("--args is not JSON: {0}")]
    ArgsNotJson(String),
    /// `--args` is JSON but not an object.
    #[error("--args must be a JSON object (a tool's arguments), not {0}")]
    ArgsNotObject(&'static str),
    /// The async runtime could not start.
    #[error("cannot start the MCP client's runtime: {0}")]
    Runtime(std::io::Error),
    /// The MCP client failed, or what it was to send the host cannot go on the wire.
    #[error(transparent)]
    Agent(#[from] lineup_mcp_agent::McpError),
    /// The tool's call answered `isError`; its result was printed.
    #[error("tool {name:?} answered with isError (its result is on stdout)")]
    ToolError {
        /// The tool.
        name: String,
    },
    /// The host that shows the view could not be started (no display, the agent thread).
    #[error("cannot start the host that shows the view: {0}")]
    HostStart(std::io::Error),
    /// The host refused an envelope that shows the view.
    #[error("the host refused {what} with {code}: {message:?}")]
    HostRefused {
        /// The envelope's type.
        what: &'static str,
        /// The host's error code.
        code: String,
        /// The host's sentence.
        message: String,
    },
    /// The host ended (or closed the view) before `--check` saw what it waits for.
    #[error("--check: {ended} before {missing}")]
    CheckEnded {
        /// What ended.
        ended: String,
        /// What `--check` had not seen yet.
        missing: &'static str,
    },
    /// The view ended before its window was closed.
    #[error("the view ended: {ended}")]
    ViewEnded {
        /// What ended it.
        ended: String,
    },
    /// `--check` did not see what it waits for in time.
    #[error("--check: no {missing} within {} s (--timeout-secs)", .limit.as_secs())]
    CheckTimedOut {
        /// What `--check` had not seen yet.
        missing: &'static str,
        /// The limit.
        limit: Duration,
    },
    /// Writing to stdout failed.
    #[error("cannot write to stdout: {0}")]
    Output(std::io::Error),
}
