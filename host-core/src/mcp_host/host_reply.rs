//! What the host does with a message of an MCP App view that it answers or takes itself
//! ([`HostOwned`], R-MCP-8, R-MCP-9): a pure function of the message, the tool the view shows
//! and the host's facts, so each method's answer is table-tested without a webview.

use serde_json::{json, Value};

use super::initialize::{initialize_result, HostFacts, MCP_APPS_DISPLAY_MODES};
use crate::mcp::{HostOwned, RpcError, METHOD_NOT_FOUND};
use crate::mcp_message::McpAppTool;

/// What the host does with one [`HostOwned`] message.
#[derive(Debug, Clone, PartialEq)]
pub enum HostReply {
    /// `ui/initialize`: answer with this result; the view's page is alive (for the host, this
    /// is an MCP App view's `ready`).
    Initialize(Value),
    /// Answer the view's request with this outcome
    /// ([`Sessions::mcp_host_answer`](crate::Sessions::mcp_host_answer)).
    Answer(Result<Value, RpcError>),
    /// `ui/notifications/size-changed`: the view asks for this height, in logical pixels, as
    /// a Surface's resize does (clamped by the host).
    Resize(f64),
    /// `ui/notifications/request-teardown`: the view asks to be closed; it is torn down and
    /// closed as a user's close is (its opener hears `ui.event` `close`).
    Teardown,
    /// Nothing to do: a notification without what it needs (a size change with no height).
    Nothing,
}

/// What the host does with `message` of a view showing `tool`'s result, the host being
/// `facts` (R-MCP-8, R-MCP-9):
///
/// | method | reply |
/// | --- | --- |
/// | `ui/initialize` | [`initialize_result`] |
/// | `ping` | `{}` |
/// | `ui/request-display-mode` | `{"mode": "inline"}`: the current mode, the only one offered |
/// | `ui/open-link`, `ui/download-file` | an `isError` result naming why: not routed yet (a refusal is never silence, R-MCP-9) |
/// | `ui/notifications/size-changed` | [`HostReply::Resize`] with `params.height` (a finite number ≥ 0), else nothing |
/// | `ui/notifications/request-teardown` | [`HostReply::Teardown`] |
/// | another request | a JSON-RPC error, method not found |
pub fn host_reply(message: &HostOwned, tool: &McpAppTool, facts: &HostFacts) -> HostReply {
    let params = &message.params;
    match message.method.as_str() {
        "ui/initialize" => HostReply::Initialize(initialize_result(params, tool, facts)),
        "ping" => HostReply::Answer(Ok(json!({}))),
        "ui/request-display-mode" => {
            HostReply::Answer(Ok(json!({"mode": MCP_APPS_DISPLAY_MODES[0]})))
        }
        method @ ("ui/open-link" | "ui/download-file") => {
            let what = if method == "ui/open-link" {
                "open links"
            } else {
                "save downloads"
            };
            let why =
                format!("{method}: this host does not {what} for MCP App views yet (R-MCP-9)");
            HostReply::Answer(Ok(json!({
                "isError": true,
                "content": [{"type": "text", "text": why}],
            })))
        }
        "ui/notifications/size-changed" => match params.get("height").and_then(Value::as_f64) {
            Some(height) if height.is_finite() && height >= 0.0 => HostReply::Resize(height),
            _ => HostReply::Nothing,
        },
        "ui/notifications/request-teardown" => HostReply::Teardown,
        method if message.id.is_some() => HostReply::Answer(Err(RpcError::new(
            METHOD_NOT_FOUND,
            format!("{method} is not a method this host answers (R-MCP-8)"),
        ))),
        _ => HostReply::Nothing,
    }
}
