//! Where a component board's view is (R-STD-13): a host-owned toplevel of its own, as tall as
//! its boxes up to [`MAX_HEIGHT`] then scrolling, or an area of the components' layer of an
//! embedder's (or the kiosk's) window, as tall as its boxes up to the area.

use std::cell::{Cell, RefCell};

use gtk::gdk;
use gtk::glib;
use gtk::prelude::*;

use crate::config::Rect;
use crate::error::ShellError;

/// A window board's width, and the bounds of its height (then its page scrolls).
pub(super) const WIDTH: i32 = 480;
const MIN_HEIGHT: i32 = 48;
const MAX_HEIGHT: i32 = 720;

/// The view's place.
///
/// Invariant: the view is the window's only child, or a child of `layer` at `area`'s origin.
pub(super) enum Frame {
    Window(gtk::Window),
    Child {
        layer: gtk::Fixed,
        toplevel: gtk::Window,
        area: Cell<Rect>,
        /// The toplevel's handler that restarts the guards on a map, a focus or a move.
        handler: RefCell<Option<glib::SignalHandlerId>>,
    },
}

impl Frame {
    /// A new, unmapped toplevel titled `title` (the host's words) holding `view`.
    pub(super) fn window(title: &str, view: &webkit2gtk::WebView) -> Self {
        let window = gtk::Window::new(gtk::WindowType::Toplevel);
        window.set_title(title);
        window.set_default_size(WIDTH, MIN_HEIGHT);
        // Centred as it grows, so that its bottom (and a question's buttons) stay on screen.
        window.set_position(gtk::WindowPosition::CenterAlways);
        window.set_type_hint(gdk::WindowTypeHint::Dialog);
        window.set_keep_above(true);
        window.add_events(
            gdk::EventMask::VISIBILITY_NOTIFY_MASK
                | gdk::EventMask::FOCUS_CHANGE_MASK
                | gdk::EventMask::STRUCTURE_MASK,
        );
        view.set_size_request(WIDTH, MIN_HEIGHT);
        window.add(view);
        Frame::Window(window)
    }

    /// `view` in the components' layer of `parent`, at `area`, hidden until shown.
    pub(super) fn child(
        parent: &tao::window::Window,
        area: Rect,
        view: &webkit2gtk::WebView,
    ) -> Result<Self, ShellError> {
        use tao::platform::unix::WindowExtUnix;
        let layer = super::layers::component_layer(parent)?;
        layer.put(view, area.x, area.y);
        view.set_size_request(pixels(area.width), MIN_HEIGHT.min(pixels(area.height)));
        let toplevel = parent.gtk_window().clone().upcast::<gtk::Window>();
        Ok(Frame::Child {
            layer,
            toplevel,
            area: Cell::new(area),
            handler: RefCell::new(None),
        })
    }

    /// The width the board's boxes are laid out at.
    pub(super) fn width(&self) -> u32 {
        match self {
            Frame::Window(_) => WIDTH.unsigned_abs(),
            Frame::Child { area, .. } => area.get().width,
        }
    }

    /// The toplevel window the view is in.
    pub(super) fn toplevel(&self) -> &gtk::Window {
        match self {
            Frame::Window(window) => window,
            Frame::Child { toplevel, .. } => toplevel,
        }
    }

    /// Keeps `handler` (of the toplevel) to disconnect when the frame goes; a window's own
    /// handlers go with it.
    pub(super) fn keep_handler(&self, id: glib::SignalHandlerId) {
        if let Frame::Child { handler, .. } = self {
            handler.replace(Some(id));
        }
    }

    /// Whether the view is in an embedder's window.
    pub(super) fn is_child(&self) -> bool {
        matches!(self, Frame::Child { .. })
    }

    /// Sizes `view` to the boxes' `height` (its present height when `None`), within the bounds.
    pub(super) fn fit(&self, view: &webkit2gtk::WebView, height: Option<f64>) {
        let height = match height.filter(|h| h.is_finite()) {
            // Whole pixels within the bounds: the cast cannot overflow.
            #[allow(clippy::cast_possible_truncation)]
            Some(h) => h.ceil().clamp(0.0, f64::from(i32::MAX)) as i32,
            None => view.size_request().1,
        };
        match self {
            Frame::Window(window) => {
                let height = height.clamp(MIN_HEIGHT, MAX_HEIGHT);
                if view.size_request().1 != height {
                    view.set_size_request(WIDTH, height);
                    window.resize(WIDTH, height);
                }
            }
            Frame::Child { area, .. } => {
                let area = area.get();
                let height = height.clamp(1, pixels(area.height).max(1));
                view.set_size_request(pixels(area.width), height);
            }
        }
    }

    /// Shows the view the first time: a window mapped and raised, taking the keyboard; a view
    /// in a parent without taking it (the user clicks or tabs into it).
    pub(super) fn show(&self, view: &webkit2gtk::WebView) {
        match self {
            Frame::Window(window) => {
                window.show_all();
                window.present();
                view.grab_focus();
            }
            Frame::Child { .. } => view.show(),
        }
    }

    /// Hides the view (a window is unmapped).
    pub(super) fn hide(&self, view: &webkit2gtk::WebView) {
        match self {
            Frame::Window(window) => window.hide(),
            Frame::Child { .. } => view.hide(),
        }
    }

    /// Moves a view in a parent to `area`; returns whether its width changed. Nothing for a
    /// window (returns `false`).
    pub(super) fn set_area(&self, view: &webkit2gtk::WebView, to: Rect) -> bool {
        let Frame::Child { layer, area, .. } = self else {
            return false;
        };
        let widened = area.replace(to).width != to.width;
        layer.move_(view, to.x, to.y);
        self.fit(view, None);
        widened
    }

    /// Takes the view out: a window destroyed, a child removed from the layer and the
    /// toplevel's handler disconnected.
    #[allow(unsafe_code)]
    pub(super) fn tear_down(&self, view: &webkit2gtk::WebView) {
        match self {
            Frame::Window(window) => {
                window.hide();
                // SAFETY: the window is this board's own toplevel; nothing else holds it but
                // GTK and the signal handlers connected to it, which reach the board through a
                // `Weak` that no longer upgrades once the board is dropped, so no Rust code uses
                // the widget after it is destroyed.
                unsafe { window.destroy() };
            }
            Frame::Child {
                layer,
                toplevel,
                handler,
                ..
            } => {
                if let Some(handler) = handler.take() {
                    toplevel.disconnect(handler);
                }
                layer.remove(view);
            }
        }
    }
}

/// A size in logical pixels as GTK takes it.
fn pixels(value: u32) -> i32 {
    i32::try_from(value).unwrap_or(i32::MAX)
}
