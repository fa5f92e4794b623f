//! The engine's effect interpreter, the route of a view's reports, placement, hibernation's
//! choice and the probe's gate, on the fake view port (`rig_tests.rs`), as tables (#50 item 4).

use std::time::{Duration, Instant};

use lineup_host_core::{
    CapabilityName, ConversationId, GoneReason, InlineBundle, InputKind, Limits,
};
use lineup_webview_shell::{ProbeStatus, Rect, ViewEvent};
use serde_json::{json, Value};

use super::handle::Inner;
use super::rig_tests::{ready_from, NoWindows, Rig, Setup};
use crate::port::Place;
use crate::watchdog::WatchdogConfig;

#[test]
fn an_open_makes_one_view_in_a_window_of_its_own_and_its_state_follows_ready() {
    let mut rig = Rig::new(Setup::default());
    rig.open("w1");
    assert_eq!(rig.views_made(), 1);
    let view = rig.view(0);
    match &view.place {
        Place::Window {
            title,
            width,
            height,
        } => {
            assert!(title.contains("Weather"), "{title}");
            assert_eq!((*width, *height), (480, 320));
        }
        Place::Child => panic!("a child view without child views"),
    }
    assert!(view.delivered.borrow().is_empty(), "state before ready");
    rig.ready(0);
    assert_eq!(*view.delivered.borrow(), [r#"{"n":0}"#]);
    assert_eq!(rig.notes(), ["opened w1", "ready w1"]);

    // A patch reaches the same view; a close closes it, and the delegate hears why.
    rig.agent("ui.patch", json!({"instance_id": "w1", "state": {"n": 1}}));
    assert_eq!(view.delivered.borrow().last().unwrap(), r#"{"n":1}"#);
    rig.agent("ui.close", json!({"instance_id": "w1"}));
    assert!(view.closed.get());
    assert!(rig.engine.screen().is_empty());
    assert!(rig.notes().last().unwrap().starts_with("closed w1"));
}

#[test]
fn a_page_event_goes_to_the_agent_under_the_views_key_never_the_pages_word() {
    let mut rig = Rig::new(Setup::default());
    rig.open("w1");
    rig.open("w2");
    rig.ready(0);
    rig.ready(1);
    let before = rig.sent.borrow().len();
    // R-SEC-4: the page of w2 names w1; the event is w2's.
    rig.page(
        1,
        json!({"namespace": "lineup.surface.v1", "type": "event", "event": "go",
               "data": {}, "instance_id": "w1"}),
    );
    let sent = rig.sent.borrow()[before..].to_vec();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0]["type"], "lineup.v1.ui.event");
    assert_eq!(sent[0]["payload"]["instance_id"], "w2");
}

#[test]
fn each_refusal_of_a_view_reaches_the_delegate_and_nothing_goes_to_the_agent() {
    // The page's URLs are its words: the delegate's `Debug` shows their fingerprint.
    let table: [(ViewEvent, &str); 8] = [
        (
            ViewEvent::NavigationRefused("https://evil.example/".into()),
            "refused w1 Navigation(Fingerprint",
        ),
        (
            ViewEvent::NewWindowRefused("https://pop.example/".into()),
            "refused w1 NewWindow(Fingerprint",
        ),
        (
            ViewEvent::DownloadRefused("https://dl.example/x".into()),
            "refused w1 Download(Fingerprint",
        ),
        (ViewEvent::PermissionDenied, "refused w1 Permission"),
        (ViewEvent::DialogSuppressed, "refused w1 Dialog"),
        (ViewEvent::DropRefused, "refused w1 Drop"),
        (ViewEvent::FileChooserRefused, "refused w1 FileChooser"),
        (ViewEvent::PageCloseAttempt, "refused w1 PageClose"),
    ];
    for (event, note) in table {
        let mut rig = Rig::new(Setup::default());
        rig.open("w1");
        rig.ready(0);
        let before = rig.sent.borrow().len();
        rig.report(0, event);
        let last = rig.notes().last().cloned().unwrap_or_default();
        assert!(last.starts_with(note), "{last} is not {note}");
        assert!(rig.sent_types(before).is_empty(), "{note}: sent");
        assert!(!rig.view(0).closed.get(), "{note}: the view stays");
    }
}

#[test]
fn a_document_that_replaced_the_surfaces_own_is_replaced_again_and_then_gets_the_state() {
    let mut rig = Rig::new(Setup::default());
    rig.open("w1");
    rig.ready(0);
    rig.agent("ui.patch", json!({"instance_id": "w1", "state": {"n": 2}}));
    let view = rig.view(0);
    let delivered = view.delivered.borrow().len();
    // R-SEC-2a: `ready` from another document without a commit (a `javascript:` URL).
    rig.page(0, ready_from(&"b".repeat(32)));
    assert_eq!(view.restored.get(), 1);
    assert_eq!(
        rig.notes().last().map(String::as_str),
        Some("refused w1 DocumentReplaced")
    );
    assert_eq!(
        view.delivered.borrow().len(),
        delivered,
        "no state to that document"
    );
    // Its own document, loaded again, commits and gets the latest state after its `ready`.
    rig.report(0, ViewEvent::DocumentCommitted);
    rig.page(0, ready_from(&"c".repeat(32)));
    assert_eq!(view.delivered.borrow().len(), delivered + 1);
    assert_eq!(view.delivered.borrow().last().unwrap(), r#"{"n":2}"#);
}

#[test]
fn a_lost_view_is_reopened_in_its_place_or_closed_when_reopening_is_off() {
    // (reopen lost Surfaces, what ended it, views made, the close reason the agent hears)
    let table = [
        (true, ViewEvent::Crashed, 2, None),
        (true, ViewEvent::Unresponsive, 2, None),
        (false, ViewEvent::Crashed, 1, Some("crashed")),
        (false, ViewEvent::Unresponsive, 1, Some("unresponsive")),
        // Never reopened: the page would only fill its ceiling again (R-UI-12).
        (true, ViewEvent::MemoryExceeded, 1, Some("memory")),
    ];
    for (reopen, event, made, heard) in table {
        let name = format!("{event:?} reopen={reopen}");
        let mut rig = Rig::new(Setup {
            reopen,
            ..Setup::default()
        });
        rig.open("w1");
        rig.ready(0);
        rig.agent("ui.patch", json!({"instance_id": "w1", "state": {"n": 7}}));
        let before = rig.sent.borrow().len();
        rig.report(0, event);
        assert!(rig.view(0).closed.get(), "{name}: the lost view goes");
        assert_eq!(rig.views_made(), made, "{name}");
        let sent = rig.sent.borrow()[before..].to_vec();
        let reasons: Vec<&Value> = sent
            .iter()
            .filter(|m| m["type"] == "lineup.v1.ui.event" && m["payload"]["event"] == "close")
            .map(|m| &m["payload"]["data"]["reason"])
            .collect();
        assert_eq!(sent.len(), reasons.len(), "{name}: {sent:?}");
        assert_eq!(
            reasons,
            heard.map(|r| json!(r)).iter().collect::<Vec<_>>(),
            "{name}"
        );
        if made == 2 {
            // The same instance, in the same place, with its latest state after ready.
            assert_eq!(rig.view(1).place, rig.view(0).place, "{name}");
            rig.ready(1);
            assert_eq!(*rig.view(1).delivered.borrow(), [r#"{"n":7}"#], "{name}");
            assert_eq!(rig.key("w1").instance.as_str(), "w1");
        } else {
            assert!(rig.engine.screen().is_empty(), "{name}");
        }
    }
}

#[test]
fn child_views_are_laid_out_by_the_delegate_and_a_hidden_one_leaves_the_layout() {
    let mut rig = Rig::new(Setup {
        children: true,
        ..Setup::default()
    });
    rig.open("w1");
    rig.open("w2");
    assert_eq!(rig.view(0).place, Place::Child);
    assert_eq!(
        rig.view(1).bounds.get(),
        Some(Rect {
            x: 400,
            y: 0,
            width: 400,
            height: 600
        })
    );
    assert_eq!(rig.heard.borrow().slots.last(), Some(&(1, 2)));
    let w1 = rig.key("w1");
    assert!(rig.engine.set_surface_visible(&w1, false));
    assert!(!rig.view(0).visible.get());
    // Only w2 is asked for, alone in the area.
    assert_eq!(rig.heard.borrow().slots.last(), Some(&(0, 1)));
    assert_eq!(rig.view(1).bounds.get().map(|b| b.width), Some(800));
}

/// Child views `w1` and `w2`, both ready, with `Limits::max_live_surfaces` at 2.
fn two_ready_under_a_cap_of_two() -> Rig {
    let mut limits = Limits::default();
    limits.max_live_surfaces = 2;
    let mut rig = Rig::new(Setup {
        children: true,
        limits,
        ..Setup::default()
    });
    rig.open("w1");
    rig.open("w2");
    rig.ready(0);
    rig.ready(1);
    rig
}

#[test]
fn past_the_live_cap_the_least_recently_shown_hidden_view_hibernates_unless_pressed() {
    // (presses on w1 since its state was set, what happens to w1, whether w3 opens)
    let table = [(0, true, true), (1, false, false)];
    for (presses, w1_sleeps, w3_opens) in table {
        let mut rig = two_ready_under_a_cap_of_two();
        rig.view(0).presses.set(presses);
        let w1 = rig.key("w1");
        assert!(rig.engine.set_surface_visible(&w1, false));
        let before = rig.sent.borrow().len();
        rig.open("w3");
        assert_eq!(rig.view(0).closed.get(), w1_sleeps, "presses {presses}");
        assert_eq!(rig.engine.screen().is_hibernated(&w1), w1_sleeps);
        assert_eq!(rig.views_made() == 3, w3_opens, "presses {presses}");
        if !w3_opens {
            // R-UI-12: refused with the limit named, and nothing else changed.
            let sent = rig.sent.borrow()[before..].to_vec();
            assert_eq!(sent.len(), 1, "{sent:?}");
            assert_eq!(sent[0]["type"], "lineup.v1.client.error");
            assert!(sent[0]["payload"].to_string().contains('2'), "{sent:?}");
        }
    }
}

#[test]
fn views_made_while_the_probe_runs_close_when_it_fails_and_the_agent_hears_why() {
    let mut rig = Rig::new(Setup {
        probe: ProbeStatus::Pending,
        ..Setup::default()
    });
    rig.open("w1");
    assert_eq!(rig.views_made(), 1, "made at once; its document waits");
    rig.engine.poll_probe(&NoWindows);
    assert!(!rig.view(0).closed.get(), "pending decides nothing");
    *rig.probe.borrow_mut() = ProbeStatus::Failed("no sandbox".into());
    let before = rig.sent.borrow().len();
    rig.engine.poll_probe(&NoWindows);
    assert!(rig.view(0).closed.get());
    assert!(rig.notes().contains(&"probe failed no sandbox".to_owned()));
    let sent = rig.sent.borrow()[before..].to_vec();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0]["payload"]["code"], "surface_failed");
    assert_eq!(sent[0]["payload"]["in_reply_to"], "m0");
    let message = sent[0]["payload"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("R-SEC-8") && message.contains("no sandbox"),
        "{message}"
    );
    assert!(rig.engine.screen().is_empty());
    // A view the port cannot make fails its open the same way, naming why.
    rig.port.borrow_mut().refuse = Some("no more views".into());
    let before = rig.sent.borrow().len();
    rig.open("w2");
    assert_eq!(rig.views_made(), 1);
    let sent = rig.sent.borrow()[before..].to_vec();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0]["payload"]["code"], "surface_failed");
    assert!(sent[0].to_string().contains("no more views"), "{sent:?}");
}

#[test]
fn closing_every_session_closes_each_view_silently() {
    let mut rig = Rig::new(Setup::default());
    rig.open("w1");
    rig.open("w2");
    let before = rig.sent.borrow().len();
    rig.engine.close_all();
    assert!(rig.view(0).closed.get() && rig.view(1).closed.get());
    assert!(rig.engine.screen().is_empty());
    assert!(
        rig.sent_types(before).is_empty(),
        "nothing is sent at shutdown"
    );
}

/// The agent opens standard component `kind` as `instance`.
fn open_component(rig: &mut Rig, instance: &str, kind: &str, props: Value) {
    rig.agent(
        "ui.open",
        json!({"instance_id": instance, "component": {"id": kind, "version": "1", "props": props}}),
    );
}

#[test]
fn a_component_the_embedders_renderer_draws_is_answered_through_its_reply_once() {
    let mut rig = Rig::new(Setup {
        renderer: true,
        ..Setup::default()
    });
    open_component(&mut rig, "ok", "confirm", json!({"title": "Deploy?"}));
    assert_eq!(rig.drawn.borrow().told, ["show ok"]);
    assert_eq!(rig.views_made(), 0, "a component is no Surface view");
    let reply = rig.drawn.borrow().replies[0].clone();
    // R-STD-16: an answer that does not fit is refused here, naming the field; nothing goes.
    let before = rig.sent.borrow().len();
    let refused = reply.submit(json!("maybe"), InputKind::Pointer);
    assert!(refused.is_err(), "{refused:?}");
    rig.pump();
    assert!(rig.sent_types(before).is_empty());

    reply.submit(json!(true), InputKind::Pointer).unwrap();
    rig.pump();
    let sent = rig.sent.borrow()[before..].to_vec();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0]["payload"]["event"], "submit");
    assert_eq!(sent[0]["payload"]["data"]["answer"], true);
    assert_eq!(sent[0]["payload"]["data"]["via"], "embedder");
    assert_eq!(rig.drawn.borrow().told.last().unwrap(), "lock ok");
    // R-STD-7: a second answer of the same round is dropped.
    reply.submit(json!(true), InputKind::Pointer).unwrap();
    rig.pump();
    assert_eq!(rig.sent.borrow().len(), before + 1);

    rig.agent("ui.close", json!({"instance_id": "ok"}));
    assert!(rig
        .drawn
        .borrow()
        .told
        .last()
        .unwrap()
        .starts_with("hide ok"));
}

#[test]
fn a_component_no_renderer_draws_is_refused_or_closes_renderer_failed() {
    // With no renderer none is offered (R-STD-14): the open is refused, naming the field.
    let mut rig = Rig::new(Setup::default());
    open_component(&mut rig, "q", "confirm", json!({"title": "Deploy?"}));
    let sent = rig.sent.borrow().clone();
    let refusal = sent.iter().find(|m| m["type"] == "lineup.v1.client.error");
    let refusal = refusal.unwrap_or_else(|| panic!("not refused: {sent:?}"));
    assert_eq!(refusal["payload"]["code"], "unsupported");
    assert_eq!(refusal["payload"]["field"], "payload.component.id");
    assert!(rig.engine.screen().is_empty());

    // Offered, then declined when shown (R-STD-13): it closes `renderer_failed`.
    let mut rig = Rig::new(Setup {
        renderer: true,
        ..Setup::default()
    });
    let before = rig.sent.borrow().len();
    let options = json!([{"value": "a", "label": "A"}, {"value": "b", "label": "B"}]);
    open_component(
        &mut rig,
        "q",
        "choice",
        json!({"label": "Which?", "options": options}),
    );
    let sent = rig.sent.borrow()[before..].to_vec();
    let closed = sent.iter().find(|m| m["payload"]["event"] == "close");
    assert_eq!(
        closed.map(|m| m["payload"]["data"]["reason"].clone()),
        Some(json!("renderer_failed")),
        "{sent:?}"
    );
    assert!(rig.drawn.borrow().told.is_empty());
}

#[test]
fn a_pages_resize_is_clamped_to_the_bounds_told_to_the_delegate_and_laid_out() {
    // (the height the page asks, the height it gets, whether it was clamped); bounds 40..=2000
    let table = [(10.0, 40, true), (300.4, 300, false), (5000.0, 2000, true)];
    for (asked, got, clamped) in table {
        let mut rig = Rig::new(Setup {
            children: true,
            ..Setup::default()
        });
        rig.open("w1");
        rig.ready(0);
        let slots = rig.heard.borrow().slots.len();
        rig.page(
            0,
            json!({"namespace": "lineup.surface.v1", "type": "resize", "height": asked}),
        );
        let note = format!("resize w1 {got} clamped={clamped}");
        assert_eq!(rig.notes().last(), Some(&note), "{asked}");
        // Laid out again, with the height the page asked for.
        assert_eq!(rig.heard.borrow().slots.len(), slots + 1, "{asked}");
        assert_eq!(
            rig.heard.borrow().heights.last(),
            Some(&Some(got)),
            "{asked}"
        );
    }
}

#[test]
fn a_page_that_stops_answering_is_terminated_and_reopened_as_lost() {
    // (whether the page answers the pings, whether it is terminated)
    for answers in [true, false] {
        let mut rig = Rig::new(Setup {
            watchdog: WatchdogConfig {
                enabled: true,
                deadline: Duration::from_millis(200),
                first_ready: Duration::from_millis(200),
            },
            ..Setup::default()
        });
        rig.open("w1");
        rig.ready(0);
        let view = rig.view(0);
        view.answers_pings.set(answers);
        // Checked until terminated, or for ten deadlines when it answers.
        let until = Instant::now() + Duration::from_millis(if answers { 2000 } else { 20_000 });
        while !view.terminated.get() && Instant::now() < until {
            rig.engine.poll_watchdog(&NoWindows);
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(view.terminated.get(), !answers, "answers pings: {answers}");
        if !answers {
            assert!(rig.notes().contains(&"unresponsive w1".to_owned()));
            // The engine reports the ended process: the Surface is reopened in its place.
            rig.report(0, ViewEvent::Unresponsive);
            assert!(view.closed.get());
            assert_eq!(rig.views_made(), 2);
            assert_eq!(rig.view(1).place, view.place);
        }
    }
}

#[test]
fn an_embedders_reload_replaces_the_document_within_the_bundle_limit_only() {
    let mut limits = Limits::default();
    limits.max_bundle_bytes = 1024;
    let mut rig = Rig::new(Setup {
        limits,
        ..Setup::default()
    });
    rig.open("w1");
    rig.ready(0);
    let instance = rig.key("w1").instance;
    // Over the limit (R-UI-2): refused, nothing replaced.
    let big = "x".repeat(2048);
    let bundle = InlineBundle::new(&big, "", "").unwrap();
    let reload = |instance, bundle| Inner::Reload { instance, bundle };
    (rig.engine).handle_event(reload(instance.clone(), bundle), &NoWindows);
    assert_eq!(rig.view(0).replaced.get(), 0);
    // Within it: loaded, and its commit is the embedder's reload, not a page's navigation.
    let bundle = InlineBundle::new("<p>new</p>", "", "").unwrap();
    (rig.engine).handle_event(reload(instance, bundle), &NoWindows);
    assert_eq!(rig.view(0).replaced.get(), 1);
    rig.report(0, ViewEvent::DocumentCommitted);
    rig.page(0, ready_from(&"d".repeat(32)));
    assert!(
        rig.notes().contains(&"reloaded w1".to_owned()),
        "{:?}",
        rig.notes()
    );
    assert_eq!(rig.view(0).delivered.borrow().last().unwrap(), r#"{"n":0}"#);
}

#[test]
fn a_hibernated_surface_shown_again_wakes_in_a_new_view_with_the_state_sent_while_it_slept() {
    let mut rig = two_ready_under_a_cap_of_two();
    let w1 = rig.key("w1");
    assert!(rig.engine.set_surface_visible(&w1, false));
    rig.open("w3");
    assert!(rig.engine.screen().is_hibernated(&w1) && rig.view(0).closed.get());
    // While it sleeps the agent patches it, and hears nothing of the hibernation.
    let before = rig.sent.borrow().len();
    rig.agent("ui.patch", json!({"instance_id": "w1", "state": {"n": 5}}));
    assert!(
        rig.sent_types(before).is_empty(),
        "{:?}",
        rig.sent_types(before)
    );

    // Shown: a new view in its place, past the cap since nothing shown may hibernate.
    assert!(rig.engine.set_surface_visible(&w1, true));
    assert_eq!(rig.views_made(), 3, "it wakes at the loop's next turn");
    rig.pump();
    assert_eq!(rig.views_made(), 4);
    let woken = rig.view(3);
    assert_eq!(woken.place, Place::Child);
    assert!(woken.visible.get());
    assert!(!rig.engine.screen().is_hibernated(&w1));
    assert!(woken.delivered.borrow().is_empty(), "state before ready");
    rig.ready(3);
    assert_eq!(*woken.delivered.borrow(), [r#"{"n":5}"#]);
    assert!(
        rig.sent_types(before).is_empty(),
        "{:?}",
        rig.sent_types(before)
    );
    // Laid out with the other two shown.
    assert_eq!(rig.heard.borrow().slots.last().map(|s| s.1), Some(3));
}

#[test]
fn each_loop_event_for_the_kernel_reaches_its_session_and_the_answer_goes_out() {
    let c1 = || ConversationId::try_from("c1").unwrap();
    let w1 = |rig: &Rig| rig.key("w1").instance;
    // (the event, what the agent hears: its type, and its code or close reason; whether w1 goes)
    type Event = Box<dyn Fn(&Rig) -> Inner>;
    type Row = (
        &'static str,
        Event,
        Option<(&'static str, &'static str)>,
        bool,
    );
    let table: [Row; 5] = [
        (
            "oversized",
            Box::new(|_| Inner::Oversized {
                line: Some(9),
                len: 1 << 30,
            }),
            Some(("client.error", "too_large")),
            false,
        ),
        (
            "binary frame",
            Box::new(|_| Inner::BinaryFrame { len: 5 }),
            Some(("client.error", "binary_frame")),
            false,
        ),
        (
            "events dropped",
            Box::new(move |rig| Inner::EventsDropped {
                instance: w1(rig),
                count: 3,
            }),
            Some(("client.error", "events_dropped")),
            false,
        ),
        (
            "surfaces gone",
            Box::new(move |_| Inner::SurfacesGone {
                conversation: Some(c1()),
                reason: GoneReason::AgentGone,
            }),
            Some(("ui.event", "agent_gone")),
            true,
        ),
        (
            "withdraw of no such capability",
            Box::new(|_| Inner::Withdraw {
                name: CapabilityName::try_from("test.none").unwrap(),
            }),
            None,
            false,
        ),
    ];
    for (name, event, heard, gone) in table {
        let mut rig = Rig::new(Setup::default());
        rig.open("w1");
        rig.ready(0);
        let before = rig.sent.borrow().len();
        let event = event(&rig);
        rig.engine.handle_event(event, &NoWindows);
        let sent = rig.sent.borrow()[before..].to_vec();
        let got: Vec<(String, Value)> = sent
            .iter()
            .map(|m| {
                let payload = &m["payload"];
                let code = payload.get("code").unwrap_or(&payload["data"]["reason"]);
                (
                    m["type"].as_str().unwrap_or_default().to_owned(),
                    code.clone(),
                )
            })
            .collect();
        let want: Vec<(String, Value)> = heard
            .map(|(kind, code)| (format!("lineup.v1.{kind}"), json!(code)))
            .into_iter()
            .collect();
        assert_eq!(got, want, "{name}");
        assert_eq!(rig.view(0).closed.get(), gone, "{name}");
        assert_eq!(rig.engine.screen().is_empty(), gone, "{name}");
    }
}

#[test]
fn the_user_closing_the_parent_window_closes_every_surface_and_each_agent_hears_it() {
    let mut rig = Rig::new(Setup {
        children: true,
        ..Setup::default()
    });
    rig.open("w1");
    rig.open("w2");
    let before = rig.sent.borrow().len();
    rig.engine.user_closed_all(&NoWindows);
    let closed: Vec<Value> = rig.sent.borrow()[before..]
        .iter()
        .filter(|m| m["type"] == "lineup.v1.ui.event" && m["payload"]["event"] == "close")
        .map(|m| m["payload"]["instance_id"].clone())
        .collect();
    assert_eq!(closed, [json!("w1"), json!("w2")]);
    assert!(rig.view(0).closed.get() && rig.view(1).closed.get());
    assert!(rig.engine.screen().is_empty());
}

#[test]
fn a_conversation_hidden_hides_its_surfaces_together_and_what_it_opens_starts_hidden() {
    let mut rig = Rig::new(Setup {
        children: true,
        ..Setup::default()
    });
    let (c1, c2) = (
        ConversationId::try_from("c1").unwrap(),
        ConversationId::try_from("c2").unwrap(),
    );
    rig.open("w1");
    rig.ready(0);
    let before = rig.sent.borrow().len();
    // (the conversation, shown or hidden, whether it has a session, w1 shown, w2 shown)
    let table = [
        (&c1, false, true, false, None),
        (&c1, false, true, false, Some(false)),
        (&c1, true, true, true, Some(true)),
        // No session yet: hidden all the same, so what it opens starts hidden.
        (&c2, false, false, true, Some(true)),
    ];
    for (conversation, visible, has_session, w1_shown, w2_shown) in table {
        let name = format!("{conversation} visible={visible} w2={w2_shown:?}");
        let answered = rig.engine.set_conversation_visible(conversation, visible);
        assert_eq!(answered, has_session, "{name}");
        assert_eq!(
            rig.engine.screen().conversation_hidden(conversation),
            !visible,
            "{name}"
        );
        if w2_shown.is_some() && rig.views_made() == 1 {
            rig.open("w2");
        }
        assert_eq!(rig.view(0).visible.get(), w1_shown, "{name}");
        assert_eq!(
            rig.views_made() == 2 && rig.view(1).visible.get(),
            w2_shown == Some(true),
            "{name}"
        );
    }
    // Shown again, both are laid out side by side; the agents heard nothing of it.
    assert_eq!(rig.heard.borrow().slots.last(), Some(&(1, 2)));
    assert!(
        rig.sent_types(before).is_empty(),
        "{:?}",
        rig.sent_types(before)
    );
}
