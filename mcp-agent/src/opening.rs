//! The envelopes that show a tool's view: `ui.open` with `mcp_app` (R-MCP-3), inline when its
//! envelope fits the host's bound, else after the HTML's `mcp.resource` chunks, by digest
//! (R-MCP-4); then the tool call's news for it, `mcp.tool` (R-MCP-5), and its `ui.close`.

use base64::Engine as _;
use lineup_host_core::mcp::{ResourceDigest, ResourceLimits, RpcId, ToolNews};
use lineup_host_core::{
    InstanceId, JsonObject, McpApp, McpAppOpen, McpAppResource, McpAppTool, McpHtml, McpResource,
    McpServerId, McpTool, McpToolName, McpUiMeta, UiClose,
};
use rmcp::model::CallToolResult;
use serde_json::{Map, Value};

use crate::error::McpError;
use crate::outbox::{Outbox, Outgoing};
use crate::tool::ViewTool;
use crate::view::ViewResource;

/// A tool call's view, opened as one instance: what the agent tells the host about it goes
/// through here, always under that instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShownView {
    instance: InstanceId,
    server: McpServerId,
    tool: String,
    uri: String,
}

impl ShownView {
    /// The envelopes that open `view`, the view of `tool` from `server`, as `instance`, for the
    /// agent's `tools/call` `call_id`: one `ui.open` with the HTML inline when that envelope
    /// fits the outbox's bound, else the HTML's `mcp.resource` chunks (each within
    /// [`ResourceLimits::max_chunk_bytes`] of base64) and a `ui.open` by its digest. Refused
    /// when a value of the server cannot go on the wire (a tool name over 128 characters, a
    /// `_meta.ui` of the wrong shape), naming the member.
    pub fn open(
        outbox: &mut Outbox,
        instance: InstanceId,
        server: McpServerId,
        tool: ViewTool<'_>,
        call_id: RpcId,
        view: &ViewResource,
    ) -> Result<(Self, Vec<Outgoing>), McpError> {
        let ui: McpUiMeta = match view.ui() {
            Some(ui) => serde_json::from_value(ui.clone()).map_err(|e| McpError::NotOnTheWire {
                field: "mcp_app.resource.ui",
                reason: e.to_string(),
            })?,
            None => McpUiMeta::default(),
        };
        let name = McpToolName::try_from(tool.name()).map_err(|e| McpError::NotOnTheWire {
            field: "mcp_app.tool.name",
            reason: e.to_string(),
        })?;
        let shown = Self {
            instance: instance.clone(),
            server: server.clone(),
            tool: tool.name().to_owned(),
            uri: view.uri().to_owned(),
        };
        let tool = McpAppTool {
            name,
            meta: JsonObject::from(tool.meta().clone()),
            input_schema: Some(JsonObject::from(tool.input_schema().clone())),
            call_id,
        };
        let app = |html: McpHtml| -> Result<McpAppOpen, McpError> {
            let resource = McpAppResource::new(view.uri(), html)
                .map_err(|reason| McpError::NotOnTheWire {
                    field: "mcp_app.resource.uri",
                    reason,
                })?
                .with_ui(ui.clone());
            let app = McpApp::new(server.clone(), resource, tool.clone()).map_err(|reason| {
                McpError::NotOnTheWire {
                    field: "mcp_app.tool.meta",
                    reason,
                }
            })?;
            Ok(McpAppOpen {
                instance_id: instance.clone(),
                mcp_app: Box::new(app),
            })
        };
        let inline = match std::str::from_utf8(view.html()) {
            Ok(text) => McpHtml::Text(text.to_owned()),
            Err(_) => McpHtml::Blob(view.html().to_vec()),
        };
        let sent = match outbox.envelope("lineup.v1.ui.open", app(inline)?) {
            Ok(open) => vec![open],
            Err(McpError::EnvelopeTooLarge { .. }) => {
                let mut chunks = chunks(outbox, view.html())?;
                let digest = McpHtml::Digest(ResourceDigest::of(view.html()));
                chunks.push(outbox.envelope("lineup.v1.ui.open", app(digest)?)?);
                chunks
            }
            Err(e) => return Err(e),
        };
        Ok((shown, sent))
    }

    /// The instance it was opened as.
    pub fn instance(&self) -> &InstanceId {
        &self.instance
    }

    /// The server it came from, as the host knows it.
    pub fn server(&self) -> &McpServerId {
        &self.server
    }

    /// The tool whose call it shows.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The view's `ui://` uri.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// `mcp.tool` `tool-input`: the call's arguments, complete (R-MCP-5).
    pub fn input(
        &self,
        outbox: &mut Outbox,
        arguments: Map<String, Value>,
    ) -> Result<Outgoing, McpError> {
        self.news(
            outbox,
            "lineup.v1.mcp.tool tool-input",
            ToolNews::Input(arguments),
        )
    }

    /// `mcp.tool` `tool-result`: the server's `CallToolResult` (R-MCP-5); refused when it does
    /// not fit one envelope (sending it by digest is still to come, R-MCP-4).
    pub fn result(
        &self,
        outbox: &mut Outbox,
        result: &CallToolResult,
    ) -> Result<Outgoing, McpError> {
        let result = match serde_json::to_value(result) {
            Ok(Value::Object(result)) => result,
            // A CallToolResult is an object; nothing else is sent as one.
            _ => Map::new(),
        };
        self.news(
            outbox,
            "lineup.v1.mcp.tool tool-result",
            ToolNews::Result(result),
        )
    }

    /// `mcp.tool` `tool-cancelled`, saying why (R-MCP-5).
    pub fn cancelled(&self, outbox: &mut Outbox, reason: &str) -> Result<Outgoing, McpError> {
        let news = ToolNews::Cancelled(reason.to_owned());
        self.news(outbox, "lineup.v1.mcp.tool tool-cancelled", news)
    }

    /// `ui.close` of the view.
    pub fn close(&self, outbox: &mut Outbox) -> Result<Outgoing, McpError> {
        let close = UiClose {
            instance_id: self.instance.clone(),
            reason: None,
        };
        outbox.envelope("lineup.v1.ui.close", close)
    }

    fn news(
        &self,
        outbox: &mut Outbox,
        what: &'static str,
        news: ToolNews,
    ) -> Result<Outgoing, McpError> {
        let tool = McpTool {
            instance_id: self.instance.clone(),
            news,
        };
        outbox.envelope(what, tool)
    }
}

/// `html` as `mcp.resource` chunks, in order: each chunk's base64 within
/// [`ResourceLimits::max_chunk_bytes`] and its envelope within the outbox's bound.
fn chunks(outbox: &mut Outbox, html: &[u8]) -> Result<Vec<Outgoing>, McpError> {
    // Room for the envelope around the data: ids, digest, sizes.
    const AROUND: usize = 1024;
    let base64_room = ResourceLimits::default()
        .max_chunk_bytes
        .min(outbox.max_envelope_bytes().saturating_sub(AROUND));
    let raw = (base64_room / 4 * 3).max(3);
    let digest = ResourceDigest::of(html);
    let size = html.len() as u64;
    html.chunks(raw)
        .scan(0u64, |offset, part| {
            let chunk = McpResource {
                digest,
                size,
                offset: *offset,
                data: base64::engine::general_purpose::STANDARD.encode(part),
            };
            *offset += part.len() as u64;
            Some(chunk)
        })
        .map(|chunk| outbox.envelope("lineup.v1.mcp.resource", chunk))
        .collect()
}
