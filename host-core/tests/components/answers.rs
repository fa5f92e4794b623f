//! The user's answers: one per round with its provenance, bad ones dropped, expiry (R-STD-6, R-STD-7).

use super::opens::options;
use super::*;
use lineup_host_core::PageInput;

fn submit(answer: Value) -> UserAnswer {
    UserAnswer::Submit {
        answer,
        via: Via::Host,
        input: InputKind::Pointer,
    }
}

#[test]
fn r_std_6_r_std_7_one_answer_per_round_with_its_provenance() {
    let mut s = session();
    let fx = open(
        &mut s,
        "m-41",
        json!({"instance_id":"deploy.ok","component":component("confirm", json!({"title":"Deploy?","tone":"danger"}))}),
    );
    let key = shown(&fx).key.clone();
    let fx = s.component_answered(&key, submit(json!(true))).unwrap();
    assert!(matches!(
        &fx[0],
        Effect::Component(ComponentEffect::Lock { round: 1, .. })
    ));
    let events = sent_events(&fx);
    assert_eq!(events.len(), 1);
    let (event, data) = &events[0];
    assert_eq!(event, "submit");
    assert_eq!(
        data,
        &json!({"answer":true,"answer_id":"out-ans-1","opened_by":"m-41","state_from":"m-41","round":1,"via":"host","input":"pointer"})
    );
    // A double click: the second is dropped and counted.
    assert_eq!(
        s.component_answered(&key, submit(json!(true))),
        Err(AnswerRefusal::Locked { round: 1 })
    );
    assert_eq!(s.stats().answers_dropped, 1);
    // A stale key reaches nobody.
    let stale = SurfaceKey {
        generation: lineup_host_core::Generation::clone(&key.generation),
        ..key.clone()
    };
    let fx = open(
        &mut s,
        "m-42",
        json!({"instance_id":"deploy.ok","component":component("confirm", json!({"title":"Again?"}))}),
    );
    assert_ne!(shown(&fx).key, stale);
    assert_eq!(
        s.component_answered(&stale, submit(json!(true))),
        Err(AnswerRefusal::Stale)
    );
}

#[test]
fn r_std_7_an_error_patch_reopens_input_for_round_two() {
    let mut s = session();
    let fx = open(
        &mut s,
        "m1",
        json!({"instance_id":"i","component":component("input", json!({"label":"Title","required":true,"max_length":5}))}),
    );
    let key = shown(&fx).key.clone();
    assert!(matches!(
        s.component_answered(&key, submit(json!("toolong"))),
        Err(AnswerRefusal::Invalid { .. })
    ));
    assert!(matches!(
        s.component_answered(&key, submit(json!(""))),
        Err(AnswerRefusal::Invalid { .. })
    ));
    s.component_answered(&key, submit(json!("ok"))).unwrap();
    let fx = s.handle_inbound(&envelope(
        "m2",
        "ui.patch",
        json!({"instance_id":"i","state":{"error":"taken"}}),
    ));
    assert!(
        matches!(
            &fx[0],
            Effect::Component(ComponentEffect::Update {
                round: 2,
                reopened: true,
                ..
            })
        ),
        "{fx:?}"
    );
    let fx = s.component_answered(&key, submit(json!("new"))).unwrap();
    let (_, data) = &sent_events(&fx)[0];
    assert_eq!(
        (
            data["round"].clone(),
            data["opened_by"].clone(),
            data["state_from"].clone()
        ),
        (json!(2), json!("m1"), json!("m2"))
    );
    assert_eq!(data["answer_id"], "out-ans-2", "unique per answer");
    // A confirm is never reopened.
    let fx = open(
        &mut s,
        "m3",
        json!({"instance_id":"c","component":component("confirm", json!({"title":"Go?"}))}),
    );
    let key = shown(&fx).key.clone();
    s.component_answered(
        &key,
        UserAnswer::Cancel {
            via: Via::Embedder,
            input: InputKind::Keyboard,
        },
    )
    .unwrap();
    let fx = s.handle_inbound(&envelope(
        "m4",
        "ui.patch",
        json!({"instance_id":"c","state":{}}),
    ));
    assert!(matches!(
        &fx[0],
        Effect::Component(ComponentEffect::Update {
            round: 1,
            reopened: false,
            ..
        })
    ));
}

#[test]
fn r_std_6_bad_answers_are_dropped() {
    let mut s = session();
    let choice = component("choice", json!({"label":"L","options":options(3)}));
    let fx = open(&mut s, "m1", json!({"instance_id":"c","component":choice}));
    let key = shown(&fx).key.clone();
    for bad in [json!("zz"), json!(["v0"]), json!(1), json!(null)] {
        assert!(
            matches!(
                s.component_answered(&key, submit(bad.clone())),
                Err(AnswerRefusal::Invalid { .. })
            ),
            "{bad}"
        );
    }
    let multi = component(
        "choice",
        json!({"label":"L","options":options(3),"multiple":true,"min_selected":1,"max_selected":2}),
    );
    let fx = open(&mut s, "m2", json!({"instance_id":"m","component":multi}));
    let key = shown(&fx).key.clone();
    for bad in [
        json!("v0"),
        json!([]),
        json!(["v0", "v1", "v2"]),
        json!(["v0", "v0"]),
    ] {
        assert!(
            matches!(
                s.component_answered(&key, submit(bad.clone())),
                Err(AnswerRefusal::Invalid { .. })
            ),
            "{bad}"
        );
    }
    s.component_answered(&key, submit(json!(["v0", "v2"])))
        .unwrap();
    let number = component(
        "input",
        json!({"label":"N","type":"number","min":0,"max":10,"integer":true}),
    );
    let fx = open(&mut s, "m3", json!({"instance_id":"n","component":number}));
    let key = shown(&fx).key.clone();
    for bad in [json!(11), json!(-1), json!(2.5), json!("3")] {
        assert!(
            matches!(
                s.component_answered(&key, submit(bad.clone())),
                Err(AnswerRefusal::Invalid { .. })
            ),
            "{bad}"
        );
    }
    s.component_answered(&key, submit(json!(10))).unwrap();
    let display =
        json!({"instance_id":"t","component":{"id":"text","version":"1"},"state":{"text":"t"}});
    let fx = open(&mut s, "m4", display);
    let key = shown(&fx).key.clone();
    assert!(matches!(
        s.component_answered(&key, submit(json!("x"))),
        Err(AnswerRefusal::NotAnswerable { .. })
    ));
}

#[test]
fn r_std_6_the_pattern_is_linear_and_form_data_stays_under_16_kib() {
    let mut s = session();
    let fx = open(
        &mut s,
        "m1",
        json!({"instance_id":"p","component":component("input", json!({"label":"L","max_length":3000,"pattern":"(a+)+$"}))}),
    );
    let key = shown(&fx).key.clone();
    let started = std::time::Instant::now();
    let evil = format!("{}b", "a".repeat(2999));
    assert!(matches!(
        s.component_answered(&key, submit(json!(evil))),
        Err(AnswerRefusal::Invalid { .. })
    ));
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    s.component_answered(&key, submit(json!("a".repeat(3000))))
        .unwrap();
    let fields: Vec<Value> = (0..10)
        .map(|i| json!({"name":format!("f{i}"),"kind":"input","label":"L","max_length":3000}))
        .collect();
    let fx = open(
        &mut s,
        "m2",
        json!({"instance_id":"f","component":component("form", json!({"fields":fields}))}),
    );
    let key = shown(&fx).key.clone();
    let big: serde_json::Map<String, Value> = (0..10)
        .map(|i| (format!("f{i}"), json!("x".repeat(3000))))
        .collect();
    assert!(matches!(
        s.component_answered(&key, submit(Value::Object(big))),
        Err(AnswerRefusal::TooLarge { limit: 16384, .. })
    ));
    let small: serde_json::Map<String, Value> = (0..10)
        .map(|i| (format!("f{i}"), json!("x".repeat(1000))))
        .collect();
    s.component_answered(&key, submit(Value::Object(small)))
        .unwrap();
}

#[test]
fn r_std_7_expiry_closes_with_reason_expired_and_a_user_close_sends_one_close() {
    let mut s = session();
    let fx = open(
        &mut s,
        "m1",
        json!({"instance_id":"c","component":component("confirm", json!({"title":"Go?","expires_at":"2026-08-02T12:10:00Z"}))}),
    );
    let key = shown(&fx).key.clone();
    let at = Timestamp::from_unix_seconds(1_785_672_600).unwrap();
    assert_eq!(s.next_component_expiry(), Some(at));
    let before = Timestamp::from_unix_seconds(1_785_672_599).unwrap();
    assert!(s.expire_components(before).is_empty());
    let fx = s.expire_components(at);
    assert!(matches!(
        &fx[0],
        Effect::Component(ComponentEffect::Hide {
            reason: ComponentClosed::Expired,
            ..
        })
    ));
    assert_eq!(
        sent_events(&fx),
        [("close".to_owned(), json!({"reason":"expired"}))]
    );
    assert_eq!(
        s.component_answered(&key, submit(json!(true))),
        Err(AnswerRefusal::Stale)
    );
    let fx = open(
        &mut s,
        "m2",
        json!({"instance_id":"c","component":component("confirm", json!({"title":"Go?"}))}),
    );
    let key = shown(&fx).key.clone();
    let fx = s.handle_page(&key, PageInput::ComponentClosed);
    assert_eq!(sent_events(&fx), [("close".to_owned(), json!({}))]);
    assert!(
        s.handle_page(&key, PageInput::ComponentClosed).is_empty(),
        "exactly one"
    );
}
