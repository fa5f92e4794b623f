//! One window per conversation for its standard components (R-STD-13): the components'
//! views stack in open order in a column of a host-owned toplevel, transient for nothing an
//! agent controls. The stack owns the window's signals and hands each to the components: a key
//! to the one whose view has the focus, a map or focus to every one (each restarts its guard
//! delay, R-STD-8 (b)), the close button to every one (each is closed by the user). Any change
//! of the column's layout moves views under the pointer, so it restarts every guard as well.

use std::cell::RefCell;
use std::rc::{Rc, Weak};

use gtk::gdk;
use gtk::glib;
use gtk::prelude::*;

use super::guard::GuardedWindow;

/// The window's width, and the height the column grows to before it scrolls.
const WIDTH: i32 = 480;
const MAX_HEIGHT: i32 = 720;
/// The gap between two views, in pixels.
const SPACING: i32 = 1;

/// A stacked component, as the stack sees it.
pub(super) trait Stacked: GuardedWindow {
    /// Restarts its guard delay: the layout changed, or the window was mapped or focused.
    fn restart_guard(&self, why: &str);
}

pub(super) struct StackInner {
    window: gtk::Window,
    scroller: gtk::ScrolledWindow,
    column: gtk::Box,
    members: RefCell<Vec<Weak<dyn Stacked>>>,
}

/// The window a conversation's components stack in.
#[derive(Clone)]
pub(crate) struct ComponentStack(Rc<StackInner>);

impl ComponentStack {
    /// A new, unmapped stack window titled `title` (the host's own words).
    pub(crate) fn new(title: &str) -> Self {
        let window = gtk::Window::new(gtk::WindowType::Toplevel);
        window.set_title(title);
        window.set_default_size(WIDTH, -1);
        window.set_position(gtk::WindowPosition::Center);
        window.set_type_hint(gdk::WindowTypeHint::Dialog);
        window.set_keep_above(true);
        window
            .add_events(gdk::EventMask::VISIBILITY_NOTIFY_MASK | gdk::EventMask::FOCUS_CHANGE_MASK);
        let scroller = gtk::ScrolledWindow::builder()
            .hscrollbar_policy(gtk::PolicyType::Never)
            .max_content_height(MAX_HEIGHT)
            .build();
        let column = gtk::Box::new(gtk::Orientation::Vertical, SPACING);
        scroller.add(&column);
        window.add(&scroller);
        // Never `show_all`: a view is visible only once its document rendered.
        column.show();
        scroller.show();
        let inner = Rc::new(StackInner {
            window,
            scroller,
            column,
            members: RefCell::new(Vec::new()),
        });
        connect(&inner);
        Self(inner)
    }

    /// The stack's window.
    pub(super) fn window(&self) -> &gtk::Window {
        &self.0.window
    }

    /// Adds `member`'s view at the bottom of the column, hidden until it is shown.
    pub(super) fn add(&self, member: &Rc<impl Stacked + 'static>, height: i32) {
        let view = member.view();
        view.set_size_request(WIDTH, height);
        self.0.column.pack_start(view, false, false, 0);
        let weak: Weak<dyn Stacked> = Rc::downgrade(member) as Weak<dyn Stacked>;
        self.0.members.borrow_mut().push(weak);
    }

    /// Shows `view` (its document rendered) and the window, raised.
    pub(super) fn show(&self, view: &webkit2gtk::WebView) {
        view.show();
        self.0.fit();
        self.0.window.show();
        self.0.window.present();
        view.grab_focus();
        self.0.restart_all("a component was shown");
    }

    /// Sets `view`'s height to its content's.
    pub(super) fn resize(&self, view: &webkit2gtk::WebView, height: i32) {
        let (_, old) = view.size_request();
        if old != height {
            view.set_size_request(WIDTH, height);
            self.0.fit();
            self.0.restart_all("a component was resized");
        }
    }

    /// Takes `view` out of the column; the window hides once the column is empty.
    pub(super) fn remove(&self, view: &webkit2gtk::WebView) {
        if view.parent().is_some() {
            self.0.column.remove(view);
        }
        self.0
            .members
            .borrow_mut()
            .retain(|m| m.upgrade().is_some_and(|m| m.view() != view));
        if self.0.column.children().is_empty() {
            self.0.window.hide();
        } else {
            self.0.fit();
            // The keyboard stays in the stack: with the focused view gone, the last one has it.
            if self.0.focused().is_none() {
                if let Some(last) = self.0.members().last() {
                    last.view().grab_focus();
                }
            }
            self.0.restart_all("a component was removed");
        }
    }
}

impl StackInner {
    /// Sizes the window to the column of shown views, up to [`MAX_HEIGHT`] (then it scrolls):
    /// the scroller's minimum is the column's height, so the window grows to it, and a resize
    /// to nothing shrinks it back to that minimum.
    fn fit(&self) {
        let shown: Vec<i32> = self
            .column
            .children()
            .iter()
            .filter(|c| c.is_visible())
            .map(|c| c.size_request().1.max(0))
            .collect();
        let gaps = SPACING * i32::try_from(shown.len().saturating_sub(1)).unwrap_or(0);
        let height = (shown.iter().sum::<i32>() + gaps).clamp(1, MAX_HEIGHT);
        self.scroller.set_min_content_height(height);
        self.window.resize(WIDTH, height);
    }

    fn members(&self) -> Vec<Rc<dyn Stacked>> {
        self.members
            .borrow()
            .iter()
            .filter_map(Weak::upgrade)
            .collect()
    }

    fn restart_all(&self, why: &str) {
        for member in self.members() {
            member.restart_guard(why);
        }
    }

    /// The member whose view is the window's focus widget.
    fn focused(&self) -> Option<Rc<dyn Stacked>> {
        self.members().into_iter().find(|m| m.view().is_focus())
    }
}

impl Drop for StackInner {
    #[allow(unsafe_code)]
    fn drop(&mut self) {
        self.window.hide();
        // SAFETY: the window is this stack's own toplevel; its signal handlers reach the stack
        // through a `Weak` that no longer upgrades, so no Rust code uses it once destroyed.
        unsafe { self.window.destroy() };
    }
}

/// The window's signals, each reaching the stack through a `Weak`.
fn connect(inner: &Rc<StackInner>) {
    let weak = Rc::downgrade(inner);
    let with = move |f: &dyn Fn(&StackInner) -> glib::Propagation| {
        weak.upgrade()
            .map_or(glib::Propagation::Proceed, |inner| f(&inner))
    };
    let window = &inner.window;
    let w = with.clone();
    // A key goes to the component whose view has the focus; with none, nowhere.
    window.connect_key_press_event(move |_, e| {
        w(&|s| {
            s.focused()
                .map_or(glib::Propagation::Stop, |m| m.on_key_press(e))
        })
    });
    let w = with.clone();
    window.connect_key_release_event(move |_, e| {
        w(&|s| {
            s.focused()
                .map_or(glib::Propagation::Stop, |m| m.on_key_release(e))
        })
    });
    let w = with.clone();
    window.connect_event(move |_, e| {
        w(&|s| {
            for member in s.members() {
                member.on_window_event(e);
            }
            glib::Propagation::Proceed
        })
    });
    window.connect_delete_event(move |_, _| {
        with(&|s| {
            for member in s.members() {
                member.on_close_requested();
            }
            glib::Propagation::Stop
        })
    });
}
