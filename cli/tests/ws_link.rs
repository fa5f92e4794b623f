//! `lineup host --connect ws://…` against a loopback WebSocket agent written here with
//! tokio-tungstenite: the real host binary, real webviews. The agent is killed and started again
//! on the same port; the host reconnects with backoff, each connection starts with
//! `client.inventory` (R-INV-1), the open Surface stays patchable within the grace, and after it
//! closes with `agent_gone` (R-UI-12). The security checks each have a positive control: the
//! bearer token from a 0600 file is accepted and from a 0644 file refused, a token in the
//! environment never reaches a web process while another variable does, `ws://` to a
//! non-loopback address is refused while loopback connects.
//!
//! Run with `xvfb-run -a cargo test -p lineup-cli --test ws_link`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr,
    missing_docs
)]

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt as _;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

#[path = "support/agent.rs"]
mod agent;
#[path = "support/tls.rs"]
mod tls;
use agent::{kind, AgentServer, Seen};
use tls::tls;

/// How long any one step may take: a debug WebKitGTK on a busy machine starts slowly (its first
/// Surface has been seen to take 28 s here while other builds ran).
const STEP: Duration = Duration::from_secs(60);

const CONVERSATION: &str = "conv_ws";
const AGENT: &str = "agent_ws";
const INSTANCE: &str = "counter.01";

/// One host with webviews at a time: two cores, and WebKit starts slowly when shared.
static HOSTS: Mutex<()> = Mutex::new(());

fn one_host() -> MutexGuard<'static, ()> {
    HOSTS.lock().unwrap_or_else(|p| p.into_inner())
}

fn require_display() {
    if std::env::var_os("DISPLAY").is_none_or(|d| d.is_empty()) {
        panic!(
            "DISPLAY is not set: these tests start real WebKitGTK webviews; run them under \
             `xvfb-run -a cargo test -p lineup-cli --test ws_link`"
        );
    }
}

fn envelope(id: &str, kind: &str, payload: Value) -> String {
    json!({
        "v": 1, "id": id, "type": format!("lineup.v1.{kind}"),
        "conversation_id": CONVERSATION,
        "sender": {"kind": "agent", "id": AGENT}, "payload": payload,
    })
    .to_string()
}

/// A Surface that reports every state it gets as `rendered` with the state's `n`.
fn counter_open() -> String {
    envelope(
        "open-1",
        "ui.open",
        json!({
            "instance_id": INSTANCE,
            "app": {"id": "com.lineup.test.counter", "name": "Counter", "version": "1.0.0",
                    "html": "<main id='n'></main>", "css": "",
                    "js": "LineUpSurface.onState(function (s) { document.getElementById('n').textContent = s.n; LineUpSurface.event('rendered', {n: s.n}); });"},
            "state": {"n": 1},
        }),
    )
}

fn counter_patch(id: &str, n: i64) -> String {
    envelope(
        id,
        "ui.patch",
        json!({"instance_id": INSTANCE, "state": {"n": n}}),
    )
}

fn is_rendered(n: i64) -> impl Fn(&Value) -> bool {
    move |v| {
        kind(v) == "lineup.v1.ui.event"
            && v["payload"]["event"] == "rendered"
            && v["payload"]["data"]["n"] == n
    }
}

// ---- the host ----

struct Host {
    child: Child,
    stderr: Arc<Mutex<Vec<String>>>,
    dir: PathBuf,
}

impl Host {
    /// Starts `lineup host --connect URL` with capabilities on (so each connection starts with
    /// an inventory), the vouched conversation and agent, and `extra` arguments.
    fn start(name: &str, url: &str, extra: &[&str], env: &[(&str, &str)]) -> Self {
        Self::spawn(name, url, true, extra, env)
    }

    /// [`Host::start`] without `--data-dir`: App Capabilities off, no data directory.
    fn start_plain(name: &str, url: &str, token: &str) -> Self {
        Self::spawn(name, url, false, &[], &[("LINEUP_AGENT_TOKEN", token)])
    }

    fn spawn(name: &str, url: &str, data: bool, extra: &[&str], env: &[(&str, &str)]) -> Self {
        let dir = scratch(name);
        let mut command = Command::new(env!("CARGO_BIN_EXE_lineup"));
        command
            .args(["host", "--connect", url, "--conversation", CONVERSATION])
            .args(["--agent-id", AGENT]);
        if data {
            command.arg("--data-dir").arg(dir.join("data"));
        }
        command
            .args(extra)
            .env("RUST_LOG", "info")
            .env("HOME", dir.join("home"))
            .env("XDG_DATA_HOME", dir.join("xdg-data"))
            .env("XDG_CACHE_HOME", dir.join("cache"))
            .env("XDG_CONFIG_HOME", dir.join("config"))
            .env_remove("LINEUP_AGENT_TOKEN")
            .env_remove("CREDENTIALS_DIRECTORY")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (k, v) in env {
            command.env(k, v);
        }
        let mut child = command.spawn().expect("cannot start the lineup binary");
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&stderr);
        let pipe = child.stderr.take().unwrap();
        thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                log.lock().unwrap_or_else(|p| p.into_inner()).push(line);
            }
        });
        Self { child, stderr, dir }
    }

    fn stderr(&self) -> Vec<String> {
        self.stderr
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Waits for a stderr line containing `needle`, seen after the first `after` lines.
    fn wait_log(&self, needle: &str, after: usize, within: Duration) -> usize {
        let deadline = Instant::now() + within;
        loop {
            let lines = self.stderr();
            if let Some(i) = lines.iter().skip(after).position(|l| l.contains(needle)) {
                return after + i + 1;
            }
            if Instant::now() > deadline {
                panic!(
                    "no stderr line with {needle:?} within {within:?}:\n{}",
                    lines.join("\n")
                );
            }
            thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A fresh directory for `name`; each test and host uses its own name.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lineup-ws-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for sub in ["home", "data", "xdg-data", "cache", "config"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    dir
}

/// The first frames of a connection: `client.inventory`, then `app.list` (R-INV-1).
fn expect_greeting(agent: &AgentServer) -> Value {
    let first = agent.text("the first frame");
    assert_eq!(kind(&first), "lineup.v1.client.inventory", "{first}");
    assert_eq!(first["conversation_id"], CONVERSATION);
    let second = agent.text("the second frame");
    assert_eq!(kind(&second), "lineup.v1.app.list", "{second}");
    first
}

// ---- tests ----

#[test]
fn r_inv_1_r_ui_12_connect_open_agent_killed_and_restarted_reconnect_patch_then_agent_gone() {
    require_display();
    let _one = one_host();
    let started = Instant::now();
    let token = "file-token-5b1f0c";
    let agent = AgentServer::start(0, token, 0);
    // Positive control of the token file rule: mode 0600 is read and sent.
    let dir = scratch("token-file");
    let token_file = dir.join("token");
    std::fs::write(&token_file, format!("{token}\n")).unwrap();
    std::fs::set_permissions(&token_file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let token_arg = token_file.to_string_lossy().into_owned();
    // Positive control of the ws:// rule: a loopback address connects. The grace (8 s) outlasts
    // the first absence even when a retry loses the race with the restart (delays drawn under
    // 1, 2 and 4 s), and the second absence waits it out.
    let host = Host::start(
        "main",
        &agent.url(),
        &["--token-file", &token_arg, "--grace-secs", "8"],
        &[],
    );

    assert_eq!(
        agent.accepted().as_deref(),
        Some(&*format!("Bearer {token}"))
    );
    let inventory = expect_greeting(&agent);
    agent.send(counter_open());
    agent.until("the Surface's first state", is_rendered(1));
    let connected = started.elapsed();

    // R-ENV-5: a binary frame is answered, and the connection goes on.
    agent.send_binary(vec![1, 2, 3]);
    let error = agent.until("the binary_frame error", |v| {
        kind(v) == "lineup.v1.client.error"
    });
    assert_eq!(error["payload"]["code"], "binary_frame", "{error}");
    assert!(error["payload"]["message"]
        .as_str()
        .unwrap()
        .contains("3 bytes"));

    // The agent is killed; the host notices and tries again (logged), then it comes back on the
    // same port.
    let port = agent.kill();
    let killed = Instant::now();
    let mark = host.wait_log("the connection to the agent ended", 0, STEP);
    host.wait_log("cannot connect to the agent (attempt 1)", mark, STEP);
    let agent = AgentServer::start(port, token, 0);
    agent.accepted();
    let reconnect = killed.elapsed();
    let again = expect_greeting(&agent);
    assert_ne!(
        again["payload"]["revision"],
        inventory["payload"]["revision"]
    );
    // The Surface stayed open and is patchable.
    agent.send(counter_patch("patch-2", 2));
    agent.until("the patched state", is_rendered(2));

    // Away longer than the grace: the Surface closes with agent_gone, told after the inventory.
    let port = agent.kill();
    let mark = host.wait_log("the connection to the agent ended", mark, STEP);
    host.wait_log("close with agent_gone", mark, STEP);
    let agent = AgentServer::start(port, token, 0);
    agent.accepted();
    expect_greeting(&agent);
    let close = agent.text("the agent_gone close");
    assert_eq!(kind(&close), "lineup.v1.ui.event", "{close}");
    assert_eq!(
        close["payload"],
        json!({"instance_id": INSTANCE, "event": "close", "data": {"reason": "agent_gone"}})
    );
    // It is gone: a patch now is unknown_instance.
    agent.send(counter_patch("patch-3", 3));
    let refused = agent.until("the refusal", |v| kind(v) == "lineup.v1.client.error");
    assert_eq!(refused["payload"]["code"], "unknown_instance", "{refused}");
    let log = host.stderr().join("\n");
    assert!(!log.contains(token), "the token was logged:\n{log}");
    eprintln!(
        "ws_link main: first event {connected:?} after start, reconnect {reconnect:?} after the kill, total {:?}",
        started.elapsed()
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// The WebKit web processes descended from `root`, with their environment.
fn web_process_environments(root: u32) -> Vec<(u32, HashSet<String>)> {
    lineup_tests::procs::web_processes_of(root)
        .into_iter()
        .filter_map(|pid| {
            let raw = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
            let vars = raw
                .split(|b| *b == 0)
                .filter(|v| !v.is_empty())
                .map(|v| String::from_utf8_lossy(v).into_owned())
                .collect();
            Some((pid, vars))
        })
        .collect()
}

#[test]
fn r_env_4_r_env_5_env_token_401_logged_never_leaked_nor_inherited_oversized_message_and_dropped_events(
) {
    require_display();
    let _one = one_host();
    let token = "env-token-9d2e77";
    // The first handshake is refused 401, the next accepted.
    let agent = AgentServer::start(0, token, 1);
    let host = Host::start(
        "env",
        &agent.url(),
        &["--grace-secs", "60"],
        &[
            ("LINEUP_AGENT_TOKEN", token),
            ("LINEUP_TEST_MARKER", "passed-on"),
            // tungstenite logs the client's handshake request at trace level: asked for here,
            // the token must still never appear.
            ("RUST_LOG", "info,tungstenite=trace"),
        ],
    );
    host.wait_log("the agent refused the token (401)", 0, STEP);
    // The token from the environment is sent (positive control of that source)...
    assert_eq!(
        agent.accepted().as_deref(),
        Some(&*format!("Bearer {token}"))
    );
    expect_greeting(&agent);
    agent.send(counter_open());
    agent.until("the Surface's first state", is_rendered(1));
    // ...and gone from the environment the web processes inherit, while another variable set
    // the same way reaches them (positive control).
    let processes = web_process_environments(host.child.id());
    assert!(!processes.is_empty(), "no WebKit web process found");
    for (pid, vars) in &processes {
        assert!(
            vars.contains("LINEUP_TEST_MARKER=passed-on"),
            "web process {pid} lacks the control variable: {vars:?}"
        );
        assert!(
            !vars
                .iter()
                .any(|v| v.starts_with("LINEUP_AGENT_TOKEN") || v.contains(token)),
            "web process {pid} inherited the token"
        );
    }

    // R-ENV-4: a message over the envelope limit (1 MiB) cannot be skipped: the host closes
    // with 1009, reconnects, and tells the agent after the inventory.
    let oversized = format!("{{\"pad\":\"{}\"}}", "x".repeat(1024 * 1024 + 10));
    let size = oversized.len();
    agent.send(oversized);
    loop {
        match agent.next("the host closing the connection") {
            // 1009 (message too big) when the agent's side reads the host's close frame; the
            // agent may still be writing the message when the host closes, and then only sees
            // the connection end.
            Seen::Closed(code) => {
                assert!(matches!(code, None | Some(1009)), "{code:?}");
                break;
            }
            Seen::Text(_) | Seen::Handshake { .. } => {}
        }
    }
    agent.accepted();
    expect_greeting(&agent);
    let too_large = agent.text("the too_large error");
    assert_eq!(kind(&too_large), "lineup.v1.client.error", "{too_large}");
    assert_eq!(too_large["payload"]["code"], "too_large");
    assert_eq!(too_large["payload"]["limit"], 1024 * 1024);
    assert!(
        too_large["payload"]["message"]
            .as_str()
            .unwrap()
            .contains(&format!("envelope is {size} bytes")),
        "{too_large}"
    );
    host.wait_log("the limit is 1048576 (R-ENV-4)", 0, STEP);
    // The Surface is still there.
    agent.send(counter_patch("patch-2", 2));
    agent.until("the patched state", is_rendered(2));

    // Page events made while the agent is away are dropped, counted, and reported once it is
    // back, after its inventory: one `client.error` `events_dropped` naming the Surface.
    agent.send(envelope(
        "open-ticker",
        "ui.open",
        json!({
            "instance_id": "ticker.01",
            "app": {"id": "com.lineup.test.ticker", "name": "Ticker", "version": "1.0.0",
                    "html": "<main>tick</main>", "css": "",
                    "js": "setInterval(function () { LineUpSurface.event('tick', {}); }, 50);"},
        }),
    ));
    agent.until("a tick", |v| v["payload"]["event"] == "tick");
    let before = host.stderr().len();
    let port = agent.kill();
    host.wait_log("the connection to the agent ended", before, STEP);
    thread::sleep(Duration::from_secs(1));
    let agent = AgentServer::start(port, token, 0);
    agent.accepted();
    expect_greeting(&agent);
    let report = agent.until("the events_dropped report", |v| {
        kind(v) == "lineup.v1.client.error" && v["payload"]["code"] == "events_dropped"
    });
    assert_eq!(report["payload"]["instance_id"], "ticker.01", "{report}");
    assert!(
        report["payload"]["count"].as_u64().unwrap() >= 5,
        "{report}"
    );
    host.wait_log(
        "page events were dropped while the agent was away",
        before,
        STEP,
    );

    let log = host.stderr().join("\n");
    // Positive control: tungstenite's trace records do reach the log.
    assert!(
        log.contains("Doing handshake round"),
        "no tungstenite trace"
    );
    assert!(!log.contains(token), "the token was logged");
}

/// Runs `lineup host` with `args` that it must refuse at start; returns its stderr.
fn refused(args: &[&str]) -> String {
    let dir = scratch("refused");
    let out = Command::new(env!("CARGO_BIN_EXE_lineup"))
        .args(["host", "--conversation", CONVERSATION, "--agent-id", AGENT])
        .args(args)
        .env("HOME", dir.join("home"))
        .env("XDG_DATA_HOME", dir.join("xdg-data"))
        .env_remove("LINEUP_AGENT_TOKEN")
        .env_remove("CREDENTIALS_DIRECTORY")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(dir);
    assert!(!out.status.success(), "not refused: {args:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn r_inv_1_each_connection_of_a_host_without_capabilities_begins_with_the_inventory() {
    require_display();
    let _one = one_host();
    let token = "plain-token-2c9e";
    let agent = AgentServer::start(0, token, 0);
    let _host = Host::start_plain("plain", &agent.url(), token);
    // No --data-dir, no capability flag: the inventory and app.list still come first.
    let inventory = expect_greeting(&agent);
    assert_eq!(inventory["payload"]["capabilities"], json!([]));
    assert_eq!(inventory["payload"]["applications"], json!([]));
    agent.send(counter_open());
    agent.until("the Surface's first state", is_rendered(1));
}

#[test]
fn plain_ws_to_a_non_loopback_address_and_a_token_file_readable_by_others_are_refused_at_start() {
    // Loopback (the positive control) connects in the two tests above.
    let e = refused(&["--connect", "ws://192.0.2.1/"]);
    assert!(
        e.contains("ws://192.0.2.1/") && e.contains("loopback"),
        "{e}"
    );
    let e = refused(&["--connect", "http://127.0.0.1/"]);
    assert!(e.contains("wss://"), "{e}");
    // A token file of mode 0644 is refused, naming the path and the mode; 0600 is read in the
    // first test.
    let dir = scratch("mode");
    let file = dir.join("token");
    std::fs::write(&file, "not-to-be-read\n").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let path = file.to_string_lossy().into_owned();
    let e = refused(&["--connect", "ws://127.0.0.1:9/", "--token-file", &path]);
    assert!(e.contains("0644") && e.contains(&path), "{e}");
    assert!(!e.contains("not-to-be-read"), "{e}");
    // --connect needs the vouched identity; exactly one transport.
    let out = Command::new(env!("CARGO_BIN_EXE_lineup"))
        .args(["host", "--connect", "ws://127.0.0.1:9/"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let out = Command::new(env!("CARGO_BIN_EXE_lineup"))
        .args(["host", "--stdio", "--connect", "ws://127.0.0.1:9/"])
        .args(["--conversation", CONVERSATION, "--agent-id", AGENT])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn wss_with_trusted_roots_connects_and_a_server_outside_them_is_refused() {
    require_display();
    let _one = one_host();
    let (ca, config) = tls();
    let (other_ca, _) = tls();
    let dir = scratch("wss-files");
    let roots = dir.join("ca.pem");
    let other_roots = dir.join("other.pem");
    std::fs::write(&roots, ca).unwrap();
    std::fs::write(&other_roots, other_ca).unwrap();
    let token = "wss-token-31c4";
    let token_file = dir.join("token");
    std::fs::write(&token_file, token).unwrap();
    std::fs::set_permissions(&token_file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let token_arg = token_file.to_string_lossy().into_owned();
    // The first handshake is answered with a redirect, which is not followed.
    let agent = AgentServer::start_with(0, token, vec![302], Some(config));
    assert!(agent.url().starts_with("wss://"));
    // Roots of another CA: the TLS handshake fails, no WebSocket handshake is seen.
    let other_arg = other_roots.to_string_lossy().into_owned();
    let refused = Host::start(
        "wss-other",
        &agent.url(),
        &["--token-file", &token_arg, "--trusted-roots", &other_arg],
        &[],
    );
    let at = refused.wait_log("cannot connect to the agent", 0, STEP);
    let line = refused.stderr()[at - 1].clone();
    assert!(line.contains("certificate"), "{line}");
    drop(refused);
    let roots_arg = roots.to_string_lossy().into_owned();
    let host = Host::start(
        "wss",
        &agent.url(),
        &["--token-file", &token_arg, "--trusted-roots", &roots_arg],
        &[],
    );
    assert_eq!(
        agent.accepted().as_deref(),
        Some(&*format!("Bearer {token}"))
    );
    expect_greeting(&agent);
    agent.send(counter_open());
    agent.until("the Surface's first state", is_rendered(1));
    let log = host.stderr().join("\n");
    assert!(
        log.contains(
            "answered a redirect (302) to ws://127.0.0.1:9/elsewhere; redirects are not followed"
        ),
        "{log}"
    );
    assert!(!log.contains(token), "the token was logged");
    let _ = std::fs::remove_dir_all(dir);
}
