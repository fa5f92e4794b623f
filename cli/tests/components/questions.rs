//! `choice`, `input` and `form` answered from the keyboard through XTEST, with the answer
//! R-STD-6 names; a `state.error` patch opens round 2 with the draft kept (R-STD-7). The three
//! stack in the conversation's one window (R-STD-13): the one shown last has the keyboard.

use std::thread;
use std::time::Duration;

use serde_json::{json, Value};

use super::stdio_host::{envelope, StdioHost};
use super::{
    focus_past_guard, grown, height, shown, start_with, submits, DOWN, RETURN, SPACE, STACK, TAB,
};

/// The `n`th submit, waiting for it.
fn nth_submit(host: &mut StdioHost, n: usize) -> Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while submits(host).len() < n {
        assert!(
            std::time::Instant::now() < deadline,
            "no submit #{n}: {:?}\nstderr:\n{}",
            host.seen,
            host.stderr.lock().unwrap()
        );
        host.drain(Duration::from_millis(200));
    }
    submits(host)[n - 1].clone()
}

#[test]
fn r_std_6_choice_input_and_form_answer_from_the_keyboard() {
    // A single choice: Tab to the first option, Down picks the second, Tab Tab, Space submits.
    let (started, mut host) = start_with(
        "m-1",
        "c1",
        json!({"id": "choice", "version": "1",
               "props": {"label": "Region", "options": [
                   {"value": "eu", "label": "Europe"}, {"value": "us", "label": "US"}]}}),
    );
    let x = &started.x;
    let window = shown(x, STACK);
    focus_past_guard(&host, x, window);
    for key in [TAB, DOWN, TAB, TAB, SPACE] {
        x.key(key).unwrap();
        thread::sleep(Duration::from_millis(80));
    }
    let submit = nth_submit(&mut host, 1);
    assert_eq!(submit["payload"]["instance_id"], "c1", "{submit}");
    assert_eq!(submit["payload"]["data"]["answer"], "us", "{submit}");
    assert_eq!(submit["payload"]["data"]["input"], "keyboard", "{submit}");
    assert_eq!(submit["payload"]["data"]["opened_by"], "m-1", "{submit}");

    // A text input: typed, then Enter's release submits; an error patch reopens it.
    let before = height(x, window);
    host.send(&envelope(
        "m-2",
        "ui.open",
        json!({"instance_id": "i1", "component": {"id": "input", "version": "1",
               "props": {"label": "Ticket title", "type": "text", "required": true,
                         "max_length": 120}}}),
    ));
    grown(x, window, before);
    focus_past_guard(&host, x, window);
    x.key(TAB).unwrap();
    x.type_text("Disk full").unwrap();
    x.key(RETURN).unwrap();
    let submit = nth_submit(&mut host, 2);
    assert_eq!(submit["payload"]["instance_id"], "i1", "{submit}");
    assert_eq!(submit["payload"]["data"]["answer"], "Disk full", "{submit}");
    assert_eq!(submit["payload"]["data"]["round"], 1, "{submit}");
    host.send(&envelope(
        "m-3",
        "ui.patch",
        json!({"instance_id": "i1", "state": {"error": "Name the host"}}),
    ));
    // The patch restarts the guard delay (R-STD-8 (b)); the draft is still in the field.
    thread::sleep(Duration::from_millis(900));
    x.type_text(" on db1").unwrap();
    x.key(RETURN).unwrap();
    let submit = nth_submit(&mut host, 3);
    assert_eq!(
        submit["payload"]["data"]["answer"], "Disk full on db1",
        "{submit}"
    );
    assert_eq!(submit["payload"]["data"]["round"], 2, "{submit}");
    assert_eq!(submit["payload"]["data"]["state_from"], "m-3", "{submit}");

    // A form: an e-mail typed, a toggle and a choice picked with Space, then Submit.
    let before = height(x, window);
    host.send(&envelope(
        "m-4",
        "ui.open",
        json!({"instance_id": "f1", "component": {"id": "form", "version": "1",
               "props": {"title": "New user", "fields": [
                   {"name": "email", "kind": "input", "label": "Email", "type": "email"},
                   {"name": "admin", "kind": "toggle", "label": "Admin"},
                   {"name": "team", "kind": "choice", "label": "Team",
                    "options": [{"value": "a", "label": "A"}, {"value": "b", "label": "B"}]}]}}}),
    ));
    grown(x, window, before);
    focus_past_guard(&host, x, window);
    x.key(TAB).unwrap();
    x.type_text("ops@example.org").unwrap();
    for key in [TAB, SPACE, TAB, SPACE, TAB, TAB, SPACE] {
        x.key(key).unwrap();
        thread::sleep(Duration::from_millis(80));
    }
    let submit = nth_submit(&mut host, 4);
    assert_eq!(submit["payload"]["instance_id"], "f1", "{submit}");
    assert_eq!(
        submit["payload"]["data"]["answer"],
        json!({"email": "ops@example.org", "admin": true, "team": "a"}),
        "{submit}"
    );
    host.stop();
}
