//! The Host-level harness: one event loop shared by the scenarios of a binary, a fresh
//! [`Host`] per scenario built by [`HostBuilder`], a [`Recorder`] that is both its delegate and
//! its outbound callback, an [`Agent`] that writes full lineup.v1 envelopes, and
//! [`HostHarness::wait_until`], which pumps the loop through [`Host::handle_event`].

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gtk::glib;
use lineup_host::{
    event_loop, Host, HostBuilder, HostDelegate, HostEvent, HostHandle, ProbeStatus, Refusal,
};
use lineup_host_core::{CloseReason, Diagnostic, InlineApp, Message, ProtocolError, SurfaceKey};
use serde_json::{json, Value};
use tao::event_loop::{ControlFlow, EventLoop};
use tao::platform::run_return::EventLoopExtRunReturn;

use crate::runner::{catch, require_display, Outcome, Runner, WAIT};

mod agent;

pub use agent::{open_network, test_app, weather_app, Agent};

/// The namespace of upstream bridge messages (R-UI-6).
pub const BRIDGE_NAMESPACE: &str = "lineup.surface.v1";

/// Defines `post(name, data)` for a test Surface's own script: `LineUpSurface.event(...)`.
pub const PRELUDE: &str =
    "function post(name, data) { LineUpSurface.event(name, data === undefined ? {} : data); }\n";

/// One notification the host gave its delegate.
#[derive(Clone, Debug, PartialEq)]
pub enum Note {
    /// `notify_outbound`, the message as JSON.
    Outbound(Value),
    /// `notify_opened`.
    Opened(SurfaceKey),
    /// `notify_ready`.
    Ready(SurfaceKey),
    /// `notify_reloaded`.
    Reloaded(SurfaceKey),
    /// `notify_closed`.
    Closed(SurfaceKey, CloseReason),
    /// `notify_crashed`.
    Crashed(SurfaceKey),
    /// `notify_unresponsive` (R-UI-12).
    Unresponsive(SurfaceKey),
    /// `notify_rejected`: the error and the line number.
    Rejected(ProtocolError, Option<u64>),
    /// `notify_dropped`.
    Dropped(SurfaceKey, ProtocolError),
    /// `notify_refused`.
    Refused(SurfaceKey, Refusal),
    /// `notify_probe_failed`.
    ProbeFailed(String),
    /// `notify_diagnostic` (R-DIAG-1).
    Diagnostic(SurfaceKey, Diagnostic),
    /// `notify_resize`, with the clamped height.
    Resize(SurfaceKey, u32),
}

/// Records everything a host reports: its delegate notifications in order, and separately what
/// its outbound callback received. Clones share the record.
#[derive(Clone, Debug, Default)]
pub struct Recorder {
    notes: Rc<RefCell<Vec<Note>>>,
    sent: Rc<RefCell<Vec<Value>>>,
    /// The `data` of outbound `ui.event`s by instance and event name, so that a wait condition
    /// stays cheap while a page floods the bridge.
    by_event: Rc<RefCell<ByEvent>>,
}

/// The `data` of outbound `ui.event`s, keyed by instance id and event name.
#[derive(Debug, Default)]
struct ByEvent(HashMap<(String, String), Vec<Value>>);

fn to_value(message: &Message) -> Value {
    serde_json::from_str(&message.to_json()).unwrap_or(Value::Null)
}

impl Recorder {
    /// The outbound callback to give [`HostBuilder::on_outbound`].
    pub fn on_outbound(&self) -> impl FnMut(&Message) + 'static {
        let sent = Rc::clone(&self.sent);
        let by_event = Rc::clone(&self.by_event);
        move |message| {
            let value = to_value(message);
            if value["type"] == "lineup.v1.ui.event" {
                let payload = &value["payload"];
                let key = (
                    payload["instance_id"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned(),
                    payload["event"].as_str().unwrap_or_default().to_owned(),
                );
                by_event
                    .borrow_mut()
                    .0
                    .entry(key)
                    .or_default()
                    .push(payload["data"].clone());
            }
            sent.borrow_mut().push(value);
        }
    }

    /// Every delegate notification so far, in order.
    pub fn notes(&self) -> Vec<Note> {
        self.notes.borrow().clone()
    }

    /// How many notifications there are so far: a mark for [`Recorder::notes_since`].
    pub fn mark(&self) -> usize {
        self.notes.borrow().len()
    }

    /// The notifications after `mark`.
    pub fn notes_since(&self, mark: usize) -> Vec<Note> {
        self.notes.borrow().iter().skip(mark).cloned().collect()
    }

    /// Every message the outbound callback received, as JSON, in order.
    pub fn sent(&self) -> Vec<Value> {
        self.sent.borrow().clone()
    }

    /// Every message `notify_outbound` received, as JSON, in order.
    pub fn notified_outbound(&self) -> Vec<Value> {
        self.notes
            .borrow()
            .iter()
            .filter_map(|n| match n {
                Note::Outbound(v) => Some(v.clone()),
                _ => None,
            })
            .collect()
    }

    /// How many messages the outbound callback received so far.
    pub fn sent_count(&self) -> usize {
        self.sent.borrow().len()
    }

    /// The payloads of every outbound `lineup.v1.ui.event`, in order.
    pub fn ui_events(&self) -> Vec<Value> {
        self.ui_events_where(|_| true)
    }

    /// The payloads of the outbound `ui.event`s for which `pred` holds, in order.
    pub fn ui_events_where(&self, pred: impl Fn(&Value) -> bool) -> Vec<Value> {
        self.sent
            .borrow()
            .iter()
            .filter(|m| m["type"] == "lineup.v1.ui.event")
            .map(|m| &m["payload"])
            .filter(|p| pred(p))
            .cloned()
            .collect()
    }

    /// The `data` of every outbound `ui.event` of `instance` named `event`, in order.
    pub fn data(&self, instance: &str, event: &str) -> Vec<Value> {
        self.by_event
            .borrow()
            .0
            .get(&(instance.to_owned(), event.to_owned()))
            .cloned()
            .unwrap_or_default()
    }

    /// How many outbound `ui.event`s of `instance` are named `event`.
    pub fn count(&self, instance: &str, event: &str) -> usize {
        self.by_event
            .borrow()
            .0
            .get(&(instance.to_owned(), event.to_owned()))
            .map_or(0, Vec::len)
    }

    /// The payloads of outbound `ui.event`s named `event`, of any instance.
    pub fn events_named(&self, event: &str) -> Vec<Value> {
        self.ui_events_where(|p| p["event"] == event)
    }

    /// The key of the last Surface of `instance` that was opened.
    pub fn key(&self, instance: &str) -> Option<SurfaceKey> {
        self.notes.borrow().iter().rev().find_map(|n| match n {
            Note::Opened(k) if k.instance.as_str() == instance => Some(k.clone()),
            _ => None,
        })
    }

    /// Whether Surface `key` was reported ready.
    pub fn is_ready(&self, key: &SurfaceKey) -> bool {
        self.notes
            .borrow()
            .iter()
            .any(|n| matches!(n, Note::Ready(k) if k == key))
    }

    /// The reasons Surface `key` was reported closed with, in order.
    pub fn closed(&self, key: &SurfaceKey) -> Vec<CloseReason> {
        self.notes
            .borrow()
            .iter()
            .filter_map(|n| match n {
                Note::Closed(k, r) if k == key => Some(r.clone()),
                _ => None,
            })
            .collect()
    }

    /// How many times Surface `key` was reported crashed.
    pub fn crashed(&self, key: &SurfaceKey) -> usize {
        self.notes
            .borrow()
            .iter()
            .filter(|n| matches!(n, Note::Crashed(k) if k == key))
            .count()
    }

    /// How many times Surface `key` was reported unresponsive by the hang watchdog (R-UI-12).
    pub fn unresponsive(&self, key: &SurfaceKey) -> usize {
        self.notes
            .borrow()
            .iter()
            .filter(|n| matches!(n, Note::Unresponsive(k) if k == key))
            .count()
    }

    /// Every Surface of `instance` reported opened, in order: one key per generation.
    pub fn generations(&self, instance: &str) -> Vec<SurfaceKey> {
        self.notes
            .borrow()
            .iter()
            .filter_map(|n| match n {
                Note::Opened(k) if k.instance.as_str() == instance => Some(k.clone()),
                _ => None,
            })
            .collect()
    }

    /// What the webview of Surface `key` refused, in order.
    pub fn refusals(&self, key: &SurfaceKey) -> Vec<Refusal> {
        self.notes
            .borrow()
            .iter()
            .filter_map(|n| match n {
                Note::Refused(k, r) if k == key => Some(r.clone()),
                _ => None,
            })
            .collect()
    }

    /// The messages of Surface `key` that were dropped, in order.
    pub fn dropped(&self, key: &SurfaceKey) -> Vec<ProtocolError> {
        self.notes
            .borrow()
            .iter()
            .filter_map(|n| match n {
                Note::Dropped(k, e) if k == key => Some(e.clone()),
                _ => None,
            })
            .collect()
    }

    /// The diagnostics of Surface `key`, in order (R-DIAG-1).
    pub fn diagnostics(&self, key: &SurfaceKey) -> Vec<Diagnostic> {
        self.notes
            .borrow()
            .iter()
            .filter_map(|n| match n {
                Note::Diagnostic(k, d) if k == key => Some(d.clone()),
                _ => None,
            })
            .collect()
    }

    /// The heights `notify_resize` reported for Surface `key`, in order.
    pub fn resizes(&self, key: &SurfaceKey) -> Vec<u32> {
        self.notes
            .borrow()
            .iter()
            .filter_map(|n| match n {
                Note::Resize(k, h) if k == key => Some(*h),
                _ => None,
            })
            .collect()
    }

    fn note(&self, note: Note) {
        self.notes.borrow_mut().push(note);
    }
}

/// The payloads of the `lineup.v1.ui.event` messages among `messages`.
pub fn ui_events_in(messages: &[Value]) -> Vec<Value> {
    messages
        .iter()
        .filter(|m| m["type"] == "lineup.v1.ui.event")
        .map(|m| m["payload"].clone())
        .collect()
}

impl HostDelegate for Recorder {
    fn notify_outbound(&mut self, message: &Message) {
        self.note(Note::Outbound(to_value(message)));
    }
    fn notify_opened(&mut self, key: &SurfaceKey, _app: &InlineApp) {
        self.note(Note::Opened(key.clone()));
    }
    fn notify_ready(&mut self, key: &SurfaceKey) {
        self.note(Note::Ready(key.clone()));
    }
    fn notify_closed(&mut self, key: &SurfaceKey, reason: &CloseReason) {
        self.note(Note::Closed(key.clone(), reason.clone()));
    }
    fn notify_reloaded(&mut self, key: &SurfaceKey) {
        self.note(Note::Reloaded(key.clone()));
    }
    fn notify_crashed(&mut self, key: &SurfaceKey) {
        self.note(Note::Crashed(key.clone()));
    }
    fn notify_unresponsive(&mut self, key: &SurfaceKey) {
        self.note(Note::Unresponsive(key.clone()));
    }
    fn notify_rejected(&mut self, error: &ProtocolError, line: Option<u64>) {
        self.note(Note::Rejected(error.clone(), line));
    }
    fn notify_dropped(&mut self, key: &SurfaceKey, error: &ProtocolError) {
        self.note(Note::Dropped(key.clone(), error.clone()));
    }
    fn notify_refused(&mut self, key: &SurfaceKey, refusal: &Refusal) {
        self.note(Note::Refused(key.clone(), refusal.clone()));
    }
    fn notify_probe_failed(&mut self, reason: &str) {
        self.note(Note::ProbeFailed(reason.to_owned()));
    }
    fn notify_diagnostic(&mut self, key: &SurfaceKey, diagnostic: &Diagnostic) {
        self.note(Note::Diagnostic(key.clone(), diagnostic.clone()));
    }
    fn notify_resize(&mut self, key: &SurfaceKey, height: u32) {
        self.note(Note::Resize(key.clone(), height));
    }
}

/// A host under test with its recorder, agent and handle.
pub struct TestHost {
    /// The host.
    pub host: Host,
    /// Its delegate and outbound callback.
    pub rec: Recorder,
    /// Writes its inbound envelopes.
    pub agent: Agent,
    /// Its handle.
    pub handle: HostHandle,
    exited: bool,
}

impl std::fmt::Debug for TestHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestHost")
            .field("host", &self.host)
            .field("exited", &self.exited)
            .finish_non_exhaustive()
    }
}

impl TestHost {
    /// Hands `envelope` to the host through its [`HostHandle`], as another thread would.
    pub fn send(&self, envelope: Vec<u8>) -> Outcome {
        self.handle
            .send_inbound(envelope)
            .map_err(|e| format!("send_inbound: {e}"))
    }

    /// The key of the open Surface `instance`, if it is open.
    pub fn key(&self, instance: &str) -> Option<SurfaceKey> {
        self.host
            .surfaces()
            .into_iter()
            .find(|k| k.instance.as_str() == instance)
    }

    /// Whether the host's loop was told to exit.
    pub fn exited(&self) -> bool {
        self.exited
    }
}

/// The event loop of a Host-level binary and the outcomes of its scenarios.
pub struct HostHarness {
    /// The one event loop of the process (tao allows one).
    pub event_loop: EventLoop<HostEvent>,
    runner: Runner,
}

impl std::fmt::Debug for HostHarness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostHarness").finish_non_exhaustive()
    }
}

impl HostHarness {
    /// Creates the event loop (or exits when there is no display).
    #[allow(clippy::print_stdout)]
    pub fn start() -> Self {
        require_display();
        let event_loop = match event_loop() {
            Ok(event_loop) => event_loop,
            Err(e) => {
                println!("no event loop: {e}");
                std::process::exit(1);
            }
        };
        // Wakes the loop so that a wait checks its condition even when nothing else happens.
        glib::timeout_add_local(Duration::from_millis(10), || glib::ControlFlow::Continue);
        Self {
            event_loop,
            runner: Runner::new(),
        }
    }

    /// Builds a host from `builder` with a fresh [`Recorder`] as its delegate and outbound
    /// callback, and waits for its isolation probe to pass.
    pub fn host(&mut self, builder: HostBuilder) -> Result<TestHost, String> {
        let rec = Recorder::default();
        let host = builder
            .delegate(rec.clone())
            .on_outbound(rec.on_outbound())
            .build(&self.event_loop)
            .map_err(|e| format!("host did not build: {e}"))?;
        let handle = host.handle();
        let mut t = TestHost {
            host,
            rec,
            agent: Agent::default(),
            handle,
            exited: false,
        };
        let done = self.wait_until(&mut t, Instant::now() + Duration::from_secs(30), |h, _| {
            h.probe_status() != ProbeStatus::Pending
        });
        if !done || t.host.probe_status() != ProbeStatus::Passed {
            return Err(format!(
                "isolation probe did not pass: {:?}",
                t.host.probe_status()
            ));
        }
        Ok(t)
    }

    /// Builds a host like [`HostHarness::host`] but returns at once, its isolation probe still
    /// running: for what happens to Surfaces opened before the verdict (R-SEC-8).
    pub fn host_unprobed(&mut self, builder: HostBuilder) -> Result<TestHost, String> {
        let rec = Recorder::default();
        let host = builder
            .delegate(rec.clone())
            .on_outbound(rec.on_outbound())
            .build(&self.event_loop)
            .map_err(|e| format!("host did not build: {e}"))?;
        let handle = host.handle();
        Ok(TestHost {
            host,
            rec,
            agent: Agent::default(),
            handle,
            exited: false,
        })
    }

    /// Runs the loop, every event going through [`Host::handle_event`], until `cond` holds,
    /// `deadline` passes or the host asks the loop to exit. Returns whether `cond` held.
    pub fn wait_until(
        &mut self,
        t: &mut TestHost,
        deadline: Instant,
        mut cond: impl FnMut(&Host, &Recorder) -> bool,
    ) -> bool {
        if cond(&t.host, &t.rec) {
            return true;
        }
        let mut met = false;
        let TestHost {
            host, rec, exited, ..
        } = t;
        self.event_loop.run_return(|event, target, flow| {
            let wanted = host.handle_event(event, target);
            let now = Instant::now();
            if cond(host, rec) {
                met = true;
                *flow = ControlFlow::Exit;
            } else if matches!(wanted, ControlFlow::Exit | ControlFlow::ExitWithCode(_)) {
                *exited = true;
                *flow = ControlFlow::Exit;
            } else if now >= deadline {
                *flow = ControlFlow::Exit;
            } else {
                *flow = ControlFlow::WaitUntil(now + Duration::from_millis(10));
            }
        });
        met
    }

    /// Runs the loop as an embedder's own loop does: the control flow is exactly what
    /// [`Host::handle_event`] returned, with no polling of the harness's own, until `cond`
    /// holds or the host asks to exit. Nothing but the host (and what the caller arranged, such
    /// as another thread's nudge through the handle) wakes the loop. Returns whether `cond`
    /// held and how many times the loop woke (`NewEvents`).
    pub fn wait_as_embedder(
        &mut self,
        t: &mut TestHost,
        mut cond: impl FnMut(&Host, &Recorder) -> bool,
    ) -> (bool, usize) {
        let mut met = false;
        let mut wakes = 0;
        let TestHost {
            host, rec, exited, ..
        } = t;
        self.event_loop.run_return(|event, target, flow| {
            if matches!(event, tao::event::Event::NewEvents(_)) {
                wakes += 1;
            }
            let wanted = host.handle_event(event, target);
            if cond(host, rec) {
                met = true;
                *flow = ControlFlow::Exit;
            } else if matches!(wanted, ControlFlow::Exit | ControlFlow::ExitWithCode(_)) {
                *exited = true;
                *flow = ControlFlow::Exit;
            } else {
                *flow = wanted;
            }
        });
        (met, wakes)
    }

    /// [`HostHarness::wait_until`] with a deadline [`WAIT`] from now.
    pub fn wait(&mut self, t: &mut TestHost, cond: impl FnMut(&Host, &Recorder) -> bool) -> bool {
        self.wait_until(t, Instant::now() + WAIT, cond)
    }

    /// The host's own snapshot of Surface `key`'s view ([`HostHandle::snapshot_png`]), or the
    /// host's reason for none, waiting at most `within` for the answer.
    pub fn snapshot(
        &mut self,
        t: &mut TestHost,
        key: &SurfaceKey,
        within: Duration,
    ) -> Result<Result<Vec<u8>, lineup_host::HostError>, String> {
        type Slot = Arc<Mutex<Option<Result<Vec<u8>, lineup_host::HostError>>>>;
        let slot: Slot = Arc::default();
        let filled = Arc::clone(&slot);
        t.handle
            .snapshot_png(key.instance.clone(), move |png| {
                if let Ok(mut slot) = filled.lock() {
                    *slot = Some(png);
                }
            })
            .map_err(|e| format!("snapshot_png: {e}"))?;
        let taken = |slot: &Slot| slot.lock().map(|s| s.is_some()).unwrap_or(true);
        self.wait_until(t, Instant::now() + within, |_, _| taken(&slot));
        let taken = slot
            .lock()
            .map_err(|_| "the snapshot's slot is poisoned")?
            .take();
        taken.ok_or_else(|| "the host answered no snapshot".to_owned())
    }

    /// Lets the loop run for `duration`, to see that something does *not* happen.
    pub fn settle(&mut self, t: &mut TestHost, duration: Duration) {
        self.wait_until(t, Instant::now() + duration, |_, _| false);
    }

    /// Waits for `instance`'s page to report its `policy` (and, with `violation`, the CSP
    /// `violation` it saw) and checks that it ran sandboxed: an opaque origin, `eval` and
    /// storage blocked (R-SEC-2, R-SEC-3). Returns the violation's data when asked for.
    pub fn expect_sandboxed(
        &mut self,
        t: &mut TestHost,
        instance: &str,
        violation: bool,
    ) -> Result<Option<Value>, String> {
        let reported = self.wait(t, |_, rec| {
            !rec.data(instance, "policy").is_empty()
                && (!violation || !rec.data(instance, "violation").is_empty())
        });
        if !reported {
            return Err(format!(
                "{instance}: no policy or violation report: {:?}",
                t.rec.ui_events()
            ));
        }
        let policy = t.rec.data(instance, "policy")[0].clone();
        if policy != json!({ "origin": "null", "eval": "blocked", "storage": "blocked" }) {
            return Err(format!(
                "{instance}: the sandbox and script policy are not in force: {policy}"
            ));
        }
        Ok(violation.then(|| t.rec.data(instance, "violation")[0].clone()))
    }

    /// Sends `ui.open` of `app` as `instance` and waits until that Surface is ready; returns its
    /// key.
    pub fn open(
        &mut self,
        t: &mut TestHost,
        instance: &str,
        app: Value,
        state: Option<Value>,
    ) -> Result<SurfaceKey, String> {
        let mark = t.rec.mark();
        t.send(t.agent.open(instance, app, state))?;
        let ready = self.wait(t, |_, rec| {
            rec.notes_since(mark)
                .iter()
                .any(|n| matches!(n, Note::Ready(k) if k.instance.as_str() == instance))
        });
        if !ready {
            return Err(format!(
                "surface {instance} did not become ready: {:?}",
                t.rec.notes_since(mark)
            ));
        }
        t.rec
            .key(instance)
            .ok_or_else(|| format!("surface {instance} was never reported opened"))
    }

    /// Shuts `t` down through its handle (unless it already asked the loop to exit), waits for
    /// its loop to exit, checks that the outbound callback and `notify_outbound` saw the same
    /// messages, and drops it. Events still queued for it are then discarded: a [`HostEvent`]
    /// does not say which host it is for, so the next host would take them as its own.
    pub fn shut_down(&mut self, mut t: TestHost) -> Outcome {
        if !t.exited {
            t.handle.shutdown().map_err(|e| format!("shutdown: {e}"))?;
            let deadline = Instant::now() + WAIT;
            while !t.exited && Instant::now() < deadline {
                self.wait_until(&mut t, deadline, |_, _| false);
            }
        }
        let exited = t.exited;
        let (sent, notified) = (t.rec.sent(), t.rec.notified_outbound());
        drop(t);
        self.discard(Duration::from_millis(100));
        if !exited {
            return Err("the host did not exit after shutdown".to_owned());
        }
        if sent != notified {
            return Err(format!(
                "on_outbound saw {sent:?} but notify_outbound saw {notified:?}"
            ));
        }
        Ok(())
    }

    /// Runs the loop for `duration`, handing its events to no host.
    pub fn discard(&mut self, duration: Duration) {
        let deadline = Instant::now() + duration;
        self.event_loop.run_return(|_, _, flow| {
            let now = Instant::now();
            *flow = if now >= deadline {
                ControlFlow::Exit
            } else {
                ControlFlow::WaitUntil(now + Duration::from_millis(10))
            };
        });
    }

    /// Runs one scenario and records its outcome; a panic counts as a failure.
    pub fn run(&mut self, name: &str, scenario: impl FnOnce(&mut HostHarness) -> Outcome) {
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
