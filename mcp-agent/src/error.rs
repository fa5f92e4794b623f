//! Why the agent side stopped: each refusal names the value and, where there is one, the limit.

use std::time::Duration;

/// A failure of the MCP client or of building what the host is sent. Text from the server
/// (tool names, URIs, MIME types, its error messages) is quoted with escapes, so it cannot
/// write control characters to a terminal.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// The server's command could not be started.
    #[error("cannot start the server {command:?}: {source}")]
    Spawn {
        /// The program.
        command: String,
        /// Why.
        source: std::io::Error,
    },
    /// The server did not complete the `initialize` handshake.
    #[error("the server did not complete initialize: {0} (run with --verbose to see its stderr)")]
    Initialize(String),
    /// The server answered a request with an error, or the connection failed during it.
    #[error("{method} failed: {reason} (run with --verbose to see the server's stderr)")]
    Request {
        /// The MCP method.
        method: &'static str,
        /// The server's error or the transport's.
        reason: String,
    },
    /// The server did not answer within the timeout.
    #[error("the server did not answer {method} within {} s (--timeout-secs)", .limit.as_secs())]
    TimedOut {
        /// The MCP method.
        method: &'static str,
        /// The limit.
        limit: Duration,
    },
    /// A paginated list ran past the page limit.
    #[error("{method} ran past {limit} pages; the server's listing never ends")]
    TooManyPages {
        /// The MCP method.
        method: &'static str,
        /// The limit.
        limit: usize,
    },
    /// No tool of the server has this name.
    #[error("the server has no tool {name:?} (--list shows its tools)")]
    NoSuchTool {
        /// The name given.
        name: String,
    },
    /// No tool of the server names a UI resource a model may be shown.
    #[error(
        "no tool of the server names a UI resource (_meta.ui.resourceUri) and is visible to the \
         model; --list shows its tools"
    )]
    NoUiTool,
    /// The tool names no UI resource.
    #[error("tool {name:?} names no UI resource (_meta.ui.resourceUri)")]
    NoUiResource {
        /// The tool.
        name: String,
    },
    /// `resources/read` answered without a content item of the requested URI.
    #[error("resources/read of {uri:?} returned no content item with that uri")]
    ResourceMissing {
        /// The URI read.
        uri: String,
    },
    /// The resource is not an MCP App view (R-MCP-3).
    #[error(
        "{uri:?} has MIME type {}, not {expected} (R-MCP-3)",
        mime_type.as_deref().map_or_else(|| "none".to_owned(), |m| format!("{m:?}"))
    )]
    WrongMimeType {
        /// The URI read.
        uri: String,
        /// Its MIME type as the server gave it (`None` when absent).
        mime_type: Option<String>,
        /// The one accepted.
        expected: &'static str,
    },
    /// The resource's `blob` is not base64.
    #[error("the blob of {uri:?} is not base64: {reason}")]
    NotBase64 {
        /// The URI read.
        uri: String,
        /// The decoder's words.
        reason: String,
    },
    /// The resource is larger than a host opens (R-MCP-4).
    #[error("{uri:?} is {size} bytes after decoding, over the limit of {limit} bytes (R-MCP-4)")]
    ResourceTooLarge {
        /// The URI read.
        uri: String,
        /// Its size.
        size: u64,
        /// `ResourceLimits::max_resource_bytes`.
        limit: u64,
    },
    /// A value of the server cannot go on the `lineup.v1` wire as it is (a tool name over 128
    /// characters, a view uri that is not `ui://`): the wire's own words.
    #[error("{field} cannot be sent to the host: {reason}")]
    NotOnTheWire {
        /// The envelope member, as the host names it (`mcp_app.tool.name`).
        field: &'static str,
        /// Why, as the host's types say it.
        reason: String,
    },
    /// An envelope would be larger than the host reads (R-ENV-4); a tool result this large
    /// cannot go by digest yet (R-MCP-4).
    #[error("{what} is a {size}-byte envelope, over the host's limit of {limit} bytes (R-ENV-4)")]
    EnvelopeTooLarge {
        /// What it carries (`lineup.v1.mcp.tool tool-result`).
        what: &'static str,
        /// Its size.
        size: usize,
        /// `Limits::max_envelope_bytes`.
        limit: usize,
    },
}
