//! An agent driving the real `lineup host --stdio` as a subprocess, the way an agent in any
//! language would: envelopes in on stdin, envelopes out on stdout, a real click through XTEST on
//! the X server of the surrounding `xvfb-run`.
//!
//! Run with `xvfb-run -a cargo test -p lineup-cli --test stdio_agent`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr,
    missing_docs
)]

#[path = "stdio_agent/calls.rs"]
mod calls;
#[path = "stdio_agent/conversations.rs"]
mod conversations;
#[path = "stdio_agent/end_to_end.rs"]
mod end_to_end;
#[path = "stdio_agent/slow_reader.rs"]
mod slow_reader;

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use lineup_tests::x11::X11;
use serde_json::{json, Value};

/// How long any one step may take: a debug WebKitGTK on a busy machine starts slowly.
const STEP: Duration = Duration::from_secs(60);
/// How long a click may take to come back as an event before it is tried again. The first click
/// after `ready` takes up to about 0.7 s here (later ones a few ms), so a shorter wait would let a
/// slow first click and its retry both arrive: two events for one intended click.
const CLICK_RETRY: Duration = Duration::from_secs(3);

/// The types a client sends to an agent (R-ENV-2, R-ENV-5).
const CLIENT_TYPES: [&str; 5] = [
    "lineup.v1.ui.event",
    "lineup.v1.client.inventory",
    "lineup.v1.app.list",
    "lineup.v1.app.result",
    "lineup.v1.client.error",
];

/// The spec's weather example, wrapped in a full envelope: no `integrity`, default policy.
const WEATHER_OPEN: &str = r#"{"v":1,"id":"msg_ui_01","type":"lineup.v1.ui.open","conversation_id":"conv_01","sender":{"kind":"agent","id":"agent_hermes_main"},"payload":{"instance_id":"weather.dashboard.01","app":{"id":"com.lineup.weather.dashboard","name":"天气面板","version":"1.0.0","html":"<main><button id='refresh'>刷新</button></main>","css":"main { padding: 16px }","js":"document.querySelector('#refresh').onclick=()=>LineUpSurface.event('refresh',{unit:'c'})"},"state":{"city":"北京","temperature":22}}}"#;

/// The window title of the weather Surface: its sanitised app name.
const WEATHER_TITLE: &str = "天气面板 — LineUp Surface";

/// Inside the button: body margin 8 + main padding 16 puts it at about (24..66, 24..48).
const BUTTON_AT: (i16, i16) = (40, 34);

const CITY_INSTANCE: &str = "weather.city.02";

/// The webviews share one X screen and, without a window manager, one position: one test at a
/// time may show windows, or a window of one could cover the button the other clicks.
static SCREEN: Mutex<()> = Mutex::new(());

fn screen() -> MutexGuard<'static, ()> {
    SCREEN
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn require_display() {
    if std::env::var_os("DISPLAY").is_none_or(|d| d.is_empty()) {
        panic!(
            "DISPLAY is not set: these tests drive real WebKitGTK windows; run them under \
             `xvfb-run -a cargo test --workspace` (or `xvfb-run -a cargo test -p lineup-cli`)"
        );
    }
}

fn envelope(id: &str, kind: &str, payload: Value) -> String {
    envelope_in("conv_01", id, kind, payload)
}

fn envelope_in(conversation: &str, id: &str, kind: &str, payload: Value) -> String {
    json!({
        "v": 1,
        "id": id,
        "type": format!("lineup.v1.{kind}"),
        "conversation_id": conversation,
        "sender": {"kind": "agent", "id": "agent_hermes_main"},
        "payload": payload,
    })
    .to_string()
}

/// A Surface that shows `state.city` and reports what it rendered, on every state.
fn city_open() -> String {
    let js = "LineUpSurface.onState(function (state) { \
                var el = document.getElementById('city'); \
                el.textContent = state.city; \
                LineUpSurface.event('rendered', {text: el.textContent}); \
              });";
    envelope(
        "msg_ui_02",
        "ui.open",
        json!({
            "instance_id": CITY_INSTANCE,
            "app": {
                "id": "com.lineup.weather.city",
                "name": "城市",
                "version": "1.0.0",
                "html": "<main><h1 id='city'></h1></main>",
                "css": "main { padding: 16px }",
                "js": js,
            },
            "state": {"city": "北京", "temperature": 22},
        }),
    )
}

fn city_patch(id: &str, city: &str, temperature: i64) -> String {
    envelope(
        id,
        "ui.patch",
        json!({"instance_id": CITY_INSTANCE, "state": {"city": city, "temperature": temperature}}),
    )
}

/// What the reader threads saw.
#[derive(Default)]
struct Transcript {
    entries: Vec<String>,
    stderr: Vec<String>,
}

enum Out {
    Line(Vec<u8>),
    Eof,
}

/// Whether the agent's stdout reader is paused: while it is, nothing is read from the host's
/// stdout and the OS pipe between them fills up, as with an agent that is busy elsewhere.
#[derive(Default)]
struct ReadGate {
    paused: Mutex<bool>,
    changed: Condvar,
}

impl ReadGate {
    fn set(&self, paused: bool) {
        *self.paused.lock().unwrap_or_else(|p| p.into_inner()) = paused;
        self.changed.notify_all();
    }

    fn wait_open(&self) {
        let mut paused = self.paused.lock().unwrap_or_else(|p| p.into_inner());
        while *paused {
            paused = self.changed.wait(paused).unwrap_or_else(|p| p.into_inner());
        }
    }
}

/// The agent's side of one `lineup host --stdio` process.
struct Agent {
    child: Child,
    read_gate: Arc<ReadGate>,
    stdin: Option<ChildStdin>,
    stdout: Receiver<Out>,
    stdout_closed: bool,
    transcript: Arc<Mutex<Transcript>>,
    /// Every envelope received so far, in order.
    received: Vec<Value>,
    /// Lines sent so far (the host numbers lines from 1).
    sent: u64,
    home: PathBuf,
}

impl Agent {
    fn spawn(name: &str) -> Self {
        Self::spawn_with(name, &[])
    }

    /// Starts `lineup host --stdio` with `extra` arguments.
    fn spawn_with(name: &str, extra: &[&str]) -> Self {
        require_display();
        let home = std::env::temp_dir().join(format!("lineup-stdio-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&home);
        for sub in ["home", "data", "cache", "config"] {
            std::fs::create_dir_all(home.join(sub)).unwrap();
        }
        let mut child = Command::new(env!("CARGO_BIN_EXE_lineup"))
            .args(["host", "--stdio"])
            .args(extra)
            .env("RUST_LOG", "info")
            .env("HOME", home.join("home"))
            .env("XDG_DATA_HOME", home.join("data"))
            .env("XDG_CACHE_HOME", home.join("cache"))
            .env("XDG_CONFIG_HOME", home.join("config"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("cannot start the lineup binary");
        let transcript = Arc::new(Mutex::new(Transcript::default()));

        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        let read_gate = Arc::new(ReadGate::default());
        let gate = Arc::clone(&read_gate);
        thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                gate.wait_open();
                let mut line = Vec::new();
                match reader.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        if tx.send(Out::Line(line)).is_err() {
                            return;
                        }
                    }
                }
            }
            let _ = tx.send(Out::Eof);
        });

        let stderr = child.stderr.take().unwrap();
        let log = Arc::clone(&transcript);
        thread::spawn(move || {
            let mut reader = BufReader::new(stderr);
            let mut line = Vec::new();
            while reader.read_until(b'\n', &mut line).is_ok_and(|n| n > 0) {
                let text = String::from_utf8_lossy(&line).trim_end().to_owned();
                let mut t = log.lock().unwrap_or_else(|p| p.into_inner());
                t.entries.push(format!("stderr: {text}"));
                t.stderr.push(text);
                line.clear();
            }
        });

        Self {
            stdin: child.stdin.take(),
            child,
            read_gate,
            stdout: rx,
            stdout_closed: false,
            transcript,
            received: Vec::new(),
            sent: 0,
            home,
        }
    }

    fn note(&self, entry: String) {
        self.transcript
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entries
            .push(entry);
    }

    /// Sends one line; returns its line number as the host counts it.
    fn send(&mut self, line: &str) -> u64 {
        self.send_bytes(line.as_bytes())
    }

    fn send_bytes(&mut self, line: &[u8]) -> u64 {
        self.sent += 1;
        let shown = if line.len() > 300 {
            format!(
                "{}… ({} bytes)",
                String::from_utf8_lossy(&line[..120]),
                line.len()
            )
        } else {
            String::from_utf8_lossy(line).into_owned()
        };
        self.note(format!("agent → host [line {}]: {shown}", self.sent));
        let stdin = self.stdin.as_mut().expect("stdin is still open");
        stdin.write_all(line).expect("write to the host's stdin");
        stdin.write_all(b"\n").expect("write to the host's stdin");
        stdin.flush().expect("flush the host's stdin");
        self.sent
    }

    /// Stops reading the host's stdout until [`Agent::resume_stdout`]; what the host writes
    /// meanwhile fills the OS pipe, then waits in the host.
    fn pause_stdout(&self) {
        self.note("agent: stops reading stdout".into());
        self.read_gate.set(true);
    }

    fn resume_stdout(&self) {
        self.note("agent: reads stdout again".into());
        self.read_gate.set(false);
    }

    /// Writes `lines` from a thread of their own, so that the agent can go on (and read) while
    /// the host is not reading stdin; returns the line number of each, as the host counts them.
    fn send_in_background(
        &mut self,
        lines: Vec<String>,
    ) -> (Vec<u64>, thread::JoinHandle<ChildStdin>) {
        let first = self.sent + 1;
        let numbers: Vec<u64> = (first..first + lines.len() as u64).collect();
        self.sent += lines.len() as u64;
        self.note(format!(
            "agent → host [lines {first}..={}]: {} lines from a background thread",
            self.sent,
            lines.len()
        ));
        let mut stdin = self.stdin.take().expect("stdin is still open");
        let writer = thread::spawn(move || {
            for line in lines {
                stdin
                    .write_all(line.as_bytes())
                    .expect("write to the host's stdin");
                stdin.write_all(b"\n").expect("write to the host's stdin");
            }
            stdin.flush().expect("flush the host's stdin");
            stdin
        });
        (numbers, writer)
    }

    /// Takes stdin back from [`Agent::send_in_background`] once its thread has written all.
    fn join_background(&mut self, writer: thread::JoinHandle<ChildStdin>) {
        let stdin = writer.join().expect("the background writer panicked");
        self.stdin = Some(stdin);
        self.note("agent: background lines all written".into());
    }

    fn close_stdin(&mut self) {
        self.note("agent: closes stdin".into());
        self.stdin = None;
    }

    /// Checks and records one stdout line: it must be a complete, valid client → agent envelope.
    fn accept(&mut self, raw: Vec<u8>) {
        let text = String::from_utf8_lossy(&raw).into_owned();
        self.note(format!("host → agent: {}", text.trim_end()));
        assert!(raw.ends_with(b"\n"), "stdout ended inside a line: {text:?}");
        let text = std::str::from_utf8(&raw[..raw.len() - 1])
            .unwrap_or_else(|e| panic!("stdout line is not UTF-8 ({e}): {text:?}"));
        let message: Value = serde_json::from_str(text)
            .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {text:?}"));
        check_envelope(&message);
        self.received.push(message);
    }

    /// Takes in stdout until `deadline`, or until a newly received envelope satisfies `want`;
    /// returns that envelope.
    fn wait_until(&mut self, deadline: Instant, want: impl Fn(&Value) -> bool) -> Option<Value> {
        loop {
            let now = Instant::now();
            if now >= deadline || self.stdout_closed {
                return None;
            }
            match self.stdout.recv_timeout(deadline - now) {
                Ok(Out::Line(raw)) => {
                    self.accept(raw);
                    let last = self.received.last().unwrap();
                    if want(last) {
                        return Some(last.clone());
                    }
                }
                Ok(Out::Eof) | Err(RecvTimeoutError::Disconnected) => {
                    self.note("host: stdout closed".into());
                    self.stdout_closed = true;
                }
                Err(RecvTimeoutError::Timeout) => return None,
            }
        }
    }

    /// Waits for an envelope satisfying `want`, failing with `what` after [`STEP`].
    fn expect(&mut self, what: &str, want: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + STEP;
        match self.wait_until(deadline, want) {
            Some(message) => message,
            None => panic!("never received {what} within {STEP:?}"),
        }
    }

    /// The envelope received so far that satisfies `want`, or else [`Agent::expect`]: for
    /// answers that may arrive in any order.
    fn expect_seen(&mut self, what: &str, want: impl Fn(&Value) -> bool) -> Value {
        match self.received.iter().find(|m| want(m)) {
            Some(m) => m.clone(),
            None => self.expect(what, want),
        }
    }

    /// Waits until a window titled `title` is shown, taking in stdout meanwhile; returns it.
    fn shown_window(&mut self, x: &X11, title: &str) -> u32 {
        let deadline = Instant::now() + STEP;
        loop {
            if let Some(w) = x.find_window_by_title(title) {
                if x.is_viewable(w) {
                    return w;
                }
            }
            assert!(
                Instant::now() < deadline,
                "no window titled {title:?} was shown within {STEP:?}"
            );
            self.wait_until(Instant::now() + Duration::from_millis(100), |_| false);
        }
    }

    /// Waits until some stderr line satisfies `want`; returns it.
    fn expect_stderr(&self, what: &str, want: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + STEP;
        loop {
            if let Some(line) = self.stderr().into_iter().find(|l| want(l)) {
                return line;
            }
            assert!(
                Instant::now() < deadline,
                "stderr never showed {what} within {STEP:?}"
            );
            thread::sleep(Duration::from_millis(50));
        }
    }

    fn stderr(&self) -> Vec<String> {
        self.transcript
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .stderr
            .clone()
    }

    /// Every `ui.event` received so far with this instance and event name.
    fn events(&self, instance: &str, event: &str) -> Vec<Value> {
        self.received
            .iter()
            .filter(|m| {
                m["type"] == "lineup.v1.ui.event"
                    && m["payload"]["instance_id"] == instance
                    && m["payload"]["event"] == event
            })
            .map(|m| m["payload"].clone())
            .collect()
    }

    /// Ends the host at once with SIGKILL, as a crash or power cut would.
    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.note("host: killed".to_owned());
    }

    /// Waits for the process to exit, then reads stdout to its end.
    fn wait_exit(&mut self) -> ExitStatus {
        let deadline = Instant::now() + STEP;
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("poll the host process") {
                break status;
            }
            assert!(
                Instant::now() < deadline,
                "the host did not exit within {STEP:?} of its stdin closing"
            );
            thread::sleep(Duration::from_millis(50));
        };
        self.note(format!("host: exited with {status}"));
        self.wait_until(deadline, |_| false);
        assert!(
            self.stdout_closed,
            "stdout stayed open after the host exited (a web process holds it?)"
        );
        status
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        self.read_gate.set(false);
        if thread::panicking() {
            while let Ok(out) = self.stdout.try_recv() {
                if let Out::Line(raw) = out {
                    self.note(format!(
                        "host → agent: {}",
                        String::from_utf8_lossy(&raw).trim_end()
                    ));
                }
            }
            let _ = self.child.kill();
            let _ = self.child.wait();
            thread::sleep(Duration::from_millis(200));
            let t = self.transcript.lock().unwrap_or_else(|p| p.into_inner());
            eprintln!("---- transcript of lineup host --stdio ----");
            for entry in &t.entries {
                eprintln!("{entry}");
            }
            eprintln!("---- end of transcript ----");
        } else {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.home);
    }
}

/// A valid client → agent envelope of this conversation (R-ENV-1, R-ENV-2).
fn check_envelope(m: &Value) {
    let ok = m.is_object()
        && m["v"] == 1
        && m["id"].as_str().is_some_and(|id| !id.is_empty())
        && m["type"]
            .as_str()
            .is_some_and(|t| CLIENT_TYPES.contains(&t))
        && m["conversation_id"].as_str().is_some_and(|c| !c.is_empty())
        && m["sender"]["kind"].is_string()
        && m["sender"]["id"].is_string()
        && m["payload"].is_object();
    assert!(ok, "not a valid client → agent envelope: {m}");
}

fn is_error_for(in_reply_to: Value) -> impl Fn(&Value) -> bool {
    move |m| m["type"] == "lineup.v1.client.error" && m["payload"]["in_reply_to"] == in_reply_to
}

fn is_rendered(text: &'static str) -> impl Fn(&Value) -> bool {
    move |m| {
        m["type"] == "lineup.v1.ui.event"
            && m["payload"]
                == json!({"instance_id": CITY_INSTANCE, "event": "rendered", "data": {"text": text}})
    }
}

/// Whether `line` names a requirement id such as `R-ENV-1`.
fn names_rule(line: &str) -> bool {
    line.match_indices("R-").any(|(at, _)| {
        let rest = &line[at + 2..];
        let letters = rest.bytes().take_while(u8::is_ascii_uppercase).count();
        letters > 0
            && rest[letters..].starts_with('-')
            && rest[letters + 1..]
                .bytes()
                .next()
                .is_some_and(|b| b.is_ascii_digit())
    })
}

/// An RFC 3339 time two minutes from now.
fn soon() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 120;
    // Days since the epoch to a civil date (Howard Hinnant's algorithm).
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

/// [`spawn_counting`] vouching for `agent`, or for no agent when `None` (then "always" lasts
/// one conversation, R-SES-1).
fn spawn_counting_as(name: &str, agent: Option<&str>, extra: &[&str]) -> (Agent, PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!("lineup-count-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let count = dir.join("runs.txt");
    let count_arg = count.to_string_lossy().into_owned();
    let mut args = Vec::new();
    if let Some(agent) = agent {
        args.extend(["--agent-id", agent]);
    }
    args.extend(["--dangerous-test-capability", count_arg.as_str()]);
    args.extend_from_slice(extra);
    (Agent::spawn_with(name, &args), dir, count)
}

fn count_call_in(conversation: &str, call_id: &str, tag: &str) -> String {
    test_call_in(conversation, "test.count", call_id, tag)
}

/// An `app.call` of the test capability `capability` (`test.count` or `test.confirm`) in
/// `conversation`.
fn test_call_in(conversation: &str, capability: &str, call_id: &str, tag: &str) -> String {
    envelope_in(
        conversation,
        &format!("msg_{conversation}_{call_id}"),
        "app.call",
        json!({
            "call_id": call_id,
            "capability": capability,
            "reason": "counting runs",
            "expires_at": soon(),
            "arguments": {"tag": tag},
        }),
    )
}
