//! Trusted host documents: pages the host writes itself (the consent prompt now, the standard
//! components later), with the agent's strings carried as inert JSON data that the host's own
//! script puts into the page as text (R-SEC-6). Bytes and headers only; the view that shows them
//! is in `platform/`.

use serde_json::Value;

use crate::error::ShellError;

/// The scheme of trusted host documents, registered on the trusted view's own context only.
pub(crate) const TRUSTED_SCHEME: &str = "lineup-host";
/// The one URL a trusted view loads; every other request is refused.
pub(crate) const TRUSTED_URL: &str = "lineup-host://view/";

/// A host-written document: markup, style and script from the host, data from anywhere.
///
/// The data goes into `<script type="application/json" id="data">` with `<`, `>`, `&`, U+2028
/// and U+2029 written as `\uXXXX` escapes, so no string in it can end that element or start
/// markup; the host's script reads it with `JSON.parse` and sets `textContent` only. The CSP
/// allows exactly the host's one style element and one script element (a fresh nonce each
/// document), no network, no frames, no forms, and sandboxes the page to an opaque origin.
pub(crate) struct TrustedDocument {
    html: String,
    csp: String,
}

impl TrustedDocument {
    /// `body` (markup), `css` and `js` are the host's own, never agent text; `data` is what
    /// the script renders.
    pub(crate) fn new(body: &str, css: &str, js: &str, data: &Value) -> Result<Self, ShellError> {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes)
            .map_err(|e| ShellError::Platform(format!("no random source: {e}")))?;
        let nonce: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let html = format!(
            "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\
             <style nonce=\"{nonce}\">{css}</style></head>\n<body>{body}\n\
             <script type=\"application/json\" id=\"data\">{data}</script>\n\
             <script nonce=\"{nonce}\">{js}</script>\n</body></html>\n",
            data = inert_json(data),
        );
        let csp = format!(
            "default-src 'none'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; \
             img-src 'none'; font-src 'none'; media-src 'none'; connect-src 'none'; \
             object-src 'none'; frame-src 'none'; child-src 'none'; worker-src 'none'; \
             manifest-src 'none'; base-uri 'none'; form-action 'none'; sandbox allow-scripts"
        );
        Ok(Self { html, csp })
    }

    /// The document's bytes.
    pub(crate) fn html(&self) -> &str {
        &self.html
    }

    /// The response headers, in a fixed order.
    pub(crate) fn headers(&self) -> Vec<(&'static str, String)> {
        vec![
            ("Content-Type", "text/html; charset=utf-8".to_owned()),
            ("Content-Security-Policy", self.csp.clone()),
            ("X-Content-Type-Options", "nosniff".to_owned()),
            ("Referrer-Policy", "no-referrer".to_owned()),
            ("Cache-Control", "no-store".to_owned()),
        ]
    }
}

/// `value` as JSON text that is inert inside an HTML element: the characters that could end the
/// element or start markup (`<`, `>`, `&`) and the JavaScript line terminators (U+2028, U+2029)
/// are `\uXXXX` escapes, which only occur inside JSON strings, so the text parses to `value`.
pub(crate) fn inert_json(value: &Value) -> String {
    let text = value.to_string();
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", u32::from(c)));
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn r_sec_6_agent_strings_cannot_leave_the_data_element() {
        let hostile = json!({
            "reason": "</script><script>alert(1)</script><!-- <b>x</b><img src=x onerror=alert(1)>",
            "amp": "&lt; & \u{2028}\u{2029}",
        });
        let text = inert_json(&hostile);
        for forbidden in ['<', '>', '&', '\u{2028}', '\u{2029}'] {
            assert!(!text.contains(forbidden), "{forbidden:?} in {text}");
        }
        assert_eq!(
            serde_json::from_str::<Value>(&text).ok(),
            Some(hostile.clone()),
            "the escapes decode to the same value"
        );
        let doc = TrustedDocument::new("<main></main>", "main{}", "void 0;", &hostile)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            doc.html().matches("</script>").count(),
            2,
            "only the host's two"
        );
        assert!(!doc.html().contains("<img"));
    }

    #[test]
    fn trusted_document_csp_allows_only_its_own_nonced_elements() {
        let a = TrustedDocument::new("", "", "", &json!({})).unwrap_or_else(|e| panic!("{e}"));
        let b = TrustedDocument::new("", "", "", &json!({})).unwrap_or_else(|e| panic!("{e}"));
        assert_ne!(a.csp, b.csp, "a fresh nonce per document");
        let nonce = a
            .csp
            .split("'nonce-")
            .nth(1)
            .and_then(|rest| rest.split('\'').next())
            .unwrap_or_default();
        assert_eq!(nonce.len(), 32);
        assert_eq!(a.html().matches(&format!("nonce=\"{nonce}\"")).count(), 2);
        for directive in [
            "default-src 'none'",
            "img-src 'none'",
            "connect-src 'none'",
            "base-uri 'none'",
            "form-action 'none'",
            "sandbox allow-scripts",
        ] {
            assert!(a.csp.contains(directive), "{directive}");
        }
        assert!(!a.csp.contains("unsafe"));
        let headers = a.headers();
        assert_eq!(headers[1], ("Content-Security-Policy", a.csp.clone()));
    }
}
