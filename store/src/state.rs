//! Where a call record is ([`CallState`]): the states and the one order they move in (R-CAP-5).

use std::fmt;

use serde::{Deserialize, Serialize};

/// Where a call is. It only moves forward: `received` → (`awaiting_consent` →) `running` →
/// `finished`, and from any state but `finished` straight to `finished` (refused, cancelled,
/// expired, failed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallState {
    /// Recorded; nothing decided yet.
    Received,
    /// Waiting for the user's consent.
    AwaitingConsent,
    /// The handler may be running: after a restart such a call is never run again; its outcome
    /// is unknown.
    Running,
    /// The result is stored.
    Finished,
}

impl CallState {
    /// The state as stored: `received`, `awaiting_consent`, `running`, `finished`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Received => "received",
            Self::AwaitingConsent => "awaiting_consent",
            Self::Running => "running",
            Self::Finished => "finished",
        }
    }

    /// The state named `text` as stored, if it is one.
    pub(crate) fn parse(text: &str) -> Option<Self> {
        [
            Self::Received,
            Self::AwaitingConsent,
            Self::Running,
            Self::Finished,
        ]
        .into_iter()
        .find(|state| state.as_str() == text)
    }

    /// Whether [`Calls::advance`](crate::Calls::advance) may move a record from `self` to `to`.
    pub(crate) fn may_advance_to(self, to: Self) -> bool {
        matches!(
            (self, to),
            (Self::Received, Self::AwaitingConsent | Self::Running)
                | (Self::AwaitingConsent, Self::Running)
        )
    }
}

impl fmt::Display for CallState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
