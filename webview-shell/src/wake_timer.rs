//! [`WakeTimer`]: the one timer that wakes a host's idle event loop at its next deadline.

use std::rc::Rc;
use std::time::Instant;

use crate::platform::PlatformWakeTimer;

/// One timer that wakes an idle event loop at a deadline, by calling the function it was made
/// with (the host sends its loop a user event there). Arming it again replaces the deadline;
/// it fires once per arming. Every deadline of the host (expiry, retries, polls, hibernation,
/// the hang watchdog) goes through the earliest one armed here, so that no deadline waits
/// for other events, and no thread or periodic timer wakes an idle loop.
///
/// ## Platform-specific
/// Linux: a GLib timeout on the thread's main context, which every tao loop there runs (tao's
/// own `ControlFlow::WaitUntil` does not wake an idle loop reliably, tauri-apps/tao#988).
/// Elsewhere it is never armed ([`WakeTimer::armed`] stays `None`).
pub struct WakeTimer {
    platform: PlatformWakeTimer,
}

impl WakeTimer {
    /// A timer that calls `wake` when it fires, on the event-loop thread.
    pub fn new(wake: impl Fn() + 'static) -> Self {
        Self {
            platform: PlatformWakeTimer::new(Rc::new(wake)),
        }
    }

    /// Arms the timer for `at`, in place of the deadline armed before; `None` disarms it.
    pub fn arm(&self, at: Option<Instant>) {
        self.platform.arm(at);
    }

    /// The deadline armed and not yet passed, if any.
    pub fn armed(&self) -> Option<Instant> {
        self.platform.armed()
    }
}

impl std::fmt::Debug for WakeTimer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WakeTimer")
            .field("armed", &self.armed())
            .finish()
    }
}
