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

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use lineup_tests::x11::X11;
use std::os::unix::fs::PermissionsExt as _;

#[path = "support/agent.rs"]
mod agent;
use agent::AgentServer;
use serde_json::{json, Value};

/// How long any one step may take: a debug WebKitGTK on a busy machine starts slowly.
const STEP: Duration = Duration::from_secs(60);
/// The standby screen's background in the test's kiosk.toml.
const STANDBY: [u8; 3] = [0x12, 0x34, 0x56];
/// The Surface's page colour.
const SURFACE: [u8; 3] = [0x00, 0xff, 0x00];
/// Monitor 1 of the test display (DUMMY1): the right half of a 1280 × 480 screen.
const RIGHT: (i16, i16, u16, u16) = (640, 0, 640, 480);

/// The test's own X server, ended when dropped.
///
/// Two monitors as GTK 3 sees them need RandR outputs (GDK reads monitors from RandR only; an
/// `Xvfb +xinerama` puts every screen at 0,0 and has one output). So this is Xorg with the
/// `dummy` video driver, whose sixteen virtual outputs `xrandr` turns on: DUMMY0 at 0,0 and
/// DUMMY1 right of it, 640 × 480 each, as two real heads report themselves.
struct Display {
    name: String,
    server: Child,
    _dir: tempfile::TempDir,
}

const XORG_CONF: &str = r#"Section "ServerFlags"
    Option "DontVTSwitch" "true"
    Option "AllowMouseOpenFail" "true"
    Option "AutoAddDevices" "false"
EndSection
Section "Device"
    Identifier "dummy"
    Driver "dummy"
    VideoRam 65536
EndSection
Section "Monitor"
    Identifier "monitor"
    HorizSync 5.0-1000.0
    VertRefresh 5.0-200.0
    Modeline "640x480" 25.175 640 656 752 800 480 490 492 525 -hsync -vsync
EndSection
Section "Screen"
    Identifier "screen"
    Device "dummy"
    Monitor "monitor"
    DefaultDepth 24
    SubSection "Display"
        Depth 24
        Virtual 1280 480
    EndSubSection
EndSection
"#;

impl Display {
    /// Starts Xorg on the first free display number from 70 and turns on its second output.
    fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let conf = dir.path().join("xorg.conf");
        std::fs::write(&conf, XORG_CONF).unwrap();
        for number in 70..100 {
            if display_taken(number) {
                continue;
            }
            let name = format!(":{number}");
            let Ok(mut server) = Command::new("Xorg")
                .arg(&name)
                .arg("-config")
                .arg(&conf)
                .arg("-logfile")
                .arg(dir.path().join("Xorg.log"))
                .args(["-noreset", "-nolisten", "tcp", "-novtswitch", "-sharevts"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
            else {
                panic!(
                    "cannot run Xorg: scripts/setup.sh installs it (xserver-xorg-core, \
                     xserver-xorg-video-dummy, x11-xserver-utils)"
                );
            };
            let deadline = Instant::now() + Duration::from_secs(20);
            while Instant::now() < deadline {
                if let Ok(Some(status)) = server.try_wait() {
                    let log =
                        std::fs::read_to_string(dir.path().join("Xorg.log")).unwrap_or_default();
                    let errors: Vec<&str> = log.lines().filter(|l| l.contains("(EE)")).collect();
                    panic!(
                        "Xorg {name} ended ({status}); it runs as root here (CI) or with \
                         Xwrapper.config's allowed_users=anybody: {errors:?}"
                    );
                }
                if X11::connect_to(Some(&name)).is_ok() {
                    let xrandr = |args: &[&str]| -> String {
                        let out = Command::new("xrandr")
                            .args(args)
                            .env("DISPLAY", &name)
                            .output()
                            .unwrap_or_else(|e| panic!("xrandr: {e}"));
                        assert!(
                            out.status.success(),
                            "xrandr {args:?}: {}",
                            String::from_utf8_lossy(&out.stderr)
                        );
                        String::from_utf8_lossy(&out.stdout).into_owned()
                    };
                    xrandr(&["--addmode", "DUMMY1", "640x480"]);
                    xrandr(&[
                        "--fb",
                        "1280x480",
                        "--output",
                        "DUMMY1",
                        "--mode",
                        "640x480",
                        "--right-of",
                        "DUMMY0",
                    ]);
                    let monitors = xrandr(&["--listmonitors"]);
                    assert!(monitors.starts_with("Monitors: 2"), "{monitors}");
                    eprintln!("{monitors}");
                    return Self {
                        name,
                        server,
                        _dir: dir,
                    };
                }
                thread::sleep(Duration::from_millis(50));
            }
            let _ = server.kill();
            let _ = server.wait();
        }
        panic!("no free X display number in 70..100");
    }
}

/// Whether display `number` is in use: its lock file names a running process. A lock left by a
/// server that is gone is stale, and Xorg replaces it.
fn display_taken(number: u32) -> bool {
    match std::fs::read_to_string(format!("/tmp/.X{number}-lock")) {
        Err(_) => false,
        Ok(pid) => pid
            .trim()
            .parse::<u32>()
            .map_or(true, |pid| Path::new(&format!("/proc/{pid}")).exists()),
    }
}

impl Drop for Display {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
        // A killed Xorg leaves its lock file and socket behind; the display was this test's.
        let number = self.name.trim_start_matches(':');
        let _ = std::fs::remove_file(format!("/tmp/.X{number}-lock"));
        let _ = std::fs::remove_file(format!("/tmp/.X11-unix/X{number}"));
    }
}

/// One kiosk and its X server at a time: two cores, and a display number picked per test.
static SCREEN: Mutex<()> = Mutex::new(());

fn one_screen() -> std::sync::MutexGuard<'static, ()> {
    SCREEN.lock().unwrap_or_else(|p| p.into_inner())
}

fn lineup() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_lineup"))
}

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

fn envelope(id: &str, kind: &str, payload: Value) -> String {
    json!({
        "v": 1, "id": id, "type": format!("lineup.v1.{kind}"),
        "conversation_id": "lobby",
        "sender": {"kind": "agent", "id": "lobby-agent"},
        "payload": payload,
    })
    .to_string()
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

/// The kiosk's stdout, one parsed envelope per line.
fn lines(stdout: std::process::ChildStdout) -> Receiver<Value> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Ok(v) = serde_json::from_str::<Value>(&line) {
                if tx.send(v).is_err() {
                    break;
                }
            }
        }
    });
    rx
}

fn wait_for(rx: &Receiver<Value>, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + STEP;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(v) if pred(&v) => return v,
            Ok(_) => {}
            Err(e) => panic!("{what}: {e}"),
        }
    }
}

fn is_event(name: &'static str) -> impl Fn(&Value) -> bool {
    move |v| v["type"] == "lineup.v1.ui.event" && v["payload"]["event"] == name
}

fn send(stdin: &mut ChildStdin, line: &str) {
    writeln!(stdin, "{line}").unwrap();
    stdin.flush().unwrap();
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

/// Kills the kiosk (which never ends on its own) when the test ends, passed or not.
struct KillOnDrop<'a>(&'a mut Child);

impl Drop for KillOnDrop<'_> {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
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
