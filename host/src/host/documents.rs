//! What a Surface's document is made of (R-SEC-3, R-SEC-3a, R-UI-11): the builder's document
//! options in the host context's language, the contrast read when it is made, and the
//! Surface's own assets, served under its own token only; and an MCP App view's (R-MCP-7).

use std::sync::Arc;

use lineup_host_core::{InlineBundle, SurfaceOpen};
use lineup_surface_runtime::{
    DocumentLayout, DocumentOptions, SurfaceDocument, SurfaceServer, SurfaceToken, SCHEME,
};
use lineup_webview_shell::Contrast;

/// The options every Surface's document is assembled with, and the contrast it gets.
///
/// Invariants: the contrast is read when each document is made, never kept from an earlier
/// one; a document allows assets (and scripts signed with its package) of its own Surface only,
/// under that Surface's token, and only when it has some (R-SEC-3a).
pub(super) struct Documents {
    options: DocumentOptions,
    /// Read at each open (R-UI-11).
    contrast: Contrast,
}

impl Documents {
    /// Documents made with `options`, with the `contrast` the embedder chose.
    pub(super) fn new(options: DocumentOptions, contrast: Contrast) -> Self {
        Self { options, contrast }
    }

    /// Documents made from now on get the high-contrast values, or not (R-UI-11).
    pub(super) fn set_contrast(&mut self, contrast: Contrast) {
        self.contrast = contrast;
    }

    /// Whether a Surface or a component opening now gets the high-contrast values (R-UI-11).
    pub(super) fn high_contrast(&self) -> bool {
        match self.contrast {
            Contrast::High => true,
            Contrast::Normal => false,
            _ => lineup_webview_shell::desktop_high_contrast(),
        }
    }

    /// The document options of a Surface opening now: the contrast is read at open.
    fn options(&self) -> DocumentOptions {
        self.options
            .clone()
            .with_high_contrast(self.high_contrast())
    }

    /// The server of the document of `open` under `token`, with its own assets, and where the
    /// bundle's parts are in that document (R-DIAG-1).
    pub(super) fn server(
        &self,
        open: &SurfaceOpen,
        token: SurfaceToken,
    ) -> (SurfaceServer, DocumentLayout) {
        let mut options = self.options().with_sources(open.sources.clone());
        if !open.assets.is_empty() {
            // R-SEC-3a: this Surface's own assets, and no other's.
            options = options.with_own_assets(&format!("{SCHEME}://{token}"));
            if open.assets.has_scripts() {
                // R-SEC-3a: its script assets, code signed with its package.
                options = options.with_own_scripts();
            }
        }
        let document = SurfaceDocument::assemble(&open.app.bundle, &options);
        let layout = document.layout();
        let assets = open
            .assets
            .0
            .iter()
            .map(|(path, asset)| (path.clone(), asset.mime.clone(), Arc::clone(&asset.bytes)));
        (
            SurfaceServer::new(token, document).with_assets(assets),
            layout,
        )
    }

    /// The server of an MCP App view's document under `token` (R-MCP-7): the host's top
    /// document with `html` (UTF-8; a byte that is not is replaced) as its only child, under
    /// the Surfaces' policy and language, with nothing else to serve.
    pub(super) fn mcp_server(
        &self,
        html: &[u8],
        token: SurfaceToken,
    ) -> (SurfaceServer, DocumentLayout) {
        let document = SurfaceDocument::mcp_app(&String::from_utf8_lossy(html), &self.options());
        let layout = document.layout();
        (SurfaceServer::new(token, document), layout)
    }

    /// The document of `bundle`, made now: the embedder's reload of a Surface
    /// ([`HostHandle::reload_bundle`](super::HostHandle::reload_bundle)).
    pub(super) fn assemble(&self, bundle: &InlineBundle) -> SurfaceDocument {
        SurfaceDocument::assemble(bundle, &self.options())
    }
}
