//! The `lineup.v1` envelopes of MCP Apps views (`../shared/spec/mcp-apps.md`) from the agent:
//! the `mcp_app` form of `ui.open` (R-MCP-3), a view's HTML in chunks by digest
//! (`mcp.resource`, R-MCP-4) and the tool call's news (`mcp.tool`, R-MCP-5). The view's traffic
//! with the agent is in `mcp_upstream.rs`.

use std::fmt;

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::ids::{InstanceId, McpServerId, McpToolName};
use crate::json::JsonObject;
use crate::mcp::{ResourceDigest, RpcId, ToolNews};
use crate::redact::Fingerprint;

/// The one MIME type of a view the host shows (R-MCP-3).
pub const MCP_APP_MIME: &str = "text/html;profile=mcp-app";

/// The longest resource `uri`, in bytes.
pub const MAX_MCP_URI_BYTES: usize = 2048;

/// The `payload` of a `lineup.v1.ui.open` carrying `mcp_app` instead of `app` or
/// `component` (exactly one of the three, R-MCP-3): show an MCP App view as instance
/// `instance_id`, replacing whatever holds that id (R-UI-1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpAppOpen {
    /// The instance to create or replace.
    pub instance_id: InstanceId,
    /// The view: its server, its resource and the tool whose result it shows (boxed: a
    /// [`Message`](crate::Message) stays small).
    pub mcp_app: Box<McpApp>,
}

/// An MCP App view as the agent names it (R-MCP-3).
///
/// Invariant: the tool's `_meta` names the resource (`ui.resourceUri`, or the deprecated
/// `ui/resourceUri`), so the view shows the tool it was declared for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawMcpApp", into = "RawMcpApp")]
pub struct McpApp {
    server: McpServerId,
    resource: McpAppResource,
    tool: McpAppTool,
}

#[derive(Serialize, Deserialize)]
struct RawMcpApp {
    server: McpServerId,
    resource: McpAppResource,
    tool: McpAppTool,
}

impl TryFrom<RawMcpApp> for McpApp {
    type Error = String;
    fn try_from(raw: RawMcpApp) -> Result<Self, String> {
        McpApp::new(raw.server, raw.resource, raw.tool)
    }
}

impl From<McpApp> for RawMcpApp {
    fn from(app: McpApp) -> Self {
        RawMcpApp {
            server: app.server,
            resource: app.resource,
            tool: app.tool,
        }
    }
}

impl McpApp {
    /// The view of `resource` from `server`, showing `tool`'s result; refused when the tool's
    /// `_meta` does not name the resource's `uri` (the error names the member, R-MCP-3).
    pub fn new(
        server: McpServerId,
        resource: McpAppResource,
        tool: McpAppTool,
    ) -> Result<Self, String> {
        let meta = tool.meta.as_map();
        let named = meta
            .get("ui")
            .and_then(|ui| ui.get("resourceUri"))
            .or_else(|| meta.get("ui/resourceUri"))
            .and_then(Value::as_str);
        if named != Some(resource.uri()) {
            return Err(format!(
                "mcp_app.tool.meta names {} as its view, not resource.uri {:?}: send the tool's own _meta \
                 (ui.resourceUri or the deprecated ui/resourceUri)",
                named.map_or_else(|| "no resource".to_owned(), |n| format!("{:?}", crate::ids::shorten(n, 80))),
                crate::ids::shorten(resource.uri(), 80)
            ));
        }
        Ok(Self {
            server,
            resource,
            tool,
        })
    }

    /// The opaque id of the server it came from.
    pub fn server(&self) -> &McpServerId {
        &self.server
    }

    /// Its resource.
    pub fn resource(&self) -> &McpAppResource {
        &self.resource
    }

    /// The tool whose result it shows.
    pub fn tool(&self) -> &McpAppTool {
        &self.tool
    }

    /// Its parts, taken apart.
    pub fn into_parts(self) -> (McpServerId, McpAppResource, McpAppTool) {
        (self.server, self.resource, self.tool)
    }
}

/// Where a view's HTML comes from (R-MCP-3, R-MCP-4): exactly one of `text`, `blob` (base64)
/// and `digest` on the wire. `Debug` prints [`Fingerprint`]s.
#[derive(Clone, PartialEq, Eq)]
pub enum McpHtml {
    /// The HTML as text (a `resources/read` content item's `text`).
    Text(String),
    /// The HTML's bytes, decoded from a content item's base64 `blob`.
    Blob(Vec<u8>),
    /// The digest of a resource sent before in `mcp.resource` chunks (R-MCP-4).
    Digest(ResourceDigest),
}

impl fmt::Debug for McpHtml {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            McpHtml::Text(text) => f.debug_tuple("Text").field(&Fingerprint::of(text)).finish(),
            McpHtml::Blob(bytes) => f
                .debug_tuple("Blob")
                .field(&Fingerprint::of(bytes))
                .finish(),
            McpHtml::Digest(digest) => f.debug_tuple("Digest").field(digest).finish(),
        }
    }
}

/// The `_meta.ui` of a view's resource (R-MCP-3), as MCP spells it: recorded and passed to the
/// embedder, never a loosening by itself (R-MCP-10). Members this host does not know are
/// dropped.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct McpUiMeta {
    /// The domains the view declares it loads from (R-MCP-10: allowed only by an operator
    /// policy).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub csp: Option<McpCsp>,
    /// The permissions it declares (`camera`, `microphone`, `geolocation`,
    /// `clipboardWrite`), each an object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permissions: Option<JsonObject>,
    /// The origin it asks for: recorded, not honoured (its origin is always opaque, R-MCP-3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// Whether it prefers a border: a hint for the embedder.
    #[serde(
        default,
        rename = "prefersBorder",
        skip_serializing_if = "Option::is_none"
    )]
    pub prefers_border: Option<bool>,
}

/// The `_meta.ui.csp` of a view's resource: the domains it declares, by directive.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct McpCsp {
    /// `connect-src` origins.
    #[serde(
        default,
        rename = "connectDomains",
        skip_serializing_if = "Option::is_none"
    )]
    pub connect_domains: Option<Vec<String>>,
    /// Origins of images, scripts, styles and fonts.
    #[serde(
        default,
        rename = "resourceDomains",
        skip_serializing_if = "Option::is_none"
    )]
    pub resource_domains: Option<Vec<String>>,
    /// `frame-src` origins.
    #[serde(
        default,
        rename = "frameDomains",
        skip_serializing_if = "Option::is_none"
    )]
    pub frame_domains: Option<Vec<String>>,
    /// `base-uri` origins.
    #[serde(
        default,
        rename = "baseUriDomains",
        skip_serializing_if = "Option::is_none"
    )]
    pub base_uri_domains: Option<Vec<String>>,
}

/// A view's resource (R-MCP-3): its `ui://` uri, its `_meta.ui`, and its HTML. Its MIME type
/// is `text/html;profile=mcp-app` on the wire, always: any other is refused.
///
/// Invariant: `uri` starts with `ui://` and is at most [`MAX_MCP_URI_BYTES`] long.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawResource", into = "RawResource")]
pub struct McpAppResource {
    uri: String,
    ui: McpUiMeta,
    html: McpHtml,
}

#[derive(Serialize, Deserialize)]
struct RawResource {
    uri: String,
    mime_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ui: Option<McpUiMeta>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    blob: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    digest: Option<ResourceDigest>,
}

impl TryFrom<RawResource> for McpAppResource {
    type Error = String;
    fn try_from(raw: RawResource) -> Result<Self, String> {
        if raw.mime_type != MCP_APP_MIME {
            return Err(format!(
                "resource.mime_type {:?} is not {MCP_APP_MIME}: only MCP App views are shown",
                crate::ids::shorten(&raw.mime_type, 64)
            ));
        }
        let html = match (raw.text, raw.blob, raw.digest) {
            (Some(text), None, None) => McpHtml::Text(text),
            (None, Some(blob), None) => McpHtml::Blob(
                base64::engine::general_purpose::STANDARD
                    .decode(&blob)
                    .map_err(|e| format!("resource.blob is not base64 ({e})"))?,
            ),
            (None, None, Some(digest)) => McpHtml::Digest(digest),
            (None, None, None) => {
                return Err(
                    "resource has none of text, blob and digest: send the view's HTML in \
                     exactly one of them"
                        .to_owned(),
                )
            }
            (_, blob, _) => {
                let second = if blob.is_some() { "blob" } else { "digest" };
                return Err(format!(
                    "resource.{second} comes with another form of the HTML: send exactly one of \
                     text, blob and digest"
                ));
            }
        };
        let ui = raw.ui.unwrap_or_default();
        McpAppResource::new(raw.uri, html).map(|r| r.with_ui(ui))
    }
}

impl From<McpAppResource> for RawResource {
    fn from(resource: McpAppResource) -> Self {
        let (mut text, mut blob, mut digest) = (None, None, None);
        match resource.html {
            McpHtml::Text(t) => text = Some(t),
            McpHtml::Blob(b) => blob = Some(base64::engine::general_purpose::STANDARD.encode(b)),
            McpHtml::Digest(d) => digest = Some(d),
        }
        let ui = (resource.ui != McpUiMeta::default()).then_some(resource.ui);
        RawResource {
            uri: resource.uri,
            mime_type: MCP_APP_MIME.to_owned(),
            ui,
            text,
            blob,
            digest,
        }
    }
}

impl McpAppResource {
    /// The resource `uri` (`ui://…`) whose HTML is `html`, with no `_meta.ui`; refused when the
    /// uri is not `ui://` or longer than [`MAX_MCP_URI_BYTES`] (the error names the member).
    pub fn new(uri: impl Into<String>, html: McpHtml) -> Result<Self, String> {
        let uri = uri.into();
        if !uri.starts_with("ui://") || uri.len() > MAX_MCP_URI_BYTES {
            return Err(format!(
                "resource.uri {:?} ({} bytes) is not a ui:// uri of at most {MAX_MCP_URI_BYTES} bytes",
                crate::ids::shorten(&uri, 80),
                uri.len()
            ));
        }
        Ok(Self {
            uri,
            ui: McpUiMeta::default(),
            html,
        })
    }

    /// This resource with `ui` as its `_meta.ui`.
    pub fn with_ui(mut self, ui: McpUiMeta) -> Self {
        self.ui = ui;
        self
    }

    /// Its `ui://` uri.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// Its `_meta.ui` (empty when the agent sent none).
    pub fn ui(&self) -> &McpUiMeta {
        &self.ui
    }

    /// Where its HTML comes from.
    pub fn html(&self) -> &McpHtml {
        &self.html
    }

    /// Its parts: the uri, the `_meta.ui` and the HTML.
    pub fn into_parts(self) -> (String, McpUiMeta, McpHtml) {
        (self.uri, self.ui, self.html)
    }
}

/// The tool whose result a view shows (R-MCP-3), as the server lists it, and the agent's
/// `tools/call` id for the call the view shows (for `hostContext.toolInfo`, R-MCP-8).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpAppTool {
    /// The tool's name.
    pub name: McpToolName,
    /// The tool's `_meta` as listed: it names the view (`ui.resourceUri`) and who may call the
    /// tool (`ui.visibility`, R-MCP-6).
    pub meta: JsonObject,
    /// The tool's input schema, when the agent sends it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_schema: Option<JsonObject>,
    /// The agent's JSON-RPC id of the `tools/call` whose result the view shows.
    pub call_id: RpcId,
}

/// `lineup.v1.mcp.resource` (agent → client): one chunk of a view's HTML, addressed by its
/// SHA-256 digest (R-MCP-4). Chunks come in order; the last one's bytes are checked against
/// the digest, and the resource then opens any number of times by it in this session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpResource {
    /// The digest of the whole resource.
    pub digest: ResourceDigest,
    /// The whole resource's size in bytes, after decoding.
    pub size: u64,
    /// Where this chunk's bytes start.
    pub offset: u64,
    /// This chunk's bytes, in base64.
    pub data: String,
}

/// `lineup.v1.mcp.tool` (agent → client): news of the tool call an MCP App view shows
/// (R-MCP-5), for the view of `instance_id`. On the wire `news` names the kind
/// (`tool-input-partial`, `tool-input`, `tool-result`, `tool-cancelled`) and `arguments`,
/// `result` or `reason` carries it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawMcpTool", into = "RawMcpTool")]
pub struct McpTool {
    /// The view.
    pub instance_id: InstanceId,
    /// The news.
    pub news: ToolNews,
}

#[derive(Serialize, Deserialize)]
struct RawMcpTool {
    instance_id: InstanceId,
    news: NewsKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    arguments: Option<Map<String, Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    result: Option<Map<String, Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
enum NewsKind {
    #[serde(rename = "tool-input-partial")]
    InputPartial,
    #[serde(rename = "tool-input")]
    Input,
    #[serde(rename = "tool-result")]
    Result,
    #[serde(rename = "tool-cancelled")]
    Cancelled,
}

impl NewsKind {
    fn name(self) -> &'static str {
        match self {
            NewsKind::InputPartial => "tool-input-partial",
            NewsKind::Input => "tool-input",
            NewsKind::Result => "tool-result",
            NewsKind::Cancelled => "tool-cancelled",
        }
    }
}

impl TryFrom<RawMcpTool> for McpTool {
    type Error = String;
    fn try_from(raw: RawMcpTool) -> Result<Self, String> {
        let (wanted, carried) = match raw.news {
            NewsKind::InputPartial | NewsKind::Input => ("arguments", raw.arguments.is_some()),
            NewsKind::Result => ("result", raw.result.is_some()),
            NewsKind::Cancelled => ("reason", true),
        };
        if !carried {
            return Err(format!("missing field `{wanted}`"));
        }
        let present = [
            ("arguments", raw.arguments.is_some()),
            ("result", raw.result.is_some()),
            ("reason", raw.reason.is_some()),
        ];
        if let Some((other, _)) = present.iter().find(|(m, p)| *p && *m != wanted) {
            return Err(format!(
                "payload.{other} does not go with news {:?}, which carries {wanted}",
                raw.news.name()
            ));
        }
        let news = match raw.news {
            NewsKind::InputPartial => ToolNews::InputPartial(raw.arguments.unwrap_or_default()),
            NewsKind::Input => ToolNews::Input(raw.arguments.unwrap_or_default()),
            NewsKind::Result => ToolNews::Result(raw.result.unwrap_or_default()),
            NewsKind::Cancelled => ToolNews::Cancelled(raw.reason.unwrap_or_default()),
        };
        Ok(Self {
            instance_id: raw.instance_id,
            news,
        })
    }
}

impl From<McpTool> for RawMcpTool {
    fn from(tool: McpTool) -> Self {
        let (mut arguments, mut result, mut reason) = (None, None, None);
        let news = match tool.news {
            ToolNews::InputPartial(a) => {
                arguments = Some(a);
                NewsKind::InputPartial
            }
            ToolNews::Input(a) => {
                arguments = Some(a);
                NewsKind::Input
            }
            ToolNews::Result(r) => {
                result = Some(r);
                NewsKind::Result
            }
            ToolNews::Cancelled(r) => {
                // No reason and an empty one are the same news.
                reason = Some(r).filter(|r| !r.is_empty());
                NewsKind::Cancelled
            }
        };
        RawMcpTool {
            instance_id: tool.instance_id,
            news,
            arguments,
            result,
            reason,
        }
    }
}
