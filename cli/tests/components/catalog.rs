//! The display components (markdown, text, status, progress, alert): each shows, stacked in
//! open order in the conversation's one window (R-STD-13); a progress's cancel and a dismissible alert's dismiss answer through a real click;
//! a question whose `expires_at` passed closes `expired` (R-STD-5, R-STD-7, R-STD-14).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use lineup_host_core::Timestamp;
use serde_json::json;

use super::stdio_host::{envelope, error_for, is, StdioHost};
use super::{click_until, display, events, height, screen, shown, CATALOG, STACK};

#[test]
fn r_std_14_every_display_component_is_listed_and_shows() {
    let _screen = screen();
    let x = display();
    let tmp = tempfile::tempdir().unwrap();
    let mut host = StdioHost::start(tmp.path(), &["--builtin-components"]);
    let opens = [
        json!({"instance_id": "m1", "component": {"id": "markdown", "version": "1"},
               "state": {"text": "**Build** passed — [log](https://ci.example/1)"}}),
        json!({"instance_id": "t1", "component": {"id": "text", "version": "1"},
               "state": {"text": "Queued.", "variant": "caption"}}),
        json!({"instance_id": "s1", "component": {"id": "status", "version": "1"},
               "state": {"status": "in_progress", "title": "Migrating",
                         "steps": [{"title": "Backup", "status": "complete"}]}}),
        json!({"instance_id": "p1", "component": {"id": "progress", "version": "1",
               "props": {"label": "Uploading", "cancel_label": "Stop"}},
               "state": {"value": 40, "text": "40 of 100 files"}}),
        json!({"instance_id": "e1", "component": {"id": "alert", "version": "1",
               "props": {"dismissible": true}},
               "state": {"severity": "error", "title": "Deploy failed", "body": "Exit 137"}}),
    ];
    for (i, open) in opens.into_iter().enumerate() {
        host.send(&envelope(&format!("m-{i}"), "ui.open", open));
    }
    let inventory = host.expect("client.inventory", is("client.inventory"));
    let listed = inventory["payload"]["standard_components"].to_string();
    for id in CATALOG {
        assert!(
            listed.contains(&format!(r#""id":"{id}""#)),
            "{id} not in {listed}"
        );
    }
    let window = shown(&x, STACK);
    // The five are laid out in one column: the window grows to hold them all.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while height(&x, window) < 5 * 60 {
        assert!(
            std::time::Instant::now() < deadline,
            "the five did not stack"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    let all_five = height(&x, window);

    // A patch streams into the shown view; nothing goes upstream for it.
    host.send(&envelope(
        "m-9",
        "ui.patch",
        json!({"instance_id": "p1", "state": {"value": 80, "text": "80 of 100 files"}}),
    ));
    host.drain(Duration::from_millis(1500));
    let refused: Vec<_> = host
        .seen
        .iter()
        .filter(|(_, v)| is("client.error")(v) || is("ui.event")(v))
        .collect();
    assert!(refused.is_empty(), "{refused:?}");

    // An agent's close takes its component out of the stack and sends nothing (R-UI-5); the
    // alert, the bottom one, goes first, so the progress ends at the bottom: the click below
    // reaches it only if the four went.
    for (i, instance) in ["e1", "s1", "t1", "m1"].into_iter().enumerate() {
        host.send(&envelope(
            &format!("m-c{i}"),
            "ui.close",
            json!({"instance_id": instance}),
        ));
    }
    host.drain(Duration::from_millis(1000));
    assert!(x.is_viewable(window), "the progress's window went");
    let one = height(&x, window);
    assert!(one < all_five / 2, "the window kept {one} of {all_five} px");
    assert!(events(&host, "close").is_empty());

    // The progress's cancel, by a click after the guard (R-STD-5: progress answers cancel).
    std::thread::sleep(Duration::from_millis(700));
    let cancel = click_until(&x, window, &mut host, "the progress's cancel", |v| {
        is("ui.event")(v) && v["payload"]["event"] == "cancel"
    });
    assert_eq!(cancel["payload"]["instance_id"], "p1", "{cancel}");
    assert_eq!(cancel["payload"]["data"]["via"], "host", "{cancel}");
    assert_eq!(cancel["payload"]["data"]["input"], "pointer", "{cancel}");
    host.send(&envelope("m-c9", "ui.close", json!({"instance_id": "p1"})));
    // The last component closed: the window goes with it.
    host.drain(Duration::from_millis(500));
    assert!(!x.is_viewable(window), "an empty stack is still shown");

    // A dismissible alert's dismiss is the user's close: one `close {}` (R-UI-5), and the
    // window goes.
    host.send(&envelope(
        "m-10",
        "ui.open",
        json!({"instance_id": "e2", "component": {"id": "alert", "version": "1",
               "props": {"dismissible": true}},
               "state": {"severity": "warning", "title": "Disk at 91 %"}}),
    ));
    host.drain(Duration::from_millis(500));
    let alert = shown(&x, STACK);
    std::thread::sleep(Duration::from_millis(700));
    let close = click_until(&x, alert, &mut host, "the alert's close", |v| {
        is("ui.event")(v) && v["payload"]["event"] == "close"
    });
    assert_eq!(close["payload"]["instance_id"], "e2", "{close}");
    assert_eq!(close["payload"]["data"], json!({}), "{close}");
    host.drain(Duration::from_millis(500));
    assert!(!x.is_viewable(alert), "the dismissed alert is still shown");
    assert_eq!(events(&host, "close").len(), 1);
    host.stop();
}

#[test]
fn r_std_7_a_question_past_its_expires_at_closes_expired() {
    let _screen = screen();
    let x = display();
    let tmp = tempfile::tempdir().unwrap();
    let mut host = StdioHost::start(tmp.path(), &["--builtin-components"]);
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let at = Timestamp::from_unix_seconds(i64::try_from(now).unwrap() + 4).unwrap();
    host.send(&envelope(
        "m-1",
        "ui.open",
        json!({"instance_id": "q1", "component": {"id": "confirm", "version": "1",
               "props": {"title": "Restart the worker?", "expires_at": at.to_string()}}}),
    ));
    let window = shown(&x, STACK);
    let close = host.expect("the expiry's close", |v| {
        is("ui.event")(v) && v["payload"]["event"] == "close"
    });
    // The idle loop is woken at the deadline by the host's one timer (#48, #49): the close
    // comes within a second and a half of `expires_at`, not seconds later.
    let heard = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    #[allow(clippy::cast_precision_loss)]
    let due = (now + 4) as f64;
    assert!(
        heard >= due - 1.0 && heard <= due + 1.5,
        "the expiry's close came {:.2} s after expires_at",
        heard - due
    );
    assert_eq!(close["payload"]["instance_id"], "q1", "{close}");
    assert_eq!(close["payload"]["data"]["reason"], "expired", "{close}");
    host.drain(Duration::from_millis(500));
    assert!(
        !x.is_viewable(window),
        "the expired question is still shown"
    );
    host.stop();
}

#[test]
fn r_std_14_without_a_renderer_the_inventory_lists_none_and_an_open_is_unsupported() {
    // R-STD-14: the inventory lists exactly what renders now. `lineup host --stdio
    // --no-builtin-components` renders none: it lists none, and a confirm is refused (R-STD-4)
    // with nothing shown. The positive control is every test above, with the renderer on.
    let _screen = screen();
    let x = display();
    let tmp = tempfile::tempdir().unwrap();
    let mut host = StdioHost::start(tmp.path(), &["--no-builtin-components"]);
    host.send(&envelope(
        "m-1",
        "ui.open",
        json!({"instance_id": "k1", "component": {"id": "confirm", "version": "1",
               "props": {"title": "Deploy?"}}}),
    ));
    let inventory = host.expect("client.inventory", is("client.inventory"));
    assert_eq!(
        inventory["payload"]["standard_components"],
        json!([]),
        "{inventory}"
    );
    let refused = host.expect("the refusal", error_for("m-1"));
    assert_eq!(refused["payload"]["code"], "unsupported", "{refused}");
    assert_eq!(
        refused["payload"]["field"], "payload.component.id",
        "{refused}"
    );
    host.drain(Duration::from_millis(1000));
    assert!(
        x.find_window_by_title(STACK).is_none(),
        "a component window was made"
    );
    assert!(events(&host, "submit").is_empty());
    host.stop();
}
