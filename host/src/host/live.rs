//! One open Surface's webview and what the host keeps beside it (its bridge-message backlog, its
//! document layout, its requested height, whether the embedder hides it, the picture of what it
//! last showed), and what a reopened or woken Surface keeps of it ([`Kept`], R-UI-12, #29).

use std::rc::Rc;
use std::time::Instant;

use lineup_host_core::{Diagnostic, GoneReason, InlineBundle, McpAppTool, PageText, SurfaceKey};
use lineup_surface_runtime::{DocumentLayout, SurfaceDocument};
use lineup_webview_shell::{Placeholder, Rect, WindowPixels};

use super::backlog::{Backlog, Dropped};
use crate::port::PortView;

/// What a reopened Surface keeps of the webview it replaces, so it comes back in the same place
/// showing the same thing; nothing for a Surface opened by the agent.
#[derive(Debug, Default)]
pub(super) struct Kept {
    /// Where its own window was, and its inner size (window placement).
    pub(super) window: Option<Rect>,
    /// The height its page last asked for (child views are laid out with it).
    pub(super) requested_height: Option<u32>,
    /// The bundle the embedder last reloaded it with ([`HostHandle::reload_bundle`]).
    ///
    /// [`HostHandle::reload_bundle`]: super::HostHandle::reload_bundle
    pub(super) reloaded: Option<InlineBundle>,
    /// The loss the reopen answers; should the new webview not be created, the Surface is gone
    /// for this reason.
    pub(super) lost: Option<GoneReason>,
    /// Whether the embedder had hidden it ([`Host::set_surface_visible`]): a reopen keeps it so.
    ///
    /// [`Host::set_surface_visible`]: crate::Host::set_surface_visible
    pub(super) hidden: bool,
}

/// What the choice of the Surface to hibernate (#29, `Hibernation`) reads of one with a
/// webview.
#[derive(Debug, Clone, Copy)]
pub(super) struct Awake<'a> {
    /// Its key.
    pub(super) key: &'a SurfaceKey,
    /// Whether the embedder hides it.
    pub(super) hidden: bool,
    /// Since when the embedder has hidden it, for a child view.
    pub(super) hidden_since: Option<Instant>,
    /// When the embedder last showed it (or it opened).
    pub(super) last_shown: Instant,
    /// Whether it was pressed since its state was last set: input the agent may not have seen.
    pub(super) pressed: bool,
}

/// One open Surface's webview and what the host keeps beside it.
///
/// Invariants: it is opening (`opening_since`) from its view's creation until its page's first
/// `ready`, and a woken Surface's picture stands over its new view only until then; while it
/// shows it keeps no picture and has no `hidden_since`; a child view hidden keeps the picture of
/// what it showed and since when it is hidden; each document the embedder loaded is counted
/// until its commit, which is then the embedder's reload, not a navigation (R-UI-10). An MCP
/// App view (`mcp`: the tool whose result it shows) never hibernates (R-MCP-12's teardown on
/// hibernation is still to come).
pub(super) struct Live {
    pub(super) key: SurfaceKey,
    pub(super) view: Box<dyn PortView>,
    /// For an MCP App view, the tool whose result it shows (its `ui/initialize` answer names
    /// it, R-MCP-8); `None` for a Surface.
    mcp: Option<McpAppTool>,
    backlog: Rc<Backlog>,
    /// Where the bundle's parts are in the document, to map diagnostics back (R-DIAG-1).
    layout: DocumentLayout,
    /// The height the page last asked for, clamped; honoured in child-view placement.
    pub(super) requested_height: Option<u32>,
    /// Hidden by the embedder: no room in the layout, no input, page and state kept.
    hidden: bool,
    /// Documents the embedder loaded ([`HostHandle::reload_bundle`]) whose commit is still to
    /// come; those commits do not count toward the reload-loop bound (R-UI-10).
    ///
    /// [`HostHandle::reload_bundle`]: super::HostHandle::reload_bundle
    embedder_reloads: u32,
    /// The bundle the embedder last reloaded the Surface with, if any: what a reopen shows.
    reloaded: Option<InlineBundle>,
    /// When the view was created, until its page first said `ready`: the warm pool is not
    /// refilled meanwhile (#12).
    opening_since: Option<Instant>,
    /// When the embedder last showed it (or it opened): the least recently shown hidden
    /// Surface hibernates first (#29).
    last_shown: Instant,
    /// Since when the embedder has hidden it.
    hidden_since: Option<Instant>,
    /// The view's press count when its state was last set (open or patch): more presses since
    /// mean input the agent may not have seen, and the Surface is not hibernated.
    presses_seen: u64,
    /// What it showed on screen when the embedder hid it: its picture while it hibernates.
    picture: Option<WindowPixels>,
    /// That picture over a woken Surface's new view, until its page says `ready`.
    placeholder: Option<Placeholder>,
}

impl Live {
    /// The new `view` of Surface `key` (of an MCP App view showing `mcp`'s result), its
    /// messages counted in `backlog`, its document laid out as `layout`, with what its
    /// predecessor kept (`kept`); opening until its page says `ready`.
    pub(super) fn new(
        (key, view, mcp): (SurfaceKey, Box<dyn PortView>, Option<McpAppTool>),
        backlog: Rc<Backlog>,
        layout: DocumentLayout,
        kept: &Kept,
    ) -> Self {
        Self {
            key,
            view,
            mcp,
            backlog,
            layout,
            requested_height: kept.requested_height,
            hidden: kept.hidden,
            embedder_reloads: 0,
            reloaded: kept.reloaded.clone(),
            opening_since: Some(Instant::now()),
            last_shown: Instant::now(),
            hidden_since: kept.hidden.then(Instant::now),
            presses_seen: 0,
            picture: None,
            placeholder: None,
        }
    }

    /// Whether the embedder hides it.
    pub(super) fn hidden(&self) -> bool {
        self.hidden
    }

    /// For an MCP App view, the tool whose result it shows; `None` for a Surface.
    pub(super) fn mcp_tool(&self) -> Option<&McpAppTool> {
        self.mcp.as_ref()
    }

    /// When its view was created, while its page has not said `ready` yet.
    pub(super) fn opening_since(&self) -> Option<Instant> {
        self.opening_since
    }

    /// What the choice of the Surface to hibernate reads of it.
    pub(super) fn awake(&self) -> Awake<'_> {
        Awake {
            key: &self.key,
            hidden: self.hidden,
            hidden_since: self.hidden_since,
            last_shown: self.last_shown,
            pressed: self.view.presses() != self.presses_seen,
        }
    }

    /// Its page said `ready`: it is no longer opening, and a woken Surface's picture, which
    /// stood in until now, goes (#29).
    pub(super) fn ready(&mut self) {
        self.opening_since = None;
        self.placeholder = None;
    }

    /// Its state was just set (open or patch): presses until now are the agent's to have seen.
    pub(super) fn state_set(&mut self) {
        self.presses_seen = self.view.presses();
    }

    /// Hides or shows its view; a child view (`children`) hidden keeps the picture of what the
    /// user last saw of it, should it hibernate (#29).
    pub(super) fn set_visible(&mut self, visible: bool, children: bool) {
        if visible {
            self.last_shown = Instant::now();
            self.hidden_since = None;
            // Taken again at the next hide: a shown Surface keeps no picture.
            self.picture = None;
        } else if children && !self.hidden {
            self.picture = self.view.screen_pixels().ok();
            self.hidden_since = Some(Instant::now());
        }
        self.hidden = !visible;
        self.view.set_visible(visible);
    }

    /// Puts its view, and the picture standing in for it, at `bounds`.
    pub(super) fn place(&self, bounds: Rect) {
        if let Err(e) = self.view.set_bounds(bounds) {
            tracing::warn!("surface {}: cannot lay out: {e}", self.key);
        }
        if let Some(placeholder) = &self.placeholder {
            placeholder.set_bounds(bounds);
        }
    }

    /// Puts `placeholder` (the picture of what a woken Surface last showed) over its new view
    /// until its page says `ready` (#29).
    pub(super) fn stand_in(&mut self, placeholder: Option<Placeholder>) {
        self.placeholder = placeholder;
    }

    /// A new document committed in its view; returns whether the embedder loaded it.
    pub(super) fn committed(&mut self) -> bool {
        if self.embedder_reloads > 0 {
            self.embedder_reloads -= 1;
            return true;
        }
        false
    }

    /// A bridge message of its page reached the loop: it no longer waits, and what was dropped
    /// while it waited is handed over once.
    pub(super) fn taken(&self, raw: &str) -> Dropped {
        self.backlog.taken(raw)
    }

    /// Loads `document`, made of the embedder's `bundle`, in place of its page's, under the
    /// view's same token; its commit is then the embedder's reload.
    pub(super) fn reload(&mut self, document: SurfaceDocument, bundle: &InlineBundle) {
        let layout = document.layout();
        match self.view.replace_document(document) {
            Ok(()) => {
                self.layout = layout;
                self.embedder_reloads += 1;
                self.reloaded = Some(bundle.clone());
            }
            Err(e) => tracing::warn!("surface {}: cannot reload: {e}", self.key),
        }
    }

    /// R-DIAG-1: maps the page's document position in `diagnostic` back to the author's part of
    /// the bundle (`script.js:3:14`) when the page named its own document (or nothing), and a
    /// position in one of its own script assets to that file (R-SEC-3a).
    pub(super) fn locate(&self, diagnostic: &mut Diagnostic) {
        let url = self.view.url();
        let own_document = diagnostic
            .source
            .as_ref()
            .is_none_or(|s| s.is_empty() || s.as_str() == url);
        if let (true, Some(line)) = (own_document, diagnostic.line) {
            diagnostic.position = self.layout.locate(line, diagnostic.column.unwrap_or(1));
        }
        let asset = diagnostic
            .source
            .as_ref()
            .and_then(|s| s.as_str().strip_prefix(url))
            .filter(|path| !path.is_empty() && url.ends_with('/'))
            .map(|path| PageText::capped(path, 512));
        if asset.is_some() {
            diagnostic.asset = asset;
        }
    }

    /// What the Surface replacing it keeps, for a reopen after `reason`.
    pub(super) fn kept(&self, reason: GoneReason) -> Kept {
        Kept {
            window: self.view.window_bounds(),
            requested_height: self.requested_height,
            reloaded: self.reloaded.clone(),
            lost: Some(reason),
            hidden: self.hidden,
        }
    }

    /// Closes its view for hibernation (#29) and returns what the Surface needs to come back:
    /// what it keeps (hidden), the picture of what it last showed, and when it was last shown.
    pub(super) fn release(self) -> (Kept, Option<WindowPixels>, Instant) {
        let kept = Kept {
            window: None,
            requested_height: self.requested_height,
            reloaded: self.reloaded,
            lost: None,
            hidden: true,
        };
        self.view.close();
        (kept, self.picture, self.last_shown)
    }
}
