//! lineup-mcp-agent: the agent side of MCP Apps for lineup-host (`../shared/spec/mcp-apps.md`).
//!
//! An agent keeps the MCP connection, never the host (R-MCP-1). This crate is that agent part,
//! written once for `lineup mcp` and the embedding examples, and depended on by no library
//! crate: an MCP client on the official Rust SDK, `rmcp` ([`McpServer`], R-MCP-2), the
//! `lineup.v1` envelopes that show a tool's view ([`ShownView`]: `ui.open` with `mcp_app`
//! inline or after `mcp.resource` chunks by digest, R-MCP-3, R-MCP-4; `mcp.tool` news, R-MCP-5),
//! and the relay that answers what the host forwards for the view ([`Relay`]: the server's
//! `tools/call` only for tools visible to views, R-MCP-6). [`Show`] joins them into one loop
//! over two channels, whatever carries the envelopes (stdio lines to `lineup host --stdio`, or a
//! `lineup_host::Host` in the same process).
//!
//! The envelopes are the host's own types, so a view the host would refuse is refused here:
//!
//! ```
//! use lineup_host_core::mcp::RpcId;
//! use lineup_host_core::{decode, ConversationId, Limits, Message, PartyId};
//! use lineup_mcp_agent::{Outbox, ShownView, UiTool, ViewResource};
//! use serde_json::json;
//!
//! let listed: rmcp::model::Tool = serde_json::from_value(json!({
//!     "name": "get-time", "inputSchema": {"type": "object"},
//!     "_meta": {"ui": {"resourceUri": "ui://get-time/view"}}
//! }))?;
//! let tools = [UiTool::read(&listed)];
//! let tool = UiTool::pick(&tools, None)?;
//! let read: Vec<rmcp::model::ResourceContents> = serde_json::from_value(json!([{
//!     "uri": "ui://get-time/view", "mimeType": "text/html;profile=mcp-app",
//!     "text": "<p>time</p>"
//! }]))?;
//! let view = ViewResource::read(tool.uri(), read)?;
//!
//! let mut outbox = Outbox::new(ConversationId::try_from("c1")?, PartyId::try_from("agent")?);
//! let (shown, sent) = ShownView::open(
//!     &mut outbox,
//!     "v1".to_owned().try_into()?,
//!     "time-server".to_owned().try_into()?,
//!     tool,
//!     RpcId::Number(2),
//!     &view,
//! )?;
//! // Small enough to go inline: one `ui.open`, exactly what the host's decoder takes.
//! assert_eq!(sent.len(), 1);
//! let Message::McpAppOpen(open) = decode(sent[0].bytes(), &Limits::default())? else {
//!     panic!("not an MCP App open");
//! };
//! assert_eq!(open.payload.mcp_app.tool().name.as_str(), "get-time");
//! let input = shown.input(&mut outbox, serde_json::Map::new())?;
//! assert_eq!(input.kind(), "lineup.v1.mcp.tool");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod error;
mod opening;
mod outbox;
mod relay;
mod server;
mod show;
mod tool;
mod view;
mod watch;

pub use error::McpError;
pub use opening::ShownView;
pub use outbox::{Outbox, Outgoing};
pub use relay::{answer_envelope, Forward, Note, Relay, RequestKey, Taken};
pub use server::{client_config, McpServer, ToolCall, MAX_PAGES};
pub use show::{Flow, FromHost, Show, ShowEnd, ShowEvent};
pub use tool::{UiTool, ViewTool, Visibility};
pub use view::{ViewResource, MCP_APP_MIME_TYPE};
pub use watch::{Refusal, UpWatch};

/// The rmcp release this crate speaks through, for callers that name its types.
pub use rmcp;
