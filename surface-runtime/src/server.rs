//! The handler of the Surface scheme: it answers a webview's request for a URI from the
//! Surface's own in-memory resources, or with a short error (R-SEC-2).

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use lineup_host_core::Fingerprint;

use crate::csp::ContentSecurityPolicy;
use crate::document::SurfaceDocument;
use crate::headers::{security_headers, security_headers_for, TEXT_UTF8};
use crate::token::SurfaceToken;

/// The URI scheme Surface documents are served from: `lineup-surface://<token>/`.
pub const SCHEME: &str = "lineup-surface";

/// The paths the document is served at. Paths are map keys compared as written, never decoded
/// or joined onto anything, so `/%2e%2e/` or `/./` is simply another (absent) key.
const DOCUMENT_PATHS: [&str; 2] = ["/", "/index.html"];

/// One resource of a Surface: its headers and bytes.
struct Resource {
    headers: Vec<(&'static str, String)>,
    body: Vec<u8>,
}

impl fmt::Debug for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_body("Resource", None, &self.headers, &self.body, f)
    }
}

/// `Debug` of a resource or response: the headers, and the body as a length and a digest, never
/// its bytes, which are guest code (logs reach journald).
fn debug_body(
    name: &str,
    status: Option<u16>,
    headers: &[(&'static str, String)],
    body: &[u8],
    f: &mut fmt::Formatter<'_>,
) -> fmt::Result {
    let mut out = f.debug_struct(name);
    if let Some(status) = status {
        out.field("status", &status);
    }
    out.field("headers", &headers)
        .field("body", &Fingerprint::of(body))
        .finish()
}

/// Longer request URIs are refused before any look at them; a document URI is under 70 bytes.
const MAX_URI_LEN: usize = 2048;

/// One response of the scheme handler. Its `Debug` output shows the body as a length and a
/// digest.
#[derive(Clone, PartialEq, Eq)]
pub struct Response {
    /// The HTTP status: `200`, `404` or `405`.
    pub status: u16,
    /// The headers in the order they are to be sent; every response carries the security headers,
    /// `Content-Security-Policy` included.
    pub headers: Vec<(&'static str, String)>,
    /// The body; empty for `HEAD`.
    pub body: Vec<u8>,
}

impl fmt::Debug for Response {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_body("Response", Some(self.status), &self.headers, &self.body, f)
    }
}

impl Response {
    /// The value of the first header called `name`, compared case-insensitively.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The `404` every server answers for a URI that is not its own, for a scheme handler that
    /// has no server to ask (an unknown token).
    pub fn not_found() -> Self {
        Self::error(404, "not found\n")
    }

    fn error(status: u16, text: &str) -> Self {
        Self {
            status,
            headers: security_headers(TEXT_UTF8, Some(&ContentSecurityPolicy::strict())),
            body: text.as_bytes().to_vec(),
        }
    }
}

/// Serves one Surface's document under its token; every other host or path is a 404.
///
/// WebKit hands every request for the scheme to every webview's handler, whatever its host, so
/// the handler must check that the host is this Surface's token: otherwise one Surface could load
/// another's document. A request is served only if its URI is exactly `lineup-surface://<token>/`
/// or `lineup-surface://<token>/index.html` (a `#fragment` is ignored) and its method is `GET` or
/// `HEAD`. Nothing is ever read from disk.
///
/// ```
/// use lineup_host_core::InlineBundle;
/// use lineup_surface_runtime::{DocumentOptions, SurfaceDocument, SurfaceServer, SurfaceToken};
///
/// let bundle = InlineBundle::new("<p>hi</p>", "", "").unwrap();
/// let document = SurfaceDocument::assemble(&bundle, &DocumentOptions::default());
/// let server = SurfaceServer::new(SurfaceToken::from_random_bytes([7; 16]), document);
/// assert_eq!(server.respond("GET", &server.url()).status, 200);
/// let other = SurfaceToken::from_random_bytes([8; 16]);
/// assert_eq!(server.respond("GET", &format!("lineup-surface://{other}/")).status, 404);
/// ```
#[derive(Clone, Debug)]
pub struct SurfaceServer {
    token: SurfaceToken,
    /// The Surface's files by exact request path.
    resources: BTreeMap<String, Arc<Resource>>,
}

impl SurfaceServer {
    /// A server for `document` under `token`.
    pub fn new(token: SurfaceToken, document: SurfaceDocument) -> Self {
        // Moved, not copied: an MCP App view's document may be 8 MiB (R-MCP-4).
        let (html, headers) = document.into_served();
        let document = Arc::new(Resource {
            headers,
            body: html.into_bytes(),
        });
        let resources = DOCUMENT_PATHS
            .iter()
            .map(|path| ((*path).to_owned(), Arc::clone(&document)))
            .collect();
        Self { token, resources }
    }

    /// Also serves an installed app's assets, each at `lineup-surface://<token>/<path>` (its
    /// path in the package, like `assets/logo.png`; paths that collide with the document's are
    /// skipped) with its MIME type, `nosniff` and the strict policy (R-SEC-3a). Only these exact
    /// paths exist: no listing, no decoding, nothing from disk. Fonts load in CORS mode from an
    /// opaque origin, so assets carry `Access-Control-Allow-Origin: *` and
    /// `Cross-Origin-Resource-Policy: cross-origin`; another Surface still cannot load them, as
    /// its own policy names only its own token and this server answers only to this one.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use lineup_host_core::InlineBundle;
    /// use lineup_surface_runtime::{DocumentOptions, SurfaceDocument, SurfaceServer, SurfaceToken};
    ///
    /// let bundle = InlineBundle::new("<img src=logo.png>", "", "").unwrap();
    /// let document = SurfaceDocument::assemble(&bundle, &DocumentOptions::default());
    /// let server = SurfaceServer::new(SurfaceToken::from_random_bytes([7; 16]), document)
    ///     .with_assets([("logo.png".to_owned(), "image/png".to_owned(), Arc::from(&b"png"[..]))]);
    /// let response = server.respond("GET", &format!("{}logo.png", server.url()));
    /// assert_eq!((response.status, response.header("Content-Type")), (200, Some("image/png")));
    /// assert_eq!(server.respond("GET", &format!("{}LOGO.png", server.url())).status, 404);
    /// ```
    pub fn with_assets(
        mut self,
        assets: impl IntoIterator<Item = (String, String, Arc<[u8]>)>,
    ) -> Self {
        for (path, mime, bytes) in assets {
            let key = format!("/{path}");
            if self.resources.contains_key(&key) {
                continue;
            }
            let mut headers = security_headers_for(&mime);
            headers.push(("Access-Control-Allow-Origin", "*".to_owned()));
            self.resources.insert(
                key,
                Arc::new(Resource {
                    headers,
                    body: bytes.to_vec(),
                }),
            );
        }
        self
    }

    /// The token this server answers to.
    pub fn token(&self) -> &SurfaceToken {
        &self.token
    }

    /// The document's URL, `lineup-surface://<token>/`, for the webview to load.
    pub fn url(&self) -> String {
        format!("{SCHEME}://{}/", self.token)
    }

    /// Answers a request: `method` as the webview reports it (case-sensitive, as in HTTP) and `uri`
    /// the full request URI.
    ///
    /// `200` with the document for `GET` of the document's URI, the same headers and no body for
    /// `HEAD`; `405` for another method on it; `404` for anything else, including a URI that
    /// cannot be read. Error bodies are short plain text with the security headers (R-SEC-2).
    pub fn respond(&self, method: &str, uri: &str) -> Response {
        let mut response = match self.resource(uri) {
            None => Response::not_found(),
            Some(resource) if method == "GET" || method == "HEAD" => Response {
                status: 200,
                headers: resource.headers.clone(),
                body: resource.body.clone(),
            },
            Some(_) => {
                let mut refused = Response::error(405, "method not allowed\n");
                refused.headers.push(("Allow", "GET, HEAD".to_owned()));
                refused
            }
        };
        if method == "HEAD" {
            response.body.clear();
        }
        response
    }

    /// The resource `uri` names: scheme and host compared exactly, the path looked up as an exact
    /// key, with no decoding or normalisation.
    fn resource(&self, uri: &str) -> Option<&Resource> {
        if uri.len() > MAX_URI_LEN {
            return None;
        }
        let without_fragment = uri.split_once('#').map_or(uri, |(before, _)| before);
        let rest = without_fragment
            .strip_prefix(SCHEME)
            .and_then(|rest| rest.strip_prefix("://"))?;
        let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        if host != self.token.as_str() {
            return None;
        }
        self.resources.get(path).map(Arc::as_ref)
    }
}

#[cfg(test)]
mod tests {
    use lineup_host_core::InlineBundle;

    use super::*;
    use crate::document::DocumentOptions;

    const TOKEN: &str = "00112233445566778899aabbccddeeff";

    fn server(options: &DocumentOptions) -> SurfaceServer {
        let bundle = InlineBundle::new("<p>hi</p>", "p{}", "1").expect("valid bundle");
        let token = SurfaceToken::try_from(TOKEN).expect("valid token");
        SurfaceServer::new(token, SurfaceDocument::assemble(&bundle, options))
    }

    /// R-SEC-3a: an app's assets are served only at their exact listed path under this token;
    /// every traversal, encoding, case or listing trick is a 404.
    #[test]
    fn r_sec_3a_asset_traversal_table() {
        let png: Arc<[u8]> = Arc::from(&b"\x89PNG"[..]);
        let server = server(&DocumentOptions::default()).with_assets([
            ("assets/logo.png".to_owned(), "image/png".to_owned(), png),
            (
                "index.html".to_owned(),
                "image/png".to_owned(),
                Arc::from(&b"not the document"[..]),
            ),
        ]);
        let table: &[(&str, &str, u16)] = &[
            ("GET", "lineup-surface://TOKEN/assets/logo.png", 200),
            ("HEAD", "lineup-surface://TOKEN/assets/logo.png", 200),
            ("GET", "lineup-surface://TOKEN/assets/logo.png#x", 200),
            ("GET", "lineup-surface://OTHER/assets/logo.png", 404),
            ("GET", "lineup-surface://TOKEN/assets/", 404),
            ("GET", "lineup-surface://TOKEN/assets", 404),
            (
                "GET",
                "lineup-surface://TOKEN/assets/../assets/logo.png",
                404,
            ),
            ("GET", "lineup-surface://TOKEN/./assets/logo.png", 404),
            ("GET", "lineup-surface://TOKEN//assets/logo.png", 404),
            ("GET", "lineup-surface://TOKEN/assets//logo.png", 404),
            ("GET", "lineup-surface://TOKEN/assets%2flogo.png", 404),
            ("GET", "lineup-surface://TOKEN/assets/%6cogo.png", 404),
            ("GET", "lineup-surface://TOKEN/assets\\logo.png", 404),
            ("GET", "lineup-surface://TOKEN/ASSETS/logo.png", 404),
            ("GET", "lineup-surface://TOKEN/assets/logo.png?v=1", 404),
            ("GET", "lineup-surface://TOKEN/assets/logo.png/", 404),
            ("GET", "lineup-surface://TOKEN/assets/logo.png%00", 404),
            ("GET", "lineup-surface://TOKEN/logo.png", 404),
            ("POST", "lineup-surface://TOKEN/assets/logo.png", 405),
        ];
        for (method, uri, status) in table {
            let uri = uri
                .replace("TOKEN", TOKEN)
                .replace("OTHER", &"ab".repeat(16));
            assert_eq!(
                server.respond(method, &uri).status,
                *status,
                "{method} {uri}"
            );
        }
        let asset = server.respond("GET", &format!("lineup-surface://{TOKEN}/assets/logo.png"));
        assert_eq!(asset.body, b"\x89PNG");
        assert_eq!(asset.header("Content-Type"), Some("image/png"));
        assert_eq!(asset.header("X-Content-Type-Options"), Some("nosniff"));
        assert_eq!(asset.header("Access-Control-Allow-Origin"), Some("*"));
        assert!(asset
            .header("Content-Security-Policy")
            .is_some_and(|c| c.starts_with("default-src 'none'")));
        // An asset cannot take the document's place.
        let document = server.respond("GET", &format!("lineup-surface://{TOKEN}/index.html"));
        assert_eq!(
            document.header("Content-Type"),
            Some("text/html; charset=utf-8")
        );
    }

    #[test]
    fn r_sec_2_url_names_the_token() {
        let server = server(&DocumentOptions::default());
        assert_eq!(server.url(), format!("lineup-surface://{TOKEN}/"));
        assert_eq!(server.token().as_str(), TOKEN);
    }

    /// R-SEC-2: only this token's document URI is served. In a URI, `TOKEN` stands for the token,
    /// `OTHER` for another Surface's, `UPPER` for the token in upper case and `SHORT` for the
    /// token less its last character.
    #[test]
    fn r_sec_2_respond_table() {
        let server = server(&DocumentOptions::default());
        let table: &[(&str, &str, u16)] = &[
            ("GET", "lineup-surface://TOKEN/", 200),
            ("GET", "lineup-surface://TOKEN/index.html", 200),
            ("GET", "lineup-surface://TOKEN/#top", 200),
            ("HEAD", "lineup-surface://TOKEN/", 200),
            // another Surface's token, or no valid token at all
            ("GET", "lineup-surface://OTHER/", 404),
            ("GET", "lineup-surface://UPPER/", 404),
            ("GET", "lineup-surface://SHORT/", 404),
            ("GET", "lineup-surface:///", 404),
            ("GET", "lineup-surface://", 404),
            ("GET", "lineup-surface://user@TOKEN/", 404),
            ("GET", "lineup-surface://TOKEN:80/", 404),
            ("GET", "lineup-surface://TOKEN.evil/", 404),
            // other paths, traversal, encodings
            ("GET", "lineup-surface://TOKEN", 404),
            ("GET", "lineup-surface://TOKEN/../etc/passwd", 404),
            ("GET", "lineup-surface://TOKEN/%2e%2e/", 404),
            ("GET", "lineup-surface://TOKEN/%2E%2E/etc/passwd", 404),
            ("GET", "lineup-surface://TOKEN/./", 404),
            ("GET", "lineup-surface://TOKEN//", 404),
            ("GET", "lineup-surface://TOKEN/\\", 404),
            ("GET", "lineup-surface://TOKEN/index.htm", 404),
            ("GET", "lineup-surface://TOKEN/Index.html", 404),
            ("GET", "lineup-surface://TOKEN/index.html/", 404),
            ("GET", "lineup-surface://TOKEN/?x=1", 404),
            ("GET", "lineup-surface://TOKEN/%00", 404),
            ("GET", "lineup-surface://TOKEN/etc/passwd", 404),
            // other schemes and unreadable URIs
            ("GET", "LINEUP-SURFACE://TOKEN/", 404),
            ("GET", "http://TOKEN/", 404),
            ("GET", "file:///TOKEN/", 404),
            ("GET", "lineup-surface:TOKEN/", 404),
            ("GET", " lineup-surface://TOKEN/", 404),
            ("GET", "lineup-surface://TOKEN/ ", 404),
            ("GET", "", 404),
            ("GET", "\u{0}\u{feff}刷新", 404),
            ("GET", "://", 404),
            ("GET", "#", 404),
            // methods
            ("POST", "lineup-surface://TOKEN/", 405),
            ("PUT", "lineup-surface://TOKEN/index.html", 405),
            ("get", "lineup-surface://TOKEN/", 405),
            ("", "lineup-surface://TOKEN/", 405),
            ("POST", "lineup-surface://OTHER/", 404),
            ("HEAD", "lineup-surface://nope/", 404),
        ];
        let too_long = format!("lineup-surface://TOKEN/{}", "a".repeat(MAX_URI_LEN));
        let rows = table
            .iter()
            .copied()
            .chain([("GET", too_long.as_str(), 404)]);
        let csp = ContentSecurityPolicy::strict().header_value();
        for (method, uri, status) in rows {
            let uri = uri
                .replace("TOKEN", TOKEN)
                .replace("OTHER", "ffeeddccbbaa99887766554433221100")
                .replace("UPPER", &TOKEN.to_uppercase())
                .replace("SHORT", &TOKEN[1..]);
            let response = server.respond(method, &uri);
            assert_eq!(response.status, status, "{method} {uri:?}");
            assert_eq!(
                response.header("content-security-policy"),
                Some(csp.as_str()),
                "{method} {uri:?}"
            );
            assert_eq!(response.header("X-Content-Type-Options"), Some("nosniff"));
            assert_eq!(response.header("Cache-Control"), Some("no-store"));
            if method == "HEAD" {
                assert!(response.body.is_empty(), "{method} {uri:?}");
            }
        }
    }

    #[test]
    fn r_sec_2_get_serves_the_document_with_its_headers() {
        let options = DocumentOptions::default();
        let server = server(&options);
        let bundle = InlineBundle::new("<p>hi</p>", "p{}", "1").expect("valid bundle");
        let document = SurfaceDocument::assemble(&bundle, &options);
        let response = server.respond("GET", &server.url());
        assert_eq!(response.status, 200);
        assert_eq!(response.headers, document.headers());
        assert_eq!(response.body, document.html().as_bytes());
        let head = server.respond("HEAD", &server.url());
        assert_eq!(head.headers, response.headers);
        assert!(head.body.is_empty());
    }

    #[test]
    fn r_sec_2_errors_are_short_text_with_security_headers() {
        let server = server(&DocumentOptions::default());
        let not_found = server.respond("GET", "lineup-surface://x/");
        assert_eq!(not_found.body, b"not found\n");
        assert_eq!(
            not_found.headers,
            security_headers(TEXT_UTF8, Some(&ContentSecurityPolicy::strict()))
        );
        let wrong_method = server.respond("POST", &server.url());
        assert_eq!(wrong_method.body, b"method not allowed\n");
        assert_eq!(wrong_method.header("Allow"), Some("GET, HEAD"));
        assert_eq!(wrong_method.header("Content-Type"), Some(TEXT_UTF8));
    }

    /// The positive control's weakening applies to the document only: refusals keep their CSP.
    #[test]
    fn r_sec_3_dangerous_without_csp_drops_it_from_the_document_only() {
        let server = server(&DocumentOptions::default().dangerous().without_csp());
        let document = server.respond("GET", &server.url());
        assert_eq!(document.status, 200);
        assert_eq!(document.header("Content-Security-Policy"), None);
        let refused = server.respond("GET", "lineup-surface://x/");
        assert!(refused.header("Content-Security-Policy").is_some());
    }

    /// R-SEC-2: edits of the document URI (a character inserted, removed or replaced anywhere)
    /// are never served and never panic; a small generator keeps the run deterministic.
    #[test]
    fn r_sec_2_respond_serves_only_exact_uris_for_edited_input() {
        let server = server(&DocumentOptions::default());
        let valid = [server.url(), format!("{}index.html", server.url())];
        let alphabet: Vec<char> = "/\\.%#?@:0aAfg-_ \t\n\u{0}é刷\u{202e}".chars().collect();
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |bound: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            usize::try_from(seed % u64::try_from(bound).unwrap_or(1)).unwrap_or(0)
        };
        for round in 0..20_000 {
            let mut chars: Vec<char> = valid[round % 2].chars().collect();
            for _ in 0..=next(3) {
                let at = next(chars.len() + 1);
                let c = alphabet[next(alphabet.len())];
                match next(3) {
                    0 => chars.insert(at, c),
                    1 if at < chars.len() => {
                        chars.remove(at);
                    }
                    _ if at < chars.len() => chars[at] = c,
                    _ => chars.push(c),
                }
            }
            let uri: String = chars.into_iter().collect();
            let served = valid.iter().any(|v| {
                uri == *v
                    || uri
                        .strip_prefix(v.as_str())
                        .is_some_and(|r| r.starts_with('#'))
            });
            let expected = if served { 200 } else { 404 };
            assert_eq!(server.respond("GET", &uri).status, expected, "{uri:?}");
        }
    }

    /// Logs reach journald: `Debug` of the server, its document and its responses shows lengths
    /// and digests, never the guest's bytes in any form (raw, escaped, as a byte list, hex).
    #[test]
    fn debug_does_not_print_the_document() {
        const SECRET: &str = "zQ7\"secret-guest-Ω";
        let bundle = InlineBundle::new(
            format!("<p>{SECRET}</p>"),
            format!("p::after {{ content: '{SECRET}' }}"),
            format!("let s = '{SECRET}';"),
        )
        .expect("valid bundle");
        let document = SurfaceDocument::assemble(&bundle, &DocumentOptions::default());
        let token = SurfaceToken::try_from(TOKEN).expect("valid token");
        let server = SurfaceServer::new(token, document.clone());
        let response = server.respond("GET", &server.url());
        // Positive control: the secret is in the bytes served.
        assert!(String::from_utf8_lossy(&response.body).contains(SECRET));
        let shown = [
            format!("{server:?}"),
            format!("{server:#?}"),
            format!("{document:?}"),
            format!("{response:?}"),
            format!("{response:#?}"),
        ];
        for text in &shown {
            assert!(text.contains("bytes"), "a length is shown: {text}");
            assert_eq!(
                lineup_host_core::leaked_form(text, SECRET),
                None,
                "Debug printed the guest's bytes: {text}"
            );
        }
        assert!(shown[0].contains(TOKEN));
        assert!(shown[3].contains("200"));
    }
}
