//! A real `lineup kiosk` with two regions on monitor 1 of the test's own two-monitor X server
//! (issue 30, items 1 and 2): each region's Surface paints its own colour inside its own
//! rectangle only — after an open, after its web process is killed and it is reopened, and
//! after the other Surface closes — and a region with no Surface shows the standby screen's
//! background, never the toolkit's light grey. Standard components go over the Surfaces: to the
//! region naming their instance id, or to the top of the default region (R-STD-13).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr,
    missing_docs
)]

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use lineup_tests::x11::X11;
use serde_json::{json, Value};

#[path = "support/kiosk_screen.rs"]
mod kiosk_screen;
use kiosk_screen::{envelope, lines, lineup, one_screen, send, wait_for, Display, STEP};

/// The standby screen's background.
const STANDBY: [u8; 3] = [0x12, 0x34, 0x56];
/// The `main` region's Surface.
const MAIN: [u8; 3] = [0xff, 0x00, 0x00];
/// The `status` region's Surface.
const STATUS: [u8; 3] = [0x00, 0x00, 0xff];
/// Monitor 1 is 640 × 480 at (640, 0): `main` is its top 85 % (rows 0 ..= 407), `status` the
/// rest (rows 408 ..= 479). The points keep clear of the standby screen's centred text.
const MAIN_POINTS: [(i16, i16); 3] = [(700, 150), (645, 5), (1275, 400)];
const STATUS_POINTS: [(i16, i16); 3] = [(960, 444), (645, 412), (1275, 475)];

/// Two regions as the issue has them: `main` 0–85 %, `status` 85–100 % for `status-strip`.
fn two_region_toml(dir: &Path) -> PathBuf {
    let text = format!(
        "[agent]\nurl = \"ws://127.0.0.1:9/\"\nconversation = \"lobby\"\nagent_id = \"lobby-agent\"\n\n\
         [display]\nmonitor = 1\ncursor = \"hidden\"\n\n\
         [standby]\ntitle = \"Lobby\"\nbackground = \"#123456\"\n\n\
         [[region]]\nname = \"main\"\nx = 0\ny = 0\nwidth = 100\nheight = 85\ndefault = true\n\n\
         [[region]]\nname = \"status\"\nx = 0\ny = 85\nwidth = 100\nheight = 15\n\
         instances = [\"status-strip\"]\n\n\
         [host]\ndata_dir = \"{}\"\n",
        dir.join("data").display()
    );
    let path = dir.join("kiosk.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// A `lineup kiosk --stdio` on `display` with `config` and `extra` arguments, once it sent its
/// inventory.
struct Started {
    kiosk: std::process::Child,
    stdin: std::process::ChildStdin,
    rx: std::sync::mpsc::Receiver<Value>,
    x: X11,
}

fn start(display: &Display, config: &Path, extra: &[&str]) -> Started {
    let mut kiosk = Command::new(lineup())
        .args(["kiosk", "--stdio", "--config"])
        .arg(config)
        .args(extra)
        .env("DISPLAY", &display.name)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = kiosk.stdin.take().unwrap();
    let rx = lines(kiosk.stdout.take().unwrap());
    let x = X11::connect_to(Some(&display.name)).unwrap();
    wait_for(&rx, "inventory", |v| {
        v["type"] == "lineup.v1.client.inventory"
    });
    Started {
        kiosk,
        stdin,
        rx,
        x,
    }
}

/// A full-page Surface in `colour` that says `shown` after each state.
fn open(id: &str, instance: &str, colour: [u8; 3]) -> String {
    let [r, g, b] = colour;
    envelope(
        id,
        "ui.open",
        json!({
            "instance_id": instance,
            "app": {
                "id": format!("com.example.{instance}"), "name": instance, "version": "1.0.0",
                "html": "<main></main>",
                "css": format!("html,body{{margin:0;height:100%;background:#{r:02x}{g:02x}{b:02x}}}"),
                "js": "LineUpSurface.onState(s => LineUpSurface.event('shown', {n: s.n}))"
            },
            "state": {"n": 1}
        }),
    )
}

fn shown_by(instance: &'static str) -> impl Fn(&Value) -> bool {
    move |v| {
        v["type"] == "lineup.v1.ui.event"
            && v["payload"]["event"] == "shown"
            && v["payload"]["instance_id"] == instance
    }
}

/// Waits until every point of `points` shows `colour`.
fn wait_for_colour(x: &X11, points: &[(i16, i16)], colour: [u8; 3], what: &str) {
    let start = Instant::now();
    loop {
        let seen: Vec<[u8; 3]> = points.iter().map(|p| x.pixel(p.0, p.1).unwrap()).collect();
        if seen.iter().all(|c| *c == colour) {
            return;
        }
        assert!(
            start.elapsed() < STEP,
            "{what}: {points:?} show {seen:02x?}, not {colour:02x?}"
        );
        thread::sleep(Duration::from_millis(50));
    }
}

/// Every point of `points` shows `colour` now.
fn assert_colour(x: &X11, points: &[(i16, i16)], colour: [u8; 3], what: &str) {
    for p in points {
        let seen = x.pixel(p.0, p.1).unwrap();
        assert_eq!(seen, colour, "{what}: at {p:?}");
    }
}

/// The WebKit web processes descended from `root`.
fn web_processes(root: u32) -> HashSet<u32> {
    let mut parents = HashMap::new();
    let mut web = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some((head, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let ppid: u32 = rest.split_whitespace().nth(1).unwrap().parse().unwrap();
        parents.insert(pid, ppid);
        if head.contains("(WebKitWebProces") {
            web.push(pid);
        }
    }
    web.into_iter()
        .filter(|&pid| {
            let mut at = pid;
            for _ in 0..64 {
                match parents.get(&at) {
                    Some(&p) if p == root => return true,
                    Some(&p) if p > 1 => at = p,
                    _ => return false,
                }
            }
            false
        })
        .collect()
}

/// Issue 30 items 1 and 2 (R-UI-12 for the reopen): a Surface in the second region is drawn
/// there, not over the first; an empty region is the standby's background.
#[test]
fn each_region_shows_its_own_surface_and_an_empty_region_the_standby_background() {
    let _screen = one_screen();
    let display = Display::start();
    let dir = tempfile::tempdir().unwrap();
    let config = two_region_toml(dir.path());
    let Started {
        mut kiosk,
        mut stdin,
        rx,
        x,
    } = start(&display, &config, &[]);
    wait_for_colour(&x, &MAIN_POINTS, STANDBY, "the standby screen");

    // The status strip first, alone: in its own rectangle; `main` stays the standby colour
    // once the standby screen has stepped aside.
    let before = web_processes(kiosk.id());
    send(&mut stdin, &open("open-1", "status-strip", STATUS));
    wait_for(&rx, "the status strip's state", shown_by("status-strip"));
    wait_for_colour(&x, &STATUS_POINTS, STATUS, "the status strip");
    thread::sleep(Duration::from_millis(800));
    assert_colour(&x, &STATUS_POINTS, STATUS, "the status strip, settled");
    assert_colour(&x, &MAIN_POINTS, STANDBY, "the empty main region");
    let strip_processes: HashSet<u32> = web_processes(kiosk.id())
        .difference(&before)
        .copied()
        .collect();
    assert!(
        !strip_processes.is_empty(),
        "no web process came with the status strip"
    );

    // The main Surface: both in place.
    send(&mut stdin, &open("open-2", "main", MAIN));
    wait_for(&rx, "the main Surface's state", shown_by("main"));
    wait_for_colour(&x, &MAIN_POINTS, MAIN, "the main Surface");
    assert_colour(&x, &STATUS_POINTS, STATUS, "the status strip beside main");

    // The status strip's web process is killed: it is reopened in its own region, and the
    // main Surface is never covered meanwhile.
    for pid in &strip_processes {
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
    let killed = Instant::now();
    wait_for(&rx, "the reopened status strip", shown_by("status-strip"));
    let settle = Instant::now();
    while settle.elapsed() < Duration::from_millis(1500) {
        assert_colour(&x, &MAIN_POINTS[..1], MAIN, "main while the strip reopens");
        thread::sleep(Duration::from_millis(50));
    }
    wait_for_colour(&x, &STATUS_POINTS, STATUS, "the reopened status strip");
    assert_colour(&x, &MAIN_POINTS, MAIN, "main after the reopen");
    eprintln!("reopened in {:?}", killed.elapsed());

    // The main Surface closes: its region is the standby colour, the strip stays.
    send(
        &mut stdin,
        &envelope("close-2", "ui.close", json!({"instance_id": "main"})),
    );
    wait_for_colour(&x, &MAIN_POINTS, STANDBY, "the main region after the close");
    thread::sleep(Duration::from_millis(500));
    assert_colour(&x, &MAIN_POINTS, STANDBY, "the main region, settled");
    assert_colour(
        &x,
        &STATUS_POINTS,
        STATUS,
        "the status strip after main closed",
    );

    drop(stdin);
    let status = kiosk.wait().unwrap();
    assert!(status.success(), "{status}");
}

/// Whether `p` is none of the Surfaces' colours nor the standby background: a component's.
fn neither(p: [u8; 3]) -> bool {
    p != STANDBY && p != MAIN && p != STATUS
}

/// Waits until every one of `points` shows a component (see [`neither`]).
fn wait_for_component(x: &X11, points: &[(i16, i16)], what: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let seen: Vec<[u8; 3]> = points
            .iter()
            .map(|(px, py)| x.pixel(*px, *py).unwrap())
            .collect();
        if seen.iter().all(|p| neither(*p)) {
            return;
        }
        assert!(Instant::now() < deadline, "{what}: {seen:?} at {points:?}");
        thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn r_std_13_components_go_to_their_region_over_the_surfaces() {
    let _screen = one_screen();
    let display = Display::start();
    let dir = tempfile::tempdir().unwrap();
    let config = two_region_toml(dir.path());
    let Started {
        mut kiosk,
        mut stdin,
        rx,
        x,
    } = start(&display, &config, &[]);
    send(&mut stdin, &open("open-1", "main", MAIN));
    wait_for(&rx, "the main Surface's state", shown_by("main"));
    wait_for_colour(&x, &MAIN_POINTS, MAIN, "the main Surface");

    // `status-strip` is named by the status region: a component with that id goes there.
    send(
        &mut stdin,
        &envelope(
            "open-2",
            "ui.open",
            json!({"instance_id": "status-strip", "component": {"id": "status", "version": "1"},
                   "state": {"status": "in_progress", "title": "Migrating"}}),
        ),
    );
    wait_for_component(
        &x,
        &STATUS_POINTS[1..2],
        "the status component in its region",
    );
    assert_colour(
        &x,
        &MAIN_POINTS[..1],
        MAIN,
        "main beside the status component",
    );

    // Another goes to the top of the default region, over the main Surface, whose pixels stay
    // on screen below it.
    send(
        &mut stdin,
        &envelope(
            "open-3",
            "ui.open",
            json!({"instance_id": "note", "component": {"id": "text", "version": "1"},
                   "state": {"text": "Back in five minutes."}}),
        ),
    );
    wait_for_component(
        &x,
        &[(645, 5), (1270, 5)],
        "the text component at main's top",
    );
    assert_colour(&x, &[(1275, 400)], MAIN, "main under the text component");

    // The agent closes it: the Surface is uncovered, and nothing goes upstream (R-UI-5).
    send(
        &mut stdin,
        &envelope("close-3", "ui.close", json!({"instance_id": "note"})),
    );
    wait_for_colour(
        &x,
        &[(645, 5), (1270, 5)],
        MAIN,
        "main after the component closed",
    );

    drop(stdin);
    let status = kiosk.wait().unwrap();
    assert!(status.success(), "{status}");
}

/// Points inside the activity notice, which sits in the kiosk window's bottom left corner over
/// the Surfaces (here the status strip), clear of its rounded corners and its text.
const NOTICE_POINTS: [(i16, i16); 2] = [(652, 462), (700, 469)];

/// Original §5.3: a call that runs with nothing of it visible (`display_only`) shows the host's
/// notice over the Surfaces in the standby screen's colours, for a while; the Surface under it
/// is back after.
#[test]
fn a_display_only_call_shows_the_notice_in_the_standby_colours() {
    let _screen = one_screen();
    let display = Display::start();
    let dir = tempfile::tempdir().unwrap();
    let config = two_region_toml(dir.path());
    let count = dir.path().join("runs.txt");
    let count_arg = count.to_str().unwrap();
    let Started {
        mut kiosk,
        mut stdin,
        rx,
        x,
    } = start(
        &display,
        &config,
        &["--dangerous-test-capability", count_arg],
    );
    send(&mut stdin, &open("open-1", "status-strip", STATUS));
    wait_for(&rx, "the status strip's state", shown_by("status-strip"));
    wait_for_colour(&x, &NOTICE_POINTS, STATUS, "the status strip, before");

    let expires = lineup_host_core::Timestamp::from_unix_seconds(
        i64::try_from(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_secs()
                + 60,
        )
        .unwrap(),
    )
    .unwrap();
    send(
        &mut stdin,
        &envelope(
            "call-1",
            "app.call",
            json!({"call_id": "k1", "capability": "test.count", "reason": "count a visitor",
                   "expires_at": expires.to_string(), "arguments": {"tag": "k1"}}),
        ),
    );
    let answer = wait_for(&rx, "the call's answer", |v| {
        v["type"] == "lineup.v1.app.result"
    });
    assert_eq!(answer["payload"]["status"], "completed", "{answer}");
    wait_for_colour(&x, &NOTICE_POINTS, STANDBY, "the notice");
    let shown = Instant::now();
    wait_for_colour(
        &x,
        &NOTICE_POINTS,
        STATUS,
        "the status strip after the notice",
    );
    assert!(
        shown.elapsed() >= lineup_host::platform::NOTICE_DURATION - Duration::from_secs(1),
        "the notice went after {:?}",
        shown.elapsed()
    );
    drop(stdin);
    let status = kiosk.wait().unwrap();
    assert!(status.success(), "{status}");
}
