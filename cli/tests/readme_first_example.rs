//! The README's first example runs as written (issue 30 item 8): the commands of its first
//! fenced `sh` block, with `target/release/lineup` the binary under test, show the Surface and
//! keep the host up after `lineup bundle` ended its input (`--until-closed`), until the user
//! closes the window; then the host exits 0. The positive control runs the same pipeline
//! without `--until-closed` and sees the host exit on its own, which is what the example did
//! before (R-ENV-4: end of input closes every Surface).
//!
//! Run with `xvfb-run -a cargo test -p lineup-cli --test readme_first_example`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr,
    missing_docs
)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::{Duration, Instant};

use lineup_tests::x11::X11;

const LINEUP: &str = env!("CARGO_BIN_EXE_lineup");
const STEP: Duration = Duration::from_secs(30);

/// The commands of the README's first fenced `sh` block (under "Driving the host from any
/// language"), without the `cargo build` line, with the binary under test for
/// `target/release/lineup`.
fn first_example() -> Vec<String> {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md"))
            .unwrap();
    let section = readme
        .split("\n## ")
        .find(|s| s.starts_with("Driving the host from any language"))
        .expect("a `## Driving the host from any language` section");
    let block = section
        .split("```sh\n")
        .nth(1)
        .and_then(|rest| rest.split("\n```").next())
        .expect("a fenced sh block");
    block
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with("cargo "))
        .map(|l| l.replace("target/release/lineup", LINEUP))
        .collect()
}

fn workdir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lineup-readme-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs every command but the last to its end in `dir`; starts the last (the pipeline into
/// the host) and returns it with its stderr lines.
fn run_example(dir: &Path, commands: &[String]) -> (Child, Receiver<String>) {
    let (last, setup) = commands.split_last().expect("commands");
    for command in setup {
        let status = Command::new("sh")
            .arg("-c")
            .arg(command)
            .current_dir(dir)
            .status()
            .unwrap();
        assert!(status.success(), "`{command}` failed: {status}");
    }
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(last)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            eprintln!("host: {line}");
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    (child, rx)
}

/// Waits for a stderr line with `want`, among those `seen` so far or the next ones (the
/// log's order across threads is not fixed); returns it.
fn expect_line(rx: &Receiver<String>, seen: &mut Vec<String>, want: &str) -> String {
    if let Some(line) = seen.iter().find(|l| l.contains(want)) {
        return line.clone();
    }
    let deadline = Instant::now() + STEP;
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(line) => {
                seen.push(line.clone());
                if line.contains(want) {
                    return line;
                }
            }
            Err(_) => break,
        }
    }
    panic!("stderr never showed {want:?} within {STEP:?}");
}

/// Waits up to `limit` for the child to exit.
fn exited_within(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        if Instant::now() >= deadline {
            return None;
        }
        thread::sleep(Duration::from_millis(50));
    }
}

fn require_display() {
    assert!(
        std::env::var_os("DISPLAY").is_some_and(|d| !d.is_empty()),
        "DISPLAY is not set: run under `xvfb-run -a`"
    );
}

#[test]
fn r_env_4_the_readmes_first_example_stays_up_until_its_window_is_closed() {
    require_display();
    let commands = first_example();
    assert!(
        commands
            .last()
            .is_some_and(|c| c.contains("--until-closed")),
        "the first example keeps the host up: {commands:?}"
    );
    let dir = workdir("until-closed");
    let (mut child, stderr) = run_example(&dir, &commands);
    let seen = &mut Vec::new();
    let opened = expect_line(&stderr, seen, ": opened ");
    expect_line(&stderr, seen, ": ready");
    // The input ended as soon as `lineup bundle` printed its one line; the Surface stays up.
    expect_line(&stderr, seen, "stdin closed");
    assert!(
        exited_within(&mut child, Duration::from_secs(3)).is_none(),
        "the host exited after end of input with its Surface open"
    );
    // The user closes the window: the host exits 0.
    let title = opened
        .rsplit_once('(')
        .and_then(|(_, t)| t.strip_suffix(')'))
        .expect("a title in the opened line")
        .to_owned();
    // Surface windows carry the host's marker after the app's name (R-SEC-5).
    let title = format!("{title}{}", lineup_host::platform::SURFACE_TITLE_MARKER);
    let x = X11::connect().unwrap();
    let window = x
        .find_window_by_title(&title)
        .unwrap_or_else(|| panic!("no window titled {title:?}"));
    x.request_close(window).unwrap();
    let status = exited_within(&mut child, Duration::from_secs(10))
        .expect("the host did not exit within 10 s of its last Surface closing");
    assert!(status.success(), "the host exited {status}");
}

#[test]
fn r_env_4_without_until_closed_the_example_ends_with_its_input() {
    require_display();
    let mut commands = first_example();
    let last = commands.pop().unwrap().replace(" --until-closed", "");
    commands.push(last);
    let dir = workdir("control");
    let (mut child, stderr) = run_example(&dir, &commands);
    expect_line(&stderr, &mut Vec::new(), "stdin closed");
    let status = exited_within(&mut child, Duration::from_secs(20))
        .expect("without --until-closed the host exits at end of input");
    assert!(status.success(), "the host exited {status}");
}
