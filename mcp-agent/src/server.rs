//! The MCP connection: a server started as a child process and spoken to over its stdio with
//! the official Rust SDK (`rmcp`). This is the agent's client, for `lineup mcp` and the
//! examples (R-MCP-2); the library crates hold none (R-MCP-1). Every request waits at most the
//! timeout, and a listing at most [`MAX_PAGES`] pages.

use std::ffi::OsString;
use std::future::Future;
use std::process::Stdio;
use std::time::Duration;

use lineup_host_core::mcp::RpcId;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig,
    ClientRequest, Implementation, JsonObject, NumberOrString, PaginatedRequestParams,
    ProtocolVersion, ReadResourceRequestParams, ServerResult,
};
use rmcp::service::{PeerRequestOptions, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{Peer, RoleClient, ServiceError};
use serde_json::Value;

use crate::error::McpError;
use crate::tool::UiTool;
use crate::view::{ViewResource, MCP_APP_MIME_TYPE};

/// The MCP Apps extension's id in `capabilities.extensions`.
const UI_EXTENSION: &str = "io.modelcontextprotocol/ui";

/// The most pages a listing (`tools/list`, `resources/list`) may take.
pub const MAX_PAGES: usize = 64;

/// What `initialize` says of this client: its name and version, the newest protocol version
/// that has the `initialize` handshake, and `capabilities.extensions["io.modelcontextprotocol/ui"]
/// = {"mimeTypes": ["text/html;profile=mcp-app"]}` (R-MCP-2), carried in rmcp's own
/// `ClientCapabilities::extensions` map.
pub fn client_config() -> ClientConfig {
    let mut ui = JsonObject::new();
    ui.insert("mimeTypes".to_owned(), Value::from(vec![MCP_APP_MIME_TYPE]));
    let mut capabilities = ClientCapabilities::default();
    capabilities.extensions = Some([(UI_EXTENSION.to_owned(), ui)].into_iter().collect());
    ClientConfig::new(
        capabilities,
        Implementation::new("lineup", env!("CARGO_PKG_VERSION")),
    )
    .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
}

/// A running server and the client's session with it. Close it with [`McpServer::close`]
/// (dropping it also ends the child, from a task of the runtime it was started on).
pub struct McpServer {
    service: RunningService<RoleClient, ClientConfig>,
    timeout: Duration,
}

impl McpServer {
    /// Starts `command` (program and arguments) with its stdin and stdout as the MCP channel and
    /// its stderr shown only when `verbose`, and completes `initialize` within `timeout`.
    pub async fn connect(
        command: &[OsString],
        timeout: Duration,
        verbose: bool,
    ) -> Result<Self, McpError> {
        let Some((program, arguments)) = command.split_first() else {
            return Err(McpError::Spawn {
                command: String::new(),
                source: std::io::Error::other("no server command after --"),
            });
        };
        let mut child = tokio::process::Command::new(program);
        // Killed when dropped: a server that ignores the end of its stdin outlives no refusal.
        child.args(arguments).kill_on_drop(true);
        let stderr = if verbose {
            Stdio::inherit()
        } else {
            Stdio::null()
        };
        let (transport, _) = TokioChildProcess::builder(child)
            .stderr(stderr)
            .spawn()
            .map_err(|source| McpError::Spawn {
                command: program.to_string_lossy().into_owned(),
                source,
            })?;
        let service = tokio::time::timeout(timeout, rmcp::serve_client(client_config(), transport))
            .await
            .map_err(|_| McpError::TimedOut {
                method: "initialize",
                limit: timeout,
            })?
            .map_err(|e| McpError::Initialize(e.to_string()))?;
        Ok(Self { service, timeout })
    }

    /// The server's name, version and the protocol version agreed, for `--verbose`.
    pub fn describe(&self) -> String {
        match self.service.peer_info() {
            Some(info) => {
                let (name, version) = info
                    .server_info
                    .as_ref()
                    .map_or(("?", "?"), |s| (s.name.as_str(), s.version.as_str()));
                format!("{name:?} {version:?}, protocol {}", info.protocol_version)
            }
            None => "a server that did not describe itself".to_owned(),
        }
    }

    /// The name the server gave in `initialize` (`serverInfo.name`), when it gave one.
    pub fn name(&self) -> Option<String> {
        let info = self.service.peer_info()?;
        info.server_info.as_ref().map(|s| s.name.clone())
    }

    /// Every tool of the server (`tools/list`, all pages).
    pub async fn tools(&self) -> Result<Vec<UiTool>, McpError> {
        let tools = self
            .all_pages("tools/list", |params| async {
                let page = self.service.list_tools(params).await?;
                Ok((page.tools, page.next_cursor))
            })
            .await?;
        Ok(tools.iter().map(UiTool::read).collect())
    }

    /// Calls `name` with `arguments` (`tools/call`): its JSON-RPC id (the view's
    /// `hostContext.toolInfo.id`, R-MCP-8) and its result.
    pub async fn call(&self, name: &str, arguments: JsonObject) -> Result<ToolCall, McpError> {
        let params = CallToolRequestParams::new(name.to_owned()).with_arguments(arguments);
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let answer = async {
            let handle = self
                .service
                .send_cancellable_request(request, PeerRequestOptions::no_options())
                .await?;
            let id = match &handle.id {
                NumberOrString::Number(n) => RpcId::Number(*n),
                NumberOrString::String(s) => RpcId::Text(s.to_string()),
            };
            match handle.await_response().await? {
                ServerResult::CallToolResult(result) => Ok(ToolCall { id, result }),
                _ => Err(ServiceError::UnexpectedResponse),
            }
        };
        self.within("tools/call", answer).await
    }

    /// The session, for the relay's forwarded requests: a handle that outlives no
    /// [`McpServer::close`].
    pub(crate) fn peer(&self) -> Peer<RoleClient> {
        self.service.peer().clone()
    }

    /// How long each request waits for its answer.
    pub(crate) fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Reads the view at `uri` (`resources/read`) and checks it ([`ViewResource::read`]); its
    /// `_meta.ui` is the content item's, else the listing's (`resources/list`, R-MCP-3).
    pub async fn read_view(&self, uri: &str) -> Result<ViewResource, McpError> {
        let params = ReadResourceRequestParams::new(uri.to_owned());
        let read = self
            .within("resources/read", self.service.read_resource(params))
            .await?;
        let view = ViewResource::read(uri, read.contents)?;
        if !view.lacks_ui_meta() {
            return Ok(view);
        }
        let listed = self
            .all_pages("resources/list", |params| async {
                let page = self.service.list_resources(params).await?;
                Ok((page.resources, page.next_cursor))
            })
            .await?;
        let ui = listed
            .into_iter()
            .find(|resource| resource.uri == uri)
            .and_then(|resource| resource.meta)
            .and_then(|meta| meta.0.get("ui").cloned());
        Ok(view.with_listing_ui_meta(ui))
    }

    /// Ends the session: closes the server's stdin and waits for it to exit (the SDK sends
    /// `SIGTERM`, then kills it, when it does not within seconds).
    pub async fn close(self) {
        if let Err(e) = self.service.cancel().await {
            tracing::debug!("the MCP session's task ended badly: {e}");
        }
    }

    /// `request` within the timeout, its error named after `method`.
    async fn within<T>(
        &self,
        method: &'static str,
        request: impl Future<Output = Result<T, ServiceError>>,
    ) -> Result<T, McpError> {
        tokio::time::timeout(self.timeout, request)
            .await
            .map_err(|_| McpError::TimedOut {
                method,
                limit: self.timeout,
            })?
            .map_err(|e| McpError::Request {
                method,
                reason: e.to_string(),
            })
    }

    /// Every item of a paginated listing, at most [`MAX_PAGES`] pages, each within the timeout.
    async fn all_pages<T, F, P>(
        &self,
        method: &'static str,
        mut page: F,
    ) -> Result<Vec<T>, McpError>
    where
        F: FnMut(Option<PaginatedRequestParams>) -> P,
        P: Future<Output = Result<(Vec<T>, Option<String>), ServiceError>>,
    {
        let mut items = Vec::new();
        let mut cursor = None;
        for _ in 0..MAX_PAGES {
            let params = cursor.map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
            let (more, next) = self.within(method, page(params)).await?;
            items.extend(more);
            match next {
                Some(next) => cursor = Some(next),
                None => return Ok(items),
            }
        }
        Err(McpError::TooManyPages {
            method,
            limit: MAX_PAGES,
        })
    }
}

/// A `tools/call` the agent made: its JSON-RPC id and the server's result.
#[derive(Debug, Clone)]
pub struct ToolCall {
    /// The request's id, as the client sent it.
    pub id: RpcId,
    /// The server's answer.
    pub result: CallToolResult,
}

#[cfg(test)]
mod tests {
    use super::client_config;

    #[test]
    fn r_mcp_2_initialize_declares_the_ui_extension_with_the_mcp_app_mime_type() {
        let config = serde_json::to_value(client_config()).unwrap_or_default();
        assert_eq!(
            config["capabilities"]["extensions"]["io.modelcontextprotocol/ui"],
            serde_json::json!({"mimeTypes": ["text/html;profile=mcp-app"]})
        );
        assert_eq!(config["protocolVersion"], "2025-11-25");
        assert_eq!(config["clientInfo"]["name"], "lineup");
    }
}
