//! The host's answer to an MCP App view's `ui/initialize` (R-MCP-8), built from the view's
//! params, the tool whose result it shows and what the host knows of itself ([`HostFacts`]):
//! a pure function, so every answer can be checked against the SDK's
//! `McpUiInitializeResultSchema` without a webview.

use serde_json::{json, Map, Value};

use crate::mcp_message::McpAppTool;

use crate::mcp::RpcId;

/// The MCP Apps protocol versions this host speaks, the newest first: a view that asks for
/// another gets the first (R-MCP-8, as SDK 2.0.x's `AppBridge` answers).
pub const MCP_APPS_PROTOCOL_VERSIONS: [&str; 2] = ["2026-01-26", "2025-11-21"];

/// The display modes this host offers a view: `inline` only, a child view or a window of its
/// own (R-MCP-12; `fullscreen` and `pip` are still to come).
pub const MCP_APPS_DISPLAY_MODES: [&str; 1] = ["inline"];

/// The content a view's `ui/message` and `ui/update-model-context` may carry: the host
/// forwards each as sent, so every modality of the spec is routed (R-MCP-6).
const MODALITIES: [&str; 5] = ["text", "image", "audio", "resource", "resourceLink"];

/// The largest integer a JSON-RPC id may be in `hostContext.toolInfo.id` (the SDK's schema:
/// a safe JavaScript integer).
const MAX_SAFE_INTEGER: i64 = 9_007_199_254_740_991;

/// The host's colour scheme, as `hostContext.theme` says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpTheme {
    /// `light`.
    Light,
    /// `dark`.
    Dark,
}

/// What the host knows of itself and of a view's place, for its `ui/initialize` answer
/// (R-MCP-8). The host fills it at each answer (the theme and the container are read then).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct HostFacts {
    /// `hostInfo.name`.
    pub name: String,
    /// `hostInfo.version`.
    pub version: String,
    /// `hostContext.theme`.
    pub theme: McpTheme,
    /// `hostContext.locale`: a BCP 47 tag.
    pub locale: String,
    /// `hostContext.timeZone`: an IANA name, when the host knows it.
    pub time_zone: Option<String>,
    /// `hostContext.userAgent`.
    pub user_agent: String,
    /// Whether the agent declared `sampling/createMessage` (only then is it offered).
    pub sampling: bool,
}

impl HostFacts {
    /// The facts of host `name` at `version`: light, `en`, no time zone, `name/version` as
    /// the user agent, no sampling.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        let (name, version) = (name.into(), version.into());
        Self {
            user_agent: format!("{name}/{version}"),
            name,
            version,
            theme: McpTheme::Light,
            locale: "en".to_owned(),
            time_zone: None,
            sampling: false,
        }
    }
}

/// The protocol version the host answers a view that asked for `params.protocolVersion`: that
/// one when this host speaks it, else the newest (never an error, R-MCP-8).
pub fn protocol_version(params: &Map<String, Value>) -> &'static str {
    let asked = params.get("protocolVersion").and_then(Value::as_str);
    MCP_APPS_PROTOCOL_VERSIONS
        .into_iter()
        .find(|v| Some(*v) == asked)
        .unwrap_or(MCP_APPS_PROTOCOL_VERSIONS[0])
}

/// The result of the host's answer to `ui/initialize` with `params`, for a view of `tool`'s
/// result (R-MCP-8): the protocol version ([`protocol_version`]); `hostInfo`; exactly the
/// capabilities this host routes, each an object (`serverTools`, `serverResources`, `logging`,
/// `message` and `updateModelContext` by content modality, `sampling` only when the agent
/// declared it, and a `sandbox` granting no permission and no CSP domain, R-MCP-10; no
/// `openLinks` and no `downloadFile`, which are not routed yet); and the `hostContext`
/// (`host_context`).
///
/// ```
/// use lineup_host_core::mcp_host::{initialize_result, HostFacts};
/// use lineup_host_core::McpAppTool;
/// let tool: McpAppTool = serde_json::from_value(serde_json::json!({
///     "name": "get-time", "meta": {"ui": {"resourceUri": "ui://t/app.html"}}, "call_id": 7
/// })).unwrap();
/// let params = serde_json::json!({"protocolVersion": "2025-11-21"});
/// let result = initialize_result(params.as_object().unwrap(), &tool, &HostFacts::new("h", "1"));
/// assert_eq!(result["protocolVersion"], "2025-11-21");
/// assert_eq!(result["hostContext"]["toolInfo"]["id"], 7);
/// ```
pub fn initialize_result(
    params: &Map<String, Value>,
    tool: &McpAppTool,
    facts: &HostFacts,
) -> Value {
    json!({
        "protocolVersion": protocol_version(params),
        "hostInfo": {"name": facts.name, "version": facts.version},
        "hostCapabilities": host_capabilities(facts.sampling),
        "hostContext": host_context(tool, facts),
    })
}

/// `hostCapabilities`: exactly what this host routes, every capability an object.
fn host_capabilities(sampling: bool) -> Value {
    let modalities: Map<String, Value> = MODALITIES
        .iter()
        .map(|m| ((*m).to_owned(), json!({})))
        .collect();
    let mut context = modalities.clone();
    context.insert("structuredContent".to_owned(), json!({}));
    let mut capabilities = json!({
        "serverTools": {},
        "serverResources": {},
        "logging": {},
        "message": modalities,
        "updateModelContext": context,
        "sandbox": {"permissions": {}, "csp": {}},
    });
    if sampling {
        capabilities["sampling"] = json!({});
    }
    capabilities
}

/// `hostContext`: the tool call, the look, the display mode and the platform. No
/// `containerDimensions`: SDK 2.0.4's published `McpUiInitializeResultSchema` takes none but
/// `{}` (an intersection of closed objects: `width` fails the `height`/`maxHeight` side), and
/// an answer that fails it leaves the view dead; the view measures its own frame, and its size
/// changes are honoured as a Surface's.
fn host_context(tool: &McpAppTool, facts: &HostFacts) -> Value {
    let theme = match facts.theme {
        McpTheme::Light => "light",
        McpTheme::Dark => "dark",
    };
    let mut context = json!({
        "toolInfo": tool_info(tool),
        "theme": theme,
        "locale": facts.locale,
        "displayMode": MCP_APPS_DISPLAY_MODES[0],
        "availableDisplayModes": MCP_APPS_DISPLAY_MODES,
        "platform": "desktop",
        "userAgent": facts.user_agent,
    });
    if let Some(zone) = &facts.time_zone {
        context["timeZone"] = json!(zone);
    }
    context
}

/// `hostContext.toolInfo`: the agent's `tools/call` id (left out when the SDK's schema could
/// not take it: a number past a safe JavaScript integer) and the tool: its name, its input
/// schema when it is one the schema takes (else `{"type": "object"}`), and its `_meta`.
fn tool_info(tool: &McpAppTool) -> Value {
    let mut info = json!({"tool": {
        "name": tool.name.as_str(),
        "inputSchema": input_schema(tool),
        "_meta": tool.meta,
    }});
    let id = match &tool.call_id {
        RpcId::Number(n) if n.abs() <= MAX_SAFE_INTEGER => Some(json!(n)),
        RpcId::Number(_) => None,
        RpcId::Text(s) => Some(json!(s)),
    };
    if let Some(id) = id {
        info["id"] = id;
    }
    info
}

/// The tool's input schema as the agent sent it when it is an object schema the SDK takes
/// (`type` `object`, `properties` an object, `required` strings), else `{"type": "object"}`.
fn input_schema(tool: &McpAppTool) -> Value {
    let fallback = json!({"type": "object"});
    let Some(schema) = &tool.input_schema else {
        return fallback;
    };
    let schema = schema.as_map();
    let object = schema.get("type").and_then(Value::as_str) == Some("object");
    let properties = schema.get("properties").is_none_or(Value::is_object);
    let required = match schema.get("required") {
        None => true,
        Some(Value::Array(names)) => names.iter().all(Value::is_string),
        Some(_) => false,
    };
    if object && properties && required {
        Value::Object(schema.clone())
    } else {
        fallback
    }
}
