//! The activity notice on Linux: a small undecorated GTK window of the host's own, in the top
//! right corner of the screen, that takes no focus and no input and hides itself after
//! [`NOTICE_DURATION`]; a newer notice replaces the text and starts the time again. With a
//! standby screen (a kiosk) the notice is an overlay in the standby's colours instead
//! ([`PlatformStandby::show_notice`](super::PlatformStandby::show_notice)), so nothing else is
//! mapped over the kiosk window.

use std::cell::Cell;
use std::rc::Rc;

use gtk::gdk;
use gtk::glib;
use gtk::prelude::*;

use crate::notice::{ActivityNotice, NOTICE_DURATION, NOTICE_TITLE};

/// The gap between the notice and the screen's edges, in pixels.
const MARGIN: i32 = 16;

/// The notice window, made on the first notice.
#[derive(Default)]
pub(crate) struct PlatformNotice {
    shown: Option<Shown>,
}

struct Shown {
    window: gtk::Window,
    label: gtk::Label,
    /// Counts notices, so that a hide scheduled for an older one is void.
    turn: Rc<Cell<u64>>,
}

impl PlatformNotice {
    /// Shows `notice` now, replacing the one on screen.
    pub(crate) fn show(&mut self, notice: &ActivityNotice) {
        let shown = self.shown.get_or_insert_with(make);
        shown.window.set_title(&notice.window_title());
        shown.label.set_text(&notice.text());
        shown.window.resize(1, 1);
        shown.window.show_all();
        let monitor =
            gdk::Display::default().and_then(|d| d.primary_monitor().or_else(|| d.monitor(0)));
        if let Some(monitor) = monitor {
            let area = monitor.workarea();
            let (width, _) = shown.window.size();
            shown
                .window
                .move_(area.x() + area.width() - width - MARGIN, area.y() + MARGIN);
        }
        hide_later(&shown.window, &shown.turn);
    }
}

/// Hides `window` after [`NOTICE_DURATION`], unless another notice came meanwhile.
pub(super) fn hide_later(window: &impl IsA<gtk::Widget>, turn: &Rc<Cell<u64>>) {
    let mine = turn.get() + 1;
    turn.set(mine);
    let turn = Rc::clone(turn);
    let widget = window.clone().upcast::<gtk::Widget>();
    glib::timeout_add_local_once(NOTICE_DURATION, move || {
        if turn.get() == mine {
            widget.hide();
        }
    });
}

fn make() -> Shown {
    let window = gtk::Window::new(gtk::WindowType::Toplevel);
    window.set_title(NOTICE_TITLE);
    window.set_decorated(false);
    window.set_resizable(false);
    window.set_accept_focus(false);
    window.set_focus_on_map(false);
    window.set_keep_above(true);
    window.set_skip_taskbar_hint(true);
    window.set_skip_pager_hint(true);
    window.set_type_hint(gdk::WindowTypeHint::Notification);
    let label = gtk::Label::new(None);
    label.set_use_markup(false);
    label.set_xalign(0.0);
    label.set_max_width_chars(60);
    label.set_line_wrap(true);
    label.set_margin_top(10);
    label.set_margin_bottom(10);
    label.set_margin_start(14);
    label.set_margin_end(14);
    window.add(&label);
    // Close requests only hide it; it is made again for nothing.
    window.connect_delete_event(|w, _| {
        w.hide();
        glib::Propagation::Stop
    });
    Shown {
        window,
        label,
        turn: Rc::new(Cell::new(0)),
    }
}
