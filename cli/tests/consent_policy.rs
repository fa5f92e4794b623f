//! R-CAP-4, R-CAP-6 over `lineup host --stdio`: a call that breaks a capability's own argument
//! rule (`app.open_url`'s link rule) is refused by policy before consent, the same with and
//! without a remembered grant: `failed` `invalid_arguments` naming `payload.arguments/url` and
//! the rule, audited with the source `policy`, never `rejected` as though the user said no and
//! never `handler_failed` after a grant. Positive controls: a plain `https:` link does reach the
//! prompt (answered "deny", then "allow always", by `--dangerous-auto-consent`), as the audit
//! shows with the source `prompt`.
//!
//! Run with `xvfb-run -a cargo test -p lineup-cli --test consent_policy`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr,
    missing_docs
)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

/// The links the link rule refuses, each with the rule a refusal must name.
const REFUSED: [(&str, &str); 6] = [
    ("javascript:alert(1)", "\"scheme\""),
    ("file:///etc/passwd", "\"scheme\""),
    ("data:text/html,<b>hi</b>", "\"scheme\""),
    ("https://bank.example@evil.example/", "\"userinfo\""),
    ("https://@evil.example/", "\"userinfo\""),
    ("not a url", "\"url\""),
];

struct Host {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Value>,
    seen: Vec<Value>,
}

impl Host {
    fn spawn(home: &Path, data: &Path, consent: &str) -> Self {
        if std::env::var_os("DISPLAY").is_none() {
            panic!("no DISPLAY: run under `xvfb-run -a`");
        }
        for sub in ["home", "cache", "config", "xdg-data"] {
            std::fs::create_dir_all(home.join(sub)).unwrap();
        }
        let mut child = Command::new(env!("CARGO_BIN_EXE_lineup"))
            .args(["host", "--stdio", "--agent-id", "agent_policy"])
            .args(["--enable", "app.open_url", "--data-dir"])
            .arg(data)
            .args(["--dangerous-auto-consent", consent])
            .env("HOME", home.join("home"))
            .env("XDG_DATA_HOME", home.join("xdg-data"))
            .env("XDG_CACHE_HOME", home.join("cache"))
            .env("XDG_CONFIG_HOME", home.join("config"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("cannot start the lineup binary");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let Ok(value) = serde_json::from_str::<Value>(&line) else {
                    continue;
                };
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        Self {
            stdin: child.stdin.take(),
            child,
            lines,
            seen: Vec::new(),
        }
    }

    fn call(&mut self, call_id: &str, url: &str) -> Value {
        let envelope = json!({
            "v": 1,
            "id": format!("msg_{call_id}"),
            "type": "lineup.v1.app.call",
            "conversation_id": "conv_policy",
            "sender": {"kind": "agent", "id": "agent_policy"},
            "payload": {
                "call_id": call_id,
                "capability": "app.open_url",
                "reason": "the user asked for the page",
                "expires_at": soon(),
                "arguments": {"url": url},
            },
        });
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{envelope}").unwrap();
        stdin.flush().unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if let Ok(m) = self.lines.recv_timeout(Duration::from_millis(200)) {
                self.seen.push(m.clone());
                if m["type"] == "lineup.v1.app.result" && m["payload"]["call_id"] == call_id {
                    return m["payload"].clone();
                }
            }
        }
        panic!("no app.result for {call_id}; seen: {:#?}", self.seen);
    }

    fn end(mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An RFC 3339 time two minutes from now.
fn soon() -> String {
    let at = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 120;
    time_of(at)
}

fn time_of(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    let s = secs % 86_400;
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        s / 3600,
        s / 60 % 60,
        s % 60
    )
}

/// `lineup audit export --data-dir data`, one JSON object a record.
fn audit(data: &Path) -> Vec<Value> {
    let export = Command::new(env!("CARGO_BIN_EXE_lineup"))
        .args(["audit", "export", "--data-dir"])
        .arg(data)
        .output()
        .unwrap();
    assert!(
        export.status.success(),
        "{}",
        String::from_utf8_lossy(&export.stderr)
    );
    String::from_utf8(export.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The decision sources the audit holds for `call_id`.
fn sources(records: &[Value], call_id: &str) -> Vec<String> {
    records
        .iter()
        .filter(|r| r["call_id"] == call_id)
        .filter_map(|r| r["decision_source"].as_str().map(str::to_owned))
        .collect()
}

fn assert_policy_refusal(answer: &Value, url: &str, rule: &str) {
    assert_eq!(answer["status"], "failed", "{url}: {answer}");
    assert_eq!(
        answer["error"]["code"], "invalid_arguments",
        "{url}: {answer}"
    );
    assert_eq!(
        answer["error"]["field"], "payload.arguments/url",
        "{url}: {answer}"
    );
    let message = answer["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(rule) && message.contains("no prompt was shown"),
        "{url}: the message names the rule {rule}: {answer}"
    );
}

fn fresh(name: &str) -> (PathBuf, PathBuf) {
    let root = std::env::temp_dir().join(format!("lineup-policy-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let data = root.join("data");
    std::fs::create_dir_all(&data).unwrap();
    (root, data)
}

/// Without a grant: every refused link is a policy refusal; a plain link reaches the prompt,
/// which says no (`rejected`, source `prompt`).
#[test]
fn r_cap_4_a_refused_link_is_policy_not_the_users_no_without_a_grant() {
    let (root, data) = fresh("deny");
    let mut host = Host::spawn(&root, &data, "deny");
    for (i, (url, rule)) in REFUSED.iter().enumerate() {
        let answer = host.call(&format!("bad_{i}"), url);
        assert_policy_refusal(&answer, url, rule);
    }
    let long = format!("https://example.org/{}", "a".repeat(8 * 1024));
    let answer = host.call("too_long", &long);
    assert_eq!(answer["status"], "failed", "{answer}");
    assert_eq!(answer["error"]["code"], "invalid_arguments", "{answer}");
    // Positive control: the prompt is shown for a plain link, and its "deny" is `rejected`.
    let shown = host.call("good", "https://example.org/page");
    assert_eq!(shown["status"], "rejected", "{shown}");
    host.end();

    let records = audit(&data);
    for i in 0..REFUSED.len() {
        let call = format!("bad_{i}");
        let of_call = sources(&records, &call);
        assert!(
            of_call.iter().any(|s| s == "policy") && !of_call.iter().any(|s| s == "prompt"),
            "{call} is audited as policy, never as a prompt: {of_call:?}"
        );
    }
    assert!(
        sources(&records, "good").iter().any(|s| s == "prompt"),
        "the plain link was decided by the prompt: {records:#?}"
    );
    let _ = std::fs::remove_dir_all(&root);
}

/// With a remembered grant: the same refusals, never `handler_failed` (R-CAP-4: the rule holds
/// the same in every grant state). The grant comes from a plain link's prompt answered "allow
/// always"; the next plain link is decided by the grant (the positive control).
#[test]
fn r_cap_4_a_refused_link_is_policy_not_a_handler_failure_after_a_grant() {
    let (root, data) = fresh("grant");
    let mut host = Host::spawn(&root, &data, "allow-always");
    // No browser is installed under test: the grant is what matters, not the opening.
    let first = host.call("grant", "http://127.0.0.1:9/first");
    assert_ne!(first["status"], "rejected", "{first}");
    assert_ne!(first["error"]["code"], "invalid_arguments", "{first}");
    for (i, (url, rule)) in REFUSED.iter().enumerate() {
        let answer = host.call(&format!("granted_bad_{i}"), url);
        assert_policy_refusal(&answer, url, rule);
    }
    let again = host.call("granted_good", "http://127.0.0.1:9/again");
    assert_ne!(again["error"]["code"], "invalid_arguments", "{again}");
    host.end();

    let records = audit(&data);
    assert!(
        sources(&records, "grant").iter().any(|s| s == "prompt"),
        "the first plain link was decided by the prompt: {records:#?}"
    );
    assert!(
        sources(&records, "granted_good")
            .iter()
            .any(|s| s == "remembered_grant"),
        "the second plain link was decided by the grant: {records:#?}"
    );
    for i in 0..REFUSED.len() {
        let call = format!("granted_bad_{i}");
        let of_call = sources(&records, &call);
        assert!(
            of_call.iter().any(|s| s == "policy")
                && !of_call
                    .iter()
                    .any(|s| s == "prompt" || s == "remembered_grant"),
            "{call} is audited as policy only: {of_call:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&root);
}
