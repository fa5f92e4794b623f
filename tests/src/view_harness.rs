//! The view-level harness: one event loop and one [`Shell`], test pages served straight from a
//! [`SurfaceServer`], every [`ViewEvent`] of a view recorded in a [`Log`], and an event-loop pump
//! with a deadline.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::{Duration, Instant};

use gtk::glib;
use lineup_host::platform::{McpDrop, Placement, Shell, SurfaceView, ViewEvent};
use lineup_host::{ProbeStatus, ViewConfig};
use lineup_host_core::InlineBundle;
use lineup_surface_runtime::{DocumentOptions, SurfaceDocument, SurfaceServer, SurfaceToken};
use serde_json::Value;
use tao::event::Event;
use tao::event_loop::{ControlFlow, EventLoop};
use tao::platform::run_return::EventLoopExtRunReturn;

use crate::runner::{catch, require_display, Outcome, Runner, WAIT};

/// Runs the event loop until `cond` holds or `timeout` passes; window events go to `views`.
/// Returns whether `cond` held.
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
#[derive(Clone, Debug, Default)]
pub struct Log(Rc<RefCell<Vec<ViewEvent>>>);

impl Log {
    /// The closure to open a view with: it records into this log.
    pub fn sink(&self) -> impl Fn(ViewEvent) + 'static {
        let events = Rc::clone(&self.0);
        move |event| events.borrow_mut().push(event)
    }

    /// Everything recorded so far.
    pub fn events(&self) -> Vec<ViewEvent> {
        self.0.borrow().clone()
    }

    /// How many recorded events match `pred`.
    pub fn count(&self, pred: impl Fn(&ViewEvent) -> bool) -> usize {
        self.0.borrow().iter().filter(|e| pred(e)).count()
    }

    /// Whether a recorded event matches `pred`.
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

    /// The `data` of the first bridge event called `name`.
    pub fn first_post(&self, name: &str) -> Option<Value> {
        self.posts(name).into_iter().next()
    }

    /// Every JSON-RPC message an MCP App view's relay passed on, parsed, in order.
    pub fn mcp_messages(&self) -> Vec<Value> {
        self.0
            .borrow()
            .iter()
            .filter_map(|e| match e {
                ViewEvent::McpMessage(text) => serde_json::from_str::<Value>(text).ok(),
                _ => None,
            })
            .collect()
    }

    /// The relayed JSON-RPC messages whose `method` is `method`, in order.
    pub fn mcp_method(&self, method: &str) -> Vec<Value> {
        self.mcp_messages()
            .into_iter()
            .filter(|m| m["method"] == method)
            .collect()
    }

    /// What the relay dropped, in order.
    pub fn mcp_dropped(&self) -> Vec<McpDrop> {
        self.0
            .borrow()
            .iter()
            .filter_map(|e| match e {
                ViewEvent::McpDropped(drop) => Some(*drop),
                _ => None,
            })
            .collect()
    }

    /// Every blocked load reported, as (directive, what was blocked), in order.
    pub fn mcp_blocked(&self) -> Vec<(String, String)> {
        self.0
            .borrow()
            .iter()
            .filter_map(|e| match e {
                ViewEvent::McpBlocked { directive, blocked } => {
                    Some((directive.clone(), blocked.clone()))
                }
                _ => None,
            })
            .collect()
    }

    /// The URLs of every refused navigation, in order.
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

/// Defines `post(name, data)` for a test page's own script.
pub const PRELUDE: &str =
    "function post(name, data) { LineUpSurface.event(name, data === undefined ? {} : data); }\n";

/// A test page: the parts of an inline bundle, served with the strict CSP unless `no_csp`.
#[derive(Clone, Debug)]
pub struct Page {
    /// The body fragment.
    pub html: String,
    /// The style sheet.
    pub css: String,
    /// The script, [`PRELUDE`] first.
    pub js: String,
    /// Served without any CSP header (a positive control).
    pub no_csp: bool,
    /// The token of the document URL; a fresh one when `None`.
    pub token: Option<[u8; 16]>,
}

impl Page {
    /// A page with no margins whose script can call `post(name, data)`.
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

    /// Served at `lineup-surface://<token>/`, so that two views can share an origin.
    pub fn with_token(mut self, token: [u8; 16]) -> Self {
        self.token = Some(token);
        self
    }
}

/// One event loop, one shell whose probe has passed, and the scenarios' results.
pub struct Harness {
    /// The event loop every view of the binary lives on.
    pub event_loop: EventLoop<()>,
    /// The shell, probe passed.
    pub shell: Shell,
    next_token: Cell<u8>,
    runner: Runner,
}

impl std::fmt::Debug for Harness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Harness").finish_non_exhaustive()
    }
}

impl Harness {
    /// A shell with `config`, probe passed (or the process exits with the probe's reason).
    #[allow(clippy::print_stdout)]
    pub fn start(config: ViewConfig) -> Self {
        require_display();
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
            next_token: Cell::new(1),
            runner: Runner::new(),
        }
    }

    /// Puts a shell with `config` in place of the current one once its probe has passed, and
    /// returns the current one (to put back by assigning [`Harness::shell`]).
    pub fn swap_shell(&mut self, config: ViewConfig) -> Result<Shell, String> {
        let shell = Shell::start(&self.event_loop, config).map_err(|e| format!("shell: {e}"))?;
        pump(&mut self.event_loop, &[], Duration::from_secs(30), || {
            shell.probe_status() != ProbeStatus::Pending
        });
        if shell.probe_status() != ProbeStatus::Passed {
            return Err(format!("probe: {:?}", shell.probe_status()));
        }
        Ok(std::mem::replace(&mut self.shell, shell))
    }

    /// Pumps the loop until `cond` holds, for at most [`WAIT`]; window events go to `views`.
    pub fn wait(&mut self, views: &[&SurfaceView], cond: impl FnMut() -> bool) -> bool {
        pump(&mut self.event_loop, views, WAIT, cond)
    }

    /// Pumps the loop until `cond` holds, for at most `timeout`.
    pub fn wait_for(&mut self, timeout: Duration, cond: impl FnMut() -> bool) -> bool {
        pump(&mut self.event_loop, &[], timeout, cond)
    }

    /// Lets the loop run for `duration`, to see that something does *not* happen.
    pub fn settle(&mut self, duration: Duration) {
        pump(&mut self.event_loop, &[], duration, || false);
    }

    /// A server for `page`'s document.
    pub fn server(&self, page: &Page) -> SurfaceServer {
        let bundle = match InlineBundle::new(page.html.clone(), page.css.clone(), page.js.clone()) {
            Ok(bundle) => bundle,
            Err(e) => panic!("test bundle is invalid: {e}"),
        };
        let options = if page.no_csp {
            DocumentOptions::default().dangerous().without_csp()
        } else {
            DocumentOptions::default()
        };
        let document = SurfaceDocument::assemble(&bundle, &options);
        let token = page.token.unwrap_or_else(|| self.next_token());
        SurfaceServer::new(SurfaceToken::from_random_bytes(token), document)
    }

    /// A token no view of this harness had.
    fn next_token(&self) -> [u8; 16] {
        self.next_token.set(self.next_token.get().wrapping_add(1));
        [self.next_token.get(); 16]
    }

    /// Opens an MCP App view of `view_html` ([`SurfaceDocument::mcp_app`], the strict policy)
    /// in a window of its own with [`Shell::open_mcp_app`], and waits for its document to load.
    pub fn open_mcp(&mut self, view_html: &str) -> Result<(SurfaceView, Log), String> {
        let document = SurfaceDocument::mcp_app(view_html, &DocumentOptions::default());
        let token = SurfaceToken::from_random_bytes(self.next_token());
        let server = SurfaceServer::new(token, document);
        let log = Log::default();
        let placement = Placement::Window {
            title: "lineup mcp test".to_owned(),
            width: 400,
            height: 300,
        };
        let view = self
            .shell
            .open_mcp_app(&self.event_loop, server, placement, log.sink())
            .map_err(|e| format!("open_mcp_app failed: {e}"))?;
        if !self.wait(&[], || log.has(|e| *e == ViewEvent::LoadFinished)) {
            return Err(format!(
                "the MCP App view did not load; events: {:?}",
                log.events()
            ));
        }
        Ok((view, log))
    }

    /// Opens `page` in a window of its own and waits for it to load and send `ready`.
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

    /// Opens `page` at `placement` and waits for it to load and send `ready`.
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
        if !loaded {
            return Err(format!(
                "the page did not load and send ready; events: {:?}",
                log.events()
            ));
        }
        Ok((view, log))
    }

    /// Runs one scenario and records its outcome; a panic counts as a failure.
    pub fn run(&mut self, name: &str, scenario: impl FnOnce(&mut Harness) -> Outcome) {
        if !self.runner.select(name) {
            return;
        }
        let outcome = catch(|| scenario(self));
        self.runner.record(name, outcome);
    }

    /// Prints the summary and exits, non-zero if a scenario failed.
    pub fn finish(self) -> ! {
        self.runner.finish()
    }
}
