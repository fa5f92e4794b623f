//! The kiosk as `deploy/` and docs/kiosk.md set it up (issue 30, item 6): the unit's
//! `SystemCallFilter=` is one WebKit survives — a real kiosk under that seccomp allow-list
//! (`support/seccomp_exec.py`, built from `systemd-analyze syscall-filter` as systemd builds
//! it) shows a Surface, and under a narrower one it does not (the positive control); the
//! minimal agent of docs/kiosk.md runs as written.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr,
    missing_docs
)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

#[path = "support/kiosk_screen.rs"]
mod kiosk_screen;
use kiosk_screen::{envelope, lineup, one_screen, send, Display, KillOnDrop, STEP};

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path)
}

/// A kiosk.toml for monitor 1, one region, standby #123456.
fn kiosk_toml(dir: &Path, conversation: &str, agent: &str) -> PathBuf {
    let text = format!(
        "[agent]\nurl = \"ws://127.0.0.1:9/\"\nconversation = \"{conversation}\"\nagent_id = \"{agent}\"\n\n\
         [display]\nmonitor = 1\ncursor = \"hidden\"\n\n\
         [standby]\ntitle = \"Lobby\"\nbackground = \"#123456\"\n\n\
         [host]\ndata_dir = \"{}\"\n",
        dir.join("data").display()
    );
    let path = dir.join("kiosk.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// The groups of the unit's `SystemCallFilter=` lines.
fn unit_filter() -> Vec<String> {
    let unit = std::fs::read_to_string(repo("deploy/lineup-kiosk.service")).unwrap();
    let groups: Vec<String> = unit
        .lines()
        .filter_map(|l| l.trim().strip_prefix("SystemCallFilter="))
        .flat_map(|v| v.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
        .collect();
    assert!(!groups.is_empty(), "the unit has no SystemCallFilter=");
    groups
}

/// Runs a kiosk under a seccomp allow-list of `groups` (other calls fail with EPERM, as with
/// the unit's `SystemCallErrorNumber=EPERM`), opens a Surface, and says whether its page came
/// up within `wait`.
fn surface_shows_under(groups: &[String], wait: Duration) -> bool {
    let display = Display::start();
    let dir = tempfile::tempdir().unwrap();
    let config = kiosk_toml(dir.path(), "lobby", "lobby-agent");
    let mut kiosk = Command::new("python3")
        .arg(repo("cli/tests/support/seccomp_exec.py"))
        .args(groups)
        .arg("--")
        .arg(lineup())
        .args(["kiosk", "--stdio", "--config"])
        .arg(&config)
        .env("DISPLAY", &display.name)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = kiosk.stdin.take().unwrap();
    let stdout = kiosk.stdout.take().unwrap();
    let _kill = KillOnDrop(&mut kiosk);
    let (tx, rx) = mpsc::channel::<Value>();
    thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Ok(v) = serde_json::from_str(&line) {
                if tx.send(v).is_err() {
                    break;
                }
            }
        }
    });
    let Ok(first) = rx.recv_timeout(STEP) else {
        return false;
    };
    assert_eq!(first["type"], "lineup.v1.client.inventory", "{first}");
    send(
        &mut stdin,
        &envelope(
            "open-1",
            "ui.open",
            json!({
                "instance_id": "w",
                "app": {"id": "com.example.w", "version": "1.0.0",
                        "html": "<p>hi</p>", "css": "",
                        "js": "LineUpSurface.onState(() => LineUpSurface.event('shown', {}))"},
                "state": {}
            }),
        ),
    );
    let deadline = Instant::now() + wait;
    while let Ok(v) = rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        if v["payload"]["event"] == "shown" {
            return true;
        }
    }
    false
}

/// Issue 30 item 6: WebKit, its bubblewrap sandbox and the isolation probe survive the
/// unit's `SystemCallFilter=`.
#[test]
fn a_kiosk_shows_a_surface_under_the_units_system_call_filter() {
    let _screen = one_screen();
    let groups = unit_filter();
    eprintln!("SystemCallFilter={}", groups.join(" "));
    assert!(
        surface_shows_under(&groups, STEP),
        "no Surface under SystemCallFilter={}",
        groups.join(" ")
    );
    // Positive control: without @mount, bubblewrap cannot set up WebKit's sandbox ("Failed to
    // make / slave: Operation not permitted") and no Surface is served.
    let narrower: Vec<String> = groups.into_iter().filter(|g| g != "@mount").collect();
    assert!(
        !surface_shows_under(&narrower, Duration::from_secs(15)),
        "a Surface showed under SystemCallFilter={}: the harness filters nothing",
        narrower.join(" ")
    );
}

/// The first ```python block after docs/kiosk.md's "## A minimal agent".
fn minimal_agent() -> String {
    let guide = std::fs::read_to_string(repo("docs/kiosk.md")).unwrap();
    let (_, section) = guide
        .split_once("## A minimal agent")
        .expect("docs/kiosk.md has a minimal agent");
    let (_, block) = section.split_once("```python\n").expect("its Python block");
    let (code, _) = block.split_once("\n```").expect("the block's end");
    code.to_owned()
}

/// Issue 30 item 6: docs/kiosk.md's minimal agent, run as written: it opens a Surface, hears
/// its state, patches it, hears the new state, closes it, and the kiosk ends with it.
#[test]
fn the_guides_minimal_agent_runs_as_written() {
    let _screen = one_screen();
    let display = Display::start();
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("agent.py");
    std::fs::write(&agent, minimal_agent()).unwrap();
    let config = kiosk_toml(dir.path(), "lobby-display", "lobby-agent");
    let bin = lineup();
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut run = Command::new("python3")
        .arg(&agent)
        .arg(&config)
        .env("PATH", path)
        .env("DISPLAY", &display.name)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = run.stdout.take().unwrap();
    let printed = thread::spawn(move || {
        let mut out = String::new();
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            eprintln!("agent.py: {line}");
            out.push_str(&line);
            out.push('\n');
        }
        out
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = run.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > STEP * 2 {
            let _ = run.kill();
            panic!("the minimal agent did not finish within {:?}", STEP * 2);
        }
        thread::sleep(Duration::from_millis(100));
    };
    let out = printed.join().unwrap();
    assert!(status.success(), "{status}: {out}");
    assert_eq!(out, "{'text': 'Hello'}\n{'text': 'Welcome'}\n");
}
