//! R-STD-10: an agent's Markdown is bounded where its tree is built. Every Markdown sink
//! (`markdown.text`, `alert.body`, `form.description`, `confirm.body`) filled to its byte cap
//! with nesting (`>`, list markers, emphasis) is shown by a real `lineup host`, which stays up
//! and answers; before the nesting cap one `markdown` of 20,000 `>` killed the process with a
//! stack overflow.

use std::time::Duration;

use serde_json::{json, Value};

use super::stdio_host::{envelope, error_for, is, StdioHost};
use super::{click_until, display, focus_past_guard, screen, shown, submits, STACK};

/// `unit` repeated up to `cap` bytes, then `tail`.
fn filled(unit: &str, tail: &str, cap: usize) -> String {
    let mut text = unit.repeat((cap - tail.len()) / unit.len());
    text.push_str(tail);
    text
}

/// The host answers a round trip after `id`'s open was handled, and is still running.
fn still_up(host: &mut StdioHost, id: &str) {
    let probe = format!("{id}-probe");
    host.send(&envelope(
        &probe,
        "ui.patch",
        json!({"instance_id": "no.such.instance", "state": {}}),
    ));
    host.expect("the round trip's client.error", error_for(&probe));
    assert!(host.alive(), "the host ended after {id}");
    let refused: Vec<&Value> = host
        .seen
        .iter()
        .map(|(_, v)| v)
        .filter(|v| error_for(id)(v))
        .collect();
    assert!(refused.is_empty(), "{id} was refused: {refused:?}");
}

#[test]
fn r_std_10_deep_markdown_at_every_sink_leaves_the_host_up() {
    let _screen = screen();
    let x = display();
    let tmp = tempfile::tempdir().unwrap();
    let mut host = StdioHost::start(tmp.path(), &["--builtin-components"]);
    let opens = [
        (
            "the-crash",
            json!({"instance_id": "m0", "component": {"id": "markdown", "version": "1"},
                   "state": {"text": format!("{} deep", ">".repeat(20_000))}}),
        ),
        (
            "markdown-quotes",
            json!({"instance_id": "m1", "component": {"id": "markdown", "version": "1"},
                   "state": {"text": filled(">", " deep", 32 * 1024)}}),
        ),
        (
            "markdown-lists",
            json!({"instance_id": "m2", "component": {"id": "markdown", "version": "1"},
                   "state": {"text": filled("- ", "deep", 32 * 1024)}}),
        ),
        (
            "alert-lists",
            json!({"instance_id": "a1", "component": {"id": "alert", "version": "1"},
                   "state": {"severity": "info", "title": "Deep", "body": filled("1. ", "deep", 4096)}}),
        ),
        (
            "form-emphasis",
            json!({"instance_id": "f1", "component": {"id": "form", "version": "1",
                   "props": {"title": "Deep", "description": filled("*_", "deep", 4096),
                             "fields": [{"name": "n", "kind": "input", "label": "Name"}]}}}),
        ),
    ];
    for (id, open) in opens {
        host.send(&envelope(id, "ui.open", open));
        still_up(&mut host, id);
    }
    for (i, instance) in ["m0", "m1", "m2", "a1", "f1"].into_iter().enumerate() {
        host.send(&envelope(
            &format!("close-{i}"),
            "ui.close",
            json!({"instance_id": instance}),
        ));
    }
    // The last sink, a confirm's body at its 2 KiB cap, is shown and answered by a real click.
    host.send(&envelope(
        "confirm-quotes",
        "ui.open",
        json!({"instance_id": "c1", "component": {"id": "confirm", "version": "1",
               "props": {"title": "Still here?", "body": filled(">", " deep", 2048),
                         "confirm_label": "Yes", "deny_label": "No"}}}),
    ));
    still_up(&mut host, "confirm-quotes");
    let window = shown(&x, STACK);
    focus_past_guard(&host, &x, window);
    host.drain(Duration::from_millis(300));
    click_until(&x, window, &mut host, "the confirm's submit", |v| {
        is("ui.event")(v) && v["payload"]["event"] == "submit"
    });
    assert_eq!(submits(&host)[0]["payload"]["data"]["answer"], true);
    assert!(host.alive());
    host.stop();
}
