//! When the host's event loop ends: at a shutdown ([`HostHandle::shutdown`]), once no Surface
//! is open after [`HostHandle::shutdown_when_last_closed`], or when the user closes the parent
//! window of the child views (R-UI-5), unless a kiosk ignores that
//! ([`HostBuilder::ignore_parent_close`]).
//!
//! [`HostHandle::shutdown`]: super::HostHandle::shutdown
//! [`HostHandle::shutdown_when_last_closed`]: super::HostHandle::shutdown_when_last_closed
//! [`HostBuilder::ignore_parent_close`]: super::HostBuilder::ignore_parent_close

/// Whether the host's loop ends, and what ends it.
///
/// Invariants: once the loop ends it stays ended; a close of the parent window ends it only
/// when such closes are not ignored.
#[derive(Debug)]
pub(super) struct Exit {
    /// The loop ends at this turn.
    now: bool,
    /// The loop ends once no Surface is open.
    when_empty: bool,
    /// A close request for the parent window is ignored (a kiosk stays up).
    ignore_parent_close: bool,
}

impl Exit {
    /// The loop runs; a close of the parent window is ignored when `ignore_parent_close`.
    pub(super) fn new(ignore_parent_close: bool) -> Self {
        Self {
            now: false,
            when_empty: false,
            ignore_parent_close,
        }
    }

    /// The loop ends at this turn.
    pub(super) fn now(&mut self) {
        self.now = true;
    }

    /// The loop ends once no Surface is open.
    pub(super) fn when_empty(&mut self) {
        self.when_empty = true;
    }

    /// Whether the loop ends.
    pub(super) fn ends(&self) -> bool {
        self.now
    }

    /// Whether the loop is to end at this turn because no Surface is open (`empty` asks): it
    /// was asked to then, and does not end already.
    pub(super) fn ends_when(&self, empty: impl FnOnce() -> bool) -> bool {
        self.when_empty && !self.now && empty()
    }

    /// Whether the user's close of the parent window ends the loop.
    pub(super) fn on_parent_close(&self) -> bool {
        !self.ignore_parent_close
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_loop_ends_once_asked_and_stays_ended_and_a_kiosk_ignores_the_parent_close() {
        let mut exit = Exit::new(false);
        assert!(!exit.ends() && exit.on_parent_close());
        assert!(!exit.ends_when(|| true), "not asked to end when empty");
        exit.when_empty();
        assert!(!exit.ends_when(|| false), "a Surface is open");
        assert!(exit.ends_when(|| true));
        exit.now();
        assert!(exit.ends());
        assert!(!exit.ends_when(|| true), "it ends already");
        exit.when_empty();
        assert!(exit.ends(), "it stays ended");
        assert!(!Exit::new(true).on_parent_close());
    }
}
