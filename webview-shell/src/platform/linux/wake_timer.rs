//! The host's one timer on the GLib main context that every tao loop on Linux runs: armed at the
//! earliest deadline of the host's pollers, it wakes the loop through a callback (a user event),
//! whether or not tao's `ControlFlow::WaitUntil` wakes it (tauri-apps/tao#988).

use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use gtk::glib;

/// The armed deadline and its GLib source, while one is armed.
type Armed = Rc<RefCell<Option<(Instant, glib::SourceId)>>>;

pub(crate) struct PlatformWakeTimer {
    armed: Armed,
    wake: Rc<dyn Fn()>,
}

impl PlatformWakeTimer {
    pub(crate) fn new(wake: Rc<dyn Fn()>) -> Self {
        Self {
            armed: Rc::default(),
            wake,
        }
    }

    /// Arms the timer for `at` in place of the one armed (none for `None`).
    pub(crate) fn arm(&self, at: Option<Instant>) {
        let mut armed = self.armed.borrow_mut();
        if let (Some(at), Some((current, _))) = (at, armed.as_ref()) {
            if *current == at {
                return;
            }
        }
        if let Some((_, source)) = armed.take() {
            source.remove();
        }
        let Some(at) = at else {
            return;
        };
        // Whole milliseconds, rounded up: a timer never fires before its deadline.
        let left = at.saturating_duration_since(Instant::now());
        let millis = left.as_micros().div_ceil(1000);
        let delay = Duration::from_millis(u64::try_from(millis).unwrap_or(u64::MAX));
        let state = Rc::clone(&self.armed);
        let wake = Rc::clone(&self.wake);
        let source = glib::timeout_add_local_once(delay, move || {
            // The source is gone once this returns: forget it without removing it.
            let _fired = state.borrow_mut().take();
            wake();
        });
        *armed = Some((at, source));
    }

    pub(crate) fn armed(&self) -> Option<Instant> {
        self.armed.borrow().as_ref().map(|(at, _)| *at)
    }
}

impl Drop for PlatformWakeTimer {
    fn drop(&mut self) {
        if let Some((_, source)) = self.armed.borrow_mut().take() {
            source.remove();
        }
    }
}
