//! What the kiosk tests share: an X server of their own with two monitors, one kiosk at a
//! time, the `lineup` binary, and the agent's side of `--stdio`.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant};

use lineup_tests::x11::X11;
use serde_json::{json, Value};

/// How long any one step may take: a debug WebKitGTK on a busy machine starts slowly.
pub(crate) const STEP: Duration = Duration::from_secs(60);

/// The test's own X server, ended when dropped.
///
/// Two monitors as GTK 3 sees them need RandR outputs (GDK reads monitors from RandR only; an
/// `Xvfb +xinerama` puts every screen at 0,0 and has one output). So this is Xorg with the
/// `dummy` video driver, whose sixteen virtual outputs `xrandr` turns on: DUMMY0 at 0,0 and
/// DUMMY1 right of it, 640 × 480 each, as two real heads report themselves.
pub(crate) struct Display {
    pub(crate) name: String,
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
    pub(crate) fn start() -> Self {
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

pub(crate) fn one_screen() -> std::sync::MutexGuard<'static, ()> {
    SCREEN.lock().unwrap_or_else(|p| p.into_inner())
}

pub(crate) fn lineup() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_lineup"))
}

pub(crate) fn envelope(id: &str, kind: &str, payload: Value) -> String {
    json!({
        "v": 1, "id": id, "type": format!("lineup.v1.{kind}"),
        "conversation_id": "lobby",
        "sender": {"kind": "agent", "id": "lobby-agent"},
        "payload": payload,
    })
    .to_string()
}

/// The kiosk's stdout, one parsed envelope per line.
pub(crate) fn lines(stdout: std::process::ChildStdout) -> Receiver<Value> {
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

pub(crate) fn wait_for(rx: &Receiver<Value>, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
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

pub(crate) fn is_event(name: &'static str) -> impl Fn(&Value) -> bool {
    move |v| v["type"] == "lineup.v1.ui.event" && v["payload"]["event"] == name
}

pub(crate) fn send(stdin: &mut ChildStdin, line: &str) {
    writeln!(stdin, "{line}").unwrap();
    stdin.flush().unwrap();
}

/// Kills the kiosk (which never ends on its own) when the test ends, passed or not.
pub(crate) struct KillOnDrop<'a>(pub(crate) &'a mut Child);

impl Drop for KillOnDrop<'_> {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
