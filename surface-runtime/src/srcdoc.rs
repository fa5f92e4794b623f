//! The fixed top document of an MCP App view (R-MCP-7): the host's own markup, whose only child
//! frame is an `about:srcdoc` iframe holding the view's HTML, escaped into its `srcdoc` attribute.
//!
//! The view is a single-file bundle of up to 8 MiB (R-MCP-4), so the document is written in one
//! pass into one allocation of its exact final length: no copy grows with the square of its size.

/// The `id` of the view's iframe in the top document: the one frame the webview layer's relay
/// forwards messages from, and posts the host's messages to (R-MCP-7).
pub const MCP_VIEW_FRAME_ID: &str = "lineup-mcp-view";

/// The head and the start of the body, after `<!DOCTYPE html><html…>`: the iframe fills the
/// viewport, with no border, margin or scroll bar of the host's own.
const HEAD: &str = "<head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
<style>html,body{margin:0;padding:0;width:100%;height:100%;overflow:hidden}\
iframe{display:block;border:0;width:100%;height:100%}</style></head><body>";

/// The iframe up to its `srcdoc` value. It carries `sandbox="allow-scripts"` of its own, so the
/// view's origin is opaque and apart from the top document's even if the document's policy were
/// missing; with the policy, it inherits that sandbox and the CSP as well (R-MCP-7).
const FRAME_OPEN: &str = "<iframe id=\"lineup-mcp-view\" sandbox=\"allow-scripts\" srcdoc=\"";

/// The end of the iframe and of the document.
const FRAME_CLOSE: &str = "\"></iframe></body></html>";

/// What a character of the view's HTML becomes in the double-quoted attribute value: `&` and `"`
/// are the only two the HTML tokenizer treats specially there (a character reference, the end
/// of the value); everything else, `<` and `>` included, is the value's own text.
fn escaped(byte: u8) -> Option<&'static str> {
    match byte {
        b'&' => Some("&amp;"),
        b'"' => Some("&quot;"),
        _ => None,
    }
}

/// The length of `text` escaped into an attribute value.
fn escaped_len(text: &str) -> usize {
    text.bytes()
        .map(|b| escaped(b).map_or(1, str::len))
        .sum::<usize>()
}

/// Appends `text` escaped into an attribute value: runs of plain text are copied as they are, so
/// the work is one pass over the bytes. `&` and `"` are ASCII, so every split is on a character
/// boundary.
fn push_escaped(out: &mut String, text: &str) {
    let mut plain_from = 0;
    for (at, byte) in text.bytes().enumerate() {
        if let Some(entity) = escaped(byte) {
            out.push_str(&text[plain_from..at]);
            out.push_str(entity);
            plain_from = at + 1;
        }
    }
    out.push_str(&text[plain_from..]);
}

/// The top document for `view_html`, its `<html>` element opening as `open` (`<html lang="…">`
/// or `<html>`), written into one allocation of exactly its length.
pub(crate) fn top_document(open: &str, view_html: &str) -> String {
    let parts = ["<!DOCTYPE html>", open, HEAD, FRAME_OPEN];
    let length =
        parts.iter().map(|p| p.len()).sum::<usize>() + escaped_len(view_html) + FRAME_CLOSE.len();
    let mut out = String::with_capacity(length);
    for part in parts {
        out.push_str(part);
    }
    push_escaped(&mut out, view_html);
    out.push_str(FRAME_CLOSE);
    debug_assert_eq!(out.len(), length);
    out
}

#[cfg(test)]
mod tests {
    use lineup_host_core::LanguageTag;

    use super::*;
    use crate::csp::ContentSecurityPolicy;
    use crate::document::{DocumentOptions, SurfaceDocument};

    const VIEW: &str = "<!DOCTYPE html><html><head><title>A & B</title></head>\
        <body><p class=\"x\">'hi' <b>there</b></p>\
        <script type=\"module\">if (1 < 2 && \"a\") {}</script></body></html>";

    /// R-MCP-7: the whole top document, byte for byte.
    #[test]
    fn r_mcp_7_top_document_golden() {
        let document = SurfaceDocument::mcp_app(VIEW, &DocumentOptions::default());
        let expected = "<!DOCTYPE html><html><head><meta charset=\"utf-8\">\
            <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
            <style>html,body{margin:0;padding:0;width:100%;height:100%;overflow:hidden}\
            iframe{display:block;border:0;width:100%;height:100%}</style></head><body>\
            <iframe id=\"lineup-mcp-view\" sandbox=\"allow-scripts\" srcdoc=\"\
            <!DOCTYPE html><html><head><title>A &amp; B</title></head>\
            <body><p class=&quot;x&quot;>'hi' <b>there</b></p>\
            <script type=&quot;module&quot;>if (1 < 2 &amp;&amp; &quot;a&quot;) {}</script>\
            </body></html>\"></iframe></body></html>";
        assert_eq!(document.html(), expected);
        assert!(FRAME_OPEN.contains(&format!("id=\"{MCP_VIEW_FRAME_ID}\"")));
        // The host's markup has no script: nothing runs in the top frame's page world.
        let start = expected.find(FRAME_OPEN).expect("the iframe") + FRAME_OPEN.len();
        let end = expected.rfind(FRAME_CLOSE).expect("the end");
        assert!(!format!("{}{}", &expected[..start], &expected[end..]).contains("<script"));
        // Positive control: the view's own script is inside the value.
        assert!(expected[start..end].contains("<script"));
    }

    /// R-MCP-7, R-SEC-3: the top document is served with a Surface's headers, the strict policy
    /// included, which the srcdoc view inherits: no network, no workers, no `unsafe-eval`, an
    /// opaque origin. WebKitGTK shows an `about:srcdoc` child under `frame-src 'none'` and
    /// `child-src 'none'` (the `mcp_view` scenario group loads views under exactly this header),
    /// so the view needs nothing more.
    #[test]
    fn r_mcp_7_top_document_headers_golden() {
        let document = SurfaceDocument::mcp_app(VIEW, &DocumentOptions::default());
        let surface = SurfaceDocument::assemble(
            &lineup_host_core::InlineBundle::new("<p>x</p>", "", "").expect("a valid bundle"),
            &DocumentOptions::default(),
        );
        assert_eq!(document.headers(), surface.headers());
        let csp = document
            .headers()
            .iter()
            .find(|(name, _)| *name == "Content-Security-Policy")
            .map(|(_, value)| value.as_str());
        assert_eq!(
            csp,
            Some(
                "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; \
                 img-src data: blob:; connect-src 'none'; frame-src 'none'; child-src 'none'; \
                 worker-src 'none'; object-src 'none'; base-uri 'none'; form-action 'none'; \
                 sandbox allow-scripts"
            )
        );
        assert_eq!(
            document.headers()[0],
            ("Content-Type", "text/html; charset=utf-8".to_owned())
        );
        assert_eq!(
            csp.map(str::to_owned),
            Some(ContentSecurityPolicy::strict().header_value())
        );
    }

    /// R-MCP-7: the view's text cannot leave the attribute, whatever it holds: decoding the value
    /// as the HTML tokenizer does gives the text back, and the value holds no `"`.
    #[test]
    fn r_mcp_7_view_text_stays_inside_srcdoc() {
        let hostile = [
            "\"></iframe><script>alert(1)</script>",
            "&quot;><b>",
            "&amp;&&&\"\"\"",
            "\u{0}é刷😀\u{202e}",
            "",
            "plain",
        ];
        for view in hostile {
            let document = SurfaceDocument::mcp_app(view, &DocumentOptions::default());
            let html = document.html();
            let start = html.find(FRAME_OPEN).expect("the iframe") + FRAME_OPEN.len();
            let end = html.rfind(FRAME_CLOSE).expect("the end");
            let value = &html[start..end];
            assert!(!value.contains('"'), "{view:?}");
            let decoded = value.replace("&quot;", "\"").replace("&amp;", "&");
            assert_eq!(decoded, view);
            assert_eq!(
                html.matches("<iframe").count(),
                1 + view.matches("<iframe").count()
            );
            assert!(html.ends_with(FRAME_CLOSE));
        }
        // Positive control: unescaped, the first case would have closed the attribute.
        let raw = format!("{FRAME_OPEN}{}{FRAME_CLOSE}", hostile[0]);
        assert!(raw[FRAME_OPEN.len()..raw.len() - FRAME_CLOSE.len()].contains('"'));
    }

    /// R-MCP-4, R-MCP-7: an 8 MiB view, dense with characters to escape, is written in one
    /// allocation of the document's exact length (no growth, hence no quadratic copying), and
    /// the server keeps those bytes without another copy of the document.
    #[test]
    fn r_mcp_4_an_8_mib_view_is_built_in_one_allocation() {
        let chunk = "<p title=\"a&b\">x</p>";
        let view = chunk.repeat(8 * 1024 * 1024 / chunk.len());
        let html = top_document("<html>", &view);
        assert_eq!(html.capacity(), html.len());
        assert_eq!(
            html.len() - view.len(),
            "<!DOCTYPE html><html>".len()
                + HEAD.len()
                + FRAME_OPEN.len()
                + FRAME_CLOSE.len()
                + view.matches('"').count() * 5
                + view.matches('&').count() * 4
        );
        let document = SurfaceDocument::mcp_app(&view, &DocumentOptions::default());
        assert_eq!(document.html(), html);
    }

    /// R-UI-11: the host's language is on the top document's `<html>`; the view keeps its own.
    #[test]
    fn r_ui_11_language_on_the_top_document() {
        let options = DocumentOptions::default()
            .with_language(LanguageTag::try_from("de-DE").expect("a valid tag"));
        let document = SurfaceDocument::mcp_app("<html lang=\"fr\"></html>", &options);
        assert!(document
            .html()
            .starts_with("<!DOCTYPE html><html lang=\"de-DE\"><head>"));
        assert!(document
            .html()
            .contains("srcdoc=\"<html lang=&quot;fr&quot;></html>\""));
        // Positions the engine reports are the srcdoc document's own, never a bundle part's.
        assert_eq!(document.layout().locate(1, 1), None);
        assert_eq!(document.layout().locate(1, 400), None);
    }
}
