//! `Timestamp::now()` and `Timestamp::in_secs(n)` for an embedder writing envelopes, read from
//! the system clock here rather than in the sans-IO kernel that defines [`Timestamp`].

use std::time::Duration;

use lineup_host_core::{Timestamp, WallClock};
use lineup_webview_shell::SystemWallClock;

/// The wall clock's readings as [`Timestamp`]s: `use lineup_host::TimestampExt;` and write
/// `Timestamp::now()` or `Timestamp::in_secs(60)` (an `expires_at` a minute from now).
///
/// ```
/// use lineup_host::TimestampExt;
/// use lineup_host_core::Timestamp;
/// let now = Timestamp::now();
/// let later = Timestamp::in_secs(60);
/// assert!(later.unix_seconds() - now.unix_seconds() >= 59);
/// assert!(later.to_string().ends_with('Z'));
/// ```
pub trait TimestampExt {
    /// Now, from the system clock, to the millisecond.
    fn now() -> Timestamp;
    /// `secs` seconds from now (now itself, should that pass the year 9999).
    fn in_secs(secs: u64) -> Timestamp;
}

impl TimestampExt for Timestamp {
    fn now() -> Timestamp {
        SystemWallClock.now()
    }

    fn in_secs(secs: u64) -> Timestamp {
        let now = SystemWallClock.now();
        now.checked_add(Duration::from_secs(secs)).unwrap_or(now)
    }
}
