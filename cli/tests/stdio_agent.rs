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
use std::sync::{Arc, Mutex, MutexGuard};
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
const WEATHER_TITLE: &str = "天气面板";

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
    json!({
        "v": 1,
        "id": id,
        "type": format!("lineup.v1.{kind}"),
        "conversation_id": "conv_01",
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

/// The agent's side of one `lineup host --stdio` process.
struct Agent {
    child: Child,
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
        require_display();
        let home = std::env::temp_dir().join(format!("lineup-stdio-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&home);
        for sub in ["home", "data", "cache", "config"] {
            std::fs::create_dir_all(home.join(sub)).unwrap();
        }
        let mut child = Command::new(env!("CARGO_BIN_EXE_lineup"))
            .args(["host", "--stdio"])
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
        thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
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
    let deadline = Instant::now() + STEP;
    let window = loop {
        if let Some(w) = x.find_window_by_title(WEATHER_TITLE) {
            if x.is_viewable(w) {
                break w;
            }
        }
        assert!(
            Instant::now() < deadline,
            "no window titled {WEATHER_TITLE:?} was shown within {STEP:?}"
        );
        agent.wait_until(Instant::now() + Duration::from_millis(100), |_| false);
    };
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
    // Everything on stdout was checked to be an envelope as it arrived; nothing else came.
    assert_eq!(
        agent.received.len(),
        ui_events.len() + errors,
        "stdout carried only ui.event and client.error envelopes"
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
    assert_eq!(agent.received.len(), 2, "{:?}", agent.received);
}
