//! The seam between the host's view table (`Views`, `host/views.rs`) and the platform's
//! Surface views: a [`ViewPort`] makes a Surface's view where the layout says, and a
//! [`PortView`] is what the host asks of one. The host's own port is [`ShellPort`]: the view
//! shell ([`Shell`], on the platform's webview or an engine brought with
//! [`SurfaceEngine`](lineup_webview_shell::SurfaceEngine)) and the parent window of child views.
//! The engine's logic (the effect interpreter, placement, hibernation, the watchdog's
//! verdicts) runs against a fake port in plain unit tests, with no display.
//!
//! A `SurfaceEngine` is one level down: it is how the shell makes a view; this port is how the
//! host asks for one, whichever engine the shell runs. An MCP App view is made by the same
//! port ([`ViewKind::McpApp`]) and is the same [`PortView`]; a view kind to come (a Servo child
//! view) is another.

use std::rc::Rc;

use lineup_host_core::LanguageTag;
use lineup_surface_runtime::{SurfaceDocument, SurfaceServer};
use lineup_webview_shell::tao::dpi::LogicalSize;
use lineup_webview_shell::tao::event::WindowEvent;
use lineup_webview_shell::tao::window::{Window, WindowId};
use lineup_webview_shell::{
    Placement, ProbeStatus, Rect, Shell, ShellError, SurfaceView, ViewEvent, WindowMaker,
    WindowPixels,
};

/// Where a new Surface view goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Place {
    /// A window of its own, with this title and inner size.
    Window {
        /// The window's title (R-SEC-5: a host-owned marker).
        title: String,
        /// Inner width, logical pixels.
        width: u32,
        /// Inner height, logical pixels.
        height: u32,
    },
    /// A child view of the port's parent window, laid out afterwards.
    Child,
}

/// Which kind of view the port makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ViewKind {
    /// A Surface's view, with its bridge ([`Shell::open_gated`]).
    Surface,
    /// An MCP App view: the host's top document, the view as its child, the relay
    /// ([`Shell::open_mcp_app`], R-MCP-7).
    McpApp,
}

/// What the host asks of the platform to make Surface views, and what it reads of the place
/// they go.
pub(crate) trait ViewPort {
    /// Makes the view (`view`: of which kind, of which server's document) at `place`;
    /// `events` gets what the view reports, and is its identity (R-SEC-4). The document is
    /// held until the isolation probe passed (R-SEC-8).
    fn open(
        &self,
        windows: &dyn WindowMaker,
        view: (ViewKind, SurfaceServer),
        place: Place,
        events: Box<dyn Fn(ViewEvent)>,
    ) -> Result<Box<dyn PortView>, ShellError>;

    /// Whether Surfaces are child views of one parent window (else windows of their own).
    fn children(&self) -> bool;

    /// The size child views are laid out in (the host's container), when they are children.
    fn child_area(&self) -> Option<(u32, u32)>;

    /// The parent window of child views.
    fn parent(&self) -> Option<&Window>;

    /// The isolation probe's verdict so far (R-SEC-8).
    fn probe_status(&self) -> ProbeStatus;

    /// The host context's language (the views' configuration, else the environment's).
    fn language(&self) -> LanguageTag;

    /// The view shell behind the port, for what only the platform has (the warm pool, an
    /// engine's spin, the probe's test controls); `None` for a port without one.
    fn shell(&self) -> Option<&Shell>;
}

/// One Surface's view, as the host uses it.
pub(crate) trait PortView {
    /// The document's URL, `lineup-surface://<token>/`.
    fn url(&self) -> &str;
    /// Hands `state_json` to the page's bridge (R-UI-3).
    fn deliver_state(&self, state_json: &str) -> Result<(), ShellError>;
    /// Posts one JSON-RPC message to an MCP App view through its relay (R-MCP-7).
    fn post_to_mcp_view(&self, json: &str) -> Result<(), ShellError>;
    /// Loads the Surface's own document again (R-UI-10).
    fn restore_document(&self) -> Result<(), ShellError>;
    /// Serves and loads `document` under the same token.
    fn replace_document(&self, document: SurfaceDocument) -> Result<(), ShellError>;
    /// What the view shows on screen now.
    fn screen_pixels(&self) -> Result<WindowPixels, ShellError>;
    /// The page as rendered, as PNG bytes; `done` gets it on the loop's thread.
    fn snapshot_png(&self, done: Box<dyn FnOnce(Result<Vec<u8>, ShellError>)>);
    /// Runs `done` once the page's script thread ran a no-op (the watchdog's sign of life).
    fn ping(&self, done: Box<dyn FnOnce()>);
    /// Whether the engine reports the page's process as responsive.
    fn web_process_responsive(&self) -> bool;
    /// Ends the page's process (R-UI-12); the view then reports it.
    fn terminate_web_process(&self);
    /// Where its own window is, and its inner size (window placement).
    fn window_bounds(&self) -> Option<Rect>;
    /// How many presses the view has seen.
    fn presses(&self) -> u64;
    /// Places a child view.
    fn set_bounds(&self, bounds: Rect) -> Result<(), ShellError>;
    /// Hides or shows the view.
    fn set_visible(&self, visible: bool);
    /// Gives the view's own window this inner size (nothing for a child view).
    fn set_window_size(&self, width: f64, height: f64);
    /// Takes a window event meant for the view's own window; `false` when it is not.
    fn handle_window_event(&self, window_id: WindowId, event: &WindowEvent<'_>) -> bool;
    /// Closes the view.
    fn close(self: Box<Self>);
    /// The platform's view, for what only it has (the standby screen, a placeholder picture,
    /// the embedder's read-back); `None` for a view of another port.
    fn surface(&self) -> Option<&SurfaceView>;
}

/// The host's port: the view shell, and the parent window when Surfaces are child views.
pub(crate) struct ShellPort {
    shell: Shell,
    parent: Option<Rc<Window>>,
}

impl ShellPort {
    /// Surface views of `shell`, child views of `parent` when there is one.
    pub(crate) fn new(shell: Shell, parent: Option<Rc<Window>>) -> Self {
        Self { shell, parent }
    }
}

impl ViewPort for ShellPort {
    fn open(
        &self,
        windows: &dyn WindowMaker,
        (kind, server): (ViewKind, SurfaceServer),
        place: Place,
        events: Box<dyn Fn(ViewEvent)>,
    ) -> Result<Box<dyn PortView>, ShellError> {
        let placement = match place {
            Place::Window {
                title,
                width,
                height,
            } => Placement::Window {
                title,
                width,
                height,
            },
            Place::Child => Placement::Child {
                parent: self.parent.as_deref().ok_or(ShellError::NoContainer)?,
                bounds: Rect::default(),
            },
        };
        let view = match kind {
            ViewKind::Surface => self.shell.open_gated(windows, server, placement, events)?,
            ViewKind::McpApp => self
                .shell
                .open_mcp_app(windows, server, placement, events)?,
        };
        Ok(Box::new(view))
    }

    fn children(&self) -> bool {
        self.parent.is_some()
    }

    fn child_area(&self) -> Option<(u32, u32)> {
        let size = lineup_webview_shell::child_area_size(self.parent.as_deref()?);
        Some((size.width, size.height))
    }

    fn parent(&self) -> Option<&Window> {
        self.parent.as_deref()
    }

    fn probe_status(&self) -> ProbeStatus {
        self.shell.probe_status()
    }

    fn language(&self) -> LanguageTag {
        self.shell.config().effective_language()
    }

    fn shell(&self) -> Option<&Shell> {
        Some(&self.shell)
    }
}

impl PortView for SurfaceView {
    fn url(&self) -> &str {
        SurfaceView::url(self)
    }
    fn deliver_state(&self, state_json: &str) -> Result<(), ShellError> {
        SurfaceView::deliver_state(self, state_json)
    }
    fn post_to_mcp_view(&self, json: &str) -> Result<(), ShellError> {
        SurfaceView::post_to_mcp_view(self, json)
    }
    fn restore_document(&self) -> Result<(), ShellError> {
        SurfaceView::restore_document(self)
    }
    fn replace_document(&self, document: SurfaceDocument) -> Result<(), ShellError> {
        SurfaceView::replace_document(self, document)
    }
    fn screen_pixels(&self) -> Result<WindowPixels, ShellError> {
        SurfaceView::screen_pixels(self)
    }
    fn snapshot_png(&self, done: Box<dyn FnOnce(Result<Vec<u8>, ShellError>)>) {
        SurfaceView::snapshot_png(self, done)
    }
    fn ping(&self, done: Box<dyn FnOnce()>) {
        SurfaceView::ping(self, done)
    }
    fn web_process_responsive(&self) -> bool {
        SurfaceView::web_process_responsive(self)
    }
    fn terminate_web_process(&self) {
        SurfaceView::terminate_web_process(self)
    }
    fn window_bounds(&self) -> Option<Rect> {
        SurfaceView::window_bounds(self)
    }
    fn presses(&self) -> u64 {
        SurfaceView::presses(self)
    }
    fn set_bounds(&self, bounds: Rect) -> Result<(), ShellError> {
        SurfaceView::set_bounds(self, bounds)
    }
    fn set_visible(&self, visible: bool) {
        SurfaceView::set_visible(self, visible)
    }
    fn set_window_size(&self, width: f64, height: f64) {
        if let Some(window) = self.window() {
            window.set_inner_size(LogicalSize::new(width, height));
        }
    }
    fn handle_window_event(&self, window_id: WindowId, event: &WindowEvent<'_>) -> bool {
        SurfaceView::handle_window_event(self, window_id, event)
    }
    fn close(self: Box<Self>) {
        SurfaceView::close(*self)
    }
    fn surface(&self) -> Option<&SurfaceView> {
        Some(self)
    }
}
