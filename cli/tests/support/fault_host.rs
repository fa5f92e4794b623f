//! A `lineup host --stdio` process for fault injection (`cli/tests/faults.rs`): started from any
//! command (a host inside another mount namespace is `nsenter … lineup host …`), its pid known
//! so that it and its web processes can be killed or stopped, and every line it wrote read up
//! to the end of its stdout, so that an answer written just before a SIGKILL is not missed.
//! Shared through `#[path]`, not a test itself.
#![allow(dead_code)]

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// The `lineup` binary under test.
pub(crate) const LINEUP: &str = env!("CARGO_BIN_EXE_lineup");

/// One line of the host's stdout, or its end.
enum Line {
    Envelope(Value),
    End,
}

/// A running host.
pub(crate) struct FaultHost {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Line>,
    ended: bool,
    /// Everything the host wrote to stderr.
    pub(crate) stderr: Arc<Mutex<String>>,
}

impl FaultHost {
    /// `lineup host --stdio ARGS` with the XDG folders in `home`.
    pub(crate) fn lineup(home: &Path, args: &[&str]) -> Self {
        let mut command = Command::new(LINEUP);
        command.args(["host", "--stdio"]).args(args);
        Self::spawn(command, home)
    }

    /// `command` (which must end up running `lineup host --stdio` in its own process, as
    /// `nsenter` does) with the XDG folders in `home`.
    pub(crate) fn spawn(mut command: Command, home: &Path) -> Self {
        let mut child = command
            .env("XDG_DATA_HOME", home.join("data"))
            .env("XDG_CACHE_HOME", home.join("cache"))
            .env("XDG_CONFIG_HOME", home.join("config"))
            .env("HOME", home.join("home"))
            .env("GSETTINGS_BACKEND", "memory")
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
                if tx.send(Line::Envelope(value)).is_err() {
                    return;
                }
            }
            let _ = tx.send(Line::End);
        });
        Self {
            stdin: child.stdin.take(),
            child,
            lines,
            ended: false,
            stderr,
        }
    }

    /// The host's pid.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Writes one line; `false` if the host no longer reads.
    pub(crate) fn send(&mut self, line: &str) -> bool {
        let Some(stdin) = self.stdin.as_mut() else {
            return false;
        };
        writeln!(stdin, "{line}")
            .and_then(|()| stdin.flush())
            .is_ok()
    }

    /// The next envelope within `within`; `None` after that or at the end of stdout.
    pub(crate) fn next(&mut self, within: Duration) -> Option<Value> {
        if self.ended {
            return None;
        }
        match self.lines.recv_timeout(within) {
            Ok(Line::Envelope(value)) => Some(value),
            Ok(Line::End) | Err(RecvTimeoutError::Disconnected) => {
                self.ended = true;
                None
            }
            Err(RecvTimeoutError::Timeout) => None,
        }
    }

    /// Every envelope until one matches `pred` (included), within `within`; `None` if none
    /// did. The envelopes read on the way are given to `seen` first, in order.
    pub(crate) fn until(
        &mut self,
        within: Duration,
        mut seen: impl FnMut(&Value),
        pred: impl Fn(&Value) -> bool,
    ) -> Option<Value> {
        let deadline = Instant::now() + within;
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            let value = self.next(left)?;
            seen(&value);
            if pred(&value) {
                return Some(value);
            }
        }
        None
    }

    /// Whether the process has exited.
    pub(crate) fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// SIGKILL, then every envelope it wrote before dying (read to the end of its stdout,
    /// at most `drain` long).
    pub(crate) fn kill(&mut self, drain: Duration) -> Vec<Value> {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.stdin.take();
        self.rest(drain)
    }

    /// Closes stdin (the host closes its Surfaces and exits), waits up to `within` for it to
    /// exit, and returns the envelopes it wrote meanwhile; killed if it has not exited.
    pub(crate) fn close(&mut self, within: Duration) -> (Vec<Value>, bool) {
        self.stdin.take();
        let deadline = Instant::now() + within;
        let mut clean = false;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                clean = status.success();
                break;
            }
            thread::sleep(Duration::from_millis(20));
        }
        if !clean {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        (self.rest(Duration::from_secs(10)), clean)
    }

    fn rest(&mut self, within: Duration) -> Vec<Value> {
        let deadline = Instant::now() + within;
        let mut rest = Vec::new();
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.next(left) {
                Some(value) => rest.push(value),
                None => break,
            }
        }
        rest
    }

    /// The host's stderr so far.
    pub(crate) fn log(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }
}

impl Drop for FaultHost {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Sends `signal` (`KILL`, `STOP`, `CONT`) to `pid`; `false` if it could not (gone).
pub(crate) fn signal(pid: u32, signal: &str) -> bool {
    Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(pid.to_string())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Whether process `pid` exists and is not a zombie.
pub(crate) fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            stat.rfind(')')
                .and_then(|at| stat.get(at + 1..))
                .and_then(|rest| rest.split_whitespace().next().map(str::to_owned))
        })
        .is_some_and(|state| state != "Z" && state != "X")
}

/// Waits up to `within` for every one of `pids` to be gone; returns those still alive.
pub(crate) fn wait_gone(pids: &HashSet<u32>, within: Duration) -> Vec<u32> {
    let deadline = Instant::now() + within;
    loop {
        let left: Vec<u32> = pids.iter().copied().filter(|p| alive(*p)).collect();
        if left.is_empty() || Instant::now() >= deadline {
            return left;
        }
        thread::sleep(Duration::from_millis(50));
    }
}

/// One agent envelope of `kind` in conversation `c1` from agent `a1`.
pub(crate) fn envelope(id: &str, kind: &str, payload: Value) -> String {
    json!({"v": 1, "id": id, "type": format!("lineup.v1.{kind}"), "conversation_id": "c1",
           "sender": {"kind": "agent", "id": "a1"}, "payload": payload})
    .to_string()
}

/// An `app.call` of `test.count` with `call_id`, tagged with it, whose handler sleeps
/// `sleep_ms` after counting.
pub(crate) fn count_call(call_id: &str, sleep_ms: u64) -> String {
    envelope(
        &format!("m-{call_id}-{}", fresh()),
        "app.call",
        json!({"call_id": call_id, "capability": "test.count", "reason": "count",
               "expires_at": "2099-01-01T00:00:00Z",
               "arguments": {"tag": call_id, "sleep_ms": sleep_ms}}),
    )
}

/// A number never handed out before in this process (envelope ids).
fn fresh() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Whether an envelope is of `kind` (`app.result`, …).
pub(crate) fn is(v: &Value, kind: &str) -> bool {
    v["type"] == format!("lineup.v1.{kind}")
}

/// The `app.result` payload of `call_id`, if `v` is one.
pub(crate) fn result_of<'a>(v: &'a Value, call_id: &str) -> Option<&'a Value> {
    (is(v, "app.result") && v["payload"]["call_id"] == call_id).then(|| &v["payload"])
}

/// How many times each tag is in the count file.
pub(crate) fn counts(path: &Path) -> std::collections::HashMap<String, usize> {
    let mut counts = std::collections::HashMap::new();
    for line in std::fs::read_to_string(path).unwrap_or_default().lines() {
        *counts.entry(line.to_owned()).or_insert(0) += 1;
    }
    counts
}

/// `PRAGMA integrity_check` of the store's database in `data_dir`: `"ok"` or what it found.
pub(crate) fn integrity(data_dir: &Path) -> String {
    let path = data_dir.join(lineup_store::DB_FILE);
    let conn = match rusqlite::Connection::open_with_flags(
        &path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE,
    ) {
        Ok(conn) => conn,
        Err(e) => return format!("cannot open {}: {e}", path.display()),
    };
    let _ = conn.busy_timeout(Duration::from_secs(20));
    let rows = conn.prepare("PRAGMA integrity_check").and_then(|mut s| {
        s.query_map([], |r| r.get::<_, String>(0))
            .and_then(|rows| rows.collect::<Result<Vec<String>, _>>())
    });
    match rows {
        Ok(rows) => rows.join("; "),
        Err(e) => format!("integrity_check failed: {e}"),
    }
}

/// `lineup audit verify --data-dir DIR [--expect-head HEAD]`: the new head (none while the log
/// is empty), or the output of a failed run.
pub(crate) fn audit_verify(
    data_dir: &Path,
    expect_head: Option<&str>,
) -> Result<Option<String>, String> {
    let mut command = Command::new(LINEUP);
    command
        .args(["audit", "verify", "--data-dir"])
        .arg(data_dir);
    if let Some(head) = expect_head {
        command.args(["--expect-head", head]);
    }
    let out = command.output().map_err(|e| e.to_string())?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        return Err(format!(
            "{}: {stdout}{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(stdout
        .lines()
        .find_map(|l| l.strip_prefix("head: "))
        .map(str::to_owned))
}
