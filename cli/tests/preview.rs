//! `lineup preview` in a real WebKitGTK webview: edited code reloads in place with the old state
//! and is never counted as a reload loop (R-UI-10); an edited `state.json` is re-sent and a bad
//! one keeps the last good state; `--screenshot` writes a PNG whose pixels show the state;
//! `--check` fails on a page error and passes on a clean bundle (the positive control). Its
//! modules: a script's syntax error (`preview/syntax.rs`), an app package folder
//! (`preview/package.rs`), the theme, contrast and resize example (`preview/look.rs`), and
//! `--engine servo` of `lineup preview` and `lineup host` (`preview/engine_servo.rs`).
//!
//! Run with `xvfb-run -a -s "-screen 0 1280x1024x24" cargo test -p lineup-cli --test preview`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    missing_docs
)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

const LINEUP: &str = env!("CARGO_BIN_EXE_lineup");

#[path = "preview/component.rs"]
mod component;
#[path = "preview/engine_servo.rs"]
mod engine_servo;
#[path = "preview/look.rs"]
mod look;
#[path = "preview/package.rs"]
mod package;
#[path = "support/stdio_host.rs"]
mod stdio_host;
#[path = "preview/syntax.rs"]
mod syntax;

fn display() {
    assert!(
        std::env::var_os("DISPLAY").is_some_and(|d| !d.is_empty()),
        "DISPLAY is not set: run under `xvfb-run -a -s \"-screen 0 1280x1024x24\"`"
    );
}

fn folder(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let root = std::env::temp_dir().join(format!("lineup-preview-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    for (file, content) in files {
        std::fs::write(dir.join(file), content).unwrap();
    }
    dir
}

/// `lineup preview DIR ARGS` run to its end: the exit code and stdout, which never shows a
/// Rust type's `Debug` form (issue 30 item 12).
fn run_preview(dir: &Path, args: &[&str]) -> (Option<i32>, String) {
    let run = Command::new(LINEUP)
        .arg("preview")
        .arg(dir)
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
    assert_no_debug_forms(&stdout);
    (run.status.code(), stdout)
}

/// No internal type names or `Debug` formatting in what an author reads.
fn assert_no_debug_forms(text: &str) {
    for form in [
        "SessionEnded",
        "Gone(",
        "Some(",
        "None)",
        "Agent(",
        "Reopened(",
        "Replaced",
    ] {
        assert!(!text.contains(form), "{form} in:\n{text}");
    }
}

/// A script that paints the state and reports what it rendered, as `version`.
fn script(version: u32) -> String {
    format!(
        "LineUpSurface.onState(function (s) {{\n\
           document.body.style.background = s.bg;\n\
           document.getElementById('t').textContent = s.text;\n\
           LineUpSurface.event('rendered', {{v: {version}, text: s.text,\n\
             html: document.getElementById('t').dataset.html || ''}});\n\
         }});\n"
    )
}

/// An interactive preview whose stdout lines arrive on a channel.
struct Preview {
    child: Child,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Preview {
    fn start(dir: &Path) -> Self {
        let mut child = Command::new(LINEUP)
            .arg("preview")
            .arg(dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("lineup preview runs");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                println!("preview: {line}");
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Self {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Waits up to 30 s for a line containing every one of `needles`; returns it.
    fn wait_for(&mut self, needles: &[&str]) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if needles.iter().all(|n| line.contains(n)) {
                        return line;
                    }
                }
                Err(_) => break,
            }
        }
        panic!("no line with {needles:?}; saw:\n{}", self.seen.join("\n"));
    }
}

impl Drop for Preview {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Editors save at human speed; the preview debounces 150 ms.
fn save(path: &Path, content: &str) {
    thread::sleep(Duration::from_millis(400));
    std::fs::write(path, content).unwrap();
}

#[test]
fn r_ui_10_preview_reloads_edited_code_in_place_keeping_the_state_and_never_as_a_loop() {
    display();
    let dir = folder(
        "hot",
        &[
            ("index.html", "<p id=t data-html=one></p>"),
            ("script.js", &script(1)),
            ("state.json", r##"{"bg":"#00ff00","text":"kept"}"##),
        ],
    );
    let mut p = Preview::start(&dir);
    p.wait_for(&["bundle: ", " of 163840 bytes", "integrity sha256-"]);
    p.wait_for(&["event rendered", r##""v":1"##, r##""text":"kept""##]);
    // Six edits of the script within a few seconds: more commits than the reload-loop bound
    // (5 per 10 s) allows a page, and none of them counts.
    for version in 2..=7 {
        save(&dir.join("script.js"), &script(version));
        p.wait_for(&[
            "event rendered",
            &format!("\"v\":{version},"),
            r##""text":"kept""##,
        ]);
    }
    // The body fragment too.
    save(&dir.join("index.html"), "<p id=t data-html=two></p>");
    p.wait_for(&["event rendered", r##""html":"two""##, r##""text":"kept""##]);
    let reloads = p.seen.iter().filter(|l| l.contains("reloaded ")).count();
    assert!(reloads >= 7, "each save is a reload: {reloads}");
    assert!(
        !p.seen
            .iter()
            .any(|l| l.contains(": closed") || l.contains("reload_loop")),
        "the preview's reloads must not count as a loop:\n{}",
        p.seen.join("\n")
    );
}

#[test]
fn r_ui_3_preview_resends_an_edited_state_and_keeps_the_last_good_one_on_a_bad_edit() {
    display();
    let dir = folder(
        "state",
        &[
            ("index.html", "<p id=t></p>"),
            ("script.js", &script(1)),
            ("state.json", r##"{"bg":"#fff","text":"first"}"##),
        ],
    );
    let mut p = Preview::start(&dir);
    p.wait_for(&["event rendered", r##""text":"first""##]);
    save(
        &dir.join("state.json"),
        r##"{"bg":"#fff","text":"second"}"##,
    );
    p.wait_for(&["state changed: sent as ui.patch"]);
    p.wait_for(&["event rendered", r##""text":"second""##]);
    // A broken save: its error, with the position, and the last good state stays.
    save(&dir.join("state.json"), r##"{"bg":"#fff","text":"##);
    let error = p.wait_for(&["state.json:1:", "the last good state stays"]);
    assert!(error.contains("R-UI-3"), "{error}");
    // A code edit now reloads with the last good state, not the broken one.
    save(&dir.join("script.js"), &script(2));
    p.wait_for(&["event rendered", r##""v":2,"##, r##""text":"second""##]);
    // Fixed again: sent.
    save(&dir.join("state.json"), r##"{"bg":"#fff","text":"third"}"##);
    p.wait_for(&["event rendered", r##""text":"third""##]);
}

/// The RGBA pixel at (`x`, `y`) of a PNG file.
fn pixel(png_path: &Path, x: u32, y: u32) -> (u32, u32, [u8; 4]) {
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(png_path).unwrap(),
    ));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    let at = (y as usize * info.width as usize + x as usize) * channels;
    let px = &buf[at..at + channels];
    let rgba = match channels {
        3 => [px[0], px[1], px[2], 255],
        4 => [px[0], px[1], px[2], px[3]],
        n => panic!("unexpected png with {n} channels"),
    };
    (info.width, info.height, rgba)
}

#[test]
fn screenshot_pixels_show_the_rendered_state_of_the_full_document() {
    display();
    // A document taller than the window: the full-document snapshot covers all of it.
    let dir = folder(
        "shot",
        &[
            ("index.html", "<p id=t></p><div id=tall></div>"),
            ("style.css", "body { margin: 0 } #tall { height: 1500px }"),
            ("script.js", &script(1)),
            ("state.json", r##"{"bg":"rgb(12, 200, 34)","text":"shot"}"##),
        ],
    );
    let out = dir.with_file_name("shot.png");
    let screenshot = || {
        let run = Command::new(LINEUP)
            .arg("preview")
            .arg(&dir)
            .arg("--screenshot")
            .arg(&out)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&run.stdout);
        assert!(run.status.success(), "{stdout}");
    };
    screenshot();
    let (width, height, rgba) = pixel(&out, 200, 1200);
    assert!(
        height >= 1500,
        "the full document, not the window: {width}x{height}"
    );
    assert_eq!(rgba, [12, 200, 34, 255], "the state's background colour");

    // Positive control: another state gives other pixels.
    std::fs::write(
        dir.join("state.json"),
        r##"{"bg":"rgb(200, 10, 90)","text":"x"}"##,
    )
    .unwrap();
    screenshot();
    assert_eq!(pixel(&out, 200, 1200).2, [200, 10, 90, 255]);
}

#[test]
fn check_fails_on_a_page_error_and_passes_on_a_clean_bundle() {
    display();
    let check = |dir: &Path| run_preview(dir, &["--check"]);
    // Positive control: a clean bundle passes.
    let clean = folder(
        "clean",
        &[
            ("index.html", "<p id=t></p>"),
            ("script.js", &script(1)),
            ("state.json", r##"{"bg":"#fff","text":"ok"}"##),
        ],
    );
    let (code, stdout) = check(&clean);
    assert_eq!(code, Some(0), "{stdout}");
    // An error thrown in onState, after the state arrived.
    let broken = folder(
        "broken",
        &[
            ("index.html", "<p id=t></p>"),
            (
                "script.js",
                "LineUpSurface.onState(function (s) {\n  s.missing.boom();\n});\n",
            ),
        ],
    );
    let (code, stdout) = check(&broken);
    assert_eq!(code, Some(3), "a page error exits 3: {stdout}");
    assert!(stdout.contains("TypeError"), "{stdout}");
    // A CSP violation.
    let csp = folder(
        "csp",
        &[
            ("index.html", "<p id=t></p>"),
            (
                "script.js",
                "fetch('https://example.com/x').catch(function () {});",
            ),
        ],
    );
    let (code, stdout) = check(&csp);
    assert_eq!(code, Some(4), "a CSP violation exits 4: {stdout}");
    // Oversize, before any webview.
    let big = "x".repeat(170 * 1024);
    let over = folder("over", &[("index.html", &big)]);
    let (code, stdout) = check(&over);
    assert_eq!(code, Some(5), "{stdout}");
    assert!(stdout.contains("OVER THE LIMIT"), "{stdout}");
}

/// R-UI-11 (issue 30 item 11): preview says `(clamped)` only for a resize the bounds changed;
/// the request within them is printed as asked (positive control in the same run).
#[test]
fn preview_says_clamped_only_when_it_clamped() {
    display();
    let dir = folder(
        "resize",
        &[
            ("index.html", "<p>x</p>"),
            (
                "script.js",
                "LineUpSurface.resize(300);\nsetTimeout(function () { LineUpSurface.resize(5000); }, 50);\n",
            ),
        ],
    );
    let run = Command::new(LINEUP)
        .arg("preview")
        .arg(&dir)
        .arg("--check")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    let line = |px: &str| {
        stdout
            .lines()
            .find(|l| l.contains("] resize ") && l.contains(px))
            .unwrap_or_else(|| panic!("no resize to {px}: {stdout}"))
            .to_owned()
    };
    assert!(!line(": 300 px").contains("clamped"), "{stdout}");
    assert!(line(": 2000 px").ends_with("(clamped)"), "{stdout}");
}

/// Pixels of a PNG file close to `rgb` (each channel within 40), anti-aliased edges aside.
fn pixels_near(png_path: &Path, rgb: [u8; 3]) -> usize {
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(png_path).unwrap(),
    ));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    assert!(channels >= 3, "unexpected png with {channels} channels");
    buf[..info.buffer_size()]
        .chunks_exact(channels)
        .filter(|px| (0..3).all(|i| px[i].abs_diff(rgb[i]) <= 40))
        .count()
}

/// The authors' guide's example: an unmodified chart library (uPlot, inline in `script.js`)
/// works in the production sandbox: no page error and no CSP violation (`--check`), and its
/// canvas shows the state's line in the host's accent colour. Positive control: the same
/// bundle with no values draws no line.
#[test]
fn the_guides_inline_chart_library_draws_the_state_in_the_sandbox() {
    display();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/surfaces/chart");
    let run = |dir: &Path, args: &[&str]| {
        let (code, stdout) = run_preview(dir, args);
        assert_eq!(code, Some(0), "{args:?}: {stdout}");
        stdout
    };
    // The check listens from the page's `drawn` event on (two animation frames after its
    // state), not from the state alone: on a loaded machine those frames can take longer than
    // the settle time.
    let stdout = run(&example, &["--check", "--wait-event", "drawn"]);
    assert!(stdout.contains(r#"event drawn {"points":12}"#), "{stdout}");
    // The light theme's accent, `--lineup-color-accent`.
    const ACCENT: [u8; 3] = [0x0a, 0x66, 0xd8];
    let copy = folder("chart", &[]);
    for file in ["index.html", "style.css", "script.js", "state.json"] {
        std::fs::copy(example.join(file), copy.join(file)).unwrap();
    }
    let out = copy.with_file_name("chart.png");
    let shot = |dir: &Path| {
        let out = out.to_str().unwrap();
        run(dir, &["--screenshot", out, "--wait-event", "drawn"]);
        pixels_near(Path::new(out), ACCENT)
    };
    let line = shot(&copy);
    assert!(line > 500, "{line} pixels of the line");
    std::fs::write(
        copy.join("state.json"),
        r#"{"title": "Empty", "x": [], "values": []}"#,
    )
    .unwrap();
    let empty = shot(&copy);
    assert!(empty < 50, "{empty} accent pixels with no data");
}

#[test]
fn without_a_display_preview_says_to_run_under_xvfb_run() {
    let dir = folder("nodisplay", &[("index.html", "<p></p>")]);
    let run = Command::new(LINEUP)
        .arg("preview")
        .arg(&dir)
        .arg("--check")
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert_eq!(run.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("xvfb-run -a") && stdout.contains("preview") && stdout.contains("--check"),
        "{stdout}"
    );
}
