//! `confirm`: R-STD-8's guard and credit, R-STD-7's one answer per round, Enter and Escape.

use std::thread;
use std::time::Duration;

use serde_json::json;

use super::stdio_host::is;
use super::{
    click_last_button, click_until, shown, start_with, submits, CATALOG, ESCAPE, RETURN, STACK,
};

#[test]
fn r_std_8_a_confirm_is_answered_once_by_a_real_click_after_the_guard() {
    let (started, mut host) = start_with(
        "m-1",
        "deploy.ok",
        json!({"id": "confirm", "version": "1",
               "props": {"title": "Deploy to production?", "body": "3 services, **no** migrations. <b>x</b>",
                         "confirm_label": "Deploy", "deny_label": "Keep"}}),
    );
    let x = &started.x;
    let inventory = host.expect("client.inventory", is("client.inventory"));
    let listed: Vec<(String, String)> = inventory["payload"]["standard_components"]
        .as_array()
        .unwrap_or_else(|| panic!("no standard_components: {inventory}"))
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap_or_default().to_owned(),
                c["version"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    for id in CATALOG {
        assert!(
            listed.contains(&(id.to_owned(), "1".to_owned())),
            "{id} v1 not listed: {listed:?}"
        );
    }

    // R-STD-8 (b): a click at once, inside the guard delay, is dropped.
    let window = shown(x, STACK);
    click_last_button(x, window);
    host.drain(Duration::from_millis(1500));
    assert!(
        submits(&host).is_empty(),
        "a click inside the guard delay answered: {:?}",
        submits(&host)
    );
    assert!(
        !host.seen.iter().any(|(_, v)| is("ui.event")(v)),
        "no event at all: {:?}",
        host.seen
    );

    // After the guard: exactly one submit, made by the host from a pointer release.
    let submit = click_until(x, window, &mut host, "submit", |v| {
        is("ui.event")(v) && v["payload"]["event"] == "submit"
    });
    assert_eq!(submit["payload"]["instance_id"], "deploy.ok");
    let data = &submit["payload"]["data"];
    assert_eq!(data["answer"], true, "{submit}");
    assert_eq!(data["via"], "host", "{submit}");
    assert_eq!(data["input"], "pointer", "{submit}");
    assert_eq!(data["round"], 1, "{submit}");
    assert_eq!(data["opened_by"], "m-1", "{submit}");
    assert_eq!(data["state_from"], "m-1", "{submit}");
    assert!(data["answer_id"].as_str().is_some_and(|id| !id.is_empty()));

    // R-STD-7: the round is answered; a second click sends nothing more.
    thread::sleep(Duration::from_millis(300));
    click_last_button(x, window);
    host.drain(Duration::from_millis(2000));
    assert_eq!(submits(&host).len(), 1, "{:?}", submits(&host));
    host.stop();
}

#[test]
fn r_std_8_enter_never_confirms_and_escape_cancels_from_the_keyboard() {
    let (started, mut host) = start_with(
        "m-2",
        "drop.db",
        json!({"id": "confirm", "version": "1",
               "props": {"title": "Drop the database?", "tone": "danger"}}),
    );
    let x = &started.x;
    let window = shown(x, STACK);
    x.focus(window).unwrap();
    // Past the danger guard delay (1 s): Enter still answers nothing.
    thread::sleep(Duration::from_millis(1500));
    x.key(RETURN).unwrap();
    host.drain(Duration::from_millis(1500));
    assert!(
        !host.seen.iter().any(|(_, v)| is("ui.event")(v)),
        "Enter answered: {:?}",
        host.seen
    );
    x.key(ESCAPE).unwrap();
    let cancel = host.expect("the cancel", |v| {
        is("ui.event")(v) && v["payload"]["event"] == "cancel"
    });
    let data = &cancel["payload"]["data"];
    assert!(data.get("answer").is_none(), "{cancel}");
    assert_eq!(data["via"], "host", "{cancel}");
    assert_eq!(data["input"], "keyboard", "{cancel}");
    assert_eq!(data["opened_by"], "m-2", "{cancel}");
    host.stop();
}

/// #48 item 1: the standard components are on by default. A plain `lineup host --stdio
/// --conversation c1` lists the nine in its first line, which stays within 2 KiB (the schemas
/// travel by reference, R-STD-14), and shows a `confirm` that a real click answers.
#[test]
fn r_std_14_a_plain_host_lists_the_nine_in_a_small_first_line_and_a_click_answers() {
    let _screen = super::screen();
    let x = super::display();
    let tmp = tempfile::tempdir().unwrap();
    let mut host = super::stdio_host::StdioHost::start(tmp.path(), &["--conversation", "c1"]);
    let inventory = host.expect("client.inventory", is("client.inventory"));
    assert!(
        host.seen.len() == 1,
        "the inventory is the first line: {:?}",
        host.seen
    );
    let line = inventory.to_string();
    eprintln!("the first line: {} bytes", line.len());
    assert!(line.len() <= 2048, "{} bytes: {line}", line.len());
    let listed: Vec<&str> = inventory["payload"]["standard_components"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["id"].as_str())
        .collect();
    assert_eq!(listed, CATALOG, "{inventory}");
    host.send(&super::stdio_host::envelope(
        "m-1",
        "ui.open",
        serde_json::json!({"instance_id": "k1", "component": {"id": "confirm", "version": "1",
               "props": {"title": "Publish?", "confirm_label": "Publish"}}}),
    ));
    let window = shown(&x, STACK);
    super::focus_past_guard(&host, &x, window);
    let submit = click_until(&x, window, &mut host, "submit", |v| {
        is("ui.event")(v) && v["payload"]["event"] == "submit"
    });
    assert_eq!(submit["payload"]["data"]["answer"], true, "{submit}");
    assert_eq!(submit["payload"]["data"]["input"], "pointer", "{submit}");
    host.stop();
}
