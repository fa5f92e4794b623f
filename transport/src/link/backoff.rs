//! The reconnect delay of the agent link: exponential backoff with full jitter.
//!
//! The first retry waits a delay drawn uniformly from [0, 1 s]; each failed attempt doubles
//! the bound (1, 2, 4, … s) up to 60 s; a connection that stayed up 30 s resets it to 1 s.
//! Full jitter spreads the reconnects of many hosts after an agent restart instead of having
//! them all arrive on the same second. Pure: the random source is injected, so the bounds are
//! unit-tested without a clock.

use std::time::Duration;

/// The bound of the first delay.
pub(crate) const FIRST: Duration = Duration::from_secs(1);
/// The largest bound.
pub(crate) const MAX: Duration = Duration::from_secs(60);
/// A connection up this long resets the bound to [`FIRST`].
pub(crate) const RESET_AFTER: Duration = Duration::from_secs(30);

/// Exponential backoff with full jitter over a random source of uniform `u64`s.
pub(crate) struct Backoff<R> {
    bound: Duration,
    random: R,
}

impl<R: FnMut() -> u64> Backoff<R> {
    /// Starts at [`FIRST`].
    pub(crate) fn new(random: R) -> Self {
        Self {
            bound: FIRST,
            random,
        }
    }

    /// The bound the next delay is drawn under.
    pub(crate) fn bound(&self) -> Duration {
        self.bound
    }

    /// The delay before the next attempt, uniform in [0, bound]; then doubles the bound, up to
    /// [`MAX`].
    pub(crate) fn next_delay(&mut self) -> Duration {
        let bound = self.bound;
        self.bound = (bound * 2).min(MAX);
        let millis = bound.as_millis();
        let draw = u128::from((self.random)());
        // Uniform over [0, bound] in milliseconds, both ends included.
        let delay = draw * (millis + 1) / (u128::from(u64::MAX) + 1);
        Duration::from_millis(u64::try_from(delay).unwrap_or(u64::MAX))
    }

    /// A connection ended after being up `up`: a long one resets the bound to [`FIRST`].
    pub(crate) fn connection_ended(&mut self, up: Duration) {
        if up >= RESET_AFTER {
            self.bound = FIRST;
        }
    }
}

/// The system's random source, for the real link; `u64::MAX / 2` should it fail (the delay is
/// then half its bound, still bounded).
pub(crate) fn system_random() -> u64 {
    let mut bytes = [0u8; 8];
    match getrandom::fill(&mut bytes) {
        Ok(()) => u64::from_le_bytes(bytes),
        Err(_) => u64::MAX / 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixed(value: u64) -> impl FnMut() -> u64 {
        move || value
    }

    #[test]
    fn the_bound_doubles_from_one_second_to_sixty() {
        let mut b = Backoff::new(fixed(u64::MAX));
        let delays: Vec<u64> = (0..9).map(|_| b.next_delay().as_millis() as u64).collect();
        // The largest draw reaches the bound itself.
        assert_eq!(
            delays,
            vec![1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000, 60_000]
        );
        assert_eq!(b.bound(), MAX);
    }

    #[test]
    fn full_jitter_draws_from_zero_to_the_bound() {
        let mut low = Backoff::new(fixed(0));
        assert_eq!(low.next_delay(), Duration::ZERO);
        assert_eq!(low.next_delay(), Duration::ZERO);
        let mut half = Backoff::new(fixed(u64::MAX / 2));
        assert_eq!(half.next_delay(), Duration::from_millis(500));
        assert_eq!(half.next_delay(), Duration::from_millis(1000));
        // Any draw stays within [0, bound].
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut b = Backoff::new(move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        });
        for _ in 0..200 {
            let bound = b.bound();
            let d = b.next_delay();
            assert!(d <= bound, "{d:?} > {bound:?}");
        }
    }

    #[test]
    fn thirty_seconds_connected_resets_the_bound_and_a_shorter_connection_does_not() {
        let mut b = Backoff::new(fixed(u64::MAX));
        for _ in 0..4 {
            b.next_delay();
        }
        assert_eq!(b.bound(), Duration::from_secs(16));
        b.connection_ended(Duration::from_secs(29));
        assert_eq!(b.bound(), Duration::from_secs(16));
        b.connection_ended(RESET_AFTER);
        assert_eq!(b.bound(), FIRST);
        assert_eq!(b.next_delay(), FIRST);
    }
}
