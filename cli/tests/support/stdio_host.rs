//! A `lineup host --stdio` process driven as an agent would: lines in, envelopes out, stderr
//! kept for the test's messages. Shared by the CLI tests through `#[path]`, not a test itself.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// The `lineup` binary under test.
pub(crate) const LINEUP: &str = env!("CARGO_BIN_EXE_lineup");

/// How long any one expected envelope may take.
pub(crate) const STEP: Duration = Duration::from_secs(60);

/// The host's log filter in these tests: `info`, and the input guard's restarts (the line
/// [`GUARD_RESTARTED`]).
pub(crate) const GUARD_LOG: &str = "info,lineup_webview_shell::platform::linux::guard=debug";

/// What the host logs each time a window's input guard restarts.
pub(crate) const GUARD_RESTARTED: &str = "guard delay restarted";

/// How many guard restarts the host logged so far.
pub(crate) fn guard_restarts(host: &StdioHost) -> usize {
    host.stderr.lock().unwrap().matches(GUARD_RESTARTED).count()
}

/// A running host.
pub(crate) struct StdioHost {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<(Instant, Value)>,
    /// Every envelope read so far, in order, with when it was read.
    pub(crate) seen: Vec<(Instant, Value)>,
    /// Everything the host wrote to stderr.
    pub(crate) stderr: Arc<Mutex<String>>,
}

impl StdioHost {
    /// Starts `lineup host --stdio ARGS` with `XDG_DATA_HOME` (and the other XDG folders) in
    /// `home`, so that the default data directory is the test's own.
    pub(crate) fn start(home: &Path, args: &[&str]) -> Self {
        Self::spawn(Command::new(LINEUP), home, args)
    }

    /// [`StdioHost::start`] with `HOME` also in `home` (so GTK's dialogs keep their state
    /// there) and the working directory `cwd`.
    pub(crate) fn start_in(home: &Path, cwd: &Path, args: &[&str]) -> Self {
        Self::start_with_env(home, cwd, &[], args)
    }

    /// [`StdioHost::start_in`] with the variables of `env` set as well.
    pub(crate) fn start_with_env(
        home: &Path,
        cwd: &Path,
        env: &[(&str, &str)],
        args: &[&str],
    ) -> Self {
        let mut command = Command::new(LINEUP);
        command.envs(env.iter().copied());
        // GTK's dialogs keep their settings in memory: no dconf, no D-Bus session here.
        command
            .current_dir(cwd)
            .env("HOME", home.join("home"))
            .env("GSETTINGS_BACKEND", "memory");
        Self::spawn(command, home, args)
    }

    fn spawn(mut command: Command, home: &Path, args: &[&str]) -> Self {
        // The host's own windows log each restart of their input guard (R-STD-8), so that a
        // test can wait past the last one instead of sleeping a fixed time.
        let logs_set = std::env::var_os("RUST_LOG").is_some()
            || command.get_envs().any(|(key, _)| key == "RUST_LOG");
        if !logs_set {
            command.env("RUST_LOG", GUARD_LOG);
        }
        let mut child = command
            .args(["host", "--stdio"])
            .args(args)
            .env("XDG_DATA_HOME", home.join("data"))
            .env("XDG_CACHE_HOME", home.join("cache"))
            .env("XDG_CONFIG_HOME", home.join("config"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = Arc::new(Mutex::new(String::new()));
        let log = child.stderr.take().unwrap();
        let sink = Arc::clone(&stderr);
        thread::spawn(move || {
            for line in BufReader::new(log).lines() {
                let Ok(line) = line else { break };
                let mut all = sink.lock().unwrap();
                all.push_str(&line);
                all.push('\n');
            }
        });
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let value = serde_json::from_str::<Value>(&line)
                    .unwrap_or_else(|_| json!({"not_json": line}));
                if tx.send((Instant::now(), value)).is_err() {
                    break;
                }
            }
        });
        Self {
            stdin: child.stdin.take(),
            child,
            lines,
            seen: Vec::new(),
            stderr,
        }
    }

    /// Writes one line.
    pub(crate) fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// The next envelope not yet returned that matches `pred`, with when it arrived, waiting
    /// up to `within`; `None` after that.
    pub(crate) fn wait_for(
        &mut self,
        within: Duration,
        pred: impl Fn(&Value) -> bool,
    ) -> Option<(Instant, Value)> {
        let deadline = Instant::now() + within;
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.lines.recv_timeout(left) {
                Ok((at, value)) => {
                    self.seen.push((at, value.clone()));
                    if pred(&value) {
                        return Some((at, value));
                    }
                }
                Err(_) => break,
            }
        }
        None
    }

    /// [`StdioHost::wait_for`] within [`STEP`]; panics naming `what` and what came instead.
    pub(crate) fn expect(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        match self.wait_for(STEP, pred) {
            Some((_, value)) => value,
            None => panic!(
                "no {what} (the host: {:?}); saw {:#?}\nstderr:\n{}",
                self.child.try_wait(),
                self.seen.iter().map(|(_, v)| v).collect::<Vec<_>>(),
                self.stderr.lock().unwrap()
            ),
        }
    }

    /// Everything read within `quiet` of silence.
    pub(crate) fn drain(&mut self, quiet: Duration) {
        while let Ok(line) = self.lines.recv_timeout(quiet) {
            self.seen.push(line);
        }
    }

    /// The host process's id.
    #[allow(dead_code)]
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the host process is still running.
    pub(crate) fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Ends the host: stdin closed, then killed if it has not exited.
    pub(crate) fn stop(mut self) {
        self.stdin.take();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for StdioHost {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One agent envelope of `kind` (`ui.open`, …) in conversation `c1` from agent `a1`.
pub(crate) fn envelope(id: &str, kind: &str, payload: Value) -> String {
    json!({"v": 1, "id": id, "type": format!("lineup.v1.{kind}"), "conversation_id": "c1",
           "sender": {"kind": "agent", "id": "a1"}, "payload": payload})
    .to_string()
}

/// Whether an envelope is of `kind` (`client.error`, …).
pub(crate) fn is(kind: &str) -> impl Fn(&Value) -> bool + '_ {
    move |v| v["type"] == format!("lineup.v1.{kind}")
}

/// The answer to envelope `id`: a `client.error` in reply to it.
pub(crate) fn error_for(id: &str) -> impl Fn(&Value) -> bool + '_ {
    move |v| is("client.error")(v) && v["payload"]["in_reply_to"] == id
}

/// Runs `lineup ARGS` with the test's XDG folders in `home`; panics unless it succeeds.
pub(crate) fn lineup(home: &Path, args: &[&str]) -> String {
    let out = lineup_status(home, args);
    assert!(out.0, "lineup {args:?}: {}", out.2);
    out.1
}

/// Runs `lineup ARGS`: (success, stdout, stderr).
pub(crate) fn lineup_status(home: &Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(LINEUP)
        .args(args)
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
