//! The system clock as the kernel's wall clock (`expires_at`, R-CAP-4).

use std::time::{SystemTime, UNIX_EPOCH};

use lineup_host_core::{Timestamp, WallClock};

/// The system clock as the kernel's wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemWallClock;

impl WallClock for SystemWallClock {
    fn now(&self) -> Timestamp {
        let millis = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        Timestamp::from_unix_millis(millis)
            .or_else(|| Timestamp::from_unix_millis(0))
            .unwrap_or_else(unreachable_epoch)
    }
}

#[allow(clippy::panic)]
fn unreachable_epoch() -> Timestamp {
    panic!("the unix epoch is a valid timestamp")
}
