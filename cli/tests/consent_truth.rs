//! Consent that tells the truth, over `lineup host --stdio` with the real GTK windows under
//! Xvfb, driven by XTEST.
//!
//! R-CAP-4: `expires_at` holds to the effect. A save dialog left open past the deadline closes, the call
//! is `expired`, and nothing is written; cancelling the save dialog or closing the file chooser
//! is `cancelled` (the user's cancel of a call they allowed), never `failed` or `rejected`.
//! Positive control: pressing Save in time writes the file and answers `completed`.
//!
//! Original §5.3: the user sees what runs. A `display_only` call, and a call under a remembered
//! grant, show the host's notice naming the capability, and the log lists every call that ran
//! with its grant; a call the user has just allowed in the prompt shows none.
//!
//! Run with `xvfb-run -a cargo test -p lineup-cli --test consent_truth`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr,
    missing_docs
)]

#[path = "support/screen.rs"]
mod screen;
#[path = "support/stdio_host.rs"]
mod stdio_host;

use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use lineup_host_core::Timestamp;
use lineup_tests::x11::X11;
use screen::{display, screen};
use serde_json::{json, Value};
use stdio_host::{envelope, is, StdioHost};

const SAVE_TITLE: &str = "Save the agent's file";
const PICK_TITLE: &str = "Choose a file to give to the agent";
/// XK_Return, XK_Escape.
const RETURN: u32 = 0xff0d;
const ESCAPE: u32 = 0xff1b;

/// An RFC 3339 time `secs` from now.
fn in_secs(secs: u64) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    Timestamp::from_unix_seconds(i64::try_from(now + secs).unwrap())
        .unwrap()
        .to_string()
}

fn call(call_id: &str, capability: &str, expires_in: u64, arguments: Value) -> String {
    call_because(
        call_id,
        capability,
        "keep the report",
        expires_in,
        arguments,
    )
}

fn call_because(
    call_id: &str,
    capability: &str,
    reason: &str,
    expires_in: u64,
    arguments: Value,
) -> String {
    envelope(
        &format!("m-{call_id}"),
        "app.call",
        json!({"call_id": call_id, "capability": capability, "reason": reason,
               "expires_at": in_secs(expires_in), "arguments": arguments}),
    )
}

fn result_for(call_id: &str) -> impl Fn(&Value) -> bool + '_ {
    move |v| is("app.result")(v) && v["payload"]["call_id"] == call_id
}

/// The viewable window titled `title`, if there is one.
fn viewable(x: &X11, title: &str) -> Option<u32> {
    x.find_window_by_title(title).filter(|w| x.is_viewable(*w))
}

/// Whether `done` holds within `within`, looked at every 100 ms.
fn within(within: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + within;
    loop {
        if done() {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        thread::sleep(Duration::from_millis(100));
    }
}

/// Waits until a viewable window titled `title` exists; returns it.
fn shown(x: &X11, title: &str) -> u32 {
    let mut window = None;
    assert!(
        within(Duration::from_secs(30), || {
            window = viewable(x, title);
            window.is_some()
        }),
        "no {title:?} window was shown"
    );
    window.unwrap()
}

/// Whether no viewable window titled `title` is left, waiting up to `wait` for it to go.
fn gone(x: &X11, title: &str, wait: Duration) -> bool {
    within(wait, || viewable(x, title).is_none())
}

/// Presses `key` in the window titled `title` until call `call_id` is answered: a busy machine
/// may take the key before the dialog is ready for it, so it is pressed again while the dialog
/// is still up.
fn press_until_answered(
    host: &mut StdioHost,
    x: &X11,
    title: &str,
    key: u32,
    call_id: &str,
) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(window) = viewable(x, title) {
            x.focus(window).unwrap();
            x.key(key).unwrap();
        }
        if let Some((_, answer)) = host.wait_for(Duration::from_secs(3), result_for(call_id)) {
            return answer;
        }
        assert!(Instant::now() < deadline, "{call_id} was never answered");
    }
}

/// Every file named `name` under `root`.
fn find(root: &Path, name: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.file_name().is_some_and(|n| n == name) {
                found.push(path);
            }
        }
    }
    found
}

#[test]
fn dialogs_end_at_the_deadline_and_a_cancel_is_cancelled() {
    let _screen = screen();
    let x = display();
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let work = home.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let data = home.join("lineup-data");
    let data = data.to_str().unwrap();
    let mut host = StdioHost::start_in(
        home,
        &work,
        &[
            "--enable",
            "artifact.save",
            "--enable",
            "device.pick_file",
            "--data-dir",
            data,
            "--dangerous-auto-consent",
            "allow",
        ],
    );

    // 1. The save dialog is left open past `expires_at`: it closes, `expired`, nothing written.
    let asked = Instant::now();
    host.send(&call(
        "save-late",
        "artifact.save",
        4,
        json!({"file_name": "late.txt", "text": "too late"}),
    ));
    shown(&x, SAVE_TITLE);
    let late = host.expect("the late save's answer", result_for("save-late"));
    assert_eq!(late["payload"]["status"], "expired", "{late}");
    assert!(
        asked.elapsed() < Duration::from_secs(12),
        "answered at the deadline, not later: {:?}",
        asked.elapsed()
    );
    assert!(
        gone(&x, SAVE_TITLE, Duration::from_secs(5)),
        "the save dialog closed at the deadline"
    );
    assert!(find(home, "late.txt").is_empty(), "nothing was written");

    // 2. Cancel in the save dialog (Escape): `cancelled`, nothing written.
    host.send(&call(
        "save-cancel",
        "artifact.save",
        60,
        json!({"file_name": "cancel.txt", "text": "no"}),
    ));
    shown(&x, SAVE_TITLE);
    let cancelled = press_until_answered(&mut host, &x, SAVE_TITLE, ESCAPE, "save-cancel");
    assert_eq!(cancelled["payload"]["status"], "cancelled", "{cancelled}");
    assert!(find(home, "cancel.txt").is_empty());

    // 3. Positive control: Save pressed in time writes the file, `completed`.
    host.send(&call(
        "save-now",
        "artifact.save",
        60,
        json!({"file_name": "kept.txt", "text": "the report"}),
    ));
    // The name field has the focus with the suggested name; Return presses Save.
    shown(&x, SAVE_TITLE);
    let saved = press_until_answered(&mut host, &x, SAVE_TITLE, RETURN, "save-now");
    assert_eq!(saved["payload"]["status"], "completed", "{saved}");
    assert_eq!(saved["payload"]["result"]["file_name"], "kept.txt");
    let written = find(home, "kept.txt");
    assert_eq!(written.len(), 1, "{written:?}");
    assert_eq!(std::fs::read_to_string(&written[0]).unwrap(), "the report");
    assert!(
        !saved.to_string().contains(home.to_str().unwrap()),
        "no path reaches the agent: {saved}"
    );

    // 4. The file chooser closed by its window's close button: `cancelled`, as for a save.
    host.send(&call("pick-close", "device.pick_file", 60, json!({})));
    let chooser = shown(&x, PICK_TITLE);
    x.request_close(chooser).unwrap();
    let closed = host.expect("the closed chooser's answer", result_for("pick-close"));
    assert_eq!(closed["payload"]["status"], "cancelled", "{closed}");

    // 5. The chooser left open past the deadline: `expired`, and it closes.
    host.send(&call("pick-late", "device.pick_file", 3, json!({})));
    shown(&x, PICK_TITLE);
    let late = host.expect("the late pick's answer", result_for("pick-late"));
    assert_eq!(late["payload"]["status"], "expired", "{late}");
    assert!(
        gone(&x, PICK_TITLE, Duration::from_secs(5)),
        "the chooser closed at the deadline"
    );
    host.stop();
}

const NOTICE: &str = "LineUp activity: ";

/// Whether the notice window is up with the title `NOTICE` + `heading`, waiting up to `wait`.
fn notice_shows(x: &X11, heading: &str, wait: Duration) -> bool {
    within(wait, || {
        viewable(x, &format!("{NOTICE}{heading}")).is_some()
    })
}

/// `lineup host --stdio` in `home` (its data directory there too) for agent `a1`, with the test
/// capabilities (`test.count`, `display_only`; `test.confirm`, `user_confirmation`) counting
/// their runs in `home`, the variables of `env` and the `extra` flags.
fn test_capability_host(home: &Path, env: &[(&str, &str)], extra: &[&str]) -> StdioHost {
    let data = home.join("lineup-data");
    let count = home.join("runs.txt");
    let mut args = vec![
        "--agent-id",
        "a1",
        "--data-dir",
        data.to_str().unwrap(),
        "--dangerous-test-capability",
        count.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    StdioHost::start_with_env(home, home, env, &args)
}

#[test]
fn what_runs_unseen_shows_a_notice_and_every_run_is_logged_with_its_grant() {
    let _screen = screen();
    let x = display();
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let mut host = test_capability_host(home, &[], &["--dangerous-auto-consent", "allow-always"]);
    // display_only: it runs with no prompt, so the host's notice says so.
    host.send(&call_because(
        "k1",
        "test.count",
        "tally the votes",
        60,
        json!({"tag": "k1"}),
    ));
    let done = host.expect("test.count's answer", result_for("k1"));
    assert_eq!(done["payload"]["status"], "completed", "{done}");
    assert!(
        notice_shows(&x, "test.count ran", Duration::from_secs(10)),
        "no notice for a display_only call"
    );
    // Prompted (answered "always" by the test switch): the user answered, so no notice...
    host.send(&call_because(
        "k2",
        "test.confirm",
        "confirm the tally",
        60,
        json!({"tag": "k2"}),
    ));
    let done = host.expect("test.confirm's answer", result_for("k2"));
    assert_eq!(done["payload"]["status"], "completed", "{done}");
    assert!(
        !notice_shows(&x, "test.confirm ran", Duration::from_secs(1)),
        "a notice for a call the user had just allowed"
    );
    // ...but under the remembered grant nothing else shows it.
    host.send(&call_because(
        "k3",
        "test.confirm",
        "confirm again",
        60,
        json!({"tag": "k3"}),
    ));
    let done = host.expect("the second test.confirm's answer", result_for("k3"));
    assert_eq!(done["payload"]["status"], "completed", "{done}");
    assert!(
        notice_shows(&x, "test.confirm ran", Duration::from_secs(10)),
        "no notice under a remembered grant"
    );
    // It goes by itself.
    let fades = lineup_host::platform::NOTICE_DURATION + Duration::from_secs(5);
    assert!(
        gone(&x, &format!("{NOTICE}test.confirm ran"), fades),
        "the notice stayed"
    );
    let stderr = std::sync::Arc::clone(&host.stderr);
    host.stop();
    let log = stderr.lock().unwrap().clone();
    let ran: Vec<&str> = log.lines().filter(|l| l.contains("activity: ")).collect();
    assert_eq!(ran.len(), 3, "every call that ran is listed: {log}");
    for (line, want) in ran.iter().zip([
        "test.count 1 ran for agent a1 in conversation c1 (call k1), allowed by display_only",
        "test.confirm 1 ran for agent a1 in conversation c1 (call k2), allowed by the user's consent",
        "test.confirm 1 ran for agent a1 in conversation c1 (call k3), allowed by a remembered grant",
    ]) {
        assert!(line.contains(want), "{line}\nwanted: {want}");
    }
    assert!(
        !log.contains("tally the votes"),
        "the log never carries the agent's reason"
    );
}

/// R-STD-9 through `lineup host --stdio` in a Chinese context (the environment's locale): the
/// windows the host draws itself are titled in Chinese, read back from the X screen: the
/// activity notice of a `display_only` call, the consent prompt of a `user_confirmation` one
/// (and no window titled as the English prompt, the control that the title was looked up in
/// the language and not added beside the English one), and a conversation's question window.
#[test]
fn r_std_9_in_a_chinese_context_the_host_titles_its_windows_in_chinese() {
    let _screen = screen();
    let x = display();
    let tmp = tempfile::tempdir().unwrap();
    let mut host = test_capability_host(tmp.path(), &[("LC_ALL", "zh_CN.UTF-8")], &[]);
    host.send(&call_because(
        "k1",
        "test.count",
        "tally the votes",
        60,
        json!({"tag": "k1"}),
    ));
    let done = host.expect("test.count's answer", result_for("k1"));
    assert_eq!(done["payload"]["status"], "completed", "{done}");
    assert!(
        within(Duration::from_secs(10), || viewable(
            &x,
            "LineUp 活动: test.count 已执行"
        )
        .is_some()),
        "no notice titled in Chinese"
    );
    host.send(&call_because(
        "k2",
        "test.confirm",
        "confirm the tally",
        60,
        json!({"tag": "k2"}),
    ));
    shown(&x, "权限请求");
    assert!(
        viewable(&x, lineup_host::platform::CONSENT_PROMPT_TITLE).is_none(),
        "an English prompt window as well"
    );
    host.send(&envelope(
        "m-q1",
        "ui.open",
        json!({"instance_id": "q1", "component": {"id": "confirm", "version": "1",
               "props": {"title": "发布吗？"}}}),
    ));
    shown(&x, "问题 — LineUp 问题");
    host.stop();
}
