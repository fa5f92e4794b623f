//! What a session asks the platform to do for its MCP App views ([`McpEffect`], inside
//! [`Effect::Mcp`](crate::Effect::Mcp)): create one, post JSON-RPC to one, and take the
//! messages the host answers itself (R-MCP-3, R-MCP-7, R-MCP-8). A view closes by
//! [`Effect::Close`](crate::Effect::Close), as a Surface does.

use std::fmt;
use std::sync::Arc;

use crate::ids::McpServerId;
use crate::keys::SurfaceKey;
use crate::mcp::{HostOwned, ResourceDigest};
use crate::mcp_message::{McpAppTool, McpUiMeta};
use crate::redact::Fingerprint;

/// What the platform needs to create an MCP App view (R-MCP-3, R-MCP-7).
#[derive(Clone, PartialEq)]
#[non_exhaustive]
pub struct McpViewOpen {
    /// The view's identity: its session, instance and generation.
    pub key: SurfaceKey,
    /// The server it came from (opaque).
    pub server: McpServerId,
    /// Its resource's `ui://` uri.
    pub uri: String,
    /// Its resource's `_meta.ui`: CSP domains and permissions loosen nothing by themselves
    /// (R-MCP-10), `domain` is recorded, `prefersBorder` a hint.
    pub ui: McpUiMeta,
    /// The tool whose result it shows, with the agent's `tools/call` id
    /// (`hostContext.toolInfo`, R-MCP-8).
    pub tool: McpAppTool,
    /// Its HTML, checked against `digest`, at most `Limits::max_mcp_resource_bytes`.
    pub html: Arc<[u8]>,
    /// The SHA-256 digest of `html`.
    pub digest: ResourceDigest,
}

impl fmt::Debug for McpViewOpen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpViewOpen")
            .field("key", &self.key)
            .field("server", &self.server)
            .field("uri", &Fingerprint::of(&self.uri))
            .field("tool", &self.tool.name)
            .field("html", &Fingerprint::of(&self.html))
            .field("digest", &self.digest)
            .finish_non_exhaustive()
    }
}

/// What the kernel asks the platform to do for an MCP App view. The host's interpreter matches
/// every variant by name. `Debug` prints [`Fingerprint`]s of the view's and the agent's text.
#[derive(Clone, PartialEq)]
pub enum McpEffect {
    /// Create the view (R-MCP-7): the host's own document as the top frame, the view's HTML as
    /// its only child, under every Surface rule; where a replaced view of the same instance
    /// was, if any.
    Open(McpViewOpen),
    /// Post this JSON-RPC message to view `key` through its relay: the tool call's news, the
    /// agent's answers and progress, the host's answers and requests, JSON-RPC errors
    /// (R-MCP-5, R-MCP-6, R-MCP-8).
    Post {
        /// The view.
        key: SurfaceKey,
        /// One JSON-RPC 2.0 message, as text.
        message: String,
    },
    /// A message of view `key` that the host answers or takes itself (R-MCP-8, R-MCP-9):
    /// `ui/initialize`, `ui/request-display-mode`, `ui/open-link`, `ui/download-file`, `ping`,
    /// size changes and teardown requests. Answer a request (its `id` is set) through
    /// [`Sessions::mcp_host_answer`](crate::Sessions::mcp_host_answer), under that id.
    HostOwned {
        /// The view.
        key: SurfaceKey,
        /// The view's message (its params untrusted).
        message: HostOwned,
    },
}

impl fmt::Debug for McpEffect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            McpEffect::Open(open) => f.debug_tuple("Open").field(open).finish(),
            McpEffect::Post { key, message } => f
                .debug_struct("Post")
                .field("key", key)
                .field("message", &Fingerprint::of(message))
                .finish(),
            McpEffect::HostOwned { key, message } => f
                .debug_struct("HostOwned")
                .field("key", key)
                .field("id", &message.id)
                .field("method", &message.method)
                .finish_non_exhaustive(),
        }
    }
}
