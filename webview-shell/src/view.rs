//! One Surface's webview: the unit of isolation (R-SEC-2), whatever the platform.

use std::cell::Cell;
use std::rc::Rc;

use lineup_surface_runtime::SurfaceDocument;
use tao::event::WindowEvent;
use tao::window::{Window, WindowId};

use crate::config::Rect;
use crate::engine_view::EngineSurface;
use crate::error::ShellError;
use crate::hardening::Hardening;
use crate::platform::PlatformView;

/// A hardened webview showing one Surface document, opened by [`Shell::open`](crate::Shell::open).
///
/// It reports what happens to the closure it was opened with (see
/// [`ViewEvent`](crate::ViewEvent)), and stays open until [`SurfaceView::close`] or drop:
/// neither the page (`window.close()`) nor the window manager closes it on its own (R-UI-5).
///
/// ## Platform-specific
/// Linux only (WebKitGTK); elsewhere [`Shell::open`](crate::Shell::open) returns
/// [`ShellError::Unsupported`].
pub struct SurfaceView {
    inner: Inner,
    _slot: Slot,
}

/// The platform's own view, or one of an engine the embedder brought.
enum Inner {
    /// Boxed: the platform's view is thousands of bytes, the engine's a few pointers.
    Platform(Box<PlatformView>),
    Engine(EngineSurface),
}

impl SurfaceView {
    pub(crate) fn new(inner: PlatformView, slot: Slot) -> Self {
        Self {
            inner: Inner::Platform(Box::new(inner)),
            _slot: slot,
        }
    }

    pub(crate) fn from_engine(inner: EngineSurface, slot: Slot) -> Self {
        Self {
            inner: Inner::Engine(inner),
            _slot: slot,
        }
    }

    /// The document's URL, `lineup-surface://<token>/`.
    pub fn url(&self) -> &str {
        match &self.inner {
            Inner::Platform(view) => view.url(),
            Inner::Engine(view) => view.url(),
        }
    }

    /// Hands `state_json`, which must be a JSON object, to the bridge of the main frame's
    /// document, which parses it with the `JSON.parse` it captured before any guest code ran, so
    /// the page's subscribers get the state exactly as sent (R-UI-3). The entry point needs this
    /// view's delivery key, which page code cannot learn (R-UI-6).
    ///
    /// An MCP App view has no bridge: [`ShellError::WrongViewKind`].
    pub fn deliver_state(&self, state_json: &str) -> Result<(), ShellError> {
        let state =
            one_json_object(state_json).map_err(|reason| ShellError::InvalidState { reason })?;
        match &self.inner {
            Inner::Platform(view) => view.deliver_state(state),
            Inner::Engine(view) => view.deliver_state(state),
        }
    }

    /// Posts `json`, one JSON object (a JSON-RPC 2.0 message of the host's), to the view of an
    /// MCP App view ([`Shell::open_mcp_app`](crate::Shell::open_mcp_app)), as its relay's world
    /// calling `postMessage(JSON.parse(json), "*")` on the view's frame: in the view,
    /// `event.source === window.parent`, which the SDK's `PostMessageTransport` checks
    /// (R-MCP-7). Messages arrive in the order they are posted; one posted before the view's
    /// frame exists (before its document committed) is lost, with a warning in the log.
    ///
    /// Refused with [`ShellError::InvalidMcpMessage`] when `json` is not one JSON object, and
    /// with [`ShellError::WrongViewKind`] for a Surface's view; nothing is posted then.
    ///
    /// ## Platform-specific
    /// Linux: `webkit_web_view_call_async_javascript_function` in the relay's script world, the
    /// text passed as an argument, never lexed as script. An embedder's engine shows no MCP App
    /// view.
    pub fn post_to_mcp_view(&self, json: &str) -> Result<(), ShellError> {
        let message =
            one_json_object(json).map_err(|reason| ShellError::InvalidMcpMessage { reason })?;
        match &self.inner {
            Inner::Platform(view) => view.post_to_mcp_view(message),
            Inner::Engine(_) => Err(ShellError::WrongViewKind {
                call: "SurfaceView::post_to_mcp_view",
                needs: "an MCP App view",
                is: "a Surface's view of an embedder's engine",
            }),
        }
    }

    /// How this view's state deliveries went: delivered, coalesced (replaced by a newer state
    /// before the page took them) and the most that waited at once.
    pub fn delivery_stats(&self) -> crate::DeliveryStats {
        match &self.inner {
            Inner::Platform(view) => view.delivery_stats(),
            // The engine delivers each state as it comes.
            Inner::Engine(_) => crate::DeliveryStats::default(),
        }
    }

    /// Loads the Surface's own document again in the main frame; the page sees a reload
    /// (R-UI-10), for example after the page replaced its document without a navigation.
    pub fn restore_document(&self) -> Result<(), ShellError> {
        match &self.inner {
            Inner::Platform(view) => view.restore_document(),
            Inner::Engine(view) => view.restore_document(),
        }
    }

    /// Serves `document` from now on, under the view's same token and URL, and loads it in the
    /// main frame: the embedder's own reload with a new bundle (a preview's hot reload). The
    /// page sees a new document; the view, its window and its web process stay.
    pub fn replace_document(&self, document: SurfaceDocument) -> Result<(), ShellError> {
        match &self.inner {
            Inner::Platform(view) => view.replace_document(document),
            Inner::Engine(view) => view.replace_document(document),
        }
    }

    /// WebKit's snapshot of the whole document (not just the visible part) as PNG bytes, taken
    /// once everything sent to the page before it has run and two animation frames have
    /// passed; `done` gets it on the event-loop thread.
    ///
    /// ## Platform-specific
    /// Linux: `webkit_web_view_get_snapshot` with the full-document region, encoded by cairo.
    pub fn snapshot_png(&self, done: impl FnOnce(Result<Vec<u8>, ShellError>) + 'static) {
        match &self.inner {
            Inner::Platform(view) => view.snapshot_png(Box::new(done)),
            Inner::Engine(view) => view.snapshot_png(Box::new(done)),
        }
    }

    /// What the view shows on screen now, read back from the display: its window's content
    /// area, or, as a child view, its area of the embedder's window (a smoke test's proof that
    /// the Surface is painted where it was placed). Let the event loop run first.
    ///
    /// ## Platform-specific
    /// Linux: the X server's image through GDK. Elsewhere [`ShellError::Unsupported`].
    pub fn screen_pixels(&self) -> Result<crate::WindowPixels, ShellError> {
        match &self.inner {
            Inner::Platform(view) => view.screen_pixels(),
            Inner::Engine(view) => view.screen_pixels(),
        }
    }

    /// Runs `done` on the event-loop thread once what the page has drawn so far is on screen;
    /// at once when the view closes while its frames are counted, never when it closes between
    /// its frames and its next draw (the standby screen comes back for a closed view anyway).
    ///
    /// ## Platform-specific
    /// Linux: two animation frames of the page, counted in a script world of the host's own (so
    /// the page cannot fake them), then the widget's next draw. An engine's view: once its
    /// page's script thread answered ([`SurfaceView::ping`]).
    pub fn when_drawn(&self, done: Box<dyn FnOnce()>) {
        match &self.inner {
            Inner::Platform(view) => view.when_drawn(done),
            Inner::Engine(view) => view.ping(done),
        }
    }

    /// Evaluates a no-op script in a script world of the host's own; `done` runs on the
    /// event-loop thread once the web process answered. The hang watchdog's sign of life
    /// (R-UI-12): the page cannot answer it for itself.
    pub fn ping(&self, done: Box<dyn FnOnce()>) {
        match &self.inner {
            Inner::Platform(view) => view.ping(done),
            Inner::Engine(view) => view.ping(done),
        }
    }

    /// Whether the engine considers the view's web process responsive.
    pub fn web_process_responsive(&self) -> bool {
        match &self.inner {
            Inner::Platform(view) => view.web_process_responsive(),
            // One process: the engine has no view of its own on it; the ping decides.
            Inner::Engine(_) => true,
        }
    }

    /// Ends the view's web process; the view reports
    /// [`ViewEvent::Unresponsive`](crate::ViewEvent::Unresponsive).
    pub fn terminate_web_process(&self) {
        match &self.inner {
            Inner::Platform(view) => view.terminate_web_process(),
            Inner::Engine(view) => view.terminate(),
        }
    }

    /// Where the view's own window is and its inner size (logical pixels), to put a reopened
    /// Surface in the same place; `None` for a child view.
    pub fn window_bounds(&self) -> Option<Rect> {
        match &self.inner {
            Inner::Platform(view) => view.window_bounds(),
            Inner::Engine(view) => Some(view.window_bounds()),
        }
    }

    /// How many presses (mouse buttons, keys, touches) reached the view since it was made: the
    /// user touched the page when it grew since the host last looked (a Surface with such input
    /// may hold what the agent never saw, so it is not hibernated).
    pub fn presses(&self) -> u64 {
        match &self.inner {
            Inner::Platform(view) => view.presses(),
            Inner::Engine(view) => view.presses(),
        }
    }

    /// Moves and resizes the view: a child view within its parent, or the view's own window.
    pub fn set_bounds(&self, bounds: Rect) -> Result<(), ShellError> {
        match &self.inner {
            Inner::Platform(view) => view.set_bounds(bounds),
            Inner::Engine(view) => {
                view.set_bounds(bounds);
                Ok(())
            }
        }
    }

    /// Shows or hides the view without closing it: a child view keeps its page, state and web
    /// process while hidden (an app switching conversations), and takes no room or input; a
    /// view's own window is hidden or shown.
    pub fn set_visible(&self, visible: bool) {
        match &self.inner {
            Inner::Platform(view) => view.set_visible(visible),
            Inner::Engine(view) => view.set_visible(visible),
        }
    }

    /// The window the view owns, when it was opened with
    /// [`Placement::Window`](crate::Placement::Window).
    pub fn window(&self) -> Option<&Window> {
        match &self.inner {
            Inner::Platform(view) => view.window(),
            Inner::Engine(view) => Some(view.window()),
        }
    }

    /// Passes a tao window event to the view; a close request for its own window becomes
    /// [`ViewEvent::UserCloseRequested`](crate::ViewEvent::UserCloseRequested). Returns whether
    /// the event was the view's.
    pub fn handle_window_event(&self, window_id: WindowId, event: &WindowEvent<'_>) -> bool {
        match &self.inner {
            Inner::Platform(view) => view.handle_window_event(window_id, event),
            Inner::Engine(view) => view.handle_window_event(window_id, event),
        }
    }

    /// The hardening in effect, as the engine reports it.
    pub fn hardening(&self) -> Hardening {
        match &self.inner {
            Inner::Platform(view) => view.hardening(),
            Inner::Engine(view) => view.hardening(),
        }
    }

    /// Closes the view: no event is delivered after this, its web process and storage go away.
    pub fn close(self) {
        let Self { inner, _slot } = self;
        match inner {
            Inner::Platform(view) => view.close(),
            // Dropping the engine's view closes it; its owner gets no event after this.
            Inner::Engine(view) => drop(view),
        }
    }
}

impl std::fmt::Debug for SurfaceView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SurfaceView")
            .field("url", &self.url())
            .finish_non_exhaustive()
    }
}

/// Counts an open view against the shell's limit while it lives.
pub(crate) struct Slot(Rc<Cell<usize>>);

impl Slot {
    pub(crate) fn take(live: &Rc<Cell<usize>>, limit: usize) -> Result<Self, ShellError> {
        if live.get() >= limit {
            return Err(ShellError::TooManySurfaces { limit });
        }
        live.set(live.get() + 1);
        Ok(Self(Rc::clone(live)))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.set(self.0.get().saturating_sub(1));
    }
}

/// Checks that `json` is one JSON object and returns its text without surrounding space, or
/// what is wrong with it.
fn one_json_object(json: &str) -> Result<&str, String> {
    // Checked without keeping a copy: a large state is copied once, into the delivery.
    let raw: &serde_json::value::RawValue =
        serde_json::from_str(json).map_err(|e| e.to_string())?;
    let text = raw.get();
    if !text.starts_with('{') {
        return Err(format!(
            "got `{}`",
            text.chars().take(16).collect::<String>()
        ));
    }
    // The parse took nothing but JSON whitespace around the value.
    Ok(json.trim_matches([' ', '\t', '\n', '\r']))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r_ui_3_state_must_be_one_json_object() {
        assert_eq!(
            one_json_object(" {\"city\":\"上海\"} ").ok(),
            Some("{\"city\":\"上海\"}")
        );
        for bad in [
            "[]",
            "1",
            "\"s\"",
            "null",
            "",
            "{",
            "{}); alert(1); ({",
            "{} {}",
            "{}\n//",
        ] {
            assert!(one_json_object(bad).is_err(), "{bad:?} must be refused");
        }
    }

    #[test]
    fn slots_count_open_views_and_free_on_drop() {
        let live = Rc::new(Cell::new(0));
        let a = Slot::take(&live, 2);
        let b = Slot::take(&live, 2);
        assert!(a.is_ok() && b.is_ok());
        assert!(matches!(
            Slot::take(&live, 2),
            Err(ShellError::TooManySurfaces { limit: 2 })
        ));
        drop(a);
        assert!(Slot::take(&live, 2).is_ok());
        assert_eq!(live.get(), 1);
    }
}
