//! Issue 30 item 7 (R-UI-6a, R-DIAG-1): a syntax error in `script.js` is found before the page
//! loads and reported as `script.js:LINE:COL: message`, where the engine would say only
//! `Script error.`: `--check` exits 3 with it, and the watching preview prints it and keeps
//! the last good version running.

use super::*;

const BROKEN: &str =
    "LineUpSurface.onState(function (s) {\n  document.body.textContent = s.text;\n)};\n";

#[test]
fn r_ui_6a_check_reports_a_script_syntax_error_at_its_line_and_column() {
    display();
    let dir = folder(
        "syntax-check",
        &[("index.html", "<p id=t></p>"), ("script.js", BROKEN)],
    );
    let (code, stdout) = run_preview(&dir, &["--check"]);
    assert_eq!(code, Some(3), "a page error exits 3: {stdout}");
    let line = stdout
        .lines()
        .find(|l| l.contains("script.js:3:1: "))
        .unwrap_or_else(|| panic!("no script.js:3:1: in {stdout}"));
    assert!(line.contains("Unexpected"), "{line}");
    assert!(!stdout.contains("Script error"), "{stdout}");
    // Positive control: the script fixed passes.
    std::fs::write(dir.join("script.js"), BROKEN.replace(")};", "});")).unwrap();
    let (code, stdout) = run_preview(&dir, &["--check"]);
    assert_eq!(code, Some(0), "{stdout}");
}

#[test]
fn r_ui_6a_watch_prints_a_syntax_error_and_keeps_the_last_good_version() {
    display();
    let dir = folder(
        "syntax-watch",
        &[
            ("index.html", "<p id=t></p>"),
            ("script.js", &script(1)),
            ("state.json", r##"{"bg":"#fff","text":"one"}"##),
        ],
    );
    let mut p = Preview::start(&dir);
    p.wait_for(&["event rendered", r##""v":1,"##, r##""text":"one""##]);
    save(&dir.join("script.js"), BROKEN);
    let error = p.wait_for(&["script.js:3:1: ", "the last good version stays"]);
    assert!(error.contains("Unexpected"), "{error}");
    let after_error = p.seen.len();
    // The last good version still runs: it renders the next state.
    save(&dir.join("state.json"), r##"{"bg":"#fff","text":"two"}"##);
    p.wait_for(&["event rendered", r##""v":1,"##, r##""text":"two""##]);
    assert!(
        !p.seen[after_error..]
            .iter()
            .any(|l| l.contains("reloaded ") || l.contains("code changed")),
        "the broken script must not be loaded:\n{}",
        p.seen.join("\n")
    );
    // Fixed: loaded, with the state it had.
    save(&dir.join("script.js"), &script(3));
    p.wait_for(&["event rendered", r##""v":3,"##, r##""text":"two""##]);
}

/// Started on a broken script, the watching preview waits for a save that parses, then opens.
#[test]
fn r_ui_6a_watch_started_on_a_syntax_error_opens_once_it_parses() {
    display();
    let dir = folder(
        "syntax-start",
        &[
            ("index.html", "<p id=t></p>"),
            ("script.js", BROKEN),
            ("state.json", r##"{"bg":"#fff","text":"fixed"}"##),
        ],
    );
    let mut p = Preview::start(&dir);
    p.wait_for(&["script.js:3:1: "]);
    p.wait_for(&["not opened: waiting for a save"]);
    save(&dir.join("script.js"), &script(2));
    p.wait_for(&["event rendered", r##""v":2,"##, r##""text":"fixed""##]);
}
