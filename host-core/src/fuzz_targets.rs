//! Entry points shared by the fuzz targets in `fuzz/` and the property tests that run them on
//! the stable toolchain: each feeds arbitrary bytes through a decoder and a [`Session`] and checks
//! the invariants that must hold for any input.

use std::time::Duration;

use crate::decode::decode;
use crate::ids::PartyId;
use crate::limits::Limits;
use crate::session::{Clock, Effect, Session, SessionConfig};
use crate::BridgeMessage;

struct Zero;

impl Clock for Zero {
    fn monotonic(&self) -> Duration {
        Duration::ZERO
    }
}

/// A fresh session with the default configuration. Its construction failing is a failure of
/// the target, not an input to skip: a target that skipped it would check nothing at all.
fn session() -> Session {
    let config = SessionConfig::new(PartyId::known("fuzz"), "out");
    match Session::new(config, Box::new(Zero)) {
        Ok(session) => session,
        Err(e) => panic!("the default session configuration was refused: {e}"),
    }
}

/// A valid `ui.open` of Surface `w`, from agent `a`.
const OPEN: &[u8] = br#"{"v":1,"id":"m","type":"lineup.v1.ui.open","conversation_id":"c","sender":{"kind":"agent","id":"a"},"payload":{"instance_id":"w","app":{"id":"com.example.w","version":"1.0.0","html":"","css":"","js":""}}}"#;

/// Decodes `data` as an inbound envelope, feeds it to a fresh session, and checks that a
/// decoded message re-encodes to JSON that decodes to the same message, and that every refusal
/// leaves the session without Surfaces.
pub fn envelope_decode(data: &[u8]) {
    let limits = Limits::default();
    if let Ok(message) = decode(data, &limits) {
        let again = decode(message.to_json().as_bytes(), &limits);
        assert_eq!(
            again.as_ref().ok(),
            Some(&message),
            "re-encoding changed the message"
        );
    }
    let mut session = session();
    let effects = session.handle_inbound(data);
    if effects.iter().any(|e| matches!(e, Effect::Rejected(_))) {
        assert_eq!(session.surfaces().count(), 0, "a refusal opened a surface");
    }
}

/// Decodes `data` (lossily as UTF-8) as a bridge message, and posts it to an open Surface: it is
/// either forwarded, dropped and counted, or a state request; never a panic. The Surface is
/// opened by a fixed, valid `ui.open`, which must yield [`Effect::Open`] first (R-UI-1).
pub fn bridge_decode(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let _ = BridgeMessage::decode(&text, &Limits::default());
    let mut session = session();
    // The Surface the message is posted to; without it the target would check nothing.
    let opened = session.handle_inbound(OPEN);
    let Some(Effect::Open(surface)) = opened.first() else {
        panic!("a valid ui.open did not open its Surface first: {opened:?}");
    };
    let surface = surface.clone();
    let before = session.stats().clone();
    let effects = session.handle_bridge(&surface.key, &text);
    let after = session.stats();
    let counted = after != &before;
    let acted = effects.iter().any(|e| {
        matches!(
            e,
            Effect::Send(_) | Effect::Resize { .. } | Effect::DeliverState { .. }
        )
    });
    assert!(
        counted || acted,
        "a bridge message was neither handled nor counted"
    );
}
