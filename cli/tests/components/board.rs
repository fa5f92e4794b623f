//! The conversation's board window through `lineup host --stdio` (#48 item 4): a question taller
//! than the window keeps its buttons in view (its text scrolls inside the card); a move or a
//! raise of the window restarts the guard, so a click 100 ms later is dropped (one after the
//! guard answers: the positive control); 64 components fit in one board, the last answered by
//! a real click, and the 65th is refused `too_many_components` (R-STD-17).

use std::thread;
use std::time::{Duration, Instant};

use serde_json::json;

use super::stdio_host::{envelope, is, StdioHost};
use super::{
    click_last_button, click_until, focus_past_guard, height, shown, start_with, submits, STACK,
};

/// Whether a submit arrives within `wait`.
fn submitted_within(host: &mut StdioHost, wait: Duration) -> bool {
    let deadline = Instant::now() + wait;
    while Instant::now() < deadline {
        host.drain(Duration::from_millis(100));
        if !submits(host).is_empty() {
            return true;
        }
    }
    !submits(host).is_empty()
}

#[test]
fn r_std_13_a_tall_question_keeps_its_buttons_in_view() {
    let body = (1..=60)
        .map(|i| format!("Line {i} of the release notes."))
        .collect::<Vec<_>>()
        .join("\n\n");
    assert!(body.len() >= 1800, "{} bytes", body.len());
    let (started, mut host) = start_with(
        "m-1",
        "tall",
        json!({"id": "confirm", "version": "1",
               "props": {"title": "Publish the release?", "body": body, "confirm_label": "Publish"}}),
    );
    let x = &started.x;
    let window = shown(x, STACK);
    let tall = height(x, window);
    assert!(
        (120..=720).contains(&tall),
        "the board is {tall} px tall: not the question with its buttons"
    );
    focus_past_guard(&host, x, window);
    let submit = click_until(x, window, &mut host, "the tall question's submit", |v| {
        is("ui.event")(v) && v["payload"]["event"] == "submit"
    });
    assert_eq!(submit["payload"]["data"]["answer"], true, "{submit}");
    assert_eq!(submit["payload"]["data"]["input"], "pointer", "{submit}");
    host.stop();
}

#[test]
fn r_std_8_a_move_or_a_raise_of_the_window_restarts_the_guard() {
    let (started, mut host) = start_with(
        "m-1",
        "moved",
        json!({"id": "confirm", "version": "1",
               "props": {"title": "Rotate the keys?", "confirm_label": "Rotate"}}),
    );
    let x = &started.x;
    let window = shown(x, STACK);
    focus_past_guard(&host, x, window);
    let (ox, oy) = x.window_origin(window).unwrap();
    for (what, change) in [
        (
            "a move",
            Box::new(|| {
                x.move_window(window, i32::from(ox) + 40, i32::from(oy) + 30)
                    .unwrap()
            }) as Box<dyn Fn()>,
        ),
        ("a raise", Box::new(|| x.raise(window).unwrap())),
    ] {
        change();
        thread::sleep(Duration::from_millis(100));
        click_last_button(x, window);
        assert!(
            !submitted_within(&mut host, Duration::from_millis(900)),
            "a click 100 ms after {what} answered: {:?}",
            submits(&host)
        );
    }
    // The positive control: the same click after the guard answers.
    thread::sleep(Duration::from_millis(300));
    click_until(x, window, &mut host, "submit after the guard", |v| {
        is("ui.event")(v) && v["payload"]["event"] == "submit"
    });
    host.stop();
}

#[test]
fn r_std_17_sixty_four_components_fit_in_one_board_and_the_65th_is_refused() {
    let _screen = super::screen();
    let x = &super::display();
    let tmp = tempfile::tempdir().unwrap();
    let mut host = StdioHost::start(tmp.path(), &["--builtin-components"]);
    let text = || json!({"id": "text", "version": "1"});
    // 63 texts and a confirm: opens share the Surfaces' rate window (30 per 10 s, counted as
    // the host reads them).
    for i in 0..64 {
        if i > 0 && i % 30 == 0 {
            host.drain(Duration::from_millis(11_000));
        }
        let component = if i == 63 {
            json!({"id": "confirm", "version": "1", "props": {"title": "The 64th?"}})
        } else {
            text()
        };
        host.send(&envelope(
            &format!("m-{i}"),
            "ui.open",
            json!({"instance_id": format!("t{i}"), "component": component,
                   "state": if i == 63 { json!({}) } else { json!({"text": format!("Text {i}")}) }}),
        ));
    }
    let window = shown(x, STACK);
    // The confirm, opened last, is scrolled into view at the bottom of the board.
    host.drain(Duration::from_millis(1500));
    let errors: Vec<_> = host
        .seen
        .iter()
        .filter(|(_, v)| is("client.error")(v))
        .map(|(_, v)| v.clone())
        .collect();
    assert!(errors.is_empty(), "opens refused: {errors:?}");
    focus_past_guard(&host, x, window);
    let submit = click_until(x, window, &mut host, "the 64th's submit", |v| {
        is("ui.event")(v) && v["payload"]["event"] == "submit"
    });
    assert_eq!(submit["payload"]["instance_id"], "t63", "{submit}");
    let closed: Vec<_> = host
        .seen
        .iter()
        .filter(|(_, v)| is("ui.event")(v) && v["payload"]["event"] == "close")
        .map(|(_, v)| v.clone())
        .collect();
    assert!(closed.is_empty(), "components closed: {closed:?}");
    // The 65th is the fifth open of the rate window that began with the last batch.
    host.send(&envelope(
        "m-65",
        "ui.open",
        json!({"instance_id": "t65", "component": text(), "state": {"text": "one too many"}}),
    ));
    let refused = host.expect("the 65th's refusal", |v| {
        is("client.error")(v) && v["payload"]["in_reply_to"] == "m-65"
    });
    assert_eq!(
        refused["payload"]["code"], "too_many_components",
        "{refused}"
    );
    assert_eq!(refused["payload"]["limit"], 64, "{refused}");
    host.stop();
}

/// R-UI-1 and R-STD-7 through a real host: a click that races the agent's replacement of its
/// question never answers the new one: each answer carries the `opened_by` of an open sent before
/// the click, whichever reached the host first; after the new question's guard, a click answers
/// it (the positive control).
#[test]
fn r_ui_1_a_click_racing_a_replace_never_answers_the_new_question() {
    let question = |title: &str| json!({"id": "confirm", "version": "1", "props": {"title": title, "confirm_label": "Yes"}});
    let (started, mut host) = start_with("m-0", "k1", question("Question 0?"));
    let x = &started.x;
    let window = shown(x, STACK);
    focus_past_guard(&host, x, window);
    let mut sent_before_click = vec!["m-0".to_owned()];
    for round in 1..=3 {
        click_last_button(x, window);
        let id = format!("m-{round}");
        host.send(&envelope(
            &id,
            "ui.open",
            json!({"instance_id": "k1", "component": question(&format!("Question {round}?"))}),
        ));
        host.drain(Duration::from_millis(900));
        for submit in submits(&host) {
            let by = submit["payload"]["data"]["opened_by"]
                .as_str()
                .unwrap_or_default();
            assert!(
                sent_before_click.iter().any(|s| s == by),
                "a click made before {id} answered a question opened by {by}: {submit}"
            );
        }
        sent_before_click.push(id);
        // The new question's guard (restarted when its box was shown) passes.
        thread::sleep(Duration::from_millis(400));
    }
    let last = click_until(x, window, &mut host, "the last question's submit", |v| {
        is("ui.event")(v) && v["payload"]["event"] == "submit"
    });
    assert_eq!(
        last["payload"]["data"]["opened_by"], "m-3",
        "a click after the guard did not answer the last question: {last}"
    );
    host.stop();
}
