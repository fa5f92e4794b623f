//! `lineup bundle` refuses as the README says (issue 30 item 12): an oversize bundle (R-UI-2) or
//! a breakout is one plain line on stderr, `error: …` with the file, value and limit, no log
//! timestamp or level, exit status 1 and nothing on stdout. The positive control is a folder
//! that fits: exit 0, the envelope on stdout. A syntax error in `script.js` is refused the same
//! way, at its line and column (item 7).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::PathBuf;
use std::process::{Command, Output};

const LINEUP: &str = env!("CARGO_BIN_EXE_lineup");

fn folder(name: &str, files: &[(&str, String)]) -> PathBuf {
    let dir = std::env::temp_dir()
        .join(format!("lineup-bundle-errors-{}", std::process::id()))
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (file, content) in files {
        std::fs::write(dir.join(file), content).unwrap();
    }
    dir
}

fn bundle(dir: &PathBuf) -> Output {
    Command::new(LINEUP)
        .arg("bundle")
        .arg(dir)
        .output()
        .unwrap()
}

fn assert_plain_refusal(out: &Output, wants: &[&str]) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {stderr}");
    assert!(out.stdout.is_empty(), "nothing on stdout");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line: {stderr}");
    assert!(lines[0].starts_with("error: "), "a plain message: {stderr}");
    assert!(!lines[0].contains("ERROR"), "no log level: {stderr}");
    for want in wants {
        assert!(lines[0].contains(want), "{want:?} in {stderr}");
    }
}

#[test]
fn r_ui_2_an_oversize_bundle_is_refused_with_a_plain_message() {
    let dir = folder(
        "big",
        &[
            ("index.html", "<p>x</p>".into()),
            ("script.js", format!("// {}\n", "x".repeat(170 * 1024))),
        ],
    );
    assert_plain_refusal(&bundle(&dir), &["bytes", "163840"]);
}

#[test]
fn r_ui_6a_a_breakout_is_refused_at_its_position_with_a_plain_message() {
    let dir = folder(
        "breakout",
        &[
            ("index.html", "<p>x</p>".into()),
            ("script.js", "let a;\nlet s = '</script>';\n".into()),
        ],
    );
    assert_plain_refusal(&bundle(&dir), &["script.js:2:"]);
}

#[test]
fn a_bundle_that_fits_prints_its_envelope() {
    let dir = folder("fits", &[("index.html", "<p>x</p>".into())]);
    let out = bundle(&dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(line["type"], "lineup.v1.ui.open");
}

/// Issue 30 item 7 (R-UI-6a): a syntax error in `script.js` is refused before anything is sent,
/// as `script.js:LINE:COL: message`; so is module syntax, which a classic script cannot have.
/// Positive control: the same folder with the script fixed prints its envelope.
#[test]
fn r_ui_6a_a_syntax_error_in_the_script_is_refused_at_its_line_and_column() {
    let broken = "LineUpSurface.onState(function (s) {\n  document.body.textContent = s.x;\n)};\n";
    let dir = folder(
        "syntax",
        &[
            ("index.html", "<p>x</p>".into()),
            ("script.js", broken.into()),
        ],
    );
    assert_plain_refusal(&bundle(&dir), &["error: script.js:3:1: "]);
    // An early error the engine also refuses at parse time: a name declared twice.
    std::fs::write(dir.join("script.js"), "const el = 1;\nconst el = 2;\n").unwrap();
    assert_plain_refusal(&bundle(&dir), &["script.js:2:7: ", "already been declared"]);
    std::fs::write(dir.join("script.js"), "import x from './x.js';\n").unwrap();
    assert_plain_refusal(&bundle(&dir), &["script.js:1:1: ", "not a module"]);
    std::fs::write(dir.join("script.js"), broken.replace(")};", "});")).unwrap();
    let out = bundle(&dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A standard component's `ui.open` payload in a JSON file (R-STD-1, R-STD-3).
fn component_file(name: &str, payload: &serde_json::Value) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lineup-bundle-components-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, payload.to_string()).unwrap();
    path
}

#[test]
fn r_std_3_a_component_file_is_checked_as_the_host_checks_it() {
    // The positive control: a confirm becomes a ready envelope, its instance id the file's name.
    let good = component_file(
        "deploy.ok.json",
        &serde_json::json!({"component": {"id": "confirm", "version": "1",
            "props": {"title": "Deploy to production?", "confirm_label": "Deploy"}}}),
    );
    let out = bundle(&good);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let envelope: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(envelope["type"], "lineup.v1.ui.open");
    assert_eq!(envelope["payload"]["instance_id"], "deploy.ok");
    assert_eq!(envelope["payload"]["component"]["id"], "confirm");

    // Each refusal is the host's: the code, the exact field, the limit where one was hit.
    for (name, payload, wants) in [
        (
            "dup.json",
            serde_json::json!({"component": {"id": "choice", "version": "1", "props": {
                "label": "Region", "options": [{"value": "eu", "label": "EU"},
                                               {"value": "eu", "label": "Europe"}]}}}),
            vec!["invalid_field", "payload.component.props.options.1.value"],
        ),
        (
            "long.json",
            serde_json::json!({"component": {"id": "input", "version": "1", "props": {
                "label": "Title", "max_length": 3001}}}),
            vec![
                "invalid_field",
                "payload.component.props.max_length",
                "3000",
            ],
        ),
        (
            "chart.json",
            serde_json::json!({"component": {"id": "chart", "version": "1"}}),
            vec!["unsupported", "payload.component.id"],
        ),
    ] {
        assert_plain_refusal(&bundle(&component_file(name, &payload)), &wants);
    }
    // A JSON file that opens no component is not taken for one.
    let surface = component_file("app.json", &serde_json::json!({"app": {}}));
    assert_plain_refusal(&bundle(&surface), &["component"]);
}
