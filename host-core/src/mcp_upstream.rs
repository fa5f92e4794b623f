//! The MCP App view's traffic with the agent on the `lineup.v1` wire
//! (`../shared/spec/mcp-apps.md`, R-MCP-6): the view's requests and notifications going up
//! (`mcp.request`, `mcp.notify`) and the agent's answers and progress coming back
//! (`mcp.answer`, `mcp.progress`).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};

use crate::ids::{InstanceId, McpServerId};
use crate::json::JsonObject;
use crate::mcp::RpcError;

/// The view's requests the host forwards to the agent (R-MCP-6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum McpForwarded {
    /// `tools/call`: a tool of the view's own server, visible to the app (R-MCP-6).
    #[serde(rename = "tools/call")]
    ToolsCall,
    /// `resources/read`.
    #[serde(rename = "resources/read")]
    ResourcesRead,
    /// `resources/list`.
    #[serde(rename = "resources/list")]
    ResourcesList,
    /// `resources/templates/list`.
    #[serde(rename = "resources/templates/list")]
    ResourcesTemplatesList,
    /// `ui/message`: a message for the conversation.
    #[serde(rename = "ui/message")]
    UiMessage,
    /// `sampling/createMessage`, only when the agent declared it.
    #[serde(rename = "sampling/createMessage")]
    SamplingCreateMessage,
}

impl McpForwarded {
    /// Every forwarded method.
    pub const ALL: [McpForwarded; 6] = [
        McpForwarded::ToolsCall,
        McpForwarded::ResourcesRead,
        McpForwarded::ResourcesList,
        McpForwarded::ResourcesTemplatesList,
        McpForwarded::UiMessage,
        McpForwarded::SamplingCreateMessage,
    ];

    /// The JSON-RPC method name.
    pub fn as_str(self) -> &'static str {
        match self {
            McpForwarded::ToolsCall => "tools/call",
            McpForwarded::ResourcesRead => "resources/read",
            McpForwarded::ResourcesList => "resources/list",
            McpForwarded::ResourcesTemplatesList => "resources/templates/list",
            McpForwarded::UiMessage => "ui/message",
            McpForwarded::SamplingCreateMessage => "sampling/createMessage",
        }
    }

    /// The forwarded method named `method`, if it is one.
    pub fn named(method: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.as_str() == method)
    }
}

/// `lineup.v1.mcp.request` (client → agent): a request of an MCP App view that the host
/// forwards (R-MCP-6), for the agent to send to `server` and answer with `mcp.answer` under
/// the same `instance_id`, `generation` and `request_id`. The view's identity is the host's
/// word, never the view's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpRequest {
    /// The view's instance.
    pub instance_id: InstanceId,
    /// Which view of that instance (a replaced view's requests are its own).
    pub generation: u64,
    /// The server the view came from.
    pub server: McpServerId,
    /// The host's id for the request, never reused by that view.
    pub request_id: u64,
    /// The method.
    pub method: McpForwarded,
    /// The view's params, as it sent them (untrusted).
    pub params: JsonObject,
}

/// The view's notifications that go up to the agent (R-MCP-6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum McpUpNotification {
    /// `notifications/message`: a log message of the view.
    #[serde(rename = "notifications/message")]
    Message,
    /// `notifications/cancelled`: a forwarded request is no longer wanted; `params.requestId`
    /// is the host's `request_id`.
    #[serde(rename = "notifications/cancelled")]
    Cancelled,
    /// `ui/update-model-context`: the view's latest model context (only the last of a burst
    /// goes up).
    #[serde(rename = "ui/update-model-context")]
    UpdateModelContext,
}

impl McpUpNotification {
    /// The notification named `method`, if it is one that goes up.
    pub fn named(method: &str) -> Option<Self> {
        match method {
            "notifications/message" => Some(Self::Message),
            "notifications/cancelled" => Some(Self::Cancelled),
            "ui/update-model-context" => Some(Self::UpdateModelContext),
            _ => None,
        }
    }
}

/// `lineup.v1.mcp.notify` (client → agent): a notification of an MCP App view, or the host's
/// `notifications/cancelled` for a forwarded request it stopped waiting for (R-MCP-6). No
/// answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpNotify {
    /// The view's instance.
    pub instance_id: InstanceId,
    /// Which view of that instance.
    pub generation: u64,
    /// The server the view came from.
    pub server: McpServerId,
    /// The method.
    pub method: McpUpNotification,
    /// Its params (the view's, untrusted, except the host's `requestId`).
    pub params: JsonObject,
}

/// `lineup.v1.mcp.answer` (agent → client): the answer to a forwarded request (R-MCP-6),
/// relayed to the view only while that request waits. On the wire exactly one of `result`
/// and `error` (`{code, message}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawAnswer", into = "RawAnswer")]
pub struct McpAnswer {
    /// The view's instance.
    pub instance_id: InstanceId,
    /// Which view of that instance.
    pub generation: u64,
    /// The host's id of the request.
    pub request_id: u64,
    /// The result, or a JSON-RPC error.
    pub outcome: Result<JsonObject, RpcError>,
}

#[derive(Serialize, Deserialize)]
struct RawAnswer {
    instance_id: InstanceId,
    generation: u64,
    request_id: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    result: Option<JsonObject>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<RpcError>,
}

impl TryFrom<RawAnswer> for McpAnswer {
    type Error = String;
    fn try_from(raw: RawAnswer) -> Result<Self, String> {
        let outcome = match (raw.result, raw.error) {
            (Some(result), None) => Ok(result),
            (None, Some(error)) => Err(error),
            (None, None) => return Err("missing field `result`".to_owned()),
            (Some(_), Some(_)) => {
                return Err(
                    "payload.error comes with a result: send exactly one of result and error"
                        .to_owned(),
                )
            }
        };
        Ok(Self {
            instance_id: raw.instance_id,
            generation: raw.generation,
            request_id: raw.request_id,
            outcome,
        })
    }
}

impl From<McpAnswer> for RawAnswer {
    fn from(answer: McpAnswer) -> Self {
        let (result, error) = match answer.outcome {
            Ok(result) => (Some(result), None),
            Err(error) => (None, Some(error)),
        };
        RawAnswer {
            instance_id: answer.instance_id,
            generation: answer.generation,
            request_id: answer.request_id,
            result,
            error,
        }
    }
}

/// `lineup.v1.mcp.progress` (agent → client): the server's `notifications/progress` for a
/// forwarded request (R-MCP-6), relayed under the view's own `progressToken` while the
/// request waits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpProgress {
    /// The view's instance.
    pub instance_id: InstanceId,
    /// Which view of that instance.
    pub generation: u64,
    /// The host's id of the request.
    pub request_id: u64,
    /// How far it is.
    pub progress: Number,
    /// Out of how much, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<Number>,
    /// What it is doing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl McpProgress {
    /// The `notifications/progress` params the view gets (its token added by the router).
    pub(crate) fn params(&self) -> Map<String, Value> {
        let mut params = Map::new();
        params.insert("progress".to_owned(), Value::Number(self.progress.clone()));
        if let Some(total) = &self.total {
            params.insert("total".to_owned(), Value::Number(total.clone()));
        }
        if let Some(message) = &self.message {
            params.insert("message".to_owned(), Value::String(message.clone()));
        }
        params
    }
}
