//! What the host answers itself for an MCP App view and what it lists of them (R-MCP-8,
//! R-MCP-9, R-MCP-13), as pure functions of the view's message, the tool it shows and the
//! host's facts: [`host_reply`] (with [`initialize_result`], the `ui/initialize` answer, checked
//! against the SDK's published schema in the tests) and [`McpAppsInventory`], the
//! `client.inventory` entry.

mod host_reply;
mod initialize;
mod inventory;

pub use host_reply::{host_reply, HostReply};
pub use initialize::{
    initialize_result, protocol_version, HostFacts, McpTheme, MCP_APPS_DISPLAY_MODES,
    MCP_APPS_PROTOCOL_VERSIONS,
};
pub use inventory::{McpAppsInventory, McpForwardedMethod, McpNetwork};
