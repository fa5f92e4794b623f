//! What bounds a session's opens: how many Surfaces there are, here and on the whole host
//! (R-SES-1, R-SEC-2), and how fast they open (R-STD-17).

use std::collections::VecDeque;
use std::time::Duration;

use crate::error::{ErrorCode, ProtocolError};
use crate::limits::Limits;

/// The times of a session's recent opens and, while one message of the session table is
/// handled, how many Surfaces its other sessions hold.
///
/// Invariants: `recent` holds monotonic times in the order the opens were admitted; after
/// [`Opens::admit_rate`] it holds only opens within `Limits::open_window` of its `now`, at
/// most `Limits::max_opens_per_window`. `elsewhere` is non-zero only while one message is
/// handled ([`Opens::set_elsewhere`] before it, back to 0 after).
#[derive(Debug, Default)]
pub(crate) struct Opens {
    recent: VecDeque<Duration>,
    elsewhere: usize,
}

impl Opens {
    /// Surfaces open in the table's other sessions, for the message about to be handled.
    pub(crate) fn set_elsewhere(&mut self, open: usize) {
        self.elsewhere = open;
    }

    /// Refuses a new Surface when `here` (this session's) and those of the other sessions
    /// reach `Limits::max_surfaces`, which bounds each session and all together (R-SES-1).
    pub(crate) fn admit_count(&self, here: usize, limits: &Limits) -> Result<(), ProtocolError> {
        let total = here + self.elsewhere;
        if total < limits.max_surfaces {
            return Ok(());
        }
        let (rule, open) = if self.elsewhere > 0 {
            let open =
                format!("{total} surfaces are open on this host ({here} in this conversation)");
            ("R-SES-1", open)
        } else {
            ("R-SEC-2", format!("{total} surfaces are open"))
        };
        Err(ProtocolError::new(
            ErrorCode::TooManySurfaces,
            rule,
            format!(
                "{open}; the limit is {}; close one first",
                limits.max_surfaces
            ),
        )
        .field("payload.instance_id")
        .limit(limits.max_surfaces))
    }

    /// Counts one open at `now` (of a Surface or a component: one window, R-STD-17) against
    /// `Limits::max_opens_per_window`, or refuses it `rate_limited`, counting nothing.
    pub(crate) fn admit_rate(
        &mut self,
        now: Duration,
        limits: &Limits,
    ) -> Result<(), ProtocolError> {
        while self
            .recent
            .front()
            .is_some_and(|t| now.saturating_sub(*t) >= limits.open_window)
        {
            self.recent.pop_front();
        }
        if self.recent.len() >= limits.max_opens_per_window {
            return Err(ProtocolError::new(
                ErrorCode::RateLimited,
                "R-SEC-2",
                format!(
                    "{} opens within {:?}; the limit is {}; wait and retry",
                    self.recent.len(),
                    limits.open_window,
                    limits.max_opens_per_window
                ),
            )
            .field("payload.instance_id")
            .limit(limits.max_opens_per_window));
        }
        self.recent.push_back(now);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rate_window_slides_and_a_refusal_counts_nothing() {
        let limits = Limits {
            max_opens_per_window: 2,
            open_window: Duration::from_secs(10),
            ..Limits::default()
        };
        let mut opens = Opens::default();
        let at = Duration::from_secs;
        assert!(opens.admit_rate(at(0), &limits).is_ok());
        assert!(opens.admit_rate(at(5), &limits).is_ok());
        let refused = opens.admit_rate(at(9), &limits).unwrap_err();
        assert_eq!(refused.code, ErrorCode::RateLimited);
        assert_eq!(refused.limit, Some(2));
        // The open at 0 s left the window at 10 s; the refused one was never counted.
        assert!(opens.admit_rate(at(10), &limits).is_ok());
        assert!(opens.admit_rate(at(11), &limits).is_err());
    }

    #[test]
    fn the_count_bounds_this_session_and_the_whole_host() {
        let limits = Limits {
            max_surfaces: 3,
            ..Limits::default()
        };
        let mut opens = Opens::default();
        assert!(opens.admit_count(2, &limits).is_ok());
        assert_eq!(opens.admit_count(3, &limits).unwrap_err().rule, "R-SEC-2");
        opens.set_elsewhere(1);
        assert_eq!(opens.admit_count(2, &limits).unwrap_err().rule, "R-SES-1");
        opens.set_elsewhere(0);
        assert!(opens.admit_count(2, &limits).is_ok());
    }
}
