//! The bench's one event loop, the host under test (library API: [`HostBuilder`] with
//! `on_outbound`, [`HostHandle::send_inbound`]) and the raw views beside it.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::time::{Duration, Instant};

use lineup_host::{
    event_loop, Host, HostBuilder, HostDelegate, HostEvent, HostHandle, ProbeStatus,
};
use lineup_host_core::{CloseReason, InlineApp, Limits, Message, SurfaceKey};
use serde_json::{json, Value};
use tao::event_loop::{ControlFlow, EventLoop};
use tao::platform::run_return::EventLoopExtRunReturn;

use crate::phases::Phases;
use crate::raw::{epoch_ms, Hold, Inbox, Kind, RawView};

/// One outbound `ui.event` the agent received.
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    pub(crate) instance: String,
    pub(crate) event: String,
    pub(crate) data: Value,
    pub(crate) at: Instant,
    pub(crate) epoch_ms: f64,
}

/// What the host reported: its delegate's notifications and its outbound `ui.event`s (flood
/// events only counted, so that a flood costs the recorder nothing).
#[derive(Debug, Default)]
pub(crate) struct Recorder {
    pub(crate) ready: RefCell<HashMap<String, Instant>>,
    pub(crate) keys: RefCell<HashMap<String, SurfaceKey>>,
    pub(crate) closed: RefCell<Vec<String>>,
    pub(crate) events: RefCell<Vec<Seen>>,
    pub(crate) floods: Cell<u64>,
    pub(crate) rejected: Cell<u64>,
}

struct Delegate(Rc<Recorder>);

impl HostDelegate for Delegate {
    fn notify_opened(&mut self, key: &SurfaceKey, _app: &InlineApp) {
        self.0
            .keys
            .borrow_mut()
            .insert(key.instance.as_str().to_owned(), key.clone());
    }

    fn notify_ready(&mut self, key: &SurfaceKey) {
        self.0
            .ready
            .borrow_mut()
            .entry(key.instance.as_str().to_owned())
            .or_insert_with(Instant::now);
    }

    fn notify_closed(&mut self, key: &SurfaceKey, _reason: &CloseReason) {
        self.0
            .closed
            .borrow_mut()
            .push(key.instance.as_str().to_owned());
    }

    fn notify_rejected(&mut self, error: &lineup_host_core::ProtocolError, _line: Option<u64>) {
        tracing_less_warn(&format!("envelope rejected: {error:?}"));
        self.0.rejected.set(self.0.rejected.get() + 1);
    }
}

#[allow(clippy::print_stderr)] // reason: the bench's own diagnostics go to stderr
fn tracing_less_warn(text: &str) {
    eprintln!("lineup-bench: {text}");
}

fn record(rec: &Recorder, message: &Message) {
    let json = message.to_json();
    if json.contains(r#""event":"f""#) {
        rec.floods.set(rec.floods.get() + 1);
        return;
    }
    let Ok(value) = serde_json::from_str::<Value>(&json) else {
        return;
    };
    if value["type"] != "lineup.v1.ui.event" {
        return;
    }
    let payload = &value["payload"];
    rec.events.borrow_mut().push(Seen {
        instance: payload["instance_id"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
        event: payload["event"].as_str().unwrap_or_default().to_owned(),
        data: payload["data"].clone(),
        at: Instant::now(),
        epoch_ms: epoch_ms(),
    });
}

/// The event loop, the host under test and the raw views' inbox.
pub(crate) struct Lab {
    pub(crate) event_loop: EventLoop<HostEvent>,
    pub(crate) host: Option<Host>,
    pub(crate) handle: Option<HostHandle>,
    pub(crate) rec: Rc<Recorder>,
    pub(crate) inbox: Rc<Inbox>,
    /// The shell's open phases, timestamped.
    pub(crate) phases: Phases,
    /// Phase offsets of each cold and warm open of ours (ms after the open was sent).
    pub(crate) profile: Vec<Vec<(String, f64)>>,
    pub(crate) warm_profile: Vec<Vec<(String, f64)>>,
    next_id: u64,
    next_view: u64,
}

/// The limits of the host under test: the defaults, with the open rate limit out of the way
/// (the bench opens dozens of Surfaces in a row; the rate limit is not what it measures).
pub(crate) fn bench_limits() -> Limits {
    let mut limits = Limits::default();
    limits.max_opens_per_window = 100_000;
    limits
}

impl Lab {
    pub(crate) fn new() -> Result<Self, String> {
        let event_loop = event_loop().map_err(|e| e.to_string())?;
        // tao's `WaitUntil` does not always wake a `run_return` loop that has no events; a
        // periodic GLib timeout makes every wait check its condition and deadline.
        gtk::glib::timeout_add_local(Duration::from_millis(10), || {
            gtk::glib::ControlFlow::Continue
        });
        Ok(Self {
            event_loop,
            host: None,
            handle: None,
            rec: Rc::new(Recorder::default()),
            inbox: Rc::new(Inbox::default()),
            phases: Phases::install(),
            profile: Vec::new(),
            warm_profile: Vec::new(),
            next_id: 0,
            next_view: 0,
        })
    }

    /// Builds the host under test from `builder` (its delegate and outbound are the bench's).
    pub(crate) fn start_host(&mut self, builder: HostBuilder) -> Result<(), String> {
        let rec = Rc::clone(&self.rec);
        let out = Rc::clone(&self.rec);
        let host = builder
            .limits(bench_limits())
            .delegate(Delegate(rec))
            .on_outbound(move |m| record(&out, m))
            .build(&self.event_loop)
            .map_err(|e| format!("host did not build: {e}"))?;
        self.handle = Some(host.handle());
        self.host = Some(host);
        Ok(())
    }

    /// Pumps until the probe has decided.
    pub(crate) fn wait_probe(&mut self) -> Result<(), String> {
        self.pump(Duration::from_secs(30), |h, _, _| {
            h.is_some_and(|h| h.probe_status() != ProbeStatus::Pending)
        });
        match self.host.as_ref().map(Host::probe_status) {
            Some(ProbeStatus::Passed) => Ok(()),
            other => Err(format!("isolation probe: {other:?}")),
        }
    }

    /// Runs the loop until `cond` holds or `timeout` passes; returns whether it held.
    pub(crate) fn pump(
        &mut self,
        timeout: Duration,
        mut cond: impl FnMut(Option<&Host>, &Recorder, &Inbox) -> bool,
    ) -> bool {
        let deadline = Instant::now() + timeout;
        let (rec, inbox) = (Rc::clone(&self.rec), Rc::clone(&self.inbox));
        if cond(self.host.as_ref(), &rec, &inbox) {
            return true;
        }
        let mut met = false;
        let host = &mut self.host;
        self.event_loop.run_return(|event, target, flow| {
            if let Some(h) = host.as_mut() {
                let _ = h.handle_event(event, target);
            }
            let now = Instant::now();
            if cond(host.as_ref(), &rec, &inbox) {
                met = true;
                *flow = ControlFlow::Exit;
            } else if now >= deadline {
                *flow = ControlFlow::Exit;
            } else {
                *flow = ControlFlow::WaitUntil(now + Duration::from_millis(5));
            }
        });
        met
    }

    /// Lets the loop run for `duration`.
    pub(crate) fn settle(&mut self, duration: Duration) {
        self.pump(duration, |_, _, _| false);
    }

    /// A full agent envelope of `kind` around `payload`.
    pub(crate) fn envelope(&mut self, kind: &str, payload: Value) -> Vec<u8> {
        self.next_id += 1;
        envelope(self.next_id, kind, payload)
    }

    /// Sends an envelope through the host's handle, as an agent thread would.
    pub(crate) fn send(&self, bytes: Vec<u8>) -> Result<(), String> {
        self.handle
            .as_ref()
            .ok_or("no host")?
            .send_inbound(bytes)
            .map_err(|e| e.to_string())
    }

    /// Sends `ui.open` of `app` as `instance` and waits for its `ready`; returns open → ready.
    pub(crate) fn open_ours(
        &mut self,
        instance: &str,
        app: &Value,
        state: Option<Value>,
    ) -> Result<Duration, String> {
        let mut payload = json!({ "instance_id": instance, "app": app });
        if let Some(state) = state {
            payload["state"] = state;
        }
        let bytes = self.envelope("lineup.v1.ui.open", payload);
        self.rec.ready.borrow_mut().remove(instance);
        let start = Instant::now();
        self.send(bytes)?;
        let name = instance.to_owned();
        let ready = self.pump(Duration::from_secs(30), |_, rec, _| {
            rec.ready.borrow().contains_key(&name)
        });
        let at = self.rec.ready.borrow().get(instance).copied();
        match (ready, at) {
            (true, Some(at)) => Ok(at.duration_since(start)),
            _ => Err(format!("surface {instance} did not become ready")),
        }
    }

    /// Closes `instance` and waits until its view is gone.
    pub(crate) fn close_ours(&mut self, instance: &str) -> Result<(), String> {
        let bytes = self.envelope(
            "lineup.v1.ui.close",
            json!({ "instance_id": instance, "reason": "completed" }),
        );
        self.send(bytes)?;
        let name = instance.to_owned();
        let gone = self.pump(Duration::from_secs(10), |h, _, _| {
            h.is_some_and(|h| h.surfaces().iter().all(|k| k.instance.as_str() != name))
        });
        if gone {
            Ok(())
        } else {
            Err(format!("surface {instance} did not close"))
        }
    }

    /// Sends `ui.open` of the standard `component` as `instance` and waits until the built-in
    /// renderer shows it (its document rendered, its window mapped); returns open → shown.
    pub(crate) fn open_component(
        &mut self,
        instance: &str,
        component: &Value,
        state: Option<&Value>,
    ) -> Result<Duration, String> {
        let mut payload = json!({ "instance_id": instance, "component": component });
        if let Some(state) = state {
            payload["state"] = state.clone();
        }
        let bytes = self.envelope("lineup.v1.ui.open", payload);
        let start = Instant::now();
        self.send(bytes)?;
        let name = instance.to_owned();
        let shown = self.pump(Duration::from_secs(30), |h, _, _| {
            h.is_some_and(|h| {
                h.shown_components()
                    .iter()
                    .any(|k| k.instance.as_str() == name)
            })
        });
        if shown {
            Ok(start.elapsed())
        } else {
            Err(format!("component {instance} was not shown"))
        }
    }

    /// Closes the component `instance` and waits until it is no longer shown.
    pub(crate) fn close_component(&mut self, instance: &str) -> Result<(), String> {
        let bytes = self.envelope("lineup.v1.ui.close", json!({ "instance_id": instance }));
        self.send(bytes)?;
        let name = instance.to_owned();
        let gone = self.pump(Duration::from_secs(10), |h, _, _| {
            h.is_some_and(|h| {
                h.shown_components()
                    .iter()
                    .all(|k| k.instance.as_str() != name)
            })
        });
        if gone {
            Ok(())
        } else {
            Err(format!("component {instance} did not close"))
        }
    }

    /// Opens a raw view of `kind` serving `html` and waits for its `ready`; returns it with
    /// open → ready.
    pub(crate) fn open_raw(
        &mut self,
        kind: Kind,
        html: &Rc<Vec<u8>>,
    ) -> Result<(RawView, Duration), String> {
        let start = Instant::now();
        let (id, view) = self.start_raw(kind, html, None)?;
        let ready = self.pump(Duration::from_secs(30), |_, _, inbox| {
            inbox.ready_at(id).is_some()
        });
        match (ready, self.inbox.ready_at(id)) {
            (true, Some(at)) => Ok((view, at.duration_since(start))),
            _ => Err(format!("raw {} view did not become ready", kind.name())),
        }
    }

    /// Creates a raw view of `kind` under the next id (its document held by `hold`, if any).
    fn start_raw(
        &mut self,
        kind: Kind,
        html: &Rc<Vec<u8>>,
        hold: Option<Rc<Hold>>,
    ) -> Result<(u64, RawView), String> {
        self.next_view += 1;
        let id = self.next_view;
        let view = RawView::open(
            &self.event_loop,
            kind,
            id,
            Rc::clone(html),
            &self.inbox,
            hold,
        )?;
        Ok((id, view))
    }

    /// Creates two raw views of `kind` one after the other without waiting in between, as the
    /// host starts its probe's view and the first Surface's; returns them once both are ready.
    pub(crate) fn open_raw_pair(
        &mut self,
        kind: Kind,
        html: &Rc<Vec<u8>>,
    ) -> Result<[RawView; 2], String> {
        let (first, a) = self.start_raw(kind, html, None)?;
        let (second, b) = self.start_raw(kind, html, None)?;
        let ids = [first, second];
        let views = [a, b];
        let ready = self.pump(Duration::from_secs(30), |_, _, inbox| {
            ids.iter().all(|id| inbox.ready_at(*id).is_some())
        });
        if !ready {
            return Err(format!("raw {} pair did not become ready", kind.name()));
        }
        Ok(views)
    }

    /// One open of a pre-started raw view of a hardened `kind`: the view is created with its
    /// document request held, left to settle as a pool view is, then released; returns the
    /// time from the release to the page's `ready` and, with the bridge's script in the view,
    /// how long that script ran (see [`Inbox::bridge_ms`]).
    pub(crate) fn open_raw_held(
        &mut self,
        kind: Kind,
        html: &Rc<Vec<u8>>,
    ) -> Result<(Duration, Option<f64>), String> {
        let hold = Hold::new(Rc::clone(html));
        let (id, view) = self.start_raw(kind, html, Some(Rc::clone(&hold)))?;
        if !self.pump(Duration::from_secs(30), |_, _, _| hold.asked()) {
            return Err(format!(
                "raw {} view never asked for its document",
                kind.name()
            ));
        }
        self.settle(Duration::from_millis(400));
        if self.inbox.ready_at(id).is_some() {
            return Err(format!(
                "raw {} view was ready before its release",
                kind.name()
            ));
        }
        let start = Instant::now();
        hold.release();
        let ready = self.pump(Duration::from_secs(30), |_, _, inbox| {
            inbox.ready_at(id).is_some()
        });
        let at = self.inbox.ready_at(id).filter(|_| ready);
        if kind == Kind::HardenedWithBridge {
            // Its report follows `ready` in the same DOMContentLoaded.
            self.pump(Duration::from_secs(2), |_, _, inbox| {
                inbox.bridge_ms(id).is_some()
            });
        }
        let bridge = self.inbox.bridge_ms(id);
        drop(view);
        at.map(|at| (at.duration_since(start), bridge))
            .ok_or_else(|| format!("raw {} view did not become ready", kind.name()))
    }
}

/// A full agent envelope numbered `n`.
pub(crate) fn envelope(n: u64, kind: &str, payload: Value) -> Vec<u8> {
    json!({
        "v": 1,
        "id": format!("m{n}"),
        "type": kind,
        "conversation_id": "bench",
        "sender": { "kind": "agent", "id": "bench-agent" },
        "payload": payload,
    })
    .to_string()
    .into_bytes()
}
