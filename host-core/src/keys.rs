//! The identities the host vouches for: a session of its table ([`SessionId`]) and one webview
//! of it ([`SurfaceKey`]: session, instance and [`Generation`]) (R-SEC-4, R-SES-1).

use std::fmt;

use crate::ids::InstanceId;

/// Counts one instance of a webview: a replaced instance gets a new generation, so messages from
/// its predecessor are recognised as stale (R-UI-6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Generation(pub(crate) u64);

impl Generation {
    /// The generation number.
    pub fn get(self) -> u64 {
        self.0
    }
}

/// The identity of one webview: its session, instance and generation. Instance ids are scoped
/// to their session (R-SES-1): two sessions may both open `w1`, and their keys differ.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SurfaceKey {
    /// The session the Surface belongs to.
    pub session: SessionId,
    /// The instance id.
    pub instance: InstanceId,
    /// The generation of that instance.
    pub generation: Generation,
}

impl fmt::Display for SurfaceKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}#{}@{}",
            self.instance, self.generation.0, self.session
        )
    }
}

/// Names one session of a host's table. Handed out in order and never reused while the table
/// lives, so a webview or a capability answer of an ended session never reaches a later one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct SessionId(pub(crate) u64);

impl SessionId {
    /// The id of a [`Session`](crate::Session) used on its own, outside a table; inside a table, the id of
    /// what the table answers itself (an envelope that belongs to no session).
    pub const STANDALONE: SessionId = SessionId(0);

    /// The number.
    pub fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "s{}", self.0)
    }
}
