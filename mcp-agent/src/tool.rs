//! A server's tool as MCP Apps reads it: its name, who may call it (`_meta.ui.visibility`) and
//! the view it names (`_meta.ui.resourceUri`, or the deprecated `_meta["ui/resourceUri"]`),
//! with its `_meta` and input schema as listed, for the `ui.open` that shows its view (R-MCP-3).

use serde_json::{json, Map, Value};

use crate::error::McpError;

/// Who may call a tool (`_meta.ui.visibility`): the model, the view (`app`), or both, which is
/// the default when the tool says nothing. A value that is not an array of strings is read as
/// neither: a model is offered no tool whose visibility it cannot read (R-MCP-2), and a view may
/// call none (R-MCP-6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Visibility {
    model: bool,
    app: bool,
}

impl Visibility {
    /// Reads `_meta.ui.visibility`; `None` when absent.
    fn read(value: Option<&Value>) -> Self {
        let Some(value) = value else {
            return Self {
                model: true,
                app: true,
            };
        };
        let names: Option<Vec<&str>> = value
            .as_array()
            .and_then(|items| items.iter().map(Value::as_str).collect());
        let names = names.unwrap_or_default();
        Self {
            model: names.contains(&"model"),
            app: names.contains(&"app"),
        }
    }

    /// Whether a model may be offered the tool (R-MCP-2).
    pub fn model(self) -> bool {
        self.model
    }

    /// Whether a view may call the tool (R-MCP-6).
    pub fn app(self) -> bool {
        self.app
    }

    /// The visibility as the spec writes it: `["model", "app"]`, `["app"]`, `["model"]`, `[]`.
    pub fn names(self) -> Vec<&'static str> {
        [(self.model, "model"), (self.app, "app")]
            .into_iter()
            .filter_map(|(on, name)| on.then_some(name))
            .collect()
    }
}

/// One tool of the server, as `tools/list` gives it, read for MCP Apps.
#[derive(Debug, Clone)]
pub struct UiTool {
    name: String,
    visibility: Visibility,
    resource_uri: Option<String>,
    meta: Map<String, Value>,
    input_schema: Map<String, Value>,
}

impl UiTool {
    /// Reads the parts MCP Apps gives meaning to from a `tools/list` entry.
    pub fn read(tool: &rmcp::model::Tool) -> Self {
        let meta = tool
            .meta
            .as_ref()
            .map(|meta| meta.0.clone())
            .unwrap_or_default();
        let ui = meta.get("ui");
        let resource_uri = ui
            .and_then(|ui| ui.get("resourceUri"))
            .or_else(|| meta.get("ui/resourceUri"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        Self {
            name: tool.name.to_string(),
            visibility: Visibility::read(ui.and_then(|ui| ui.get("visibility"))),
            resource_uri,
            input_schema: (*tool.input_schema).clone(),
            meta,
        }
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Who may call it.
    pub fn visibility(&self) -> Visibility {
        self.visibility
    }

    /// The `--list` line: `{"name", "visibility", "resourceUri"}` (`null` when it names none).
    pub fn to_json(&self) -> Value {
        json!({
            "name": self.name,
            "visibility": self.visibility.names(),
            "resourceUri": self.resource_uri,
        })
    }

    /// This tool and its view, when it names one.
    fn view_tool(&self) -> Option<ViewTool<'_>> {
        Some(ViewTool {
            tool: self,
            uri: self.resource_uri.as_deref()?,
        })
    }

    /// The tool whose view to show: the one named, which must name a view; else the first that
    /// names a view and that a model may be offered (R-MCP-2).
    pub fn pick<'a>(tools: &'a [UiTool], name: Option<&str>) -> Result<ViewTool<'a>, McpError> {
        let Some(name) = name else {
            return tools
                .iter()
                .filter(|tool| tool.visibility.model())
                .find_map(UiTool::view_tool)
                .ok_or(McpError::NoUiTool);
        };
        let tool =
            tools
                .iter()
                .find(|tool| tool.name == name)
                .ok_or_else(|| McpError::NoSuchTool {
                    name: name.to_owned(),
                })?;
        tool.view_tool().ok_or_else(|| McpError::NoUiResource {
            name: name.to_owned(),
        })
    }
}

/// A tool that names a view, as [`UiTool::pick`] picks it.
///
/// Invariant: `uri` is the tool's own `_meta.ui.resourceUri` (or the deprecated key's).
#[derive(Debug, Clone, Copy)]
pub struct ViewTool<'a> {
    tool: &'a UiTool,
    uri: &'a str,
}

impl<'a> ViewTool<'a> {
    /// The tool's name.
    pub fn name(&self) -> &'a str {
        &self.tool.name
    }

    /// Its view's URI.
    pub fn uri(&self) -> &'a str {
        self.uri
    }

    /// Its `_meta` as listed (it names the view, and who may call the tool).
    pub fn meta(&self) -> &'a Map<String, Value> {
        &self.tool.meta
    }

    /// Its input schema as listed.
    pub fn input_schema(&self) -> &'a Map<String, Value> {
        &self.tool.input_schema
    }
}

#[cfg(test)]
mod tests {
    use super::{UiTool, Visibility};
    use serde_json::json;

    fn tool(name: &str, meta: serde_json::Value) -> UiTool {
        let tool: rmcp::model::Tool = serde_json::from_value(json!({
            "name": name,
            "inputSchema": {"type": "object"},
            "_meta": meta,
        }))
        .unwrap_or_else(|e| panic!("{e}"));
        UiTool::read(&tool)
    }

    #[test]
    fn r_mcp_2_visibility_defaults_to_both_and_an_unreadable_one_to_neither() {
        let both = tool("a", json!({"ui": {"resourceUri": "ui://a"}}));
        assert_eq!(both.visibility.names(), ["model", "app"]);
        let app = tool("b", json!({"ui": {"visibility": ["app"]}}));
        assert!(!app.visibility.model && app.visibility.app);
        for odd in [json!("app"), json!([1]), json!({"app": true})] {
            let odd = tool("c", json!({"ui": {"visibility": odd}}));
            assert_eq!(
                odd.visibility,
                Visibility {
                    model: false,
                    app: false
                }
            );
        }
    }

    #[test]
    fn r_mcp_3_the_deprecated_resource_uri_key_is_read_when_ui_has_none() {
        let old = tool("a", json!({"ui/resourceUri": "ui://old"}));
        assert_eq!(old.resource_uri.as_deref(), Some("ui://old"));
        let both = tool(
            "b",
            json!({"ui": {"resourceUri": "ui://new"}, "ui/resourceUri": "ui://old"}),
        );
        assert_eq!(both.resource_uri.as_deref(), Some("ui://new"));
    }

    #[test]
    fn r_mcp_2_the_picked_view_is_never_an_app_only_tools() {
        let tools = [
            tool(
                "hidden",
                json!({"ui": {"resourceUri": "ui://h", "visibility": ["app"]}}),
            ),
            tool("plain", json!({})),
            tool("shown", json!({"ui": {"resourceUri": "ui://s"}})),
        ];
        let shown = UiTool::pick(&tools, None).ok();
        assert_eq!(
            shown.map(|t| (t.name(), t.uri())),
            Some(("shown", "ui://s"))
        );
        assert_eq!(
            shown.map(|t| t.meta()["ui"]["resourceUri"].clone()),
            Some(json!("ui://s"))
        );
        let hidden = UiTool::pick(&tools, Some("hidden")).ok();
        assert_eq!(hidden.map(|t| t.name()), Some("hidden"));
        let none = UiTool::pick(&tools, Some("plain"))
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            none.as_deref(),
            Some("tool \"plain\" names no UI resource (_meta.ui.resourceUri)")
        );
        let missing = UiTool::pick(&tools, Some("gone"))
            .err()
            .map(|e| e.to_string());
        assert!(missing.is_some_and(|e| e.contains("no tool \"gone\"")));
        assert!(UiTool::pick(&tools[..2], None).is_err());
    }
}
