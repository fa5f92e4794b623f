//! `lineup kiosk` on an X server of its own with two monitors (two RandR outputs of Xorg's
//! `dummy` driver): the kiosk fills the chosen monitor, undecorated; the screen shows
//! the host's standby screen or a Surface at every sample, 100 ms apart; close requests are
//! ignored; configuration errors name the file, line and key.
//!
//! The screen test starts an X server of its own (installed by `scripts/setup.sh`), so it
//! neither needs nor disturbs the `xvfb-run` display of the other tests.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr,
    missing_docs
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use lineup_tests::x11::X11;
use std::os::unix::fs::PermissionsExt as _;

#[path = "support/agent.rs"]
mod agent;
#[path = "support/kiosk_screen.rs"]
mod kiosk_screen;
use agent::AgentServer;
use kiosk_screen::{
    envelope, is_event, lines, lineup, one_screen, send, wait_for, Display, KillOnDrop, STEP,
};
use serde_json::{json, Value};

/// The standby screen's background in the test's kiosk.toml.
const STANDBY: [u8; 3] = [0x12, 0x34, 0x56];
/// The Surface's page colour.
const SURFACE: [u8; 3] = [0x00, 0xff, 0x00];
/// Monitor 1 of the test display (DUMMY1): the right half of a 1280 × 480 screen.
const RIGHT: (i16, i16, u16, u16) = (640, 0, 640, 480);

/// A kiosk.toml for monitor 1, one region filling it, standby #123456, the pointer hidden.
fn kiosk_toml(dir: &Path, agent: &str, extra: &str) -> PathBuf {
    let data = dir.join("data");
    let text = format!(
        "[agent]\nurl = \"{agent}\"\nconversation = \"lobby\"\nagent_id = \"lobby-agent\"\n{extra}\n\
         [display]\nmonitor = 1\ncursor = \"hidden\"\n\n\
         [standby]\ntitle = \"Lobby\"\nmessage = \"Soon\"\nbackground = \"#123456\"\n\n\
         [[region]]\nname = \"all\"\nx = 0\ny = 0\nwidth = 100\nheight = 100\n\n\
         [host]\ndata_dir = \"{}\"\n",
        data.display()
    );
    let path = dir.join("kiosk.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// A full-page Surface in [`SURFACE`] that says `shown` with its state's `n` after each state.
fn green_open(instance: &str) -> String {
    envelope(
        "open-1",
        "ui.open",
        json!({
            "instance_id": instance,
            "app": {
                "id": "com.example.green", "name": "Green", "version": "1.0.0",
                "html": "<main></main>",
                "css": "html,body{margin:0;height:100%;background:#00ff00}",
                "js": "LineUpSurface.onState(s => LineUpSurface.event('shown', {n: s.n}))"
            },
            "state": {"n": 1}
        }),
    )
}

/// One sample: when, the centre of monitor 1, the centre of monitor 0.
type Sample = (Instant, [u8; 3], [u8; 3]);

/// Samples the screen every 100 ms from its own connection until stopped.
struct Sampler {
    samples: Arc<Mutex<Vec<Sample>>>,
    stop: Arc<AtomicBool>,
    thread: Option<thread::JoinHandle<()>>,
}

impl Sampler {
    /// Samples the centre of monitor 1 and of monitor 0.
    fn start(display: &str) -> Self {
        let x = X11::connect_to(Some(display)).unwrap();
        let samples = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (into, stopping) = (Arc::clone(&samples), Arc::clone(&stop));
        let centre = (
            RIGHT.0 + (RIGHT.2 / 2) as i16,
            RIGHT.1 + (RIGHT.3 / 2) as i16,
        );
        let thread = thread::spawn(move || {
            while !stopping.load(Ordering::Relaxed) {
                let right = x.pixel(centre.0, centre.1).unwrap();
                let left = x.pixel(320, 240).unwrap();
                into.lock().unwrap().push((Instant::now(), right, left));
                thread::sleep(Duration::from_millis(100));
            }
        });
        Self {
            samples,
            stop,
            thread: Some(thread),
        }
    }

    fn seen(&self, colour: [u8; 3]) -> bool {
        self.samples.lock().unwrap().iter().any(|s| s.1 == colour)
    }

    fn wait_for(&self, colour: [u8; 3], what: &str) {
        let deadline = Instant::now() + STEP;
        while !self.seen(colour) {
            assert!(Instant::now() < deadline, "{what}: never on screen");
            thread::sleep(Duration::from_millis(50));
        }
    }

    fn finish(mut self) -> Vec<Sample> {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
        std::mem::take(&mut *self.samples.lock().unwrap())
    }
}

/// From the first standby sample on, every sample of monitor 1 is the standby screen or the
/// Surface: never empty, never half drawn; monitor 0 never shows the kiosk.
fn assert_never_empty(samples: &[Sample]) {
    let first = samples
        .iter()
        .position(|s| s.1 == STANDBY)
        .expect("the standby screen was never on monitor 1");
    let after = &samples[first..];
    let odd: Vec<String> = after
        .iter()
        .enumerate()
        .filter(|(_, s)| s.1 != STANDBY && s.1 != SURFACE)
        .map(|(i, s)| format!("sample {i}: {:02x?}", s.1))
        .collect();
    assert!(
        odd.is_empty(),
        "{} of {} samples were neither the standby screen nor the Surface: {odd:?}",
        odd.len(),
        after.len()
    );
    assert!(
        samples.iter().all(|s| s.2 != STANDBY && s.2 != SURFACE),
        "the kiosk showed on monitor 0, not the chosen monitor 1"
    );
    eprintln!(
        "{} samples over {:?}: {} standby, {} surface",
        after.len(),
        after.last().map(|l| l.0 - after[0].0).unwrap_or_default(),
        after.iter().filter(|s| s.1 == STANDBY).count(),
        after.iter().filter(|s| s.1 == SURFACE).count()
    );
}

#[test]
fn the_kiosk_fills_the_chosen_monitor_and_its_screen_is_never_empty() {
    let _screen = one_screen();
    let display = Display::start();
    let dir = tempfile::tempdir().unwrap();
    let config = kiosk_toml(dir.path(), "ws://127.0.0.1:9/", "");
    let sampler = Sampler::start(&display.name);
    let mut kiosk = Command::new(lineup())
        .args(["kiosk", "--stdio", "--config"])
        .arg(&config)
        .env("DISPLAY", &display.name)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = kiosk.stdin.take().unwrap();
    let rx = lines(kiosk.stdout.take().unwrap());
    let x = X11::connect_to(Some(&display.name)).unwrap();

    // R-INV-1: the configured conversation's session exists at start.
    let inventory = wait_for(&rx, "inventory", |v| {
        v["type"] == "lineup.v1.client.inventory"
    });
    assert_eq!(inventory["conversation_id"], "lobby");
    // R-STD-13, R-STD-14: the kiosk draws the standard components itself, so it lists the
    // v1 catalog.
    let listed = inventory["payload"]["standard_components"].to_string();
    for id in [
        "markdown", "text", "status", "progress", "alert", "confirm", "choice", "input", "form",
    ] {
        assert!(
            listed.contains(&format!(r#""id":"{id}""#)),
            "{id} in {listed}"
        );
    }
    sampler.wait_for(STANDBY, "the standby screen");
    // Undecorated and fullscreen: the standby colour reaches monitor 1's corners.
    for (cx, cy) in [
        (RIGHT.0 + 2, 2),
        (RIGHT.0 + RIGHT.2 as i16 - 3, RIGHT.3 as i16 - 3),
    ] {
        assert_eq!(x.pixel(cx, cy).unwrap(), STANDBY, "corner ({cx}, {cy})");
    }

    send(&mut stdin, &green_open("green"));
    wait_for(&rx, "the Surface's first state", is_event("shown"));
    sampler.wait_for(SURFACE, "the Surface");

    // A window manager's close request is ignored ([display] allow_close = false).
    let window = x
        .find_window_by_title("LineUp kiosk")
        .expect("the kiosk window");
    x.request_close(window).unwrap();
    thread::sleep(Duration::from_millis(500));
    assert!(
        kiosk.try_wait().unwrap().is_none(),
        "a close request ended the kiosk"
    );
    assert_eq!(x.pixel(960, 240).unwrap(), SURFACE, "and the Surface stays");

    // The agent closes it: the standby screen comes back before the view goes.
    send(
        &mut stdin,
        &envelope("close-1", "ui.close", json!({"instance_id": "green"})),
    );
    let start = Instant::now();
    while x.pixel(960, 240).unwrap() != STANDBY {
        assert!(
            start.elapsed() < STEP,
            "the standby screen did not come back"
        );
        thread::sleep(Duration::from_millis(50));
    }
    // A second Surface: down again only once it has drawn.
    send(
        &mut stdin,
        &green_open("green2").replace("open-1", "open-2"),
    );
    wait_for(&rx, "the second Surface", is_event("shown"));
    sampler.wait_for(SURFACE, "the second Surface");
    thread::sleep(Duration::from_millis(500));
    // Sampling ends before the kiosk is told to end: its window then goes, by design.
    let samples = sampler.finish();
    drop(stdin);
    let status = kiosk.wait().unwrap();
    assert!(status.success(), "{status}");
    assert_never_empty(&samples);
}

/// A kiosk.toml for the loopback agent at `url` with a private token file.
fn connected_toml(dir: &Path, url: &str, token: &str, grace: u64) -> PathBuf {
    let token_file = dir.join("agent-token");
    std::fs::write(&token_file, token).unwrap();
    std::fs::set_permissions(&token_file, std::fs::Permissions::from_mode(0o600)).unwrap();
    kiosk_toml(
        dir,
        url,
        &format!(
            "token_file = \"{}\"\ngrace_secs = {grace}\n",
            token_file.display()
        ),
    )
}

fn is_shown(n: i64) -> impl Fn(&Value) -> bool {
    move |v| {
        v["type"] == "lineup.v1.ui.event"
            && v["payload"]["event"] == "shown"
            && v["payload"]["data"]["n"] == n
    }
}

/// The kiosk against a loopback WebSocket agent (#11): connect, inventory first, open; the
/// agent killed and restarted on the same port; the kiosk reconnects with backoff, sends the
/// inventory first again, and the Surface, still on screen, takes a patch. The screen shows the
/// standby screen or the Surface at every sample throughout.
#[test]
fn the_kiosk_survives_its_agent_restarting_and_its_screen_is_never_empty() {
    let _screen = one_screen();
    let display = Display::start();
    let dir = tempfile::tempdir().unwrap();
    let token = "kiosk-token-7d2e";
    let agent = AgentServer::start(0, token, 0);
    let config = connected_toml(dir.path(), &agent.url(), token, 60);
    let sampler = Sampler::start(&display.name);
    let mut kiosk = Command::new(lineup())
        .args(["kiosk", "--config"])
        .arg(&config)
        .env("DISPLAY", &display.name)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let _kill = KillOnDrop(&mut kiosk);

    assert_eq!(
        agent.accepted().as_deref(),
        Some(format!("Bearer {token}").as_str())
    );
    let first = agent.text("the first frame");
    assert_eq!(first["type"], "lineup.v1.client.inventory", "{first}");
    assert_eq!(first["conversation_id"], "lobby");
    sampler.wait_for(STANDBY, "the standby screen");
    agent.send(green_open("green"));
    agent.until("the Surface's first state", is_shown(1));
    sampler.wait_for(SURFACE, "the Surface");

    // The agent dies: no closing handshake, the port closed.
    let port = agent.kill();
    let killed = Instant::now();
    thread::sleep(Duration::from_millis(1500));
    let x = X11::connect_to(Some(&display.name)).unwrap();
    assert_eq!(
        x.pixel(960, 240).unwrap(),
        SURFACE,
        "the Surface stays through the grace"
    );
    // And comes back on the same port: the kiosk's backoff finds it.
    let agent = AgentServer::start(port, token, 0);
    agent.accepted();
    let reconnected = killed.elapsed();
    let first = agent.text("the first frame after the restart");
    assert_eq!(first["type"], "lineup.v1.client.inventory", "{first}");
    agent.send(
        envelope(
            "patch-2",
            "ui.patch",
            json!({"instance_id": "green", "state": {"n": 2}}),
        )
        .to_string(),
    );
    agent.until("the patched state", is_shown(2));
    eprintln!("reconnected {reconnected:?} after the agent was killed");

    // Closed by the agent: the standby screen is back before the view goes.
    agent.send(envelope(
        "close-1",
        "ui.close",
        json!({"instance_id": "green"}),
    ));
    let start = Instant::now();
    while x.pixel(960, 240).unwrap() != STANDBY {
        assert!(
            start.elapsed() < STEP,
            "the standby screen did not come back"
        );
        thread::sleep(Duration::from_millis(50));
    }
    thread::sleep(Duration::from_millis(300));
    let samples = sampler.finish();
    assert_never_empty(&samples);
}

#[test]
fn configuration_errors_name_the_file_line_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kiosk.toml");
    std::fs::write(
        &path,
        "[agent]\nurl = \"wss://a.example/\"\nconversation = \"c\"\nagent_id = \"a\"\n\n[display]\nmonitor = 0\ncursor = \"blink\"\n",
    )
    .unwrap();
    let out = Command::new(lineup())
        .args(["kiosk", "--check", "--config"])
        .arg(&path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("{}:8:10: display.cursor", path.display())),
        "{stderr}"
    );
    // Positive control: the example configuration is valid.
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/kiosk.toml");
    let out = Command::new(lineup())
        .args(["kiosk", "--check", "--config"])
        .arg(&example)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Issue 30 item 4: `--check` refuses what would end the kiosk at start, naming the key: a
/// missing token file, a token file others may read, a missing key, a negative number,
/// overlapping regions. A private token file passes (the positive control).
#[test]
fn check_refuses_everything_that_would_end_the_kiosk_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let check = |config: &Path| {
        let out = Command::new(lineup())
            .args(["kiosk", "--check", "--config"])
            .arg(config)
            .env_remove("LINEUP_AGENT_TOKEN")
            .env_remove("CREDENTIALS_DIRECTORY")
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let config = connected_toml(dir.path(), "ws://127.0.0.1:9/", "t0ken", 60);
    let token_file = dir.path().join("agent-token");
    let (code, stderr) = check(&config);
    assert_eq!(code, Some(0), "a private token file: {stderr}");

    std::fs::set_permissions(&token_file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let (code, stderr) = check(&config);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("agent.token_file: ") && stderr.contains("mode 0644"),
        "{stderr}"
    );

    std::fs::remove_file(&token_file).unwrap();
    let (code, stderr) = check(&config);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "agent.token_file: the token file {} does not exist",
            token_file.display()
        )),
        "{stderr}"
    );

    let cases = [
        (
            "[agent]\nurl = \"ws://127.0.0.1:9/\"\nconversation = \"c\"\n",
            "agent.agent_id: missing",
        ),
        (
            "[agent]\nurl = \"ws://127.0.0.1:9/\"\nconversation = \"c\"\nagent_id = \"a\"\n\
             [display]\ncursor_idle_secs = -5\n",
            ":6:20: display.cursor_idle_secs: -5 is not a non-negative integer",
        ),
        (
            "[agent]\nurl = \"ws://127.0.0.1:9/\"\nconversation = \"c\"\nagent_id = \"a\"\n\
             [[region]]\nname = \"main\"\nx = 0\ny = 0\nwidth = 100\nheight = 90\n\
             [[region]]\nname = \"status\"\nx = 0\ny = 85\nwidth = 100\nheight = 15\n",
            ":11:1: region[1] (\"status\"): overlaps region[0] (\"main\")",
        ),
    ];
    for (text, expected) in cases {
        let path = dir.path().join("case.toml");
        std::fs::write(&path, text).unwrap();
        let (code, stderr) = check(&path);
        assert_eq!(code, Some(2), "{text}: {stderr}");
        assert!(stderr.contains(expected), "{expected:?} not in {stderr}");
    }
}
