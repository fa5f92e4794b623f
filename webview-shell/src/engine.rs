//! A web engine other than the platform's own, brought by a crate of its own (the Servo backend,
//! `engines/servo`): the seam [`Shell::start_with_engine`](crate::Shell::start_with_engine)
//! shows Surfaces through, so that the host's sessions, capabilities and watchdog run on it
//! unchanged.
//!
//! The engine names its own types behind these two traits; the shell makes each Surface's
//! window (tao) and hands it over, so the engine never needs the event loop's user-event type.

use std::time::Duration;

use lineup_surface_runtime::{SurfaceDocument, SurfaceServer};
use tao::event::WindowEvent;
use tao::window::{Window, WindowId};

use crate::config::{Rect, ViewConfig};
use crate::event::ViewEvent;
use crate::hardening::Hardening;
use crate::WindowPixels;

/// A web engine that shows Surfaces in windows of their own, in place of the platform's.
///
/// The engine's isolation may be weaker than the platform's (no per-Surface storage partition,
/// no process sandbox): [`SurfaceEngine::hardening`] says what it really gives, read back from
/// the engine, and the host starts such an engine only through its `dangerous()` builder.
///
/// Every method runs on the event-loop thread.
pub trait SurfaceEngine {
    /// The engine's name, for logs and errors (`"servo"`).
    fn name(&self) -> &str;

    /// Called once, before any view opens, with the closure that wakes the event loop: the
    /// engine calls it from any thread when it has work, and the loop then calls
    /// [`SurfaceEngine::spin`].
    fn set_waker(&self, wake: Box<dyn Fn() + Send + Sync>);

    /// Runs the engine's fail-closed isolation probe (R-SEC-8) to its verdict, waiting at most
    /// `timeout`: `Ok` once every check passed, else why not. No Surface is served before.
    fn probe(&self, timeout: Duration) -> Result<(), String>;

    /// The hardening every view of this engine gets, read back from the engine.
    fn hardening(&self) -> Hardening;

    /// Shows `server`'s document in `window` (made by the shell, hidden until the view shows
    /// it); `events` gets what the view reports, on this thread, from
    /// [`SurfaceEngine::spin`]. The view is the identity of every event (R-SEC-4).
    fn open(
        &self,
        window: Window,
        server: SurfaceServer,
        config: &ViewConfig,
        events: Box<dyn Fn(ViewEvent)>,
    ) -> Result<Box<dyn EngineView>, String>;

    /// Lets the engine do its pending work and hand out its views' events; the shell calls it
    /// on every turn of the loop and whenever the engine woke it.
    fn spin(&self);
}

/// One Surface's view in a [`SurfaceEngine`]: what [`SurfaceView`](crate::SurfaceView) asks of
/// the platform's own views.
pub trait EngineView {
    /// The document's URL, `lineup-surface://<token>/`.
    fn url(&self) -> &str;

    /// Hands `state_json`, one JSON object, to the bridge's entry point with the view's
    /// delivery key (R-UI-3, R-UI-6).
    fn deliver_state(&self, state_json: &str) -> Result<(), String>;

    /// Loads the Surface's own document again (R-UI-10).
    fn restore_document(&self) -> Result<(), String>;

    /// Serves `document` from now on under the same token, and loads it.
    fn replace_document(&self, document: SurfaceDocument) -> Result<(), String>;

    /// The page as rendered, as PNG bytes; `done` gets it on the event-loop thread.
    fn snapshot_png(&self, done: Box<dyn FnOnce(Result<Vec<u8>, String>)>);

    /// What the view's window shows now.
    fn screen_pixels(&self) -> Result<WindowPixels, String>;

    /// Evaluates a no-op script in the page's script thread; `done` runs once it ran (the hang
    /// watchdog's sign of life, R-UI-12).
    fn ping(&self, done: Box<dyn FnOnce()>);

    /// Ends what runs the view's page, when the engine can; the view then reports
    /// [`ViewEvent::Unresponsive`].
    fn terminate(&self);

    /// How many presses (buttons, keys) reached the view since it was made.
    fn presses(&self) -> u64;

    /// The window the view shows in.
    fn window(&self) -> &Window;

    /// Passes a tao window event of the view's window to the page (pointer, keys, focus);
    /// returns whether the event was the view's. A close request is the shell's.
    fn handle_window_event(&self, window_id: WindowId, event: &WindowEvent<'_>) -> bool;

    /// Resizes the page to `bounds` (logical pixels); the shell moves the window.
    fn resize(&self, bounds: Rect);
}
