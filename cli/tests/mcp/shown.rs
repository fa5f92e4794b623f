//! `lineup mcp` showing each official example server's view in its own host, under Xvfb
//! (R-MCP-14): `--check` sees the view initialize; in show mode the calls the view makes of its
//! own accord, or after a real click (XTEST), reach the real server through the relay and come
//! back (show mode's JSON lines), and the screen read back shows what the view drew; closing the
//! view's window ends the command with success.

use std::ffi::OsString;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use lineup_tests::x11::X11;
use serde_json::Value;

use super::screen::{display, screen};
use super::{Servers, LINEUP};

/// How long a view may take to show and draw, and a call to come back.
const WITHIN: Duration = Duration::from_secs(60);

/// `f` until it gives a value, at most [`WITHIN`]; the panic names `what`.
fn wait_until<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + WITHIN;
    loop {
        if let Some(found) = f() {
            return found;
        }
        assert!(Instant::now() < deadline, "{what}: not within {WITHIN:?}");
        thread::sleep(Duration::from_millis(100));
    }
}

/// `lineup mcp <flags> -- <server>` with its data folders in a fresh home.
fn command(flags: &[&str], server: &[OsString], home: &tempfile::TempDir) -> Command {
    let mut command = Command::new(LINEUP);
    command
        .arg("mcp")
        .args(flags)
        .arg("--")
        .args(server)
        .env("XDG_DATA_HOME", home.path().join("data"))
        .env("XDG_CACHE_HOME", home.path().join("cache"))
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .env("GSETTINGS_BACKEND", "memory");
    command
}

/// A running `lineup mcp -- <server>` in show mode, and the JSON lines it printed.
struct Shown {
    child: Child,
    lines: Arc<Mutex<Vec<Value>>>,
    _home: tempfile::TempDir,
}

impl Shown {
    fn start(server: &[OsString]) -> Self {
        let home = tempfile::tempdir().unwrap();
        let mut child = command(&[], server, &home)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&lines);
        let stdout = child.stdout.take().unwrap();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let value = serde_json::from_str(&line).unwrap_or(Value::String(line));
                sink.lock().unwrap().push(value);
            }
        });
        Self {
            child,
            lines,
            _home: home,
        }
    }

    /// The first line `want` takes, if printed.
    fn printed(&self, want: impl Fn(&Value) -> bool) -> Option<Value> {
        self.lines.lock().unwrap().iter().find(|l| want(l)).cloned()
    }

    /// Clicks `window` at (`x`, `y`) for real until a line `want` takes is printed: a click
    /// that comes as the view's page settles can go unseen, so one more follows while none is.
    fn click_until(
        &self,
        x: &X11,
        window: u32,
        (left, top): (i16, i16),
        what: &str,
        want: impl Fn(&Value) -> bool,
    ) -> Value {
        let mut clicked: Option<Instant> = None;
        wait_until(what, || {
            if clicked.is_none_or(|at| at.elapsed() > Duration::from_secs(3)) {
                x.click_in(window, left, top).unwrap();
                clicked = Some(Instant::now());
            }
            self.printed(&want)
        })
    }

    /// The first line `want` takes, once printed.
    fn line(&self, what: &str, want: impl Fn(&Value) -> bool) -> Value {
        let lines = &self.lines;
        let found = || lines.lock().unwrap().iter().find(|l| want(l)).cloned();
        let deadline = Instant::now() + WITHIN;
        loop {
            if let Some(line) = found() {
                return line;
            }
            let printed = lines.lock().unwrap().clone();
            assert!(Instant::now() < deadline, "{what}: not in {printed:?}");
            thread::sleep(Duration::from_millis(100));
        }
    }

    /// The view forwarded a `tools/call` of `tool` to the server, which answered it: the
    /// request's id.
    fn called(&self, tool: &str) -> u64 {
        let asked = self.line(&format!("tools/call {tool} forwarded"), |l| {
            l["forwarded"] == "tools/call" && l["tool"] == tool
        });
        let id = asked["request_id"].as_u64().unwrap();
        let answered = self.line(&format!("answer to {tool}"), |l| l["answered"] == id);
        assert_eq!(answered["ok"], true, "{tool}: {answered}");
        id
    }

    /// The user closes the view's window: the command ends, with its status.
    fn close(mut self, x: &X11, window: u32) -> ExitStatus {
        x.request_close(window).unwrap();
        let child = &mut self.child;
        wait_until("lineup mcp to end once its window closed", || {
            child.try_wait().unwrap()
        })
    }
}

impl Drop for Shown {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The view's window (`<tool> — LineUp Surface`) once it is on screen.
fn window(x: &X11, tool: &str) -> u32 {
    let title = format!("{tool} — LineUp Surface");
    wait_until(&format!("window {title:?}"), || {
        x.find_window_by_title(&title).filter(|w| x.is_viewable(*w))
    })
}

/// What `window` shows in the rectangle at (`left`, `top`), `width` × `height`, of it.
fn read(x: &X11, window: u32, (left, top, width, height): (i16, i16, u16, u16)) -> Vec<[u8; 3]> {
    let (ox, oy) = x.window_origin(window).unwrap();
    x.region(ox + left, oy + top, width, height).unwrap()
}

/// The whole of what `window` shows.
fn whole(x: &X11, window: u32) -> Vec<[u8; 3]> {
    let (width, height) = x.window_size(window).unwrap();
    read(x, window, (0, 0, width, height))
}

/// How many pixels are of a strong colour (a chart's, a button's), not white, grey or black.
fn coloured(pixels: &[[u8; 3]]) -> usize {
    let strong = |p: &&[u8; 3]| {
        let (max, min) = (p.iter().max(), p.iter().min());
        max.zip(min).is_some_and(|(max, min)| max - min > 80)
    };
    pixels.iter().filter(strong).count()
}

/// How many pixels are dark (text).
fn dark(pixels: &[[u8; 3]]) -> usize {
    pixels.iter().filter(|p| p.iter().all(|c| *c < 120)).count()
}

/// `lineup mcp --check` ends with success: the host answered the view's `ui/initialize`. Its
/// first line, which says what it showed.
fn initializes(server: &[OsString]) -> Value {
    let home = tempfile::tempdir().unwrap();
    let out = command(&["--check"], server, &home).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "lineup mcp --check: {stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let first = stdout.lines().next().unwrap_or_default();
    serde_json::from_str(first).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

/// The server of `package`, or `None` when the cache is missing outside CI.
fn server(package: &str) -> Option<Vec<OsString>> {
    Some(Servers::locate()?.command(package))
}

/// The two basic views (`get-time`): the tool's result drawn; a real click on "Get Server
/// Time" makes the view call `get-time`, which the real server answers and the view draws;
/// "Send Message" is a `ui/message` the agent takes and answers.
fn basic(package: &str) {
    let Some(server) = server(package) else {
        return;
    };
    let _screen = screen();
    let showing = initializes(&server);
    assert_eq!(showing["resource_chunks"], 0, "inline: {showing}");
    let x = display();
    let shown = Shown::start(&server);
    let view = window(&x, "get-time");
    // The "Server Time:" value, right of its label.
    let time = (125, 68, 260, 28);
    let first = wait_until("the tool result's time drawn", || {
        let drawn = read(&x, view, time);
        (dark(&drawn) > 40).then_some(drawn)
    });
    let button = (220, 122);
    shown.click_until(&x, view, button, "a click on Get Server Time", |l| {
        l["forwarded"] == "tools/call"
    });
    shown.called("get-time");
    wait_until("the answer's time drawn over the result's", || {
        (read(&x, view, time) != first).then_some(())
    });
    let said = shown.click_until(&x, view, (220, 229), "the view's ui/message", |l| {
        l.get("ui/message").is_some()
    });
    assert!(said.to_string().contains("This is message text."), "{said}");
    assert!(shown.close(&x, view).success());
}

#[test]
fn r_mcp_14_server_basic_vanillajs_shows_calls_and_draws() {
    basic("server-basic-vanillajs");
}

#[test]
fn r_mcp_14_server_basic_react_shows_calls_and_draws() {
    basic("server-basic-react");
}

/// A view that calls the server of its own accord (`tool`) and draws the answer as a chart.
fn charts_its_own_call(package: &str, title: &str, tool: &str) {
    let Some(server) = server(package) else {
        return;
    };
    let _screen = screen();
    initializes(&server);
    let x = display();
    let shown = Shown::start(&server);
    let view = window(&x, title);
    shown.called(tool);
    wait_until("the answer drawn in colour", || {
        (coloured(&whole(&x, view)) > 5_000).then_some(())
    });
    assert!(shown.close(&x, view).success());
}

/// system-monitor polls its app-only `poll-system-stats` (visibility `["app"]`, which the
/// relay lets a view call) and charts the CPU.
#[test]
fn r_mcp_14_server_system_monitor_polls_its_app_only_tool_and_draws() {
    charts_its_own_call(
        "server-system-monitor",
        "get-system-info",
        "poll-system-stats",
    );
}

/// customer-segmentation fetches `get-customer-data` at load and plots it.
#[test]
fn r_mcp_14_server_customer_segmentation_fetches_its_data_and_draws() {
    charts_its_own_call(
        "server-customer-segmentation",
        "get-customer-data",
        "get-customer-data",
    );
}

/// budget-allocator makes no call: it draws the tool's result (a donut and sliders).
#[test]
fn r_mcp_14_server_budget_allocator_draws_its_result() {
    let Some(server) = server("server-budget-allocator") else {
        return;
    };
    let _screen = screen();
    initializes(&server);
    let x = display();
    let shown = Shown::start(&server);
    let view = window(&x, "get-budget-data");
    wait_until("the result drawn in colour", || {
        (coloured(&whole(&x, view)) > 5_000).then_some(())
    });
    let asked = shown.lines.lock().unwrap().clone();
    assert!(
        asked.iter().all(|l| l.get("forwarded").is_none()),
        "{asked:?}"
    );
    assert!(shown.close(&x, view).success());
}

/// threejs's view (about 1.12 MiB) goes by digest chunks and initializes; its scene needs
/// `unsafe-eval`, which the view's CSP refuses: it draws its own error (the listed deviation).
#[test]
fn r_mcp_14_server_threejs_initializes_through_digest_chunks() {
    let Some(server) = server("server-threejs") else {
        return;
    };
    let _screen = screen();
    let showing = initializes(&server);
    assert_eq!(showing["showing"], "show_threejs_scene", "{showing}");
    // 1.12 MiB over chunks of 384 KiB (512 KiB of base64).
    assert_eq!(showing["resource_chunks"], 3, "{showing}");
}
