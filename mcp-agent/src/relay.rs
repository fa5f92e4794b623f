//! What a view asks of the agent, as the host forwards it (R-MCP-6): `tools/call`,
//! `resources/read`, `resources/list` and `resources/templates/list` go to the view's own MCP
//! server through rmcp, a `tools/call` only to a tool whose visibility includes `app` (the agent
//! enforces visibility); `ui/message` and `ui/update-model-context` are the agent's own; every
//! request gets an `mcp.answer`, a result or a JSON-RPC error, never silence.

use std::sync::Arc;
use std::time::Duration;

use lineup_host_core::mcp::{RpcError, INVALID_PARAMS, METHOD_NOT_FOUND, REFUSED, TIMED_OUT};
use lineup_host_core::{
    InstanceId, JsonObject, McpAnswer, McpForwarded, McpNotify, McpRequest, McpServerId,
    McpUpNotification,
};
use rmcp::model::{CallToolRequestParams, PaginatedRequestParams, ReadResourceRequestParams};
use rmcp::{Peer, RoleClient, ServiceError};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::McpError;
use crate::outbox::{Outbox, Outgoing};
use crate::server::McpServer;
use crate::tool::UiTool;

/// JSON-RPC's "internal error": the server's connection failed while it was asked.
const INTERNAL_ERROR: i64 = -32603;

/// Where an answer goes: the view's instance, which view of it, and the host's request id.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RequestKey {
    instance: InstanceId,
    generation: u64,
    request_id: u64,
}

impl RequestKey {
    /// The host's id of the request.
    pub fn request_id(&self) -> u64 {
        self.request_id
    }

    /// The key `answer` goes back under.
    pub(crate) fn of(answer: &McpAnswer) -> Self {
        Self {
            instance: answer.instance_id.clone(),
            generation: answer.generation,
            request_id: answer.request_id,
        }
    }

    fn answer(&self, outcome: Result<JsonObject, RpcError>) -> McpAnswer {
        McpAnswer {
            instance_id: self.instance.clone(),
            generation: self.generation,
            request_id: self.request_id,
            outcome,
        }
    }
}

/// What the agent keeps or shows of a view: none of it goes to the server.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Note {
    /// `ui/message`: a message the view adds to the conversation (its params, untrusted).
    Message(Map<String, Value>),
    /// `notifications/message`: a log message of the view (its params, untrusted).
    Log(Map<String, Value>),
    /// `ui/update-model-context`: the view's latest context for the model (its params,
    /// untrusted); [`Relay::model_context`] keeps the last.
    ModelContext(Map<String, Value>),
}

impl Note {
    /// The MCP Apps method it came as.
    pub fn method(&self) -> &'static str {
        match self {
            Note::Message(_) => "ui/message",
            Note::Log(_) => "notifications/message",
            Note::ModelContext(_) => "ui/update-model-context",
        }
    }

    /// Its params.
    pub fn params(&self) -> &Map<String, Value> {
        match self {
            Note::Message(p) | Note::Log(p) | Note::ModelContext(p) => p,
        }
    }
}

/// What the relay made of one message the host forwarded.
#[derive(Debug)]
#[non_exhaustive]
pub enum Taken {
    /// A request for the server: run [`Forward::answer`] (beside other forwards: a slow
    /// `tools/call` holds up no other) and send its answer.
    Forward(Box<Forward>),
    /// A request answered at once, without the server: a refusal (a tool the view may not
    /// call, another server's request, a method this agent does not serve) or `ui/message`,
    /// which the agent takes itself (its `note`).
    Answered {
        /// The answer for the host.
        answer: McpAnswer,
        /// What the agent keeps or shows of it.
        note: Option<Note>,
    },
    /// A notification of the view, for the agent.
    Note(Note),
    /// The host no longer waits for this request (the view cancelled it or it timed out): its
    /// forward may be dropped, which cancels it at the server.
    Cancelled(RequestKey),
}

/// The agent's side of one server's views: forwards their requests to that server and takes
/// their notifications.
///
/// Invariant: a `tools/call` reaches the server only for a tool it listed whose
/// `_meta.ui.visibility` includes `app` (R-MCP-6), and only from a view of this server.
#[derive(Debug)]
pub struct Relay {
    server: McpServerId,
    peer: Peer<RoleClient>,
    tools: Arc<[UiTool]>,
    timeout: Duration,
    model_context: Option<Map<String, Value>>,
}

impl Relay {
    /// The relay of `server`'s views, known to the host as `id`; `tools` are the server's as
    /// listed (their visibility decides what a view may call).
    pub fn new(server: &McpServer, id: McpServerId, tools: Vec<UiTool>) -> Self {
        Self {
            server: id,
            peer: server.peer(),
            tools: tools.into(),
            timeout: server.timeout(),
            model_context: None,
        }
    }

    /// Takes a view's request (`mcp.request`).
    pub fn request(&self, request: McpRequest) -> Taken {
        let key = RequestKey {
            instance: request.instance_id,
            generation: request.generation,
            request_id: request.request_id,
        };
        let params = Value::Object(request.params.into_map());
        match route(
            &self.server,
            &self.tools,
            &request.server,
            request.method,
            params,
        ) {
            Routed::Call(call) => Taken::Forward(Box::new(Forward {
                key,
                peer: self.peer.clone(),
                timeout: self.timeout,
                call,
            })),
            // Accepted: the agent shows it (R-MCP-6: answered once accepted).
            Routed::Message(params) => Taken::Answered {
                answer: key.answer(Ok(JsonObject::new())),
                note: Some(Note::Message(params)),
            },
            Routed::Refused(error) => Taken::Answered {
                answer: key.answer(Err(error)),
                note: None,
            },
        }
    }

    /// Takes a view's notification (`mcp.notify`); `None` for one of another server.
    pub fn notify(&mut self, notify: McpNotify) -> Option<Taken> {
        if notify.server != self.server {
            return None;
        }
        let params = notify.params.into_map();
        Some(match notify.method {
            McpUpNotification::Message => Taken::Note(Note::Log(params)),
            McpUpNotification::UpdateModelContext => {
                self.model_context = Some(params.clone());
                Taken::Note(Note::ModelContext(params))
            }
            McpUpNotification::Cancelled => {
                let request_id = params.get("requestId").and_then(Value::as_u64)?;
                Taken::Cancelled(RequestKey {
                    instance: notify.instance_id,
                    generation: notify.generation,
                    request_id,
                })
            }
            // A kind this release of the wire does not have yet: nothing to do.
            _ => return None,
        })
    }

    /// The last model context a view of this server gave (`ui/update-model-context`): what
    /// the model would see on its next turn.
    pub fn model_context(&self) -> Option<&Map<String, Value>> {
        self.model_context.as_ref()
    }
}

/// Where a view's request goes.
#[derive(Debug)]
enum Routed {
    /// To the server.
    Call(Call),
    /// `ui/message`: to the agent itself (its params).
    Message(Map<String, Value>),
    /// Nowhere: this JSON-RPC error is its answer.
    Refused(RpcError),
}

/// Routes a request of a view of server `asked` to the relay of server `own`, whose tools are
/// `tools`: a `tools/call` only to a tool of that server whose visibility includes `app`
/// (R-MCP-6), the resource methods as they are, `ui/message` to the agent, anything else
/// (`sampling/createMessage`, which this agent never declares) refused `METHOD_NOT_FOUND`.
fn route(
    own: &McpServerId,
    tools: &[UiTool],
    asked: &McpServerId,
    method: McpForwarded,
    params: Value,
) -> Routed {
    let refused = |code: i64, message: String| Routed::Refused(RpcError::new(code, message));
    if asked != own {
        return refused(
            REFUSED,
            format!(
                "server {:?} is not this agent's: it relays for {:?} only",
                asked.as_str(),
                own.as_str()
            ),
        );
    }
    let invalid =
        |e: serde_json::Error| refused(INVALID_PARAMS, format!("{} params: {e}", method.as_str()));
    match method {
        McpForwarded::ToolsCall => match tool_call(tools, own, params) {
            Ok(call) => Routed::Call(Call::Tool(call)),
            Err(error) => Routed::Refused(error),
        },
        McpForwarded::ResourcesRead => match serde_json::from_value(params) {
            Ok(params) => Routed::Call(Call::Read(params)),
            Err(e) => invalid(e),
        },
        McpForwarded::ResourcesList => match page(params) {
            Ok(params) => Routed::Call(Call::List(params)),
            Err(e) => invalid(e),
        },
        McpForwarded::ResourcesTemplatesList => match page(params) {
            Ok(params) => Routed::Call(Call::Templates(params)),
            Err(e) => invalid(e),
        },
        McpForwarded::UiMessage => match params {
            Value::Object(params) => Routed::Message(params),
            // The wire's params are an object: not reached.
            _ => refused(
                INVALID_PARAMS,
                "ui/message params are not an object".to_owned(),
            ),
        },
        other => refused(
            METHOD_NOT_FOUND,
            format!(
                "{}: this agent does not serve it (it declared no sampling)",
                other.as_str()
            ),
        ),
    }
}

/// A view's `tools/call` params, read and checked against the tools of `server` and their
/// visibility (R-MCP-6).
fn tool_call(
    tools: &[UiTool],
    server: &McpServerId,
    params: Value,
) -> Result<CallToolRequestParams, RpcError> {
    let params: CallToolRequestParams = serde_json::from_value(params)
        .map_err(|e| RpcError::new(INVALID_PARAMS, format!("tools/call params: {e}")))?;
    let tool = tools
        .iter()
        .find(|tool| tool.name() == params.name)
        .ok_or_else(|| {
            RpcError::new(
                INVALID_PARAMS,
                format!(
                    "tools/call: server {:?} has no tool {:?}",
                    server.as_str(),
                    params.name
                ),
            )
        })?;
    if !tool.visibility().app() {
        return Err(RpcError::new(
            REFUSED,
            format!(
                "tools/call: tool {:?} is not for views: its _meta.ui.visibility is {:?}, \
                 without \"app\" (R-MCP-6)",
                params.name,
                tool.visibility().names()
            ),
        ));
    }
    Ok(params)
}

/// A `resources/list` or `resources/templates/list` params: the page the view asks for.
fn page(params: Value) -> Result<Option<PaginatedRequestParams>, serde_json::Error> {
    match &params {
        Value::Object(map) if map.is_empty() => Ok(None),
        _ => serde_json::from_value(params).map(Some),
    }
}

/// The request a [`Forward`] sends.
#[derive(Debug)]
enum Call {
    Tool(CallToolRequestParams),
    Read(ReadResourceRequestParams),
    List(Option<PaginatedRequestParams>),
    Templates(Option<PaginatedRequestParams>),
}

/// A view's request on its way to the server; [`Forward::answer`] sends it and makes the
/// host's `mcp.answer` of what came back.
#[derive(Debug)]
pub struct Forward {
    key: RequestKey,
    peer: Peer<RoleClient>,
    timeout: Duration,
    call: Call,
}

impl Forward {
    /// The request's key (to drop it when the host cancels it).
    pub fn key(&self) -> &RequestKey {
        &self.key
    }

    /// The tool a `tools/call` calls.
    pub fn tool(&self) -> Option<&str> {
        match &self.call {
            Call::Tool(params) => Some(&params.name),
            _ => None,
        }
    }

    /// Its method.
    pub fn method(&self) -> &'static str {
        match self.call {
            Call::Tool(_) => "tools/call",
            Call::Read(_) => "resources/read",
            Call::List(_) => "resources/list",
            Call::Templates(_) => "resources/templates/list",
        }
    }

    /// Sends the request and makes the answer: the server's result, its JSON-RPC error, or
    /// one naming the timeout or the failed connection.
    pub async fn answer(self) -> McpAnswer {
        let method = self.method();
        let Self {
            key,
            peer,
            timeout,
            call,
        } = self;
        let asked = async {
            match call {
                Call::Tool(params) => result(peer.call_tool(params).await),
                Call::Read(params) => result(peer.read_resource(params).await),
                Call::List(params) => result(peer.list_resources(params).await),
                Call::Templates(params) => result(peer.list_resource_templates(params).await),
            }
        };
        let outcome = match tokio::time::timeout(timeout, asked).await {
            Ok(outcome) => outcome,
            Err(_) => Err(RpcError::new(
                TIMED_OUT,
                format!(
                    "the server did not answer {method} within {} s",
                    timeout.as_secs()
                ),
            )),
        };
        key.answer(outcome)
    }
}

/// A server's answer as an `mcp.answer` outcome.
fn result<T: Serialize>(answer: Result<T, ServiceError>) -> Result<JsonObject, RpcError> {
    match answer {
        Ok(answer) => match serde_json::to_value(answer) {
            Ok(Value::Object(result)) => Ok(JsonObject::from(result)),
            _ => Err(RpcError::new(
                INTERNAL_ERROR,
                "the server's result is not a JSON object",
            )),
        },
        Err(ServiceError::McpError(error)) => Err(RpcError::new(
            i64::from(error.code.0),
            error.message.into_owned(),
        )),
        Err(e) => Err(RpcError::new(
            INTERNAL_ERROR,
            format!("the server's connection failed: {e}"),
        )),
    }
}

/// The envelope of `answer`; an answer too large for one envelope (R-ENV-4) goes as an error
/// naming its size and the limit instead, so the view hears why (R-MCP-4: by digest later).
pub fn answer_envelope(outbox: &mut Outbox, answer: McpAnswer) -> Result<Outgoing, McpError> {
    let key = RequestKey::of(&answer);
    match outbox.envelope("lineup.v1.mcp.answer", answer) {
        Err(McpError::EnvelopeTooLarge { size, limit, .. }) => {
            let error = RpcError::new(
                REFUSED,
                format!(
                    "the server's answer is a {size}-byte envelope, over the host's limit of \
                     {limit} bytes"
                ),
            );
            outbox.envelope("lineup.v1.mcp.answer", key.answer(Err(error)))
        }
        sent => sent,
    }
}

#[cfg(test)]
mod tests {
    use lineup_host_core::mcp::{INVALID_PARAMS, METHOD_NOT_FOUND, REFUSED};
    use lineup_host_core::{McpForwarded, McpServerId};
    use serde_json::{json, Value};

    use super::{route, Call, Routed};
    use crate::tool::UiTool;

    fn server(name: &str) -> McpServerId {
        McpServerId::try_from(name).unwrap_or_else(|e| panic!("{e}"))
    }

    /// The tools of a server: one for both, one app-only, one model-only, one whose
    /// visibility cannot be read.
    fn tools() -> Vec<UiTool> {
        [
            ("both", json!({})),
            ("app-only", json!({"ui": {"visibility": ["app"]}})),
            ("model-only", json!({"ui": {"visibility": ["model"]}})),
            ("unreadable", json!({"ui": {"visibility": "app"}})),
        ]
        .into_iter()
        .map(|(name, meta)| {
            let tool: rmcp::model::Tool = serde_json::from_value(
                json!({"name": name, "inputSchema": {"type": "object"}, "_meta": meta}),
            )
            .unwrap_or_else(|e| panic!("{e}"));
            UiTool::read(&tool)
        })
        .collect()
    }

    fn routed(asked: &str, method: McpForwarded, params: Value) -> Routed {
        route(&server("s1"), &tools(), &server(asked), method, params)
    }

    /// The code and message of a refusal.
    fn refused(routed: Routed) -> (i64, String) {
        match routed {
            Routed::Refused(error) => (error.code, error.message),
            other => panic!("not refused: {other:?}"),
        }
    }

    fn call(name: &str) -> Routed {
        routed(
            "s1",
            McpForwarded::ToolsCall,
            json!({"name": name, "arguments": {"a": 1}}),
        )
    }

    #[test]
    fn r_mcp_6_a_view_calls_only_tools_visible_to_apps() {
        for name in ["both", "app-only"] {
            match call(name) {
                Routed::Call(Call::Tool(params)) => {
                    assert_eq!(params.name, name);
                    assert_eq!(params.arguments.unwrap_or_default()["a"], 1);
                }
                other => panic!("{name}: {other:?}"),
            }
        }
        let (code, message) = refused(call("model-only"));
        assert_eq!(code, REFUSED);
        assert_eq!(
            message,
            "tools/call: tool \"model-only\" is not for views: its _meta.ui.visibility is \
             [\"model\"], without \"app\" (R-MCP-6)"
        );
        assert_eq!(refused(call("unreadable")).0, REFUSED);
        let (code, message) = refused(call("missing"));
        assert_eq!(code, INVALID_PARAMS);
        assert!(message.contains("has no tool \"missing\""), "{message}");
        let (code, _) = refused(routed(
            "s1",
            McpForwarded::ToolsCall,
            json!({"arguments": {}}),
        ));
        assert_eq!(code, INVALID_PARAMS);
    }

    #[test]
    fn r_mcp_6_a_request_for_another_server_goes_nowhere() {
        let (code, message) = refused(routed(
            "s2",
            McpForwarded::ToolsCall,
            json!({"name": "both"}),
        ));
        assert_eq!(code, REFUSED);
        assert!(message.contains("\"s2\" is not this agent's"), "{message}");
        let read = routed("s2", McpForwarded::ResourcesRead, json!({"uri": "ui://x"}));
        assert_eq!(refused(read).0, REFUSED);
    }

    #[test]
    fn r_mcp_6_resources_go_to_the_server_and_ui_message_to_the_agent() {
        let read = routed("s1", McpForwarded::ResourcesRead, json!({"uri": "ui://x"}));
        assert!(matches!(read, Routed::Call(Call::Read(_))), "{read:?}");
        let bad = routed("s1", McpForwarded::ResourcesRead, json!({"url": "ui://x"}));
        assert_eq!(refused(bad).0, INVALID_PARAMS);
        let list = routed("s1", McpForwarded::ResourcesList, json!({}));
        assert!(matches!(list, Routed::Call(Call::List(None))), "{list:?}");
        let page = routed("s1", McpForwarded::ResourcesList, json!({"cursor": "2"}));
        assert!(
            matches!(page, Routed::Call(Call::List(Some(_)))),
            "{page:?}"
        );
        let templates = routed("s1", McpForwarded::ResourcesTemplatesList, json!({}));
        assert!(matches!(templates, Routed::Call(Call::Templates(None))));
        let said = json!({"role": "user", "content": [{"type": "text", "text": "hi"}]});
        match routed("s1", McpForwarded::UiMessage, said.clone()) {
            Routed::Message(params) => assert_eq!(Value::Object(params), said),
            other => panic!("{other:?}"),
        }
        let (code, message) = refused(routed("s1", McpForwarded::SamplingCreateMessage, json!({})));
        assert_eq!(code, METHOD_NOT_FOUND);
        assert!(message.starts_with("sampling/createMessage"), "{message}");
    }
}
