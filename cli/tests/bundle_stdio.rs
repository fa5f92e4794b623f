//! `lineup bundle` feeding the real `lineup host --stdio` (R-UI-2a, R-UI-6a, R-DIAG-1): the
//! envelope it prints is accepted with its integrity and the Surface runs; a page's console
//! output reaches stderr and never stdout; a breakout is refused at its file, line and column.
//!
//! Run with `xvfb-run -a cargo test -p lineup-cli --test bundle_stdio`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    missing_docs
)]

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use serde_json::Value;

const LINEUP: &str = env!("CARGO_BIN_EXE_lineup");

fn folder(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let root = std::env::temp_dir().join(format!("lineup-bundle-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    for (file, content) in files {
        let path = dir.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
    dir
}

fn bundle(dir: &Path, extra: &[&str]) -> std::process::Output {
    Command::new(LINEUP)
        .arg("bundle")
        .arg(dir)
        .args(extra)
        .output()
        .expect("lineup bundle runs")
}

/// Feeds `envelope` to a real `lineup host --stdio` and waits for the page's event `name`;
/// then ends input. The event, every stdout line, stderr and the host's exit status.
fn first_event(
    envelope: &str,
    name: &str,
) -> (Option<Value>, Vec<String>, String, std::process::ExitStatus) {
    let mut host = Command::new(LINEUP)
        .args(["host", "--stdio"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("lineup host runs");
    let mut stdin = host.stdin.take().unwrap();
    stdin.write_all(envelope.as_bytes()).unwrap();
    stdin.flush().unwrap();
    let stdout = host.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    let reader = thread::spawn(move || {
        let mut lines = Vec::new();
        for line in BufReader::new(stdout).lines() {
            let line = line.unwrap_or_default();
            let _ = tx.send(line.clone());
            lines.push(line);
        }
        lines
    });
    let mut stderr_pipe = host.stderr.take().unwrap();
    let errors = thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr_pipe.read_to_string(&mut text);
        text
    });
    let mut booted = None;
    while let Ok(line) = rx.recv_timeout(Duration::from_secs(60)) {
        let message: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
        if message["payload"]["event"] == name {
            booted = Some(message);
            break;
        }
    }
    // The page's console message has surely been posted before its event; end input.
    drop(stdin);
    let status = host.wait().unwrap();
    let lines = reader.join().unwrap();
    let stderr = errors.join().unwrap();
    (booted, lines, stderr, status)
}

#[test]
fn r_ui_2a_bundle_output_is_accepted_by_the_host_and_console_output_stays_off_stdout() {
    assert!(
        std::env::var_os("DISPLAY").is_some_and(|d| !d.is_empty()),
        "DISPLAY is not set: run under `xvfb-run -a`"
    );
    let dir = folder(
        "hello-surface",
        &[
            ("index.html", "<main><h1 id=t>…</h1></main>"),
            ("style.css", "main { padding: 8px }"),
            (
                "script.js",
                "console.log('console-marker-7f3');\n\
                 LineUpSurface.onState(function (s) {\n\
                   document.getElementById('t').textContent = s.city;\n\
                   LineUpSurface.event('booted', {city: s.city});\n\
                 });\n",
            ),
            ("state.json", "{\"city\":\"北京\"}"),
        ],
    );
    let out = bundle(&dir, &["--conversation", "conv_7"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "lineup bundle failed: {stderr}");
    assert!(
        stderr.contains("of 163840 bytes") && stderr.contains("integrity sha256-"),
        "size and integrity on stderr: {stderr}"
    );
    let envelope = String::from_utf8(out.stdout).unwrap();
    assert_eq!(envelope.lines().count(), 1, "one line: {envelope}");
    let value: Value = serde_json::from_str(&envelope).unwrap();
    assert_eq!(value["payload"]["instance_id"], "hello-surface");
    assert_eq!(value["payload"]["app"]["id"], "com.example.hello-surface");
    assert_eq!(value["conversation_id"], "conv_7");
    assert!(value["payload"]["app"]["integrity"]
        .as_str()
        .is_some_and(|i| i.starts_with("sha256-")));

    let (booted, lines, stderr, status) = first_event(&envelope, "booted");
    let booted =
        booted.unwrap_or_else(|| panic!("no booted event; stdout {lines:?}; stderr {stderr}"));
    assert_eq!(booted["payload"]["data"]["city"], "北京");
    assert!(status.success(), "host exit {status}: {stderr}");
    // R-DIAG-1: the console message is on stderr (the positive control) and not on stdout,
    // where every line is an envelope.
    assert!(
        stderr.contains("console-marker-7f3") && stderr.contains("script.js:1:"),
        "the console message did not reach stderr with its line: {stderr}"
    );
    for line in &lines {
        assert!(
            !line.contains("console-marker"),
            "console output on stdout: {line}"
        );
        let message: Value = serde_json::from_str(line).unwrap_or(Value::Null);
        assert!(
            message["type"].is_string(),
            "not an envelope on stdout: {line}"
        );
    }
    // No refusal: the integrity matched.
    assert!(
        !stderr.contains("integrity_mismatch") && !stderr.contains("refused"),
        "{stderr}"
    );
}

#[test]
fn r_ui_6a_bundle_refuses_a_breakout_and_a_whole_document_naming_file_line_and_column() {
    let dir = folder(
        "breakout",
        &[
            ("index.html", "<p>x</p>"),
            ("script.js", "let a;\nlet s = '</script>';"),
        ],
    );
    let out = bundle(&dir, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && out.stdout.is_empty(), "{stderr}");
    assert!(stderr.contains("script.js:2:10"), "{stderr}");
    let dir = folder(
        "document",
        &[("index.html", "<!doctype html>\n<html></html>")],
    );
    let out = bundle(&dir, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("index.html:1:1"),
        "{stderr}"
    );
    // Positive control: the fixed script bundles, and --app-only prints just the app.
    let dir = folder(
        "fixed",
        &[
            ("index.html", "<p>x</p>"),
            ("script.js", "let s = '<\\/script>';"),
        ],
    );
    let out = bundle(&dir, &["--app-only", "--id", "com.example.fixed-app"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let app: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(app["id"], "com.example.fixed-app");
    assert!(app.get("payload").is_none() && app["integrity"].is_string());
}

/// #26 item 3: a library in `scripts/` that ends in `//# sourceMappingURL=…` with no newline,
/// then the author's `script.js`. Joined naively the author's first line would be a comment and
/// the Surface would never answer; joined by `lineup bundle` it runs, and the author is warned.
#[test]
fn library_scripts_join_before_script_js_and_a_trailing_line_comment_is_warned_about() {
    let dir = folder(
        "joined",
        &[
            ("index.html", "<p id=t></p>"),
            (
                "scripts/lib.min.js",
                "window.lib={twice:function(n){return 2*n}};\n//# sourceMappingURL=lib.min.js.map",
            ),
            (
                "script.js",
                "LineUpSurface.onState(function (s) { LineUpSurface.event('joined', {n: lib.twice(s.n)}); });\n",
            ),
            ("state.json", "{\"n\":21}"),
        ],
    );
    let out = bundle(&dir, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("warning: scripts/lib.min.js: ends in a line comment"),
        "{stderr}"
    );
    let envelope = String::from_utf8(out.stdout).unwrap();
    let value: Value = serde_json::from_str(&envelope).unwrap();
    let js = value["payload"]["app"]["js"].as_str().unwrap();
    assert!(js.contains(".map\nLineUpSurface.onState"), "{js}");
    let (joined, lines, stderr, _) = first_event(&envelope, "joined");
    let joined = joined.unwrap_or_else(|| panic!("no event; stdout {lines:?}; stderr {stderr}"));
    assert_eq!(joined["payload"]["data"]["n"], 42);
}
