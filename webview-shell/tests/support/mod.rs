//! Shared pieces of the real-webview test binaries: a scenario runner, an event-loop pump with
//! `wait_until`, a recording event sink, test pages, and the `/proc` and X11 helpers.
#![allow(
    dead_code,
    unreachable_pub,
    missing_docs,
    clippy::print_stdout,
    clippy::unwrap_used
)]

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;
use std::time::{Duration, Instant};

use gtk::glib;
use lineup_host_core::InlineBundle;
use lineup_surface_runtime::{DocumentOptions, SurfaceDocument, SurfaceServer, SurfaceToken};
use lineup_webview_shell::{Placement, ProbeStatus, Shell, SurfaceView, ViewConfig, ViewEvent};
use serde_json::Value;
use tao::event::Event;
use tao::event_loop::{ControlFlow, EventLoop};
use tao::platform::run_return::EventLoopExtRunReturn;

pub type Outcome = Result<(), String>;

/// Returns early from a scenario with a message when `cond` is false.
macro_rules! ensure {
    ($cond:expr, $($msg:tt)+) => {
        if !$cond {
            return Err(format!($($msg)+));
        }
    };
}

/// The default time a scenario waits for something the page should do.
pub const WAIT: Duration = Duration::from_secs(10);

/// Runs the event loop until `cond` holds or `timeout` passes; window events go to `views`.
pub fn pump(
    event_loop: &mut EventLoop<()>,
    views: &[&SurfaceView],
    timeout: Duration,
    mut cond: impl FnMut() -> bool,
) -> bool {
    if cond() {
        return true;
    }
    let deadline = Instant::now() + timeout;
    let mut met = false;
    event_loop.run_return(|event, _, control_flow| {
        if let Event::WindowEvent {
            window_id, event, ..
        } = &event
        {
            for view in views {
                view.handle_window_event(*window_id, event);
            }
        }
        let now = Instant::now();
        if cond() {
            met = true;
            *control_flow = ControlFlow::Exit;
        } else if now >= deadline {
            *control_flow = ControlFlow::Exit;
        } else {
            *control_flow = ControlFlow::WaitUntil(now + Duration::from_millis(10));
        }
    });
    met
}

/// Every event one view reported, in order.
#[derive(Clone, Default)]
pub struct Log(Rc<RefCell<Vec<ViewEvent>>>);

impl Log {
    pub fn sink(&self) -> impl Fn(ViewEvent) + 'static {
        let events = Rc::clone(&self.0);
        move |event| events.borrow_mut().push(event)
    }

    pub fn events(&self) -> Vec<ViewEvent> {
        self.0.borrow().clone()
    }

    pub fn count(&self, pred: impl Fn(&ViewEvent) -> bool) -> usize {
        self.0.borrow().iter().filter(|e| pred(e)).count()
    }

    pub fn has(&self, pred: impl Fn(&ViewEvent) -> bool) -> bool {
        self.count(pred) > 0
    }

    /// The `data` of every bridge event called `name`, in order (messages posted as
    /// `{"namespace":"lineup.surface.v1","type":"event","event":name,"data":…}`).
    pub fn posts(&self, name: &str) -> Vec<Value> {
        self.0
            .borrow()
            .iter()
            .filter_map(|e| match e {
                ViewEvent::Ipc(body) => serde_json::from_str::<Value>(body).ok(),
                _ => None,
            })
            .filter(|m| m["type"] == "event" && m["event"] == name)
            .map(|m| m["data"].clone())
            .collect()
    }

    /// Whether the bridge sent `{"type":"ready"}`.
    pub fn ready(&self) -> bool {
        self.0.borrow().iter().any(|e| match e {
            ViewEvent::Ipc(body) => serde_json::from_str::<Value>(body)
                .is_ok_and(|m| m["namespace"] == "lineup.surface.v1" && m["type"] == "ready"),
            _ => false,
        })
    }

    pub fn first_post(&self, name: &str) -> Option<Value> {
        self.posts(name).into_iter().next()
    }

    pub fn refused_navigations(&self) -> Vec<String> {
        self.0
            .borrow()
            .iter()
            .filter_map(|e| match e {
                ViewEvent::NavigationRefused(uri) => Some(uri.clone()),
                _ => None,
            })
            .collect()
    }
}

/// A test page: the parts of an inline bundle, served with the strict CSP unless `no_csp`.
pub struct Page {
    pub html: String,
    pub css: String,
    pub js: String,
    pub no_csp: bool,
    pub token: Option<[u8; 16]>,
}

/// Defines `post(name, data)` for the page's own script.
pub const PRELUDE: &str =
    "function post(name, data) { LineUpSurface.event(name, data === undefined ? {} : data); }\n";

impl Page {
    pub fn new(html: &str, js: &str) -> Self {
        Self {
            html: html.to_owned(),
            css: "html, body { margin: 0; padding: 0; }".to_owned(),
            js: format!("{PRELUDE}{js}"),
            no_csp: false,
            token: None,
        }
    }

    /// The positive-control variant: served without any CSP header.
    pub fn without_csp(mut self) -> Self {
        self.no_csp = true;
        self
    }

    pub fn with_token(mut self, token: [u8; 16]) -> Self {
        self.token = Some(token);
        self
    }
}

/// One event loop, one shell whose probe has passed, and the scenarios' results.
pub struct Harness {
    pub event_loop: EventLoop<()>,
    pub shell: Shell,
    next_token: std::cell::Cell<u8>,
    results: Vec<(String, Outcome, Duration)>,
}

impl Harness {
    /// A shell with `config`, probe passed (or the process exits with the probe's reason).
    pub fn start(config: ViewConfig) -> Self {
        if std::env::var_os("DISPLAY").is_none() && std::env::var_os("WAYLAND_DISPLAY").is_none() {
            println!(
                "these tests drive real webviews and need a display: run them under `xvfb-run -a`"
            );
            std::process::exit(1);
        }
        let mut event_loop = EventLoop::new();
        // Wakes the loop so that `pump` checks its condition even when nothing else happens.
        glib::timeout_add_local(Duration::from_millis(10), || glib::ControlFlow::Continue);
        let shell = match Shell::start(&event_loop, config) {
            Ok(shell) => shell,
            Err(e) => {
                println!("shell did not start: {e}");
                std::process::exit(1);
            }
        };
        pump(&mut event_loop, &[], Duration::from_secs(30), || {
            shell.probe_status() != ProbeStatus::Pending
        });
        if let ProbeStatus::Failed(reason) = shell.probe_status() {
            println!("isolation probe failed: {reason}");
            std::process::exit(1);
        }
        Self {
            event_loop,
            shell,
            next_token: std::cell::Cell::new(1),
            results: Vec::new(),
        }
    }

    pub fn wait(&mut self, views: &[&SurfaceView], cond: impl FnMut() -> bool) -> bool {
        pump(&mut self.event_loop, views, WAIT, cond)
    }

    pub fn wait_for(&mut self, timeout: Duration, cond: impl FnMut() -> bool) -> bool {
        pump(&mut self.event_loop, &[], timeout, cond)
    }

    /// Lets the loop run for `duration`, to see that something does *not* happen.
    pub fn settle(&mut self, duration: Duration) {
        pump(&mut self.event_loop, &[], duration, || false);
    }

    pub fn server(&self, page: &Page) -> SurfaceServer {
        let bundle = InlineBundle::new(page.html.clone(), page.css.clone(), page.js.clone())
            .expect("test bundle is valid");
        let options = if page.no_csp {
            DocumentOptions::default().dangerous().without_csp()
        } else {
            DocumentOptions::default()
        };
        let document = SurfaceDocument::assemble(&bundle, &options);
        let token = page.token.unwrap_or_else(|| {
            self.next_token.set(self.next_token.get().wrapping_add(1));
            [self.next_token.get(); 16]
        });
        SurfaceServer::new(SurfaceToken::from_random_bytes(token), document)
    }

    /// Opens `page` in a window of its own and waits for it to finish loading.
    pub fn open(&mut self, page: &Page) -> Result<(SurfaceView, Log), String> {
        self.open_at(
            page,
            Placement::Window {
                title: "lineup test".to_owned(),
                width: 400,
                height: 300,
            },
        )
    }

    pub fn open_at(
        &mut self,
        page: &Page,
        placement: Placement<'_>,
    ) -> Result<(SurfaceView, Log), String> {
        let server = self.server(page);
        let log = Log::default();
        let view = self
            .shell
            .open(&self.event_loop, server, placement, log.sink())
            .map_err(|e| format!("open failed: {e}"))?;
        let loaded = self.wait(&[], || {
            log.has(|e| *e == ViewEvent::LoadFinished) && log.ready()
        });
        ensure!(
            loaded,
            "the page did not load and send ready; events: {:?}",
            log.events()
        );
        Ok((view, log))
    }

    /// Runs one scenario and records its outcome; a panic counts as a failure.
    pub fn run(&mut self, name: &str, scenario: impl FnOnce(&mut Harness) -> Outcome) {
        let started = Instant::now();
        let outcome = catch_unwind(AssertUnwindSafe(|| scenario(self)))
            .unwrap_or_else(|_| Err("panicked".to_owned()));
        let elapsed = started.elapsed();
        match &outcome {
            Ok(()) => println!("test {name} ... ok ({:.1}s)", elapsed.as_secs_f64()),
            Err(e) => println!(
                "test {name} ... FAILED ({:.1}s)\n    {e}",
                elapsed.as_secs_f64()
            ),
        }
        self.results.push((name.to_owned(), outcome, elapsed));
    }

    /// Prints the summary and exits non-zero if a scenario failed.
    pub fn finish(self) -> ! {
        let failed: Vec<&String> = self
            .results
            .iter()
            .filter(|(_, o, _)| o.is_err())
            .map(|(n, _, _)| n)
            .collect();
        println!(
            "\ntest result: {}. {} passed; {} failed",
            if failed.is_empty() { "ok" } else { "FAILED" },
            self.results.len() - failed.len(),
            failed.len()
        );
        for name in &failed {
            println!("    failed: {name}");
        }
        std::process::exit(i32::from(!failed.is_empty()));
    }
}

/// Points HOME and the XDG directories at a fresh directory, so that nothing the run writes
/// lands in the real ones; call first thing in `main`, before any thread starts.
pub fn private_home(name: &str) -> std::path::PathBuf {
    let root = std::env::temp_dir().join(format!("lineup-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    for sub in [
        "home",
        "data",
        "cache",
        "config",
        "runtime",
        "home/Downloads",
    ] {
        std::fs::create_dir_all(root.join(sub)).expect("temp dir");
    }
    std::env::set_var("HOME", root.join("home"));
    std::env::set_var("XDG_DATA_HOME", root.join("data"));
    std::env::set_var("XDG_CACHE_HOME", root.join("cache"));
    std::env::set_var("XDG_CONFIG_HOME", root.join("config"));
    std::env::set_var("XDG_DOWNLOAD_DIR", root.join("home/Downloads"));
    root
}

/// Every file under `dir` whose bytes contain `needle`.
pub fn files_containing(dir: &std::path::Path, needle: &[u8]) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(path) = stack.pop() {
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            if let Ok(entries) = std::fs::read_dir(&path) {
                stack.extend(entries.flatten().map(|e| e.path()));
            }
        } else if meta.is_file() {
            if let Ok(bytes) = std::fs::read(&path) {
                if bytes.windows(needle.len()).any(|w| w == needle) {
                    found.push(path);
                }
            }
        }
    }
    found
}

/// The WebKit web processes descended from this process.
pub fn web_processes() -> HashSet<u32> {
    let mut parent: HashMap<u32, u32> = HashMap::new();
    let mut web = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
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
        let Some(ppid) = rest.split_whitespace().nth(1).and_then(|s| s.parse().ok()) else {
            continue;
        };
        parent.insert(pid, ppid);
        if head.contains("(WebKitWebProces") {
            web.push(pid);
        }
    }
    let me = std::process::id();
    web.into_iter()
        .filter(|pid| {
            let mut p = *pid;
            for _ in 0..64 {
                match parent.get(&p) {
                    Some(&pp) if pp == me => return true,
                    Some(&pp) if pp > 1 => p = pp,
                    _ => return false,
                }
            }
            false
        })
        .collect()
}

/// Sends SIGKILL to `pid`.
pub fn kill(pid: u32) -> Outcome {
    let status = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .map_err(|e| format!("cannot run kill: {e}"))?;
    ensure!(status.success(), "kill -9 {pid} failed");
    Ok(())
}

/// The mount namespace of `pid`.
pub fn mount_namespace(pid: &str) -> Result<std::path::PathBuf, String> {
    std::fs::read_link(format!("/proc/{pid}/ns/mnt")).map_err(|e| format!("ns of {pid}: {e}"))
}
