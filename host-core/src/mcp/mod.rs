//! MCP Apps views in the kernel (`../shared/spec/mcp-apps.md`): the router of one view's
//! JSON-RPC traffic ([`McpRouter`]), sans-IO. It orders what the agent tells the view about
//! the tool call it shows and holds it until the view initialized (R-MCP-5), forwards what the
//! view asks of the agent within a cap on requests in flight, a rate for `tools/call`, a size
//! bound and a timeout, each refusal a JSON-RPC error to the view (R-MCP-6), and hands the
//! driver what the host answers itself (R-MCP-8, R-MCP-9). It holds no MCP client (R-MCP-1).
//! A session's view documents arrive by digest in bounded chunks ([`McpResources`], R-MCP-4).
//! What the host answers itself, and what it lists in `client.inventory`, are
//! [`mcp_host`](crate::mcp_host)'s.

mod forwarding;
mod jsonrpc;
mod lifecycle;
mod resources;
mod router;

use std::time::Duration;

pub use jsonrpc::{
    RpcError, RpcId, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, REFUSED,
    TIMED_OUT,
};
pub use lifecycle::ToolNews;
pub use resources::{Arrival, McpResources, ResourceDigest, ResourceLimits, ResourceRefusal};
pub use router::{HostOwned, McpOut, McpRouter, McpStats, ShownTool, UpstreamRequest};

/// The limits of one view's traffic (R-MCP-6).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct McpLimits {
    /// The largest message the view may send, in bytes (`Limits::max_mcp_message_bytes`, not
    /// the Surface's 64 KiB IPC bound).
    pub max_message_bytes: usize,
    /// How many forwarded requests may wait for the agent at once.
    pub max_in_flight: usize,
    /// `tools/call` passes one per this interval, sustained.
    pub tools_call_interval: Duration,
    /// How many `tools/call` may pass at once before the interval applies.
    pub tools_call_burst: u32,
    /// How long a forwarded request waits for the agent's answer; never under the SDK's 60 s
    /// ([`McpLimits::with_request_timeout`]).
    request_timeout: Duration,
    /// How long the latest `ui/update-model-context` waits for a later one before it goes
    /// upstream (only the last one goes).
    pub model_context_delay: Duration,
    /// Whether the agent declared `sampling/createMessage` (only then is it forwarded).
    pub sampling: bool,
}

/// The shortest forwarded-request timeout: the SDK's own (60 s).
pub const MIN_MCP_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

impl Default for McpLimits {
    fn default() -> Self {
        Self {
            max_message_bytes: 4 * 1024 * 1024,
            max_in_flight: 16,
            tools_call_interval: Duration::from_secs(2),
            tools_call_burst: 3,
            request_timeout: Duration::from_secs(120),
            model_context_delay: Duration::from_millis(250),
            sampling: false,
        }
    }
}

impl McpLimits {
    /// These limits with forwarded requests timing out after `timeout`, raised to
    /// [`MIN_MCP_REQUEST_TIMEOUT`] when shorter.
    pub fn with_request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout.max(MIN_MCP_REQUEST_TIMEOUT);
        self
    }

    /// How long a forwarded request waits for the agent's answer.
    pub fn request_timeout(&self) -> Duration {
        self.request_timeout
    }
}
