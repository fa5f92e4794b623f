//! The input gate of the host's own windows (R-STD-8 (b), R-CAP-4): input is taken only once a
//! delay has passed since the last event that could have put the window under the pointer.

use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use gtk::gdk;
use gtk::glib;
use gtk::prelude::*;

/// Input is taken once `delay` has passed since the last restart; never before the first.
pub(super) struct Guard {
    delay: Duration,
    open_at: Cell<Option<Instant>>,
}

impl Guard {
    /// A guard that is closed until its first [`Guard::restart`].
    pub(super) fn new(delay: Duration) -> Self {
        Self {
            delay,
            open_at: Cell::new(None),
        }
    }

    /// Closes the gate for the delay, from now.
    pub(super) fn restart(&self, why: &str) {
        tracing::debug!(why, "guard delay restarted");
        self.open_at.set(Some(Instant::now() + self.delay));
    }

    /// Whether input is taken now.
    pub(super) fn open(&self) -> bool {
        self.open_at.get().is_some_and(|at| Instant::now() >= at)
    }

    /// Restarts the delay when `event` is a map or a focus-in of the window; returns whether
    /// it did.
    pub(super) fn restart_on_map_or_focus(&self, event: &gdk::Event) -> bool {
        match event.event_type() {
            gdk::EventType::Map => self.restart("mapped"),
            gdk::EventType::FocusChange
                if event
                    .downcast_ref::<gdk::EventFocus>()
                    .is_some_and(|f| f.is_in()) =>
            {
                self.restart("focused");
            }
            _ => return false,
        }
        true
    }
}

/// A host-owned window whose input passes a [`Guard`]: the signals [`connect`] wires to it, on
/// the window (keys, state changes, the close button) and on its view (pointer and touch).
pub(super) trait GuardedWindow: 'static {
    /// The toplevel window.
    fn window(&self) -> &gtk::Window;
    /// The view inside it.
    fn view(&self) -> &webkit2gtk::WebView;
    /// A key went down on the window.
    fn on_key_press(&self, event: &gdk::EventKey) -> glib::Propagation;
    /// A key came up on the window.
    fn on_key_release(&self, event: &gdk::EventKey) -> glib::Propagation;
    /// Any event of the window (map, focus, visibility).
    fn on_window_event(&self, event: &gdk::Event);
    /// The window manager's close button.
    fn on_close_requested(&self);
    /// A pointer button went down on the view.
    fn on_button_press(&self, event: &gdk::EventButton) -> glib::Propagation;
    /// A pointer button came up on the view.
    fn on_button_release(&self, event: &gdk::EventButton) -> glib::Propagation;
    /// A touch event on the view.
    fn on_touch(&self, event: &gdk::Event) -> glib::Propagation;
}

/// Connects the window's and the view's input and state signals of `state`, each reaching it
/// through a `Weak`, so that the handlers GTK keeps never keep the state alive.
pub(super) fn connect<S: GuardedWindow>(state: &Rc<S>) {
    connect_window(state);
    connect_view(state);
}

/// `f` on `state` while it lives; `Proceed` once it is gone.
fn through<S: 'static>(
    state: &Rc<S>,
) -> impl Fn(&dyn Fn(&S) -> glib::Propagation) -> glib::Propagation + Clone {
    let weak = Rc::downgrade(state);
    move |f: &dyn Fn(&S) -> glib::Propagation| {
        weak.upgrade()
            .map_or(glib::Propagation::Proceed, |state| f(&state))
    }
}

/// Connects the window's signals (keys, state changes, the close button) of `state`.
pub(super) fn connect_window<S: GuardedWindow>(state: &Rc<S>) {
    let with = through(state);
    let window = state.window();
    let w = with.clone();
    window.connect_key_press_event(move |_, e| w(&|s| s.on_key_press(e)));
    let w = with.clone();
    window.connect_key_release_event(move |_, e| w(&|s| s.on_key_release(e)));
    let w = with.clone();
    window.connect_event(move |_, e| {
        w(&|s| {
            s.on_window_event(e);
            glib::Propagation::Proceed
        })
    });
    let w = with.clone();
    window.connect_delete_event(move |_, _| {
        w(&|s| {
            s.on_close_requested();
            glib::Propagation::Stop
        })
    });
}

/// Connects the signals of a view in an embedder's window: keys on the view itself (the window's
/// other widgets keep theirs), and the toplevel's map and focus, which restart the guard. Returns
/// the toplevel's handler, to be disconnected when the view goes.
pub(super) fn connect_child<S: GuardedWindow>(state: &Rc<S>) -> glib::SignalHandlerId {
    let with = through(state);
    let view = state.view();
    let w = with.clone();
    view.connect_key_press_event(move |_, e| w(&|s| s.on_key_press(e)));
    let w = with.clone();
    view.connect_key_release_event(move |_, e| w(&|s| s.on_key_release(e)));
    state.window().connect_event(move |_, e| {
        with(&|s| {
            s.on_window_event(e);
            glib::Propagation::Proceed
        })
    })
}

/// Connects the view's pointer and touch signals of `state`.
pub(super) fn connect_view<S: GuardedWindow>(state: &Rc<S>) {
    let with = through(state);
    let view = state.view();
    let w = with.clone();
    view.connect_button_press_event(move |_, e| w(&|s| s.on_button_press(e)));
    let w = with.clone();
    view.connect_button_release_event(move |_, e| w(&|s| s.on_button_release(e)));
    view.connect_touch_event(move |_, e| with(&|s| s.on_touch(e)));
}
