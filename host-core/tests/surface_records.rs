//! #29 item 3 through the kernel: a hibernated Surface of a vouched session is kept in the
//! store beside the standard components' records, its record following every patch while it
//! sleeps and forgotten when it wakes or closes; an unvouched session keeps nothing; after a
//! restart the record comes back as an open, hibernated Surface that gets its latest state at
//! its first `ready`, with `restored` for its opener; a record that fails an open's checks is
//! forgotten; and a page cannot send `restored` itself.
#![allow(clippy::unwrap_used, clippy::panic)]

mod support;

use lineup_host_core::{Effect, Limits, Message, PartyId, Session, SurfaceKey, SurfaceRecord};
use serde_json::{json, Value};
use support::{config, envelope, forgets, kept_surfaces, Records, Still};

/// A session, vouched for `a1` or not, and its records store.
fn session(vouched: bool) -> (Session, Records) {
    let records = Records::default();
    let mut config = config(Limits::default());
    config.store = records.port();
    if vouched {
        config.agent_id = Some(PartyId::try_from("a1").unwrap());
    }
    (Session::new(config, Box::new(Still)).unwrap(), records)
}

fn open(s: &mut Session, id: &str, instance: &str) -> SurfaceKey {
    let fx = s.handle_inbound(&envelope(
        id,
        "ui.open",
        json!({"instance_id": instance, "state": {"n": 0},
               "app": {"id": "com.example.n", "version": "1.0.0", "html": "<p></p>", "css": "", "js": ""}}),
    ));
    match fx.as_slice() {
        [Effect::Open(open)] => open.key.clone(),
        other => panic!("expected one open, got {other:?}"),
    }
}

fn patch(s: &mut Session, id: &str, n: u32) -> Vec<Effect> {
    s.handle_inbound(&envelope(
        id,
        "ui.patch",
        json!({"instance_id": "w", "state": {"n": n}}),
    ))
}

/// The hibernated Surfaces' records the kernel kept since the last look.
fn kept(log: &Records) -> Vec<SurfaceRecord> {
    kept_surfaces(&log.take())
}

/// How many records the kernel forgot since the last look.
fn forgot(log: &Records) -> usize {
    forgets(&log.take())
}

const READY: &str = r#"{"namespace":"lineup.surface.v1","type":"ready","document":"0123456789abcdef0123456789abcdef"}"#;

/// The record of `w` after it was opened by `m1`, hibernated and patched by `p1` to `{n:1}`.
fn recorded() -> SurfaceRecord {
    let (mut s, log) = session(true);
    let key = open(&mut s, "m1", "w");
    s.hibernated(&key);
    let _ = log.take();
    let _ = patch(&mut s, "p1", 1);
    kept(&log).pop().unwrap()
}

#[test]
fn a_vouched_sessions_hibernated_surface_is_kept_follows_its_patches_and_is_forgotten_at_wake() {
    let (mut s, log) = session(true);
    let key = open(&mut s, "m1", "w");
    // Live: a patch keeps nothing.
    let _ = patch(&mut s, "p0", 7);
    assert!(kept(&log).is_empty());
    s.hibernated(&key);
    let record = kept(&log).pop().expect("hibernated: kept");
    assert_eq!(record.instance_id.as_str(), "w");
    assert_eq!(record.conversation.as_str(), "c1");
    assert_eq!(record.state.to_json(), r#"{"n":7}"#);
    assert_eq!(
        (record.opened_by.as_str(), record.state_from.as_str()),
        ("m1", "p0")
    );
    let app: Value = serde_json::to_value(&record.app).unwrap();
    assert_eq!(app["id"], "com.example.n");
    assert_eq!(app["html"], "<p></p>", "an inline bundle is kept whole");
    // Asleep: every patch is kept, and none is delivered.
    let fx = patch(&mut s, "p1", 8);
    assert!(!fx.iter().any(|e| matches!(e, Effect::DeliverState { .. })));
    let record = kept(&log).pop().expect("a patch while asleep: kept");
    assert_eq!(
        (record.state.to_json().as_str(), record.state_from.as_str()),
        (r#"{"n":8}"#, "p1")
    );
    // Woken: forgotten, and patches are not kept any more.
    s.wake(&key).unwrap();
    assert_eq!(forgot(&log), 1);
    let _ = patch(&mut s, "p2", 9);
    assert!(kept(&log).is_empty());
    // Hibernated again, then closed by the agent: forgotten.
    s.hibernated(&key);
    let _ = log.take();
    let _ = s.handle_inbound(&envelope(
        "c",
        "ui.close",
        json!({"instance_id": "w", "reason": "done"}),
    ));
    assert_eq!(forgot(&log), 1);
}

#[test]
fn an_unvouched_session_keeps_no_record_and_a_page_cannot_send_restored() {
    let (mut s, log) = session(false);
    let key = open(&mut s, "m1", "w");
    s.hibernated(&key);
    let _ = patch(&mut s, "p1", 1);
    assert_eq!(log.take(), Vec::new(), "nothing kept");
    let _ = s.handle_bridge(&key, READY);
    let fx = s.handle_bridge(
        &key,
        r#"{"namespace":"lineup.surface.v1","type":"event","event":"restored","data":{"status":"open"}}"#,
    );
    assert!(
        matches!(fx.as_slice(), [Effect::Dropped { error, .. }] if error.message.contains("restored")),
        "{fx:?}"
    );
    // Positive control: another event name goes up.
    let fx = s.handle_bridge(
        &key,
        r#"{"namespace":"lineup.surface.v1","type":"event","event":"shown","data":{}}"#,
    );
    assert!(
        fx.iter()
            .any(|e| matches!(e, Effect::Send(Message::UiEvent(_)))),
        "{fx:?}"
    );
}

#[test]
fn after_a_restart_the_record_opens_hibernated_and_gets_its_latest_state_at_ready() {
    let record = recorded();
    let (mut s, log) = session(true);
    // The conversation is established by the agent's first envelope.
    let _ = open(&mut s, "m9", "other");
    let fx = read_back(&mut s, &log, vec![record.clone()]);
    let key = match fx.as_slice() {
        [Effect::OpenHibernated(open), Effect::Send(Message::UiEvent(event))] => {
            let event: Value =
                serde_json::from_str(&Message::UiEvent(event.clone()).to_json()).unwrap();
            assert_eq!(event["payload"]["instance_id"], "w");
            assert_eq!(event["payload"]["event"], "restored");
            assert_eq!(
                event["payload"]["data"],
                json!({"status": "open", "opened_by": "m1", "state_from": "p1"})
            );
            open.key.clone()
        }
        other => panic!("{other:?}"),
    };
    assert_eq!(s.surface_count(), 2);
    // It is open to the agent: a patch is taken (and kept: it sleeps).
    let _ = log.take();
    let _ = patch(&mut s, "p2", 2);
    assert_eq!(kept(&log).len(), 1);
    // Shown: it wakes, its record is forgotten, and its page gets the latest state.
    s.wake(&key).unwrap();
    assert_eq!(forgot(&log), 1);
    let fx = s.handle_bridge(&key, READY);
    assert!(
        fx.iter().any(
            |e| matches!(e, Effect::DeliverState { state, .. } if state.to_json() == r#"{"n":2}"#)
        ),
        "{fx:?}"
    );
    // A record already open, or of another conversation, is left alone.
    assert!(read_back(&mut s, &log, vec![record.clone()]).is_empty());
    let mut elsewhere = record.clone();
    elsewhere.conversation = "c2".try_into().unwrap();
    elsewhere.instance_id = "x".try_into().unwrap();
    assert!(read_back(&mut s, &log, vec![elsewhere]).is_empty());
}

#[test]
fn a_record_that_fails_an_opens_checks_is_forgotten_and_not_opened() {
    let (mut s, log) = session(true);
    let _ = open(&mut s, "m9", "other");
    // Another process changed the bundle but not its declared digest.
    let mut app = serde_json::to_value(recorded().app).unwrap();
    app["integrity"] = json!("sha256-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=");
    let mut tampered = recorded();
    tampered.app = serde_json::from_value(app).unwrap();
    let _ = log.take();
    let fx = read_back(&mut s, &log, vec![tampered]);
    assert_eq!(forgot(&log), 1, "{fx:?}");
    assert!(!fx.iter().any(|e| matches!(e, Effect::OpenHibernated(_))));
    assert_eq!(s.surface_count(), 1);
    // Without a conversation (nothing established yet) nothing is restored.
    let (mut fresh, log) = session(true);
    assert!(read_back(&mut fresh, &log, vec![recorded()]).is_empty());
}

/// The session reads its records back from its store (`log`), which holds `surfaces`.
fn read_back(s: &mut Session, log: &Records, surfaces: Vec<SurfaceRecord>) -> Vec<Effect> {
    log.stored(Vec::new(), surfaces);
    s.restore()
}
