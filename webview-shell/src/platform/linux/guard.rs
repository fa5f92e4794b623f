//! The input gate of the host's own windows (R-STD-8 (b), R-CAP-4): input is taken only once a
//! delay has passed since the last event that could have put the window under the pointer.

use std::cell::Cell;
use std::time::{Duration, Instant};

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
}
