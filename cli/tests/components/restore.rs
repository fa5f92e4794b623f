//! R-STD-15 end to end: a vouched host keeps its components in the data directory; after a
//! SIGKILL and a restart, the same identity re-establishing the conversation gets each one shown
//! again with a `restored` event, an open input with the draft the user typed before the kill
//! (the secret field's draft is never in the database), an answered confirm with its
//! `answer_id`; another identity gets nothing.

use std::path::Path;
use std::thread;
use std::time::Duration;

use serde_json::{json, Value};

use super::screen::{display, screen};
use super::stdio_host::{envelope, is, StdioHost};
use super::{
    click_last_button, events, focus_past_guard, grown, height, shown, RETURN, STACK, TAB,
};

/// XK_End.
const END: u32 = 0xff57;

fn start(home: &Path, agent: &str) -> StdioHost {
    let data = home.join("lineup-data");
    let data = data.to_str().unwrap();
    StdioHost::start_with_env(
        home,
        home,
        &[],
        &[
            "--builtin-components",
            "--agent-id",
            agent,
            "--data-dir",
            data,
        ],
    )
}

/// Every byte of the data directory's files, as text (lossy), for a search.
fn data_dir_bytes(home: &Path) -> String {
    let mut all = String::new();
    for entry in std::fs::read_dir(home.join("lineup-data")).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            all.push_str(&String::from_utf8_lossy(&std::fs::read(&path).unwrap()));
        }
    }
    all
}

fn restored(host: &StdioHost) -> Vec<(String, Value)> {
    events(host, "restored")
        .into_iter()
        .map(|v| {
            (
                v["payload"]["instance_id"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
                v["payload"]["data"].clone(),
            )
        })
        .collect()
}

/// Starts the host again as agent `a1` in `home`, re-establishes the conversation with a `text`
/// open, and waits up to 30 s for `count` `restored` events; returns the host and what came.
fn restart(home: &Path, count: usize) -> (StdioHost, Vec<(String, Value)>) {
    let mut host = start(home, "a1");
    host.send(&envelope(
        "m-4",
        "ui.open",
        json!({"instance_id": "note", "component": {"id": "text", "version": "1"},
               "state": {"text": "Back."}}),
    ));
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while restored(&host).len() < count && std::time::Instant::now() < deadline {
        host.drain(Duration::from_millis(200));
    }
    let back = restored(&host);
    (host, back)
}

/// The `restored` data of instance `id` in `back`; panics when it was not restored.
fn restored_of(back: &[(String, Value)], id: &str) -> Value {
    back.iter()
        .find(|(i, _)| i == id)
        .map(|(_, d)| d.clone())
        .unwrap_or_else(|| panic!("{id} was not restored: {back:?}"))
}

#[test]
fn r_std_15_components_come_back_after_a_sigkill_with_their_drafts_for_the_same_identity() {
    let _screen = screen();
    let x = display();
    let tmp = tempfile::tempdir().unwrap();
    let mut host = start(tmp.path(), "a1");
    host.send(&envelope(
        "m-1",
        "ui.open",
        json!({"instance_id": "i1", "component": {"id": "input", "version": "1",
               "props": {"label": "Ticket title", "type": "text"}}}),
    ));
    let window = shown(&x, STACK);
    focus_past_guard(&host, &x, window);
    x.key(TAB).unwrap();
    x.type_text("Disk full").unwrap();
    // The keys reach the page (and its draft is reported) before the next question opens.
    thread::sleep(Duration::from_millis(600));
    let before = height(&x, window);
    host.send(&envelope(
        "m-2",
        "ui.open",
        json!({"instance_id": "f1", "component": {"id": "form", "version": "1",
               "props": {"fields": [
                   {"name": "user", "kind": "input", "label": "User"},
                   {"name": "token", "kind": "input", "label": "Token", "type": "secret"}]}}}),
    ));
    // The form stacks below the input (R-STD-13); the keyboard stays in the input being typed
    // into: Tab goes past its two buttons to the form's first field.
    let before = grown(&x, window, before);
    focus_past_guard(&host, &x, window);
    for _ in 0..3 {
        x.key(TAB).unwrap();
        thread::sleep(Duration::from_millis(50));
    }
    x.type_text("ops").unwrap();
    x.key(TAB).unwrap();
    x.type_text("hunter2").unwrap();
    host.send(&envelope(
        "m-3",
        "ui.open",
        json!({"instance_id": "k1", "component": {"id": "confirm", "version": "1",
               "props": {"title": "Restart the worker?"}}}),
    ));
    grown(&x, window, before);
    thread::sleep(Duration::from_millis(800));
    click_last_button(&x, window);
    let submit = host.expect("the confirm's submit", |v| {
        is("ui.event")(v) && v["payload"]["event"] == "submit"
    });
    let answer_id = submit["payload"]["data"]["answer_id"].clone();
    // The drafts are reported 400 ms after the last key; then the host is killed.
    thread::sleep(Duration::from_millis(1200));
    drop(host);

    let bytes = data_dir_bytes(tmp.path());
    assert!(
        bytes.contains("Disk full"),
        "the draft was not kept (positive control)"
    );
    assert!(
        !bytes.contains("hunter2"),
        "the secret draft reached the data directory"
    );

    // The restart: the same identity's first envelope re-establishes the conversation.
    let (mut host, back) = restart(tmp.path(), 3);
    let of = |id: &str| restored_of(&back, id);
    assert_eq!(of("i1")["status"], "open");
    assert_eq!(of("i1")["opened_by"], "m-1");
    assert_eq!(of("f1")["status"], "open");
    assert_eq!(of("k1")["status"], "answered");
    assert_eq!(of("k1")["last"]["answer_id"], answer_id);

    // The input shows the draft typed before the kill: one more word and Enter send it all.
    // The agent closes the other three; the one left in the stack has the keyboard.
    let window = shown(&x, STACK);
    for (i, id) in ["f1", "k1", "note"].into_iter().enumerate() {
        host.send(&envelope(
            &format!("m-c{i}"),
            "ui.close",
            json!({"instance_id": id}),
        ));
    }
    thread::sleep(Duration::from_millis(800));
    focus_past_guard(&host, &x, window);
    x.key(TAB).unwrap();
    x.key(END).unwrap();
    x.type_text(" again").unwrap();
    x.key(RETURN).unwrap();
    let submit = host.expect("the restored input's submit", |v| {
        is("ui.event")(v) && v["payload"]["event"] == "submit"
    });
    assert_eq!(submit["payload"]["instance_id"], "i1", "{submit}");
    assert_eq!(
        submit["payload"]["data"]["answer"], "Disk full again",
        "{submit}"
    );
    drop(host);

    // Another identity re-establishing the same conversation gets nothing back.
    let mut host = start(tmp.path(), "a2");
    let other = json!({"v": 1, "id": "m-5", "type": "lineup.v1.ui.open", "conversation_id": "c1",
                       "sender": {"kind": "agent", "id": "a2"},
                       "payload": {"instance_id": "note", "component": {"id": "text", "version": "1"},
                                   "state": {"text": "Hi."}}});
    host.send(&other.to_string());
    host.drain(Duration::from_millis(2500));
    assert!(restored(&host).is_empty(), "{:?}", restored(&host));
    host.stop();
}

/// §3, R-STD-15: a `secret` answer, typed and submitted, is never in the data directory, in
/// either form (an `input` of type `secret`, a `form`'s `secret` field), not even after a clean
/// stop; the record keeps the answer's `answer_id` and `round`, and `restored.last` omits the
/// value. The form's other field, submitted with it, is kept (the positive control).
#[test]
fn r_std_15_a_submitted_secret_is_never_stored_in_either_form() {
    let _screen = screen();
    let x = display();
    let tmp = tempfile::tempdir().unwrap();
    let mut host = start(tmp.path(), "a1");
    host.send(&envelope(
        "m-1",
        "ui.open",
        json!({"instance_id": "s1", "component": {"id": "input", "version": "1",
               "props": {"label": "Password", "type": "secret"}}}),
    ));
    let window = shown(&x, STACK);
    focus_past_guard(&host, &x, window);
    x.key(TAB).unwrap();
    x.type_text("correct-horse").unwrap();
    x.key(RETURN).unwrap();
    let first = host.expect("the secret input's submit", |v| {
        is("ui.event")(v) && v["payload"]["event"] == "submit"
    });
    assert_eq!(first["payload"]["data"]["answer"], "correct-horse");
    let answer_id = first["payload"]["data"]["answer_id"].clone();
    let before = height(&x, window);
    host.send(&envelope(
        "m-2",
        "ui.open",
        json!({"instance_id": "f1", "component": {"id": "form", "version": "1",
               "props": {"fields": [
                   {"name": "user", "kind": "input", "label": "User"},
                   {"name": "token", "kind": "input", "label": "Token", "type": "secret"}]}}}),
    ));
    // The form stacks below the answered input and takes the keyboard (R-STD-13).
    grown(&x, window, before);
    focus_past_guard(&host, &x, window);
    x.key(TAB).unwrap();
    x.type_text("opsuser").unwrap();
    x.key(TAB).unwrap();
    x.type_text("battery-staple").unwrap();
    x.key(RETURN).unwrap();
    let second = host.expect("the form's submit", |v| {
        is("ui.event")(v)
            && v["payload"]["event"] == "submit"
            && v["payload"]["instance_id"] == "f1"
    });
    assert_eq!(
        second["payload"]["data"]["answer"]["token"],
        "battery-staple"
    );
    // Both stay open, answered, so their records are kept; the host then stops cleanly.
    host.drain(Duration::from_millis(800));
    host.stop();

    let bytes = data_dir_bytes(tmp.path());
    assert!(
        bytes.contains("opsuser"),
        "the form's other field was not kept (positive control)"
    );
    for secret in ["correct-horse", "battery-staple"] {
        assert!(
            !bytes.contains(secret),
            "the submitted secret {secret:?} reached the data directory"
        );
    }

    // Both records come back: each `last` names its answer without the secret.
    let (host, back) = restart(tmp.path(), 2);
    let input = restored_of(&back, "s1");
    assert_eq!(input["last"]["answer_id"], answer_id, "{input}");
    assert_eq!(input["last"]["round"], 1, "{input}");
    assert!(input["last"].get("answer").is_none(), "{input}");
    let form = restored_of(&back, "f1");
    assert_eq!(form["status"], "answered", "{form}");
    assert_eq!(form["last"]["answer"], json!({"user": "opsuser"}), "{form}");
    assert!(form["last"]["answer_id"].is_string(), "{form}");
    assert!(
        !serde_json::to_string(&back)
            .unwrap()
            .contains("correct-horse"),
        "{back:?}"
    );
    host.stop();
}

/// R-STD-15: "a view crash re-renders silently". The web process of the components is killed
/// while an input holds the user's draft: the board is built again in a new one with the draft
/// in its field, the agent hears no close, and the user goes on typing and answers.
#[test]
fn r_std_15_a_killed_component_process_is_built_again_with_the_draft() {
    let _screen = screen();
    let x = display();
    let tmp = tempfile::tempdir().unwrap();
    let mut host = start(tmp.path(), "a1");
    host.send(&envelope(
        "m-1",
        "ui.open",
        json!({"instance_id": "i1", "component": {"id": "input", "version": "1",
               "props": {"label": "Ticket title", "type": "text"}}}),
    ));
    let window = shown(&x, STACK);
    focus_past_guard(&host, &x, window);
    x.key(TAB).unwrap();
    x.type_text("Disk full").unwrap();
    // The draft reaches the host (reported 400 ms after the last key).
    host.drain(Duration::from_millis(1200));
    let killed = lineup_tests::procs::web_processes_of(host.pid());
    assert!(!killed.is_empty(), "control: the host runs no web process");
    for pid in &killed {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
    host.drain(Duration::from_millis(2500));
    let now = lineup_tests::procs::web_processes_of(host.pid());
    assert!(
        now.is_disjoint(&killed) && !now.is_empty(),
        "no new web process: before {killed:?}, now {now:?}"
    );
    let closes: Vec<&Value> = host
        .seen
        .iter()
        .map(|(_, v)| v)
        .filter(|v| is("ui.event")(v) && v["payload"]["event"] == "close")
        .collect();
    assert!(closes.is_empty(), "the agent heard a close: {closes:?}");
    focus_past_guard(&host, &x, window);
    x.key(TAB).unwrap();
    x.key(END).unwrap();
    x.type_text(" again").unwrap();
    x.key(RETURN).unwrap();
    let submit = host.expect("the rebuilt input's submit", |v| {
        is("ui.event")(v) && v["payload"]["event"] == "submit"
    });
    assert_eq!(submit["payload"]["instance_id"], "i1", "{submit}");
    assert_eq!(
        submit["payload"]["data"]["answer"], "Disk full again",
        "{submit}"
    );
    host.stop();
}
