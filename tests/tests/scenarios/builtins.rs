//! The built-in capabilities (spec §5.2) through a real [`Host`](lineup_host::Host)
//! under Xvfb: each `app.call` reaches the desktop only after consent, with the right arguments,
//! and answers `completed` with the documented result; a built-in that is not enabled is neither
//! listed nor callable; and the real `clipboard.write` sets the X clipboard other applications
//! paste from (R-SEC-5, R-CAP-2/3, R-INV-1).
#![allow(clippy::print_stdout, clippy::unwrap_used, missing_docs)]

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;
use std::time::{SystemTime, UNIX_EPOCH};

use lineup_host::{
    Builtin, DesktopCall, HostBuilder, PendingConsent, PickedFile, RecordingDesktop,
};
use lineup_tests::ensure;
use lineup_tests::home::private_home;
use lineup_tests::host_harness::{HostHarness, TestHost};
use lineup_tests::runner::Outcome;
use lineup_tests::x11::X11;
use serde_json::{json, Value};

pub(crate) fn run() {
    let _home = private_home("builtins");
    let mut h = HostHarness::start();
    h.run(
        "r_sec_5_each_builtin_reaches_the_desktop_only_after_consent_and_completes",
        each_builtin_after_consent,
    );
    h.run(
        "r_inv_1_a_builtin_not_enabled_is_not_listed_and_its_call_is_unsupported",
        not_enabled,
    );
    h.run("clipboard_write_sets_the_real_x_clipboard", real_clipboard);
    h.finish();
}

/// A far-off `expires_at`.
fn later() -> String {
    let year = 1970
        + SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs()
            / 31_556_952;
    format!("{}-01-01T00:00:00Z", year + 2)
}

fn call(t: &TestHost, call_id: &str, capability: &str, arguments: Value) -> Vec<u8> {
    t.agent.envelope(
        "lineup.v1.app.call",
        json!({
            "call_id": call_id,
            "capability": capability,
            "reason": "the user asked for it",
            "expires_at": later(),
            "arguments": arguments,
        }),
    )
}

/// The `app.result` payloads for `call_id`, in order.
fn results_of(sent: &[Value], call_id: &str) -> Vec<Value> {
    sent.iter()
        .filter(|m| m["type"] == "lineup.v1.app.result" && m["payload"]["call_id"] == call_id)
        .map(|m| m["payload"].clone())
        .collect()
}

/// The names the latest `client.inventory` lists.
fn listed(sent: &[Value]) -> Vec<String> {
    sent.iter()
        .rev()
        .find(|m| m["type"] == "lineup.v1.client.inventory")
        .and_then(|m| m["payload"]["capabilities"].as_array().cloned())
        .unwrap_or_default()
        .iter()
        .filter_map(|c| c["name"].as_str().map(str::to_owned))
        .collect()
}

type Prompts = Rc<RefCell<VecDeque<PendingConsent>>>;

/// Sends the call, waits for its consent prompt, checks the desktop saw nothing yet, allows it
/// and returns its one result.
fn call_after_consent(
    h: &mut HostHarness,
    t: &mut TestHost,
    prompts: &Prompts,
    desktop: &RecordingDesktop,
    call_id: &str,
    capability: &str,
    arguments: Value,
) -> Result<Value, String> {
    let before = desktop.calls().len();
    t.send(call(t, call_id, capability, arguments))?;
    ensure!(
        h.wait(t, |_, _| !prompts.borrow().is_empty()),
        "{capability}: no consent prompt"
    );
    h.settle(t, std::time::Duration::from_millis(200));
    ensure!(
        desktop.calls().len() == before,
        "{capability}: the desktop acted before consent: {:?}",
        desktop.calls()
    );
    let pending = prompts.borrow_mut().pop_front().ok_or("no prompt")?;
    ensure!(
        pending.request().capability().as_str() == capability,
        "the prompt is for {}",
        pending.request().capability()
    );
    pending.allow();
    ensure!(
        h.wait(t, |_, rec| !results_of(&rec.sent(), call_id).is_empty()),
        "{capability}: no result after consent"
    );
    let results = results_of(&t.rec.sent(), call_id);
    ensure!(results.len() == 1, "{capability}: {results:?}");
    Ok(results[0].clone())
}

fn each_builtin_after_consent(h: &mut HostHarness) -> Outcome {
    let desktop = RecordingDesktop::new();
    desktop.answer_pick(Ok(Some(PickedFile::new(
        "/home/someone/private/notes.txt",
        b"hello".to_vec(),
    ))));
    let prompts: Prompts = Rc::default();
    let queue = Rc::clone(&prompts);
    let builder = HostBuilder::new()
        .builtins(&Builtin::ALL)
        .desktop(desktop.clone())
        .consent_prompt(move |pending: PendingConsent| queue.borrow_mut().push_back(pending));
    let mut t = h.host(builder)?;
    // The inventory arrives with the first envelope of the session.
    let opened = call_after_consent(
        h,
        &mut t,
        &prompts,
        &desktop,
        "u1",
        "app.open_url",
        json!({ "url": "https://example.com/docs" }),
    )?;
    let sent = t.rec.sent();
    let inventory = sent
        .iter()
        .find(|m| m["type"] == "lineup.v1.client.inventory")
        .map(|m| m["payload"]["capabilities"].clone())
        .unwrap_or_default();
    for (name, risk) in [
        ("app.open_url", "user_confirmation"),
        ("clipboard.write", "user_confirmation"),
        ("device.pick_file", "system_permission"),
        ("artifact.save", "user_confirmation"),
    ] {
        ensure!(
            inventory.as_array().is_some_and(|c| c
                .iter()
                .any(|c| c["name"] == name && c["risk"] == risk && c["version"] == "1.0")),
            "the inventory does not declare {name} ({risk}): {inventory}"
        );
    }
    ensure!(
        opened["status"] == "completed" && opened["result"] == json!({ "opened": true }),
        "app.open_url: {opened}"
    );
    ensure!(
        desktop.calls().last() == Some(&DesktopCall::OpenUri("https://example.com/docs".into())),
        "{:?}",
        desktop.calls()
    );

    let copied = call_after_consent(
        h,
        &mut t,
        &prompts,
        &desktop,
        "c1",
        "clipboard.write",
        json!({ "text": "北京" }),
    )?;
    ensure!(
        copied["status"] == "completed"
            && copied["result"] == json!({ "copied": true, "chars": 2 }),
        "clipboard.write: {copied}"
    );
    ensure!(
        desktop.calls().last() == Some(&DesktopCall::SetClipboardText("北京".into())),
        "{:?}",
        desktop.calls()
    );

    // system_permission: no permission hook is configured (the default denies), so only the
    // chooser, standing in for it, can let this complete.
    let picked = call_after_consent(
        h,
        &mut t,
        &prompts,
        &desktop,
        "p1",
        "device.pick_file",
        json!({}),
    )?;
    ensure!(
        picked["status"] == "completed"
            && picked["result"]
                == json!({
                    "name": "notes.txt", "size": 5, "mime_type": "text/plain",
                    "content_base64": "aGVsbG8="
                }),
        "device.pick_file: {picked}"
    );
    ensure!(
        !picked.to_string().contains("/home"),
        "a path leaked: {picked}"
    );
    ensure!(
        matches!(
            desktop.calls().last(),
            Some(DesktopCall::ChooseFile {
                max_bytes: 1_048_576
            })
        ),
        "{:?}",
        desktop.calls()
    );

    let saved = call_after_consent(
        h,
        &mut t,
        &prompts,
        &desktop,
        "s1",
        "artifact.save",
        json!({ "file_name": "../report\u{202E}.csv", "text": "a,b\n1,2\n" }),
    )?;
    ensure!(
        saved["status"] == "completed"
            && saved["result"] == json!({ "saved": true, "file_name": "_report.csv", "size": 8 }),
        "artifact.save: {saved}"
    );
    ensure!(
        desktop.calls()[3..]
            == [
                DesktopCall::SaveFile {
                    suggested_name: "_report.csv".into(),
                },
                DesktopCall::WriteFile {
                    name: "_report.csv".into(),
                    bytes: b"a,b\n1,2\n".to_vec(),
                }
            ],
        "{:?}",
        desktop.calls()
    );
    ensure!(
        desktop.calls().len() == 5,
        "each call ran once: {:?}",
        desktop.calls()
    );
    h.shut_down(t)
}

fn not_enabled(h: &mut HostHarness) -> Outcome {
    let desktop = RecordingDesktop::new();
    let prompts: Prompts = Rc::default();
    let queue = Rc::clone(&prompts);
    let builder = HostBuilder::new()
        .builtin(Builtin::ClipboardWrite)
        .desktop(desktop.clone())
        .consent_prompt(move |pending: PendingConsent| queue.borrow_mut().push_back(pending));
    let mut t = h.host(builder)?;
    t.send(call(
        &t,
        "o1",
        "app.open_url",
        json!({ "url": "https://example.com/" }),
    ))?;
    ensure!(
        h.wait(&mut t, |_, rec| !results_of(&rec.sent(), "o1").is_empty()),
        "no result for a built-in that is off"
    );
    let result = &results_of(&t.rec.sent(), "o1")[0];
    ensure!(
        result["status"] == "unsupported",
        "a built-in that is off must be unsupported: {result}"
    );
    let names = listed(&t.rec.sent());
    ensure!(
        !names.iter().any(|n| n == "app.open_url"),
        "app.open_url is listed while off: {names:?}"
    );
    // Positive control: the enabled built-in is listed, and callable.
    ensure!(
        names == ["clipboard.write"],
        "only clipboard.write should be listed: {names:?}"
    );
    let copied = call_after_consent(
        h,
        &mut t,
        &prompts,
        &desktop,
        "w1",
        "clipboard.write",
        json!({ "text": "on" }),
    )?;
    ensure!(copied["status"] == "completed", "{copied}");
    ensure!(
        desktop.calls() == [DesktopCall::SetClipboardText("on".into())],
        "{:?}",
        desktop.calls()
    );
    h.shut_down(t)
}

/// What another X client pastes from `CLIPBOARD` right now (the host's loop runs meanwhile, as
/// the owner may be this very process).
fn paste(h: &mut HostHarness, t: &mut TestHost, x: &X11) -> Result<Option<String>, String> {
    let window = x.request_clipboard_text().map_err(|e| e.to_string())?;
    let mut answer = None;
    let mut failure = None;
    h.wait(t, |_, _| match x.clipboard_answer(window) {
        Ok(Some(text)) => {
            answer = Some(text);
            true
        }
        Ok(None) => false,
        Err(e) => {
            failure = Some(e.to_string());
            true
        }
    });
    if let Some(e) = failure {
        return Err(e);
    }
    answer.ok_or_else(|| "the clipboard owner never answered".to_owned())
}

fn real_clipboard(h: &mut HostHarness) -> Outcome {
    let x = X11::connect().map_err(|e| e.to_string())?;
    let builder = HostBuilder::new()
        .builtin(Builtin::ClipboardWrite)
        .consent_prompt(|pending: PendingConsent| pending.allow());
    let mut t = h.host(builder)?;
    // Positive control: this process can own the clipboard and another client pastes it.
    let sentinel = format!("sentinel-{}", std::process::id());
    gtk::Clipboard::get(&gtk::gdk::SELECTION_CLIPBOARD).set_text(&sentinel);
    let before = paste(h, &mut t, &x)?;
    ensure!(
        before.as_deref() == Some(sentinel.as_str()),
        "control: the sentinel is not what X clients paste: {before:?}"
    );
    let text = format!("from the agent 北京 {}", std::process::id());
    t.send(call(&t, "x1", "clipboard.write", json!({ "text": text })))?;
    ensure!(
        h.wait(&mut t, |_, rec| !results_of(&rec.sent(), "x1").is_empty()),
        "no result"
    );
    let result = &results_of(&t.rec.sent(), "x1")[0];
    ensure!(
        result["status"] == "completed",
        "the real clipboard.write failed: {result}"
    );
    let in_process = gtk::Clipboard::get(&gtk::gdk::SELECTION_CLIPBOARD)
        .wait_for_text()
        .map(|s| s.to_string());
    ensure!(
        in_process.as_deref() == Some(text.as_str()),
        "GTK's clipboard holds {in_process:?}"
    );
    let pasted = paste(h, &mut t, &x)?;
    ensure!(
        pasted.as_deref() == Some(text.as_str()),
        "another X client pastes {pasted:?}"
    );
    h.shut_down(t)
}
