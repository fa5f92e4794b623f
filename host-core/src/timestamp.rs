//! RFC 3339 timestamps, as `app.call`'s `expires_at` and the components' `expires_at` carry
//! them (R-CAP-4, R-STD-7).

use std::fmt;

use serde::{Deserialize, Serialize};

/// An RFC 3339 timestamp such as `2026-08-02T12:10:00Z` (R-CAP-4 `expires_at`).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Timestamp(#[serde(with = "time::serde::rfc3339")] time::OffsetDateTime);

impl Timestamp {
    /// The RFC 3339 timestamp `text`, if it is one.
    pub(crate) fn parse(text: &str) -> Option<Self> {
        time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339)
            .ok()
            .map(Self)
    }

    /// Seconds since the Unix epoch.
    pub fn unix_seconds(&self) -> i64 {
        self.0.unix_timestamp()
    }

    /// The instant `secs` seconds after the Unix epoch; `None` outside the years -9999..=9999.
    pub fn from_unix_seconds(secs: i64) -> Option<Self> {
        time::OffsetDateTime::from_unix_timestamp(secs)
            .ok()
            .map(Self)
    }

    /// The instant `millis` milliseconds after the Unix epoch; `None` outside the years
    /// -9999..=9999.
    pub fn from_unix_millis(millis: i64) -> Option<Self> {
        time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(millis) * 1_000_000)
            .ok()
            .map(Self)
    }

    /// The instant `after` later than `self`; `None` past the year 9999.
    pub fn checked_add(&self, after: std::time::Duration) -> Option<Self> {
        let after = time::Duration::try_from(after).ok()?;
        self.0.checked_add(after).map(Self)
    }

    /// How long from `self` until `later`; zero when `later` is not after `self`.
    pub fn until(&self, later: &Timestamp) -> std::time::Duration {
        let diff = later.0 - self.0;
        std::time::Duration::try_from(diff).unwrap_or_default()
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

impl fmt::Debug for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self
            .0
            .format(&time::format_description::well_known::Rfc3339)
        {
            Ok(s) => f.write_str(&s),
            Err(_) => write!(f, "{}", self.0.unix_timestamp()),
        }
    }
}
