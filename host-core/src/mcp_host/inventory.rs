//! The `mcp_apps` entry of `client.inventory` (R-MCP-13): listed exactly when the host shows
//! MCP App views, saying which protocol versions and display modes it offers, what of a view's
//! traffic it forwards to the agent, and its network policy.

use serde::{Deserialize, Serialize};

use super::initialize::{MCP_APPS_DISPLAY_MODES, MCP_APPS_PROTOCOL_VERSIONS};
use crate::mcp::McpLimits;
use crate::mcp_upstream::{McpForwarded, McpUpNotification};

/// What a view may load from the network: nothing (R-MCP-10: declared CSP domains loosen
/// nothing without an operator policy, which is still to come).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum McpNetwork {
    /// `none`: every load of the view is blocked, and each is reported to the agent.
    #[default]
    None,
}

/// A method of a view the host forwards to the agent, as the inventory names it (R-MCP-6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum McpForwardedMethod {
    /// A request, forwarded as `mcp.request`.
    Request(McpForwarded),
    /// A notification, forwarded as `mcp.notify`.
    Notification(McpUpNotification),
}

/// `client.inventory`'s `mcp_apps` (R-MCP-13).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct McpAppsInventory {
    /// The MCP Apps protocol versions the host answers `ui/initialize` with, newest first.
    pub protocol_versions: Vec<String>,
    /// The display modes a view may be shown in.
    pub display_modes: Vec<String>,
    /// The view's methods the host forwards to the agent (R-MCP-6): its requests as
    /// `mcp.request`, then its notifications as `mcp.notify` (`ui/update-model-context`, a
    /// request the host answers at once, goes up as one). One list, so that the first line of
    /// a host with every standard component stays within 2 KiB (R-STD-14).
    pub forwarded: Vec<McpForwardedMethod>,
    /// What the view may load from the network.
    pub network: McpNetwork,
}

impl McpAppsInventory {
    /// What a host showing views within `limits` lists: `sampling/createMessage` only when
    /// the agent declared it.
    ///
    /// ```
    /// use lineup_host_core::mcp::McpLimits;
    /// use lineup_host_core::mcp_host::McpAppsInventory;
    /// let listed = McpAppsInventory::of(&McpLimits::default());
    /// assert_eq!(listed.protocol_versions, ["2026-01-26", "2025-11-21"]);
    /// assert_eq!(listed.forwarded.len(), 8);
    /// ```
    pub fn of(limits: &McpLimits) -> Self {
        let requests = McpForwarded::ALL
            .into_iter()
            .filter(|m| limits.sampling || *m != McpForwarded::SamplingCreateMessage)
            .map(McpForwardedMethod::Request);
        let notifications = [
            McpUpNotification::Message,
            McpUpNotification::Cancelled,
            McpUpNotification::UpdateModelContext,
        ]
        .map(McpForwardedMethod::Notification);
        Self {
            protocol_versions: MCP_APPS_PROTOCOL_VERSIONS.map(str::to_owned).to_vec(),
            display_modes: MCP_APPS_DISPLAY_MODES.map(str::to_owned).to_vec(),
            forwarded: requests.chain(notifications).collect(),
            network: McpNetwork::None,
        }
    }
}
