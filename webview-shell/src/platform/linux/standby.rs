//! The standby screen on Linux: a trusted view laid over the embedder's child views in a
//! `gtk::Overlay`, so that hiding it uncovers the Surfaces and showing it covers them at once,
//! without moving any Surface's widget.

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use gtk::glib;
use gtk::prelude::*;
use tao::platform::unix::WindowExtUnix;
use tao::window::Window;

use super::trusted::{TrustedEvent, TrustedView};
use crate::error::ShellError;
use crate::standby::{status_script, StandbyScreen};

/// The standby view over `parent`'s child views.
pub(crate) struct PlatformStandby {
    view: TrustedView,
    /// Counts show and hide requests, so that a hide scheduled before a later show is void.
    turn: Rc<Cell<u64>>,
}

impl PlatformStandby {
    /// Puts the standby screen over `parent`'s content, shown; the child views go under it.
    /// Call before the first child view is created.
    pub(crate) fn new(parent: &Window, screen: &StandbyScreen) -> Result<Self, ShellError> {
        let document = screen.document()?;
        let view = TrustedView::new(
            document,
            Rc::new(|event| {
                if event == TrustedEvent::Crashed {
                    tracing::error!("the standby screen's web process ended");
                }
            }),
        )?;
        let vbox = parent.default_vbox().ok_or(ShellError::NoContainer)?;
        let fixed = super::child_container(parent)?;
        vbox.remove(&fixed);
        let overlay = gtk::Overlay::new();
        overlay.add(&fixed);
        overlay.add_overlay(view.widget());
        vbox.pack_start(&overlay, true, true, 0);
        overlay.show_all();
        Ok(Self {
            view,
            turn: Rc::new(Cell::new(0)),
        })
    }

    /// Covers the child views now.
    pub(crate) fn show(&self) {
        self.turn.set(self.turn.get() + 1);
        self.view.widget().show();
    }

    /// Uncovers the child views after `delay`, unless shown again meanwhile.
    pub(crate) fn hide_after(&self, delay: Duration) {
        let turn = self.turn.get() + 1;
        self.turn.set(turn);
        let current = Rc::clone(&self.turn);
        let widget = self.view.widget().clone();
        glib::timeout_add_local_once(delay, move || {
            if current.get() == turn {
                widget.hide();
            }
        });
    }

    /// Whether it covers the child views.
    pub(crate) fn is_shown(&self) -> bool {
        self.view.widget().is_visible()
    }

    /// Sets the status line.
    pub(crate) fn set_status(&self, status: &str) {
        self.view.evaluate(&status_script(status), Box::new(|_| {}));
    }
}
