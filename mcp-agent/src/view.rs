//! A tool's view as `resources/read` returns it, checked as the host will check it: the MIME
//! type of an MCP App (R-MCP-3), the HTML decoded from `text` or base64 `blob`, within the size a
//! host opens (R-MCP-4), and the `_meta.ui` it declares.

use base64::Engine as _;
use lineup_host_core::mcp::{ResourceDigest, ResourceLimits};
use rmcp::model::ResourceContents;
use serde_json::{json, Value};

use crate::error::McpError;

/// The only MIME type an MCP App view has (R-MCP-3): the host's own constant.
pub const MCP_APP_MIME_TYPE: &str = lineup_host_core::MCP_APP_MIME;

/// A view's document, read and checked.
#[derive(Debug, Clone)]
pub struct ViewResource {
    uri: String,
    html: Vec<u8>,
    /// The content item's `_meta.ui`, else the listing's (R-MCP-3); `None` when neither has one.
    ui: Option<Value>,
}

impl ViewResource {
    /// Takes the content item of `uri` from a `resources/read` answer: refused when there is
    /// none, when its MIME type is not [`MCP_APP_MIME_TYPE`], when its blob is not base64, or
    /// when it decodes to more than [`ResourceLimits::max_resource_bytes`].
    pub fn read(uri: &str, contents: Vec<ResourceContents>) -> Result<Self, McpError> {
        let limit = ResourceLimits::default().max_resource_bytes;
        let Item {
            mime_type,
            meta,
            body,
            ..
        } = contents
            .into_iter()
            .filter_map(Item::split)
            .find(|item| item.uri == uri)
            .ok_or_else(|| McpError::ResourceMissing {
                uri: uri.to_owned(),
            })?;
        let html = match body {
            Body::Text(text) => Ok(text.into_bytes()),
            Body::Blob(blob) => base64::engine::general_purpose::STANDARD.decode(blob),
        };
        if mime_type.as_deref() != Some(MCP_APP_MIME_TYPE) {
            return Err(McpError::WrongMimeType {
                uri: uri.to_owned(),
                mime_type,
                expected: MCP_APP_MIME_TYPE,
            });
        }
        let html = html.map_err(|e| McpError::NotBase64 {
            uri: uri.to_owned(),
            reason: e.to_string(),
        })?;
        let size = u64::try_from(html.len()).unwrap_or(u64::MAX);
        if size > limit {
            return Err(McpError::ResourceTooLarge {
                uri: uri.to_owned(),
                size,
                limit,
            });
        }
        Ok(Self {
            uri: uri.to_owned(),
            html,
            ui: meta.and_then(|meta| meta.0.get("ui").cloned()),
        })
    }

    /// Whether the content item declared no `_meta.ui`, so the listing's applies (R-MCP-3).
    pub(crate) fn lacks_ui_meta(&self) -> bool {
        self.ui.is_none()
    }

    /// Takes the listing's `_meta.ui` where the content item had none.
    pub(crate) fn with_listing_ui_meta(mut self, ui: Option<Value>) -> Self {
        if self.ui.is_none() {
            self.ui = ui;
        }
        self
    }

    /// The view's URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// The view's HTML, decoded.
    pub fn html(&self) -> &[u8] {
        &self.html
    }

    /// Its `_meta.ui` (the content item's, else the listing's), as the server wrote it.
    pub fn ui(&self) -> Option<&Value> {
        self.ui.as_ref()
    }

    /// The `--resource` line: `uri`, `mimeType`, `bytes` (after decoding), `sha256` (as the
    /// host's digests are written) and `ui` (the `_meta.ui`, `null` when none).
    pub fn to_json(&self) -> Value {
        json!({
            "uri": self.uri,
            "mimeType": MCP_APP_MIME_TYPE,
            "bytes": self.html.len(),
            "sha256": ResourceDigest::of(&self.html).to_string(),
            "ui": self.ui,
        })
    }
}

/// One content item of a `resources/read` answer, taken apart.
struct Item {
    uri: String,
    mime_type: Option<String>,
    meta: Option<rmcp::model::MetaObject>,
    body: Body,
}

/// A content item's document, as the server sent it.
enum Body {
    /// `text`.
    Text(String),
    /// `blob`, base64.
    Blob(String),
}

impl Item {
    /// The item's parts; `None` for a kind of content this SDK release may add later.
    fn split(item: ResourceContents) -> Option<Self> {
        let (uri, mime_type, meta, body) = match item {
            ResourceContents::TextResourceContents {
                uri,
                mime_type,
                text,
                meta,
            } => (uri, mime_type, meta, Body::Text(text)),
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                meta,
            } => (uri, mime_type, meta, Body::Blob(blob)),
            _ => return None,
        };
        Some(Self {
            uri,
            mime_type,
            meta,
            body,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{ViewResource, MCP_APP_MIME_TYPE};
    use base64::Engine as _;
    use serde_json::json;

    fn contents(items: serde_json::Value) -> Vec<rmcp::model::ResourceContents> {
        serde_json::from_value(items).unwrap_or_else(|e| panic!("{e}"))
    }

    fn refusal(uri: &str, items: serde_json::Value) -> String {
        match ViewResource::read(uri, contents(items)) {
            Ok(_) => panic!("{uri} was taken"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn r_mcp_3_a_view_is_decoded_from_text_or_blob_with_its_ui_meta() {
        let text = ViewResource::read(
            "ui://a",
            contents(json!([
                {"uri": "ui://other", "mimeType": MCP_APP_MIME_TYPE, "text": "no"},
                {"uri": "ui://a", "mimeType": MCP_APP_MIME_TYPE, "text": "<p>é</p>",
                 "_meta": {"ui": {"prefersBorder": true}}},
            ])),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(text.html(), "<p>é</p>".as_bytes());
        assert_eq!(text.to_json()["ui"], json!({"prefersBorder": true}));
        assert_eq!(text.to_json()["bytes"], "<p>é</p>".len());
        let blob = base64::engine::general_purpose::STANDARD.encode(b"<p>b</p>");
        let blob = ViewResource::read(
            "ui://b",
            contents(json!([{"uri": "ui://b", "mimeType": MCP_APP_MIME_TYPE, "blob": blob}])),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(blob.html(), b"<p>b</p>");
        assert!(blob.lacks_ui_meta());
        let blob = blob.with_listing_ui_meta(Some(json!({"csp": {}})));
        assert_eq!(blob.to_json()["ui"], json!({"csp": {}}));
        // `printf '<p>b</p>' | sha256sum`
        assert_eq!(
            blob.to_json()["sha256"],
            "sha256:b8fa62ed9cd18a7750d99bdde44597f4579cb8c049fa244291ab2686d6c72c6e"
        );
    }

    #[test]
    fn r_mcp_3_a_view_of_another_mime_type_or_missing_is_refused() {
        let plain = refusal(
            "ui://a",
            json!([{"uri": "ui://a", "mimeType": "text/html", "text": "x"}]),
        );
        assert_eq!(
            plain,
            "\"ui://a\" has MIME type \"text/html\", not text/html;profile=mcp-app (R-MCP-3)"
        );
        let none = refusal("ui://a", json!([{"uri": "ui://a", "text": "x"}]));
        assert!(none.contains("MIME type none,"), "{none}");
        let elsewhere = refusal(
            "ui://a",
            json!([{"uri": "ui://b", "mimeType": MCP_APP_MIME_TYPE, "text": "x"}]),
        );
        assert!(elsewhere.contains("no content item"), "{elsewhere}");
        let bad = refusal(
            "ui://a",
            json!([{"uri": "ui://a", "mimeType": MCP_APP_MIME_TYPE, "blob": "*"}]),
        );
        assert!(bad.contains("not base64"), "{bad}");
    }

    #[test]
    fn r_mcp_4_a_view_one_byte_over_the_limit_is_refused_with_it() {
        let at = "x".repeat(8 * 1024 * 1024);
        let fits = ViewResource::read(
            "ui://a",
            contents(json!([{"uri": "ui://a", "mimeType": MCP_APP_MIME_TYPE, "text": at}])),
        );
        assert!(fits.is_ok());
        let over = refusal(
            "ui://a",
            json!([{"uri": "ui://a", "mimeType": MCP_APP_MIME_TYPE, "text": at + "x"}]),
        );
        assert_eq!(
            over,
            "\"ui://a\" is 8388609 bytes after decoding, over the limit of 8388608 bytes (R-MCP-4)"
        );
    }
}
