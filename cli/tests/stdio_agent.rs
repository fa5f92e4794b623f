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

#[test]
fn agent_drives_lineup_host_stdio_end_to_end() {
    require_display();
    let _screen = screen();
    let mut agent = Agent::spawn("e2e");
    let x = X11::connect().unwrap_or_else(|e| {
        panic!("cannot connect to the X server at $DISPLAY ({e}); run under `xvfb-run -a`")
    });

    // a) The spec's weather example.
    agent.send(WEATHER_OPEN);

    // b) A real click on its button: find the window by its title, wait until it is shown and
    // its page has run its script, then click until the page answers.
    let window = agent.shown_window(&x, WEATHER_TITLE);
    agent.note(format!(
        "agent: window {window:#x} titled {WEATHER_TITLE:?}"
    ));
    agent.expect_stderr("the weather Surface ready", |l| {
        l.contains("weather.dashboard.01") && l.contains("ready")
    });
    let from_weather = |m: &Value| {
        m["type"] == "lineup.v1.ui.event" && m["payload"]["instance_id"] == "weather.dashboard.01"
    };
    let mut clicks = 0;
    let clicked_by = Instant::now() + STEP;
    loop {
        x.click_in(window, BUTTON_AT.0, BUTTON_AT.1)
            .unwrap_or_else(|e| panic!("XTEST click failed: {e}"));
        clicks += 1;
        agent.note(format!(
            "agent: XTEST click {clicks} at {BUTTON_AT:?} in window {window:#x}"
        ));
        if agent
            .wait_until(Instant::now() + CLICK_RETRY, from_weather)
            .is_some()
        {
            break;
        }
        assert!(
            Instant::now() < clicked_by,
            "{clicks} clicks on the button in 天气面板 produced no ui.event within {STEP:?}"
        );
    }

    // d) A variant that renders state.city and reports what it rendered.
    agent.send(&city_open());
    agent.expect(
        "the variant's first rendered event (北京)",
        is_rendered("北京"),
    );
    agent.send(&city_patch("msg_ui_03", "上海", 28));
    agent.expect("rendered 上海 after the patch", is_rendered("上海"));

    // e) Bad lines change nothing and get their errors; the good line after them works.
    let bad_version = envelope(
        "msg_bad_01",
        "ui.patch",
        json!({"instance_id": CITY_INSTANCE, "state": {"city": "深圳", "temperature": 30}}),
    )
    .replacen("\"v\":1", "\"v\":2", 1);
    assert!(bad_version.contains("\"v\":2"), "{bad_version}");
    let bad_version_line = agent.send(&bad_version);
    let garbage_line = agent.send("this is not an envelope {");
    agent.send(&city_patch("msg_ui_04", "广州", 31));
    let version_error = agent.expect(
        "client.error in reply to msg_bad_01",
        is_error_for(json!("msg_bad_01")),
    );
    let garbage_error = agent.expect(
        "client.error with in_reply_to null for the garbage line",
        is_error_for(Value::Null),
    );
    agent.expect("rendered 广州 after the bad lines", is_rendered("广州"));
    for (error, line) in [
        (&version_error, bad_version_line),
        (&garbage_error, garbage_line),
    ] {
        assert!(
            error["payload"]["code"]
                .as_str()
                .is_some_and(|c| !c.is_empty()),
            "a client.error without a code: {error}"
        );
        assert!(error["payload"]["message"].is_string(), "{error}");
        agent.expect_stderr(&format!("line {line} with a rule id"), |l| {
            l.contains(&format!("line {line}:")) && names_rule(l)
        });
    }

    // f) End of input: every Surface closes silently and the host exits 0.
    agent.close_stdin();
    let status = agent.wait_exit();
    assert!(status.success(), "the host exited with {status}");

    // c) Exactly the one refresh event, with exactly the spec's payload.
    let ui_events: Vec<&Value> = agent
        .received
        .iter()
        .filter(|m| m["type"] == "lineup.v1.ui.event")
        .collect();
    let weather: Vec<&&Value> = ui_events
        .iter()
        .filter(|m| m["payload"]["instance_id"] == "weather.dashboard.01")
        .collect();
    assert_eq!(
        weather.len(),
        1,
        "expected exactly one ui.event from the weather Surface after {clicks} click(s): {weather:?}"
    );
    assert_eq!(
        weather[0]["payload"],
        json!({"instance_id": "weather.dashboard.01", "event": "refresh", "data": {"unit": "c"}})
    );
    // The bad patch never reached the page; the renders came in order.
    let rendered: Vec<Value> = agent
        .events(CITY_INSTANCE, "rendered")
        .into_iter()
        .map(|p| p["data"]["text"].clone())
        .collect();
    assert_eq!(
        rendered,
        [json!("北京"), json!("上海"), json!("广州")],
        "renders of the variant"
    );
    // An agent-side EOF closes silently: no user close went upstream.
    assert!(
        !ui_events.iter().any(|m| m["payload"]["event"] == "close"),
        "a ui.event close was sent for an agent-side EOF: {ui_events:?}"
    );
    // The only errors are the two for the bad lines.
    let errors = agent
        .received
        .iter()
        .filter(|m| m["type"] == "lineup.v1.client.error")
        .count();
    assert_eq!(errors, 2, "client.error count");
    // The host adopted the agent's conversation from its first envelope.
    assert!(
        agent
            .received
            .iter()
            .all(|m| m["conversation_id"] == "conv_01"),
        "every envelope belongs to conv_01"
    );
    // R-INV-1, R-SES-1: a plain host (no capability flag, no data directory) still sends the
    // inventory first, before the answer to the envelope that established the session.
    let types: Vec<&Value> = agent.received.iter().map(|m| &m["type"]).collect();
    assert_eq!(
        types[..2],
        [
            &json!("lineup.v1.client.inventory"),
            &json!("lineup.v1.app.list")
        ],
        "the first two lines"
    );
    assert_eq!(agent.received[0]["payload"]["capabilities"], json!([]));
    assert_eq!(agent.received[0]["payload"]["applications"], json!([]));
    // Everything on stdout was checked to be an envelope as it arrived; nothing else came.
    assert_eq!(
        agent.received.len(),
        ui_events.len() + errors + 2,
        "stdout carried only the inventory, ui.event and client.error envelopes"
    );
}

#[test]
fn an_oversized_line_is_answered_and_the_host_keeps_working() {
    require_display();
    let _screen = screen();
    let mut agent = Agent::spawn("too-large");

    // One byte over the default envelope limit (R-ENV-4: 1 MiB).
    let huge = vec![b'x'; 1024 * 1024 + 1];
    agent.send_bytes(&huge);
    let error = agent.expect("client.error too_large", is_error_for(Value::Null));
    assert_eq!(error["payload"]["code"], "too_large", "{error}");

    let open = envelope(
        "msg_after_huge",
        "ui.open",
        json!({
            "instance_id": "after.huge",
            "app": {
                "id": "com.lineup.after",
                "name": "after",
                "version": "1.0.0",
                "html": "<p>ok</p>",
                "css": "",
                "js": "LineUpSurface.onState(function (s) { LineUpSurface.event('seen', {n: s.n}); });",
            },
            "state": {"n": 1},
        }),
    );
    agent.send(&open);
    let seen = agent.expect("the Surface opened after the oversized line", |m| {
        m["type"] == "lineup.v1.ui.event" && m["payload"]["instance_id"] == "after.huge"
    });
    assert_eq!(
        seen["payload"],
        json!({"instance_id": "after.huge", "event": "seen", "data": {"n": 1}})
    );

    agent.close_stdin();
    let status = agent.wait_exit();
    assert!(status.success(), "the host exited with {status}");
    // The oversized line established nothing; the open did, so its inventory came before it.
    let types: Vec<&Value> = agent.received.iter().map(|m| &m["type"]).collect();
    assert_eq!(
        types,
        [
            "lineup.v1.client.error",
            "lineup.v1.client.inventory",
            "lineup.v1.app.list",
            "lineup.v1.ui.event"
        ],
        "{:?}",
        agent.received
    );
}

/// A Surface that, once it has its state, posts `tick` events as fast as its page can, numbered
/// from 0, until it is closed.
fn flood_open(id: &str, instance: &str, name: &str) -> String {
    let js = "var n = 0, started = false; \
              function burst() { \
                for (var i = 0; i < 20; i++) { LineUpSurface.event('tick', {n: n++}); } \
                setTimeout(burst, 0); \
              } \
              LineUpSurface.onState(function () { if (!started) { started = true; burst(); } });";
    envelope(
        id,
        "ui.open",
        json!({
            "instance_id": instance,
            "app": {
                "id": "com.lineup.flood",
                "name": name,
                "version": "1.0.0",
                "html": "<main>flood</main>",
                "css": "",
                "js": js,
            },
        }),
    )
}

/// What the agent expects in answer to one line: `err:<id>` for a `client.error` in reply to
/// `<id>`, `res:<call id>` for an `app.result`.
fn answer_key(m: &Value) -> Option<String> {
    match m["type"].as_str()? {
        "lineup.v1.client.error" => Some(format!("err:{}", m["payload"]["in_reply_to"].as_str()?)),
        "lineup.v1.app.result" => Some(format!("res:{}", m["payload"]["call_id"].as_str()?)),
        _ => None,
    }
}

fn is_tick_from(instance: &'static str) -> impl Fn(&Value) -> bool {
    move |m| {
        m["type"] == "lineup.v1.ui.event"
            && m["payload"]["instance_id"] == instance
            && m["payload"]["event"] == "tick"
    }
}

fn is_events_dropped(m: &Value) -> bool {
    m["type"] == "lineup.v1.client.error" && m["payload"]["code"] == "events_dropped"
}

/// Fails unless every `tick` of `instance` in `received` comes before position `at`.
fn assert_no_tick_after(received: &[Value], instance: &'static str, at: usize, after: &str) {
    let last = received.iter().rposition(is_tick_from(instance));
    assert!(
        last.is_some_and(|last| last < at),
        "{instance}: events at {last:?}, after {after} at {at}"
    );
}

const FLOOD_A: &str = "flood.a";
const FLOOD_B: &str = "flood.b";
const FLOOD_B_TITLE: &str = "Flood B";
/// How many answered lines the agent sends while it is not reading: more than the host's
/// default high-water mark of waiting answers (1024), so that the host has to stop reading stdin.
const ANSWERED_LINES: usize = 2100;

/// R-ENV-5, R-UI-5, R-ENV-4: while the agent does not read stdout, two pages flood events, the
/// agent keeps sending lines that each get an answer, closes one flooding Surface itself, and
/// the user closes the other. Once the agent reads again, every answer arrives, in the order of
/// the requests; the user's close arrives; neither Surface's events go on after its close; page
/// events (only they) were dropped, and the agent is told how many per Surface with a
/// `client.error` `events_dropped`; the host stopped reading stdin instead of queueing without
/// bound.
#[test]
fn a_slow_reader_loses_page_events_but_never_an_answer_or_a_close() {
    require_display();
    let _screen = screen();
    // A small queue of page events makes the flood overrun it quickly.
    let mut agent = Agent::spawn_with("slow-reader", &["--outbound-queue", "64"]);
    let x = X11::connect().unwrap_or_else(|e| {
        panic!("cannot connect to the X server at $DISPLAY ({e}); run under `xvfb-run -a`")
    });

    agent.send(&flood_open("msg_open_a", FLOOD_A, "Flood A"));
    agent.send(&flood_open("msg_open_b", FLOOD_B, FLOOD_B_TITLE));
    agent.expect("a tick from flood.a", is_tick_from(FLOOD_A));
    agent.expect("a tick from flood.b", is_tick_from(FLOOD_B));
    // R-SEC-5: the host-owned marker follows the name.
    let window_b = agent.shown_window(&x, &format!("{FLOOD_B_TITLE} — LineUp Surface"));

    // The agent stops reading: the floods fill the pipe, then the host's queue.
    agent.pause_stdout();
    let mut lines = Vec::new();
    let mut expected = Vec::new();
    let mut close_a_at = None;
    for i in 0..ANSWERED_LINES {
        if i == ANSWERED_LINES / 2 {
            // The agent closes flood.a itself: nothing is answered (R-UI-5), but the answer to
            // the next line tells where the close took effect.
            close_a_at = Some(expected.len());
            lines.push(envelope(
                "msg_close_a",
                "ui.close",
                json!({"instance_id": FLOOD_A, "reason": "enough"}),
            ));
        }
        match i % 3 {
            0 => {
                let id = format!("msg_ghost_{i}");
                lines.push(envelope(
                    &id,
                    "ui.patch",
                    json!({"instance_id": format!("ghost.{i}"), "state": {"i": i}}),
                ));
                expected.push(format!("err:{id}"));
            }
            1 => {
                let call = format!("call_{i}");
                lines.push(envelope(
                    &format!("msg_call_{i}"),
                    "app.call",
                    json!({"call_id": call, "capability": "app.open_url", "reason": "r",
                           "expires_at": "2026-08-02T12:10:00Z", "arguments": {}}),
                ));
                expected.push(format!("res:{call}"));
            }
            _ => {
                let id = format!("msg_v2_{i}");
                lines.push(
                    envelope(
                        &id,
                        "ui.patch",
                        json!({"instance_id": FLOOD_A, "state": {}}),
                    )
                    .replacen("\"v\":1", "\"v\":2", 1),
                );
                expected.push(format!("err:{id}"));
            }
        }
    }
    // The last line is refused, so the host's log names its line once it was handled.
    let last_id = "msg_ghost_last";
    lines.push(envelope(
        last_id,
        "ui.patch",
        json!({"instance_id": "ghost.last", "state": {}}),
    ));
    expected.push(format!("err:{last_id}"));
    let close_a_at = close_a_at.unwrap();
    let (numbers, writer) = agent.send_in_background(lines);
    let last_line = *numbers.last().unwrap();

    // Meanwhile the user closes flood.b.
    x.request_close(window_b)
        .unwrap_or_else(|e| panic!("WM_DELETE_WINDOW to {window_b:#x} failed: {e}"));
    agent.expect_stderr("flood.b closed by the user", |l| {
        l.contains(FLOOD_B) && l.contains("closed by the user")
    });
    // Wait until the host either stopped reading stdin (R-ENV-4) or handled every line.
    let stopped = agent.expect_stderr("the host stop reading stdin or handle the last line", |l| {
        l.contains("stopped reading stdin") || l.contains(&format!("line {last_line}:"))
    });
    agent.note(format!("agent: saw {stopped:?}; reads again"));
    agent.resume_stdout();
    agent.join_background(writer);

    // Read until every answer, the user's close and flood.a's drop report arrived.
    let deadline = Instant::now() + STEP;
    loop {
        agent.wait_until(Instant::now() + Duration::from_millis(200), |_| false);
        let answered = agent
            .received
            .iter()
            .filter_map(answer_key)
            .filter(|k| expected.contains(k))
            .count();
        let closed_b = agent.events(FLOOD_B, "close").len();
        let reported_a = agent
            .received
            .iter()
            .any(|m| is_events_dropped(m) && m["payload"]["instance_id"] == FLOOD_A);
        if answered >= expected.len() && closed_b > 0 && reported_a {
            break;
        }
        if Instant::now() > deadline || agent.stdout_closed {
            let got: Vec<String> = agent.received.iter().filter_map(answer_key).collect();
            let missing: Vec<&String> = expected.iter().filter(|k| !got.contains(k)).collect();
            panic!(
                "after {STEP:?}: {answered} of {} answers (first missing: {:?}), {closed_b} \
                 close(s) of flood.b, events_dropped for flood.a: {reported_a}",
                expected.len(),
                missing.iter().take(5).collect::<Vec<_>>()
            );
        }
    }
    agent.close_stdin();
    let status = agent.wait_exit();
    assert!(status.success(), "the host exited with {status}");

    // Every answer arrived, once, in the order of the requests (R-ENV-5).
    let answers: Vec<String> = agent.received.iter().filter_map(answer_key).collect();
    assert_eq!(
        answers.len(),
        expected.len(),
        "answers: one per answered line"
    );
    assert!(answers == expected, "answers arrived out of order");
    // The user's close arrived exactly once, and flood.b said nothing after it (R-UI-5).
    let position = |want: &dyn Fn(&Value) -> bool| agent.received.iter().position(want);
    let closes_b = agent.events(FLOOD_B, "close");
    assert_eq!(
        closes_b,
        [json!({"instance_id": FLOOD_B, "event": "close", "data": {}})]
    );
    let close_b =
        position(&|m| m["payload"]["instance_id"] == FLOOD_B && m["payload"]["event"] == "close")
            .unwrap();
    assert_no_tick_after(&agent.received, FLOOD_B, close_b, "the user closed it");
    // flood.a said nothing after the answer to the line after the agent's close.
    let after_close_a = &expected[close_a_at];
    let answer_after_close_a =
        position(&|m| answer_key(m).as_ref() == Some(after_close_a)).unwrap();
    assert_no_tick_after(
        &agent.received,
        FLOOD_A,
        answer_after_close_a,
        "the agent closed it",
    );
    // Kept events of each Surface are in the order the page sent them.
    for instance in [FLOOD_A, FLOOD_B] {
        let numbers: Vec<u64> = agent
            .events(instance, "tick")
            .iter()
            .map(|p| p["data"]["n"].as_u64().unwrap())
            .collect();
        assert!(
            numbers.windows(2).all(|w| w[0] < w[1]),
            "{instance}: events out of order"
        );
    }
    // Events were dropped, and the agent was told how many per Surface, never as a ui.event.
    let mut reported = std::collections::BTreeMap::<String, u64>::new();
    for m in agent.received.iter().filter(|m| is_events_dropped(m)) {
        assert_eq!(m["payload"]["in_reply_to"], Value::Null, "{m}");
        let instance = m["payload"]["instance_id"].as_str().unwrap();
        assert!([FLOOD_A, FLOOD_B].contains(&instance), "{m}");
        let count = m["payload"]["count"].as_u64().unwrap();
        assert!(count > 0, "{m}");
        *reported.entry(instance.to_owned()).or_default() += count;
    }
    assert!(
        reported.get(FLOOD_A).is_some_and(|&n| n > 0),
        "{reported:?}"
    );
    // The host stopped reading stdin rather than queue answers without bound (R-ENV-4).
    let stderr = agent.stderr();
    let stopped: Vec<&String> = stderr
        .iter()
        .filter(|l| l.contains("stopped reading stdin"))
        .collect();
    assert!(!stopped.is_empty(), "the host never stopped reading stdin");
    // ...and read it again once the agent caught up.
    assert!(
        stderr.iter().any(|l| l.contains("reading stdin again")),
        "the host never read stdin again"
    );
    eprintln!(
        "slow reader: {} answers delivered in order; ticks kept: flood.a {}, flood.b {}; \
         dropped and reported: {reported:?}; stdin stopped {} time(s), first: {:?}",
        answers.len(),
        agent.events(FLOOD_A, "tick").len(),
        agent.events(FLOOD_B, "tick").len(),
        stopped.len(),
        stopped[0],
    );
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

fn count_call(call_id: &str, tag: &str) -> String {
    count_call_in("conv_01", call_id, tag)
}

/// `lineup host --stdio` vouching for `agent_hermes_main`, with `test.count` counting its runs
/// into a file of a fresh directory, and `extra` arguments; returns the agent, the directory and
/// the count file.
fn spawn_counting(name: &str, extra: &[&str]) -> (Agent, PathBuf, PathBuf) {
    spawn_counting_as(name, Some("agent_hermes_main"), extra)
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

fn is_result_for(call_id: &'static str) -> impl Fn(&Value) -> bool {
    move |m| m["type"] == "lineup.v1.app.result" && m["payload"]["call_id"] == call_id
}

/// R-INV-1, R-CAP-5, R-SES-1 over `lineup host --stdio`: the first answer is preceded by
/// `client.inventory` and `app.list`; a call runs once and its repeat gets the stored result
/// without running again; with a vouched agent, an envelope from another `sender.id` is refused.
#[test]
fn app_call_over_stdio_inventory_first_runs_once_and_refuses_another_sender() {
    require_display();
    let _screen = screen();
    let (mut agent, _dir, count) = spawn_counting("app-call", &[]);
    agent.send(&count_call("call_1", "first"));
    let result = agent.expect("app.result of call_1", is_result_for("call_1"));
    assert_eq!(result["payload"]["status"], "completed", "{result}");
    assert_eq!(result["payload"]["result"], json!({"tag": "first"}));
    let types: Vec<&str> = agent
        .received
        .iter()
        .filter_map(|m| m["type"].as_str())
        .collect();
    assert_eq!(
        &types[..2],
        &["lineup.v1.client.inventory", "lineup.v1.app.list"],
        "the inventory comes first: {types:?}"
    );
    let inventory = &agent.received[0]["payload"];
    assert!(
        inventory["capabilities"]
            .as_array()
            .is_some_and(|c| c.iter().any(|c| c["name"] == "test.count")),
        "{inventory}"
    );

    // The same call_id again: the stored result, no second run.
    agent.send(&count_call("call_1", "first"));
    let again = agent.expect("the repeated call_1's result", |m| {
        is_result_for("call_1")(m)
    });
    let results: Vec<&Value> = agent
        .received
        .iter()
        .filter(|m| is_result_for("call_1")(m))
        .collect();
    assert_eq!(results.len(), 2, "{results:?}");
    assert_eq!(again["payload"]["result"], result["payload"]["result"]);
    let runs = std::fs::read_to_string(&count).unwrap_or_default();
    assert_eq!(runs.lines().count(), 1, "test.count ran {runs:?}");

    // R-SES-1: another sender.id is refused, and the call never runs.
    let mut forged: Value = serde_json::from_str(&count_call("call_2", "forged")).unwrap();
    forged["sender"]["id"] = json!("someone_else");
    agent.send(&forged.to_string());
    let refused = agent.expect("the forged call's answer", is_result_for("call_2"));
    assert_eq!(refused["payload"]["status"], "failed", "{refused}");
    assert_eq!(
        refused["payload"]["error"]["code"], "wrong_sender",
        "{refused}"
    );
    let runs = std::fs::read_to_string(&count).unwrap_or_default();
    assert_eq!(runs.lines().count(), 1, "test.count ran {runs:?}");

    agent.close_stdin();
    let status = agent.wait_exit();
    assert!(status.success(), "the host exited with {status}");
}

/// Item 10: `--enable` turns on exactly the named built-ins: the inventory lists them and no
/// other, a call to one runs (here after automatic consent; the real clipboard under Xvfb), a
/// call to one that is off is `unsupported`; an unknown name is refused with the known ones.
#[test]
fn builtins_enabled_by_flag_over_stdio_are_listed_and_run_and_others_are_unsupported() {
    require_display();
    let _screen = screen();
    let mut agent = Agent::spawn_with(
        "builtins",
        &[
            "--enable",
            "clipboard.write",
            "--dangerous-auto-consent",
            "allow",
        ],
    );
    let call = |call_id: &str, capability: &str, arguments: Value| {
        envelope(
            &format!("msg_{call_id}"),
            "app.call",
            json!({
                "call_id": call_id,
                "capability": capability,
                "reason": "the user asked",
                "expires_at": soon(),
                "arguments": arguments,
            }),
        )
    };
    agent.send(&call("b1", "clipboard.write", json!({"text": "hello"})));
    let copied = agent.expect("clipboard.write's result", is_result_for("b1"));
    assert_eq!(copied["payload"]["status"], "completed", "{copied}");
    assert_eq!(
        copied["payload"]["result"],
        json!({"copied": true, "chars": 5})
    );
    let names: Vec<&str> = agent.received[0]["payload"]["capabilities"]
        .as_array()
        .map(|c| c.iter().filter_map(|c| c["name"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(names, ["clipboard.write"], "{}", agent.received[0]);

    agent.send(&call(
        "b2",
        "app.open_url",
        json!({"url": "https://example.com/"}),
    ));
    let off = agent.expect("app.open_url's result", is_result_for("b2"));
    assert_eq!(off["payload"]["status"], "unsupported", "{off}");
    agent.close_stdin();
    let status = agent.wait_exit();
    assert!(status.success(), "the host exited with {status}");

    let refused = Command::new(env!("CARGO_BIN_EXE_lineup"))
        .args(["host", "--stdio", "--enable", "app.open_url,shell.exec"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("'shell.exec' is not a built-in capability; the built-ins are app.open_url, clipboard.write, device.pick_file, artifact.save"),
        "{stderr}"
    );
}

fn count_call_slow(call_id: &str, tag: &str, sleep_ms: u64) -> String {
    envelope(
        &format!("msg_{call_id}"),
        "app.call",
        json!({
            "call_id": call_id,
            "capability": "test.count",
            "reason": "counting runs",
            "expires_at": soon(),
            "arguments": {"tag": tag, "sleep_ms": sleep_ms},
        }),
    )
}

/// The epoch of an inventory revision `rev-<epoch>-<n>`.
fn revision_epoch(inventory: &Value) -> u64 {
    let revision = inventory["payload"]["revision"]
        .as_str()
        .unwrap_or_default();
    revision
        .split('-')
        .nth(1)
        .and_then(|e| e.parse().ok())
        .unwrap_or_else(|| panic!("unexpected revision {revision:?}"))
}

/// R-CAP-5, R-CAP-6, R-INV-2: `lineup host --stdio` is killed with SIGKILL in the middle of a
/// stream of calls and started again on the same data dir; every `call_id` is sent again. The
/// kill lands while one call (`call_05`, sleeping 10 s in its handler) is certainly running: its
/// handler's line is in the count file and its result has not come. Each call ran at most once
/// (counted by the test capability outside the data dir), a call that had finished gets its
/// stored result, the one running is answered `failed` with `outcome_unknown` and not run
/// again, the inventory revision moved forward, and the database and its audit chain are intact.
#[test]
fn a_killed_host_restarted_on_its_data_dir_runs_each_call_at_most_once() {
    require_display();
    let _screen = screen();
    let dir = std::env::temp_dir().join(format!("lineup-restart-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let data = dir.join("data");
    std::fs::create_dir_all(&data).unwrap();
    let count = dir.join("runs.txt");
    let (data_arg, count_arg) = (
        data.to_string_lossy().into_owned(),
        count.to_string_lossy().into_owned(),
    );
    let args = [
        "--agent-id",
        "agent_hermes_main",
        "--data-dir",
        data_arg.as_str(),
        "--dangerous-test-capability",
        count_arg.as_str(),
    ];
    const CALLS: usize = 12;
    /// The call whose handler is running when the host is killed: it sleeps 10 s.
    const UNFINISHED: &str = "call_05";
    let ids: Vec<String> = (0..CALLS).map(|i| format!("call_{i:02}")).collect();
    let sleep_of = |id: &str| if id == UNFINISHED { 10_000 } else { 150 };

    let mut first = Agent::spawn_with("restart-1", &args);
    // Half the stream reaches the first host; the rest only the second.
    for id in &ids[..CALLS / 2] {
        first.send(&count_call_slow(id, id, sleep_of(id)));
    }
    // Kill it once some calls finished and UNFINISHED's handler has started: it writes its
    // line (synced) before its 10 s sleep, so the kill lands while it runs.
    first.expect("a few results", |m| m["type"] == "lineup.v1.app.result");
    first.expect("a third result", |m| {
        m["type"] == "lineup.v1.app.result" && m["payload"]["call_id"] == "call_02"
    });
    let deadline = Instant::now() + STEP;
    while !std::fs::read_to_string(&count)
        .unwrap_or_default()
        .lines()
        .any(|l| l == UNFINISHED)
    {
        assert!(
            Instant::now() < deadline,
            "{UNFINISHED}'s handler never started"
        );
        first.wait_until(Instant::now() + Duration::from_millis(20), |_| false);
    }
    first.kill();
    let before: Vec<Value> = first
        .received
        .iter()
        .filter(|m| m["type"] == "lineup.v1.app.result")
        .cloned()
        .collect();
    assert!(
        !before.iter().any(|m| m["payload"]["call_id"] == UNFINISHED),
        "{UNFINISHED} finished before the kill: {before:?}"
    );
    let epoch_before = revision_epoch(&first.received[0]);
    drop(first);

    let mut second = Agent::spawn_with("restart-2", &args);
    for id in &ids {
        second.send(&count_call_slow(id, id, sleep_of(id)));
    }
    for id in &ids {
        let id = id.clone();
        // Handlers run on threads of their own: results come in any order.
        second.expect_seen("every call answered after the restart", move |m| {
            m["type"] == "lineup.v1.app.result" && m["payload"]["call_id"] == id.as_str()
        });
    }
    let epoch_after = revision_epoch(&second.received[0]);
    assert!(
        epoch_after > epoch_before,
        "the revision did not move forward: {epoch_before} then {epoch_after}"
    );
    let runs = std::fs::read_to_string(&count).unwrap_or_default();
    for id in &ids {
        let n = runs.lines().filter(|l| *l == id).count();
        assert!(n <= 1, "{id} ran {n} times: {runs:?}");
    }
    let after: Vec<&Value> = second
        .received
        .iter()
        .filter(|m| m["type"] == "lineup.v1.app.result")
        .collect();
    for earlier in &before {
        let id = &earlier["payload"]["call_id"];
        let later = after
            .iter()
            .find(|m| m["payload"]["call_id"] == *id)
            .expect("answered again");
        assert_eq!(
            later["payload"]["status"], earlier["payload"]["status"],
            "{id}: the stored result was not given again: {later} (before: {earlier})"
        );
    }
    let statuses: Vec<&str> = after
        .iter()
        .filter_map(|m| m["payload"]["status"].as_str())
        .collect();
    eprintln!(
        "before the kill: {} results; after the restart: {statuses:?}",
        before.len()
    );
    for m in &after {
        let status = m["payload"]["status"].as_str().unwrap_or_default();
        let ran = runs
            .lines()
            .any(|l| Some(l) == m["payload"]["call_id"].as_str());
        match status {
            "completed" => assert!(ran, "{m}: completed without running"),
            "cancelled" => assert!(!ran, "{m}: cancelled but it ran"),
            "failed" => assert_eq!(m["payload"]["error"]["code"], "outcome_unknown", "{m}"),
            other => panic!("unexpected status {other}: {m}"),
        }
    }
    // The call running at the kill: outcome unknown, run once (before the kill), never again.
    let unfinished = after
        .iter()
        .find(|m| m["payload"]["call_id"] == UNFINISHED)
        .expect("the unfinished call answered after the restart");
    assert_eq!(unfinished["payload"]["status"], "failed", "{unfinished}");
    assert_eq!(
        unfinished["payload"]["error"]["code"], "outcome_unknown",
        "{unfinished}"
    );
    assert_eq!(
        runs.lines().filter(|l| *l == UNFINISHED).count(),
        1,
        "{runs:?}"
    );
    second.close_stdin();
    assert!(second.wait_exit().success());

    let db = rusqlite::Connection::open(data.join("lineup.sqlite3")).unwrap();
    let check: String = db
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    let verify = Command::new(env!("CARGO_BIN_EXE_lineup"))
        .args(["audit", "verify", "--data-dir", data_arg.as_str()])
        .output()
        .unwrap();
    assert!(
        verify.status.success(),
        "lineup audit verify: {}",
        String::from_utf8_lossy(&verify.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A Surface that says `hello` with its state's `who` on every state it gets.
fn hello_open(conversation: &str, instance: &str) -> String {
    envelope_in(
        conversation,
        &format!("open_{conversation}_{instance}"),
        "ui.open",
        json!({
            "instance_id": instance,
            "app": {
                "id": "com.lineup.hello",
                "name": format!("{conversation} {instance}"),
                "version": "1.0.0",
                "html": "<main>hello</main>",
                "css": "",
                "js": "LineUpSurface.onState(function (s) { LineUpSurface.event('hello', {who: s.who}); });",
            },
            "state": {"who": format!("{conversation}/{instance}")},
        }),
    )
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

/// The records of `lineup audit export --data-dir data`, one JSON object each.
fn audit_export(data: &str) -> Vec<Value> {
    let export = Command::new(env!("CARGO_BIN_EXE_lineup"))
        .args(["audit", "export", "--data-dir", data])
        .output()
        .unwrap();
    assert!(
        export.status.success(),
        "lineup audit export: {}",
        String::from_utf8_lossy(&export.stderr)
    );
    String::from_utf8(export.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn is_in(conversation: &'static str, kind: &'static str) -> impl Fn(&Value) -> bool {
    move |m| m["conversation_id"] == conversation && m["type"] == format!("lineup.v1.{kind}")
}

/// R-SES-1, R-INV-1, R-CAP-2, R-CAP-6 over `lineup host --stdio`: two conversations on one host,
/// with no vouched agent. Each gets its own `client.inventory` first (`--conversation` at start,
/// the other before the answer to the envelope that established it); both open `w1` and each
/// sees only its own Surface's events; a patch naming the other conversation's instance is
/// `unknown_instance`; the same `call_id` in both runs once per conversation and each gets only
/// its own `app.result`. Grants: prompts are answered "allow always" (`--dangerous-auto-consent
/// allow-always`); conv_a's first `test.confirm` is decided by the prompt, its second by the
/// remembered grant (the positive control), and conv_b's is decided by a prompt of its own,
/// never by conv_a's grant, as the audit export says; no grant is stored for an identity.
#[test]
fn two_conversations_over_stdio_never_see_each_others_surfaces_grants_or_results() {
    require_display();
    let _screen = screen();
    let data_dir = std::env::temp_dir().join(format!(
        "lineup-two-conversations-data-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&data_dir);
    let data = data_dir.to_string_lossy().into_owned();
    let (mut agent, dir, count) = spawn_counting_as(
        "two-conversations",
        None,
        &[
            "--conversation",
            "conv_a",
            "--data-dir",
            data.as_str(),
            "--dangerous-auto-consent",
            "allow-always",
        ],
    );
    // --conversation: its inventory is written at start, before any input.
    agent.expect("conv_a's app.list at start", is_in("conv_a", "app.list"));
    assert_eq!(agent.received[0]["type"], "lineup.v1.client.inventory");
    assert_eq!(agent.received[0]["conversation_id"], "conv_a");

    agent.send(&hello_open("conv_a", "w1"));
    agent.send(&hello_open("conv_a", "only_a"));
    agent.send(&hello_open("conv_b", "w1"));
    for (conversation, instance) in [("conv_a", "w1"), ("conv_a", "only_a"), ("conv_b", "w1")] {
        let who = format!("{conversation}/{instance}");
        agent.expect_seen(&format!("hello from {who}"), move |m| {
            m["type"] == "lineup.v1.ui.event"
                && m["conversation_id"] == conversation
                && m["payload"]["instance_id"] == instance
                && m["payload"]["data"]["who"] == who.as_str()
        });
    }
    // conv_b's inventory came before anything else of conv_b.
    let of_b: Vec<&Value> = agent
        .received
        .iter()
        .filter(|m| m["conversation_id"] == "conv_b")
        .collect();
    assert_eq!(of_b[0]["type"], "lineup.v1.client.inventory", "{of_b:?}");
    assert_eq!(of_b[1]["type"], "lineup.v1.app.list", "{of_b:?}");
    let inventories: Vec<&Value> = agent
        .received
        .iter()
        .filter(|m| m["type"] == "lineup.v1.client.inventory")
        .collect();
    assert_eq!(inventories.len(), 2, "one inventory per conversation");
    assert_ne!(
        inventories[0]["payload"]["revision"], inventories[1]["payload"]["revision"],
        "each session has its own revision"
    );

    // The other conversation's instance is unknown here.
    agent.send(&envelope_in(
        "conv_b",
        "patch_b_only_a",
        "ui.patch",
        json!({"instance_id": "only_a", "state": {"who": "forged"}}),
    ));
    let refused = agent.expect(
        "the patch of another conversation's instance refused",
        is_error_for(json!("patch_b_only_a")),
    );
    assert_eq!(refused["payload"]["code"], "unknown_instance", "{refused}");
    assert_eq!(refused["conversation_id"], "conv_b");

    // The same call_id in both conversations: two runs, each result to its own conversation.
    agent.send(&count_call_in("conv_a", "call_1", "from_a"));
    agent.send(&count_call_in("conv_b", "call_1", "from_b"));
    for (conversation, tag) in [("conv_a", "from_a"), ("conv_b", "from_b")] {
        let result = agent.expect_seen(&format!("{conversation}'s app.result"), move |m| {
            is_in(conversation, "app.result")(m) && m["payload"]["call_id"] == "call_1"
        });
        assert_eq!(result["payload"]["status"], "completed", "{result}");
        assert_eq!(result["payload"]["result"], json!({"tag": tag}), "{result}");
    }
    // A repeat in conv_a gets conv_a's stored result and runs nothing.
    agent.send(&count_call_in("conv_a", "call_1", "from_a"));
    agent.expect("conv_a's repeated call_1", |m| {
        is_in("conv_a", "app.result")(m)
            && m["payload"]["call_id"] == "call_1"
            && m["payload"]["result"]["tag"] == "from_a"
    });
    let runs = std::fs::read_to_string(&count).unwrap_or_default();
    let mut lines: Vec<&str> = runs.lines().collect();
    lines.sort_unstable();
    assert_eq!(lines, ["from_a", "from_b"], "test.count ran {runs:?}");

    // Grants: conv_a's "always" (there is no vouched identity) lasts conv_a only. One call at a
    // time, so that the second starts after the first's grant was remembered.
    for (conversation, call_id, tag) in [
        ("conv_a", "confirm_1", "from_a"),
        ("conv_a", "confirm_2", "from_a"),
        ("conv_b", "confirm_1", "from_b"),
    ] {
        agent.send(&test_call_in(conversation, "test.confirm", call_id, tag));
        let result = agent.expect(&format!("{conversation}'s {call_id}"), move |m| {
            is_in(conversation, "app.result")(m) && m["payload"]["call_id"] == call_id
        });
        assert_eq!(result["payload"]["status"], "completed", "{result}");
        assert_eq!(result["payload"]["result"], json!({"tag": tag}), "{result}");
    }

    // Nothing of one conversation reached the other.
    for m in &agent.received {
        let conversation = m["conversation_id"].as_str().unwrap_or_default();
        if m["type"] == "lineup.v1.ui.event" {
            let who = m["payload"]["data"]["who"].as_str().unwrap_or_default();
            assert!(who.starts_with(&format!("{conversation}/")), "{m}");
        }
        if m["type"] == "lineup.v1.app.result" {
            let tag = m["payload"]["result"]["tag"].as_str().unwrap_or_default();
            assert_eq!(tag, conversation.replace("conv_", "from_"), "{m}");
        }
    }
    let results_a = agent
        .received
        .iter()
        .filter(|m| is_in("conv_a", "app.result")(m))
        .count();
    let results_b = agent
        .received
        .iter()
        .filter(|m| is_in("conv_b", "app.result")(m))
        .count();
    assert_eq!((results_a, results_b), (4, 2));

    agent.close_stdin();
    let status = agent.wait_exit();
    assert!(status.success(), "the host exited with {status}");
    let runs = std::fs::read_to_string(&count).unwrap_or_default();
    let mut lines: Vec<&str> = runs.lines().collect();
    lines.sort_unstable();
    assert_eq!(
        lines,
        ["from_a", "from_a", "from_a", "from_b", "from_b"],
        "the test capabilities ran {runs:?}"
    );

    // Where each test.confirm decision came from, as the audit log records it.
    let audit = audit_export(&data);
    let sources = |conversation: &str, call_id: &str| -> Vec<(String, String)> {
        audit
            .iter()
            .filter(|r| {
                r["conversation_id"] == conversation
                    && r["call_id"] == call_id
                    && r["capability"] == "test.confirm"
                    && r["decision"] != "none"
            })
            .map(|r| {
                (
                    r["decision"].as_str().unwrap_or_default().to_owned(),
                    r["decision_source"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect()
    };
    let decided_by = |conversation: &str, call_id: &str, source: &str| {
        sources(conversation, call_id)
            .iter()
            .any(|(_, s)| s == source)
    };
    let a1 = sources("conv_a", "confirm_1");
    assert!(
        a1.contains(&("allowed_always".to_owned(), "prompt".to_owned())),
        "conv_a's first call was not allowed always at a prompt: {a1:?}\n{audit:#?}"
    );
    // The positive control: conv_a's second call runs on conv_a's remembered grant.
    assert!(
        decided_by("conv_a", "confirm_2", "remembered_grant")
            && !decided_by("conv_a", "confirm_2", "prompt"),
        "conv_a's second call did not run on the remembered grant: {:?}\n{audit:#?}",
        sources("conv_a", "confirm_2")
    );
    // conv_b's call never used conv_a's grant: it was asked for at a prompt of its own.
    assert!(
        decided_by("conv_b", "confirm_1", "prompt")
            && !decided_by("conv_b", "confirm_1", "remembered_grant"),
        "conv_b's call used another conversation's grant: {:?}\n{audit:#?}",
        sources("conv_b", "confirm_1")
    );
    // Without a vouched identity nothing is stored for one.
    let grants = Command::new(env!("CARGO_BIN_EXE_lineup"))
        .args(["grants", "list", "--json", "--data-dir", data.as_str()])
        .output()
        .unwrap();
    assert!(grants.status.success());
    let grants: Value = serde_json::from_slice(&grants.stdout).unwrap();
    assert_eq!(grants, json!([]), "stored grants: {grants}");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&data_dir);
}

/// A display that does not open (nothing listens at `:987`) is one typed error line and exit
/// status 1 after a few attempts, never the toolkit's panic.
#[test]
fn a_display_that_does_not_open_is_a_typed_error_not_a_panic() {
    let out = Command::new(env!("CARGO_BIN_EXE_lineup"))
        .args(["host", "--stdio"])
        .env("DISPLAY", ":987")
        .env_remove("WAYLAND_DISPLAY")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("cannot open the display \":987\" after 5 attempts"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}
