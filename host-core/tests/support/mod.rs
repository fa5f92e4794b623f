//! What several kernel test files share: a still clock, a session configuration and the
//! envelopes of conversation `c1` from agent `a1`.
#![allow(dead_code)]

use std::time::Duration;

use lineup_host_core::{Clock, Limits, PartyId, SessionConfig};
use serde_json::{json, Value};

/// A monotonic clock that never moves.
pub(crate) struct Still;

impl Clock for Still {
    fn monotonic(&self) -> Duration {
        Duration::ZERO
    }
}

/// A session configuration of client `desktop` with `limits`.
pub(crate) fn config(limits: Limits) -> SessionConfig {
    let mut config = SessionConfig::new(PartyId::try_from("desktop").unwrap(), "out");
    config.limits = limits;
    config
}

/// An envelope of `kind` (`ui.open`…) with `payload`, in conversation `c1` from agent `a1`.
pub(crate) fn envelope(id: &str, kind: &str, payload: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "v": 1, "id": id, "type": format!("lineup.v1.{kind}"), "conversation_id": "c1",
        "sender": {"kind": "agent", "id": "a1"}, "payload": payload
    }))
    .unwrap()
}
