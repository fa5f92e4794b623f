//! Assembly of one Surface's document from its inline bundle, with the headers it
//! is served with (R-UI-6, R-UI-6a, R-SEC-2).

use std::fmt;

use lineup_host_core::{
    Fingerprint, InlineBundle, LanguageTag, SourceFiles, SourcePart, SourcePosition,
};

use crate::csp::ContentSecurityPolicy;
use crate::headers::{security_headers, HTML_UTF8};
use crate::srcdoc::top_document;

/// How a Surface document is served.
///
/// Deny by default: [`DocumentOptions::default`] serves the document with
/// [`ContentSecurityPolicy::strict`]. The only way to weaken it is
/// [`dangerous`](Self::dangerous), so a reviewer can find every weakening by that word.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DocumentOptions {
    csp: Option<ContentSecurityPolicy>,
    language: Option<LanguageTag>,
    high_contrast: bool,
    sources: SourceFiles,
}

impl DocumentOptions {
    /// The default options: the strict policy (R-SEC-3).
    pub fn new() -> Self {
        Self {
            csp: Some(ContentSecurityPolicy::strict()),
            language: None,
            high_contrast: false,
            sources: SourceFiles::default(),
        }
    }

    /// Writes `<html lang="<tag>">`, the host's language (R-UI-11); without it the element has
    /// no `lang`.
    pub fn with_language(mut self, language: LanguageTag) -> Self {
        self.language = Some(language);
        self
    }

    /// Serves the high-contrast values of the host's CSS custom properties
    /// ([`HIGH_CONTRAST_THEME_CSS`]) and marks the root element
    /// `data-lineup-contrast="more"`, so a Surface can also adjust what the properties do not
    /// cover (R-UI-11). Read when the document is assembled: a Surface open at the time of a
    /// change keeps its values until it opens again.
    pub fn with_high_contrast(mut self, high_contrast: bool) -> Self {
        self.high_contrast = high_contrast;
        self
    }

    /// Names the bundle's parts by `sources` in the document's layout, so positions in
    /// diagnostics read as the author's files (R-DIAG-1): an installed app's manifest names
    /// them; by default they are the bundle folder's (`script.js`).
    pub fn with_sources(mut self, sources: SourceFiles) -> Self {
        self.sources = sources;
        self
    }

    /// Whether the document is assembled with the high-contrast values.
    pub fn high_contrast(&self) -> bool {
        self.high_contrast
    }

    /// Serves the document with a policy that also allows images, fonts, style sheets and
    /// media from `origin`, the Surface's own scheme host, where its assets are
    /// ([`ContentSecurityPolicy::with_own_assets`], R-SEC-3a). No effect without a policy.
    pub fn with_own_assets(mut self, origin: &str) -> Self {
        self.csp = self.csp.map(|csp| csp.with_own_assets(origin));
        self
    }

    /// Serves the document with a policy that also allows scripts from its own host, for an
    /// installed app with script assets ([`ContentSecurityPolicy::with_own_scripts`],
    /// R-SEC-3a); after [`with_own_assets`](Self::with_own_assets). No effect without a policy.
    pub fn with_own_scripts(mut self) -> Self {
        self.csp = self.csp.map(ContentSecurityPolicy::with_own_scripts);
        self
    }

    /// The language written on the document's `<html>` element, if any.
    pub fn language(&self) -> Option<&LanguageTag> {
        self.language.as_ref()
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
        DocumentOptions {
            csp: None,
            ..self.0
        }
    }
}

/// The host's CSS custom properties, defined before the guest's CSS (R-UI-11): the guest's own
/// rules win, and the dark values apply live when the host's theme changes.
///
/// | property | light | dark |
/// | --- | --- | --- |
/// | `--lineup-color-bg` | `#ffffff` | `#1e1f22` |
/// | `--lineup-color-fg` | `#1f2328` | `#e6e7ea` |
/// | `--lineup-color-accent` | `#0a66d8` | `#5ea1ff` |
/// | `--lineup-color-on-accent` | `#ffffff` | `#000000` |
/// | `--lineup-font-family` | `system-ui, sans-serif` | same |
/// | `--lineup-font-size` | `14px` | same |
/// | `--lineup-radius` | `6px` | same |
///
/// `--lineup-color-on-accent` is the text colour for a box filled with the accent: a contrast
/// ratio of at least 4.5:1 (WCAG AA) against it in every variant (white on the light blue,
/// black on the lighter dark-theme blue, where white would be 2.6:1).
pub const THEME_CSS: &str = ":root{--lineup-color-bg:#ffffff;--lineup-color-fg:#1f2328;\
--lineup-color-accent:#0a66d8;--lineup-color-on-accent:#ffffff;\
--lineup-font-family:system-ui,sans-serif;--lineup-font-size:14px;\
--lineup-radius:6px}@media (prefers-color-scheme: dark){:root{--lineup-color-bg:#1e1f22;\
--lineup-color-fg:#e6e7ea;--lineup-color-accent:#5ea1ff;--lineup-color-on-accent:#000000}}";

/// [`THEME_CSS`] when the host asks for high contrast
/// ([`DocumentOptions::with_high_contrast`]): pure black on white (white on black under
/// `prefers-color-scheme: dark`, which an inverse high-contrast desktop theme such as GTK's
/// `HighContrastInverse` selects), an accent with a contrast ratio of at least 7:1 against the
/// background (WCAG AAA) and a text colour on it of at least 7:1 too, the same font and radius.
///
/// | property | light | dark |
/// | --- | --- | --- |
/// | `--lineup-color-bg` | `#ffffff` | `#000000` |
/// | `--lineup-color-fg` | `#000000` | `#ffffff` |
/// | `--lineup-color-accent` | `#0000c0` | `#ffff00` |
/// | `--lineup-color-on-accent` | `#ffffff` | `#000000` |
pub const HIGH_CONTRAST_THEME_CSS: &str =
    ":root{--lineup-color-bg:#ffffff;--lineup-color-fg:#000000;\
--lineup-color-accent:#0000c0;--lineup-color-on-accent:#ffffff;\
--lineup-font-family:system-ui,sans-serif;--lineup-font-size:14px;\
--lineup-radius:6px}@media (prefers-color-scheme: dark){:root{--lineup-color-bg:#000000;\
--lineup-color-fg:#ffffff;--lineup-color-accent:#ffff00;--lineup-color-on-accent:#000000}}";

/// Where each part of the bundle starts in the assembled document, to map a position the engine
/// reports (document line and column, from 1) back to the author's own file (R-DIAG-1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DocumentLayout {
    /// `css`, `html` and `js`, in that order.
    parts: [PartSpan; 3],
    /// The names of the parts' files.
    sources: SourceFiles,
}

/// A part of the bundle, its start and the position just after its last character, as
/// (line, column) from 1.
type PartSpan = (SourcePart, (u32, u32), (u32, u32));

impl DocumentLayout {
    /// The part and its own line and column for a document position; `None` outside the parts
    /// (the host's markup) or for line 0.
    ///
    /// ```
    /// use lineup_host_core::InlineBundle;
    /// use lineup_surface_runtime::{DocumentOptions, SurfaceDocument};
    /// let bundle = InlineBundle::new("<p>hi</p>", "p{}", "let a;\nnull.x;").unwrap();
    /// let document = SurfaceDocument::assemble(&bundle, &DocumentOptions::default());
    /// let layout = document.layout();
    /// let at = layout.locate(2, 5).map(|p| p.to_string());
    /// assert_eq!(at.as_deref(), Some("script.js:2:5"));
    /// ```
    pub fn locate(&self, line: u32, column: u32) -> Option<SourcePosition> {
        if line == 0 {
            return None;
        }
        let column = column.max(1);
        let at = (line, column);
        self.parts
            .iter()
            .find(|(_, start, end)| *start <= at && at <= *end)
            .map(|(part, start, _)| {
                let column = if line == start.0 {
                    column - start.1 + 1
                } else {
                    column
                };
                self.sources.position(*part, line - start.0 + 1, column)
            })
    }
}

/// The (line, column) from 1 just after `text`, when it starts at `from`; columns count UTF-16
/// code units, as the engine's positions do.
fn advance(from: (u32, u32), text: &str) -> (u32, u32) {
    let (mut line, mut column) = from;
    for c in text.chars() {
        if c == '\n' {
            line = line.saturating_add(1);
            column = 1;
        } else {
            column = column.saturating_add(u32::try_from(c.len_utf16()).unwrap_or(2));
        }
    }
    (line, column)
}

/// The assembled bytes and headers of one Surface's document.
///
/// The document is `<!DOCTYPE html>` with, in order: the charset and viewport `<meta>`s, the
/// host's CSS custom properties ([`THEME_CSS`], R-UI-11) in a `<style>`, the bundle's `css` in a
/// `<style>` in the head, its `html` as the body, and its `js` in a `<script>` after it
/// (R-UI-6a). `<html>` carries the host's language when [`DocumentOptions::with_language`] set
/// one. The bridge is not part of it: the webview layer injects
/// [`DeliveryKey::bridge_script`](crate::DeliveryKey::bridge_script) as a user script that runs
/// at document start, before any guest code, and that the page cannot read (R-UI-6). [`InlineBundle`] has
/// already refused `</style` in `css`, and in `js` `</script` and a `<!--` followed by `<script`
/// with no `-->` after it ([`Breakout`](lineup_host_core::Breakout)), so neither can end its
/// element early or keep it from ending, and assembly cannot fail.
///
/// An MCP App view's document is another one of the host's: see [`SurfaceDocument::mcp_app`].
#[derive(Clone, PartialEq, Eq)]
pub struct SurfaceDocument {
    html: String,
    headers: Vec<(&'static str, String)>,
    layout: DocumentLayout,
}

impl SurfaceDocument {
    /// Assembles the document of `bundle` and the headers `options` ask for.
    pub fn assemble(bundle: &InlineBundle, options: &DocumentOptions) -> Self {
        const META: &str = "<head><meta charset=\"utf-8\">\
            <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">";
        // A LanguageTag holds only ASCII letters, digits and '-': nothing to escape.
        let lang = match options.language() {
            Some(tag) => format!(" lang=\"{tag}\""),
            None => String::new(),
        };
        let (contrast, theme) = if options.high_contrast() {
            (" data-lineup-contrast=\"more\"", HIGH_CONTRAST_THEME_CSS)
        } else {
            ("", THEME_CSS)
        };
        let open = format!("<!DOCTYPE html><html{lang}{contrast}>");
        let before_css = [open.as_str(), META, "<style>", theme, "</style><style>"];
        let css_start = before_css.iter().fold((1, 1), |at, s| advance(at, s));
        let css_end = advance(css_start, bundle.css());
        let html_start = advance(css_end, "</style></head><body>");
        let html_end = advance(html_start, bundle.html());
        let js_start = advance(html_end, "<script>");
        let js_end = advance(js_start, bundle.js());
        let mut html = before_css.concat();
        for part in [
            bundle.css(),
            "</style></head><body>",
            bundle.html(),
            "<script>",
            bundle.js(),
            "</script></body></html>",
        ] {
            html.push_str(part);
        }
        Self {
            html,
            headers: security_headers(HTML_UTF8, options.csp()),
            layout: DocumentLayout {
                parts: [
                    (SourcePart::Css, css_start, css_end),
                    (SourcePart::Html, html_start, html_end),
                    (SourcePart::Js, js_start, js_end),
                ],
                sources: options.sources.clone(),
            },
        }
    }

    /// The document of an MCP App view (R-MCP-7): a fixed top document of the host's own, with
    /// no script, whose only child frame is an `about:srcdoc` iframe (id
    /// [`MCP_VIEW_FRAME_ID`](crate::MCP_VIEW_FRAME_ID), `sandbox="allow-scripts"`) holding
    /// `view_html` escaped into its `srcdoc` attribute. It is served with the headers `options`
    /// ask for, a Surface's strict policy by default, which the view inherits: no network, no
    /// workers, no `unsafe-eval`, each frame an opaque origin of its own. `<html>` carries the
    /// host's language when `options` set one; the theme and the bundle names do not apply.
    ///
    /// The document is written in one pass into one allocation of its exact length, so a view of
    /// 8 MiB (R-MCP-4) costs no copy that grows with the square of its size. Its
    /// [`layout`](Self::layout) locates nothing: positions the engine reports for the view are
    /// its srcdoc document's own.
    ///
    /// ```
    /// use lineup_surface_runtime::{DocumentOptions, SurfaceDocument};
    /// let document = SurfaceDocument::mcp_app(
    ///     "<p class=\"hi\">Tom & Jerry</p>",
    ///     &DocumentOptions::default(),
    /// );
    /// assert!(document
    ///     .html()
    ///     .contains("srcdoc=\"<p class=&quot;hi&quot;>Tom &amp; Jerry</p>\""));
    /// ```
    pub fn mcp_app(view_html: &str, options: &DocumentOptions) -> Self {
        // A LanguageTag holds only ASCII letters, digits and '-': nothing to escape.
        let open = match options.language() {
            Some(tag) => format!("<html lang=\"{tag}\">"),
            None => "<html>".to_owned(),
        };
        let nowhere = (0, 0);
        Self {
            html: top_document(&open, view_html),
            headers: security_headers(HTML_UTF8, options.csp()),
            // Every span ends before line 1, so `locate` finds no part.
            layout: DocumentLayout {
                parts: [
                    (SourcePart::Css, nowhere, nowhere),
                    (SourcePart::Html, nowhere, nowhere),
                    (SourcePart::Js, nowhere, nowhere),
                ],
                sources: options.sources.clone(),
            },
        }
    }

    /// The text and the headers, taken apart without a copy, for the server that keeps them.
    pub(crate) fn into_served(self) -> (String, Vec<(&'static str, String)>) {
        (self.html, self.headers)
    }

    /// Where the bundle's parts are in the document, to map the engine's positions back to them.
    pub fn layout(&self) -> DocumentLayout {
        self.layout.clone()
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
        let expected = "<!DOCTYPE html><html><head><meta charset=\"utf-8\">\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
             <style>:root{--lineup-color-bg:#ffffff;--lineup-color-fg:#1f2328;\
             --lineup-color-accent:#0a66d8;--lineup-color-on-accent:#ffffff;\
             --lineup-font-family:system-ui,sans-serif;\
             --lineup-font-size:14px;--lineup-radius:6px}@media (prefers-color-scheme: dark)\
             {:root{--lineup-color-bg:#1e1f22;--lineup-color-fg:#e6e7ea;\
             --lineup-color-accent:#5ea1ff;--lineup-color-on-accent:#000000}}</style>\
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
        assert!(!html.contains("__deliverState"));
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
                 img-src data: blob:; \
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

    /// R-UI-11: the host's language is on `<html>`, and its custom properties come before the
    /// guest's css, so the guest's own rules win.
    #[test]
    fn r_ui_11_language_and_theme_properties_precede_the_guest() {
        let options = DocumentOptions::default()
            .with_language(LanguageTag::try_from("de-DE").expect("a valid tag"));
        let document = SurfaceDocument::assemble(&weather(), &options);
        let html = document.html();
        assert!(html.starts_with("<!DOCTYPE html><html lang=\"de-DE\"><head>"));
        let theme = html.find("--lineup-color-bg").expect("theme properties");
        assert!(theme < html.find("main { padding").expect("guest css"));
        assert!(html.contains("@media (prefers-color-scheme: dark)"));
        // Positive control: without a language, no lang attribute.
        let plain = SurfaceDocument::assemble(&weather(), &DocumentOptions::default());
        assert!(!plain.html().contains("lang="));
    }

    /// The WCAG contrast ratio of two `#rrggbb` colours.
    fn contrast_ratio(a: &str, b: &str) -> f64 {
        let luminance = |hex: &str| {
            let channel = |i: usize| {
                let v = f64::from(u8::from_str_radix(&hex[1 + 2 * i..3 + 2 * i], 16).expect("hex"))
                    / 255.0;
                if v <= 0.04045 {
                    v / 12.92
                } else {
                    ((v + 0.055) / 1.055).powf(2.4)
                }
            };
            0.2126 * channel(0) + 0.7152 * channel(1) + 0.0722 * channel(2)
        };
        let (x, y) = (luminance(a), luminance(b));
        (x.max(y) + 0.05) / (x.min(y) + 0.05)
    }

    /// The values of `name` in `css`, in order: the default, then the dark one.
    fn values<'a>(css: &'a str, name: &str) -> Vec<&'a str> {
        css.match_indices(&format!("{name}:"))
            .map(|(at, m)| &css[at + m.len()..at + m.len() + 7])
            .collect()
    }

    /// R-UI-11 (issue 30 item 11): `--lineup-color-on-accent` is readable on the accent in every
    /// variant (at least 4.5:1; 7:1 in high contrast), and the accent on the background.
    #[test]
    fn r_ui_11_on_accent_is_readable_on_the_accent_in_every_variant() {
        for (css, minimum) in [(THEME_CSS, 4.5), (HIGH_CONTRAST_THEME_CSS, 7.0)] {
            let accents = values(css, "--lineup-color-accent");
            let on = values(css, "--lineup-color-on-accent");
            let backgrounds = values(css, "--lineup-color-bg");
            assert_eq!(
                (accents.len(), on.len(), backgrounds.len()),
                (2, 2, 2),
                "{css}"
            );
            for i in 0..2 {
                let ratio = contrast_ratio(on[i], accents[i]);
                assert!(ratio >= minimum, "{} on {}: {ratio:.2}", on[i], accents[i]);
            }
            // Negative control: the other variant's text colour would not do on this accent.
            assert!(contrast_ratio(on[0], accents[1]) < 3.0, "{css}");
        }
        assert!(contrast_ratio("#ffffff", "#ffff00") < 1.1);
    }

    /// R-UI-11: high contrast swaps the property values and marks the root element; the guest's
    /// parts keep their positions relative to their own files.
    #[test]
    fn r_ui_11_high_contrast_at_open() {
        let options = DocumentOptions::default()
            .with_language(LanguageTag::try_from("en").expect("a valid tag"))
            .with_high_contrast(true);
        let document = SurfaceDocument::assemble(&weather(), &options);
        let html = document.html();
        assert!(html
            .starts_with("<!DOCTYPE html><html lang=\"en\" data-lineup-contrast=\"more\"><head>"));
        assert!(html.contains(HIGH_CONTRAST_THEME_CSS));
        assert!(!html.contains(THEME_CSS));
        let before = &html[..html.find("<script>").expect("guest js") + "<script>".len()];
        let line = before.matches('\n').count() + 1;
        let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
        let number = |n: usize| u32::try_from(n).unwrap_or(0);
        let at = document.layout().locate(number(line), number(column));
        assert!(
            at.as_ref()
                .is_some_and(|p| p.to_string().starts_with("script.js:1:")),
            "{at:?}"
        );
        // Positive control: by default neither.
        let plain = SurfaceDocument::assemble(&weather(), &DocumentOptions::default());
        assert!(!plain.html().contains("data-lineup-contrast"));
        assert!(plain.html().contains(THEME_CSS));
    }

    /// R-DIAG-1: a document position maps back to the part and its own line and column, also
    /// on the line a part starts on and with non-BMP text before it.
    #[test]
    fn r_diag_1_document_positions_map_back_to_the_bundle_parts() {
        let bundle =
            InlineBundle::new("<p>😀</p>\n<b>x</b>", "p{}\na{}", "one;\ntwo;").expect("valid");
        let document = SurfaceDocument::assemble(&bundle, &DocumentOptions::default());
        let html = document.html();
        let layout = document.layout();
        // Find each needle's document line and UTF-16 column, as the engine counts.
        let position = |needle: &str| {
            let at = html.find(needle).expect(needle);
            let before = &html[..at];
            let line = before.matches('\n').count() as u32 + 1;
            let line_start = before.rfind('\n').map_or(0, |i| i + 1);
            let column = before[line_start..].encode_utf16().count() as u32 + 1;
            (line, column)
        };
        let cases = [
            ("p{}", "style.css:1:1"),
            ("a{}", "style.css:2:1"),
            ("<p>", "index.html:1:1"),
            ("<b>", "index.html:2:1"),
            ("one;", "script.js:1:1"),
            ("two;", "script.js:2:1"),
        ];
        for (needle, expected) in cases {
            let (line, column) = position(needle);
            let got = layout.locate(line, column).map(|p| p.to_string());
            assert_eq!(
                got.as_deref(),
                Some(expected),
                "{needle} at {line}:{column}"
            );
        }
        let (line, column) = position("x</b>");
        assert_eq!(
            layout
                .locate(line, column)
                .map(|p| p.to_string())
                .as_deref(),
            Some("index.html:2:4")
        );
        // The host's markup is no part of the bundle.
        assert_eq!(layout.locate(1, 1), None);
        assert_eq!(layout.locate(0, 5), None);
        // An installed app's positions name the files its manifest names.
        let sources = SourceFiles::named("ui/page.html", Some("look.css"), Some("app/main.js"));
        let named =
            SurfaceDocument::assemble(&bundle, &DocumentOptions::default().with_sources(sources));
        assert_eq!(named.html(), html, "names change no byte of the document");
        let named = named.layout();
        for (needle, expected) in [
            ("a{}", "look.css:2:1"),
            ("<b>", "ui/page.html:2:1"),
            ("two;", "app/main.js:2:1"),
        ] {
            let (line, column) = position(needle);
            let got = named.locate(line, column).map(|p| p.to_string());
            assert_eq!(got.as_deref(), Some(expected), "{needle}");
        }
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
            // The host's custom properties, then the guest's css (R-UI-11).
            assert_eq!(lower[..head_end].matches("</style").count(), 2, "{css}");
            assert_eq!(lower[..head_end].matches("</script").count(), 0, "{css}");
            let tail = format!("<script>{js}</script></body></html>");
            assert!(document.html().ends_with(&tail));
        }
    }
}
