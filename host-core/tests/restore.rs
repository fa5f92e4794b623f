//! R-STD-15 through the kernel: a vouched session keeps a record of each component instance on
//! every change and forgets it at close, through its store port; a draft is kept except a
//! `secret` input's; an unvouched session keeps and reads nothing; after a restart the records
//! come back as shown instances with `restored` events, and a tampered record is forgotten, not
//! shown.
#![allow(clippy::unwrap_used)]

mod support;

use lineup_host_core::{
    ComponentEffect, ComponentKind, ComponentSet, Effect, InputKind, InstanceRecord, Limits,
    Message, PageInput, PartyId, RecordStatus, Session, SurfaceKey, UserAnswer, Via,
};
use serde_json::{json, Value};
use support::{config, envelope, forgets, kept_components, Records, Still, Write};

/// A session offering every component, vouched for `a1` or not, and its records store.
fn session(vouched: bool) -> (Session, Records) {
    let records = Records::default();
    let mut config = config(Limits::default());
    config.standard_components = ComponentSet::all_v1();
    config.store = records.port();
    if vouched {
        config.agent_id = Some(PartyId::try_from("a1").unwrap());
    }
    (Session::new(config, Box::new(Still)).unwrap(), records)
}

/// The records the kernel kept since the last look.
fn records(log: &Records) -> Vec<InstanceRecord> {
    kept_components(&log.take())
}

/// How many records the kernel forgot since the last look.
fn forgot(log: &Records) -> usize {
    forgets(&log.take())
}

fn key_of(fx: &[Effect]) -> SurfaceKey {
    fx.iter()
        .find_map(|e| match e {
            Effect::Component(ComponentEffect::Show(s)) => Some(s.key.clone()),
            _ => None,
        })
        .unwrap()
}

fn input(secret: bool) -> Value {
    json!({"instance_id": "i1", "component": {"id": "input", "version": "1",
           "props": {"label": "Token", "type": if secret { "secret" } else { "text" }}}})
}

#[test]
fn r_std_15_a_vouched_instance_is_kept_on_every_change_and_forgotten_at_close() {
    let (mut s, log) = session(true);
    let fx = s.handle_inbound(&envelope("m-1", "ui.open", input(false)));
    let key = key_of(&fx);
    let kept = records(&log);
    assert_eq!(kept.len(), 1, "{fx:?}");
    assert_eq!(kept[0].component, "input");
    assert_eq!((kept[0].status, kept[0].round), (RecordStatus::Open, 1));
    assert_eq!(kept[0].conversation.as_str(), "c1");

    // The user's draft is kept...
    let _ = s.handle_page(&key, PageInput::ComponentDraft(&json!("half a ti")));
    assert_eq!(records(&log)[0].draft, Some(json!("half a ti")));
    // ...unless it is not the answer's shape.
    let _ = s.handle_page(&key, PageInput::ComponentDraft(&json!({"x": 1})));
    assert!(records(&log).is_empty());

    // A patch is kept with its id.
    let _ = s.handle_inbound(&envelope(
        "m-2",
        "ui.patch",
        json!({"instance_id": "i1", "state": {"error": "Shorter"}}),
    ));
    assert_eq!(records(&log)[0].state_from.as_str(), "m-2");

    // An answer is kept with its data; the draft goes.
    let answer = UserAnswer::Submit {
        answer: json!("A title"),
        via: Via::Host,
        input: InputKind::Keyboard,
    };
    let _ = s.component_answered(&key, answer.clone()).unwrap();
    let kept = records(&log);
    assert_eq!(kept[0].status, RecordStatus::Answered);
    assert_eq!(kept[0].draft, None);
    assert_eq!(
        kept[0].last.as_ref().map(|l| l.as_map()["answer"].clone()),
        Some(json!("A title"))
    );

    // The agent's close forgets it.
    let _ = s.handle_inbound(&envelope("m-3", "ui.close", json!({"instance_id": "i1"})));
    assert_eq!(forgot(&log), 1);
}

#[test]
fn r_std_15_a_secret_draft_and_an_unvouched_session_keep_nothing() {
    let (mut s, log) = session(true);
    let fx = s.handle_inbound(&envelope("m-1", "ui.open", input(true)));
    let key = key_of(&fx);
    assert_eq!(records(&log).len(), 1, "the open is kept");
    let _ = s.handle_page(&key, PageInput::ComponentDraft(&json!("hunter2")));
    assert!(records(&log).is_empty(), "a secret draft was kept");
    // A form keeps its other fields' drafts, never the secret one.
    let fx = s.handle_inbound(&envelope(
        "m-2",
        "ui.open",
        json!({"instance_id": "f1", "component": {"id": "form", "version": "1",
               "props": {"fields": [
                   {"name": "user", "kind": "input", "label": "User"},
                   {"name": "pass", "kind": "input", "label": "Password", "type": "secret"},
                   {"name": "admin", "kind": "toggle", "label": "Admin"}]}}}),
    ));
    let form = key_of(&fx);
    let _ = log.take();
    let _ = s.handle_page(
        &form,
        PageInput::ComponentDraft(&json!({"user": "ops", "pass": "hunter2", "admin": true})),
    );
    let kept = records(&log);
    let draft = kept[0].draft.clone().unwrap();
    assert_eq!(draft, json!({"user": "ops", "admin": true}));
    assert!(!serde_json::to_string(&kept).unwrap().contains("hunter2"));

    let (mut s, log) = session(false);
    let fx = s.handle_inbound(&envelope("m-1", "ui.open", input(false)));
    assert!(s.restore().is_empty());
    let key = key_of(&fx);
    let _ = s.handle_page(&key, PageInput::ComponentDraft(&json!("x")));
    assert_eq!(log.take(), Vec::new(), "nothing kept, forgotten or read");
}

#[test]
fn r_std_15_a_secret_answer_never_reaches_a_record_in_either_form() {
    let (mut s, log) = session(true);
    let submit = |answer: Value| UserAnswer::Submit {
        answer,
        via: Via::Host,
        input: InputKind::Keyboard,
    };
    // An `input` of type `secret`: the record keeps the answer's id and round, not its value.
    let fx = s.handle_inbound(&envelope("m-1", "ui.open", input(true)));
    let key = key_of(&fx);
    let _ = log.take();
    let fx = s
        .component_answered(&key, submit(json!("hunter2")))
        .unwrap();
    let sent: Vec<&Message> = fx
        .iter()
        .filter_map(|e| match e {
            Effect::Send(m) => Some(m),
            _ => None,
        })
        .collect();
    assert!(
        serde_json::to_string(&sent).unwrap().contains("hunter2"),
        "positive control: the agent gets the answer itself"
    );
    let kept = records(&log);
    let last = kept[0].last.clone().unwrap();
    assert!(!last.as_map().contains_key("answer"), "{last:?}");
    assert!(last.as_map()["answer_id"].is_string());
    assert_eq!(last.as_map()["round"], 1);
    assert_eq!(kept[0].status, RecordStatus::Answered);
    // A `form` with a `secret` field: the record keeps the other fields.
    let fx = s.handle_inbound(&envelope(
        "m-2",
        "ui.open",
        json!({"instance_id": "f1", "component": {"id": "form", "version": "1",
               "props": {"fields": [
                   {"name": "user", "kind": "input", "label": "User"},
                   {"name": "pass", "kind": "input", "label": "Password", "type": "secret"}]}}}),
    ));
    let form = key_of(&fx);
    let _ = log.take();
    let _ = s
        .component_answered(&form, submit(json!({"user": "ops", "pass": "hunter2"})))
        .unwrap();
    let kept = records(&log);
    let answer = kept[0].last.as_ref().unwrap().as_map()["answer"].clone();
    assert_eq!(answer, json!({"user": "ops"}));
    assert!(!serde_json::to_string(&kept).unwrap().contains("hunter2"));
    // Positive control: a text input's answer is kept.
    let fx = s.handle_inbound(&envelope(
        "m-3",
        "ui.open",
        json!({"instance_id": "t1",
        "component": {"id": "input", "version": "1", "props": {"label": "Title", "type": "text"}}}),
    ));
    let text = key_of(&fx);
    let _ = log.take();
    let _ = s
        .component_answered(&text, submit(json!("A title")))
        .unwrap();
    assert_eq!(
        records(&log)[0].last.as_ref().unwrap().as_map()["answer"],
        json!("A title")
    );
}

#[test]
fn r_std_15_records_come_back_shown_with_restored_events_and_tampered_ones_are_forgotten() {
    // The first run: an open choice with a draft, and an answered confirm.
    let (mut s, log) = session(true);
    let fx = s.handle_inbound(&envelope(
        "m-1",
        "ui.open",
        json!({"instance_id": "c1", "component": {"id": "choice", "version": "1",
               "props": {"label": "Region", "options": [
                   {"value": "eu", "label": "Europe"}, {"value": "us", "label": "US"}]}}}),
    ));
    let choice = key_of(&fx);
    let _ = log.take();
    let _ = s.handle_page(&choice, PageInput::ComponentDraft(&json!("us")));
    let mut kept = records(&log);
    let fx = s.handle_inbound(&envelope(
        "m-2",
        "ui.open",
        json!({"instance_id": "k1", "component": {"id": "confirm", "version": "1",
               "props": {"title": "Go?"}}}),
    ));
    let confirm = key_of(&fx);
    let yes = UserAnswer::Submit {
        answer: json!(true),
        via: Via::Host,
        input: InputKind::Pointer,
    };
    let _ = log.take();
    let _ = s.component_answered(&confirm, yes.clone()).unwrap();
    let answered = records(&log);
    let answer_id = answered[0].last.as_ref().unwrap().as_map()["answer_id"].clone();
    kept.extend(answered);

    // A tampered record: props the schema refuses.
    let mut tampered = kept[0].clone();
    tampered.instance_id = "bad".try_into().unwrap();
    tampered.props = serde_json::from_value(json!({"label": "x", "options": []})).unwrap();
    kept.push(tampered);
    // Another conversation's record is not this session's.
    let mut elsewhere = kept[0].clone();
    elsewhere.conversation = "c2".try_into().unwrap();
    elsewhere.instance_id = "other".try_into().unwrap();
    kept.push(elsewhere);

    // The restart: the same identity re-establishes the conversation, and its records are
    // read back from the store, once, for its own identity and conversation.
    let (mut s, log) = session(true);
    log.stored(kept, Vec::new());
    let _ = s.handle_inbound(&envelope("m-9", "ui.close", json!({"instance_id": "none"})));
    let _ = log.take();
    let fx = s.restore();
    let asked = log.take();
    assert_eq!(
        asked
            .iter()
            .filter(|w| matches!(w, Write::Read(..)))
            .collect::<Vec<_>>(),
        [&Write::Read(
            PartyId::try_from("a1").unwrap(),
            "c1".try_into().unwrap()
        )]
    );
    let shown: Vec<(String, bool, Option<Value>)> = fx
        .iter()
        .filter_map(|e| match e {
            Effect::Component(ComponentEffect::Show(s)) => {
                Some((s.key.instance.to_string(), s.locked, s.draft.clone()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        shown,
        vec![
            ("c1".to_owned(), false, Some(json!("us"))),
            ("k1".to_owned(), true, None)
        ]
    );
    let restored: Vec<Value> = fx
        .iter()
        .filter_map(|e| match e {
            Effect::Send(Message::UiEvent(env)) if env.payload.event.as_str() == "restored" => {
                Some(serde_json::to_value(&env.payload.data).unwrap())
            }
            _ => None,
        })
        .collect();
    assert_eq!(restored.len(), 2, "{fx:?}");
    assert_eq!(restored[0]["status"], "open");
    assert_eq!(restored[0]["opened_by"], "m-1");
    assert_eq!(restored[1]["status"], "answered");
    assert_eq!(restored[1]["last"]["answer_id"], answer_id);
    assert_eq!(
        forgets(&asked),
        1,
        "the tampered record is forgotten: {asked:?}"
    );
    assert_eq!(s.component_count(), 2);
    // The restored question answers in its kept round; the answered one stays locked.
    let restored_choice = fx
        .iter()
        .find_map(|e| match e {
            Effect::Component(ComponentEffect::Show(s)) if s.kind == ComponentKind::Choice => {
                Some(s.key.clone())
            }
            _ => None,
        })
        .unwrap();
    let pick = UserAnswer::Submit {
        answer: json!("us"),
        via: Via::Host,
        input: InputKind::Pointer,
    };
    assert!(s.component_answered(&restored_choice, pick).is_ok());
    // What is open stays as it is: a second read-back shows nothing again.
    let again = s.restore();
    assert!(again.is_empty(), "{again:?}");
}

/// The one store protocol (#50): the read-back of records is a call of the session's store
/// port, for its own identity and conversation, answered as the call returns; an unvouched
/// session reads nothing.
#[test]
fn a_read_back_of_records_is_a_call_of_the_store_port_for_the_sessions_identity() {
    let (mut s, log) = session(true);
    let _ = s.handle_inbound(&envelope("m-1", "ui.open", input(false)));
    let _ = log.take();
    assert!(s.restore().is_empty(), "nothing stored, nothing restored");
    let owner = PartyId::try_from("a1").unwrap();
    assert_eq!(log.take(), [Write::Read(owner, "c1".try_into().unwrap())]);
    // Not vouched: no call at all.
    let (mut s, log) = session(false);
    let _ = s.handle_inbound(&envelope("m-1", "ui.open", input(false)));
    assert!(s.restore().is_empty());
    assert_eq!(log.take(), Vec::new());
}
