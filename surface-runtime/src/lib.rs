//! The bytes and headers of a LineUp Surface: the document assembled from an inline bundle, the
//! Content-Security-Policy and other security headers it is served with, the `LineUpSurface`
//! bridge script, and the handler of the `lineup-surface:` scheme that serves one document under
//! an unguessable token.
//!
//! This crate never evaluates guest code and has no platform code; the webview layer loads
//! [`SurfaceServer::url`] and passes each scheme request to [`SurfaceServer::respond`].
//!
//! ```
//! use lineup_host_core::InlineBundle;
//! use lineup_surface_runtime::{
//!     DeliveryKey, DocumentOptions, SurfaceDocument, SurfaceServer, SurfaceToken,
//! };
//!
//! # fn main() -> Result<(), lineup_host_core::InvalidValue> {
//! let bundle = InlineBundle::new(
//!     "<main><button id='refresh'>刷新</button></main>",
//!     "main { padding: 16px }",
//!     "document.querySelector('#refresh').onclick=()=>LineUpSurface.event('refresh',{unit:'c'})",
//! )?;
//! let document = SurfaceDocument::assemble(&bundle, &DocumentOptions::default());
//! // The bridge is no part of the page: the webview layer injects it as a user script, with a
//! // key of its own for the state entry point (R-UI-6).
//! assert!(!document.html().contains("__deliverState"));
//! let bridge = DeliveryKey::from_random_bytes([0x3c; 16]).bridge_script();
//! assert!(bridge.contains("'LineUpSurface'"));
//!
//! // The embedder draws the token's 16 bytes from a cryptographic random source.
//! let server = SurfaceServer::new(SurfaceToken::from_random_bytes([0x5a; 16]), document);
//! assert_eq!(server.url(), "lineup-surface://5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a/");
//!
//! let ok = server.respond("GET", &server.url());
//! assert_eq!(ok.status, 200);
//! assert_eq!(ok.header("Content-Type"), Some("text/html; charset=utf-8"));
//! assert!(ok
//!     .header("Content-Security-Policy")
//!     .is_some_and(|csp| csp.ends_with("sandbox allow-scripts")));
//!
//! // Another Surface's host, another path or another method is refused.
//! let other = SurfaceToken::from_random_bytes([0xa5; 16]);
//! assert_eq!(server.respond("GET", &format!("lineup-surface://{other}/")).status, 404);
//! assert_eq!(server.respond("GET", &format!("{}%2e%2e/", server.url())).status, 404);
//! assert_eq!(server.respond("POST", &server.url()).status, 405);
//! # Ok(())
//! # }
//! ```
#![forbid(unsafe_code)]

mod bridge;
mod csp;
mod document;
mod headers;
mod server;
mod srcdoc;
mod token;

pub use bridge::{DeliveryKey, CONSOLE_MARKER};
pub use csp::{ContentSecurityPolicy, WEBASSEMBLY_GUARD_JS};
pub use document::{
    DangerousDocumentOptions, DocumentLayout, DocumentOptions, SurfaceDocument,
    HIGH_CONTRAST_THEME_CSS, THEME_CSS,
};
pub use server::{Response, SurfaceServer, SCHEME};
pub use srcdoc::MCP_VIEW_FRAME_ID;
pub use token::SurfaceToken;
