//! Assembly of one Surface's document from its inline bundle, with the headers it
//! is served with (R-UI-6, R-UI-6a, R-SEC-2).

use std::fmt;

use lineup_host_core::{Fingerprint, InlineBundle};

use crate::csp::ContentSecurityPolicy;
use crate::headers::{security_headers, HTML_UTF8};

/// How a Surface document is served.
///
/// Deny by default: [`DocumentOptions::default`] serves the document with
/// [`ContentSecurityPolicy::strict`]. The only way to weaken it is
/// [`dangerous`](Self::dangerous), so a reviewer can find every weakening by that word.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DocumentOptions {
    csp: Option<ContentSecurityPolicy>,
}

impl DocumentOptions {
    /// The default options: the strict policy (R-SEC-3).
    pub fn new() -> Self {
        Self {
            csp: Some(ContentSecurityPolicy::strict()),
        }
    }

    /// The policy the document is served with; `None` only after
    /// [`DangerousDocumentOptions::without_csp`].
    pub fn csp(&self) -> Option<&ContentSecurityPolicy> {
        self.csp.as_ref()
    }

    /// Options that weaken the Surface's isolation. Each breaks R-SEC-2 or R-SEC-3 and exists
    /// only for tests that must prove the isolation holds (a positive control).
    pub fn dangerous(self) -> DangerousDocumentOptions {
        DangerousDocumentOptions(self)
    }
}

impl Default for DocumentOptions {
    /// [`DocumentOptions::new`].
    fn default() -> Self {
        Self::new()
    }
}

/// Options that weaken a Surface's isolation, reached only through
/// [`DocumentOptions::dangerous`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DangerousDocumentOptions(DocumentOptions);

impl DangerousDocumentOptions {
    /// Serves the document with **no** `Content-Security-Policy` header at all: no sandbox, the
    /// scheme's own origin, network allowed. Breaks R-SEC-2 and R-SEC-3; only a positive-control
    /// security test may use it.
    pub fn without_csp(self) -> DocumentOptions {
        DocumentOptions { csp: None }
    }
}

/// The assembled bytes and headers of one Surface's document.
///
/// The document is `<!DOCTYPE html>` with, in order: the charset and viewport `<meta>`s, the
/// bundle's `css` in a `<style>` in the head, its `html` as the body, and its `js` in a `<script>`
/// after it (R-UI-6a). The bridge is not part of it: the webview layer injects
/// [`DeliveryKey::bridge_script`](crate::DeliveryKey::bridge_script) as a user script that runs
/// at document start, before any guest code, and that the page cannot read (R-UI-6). [`InlineBundle`] has
/// already refused `</style` in `css` and `</script`/`<!--` in `js`, so neither can end its
/// element early, and assembly cannot fail.
#[derive(Clone, PartialEq, Eq)]
pub struct SurfaceDocument {
    html: String,
    headers: Vec<(&'static str, String)>,
}

impl SurfaceDocument {
    /// Assembles the document of `bundle` and the headers `options` ask for.
    pub fn assemble(bundle: &InlineBundle, options: &DocumentOptions) -> Self {
        const HEAD: &str = "<!DOCTYPE html><html><head><meta charset=\"utf-8\">\
            <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">";
        let html = [
            HEAD,
            "<style>",
            bundle.css(),
            "</style></head><body>",
            bundle.html(),
            "<script>",
            bundle.js(),
            "</script></body></html>",
        ]
        .concat();
        Self {
            html,
            headers: security_headers(HTML_UTF8, options.csp()),
        }
    }

    /// The document's text, UTF-8.
    pub fn html(&self) -> &str {
        &self.html
    }

    /// The response headers, in a stable order: `Content-Type`, `Content-Security-Policy`
    /// (absent only under [`DangerousDocumentOptions::without_csp`]), `X-Content-Type-Options`,
    /// `Referrer-Policy`, `Cache-Control`, `Permissions-Policy`, `Cross-Origin-Opener-Policy`,
    /// `Cross-Origin-Resource-Policy`.
    pub fn headers(&self) -> &[(&'static str, String)] {
        &self.headers
    }
}

impl fmt::Debug for SurfaceDocument {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Guest code: a length and a digest, never the text (logs reach journald).
        f.debug_struct("SurfaceDocument")
            .field("html", &Fingerprint::of(&self.html))
            .field("headers", &self.headers)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn weather() -> InlineBundle {
        InlineBundle::new(
            "<main><button id='refresh'>刷新</button></main>",
            "main { padding: 16px }",
            "document.querySelector('#refresh').onclick=()=>LineUpSurface.event('refresh',{unit:'c'})",
        )
        .expect("the weather example is a valid bundle")
    }

    #[test]
    fn r_ui_6a_weather_document_golden() {
        let document = SurfaceDocument::assemble(&weather(), &DocumentOptions::default());
        let expected =             "<!DOCTYPE html><html><head><meta charset=\"utf-8\">\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
             <style>main { padding: 16px }</style></head>\
             <body><main><button id='refresh'>刷新</button></main>\
             <script>document.querySelector('#refresh').onclick=()=>LineUpSurface.event('refresh',{unit:'c'})</script>\
             </body></html>";
        assert_eq!(document.html(), expected);
    }

    #[test]
    fn r_ui_6a_css_then_html_then_js_and_no_bridge_in_the_page() {
        let bundle = InlineBundle::new("<p id=h>x</p>", "p{}", "let guest = 1").expect("valid");
        let document = SurfaceDocument::assemble(&bundle, &DocumentOptions::default());
        let html = document.html();
        let at = |needle: &str| html.find(needle).expect(needle);
        assert!(at("p{}") < at("<p id=h>"));
        assert!(at("<p id=h>") < at("let guest = 1"));
        // R-UI-6: the bridge (and its delivery key) is a user script, never in the page's text.
        assert_eq!(html.matches("<script>").count(), 1);
        assert!(!html.contains("__lineupSurfaceDeliverState"));
        assert!(!html.contains("LineUpSurface"));
    }

    #[test]
    fn r_sec_3_document_headers_golden() {
        let document = SurfaceDocument::assemble(&weather(), &DocumentOptions::default());
        let expected: Vec<(&str, String)> = vec![
            ("Content-Type", "text/html; charset=utf-8".into()),
            (
                "Content-Security-Policy",
                "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; \
                 img-src data: blob:; font-src data:; media-src data: blob:; \
                 connect-src 'none'; frame-src 'none'; child-src 'none'; worker-src 'none'; \
                 object-src 'none'; base-uri 'none'; form-action 'none'; sandbox allow-scripts"
                    .into(),
            ),
            ("X-Content-Type-Options", "nosniff".into()),
            ("Referrer-Policy", "no-referrer".into()),
            ("Cache-Control", "no-store".into()),
            (
                "Permissions-Policy",
                "camera=(), microphone=(), geolocation=(), display-capture=(), \
                 clipboard-read=(), clipboard-write=(), payment=(), usb=(), serial=(), \
                 bluetooth=(), hid=(), midi=(), fullscreen=(), autoplay=(), accelerometer=(), \
                 ambient-light-sensor=(), gyroscope=(), magnetometer=(), encrypted-media=(), \
                 gamepad=(), idle-detection=(), local-fonts=(), picture-in-picture=(), \
                 publickey-credentials-create=(), publickey-credentials-get=(), \
                 screen-wake-lock=(), storage-access=(), web-share=(), window-management=(), \
                 xr-spatial-tracking=()"
                    .into(),
            ),
            ("Cross-Origin-Opener-Policy", "same-origin".into()),
            ("Cross-Origin-Resource-Policy", "same-origin".into()),
        ];
        assert_eq!(document.headers(), expected.as_slice());
    }

    #[test]
    fn r_sec_3_only_the_dangerous_option_drops_the_csp() {
        let strict = DocumentOptions::default();
        assert_eq!(strict.csp(), Some(&ContentSecurityPolicy::strict()));
        let weakened = DocumentOptions::default().dangerous().without_csp();
        assert_eq!(weakened.csp(), None);
        let strict_doc = SurfaceDocument::assemble(&weather(), &strict);
        let weak_doc = SurfaceDocument::assemble(&weather(), &weakened);
        assert_eq!(weak_doc.html(), strict_doc.html());
        let without: Vec<_> = strict_doc
            .headers()
            .iter()
            .filter(|(name, _)| *name != "Content-Security-Policy")
            .cloned()
            .collect();
        assert_eq!(weak_doc.headers(), without.as_slice());
    }

    /// R-UI-6a: whatever the bundle holds, the document has exactly the guest's `<script>`
    /// element and one `<style>`, because no part can close its element early.
    #[test]
    fn r_ui_6a_bundle_parts_stay_inside_their_elements() {
        let cases = [
            ("</body></html>", "a{content:'</STYL'}", "'<\\/script>'"),
            ("<script>alert(1)</script>", "/* </styl */", "// <\\!--"),
            ("", "", ""),
        ];
        for (html, css, js) in cases {
            let bundle = InlineBundle::new(html, css, js).expect("valid bundle");
            let document = SurfaceDocument::assemble(&bundle, &DocumentOptions::default());
            let lower = document.html().to_ascii_lowercase();
            let head_end = lower.find("</head>").expect("head");
            assert_eq!(lower[..head_end].matches("</style").count(), 1, "{css}");
            assert_eq!(lower[..head_end].matches("</script").count(), 0, "{css}");
            let tail = format!("<script>{js}</script></body></html>");
            assert!(document.html().ends_with(&tail));
        }
    }
}
