//! The JSON-RPC 2.0 messages an MCP App view exchanges with its host, read and written with
//! every failure a definite error (R-MCP-6): what the view sent is untrusted.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

/// JSON-RPC's "parse error".
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC's "invalid request".
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC's "method not found".
pub const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC's "invalid params".
pub const INVALID_PARAMS: i64 = -32602;
/// The host refused a request within its limits (in flight, rate, size) or its order; the
/// message names the limit.
pub const REFUSED: i64 = -32000;
/// The request's answer did not come in time, or the agent went away.
pub const TIMED_OUT: i64 = -32001;

/// A request id as JSON-RPC allows it: a number or a string. On the `lineup.v1` wire it is
/// written as JSON-RPC writes it (`7`, `"a1"`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RpcId {
    /// A numeric id.
    Number(i64),
    /// A string id.
    Text(String),
}

impl RpcId {
    pub(crate) fn read(value: &Value) -> Option<Self> {
        match value {
            Value::Number(n) => n.as_i64().map(RpcId::Number),
            Value::String(s) => Some(RpcId::Text(s.clone())),
            _ => None,
        }
    }

    pub(crate) fn to_value(&self) -> Value {
        match self {
            RpcId::Number(n) => json!(n),
            RpcId::Text(s) => json!(s),
        }
    }
}

/// A JSON-RPC error object: a code and a message naming what was refused and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RpcError {
    /// The error code ([`PARSE_ERROR`], [`REFUSED`], …).
    pub code: i64,
    /// What was refused: the field or method, the value, the limit.
    pub message: String,
}

impl RpcError {
    /// An error of `code` saying `message`.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

/// One message from the view, read.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Incoming {
    /// A request: it gets exactly one answer.
    Request {
        id: RpcId,
        method: String,
        params: Map<String, Value>,
    },
    /// A notification: no answer.
    Notification {
        method: String,
        params: Map<String, Value>,
    },
    /// An answer to a request the host sent the view.
    Response {
        id: RpcId,
        outcome: Result<Value, RpcError>,
    },
}

/// Reads one message; the error carries the id to answer (`None`: JSON-RPC's `null`).
pub(crate) fn read(text: &str) -> Result<Incoming, (Option<RpcId>, RpcError)> {
    let value: Value = serde_json::from_str(text)
        .map_err(|e| (None, RpcError::new(PARSE_ERROR, format!("not JSON: {e}"))))?;
    let Value::Object(mut object) = value else {
        return Err((None, RpcError::new(INVALID_REQUEST, "not a JSON object")));
    };
    let id = object.get("id").and_then(RpcId::read);
    if object.get("jsonrpc") != Some(&json!("2.0")) {
        return Err((
            id,
            RpcError::new(INVALID_REQUEST, "jsonrpc must be \"2.0\""),
        ));
    }
    let params = match object.remove("params") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(params)) => params,
        Some(_) => {
            return Err((
                id,
                RpcError::new(INVALID_PARAMS, "params must be an object"),
            ));
        }
    };
    match (object.remove("method"), id) {
        (Some(Value::String(method)), Some(id)) => Ok(Incoming::Request { id, method, params }),
        (Some(Value::String(method)), None) if !object.contains_key("id") => {
            Ok(Incoming::Notification { method, params })
        }
        (Some(_), id) => Err((
            id,
            RpcError::new(
                INVALID_REQUEST,
                "method must be a string, id a number or a string",
            ),
        )),
        (None, Some(id)) => Ok(Incoming::Response {
            outcome: response_outcome(&mut object),
            id,
        }),
        (None, None) => Err((
            None,
            RpcError::new(INVALID_REQUEST, "neither a method nor an id"),
        )),
    }
}

fn response_outcome(object: &mut Map<String, Value>) -> Result<Value, RpcError> {
    if let Some(error) = object.remove("error") {
        let code = error["code"].as_i64().unwrap_or(REFUSED);
        let message = error["message"].as_str().unwrap_or("").to_owned();
        return Err(RpcError::new(code, message));
    }
    Ok(object.remove("result").unwrap_or(Value::Null))
}

/// A request to the view.
pub(crate) fn request(id: &RpcId, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id.to_value(), "method": method, "params": params}).to_string()
}

/// A notification to the view.
pub(crate) fn notification(method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "method": method, "params": params}).to_string()
}

/// The answer `outcome` to the view's request `id` (`None`: JSON-RPC's `null`).
pub(crate) fn response(id: Option<&RpcId>, outcome: Result<Value, RpcError>) -> String {
    let id = id.map_or(Value::Null, RpcId::to_value);
    match outcome {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err(e) => json!({"jsonrpc": "2.0", "id": id,
                         "error": {"code": e.code, "message": e.message}}),
    }
    .to_string()
}
