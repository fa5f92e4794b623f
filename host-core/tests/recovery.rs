//! Recovery of lost Surfaces through the public `Session` API, on a fake clock (R-UI-12): a
//! crashed or hung Surface is reopened in place with its last state, silently, up to
//! `Limits::max_reopens_per_window` times per `Limits::reopen_window`; then closed with its reason
//! upstream. A Surface ended at its memory ceiling is never reopened.
#![allow(clippy::unwrap_used)]

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use lineup_host_core::{
    Clock, CloseReason, Effect, GoneReason, Limits, Message, PageInput, PartyId, Session,
    SessionConfig, SurfaceKey, UsageError,
};
use serde_json::{json, Value};

#[derive(Clone, Default)]
struct FakeClock(Rc<Cell<Duration>>);

impl Clock for FakeClock {
    fn monotonic(&self) -> Duration {
        self.0.get()
    }
}

impl FakeClock {
    fn set(&self, seconds: f64) {
        self.0.set(Duration::from_secs_f64(seconds));
    }
}

const READY: &str = r#"{"namespace":"lineup.surface.v1","type":"ready","document":"0123456789abcdef0123456789abcdef"}"#;

fn session() -> (Session, FakeClock) {
    let clock = FakeClock::default();
    let config = SessionConfig::new(PartyId::try_from("desktop").unwrap(), "out");
    (
        Session::new(config, Box::new(clock.clone())).unwrap(),
        clock,
    )
}

fn envelope(id: &str, kind: &str, payload: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "v": 1, "id": id, "type": format!("lineup.v1.{kind}"), "conversation_id": "c1",
        "sender": {"kind": "agent", "id": "a1"}, "payload": payload
    }))
    .unwrap()
}

fn app(html: &str) -> Value {
    json!({"id": "com.example.w", "name": "W", "version": "1.0.0", "html": html, "css": "",
           "js": ""})
}

/// Opens `instance` with `state` and lets its page say `ready`; returns its key.
fn open_ready(session: &mut Session, instance: &str, state: Value) -> SurfaceKey {
    let fx = session.handle_inbound(&envelope(
        &format!("open-{instance}"),
        "ui.open",
        json!({"instance_id": instance, "app": app("<p>w</p>"), "state": state}),
    ));
    let [Effect::Open(open)] = fx.as_slice() else {
        panic!("expected one open: {fx:?}")
    };
    let key = open.key.clone();
    session.handle_bridge(&key, READY);
    key
}

fn sent(effects: &[Effect]) -> Vec<&Message> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Send(m) => Some(m),
            _ => None,
        })
        .collect()
}

/// The new key of a reopen, checking everything else about it.
fn reopened(effects: &[Effect], old: &SurfaceKey, why: GoneReason) -> SurfaceKey {
    let [Effect::Reopen {
        old: o,
        open,
        reason,
    }] = effects
    else {
        panic!("expected exactly one reopen and nothing upstream: {effects:?}")
    };
    assert_eq!((o, *reason), (old, why));
    assert_eq!(open.key.instance, old.instance);
    assert!(open.key.generation > old.generation, "a new generation");
    assert_eq!(open.app.id.as_str(), "com.example.w");
    open.key.clone()
}

fn close_reason(effects: &[Effect], key: &SurfaceKey) -> Option<CloseReason> {
    effects.iter().find_map(|e| match e {
        Effect::Close { key: k, reason } if k == key => Some(reason.clone()),
        _ => None,
    })
}

fn upstream_close(effects: &[Effect]) -> Vec<Value> {
    sent(effects)
        .into_iter()
        .map(|m| serde_json::from_str::<Value>(&m.to_json()).unwrap())
        .filter(|m| m["type"] == "lineup.v1.ui.event" && m["payload"]["event"] == "close")
        .map(|m| m["payload"].clone())
        .collect()
}

#[test]
fn r_ui_12_a_crashed_surface_is_reopened_silently_and_gets_its_last_state() {
    let (mut session, _clock) = session();
    let key = open_ready(&mut session, "w1", json!({"n": 1}));
    session.handle_inbound(&envelope(
        "p1",
        "ui.patch",
        json!({"instance_id": "w1", "state": {"n": 2}}),
    ));
    let fx = session.handle_page(&key, PageInput::Lost(GoneReason::Crashed));
    let new = reopened(&fx, &key, GoneReason::Crashed);
    assert!(session.is_current(&new) && !session.is_current(&key));
    assert_eq!(session.stats().reopened, 1);
    // A patch while the new page loads waits for its `ready` (R-UI-3) …
    let fx = session.handle_inbound(&envelope(
        "p2",
        "ui.patch",
        json!({"instance_id": "w1", "state": {"n": 3}}),
    ));
    assert!(fx.is_empty(), "nothing delivered before ready: {fx:?}");
    // … and the old page's late messages reach nobody (R-UI-6).
    let fx = session.handle_bridge(
        &key,
        r#"{"namespace":"lineup.surface.v1","type":"event","event":"late","data":{}}"#,
    );
    assert!(matches!(fx.as_slice(), [Effect::Dropped { .. }]), "{fx:?}");
    let fx = session.handle_bridge(&new, READY);
    let delivered: Vec<String> = fx
        .iter()
        .filter_map(|e| match e {
            Effect::DeliverState { key, state } if *key == new => Some(state.to_json()),
            _ => None,
        })
        .collect();
    assert_eq!(delivered, vec![r#"{"n":3}"#.to_owned()]);
    // The new page's first commit is its load, not a reload (R-UI-10).
    assert!(session
        .handle_page(&new, PageInput::DocumentCommitted)
        .is_empty());
}

#[test]
fn r_ui_12_three_reopens_within_sixty_seconds_then_closed_crashed_upstream() {
    let (mut session, clock) = session();
    let mut key = open_ready(&mut session, "w1", json!({}));
    for at in [0.0, 10.0, 20.0] {
        clock.set(at);
        let fx = session.handle_page(&key, PageInput::Lost(GoneReason::Crashed));
        key = reopened(&fx, &key, GoneReason::Crashed);
        session.handle_bridge(&key, READY);
    }
    clock.set(59.9);
    let fx = session.handle_page(&key, PageInput::Lost(GoneReason::Crashed));
    assert_eq!(
        close_reason(&fx, &key),
        Some(CloseReason::Gone(GoneReason::Crashed))
    );
    assert_eq!(
        upstream_close(&fx),
        vec![json!({"instance_id": "w1", "event": "close", "data": {"reason": "crashed"}})]
    );
    assert_eq!(session.surface_count(), 0);
    assert_eq!(session.stats().reopened, 3);
    // Once closed, a late loss report of it changes nothing.
    assert!(session
        .handle_page(&key, PageInput::Lost(GoneReason::Crashed))
        .is_empty());
}

#[test]
fn r_ui_12_the_budget_slides_a_loss_sixty_seconds_after_the_first_reopen_is_reopened() {
    let (mut session, clock) = session();
    let mut key = open_ready(&mut session, "w1", json!({}));
    for at in [0.0, 30.0, 40.0] {
        clock.set(at);
        key = reopened(
            &session.handle_page(&key, PageInput::Lost(GoneReason::Crashed)),
            &key,
            GoneReason::Crashed,
        );
    }
    clock.set(60.0);
    key = reopened(
        &session.handle_page(&key, PageInput::Lost(GoneReason::Unresponsive)),
        &key,
        GoneReason::Unresponsive,
    );
    clock.set(89.0);
    let fx = session.handle_page(&key, PageInput::Lost(GoneReason::Unresponsive));
    assert_eq!(
        upstream_close(&fx),
        vec![json!({"instance_id": "w1", "event": "close", "data": {"reason": "unresponsive"}})]
    );
}

#[test]
fn r_ui_12_memory_is_never_reopened() {
    let (mut session, _clock) = session();
    let key = open_ready(&mut session, "w1", json!({}));
    let fx = session.handle_page(&key, PageInput::Lost(GoneReason::Memory));
    assert_eq!(
        close_reason(&fx, &key),
        Some(CloseReason::Gone(GoneReason::Memory))
    );
    assert_eq!(
        upstream_close(&fx),
        vec![json!({"instance_id": "w1", "event": "close", "data": {"reason": "memory"}})]
    );
    assert!(!fx.iter().any(|e| matches!(e, Effect::Reopen { .. })));
    assert_eq!(session.stats().reopened, 0);
}

#[test]
fn r_ui_12_each_surface_has_its_own_budget_and_a_replacing_open_starts_a_new_one() {
    let (mut session, _clock) = session();
    let mut a = open_ready(&mut session, "a", json!({}));
    let b = open_ready(&mut session, "b", json!({}));
    for _ in 0..3 {
        a = reopened(
            &session.handle_page(&a, PageInput::Lost(GoneReason::Crashed)),
            &a,
            GoneReason::Crashed,
        );
    }
    // `b` lost nothing so far: its budget is whole.
    reopened(
        &session.handle_page(&b, PageInput::Lost(GoneReason::Crashed)),
        &b,
        GoneReason::Crashed,
    );
    // A `ui.open` of `a` replaces it with another app, whose budget is new.
    let fx = session.handle_inbound(&envelope(
        "open-a2",
        "ui.open",
        json!({"instance_id": "a", "app": app("<p>a2</p>")}),
    ));
    let [Effect::Replace { open, .. }] = fx.as_slice() else {
        panic!("{fx:?}")
    };
    let a2 = open.key.clone();
    reopened(
        &session.handle_page(&a2, PageInput::Lost(GoneReason::Crashed)),
        &a2,
        GoneReason::Crashed,
    );
}

#[test]
fn r_ui_12_with_a_budget_of_zero_a_crash_closes_at_once() {
    let clock = FakeClock::default();
    let mut config = SessionConfig::new(PartyId::try_from("desktop").unwrap(), "out");
    config.limits.max_reopens_per_window = 0;
    let mut session = Session::new(config, Box::new(clock)).unwrap();
    let key = open_ready(&mut session, "w1", json!({}));
    let fx = session.handle_page(&key, PageInput::Lost(GoneReason::Crashed));
    assert_eq!(
        close_reason(&fx, &key),
        Some(CloseReason::Gone(GoneReason::Crashed))
    );
}

#[test]
fn a_reopen_window_of_zero_is_refused() {
    let mut limits = Limits::default();
    limits.reopen_window = Duration::ZERO;
    let config = {
        let mut c = SessionConfig::new(PartyId::try_from("desktop").unwrap(), "out");
        c.limits = limits;
        c
    };
    let err = Session::new(config, Box::new(FakeClock::default())).unwrap_err();
    assert!(
        matches!(
            err,
            UsageError::InvalidLimit {
                name: "reopen_window",
                ..
            }
        ),
        "{err:?}"
    );
}
