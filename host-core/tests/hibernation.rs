//! The kernel's part of hibernation (#29): a hibernated Surface stays open under its key;
//! patches meanwhile leave only the latest state, which its new page gets after its `ready`
//! (R-UI-3); a wake counts toward neither the reopen budget nor the reload-loop bound; an open
//! the host cannot give a web process is refused `too_many_live_surfaces` naming the limit; and
//! `max_surfaces` (256 by default) counts open Surfaces, hibernated ones included.
#![allow(clippy::unwrap_used)]

mod support;

use lineup_host_core::{
    Clock, CloseReason, Effect, Limits, Message, PageInput, Session, Sessions, SurfaceKey,
};
use serde_json::{json, Value};
use support::{config, envelope, Still};

fn session(limits: Limits) -> Session {
    Session::new(config(limits), Box::new(Still)).unwrap()
}

fn open(s: &mut Session, id: &str, instance: &str) -> Vec<Effect> {
    s.handle_inbound(&envelope(
        id,
        "ui.open",
        json!({"instance_id": instance, "state": {"n": 0},
               "app": {"id": "com.example.n", "version": "1.0.0", "html": "<p></p>", "css": "", "js": ""}}),
    ))
}

fn opened(fx: &[Effect]) -> SurfaceKey {
    match fx {
        [Effect::Open(open)] => open.key.clone(),
        other => panic!("expected one open, got {other:?}"),
    }
}

const READY: &str = r#"{"namespace":"lineup.surface.v1","type":"ready","document":"0123456789abcdef0123456789abcdef"}"#;
const READY_NEW: &str = r#"{"namespace":"lineup.surface.v1","type":"ready","document":"fedcba9876543210fedcba9876543210"}"#;

fn patch(s: &mut Session, id: &str, n: u32) -> Vec<Effect> {
    s.handle_inbound(&envelope(
        id,
        "ui.patch",
        json!({"instance_id": "w", "state": {"n": n}}),
    ))
}

#[test]
fn defaults_cap_open_surfaces_at_256_and_live_ones_at_16() {
    let limits = Limits::default();
    assert_eq!(limits.max_surfaces, 256);
    assert_eq!(limits.max_live_surfaces, 16);
    assert_eq!(limits.max_hibernated_bytes, 64 * 1024 * 1024);
    assert!(limits.validate().is_ok());
    let mut zero = Limits::default();
    zero.max_live_surfaces = 0;
    assert!(zero.validate().is_err(), "a live cap of 0 is refused");
}

#[test]
fn the_257th_open_of_a_session_is_refused_naming_the_limit() {
    let mut limits = Limits::default();
    // Only the open rate is lifted; every other limit is the default.
    limits.max_opens_per_window = 1000;
    let mut s = session(limits);
    for i in 0..256 {
        let fx = open(&mut s, &format!("m{i}"), &format!("s{i}"));
        assert!(
            matches!(fx.as_slice(), [Effect::Open(_)]),
            "open {i}: {fx:?}"
        );
    }
    let fx = open(&mut s, "m256", "s256");
    let Some(Effect::Send(Message::ClientError(err))) =
        fx.iter().find(|e| matches!(e, Effect::Send(_)))
    else {
        panic!("{fx:?}");
    };
    let err: Value = serde_json::from_str(&Message::ClientError(err.clone()).to_json()).unwrap();
    assert_eq!(err["payload"]["code"], "too_many_surfaces");
    assert_eq!(err["payload"]["limit"], 256);
    assert_eq!(err["payload"]["field"], "payload.instance_id");
    assert_eq!(s.surface_count(), 256);
}

#[test]
fn a_wake_keeps_the_key_and_gets_the_latest_state_after_the_new_ready_outside_every_budget() {
    let mut s = session(Limits::default());
    let key = opened(&open(&mut s, "m1", "w"));
    let _ = s.handle_bridge(&key, READY);
    // Hibernated (the host released the view); patches meanwhile are the kernel's latest.
    for (i, n) in [1, 2, 3].into_iter().enumerate() {
        let _ = patch(&mut s, &format!("p{i}"), n);
    }
    // Far more wakes than the reopen budget (3) and the reload-loop bound (5): none closes it.
    for round in 0..10 {
        let woken = s.wake(&key).expect("an open Surface wakes");
        assert_eq!(woken.key, key, "the key stays");
        let fx = s.handle_bridge(&key, READY_NEW);
        match fx.as_slice() {
            [Effect::Ready(k), Effect::DeliverState { state, .. }] => {
                assert_eq!(k, &key);
                assert_eq!(
                    state.to_json(),
                    r#"{"n":3}"#,
                    "round {round}: the latest state"
                );
            }
            other => panic!("round {round}: {other:?}"),
        }
        // The new page's first commit is a load, not a reload.
        assert!(s.handle_page(&key, PageInput::DocumentCommitted).is_empty());
    }
    assert_eq!(s.stats().woken, 10);
    assert_eq!(s.stats().reopened, 0);
    assert_eq!(s.stats().reloads, 0);
    assert_eq!(s.surface_count(), 1);
    // A stale key does not wake.
    let stale = SurfaceKey {
        instance: "gone".try_into().unwrap(),
        ..key
    };
    assert!(s.wake(&stale).is_none());
}

#[test]
fn an_open_the_host_cannot_give_a_web_process_is_refused_too_many_live_surfaces() {
    let mut t = Sessions::new(config(Limits::default()), Box::new(NoCaps)).unwrap();
    let fx = t.handle_inbound(&envelope(
        "m-open",
        "ui.open",
        json!({"instance_id": "w", "app": {"id": "com.example.n", "version": "1.0.0", "html": "", "css": "", "js": ""}}),
    ));
    let key = fx
        .effects
        .iter()
        .find_map(|e| match e {
            Effect::Open(open) => Some(open.key.clone()),
            _ => None,
        })
        .unwrap();
    let fx = t.handle_page(&key, PageInput::LiveCapReached { limit: 16 });
    assert!(fx.effects.iter().any(|e| matches!(
        e,
        Effect::Close {
            reason: CloseReason::Failed,
            ..
        }
    )));
    let sent: Vec<Value> = fx
        .effects
        .iter()
        .filter_map(|e| match e {
            Effect::Send(m) => serde_json::from_str(&m.to_json()).ok(),
            _ => None,
        })
        .collect();
    assert_eq!(sent.len(), 1, "{sent:?}");
    let error = &sent[0];
    assert_eq!(error["type"], "lineup.v1.client.error");
    assert_eq!(error["payload"]["in_reply_to"], "m-open");
    assert_eq!(error["payload"]["code"], "too_many_live_surfaces");
    assert_eq!(error["payload"]["limit"], 16);
    assert_eq!(error["payload"]["field"], "payload.instance_id");
    assert_eq!(t.surface_count(), 0, "nothing stays open");
    // Said again (a stale key), nothing more.
    assert!(t
        .handle_page(&key, PageInput::LiveCapReached { limit: 16 })
        .effects
        .is_empty());
}

struct NoCaps;
impl lineup_host_core::SessionFactory for NoCaps {
    fn clock(&mut self) -> Box<dyn Clock> {
        Box::new(Still)
    }
    fn capabilities(
        &mut self,
        _: Option<&lineup_host_core::AgentIdentity>,
    ) -> Result<Option<lineup_host_core::CapabilitySetup>, String> {
        Ok(None)
    }
}
