//! The embedder's own renderer of standard components (R-STD-16), through a real [`Host`]:
//! `client.inventory` lists what it supports; it is shown the validated component and answers
//! through its [`ComponentReply`]; an answer that does not fit is refused at the reply, naming
//! the field; an accepted one goes upstream once per round with `via: "embedder"`, and the
//! renderer is told to lock, update and hide; what it declines or does not support closes
//! `renderer_failed` when the built-in renderer is off.
#![allow(clippy::print_stdout, clippy::unwrap_used, missing_docs)]

mod child;
mod conversations;
mod links;
mod warm;

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use lineup_host::{ComponentRenderer, ComponentReply, Declined, HostBuilder};
use lineup_host_core::{
    AnswerRefusal, ComponentClosed, ComponentKind, InputKind, JsonObject, SafeMarkdown,
    ShownComponent, SurfaceKey,
};
use lineup_tests::ensure;
use lineup_tests::home::private_home;
use lineup_tests::host_harness::{HostHarness, TestHost};
use lineup_tests::runner::Outcome;
use serde_json::{json, Value};

/// What the built-in renderer's box of `key` shows now, read from its page.
fn read_box(
    h: &mut HostHarness,
    t: &mut TestHost,
    key: &SurfaceKey,
) -> Result<lineup_host::ComponentSnapshot, String> {
    let slot: Rc<RefCell<Option<Option<lineup_host::ComponentSnapshot>>>> = Rc::default();
    let fill = Rc::clone(&slot);
    ensure!(
        t.host
            .component_snapshot_for_test(key, move |s| *fill.borrow_mut() = Some(s)),
        "no box for {key}"
    );
    h.wait(t, |_, _| slot.borrow().is_some());
    let taken = slot.borrow_mut().take().flatten();
    taken.ok_or_else(|| "unreadable box".to_owned())
}

pub(crate) fn run() {
    private_home("embedder_components");
    let mut h = HostHarness::start();
    h.run(
        "r_std_16_an_embedders_renderer_answers_via_embedder_once_per_round_after_a_recheck",
        answers,
    );
    h.run(
        "r_std_13_components_sit_over_the_surfaces_in_the_embedders_window_and_take_their_own_input",
        child::in_the_window,
    );
    h.run(
        "r_std_11_a_components_link_opens_only_after_real_input_and_the_link_confirm_audited",
        links::followed_after_the_confirm,
    );
    h.run(
        "a_hidden_conversations_question_takes_no_click_and_shown_again_its_guard_restarts",
        conversations::switched,
    );
    h.run(
        "a_conversations_first_component_is_a_box_of_the_warm_board_and_starts_no_process",
        warm::first_component_takes_the_warm_board,
    );
    h.finish();
}

/// What the renderer was asked to do, in order, and the replies it holds by instance.
#[derive(Clone, Default)]
struct Native {
    calls: Rc<RefCell<Vec<String>>>,
    replies: Rc<RefCell<HashMap<String, ComponentReply>>>,
}

impl ComponentRenderer for Native {
    fn supports(&self, kind: ComponentKind) -> bool {
        matches!(kind, ComponentKind::Confirm | ComponentKind::Choice)
    }

    fn show(&mut self, c: &ShownComponent, reply: ComponentReply) -> Result<(), Declined> {
        let title = c.props.as_map().get("title").and_then(Value::as_str);
        if title == Some("Decline me") {
            self.calls
                .borrow_mut()
                .push(format!("declined {}", c.key.instance));
            return Err(Declined);
        }
        self.calls
            .borrow_mut()
            .push(format!("show {}", c.key.instance));
        self.replies
            .borrow_mut()
            .insert(c.key.instance.to_string(), reply);
        Ok(())
    }

    fn update(
        &mut self,
        key: &SurfaceKey,
        state: &JsonObject,
        _: Option<&SafeMarkdown>,
        reopened: bool,
    ) {
        self.calls.borrow_mut().push(format!(
            "update {} {} {reopened}",
            key.instance,
            state.to_json()
        ));
    }

    fn lock(&mut self, key: &SurfaceKey) {
        self.calls
            .borrow_mut()
            .push(format!("lock {}", key.instance));
    }

    fn hide(&mut self, key: &SurfaceKey, reason: &ComponentClosed) {
        self.calls
            .borrow_mut()
            .push(format!("hide {} {reason:?}", key.instance));
    }
}

fn open(t: &TestHost, instance: &str, component: Value) -> Outcome {
    t.send(t.agent.envelope(
        "lineup.v1.ui.open",
        json!({"instance_id": instance, "component": component}),
    ))
}

fn answers(h: &mut HostHarness) -> Outcome {
    let native = Native::default();
    // The built-in renderer off: the inventory lists what the embedder draws.
    let mut t = h.host(
        HostBuilder::new()
            .builtin_components(None)
            .component_renderer(native.clone()),
    )?;
    open(
        &t,
        "k1",
        json!({"id": "confirm", "version": "1", "props": {"title": "Deploy?"}}),
    )?;
    open(
        &t,
        "c1",
        json!({"id": "choice", "version": "1", "props": {"label": "Region",
               "options": [{"value": "eu", "label": "Europe"}]}}),
    )?;
    ensure!(
        h.wait(&mut t, |_, _| native.replies.borrow().len() == 2),
        "the renderer was not shown both: {:?} {:?}",
        native.calls.borrow(),
        t.rec.sent()
    );
    let sent = t.rec.sent();
    let inventory = sent
        .iter()
        .find(|m| m["type"] == "lineup.v1.client.inventory")
        .map(|m| m["payload"]["standard_components"].clone())
        .unwrap_or_default();
    let listed: Vec<&str> = inventory
        .as_array()
        .map(|a| a.iter().filter_map(|c| c["id"].as_str()).collect())
        .unwrap_or_default();
    ensure!(
        listed == ["confirm", "choice"],
        "the inventory lists {listed:?}"
    );

    // An answer that does not fit is refused at the reply, naming the field; nothing is sent.
    let confirm = native.replies.borrow()["k1"].clone();
    let choice = native.replies.borrow()["c1"].clone();
    let refused = confirm.submit(json!("yes"), InputKind::Pointer);
    ensure!(
        matches!(&refused, Err(AnswerRefusal::Invalid { field, .. }) if field == "answer"),
        "{refused:?}"
    );
    let refused = choice.submit(json!("us"), InputKind::Keyboard);
    ensure!(
        matches!(refused, Err(AnswerRefusal::Invalid { .. })),
        "{refused:?}"
    );

    // One that fits goes upstream once, `via: "embedder"`; the renderer is told to lock.
    confirm
        .submit(json!(true), InputKind::Pointer)
        .map_err(|e| format!("{e:?}"))?;
    confirm
        .submit(json!(false), InputKind::Pointer)
        .map_err(|e| format!("{e:?}"))?;
    ensure!(
        h.wait(&mut t, |_, rec| rec.count("k1", "submit") == 1
            && native.calls.borrow().iter().any(|c| c == "lock k1")),
        "no submit or lock: {:?} {:?}",
        t.rec.ui_events(),
        native.calls.borrow()
    );
    h.settle(&mut t, std::time::Duration::from_millis(300));
    let data = t.rec.data("k1", "submit");
    ensure!(
        data.len() == 1,
        "the second answer of round 1 went out: {data:?}"
    );
    ensure!(
        data[0]["answer"] == true && data[0]["via"] == "embedder" && data[0]["input"] == "pointer",
        "{data:?}"
    );

    // A patch reaches the renderer; a component it does not support, or declines, closes
    // `renderer_failed` (the built-in renderer is off).
    t.send(t.agent.envelope(
        "lineup.v1.ui.patch",
        json!({"instance_id": "c1", "state": {"error": "Pick one"}}),
    ))?;
    open(&t, "t1", json!({"id": "text", "version": "1"}))?;
    open(
        &t,
        "k2",
        json!({"id": "confirm", "version": "1", "props": {"title": "Decline me"}}),
    )?;
    ensure!(
        h.wait(&mut t, |_, rec| rec.count("k2", "close") == 1),
        "the declined confirm did not close: {:?}",
        t.rec.ui_events()
    );
    let closes = t.rec.data("k2", "close");
    ensure!(closes[0]["reason"] == "renderer_failed", "{closes:?}");
    let refused_text =
        t.rec.sent().iter().any(|m| {
            m["type"] == "lineup.v1.client.error" && m["payload"]["code"] == "unsupported"
        });
    ensure!(
        refused_text,
        "text, which no renderer draws, was not refused unsupported"
    );

    // The agent's close hides it in the renderer.
    t.send(t.agent.close("k1", "done"))?;
    ensure!(
        h.wait(&mut t, |_, _| native
            .calls
            .borrow()
            .iter()
            .any(|c| c.starts_with("hide k1"))),
        "{:?}",
        native.calls.borrow()
    );
    let calls = native.calls.borrow().clone();
    ensure!(
        calls
            .iter()
            .any(|c| c.starts_with("update c1") && c.contains("Pick one")),
        "{calls:?}"
    );
    ensure!(calls.iter().any(|c| c == "declined k2"), "{calls:?}");
    Ok(())
}
