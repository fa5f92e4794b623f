//! A Surface's view in a [`SurfaceEngine`] the embedder brought: the window the shell made for
//! it, the engine's view in it, and the close request the shell reports itself.

use std::rc::Rc;

use crate::windows::WindowMaker;
use lineup_surface_runtime::{SurfaceDocument, SurfaceServer};
use tao::dpi::{LogicalPosition, LogicalSize};
use tao::event::WindowEvent;
use tao::window::{Window, WindowBuilder, WindowId};

use crate::config::{Placement, Rect, ViewConfig};
use crate::engine::{EngineView, SurfaceEngine};
use crate::error::ShellError;
use crate::event::ViewEvent;
use crate::hardening::Hardening;
use crate::WindowPixels;

/// One Surface shown by an engine of the embedder's.
pub(crate) struct EngineSurface {
    view: Box<dyn EngineView>,
    hardening: Hardening,
    /// The view's event closure, shared with the engine's view: a close request of the window
    /// is reported here (R-UI-5).
    events: Rc<dyn Fn(ViewEvent)>,
}

impl EngineSurface {
    /// Makes the Surface's window and has `engine` show `server`'s document in it. Only window
    /// placement: an engine's views are not child views of the embedder's window.
    pub(crate) fn open(
        engine: &dyn SurfaceEngine,
        target: &dyn WindowMaker,
        server: SurfaceServer,
        config: &ViewConfig,
        placement: Placement<'_>,
        events: Box<dyn Fn(ViewEvent)>,
    ) -> Result<Self, ShellError> {
        let Placement::Window {
            title,
            width,
            height,
        } = placement
        else {
            return Err(ShellError::Unsupported(
                "child views with an engine other than the platform's",
            ));
        };
        let window = target
            .build_window(
                WindowBuilder::new()
                    .with_title(title)
                    .with_inner_size(LogicalSize::new(width, height))
                    .with_resizable(false),
            )
            .map_err(|e| ShellError::Platform(format!("cannot create a window: {e}")))?;
        let events: Rc<dyn Fn(ViewEvent)> = Rc::from(events);
        let forward = Rc::clone(&events);
        let view = engine
            .open(
                window,
                server,
                config,
                Box::new(move |event| forward(event)),
            )
            .map_err(|e| ShellError::Platform(format!("{}: {e}", engine.name())))?;
        Ok(Self {
            view,
            hardening: engine.hardening(),
            events,
        })
    }

    pub(crate) fn url(&self) -> &str {
        self.view.url()
    }

    pub(crate) fn deliver_state(&self, state_json: &str) -> Result<(), ShellError> {
        self.view
            .deliver_state(state_json)
            .map_err(|reason| ShellError::InvalidState { reason })
    }

    pub(crate) fn restore_document(&self) -> Result<(), ShellError> {
        self.view.restore_document().map_err(ShellError::Platform)
    }

    pub(crate) fn replace_document(&self, document: SurfaceDocument) -> Result<(), ShellError> {
        self.view
            .replace_document(document)
            .map_err(ShellError::Platform)
    }

    pub(crate) fn snapshot_png(&self, done: Box<dyn FnOnce(Result<Vec<u8>, ShellError>)>) {
        self.view.snapshot_png(Box::new(move |result| {
            done(result.map_err(ShellError::Platform))
        }));
    }

    pub(crate) fn screen_pixels(&self) -> Result<WindowPixels, ShellError> {
        self.view.screen_pixels().map_err(ShellError::Platform)
    }

    pub(crate) fn ping(&self, done: Box<dyn FnOnce()>) {
        self.view.ping(done);
    }

    pub(crate) fn terminate(&self) {
        self.view.terminate();
    }

    pub(crate) fn presses(&self) -> u64 {
        self.view.presses()
    }

    pub(crate) fn window(&self) -> &Window {
        self.view.window()
    }

    /// The window's place and inner size, in logical pixels.
    pub(crate) fn window_bounds(&self) -> Rect {
        window_bounds(self.view.window())
    }

    /// Moves and resizes the window, and the page with it.
    pub(crate) fn set_bounds(&self, bounds: Rect) {
        let window = self.view.window();
        window.set_outer_position(LogicalPosition::new(bounds.x, bounds.y));
        window.set_inner_size(LogicalSize::new(bounds.width, bounds.height));
        self.view.resize(bounds);
    }

    pub(crate) fn set_visible(&self, visible: bool) {
        self.view.window().set_visible(visible);
    }

    /// A close request of the view's window becomes `UserCloseRequested` (R-UI-5); the rest
    /// goes to the engine's view.
    pub(crate) fn handle_window_event(&self, window_id: WindowId, event: &WindowEvent<'_>) -> bool {
        if window_id != self.view.window().id() {
            return false;
        }
        if matches!(event, WindowEvent::CloseRequested) {
            (self.events)(ViewEvent::UserCloseRequested);
            return true;
        }
        self.view.handle_window_event(window_id, event)
    }

    pub(crate) fn hardening(&self) -> Hardening {
        self.hardening
    }
}

/// Where `window` is and its inner size, in logical pixels.
pub(crate) fn window_bounds(window: &Window) -> Rect {
    let scale = window.scale_factor();
    let size = window.inner_size().to_logical::<f64>(scale);
    let position = window
        .outer_position()
        .map(|p| p.to_logical::<f64>(scale))
        .unwrap_or(LogicalPosition::new(0.0, 0.0));
    Rect {
        x: position.x.round() as i32,
        y: position.y.round() as i32,
        width: size.width.max(0.0).round() as u32,
        height: size.height.max(0.0).round() as u32,
    }
}
