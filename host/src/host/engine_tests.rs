//! The engine against a fake view port, with no display (#50 item 4): the effect interpreter,
//! the route of a view's reports, placement, hibernation's choice and the probe's gate, as
//! tables. Each view the fake makes records what the engine asked of it; a page's report goes
//! through the view's own event closure and the host's proxy, as on the real loop.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;
use std::sync::{Arc, Mutex};

use lineup_host_core::{
    ConversationId, Limits, PartyId, SessionConfig, SessionFactory, Sessions, SurfaceKey,
};
use lineup_surface_runtime::{DocumentOptions, SurfaceDocument, SurfaceServer};
use lineup_webview_shell::tao::error::OsError;
use lineup_webview_shell::tao::event::WindowEvent;
use lineup_webview_shell::tao::monitor::MonitorHandle;
use lineup_webview_shell::tao::window::{Window, WindowBuilder, WindowId};
use lineup_webview_shell::{
    Contrast, ProbeStatus, Rect, Shell, ShellError, SurfaceView, ViewEvent, WindowMaker,
    WindowPixels,
};
use serde_json::{json, Value};

use super::engine::Engine;
use super::handle::{HostEvent, Inner};
use super::proxy::HostProxy;
use super::records::Records;
use super::upstream::Upstream;
use super::views::{Views, ViewsConfig};
use super::work::Work;
use crate::delegate::{ChildSlot, HostDelegate, Refusal};
use crate::port::{Place, PortView, ViewPort};
use crate::watchdog::{Watchdog, WatchdogConfig};

/// A loop that makes no windows: the fake port never asks it to.
struct NoWindows;

impl WindowMaker for NoWindows {
    fn build_window(&self, _builder: WindowBuilder) -> Result<Window, OsError> {
        unreachable!("the fake port makes no windows")
    }

    fn monitors(&self) -> Vec<MonitorHandle> {
        Vec::new()
    }
}

/// What one fake view was asked, and its page's way to report.
struct ViewRecord {
    place: Place,
    url: String,
    events: Box<dyn Fn(ViewEvent)>,
    delivered: RefCell<Vec<String>>,
    visible: Cell<bool>,
    bounds: Cell<Option<Rect>>,
    closed: Cell<bool>,
    terminated: Cell<bool>,
    restored: Cell<u32>,
    presses: Cell<u64>,
}

#[derive(Default)]
struct PortLog {
    views: Vec<Rc<ViewRecord>>,
    /// Opens refused from now on, with this reason.
    refuse: Option<String>,
}

struct FakePort {
    log: Rc<RefCell<PortLog>>,
    children: bool,
    probe: Rc<RefCell<ProbeStatus>>,
}

impl ViewPort for FakePort {
    fn open(
        &self,
        _windows: &dyn WindowMaker,
        server: SurfaceServer,
        place: Place,
        events: Box<dyn Fn(ViewEvent)>,
    ) -> Result<Box<dyn PortView>, ShellError> {
        let mut log = self.log.borrow_mut();
        if let Some(why) = &log.refuse {
            return Err(ShellError::Platform(why.clone()));
        }
        let record = Rc::new(ViewRecord {
            place,
            url: server.url(),
            events,
            delivered: RefCell::default(),
            visible: Cell::new(true),
            bounds: Cell::new(None),
            closed: Cell::new(false),
            terminated: Cell::new(false),
            restored: Cell::new(0),
            presses: Cell::new(0),
        });
        log.views.push(Rc::clone(&record));
        Ok(Box::new(FakeView(record)))
    }

    fn children(&self) -> bool {
        self.children
    }

    fn child_area(&self) -> Option<(u32, u32)> {
        self.children.then_some((800, 600))
    }

    fn parent(&self) -> Option<&Window> {
        None
    }

    fn probe_status(&self) -> ProbeStatus {
        self.probe.borrow().clone()
    }

    fn language(&self) -> lineup_host_core::LanguageTag {
        lineup_host_core::LanguageTag::try_from("en").expect("a tag")
    }

    fn shell(&self) -> Option<&Shell> {
        None
    }
}

struct FakeView(Rc<ViewRecord>);

impl PortView for FakeView {
    fn url(&self) -> &str {
        &self.0.url
    }
    fn deliver_state(&self, state_json: &str) -> Result<(), ShellError> {
        self.0.delivered.borrow_mut().push(state_json.to_owned());
        Ok(())
    }
    fn restore_document(&self) -> Result<(), ShellError> {
        self.0.restored.set(self.0.restored.get() + 1);
        Ok(())
    }
    fn replace_document(&self, _document: SurfaceDocument) -> Result<(), ShellError> {
        Ok(())
    }
    fn screen_pixels(&self) -> Result<WindowPixels, ShellError> {
        Err(ShellError::Unsupported("no screen in the fake port"))
    }
    fn snapshot_png(&self, done: Box<dyn FnOnce(Result<Vec<u8>, ShellError>)>) {
        done(Err(ShellError::Unsupported("no screen in the fake port")))
    }
    fn ping(&self, done: Box<dyn FnOnce()>) {
        done()
    }
    fn web_process_responsive(&self) -> bool {
        true
    }
    fn terminate_web_process(&self) {
        self.0.terminated.set(true);
    }
    fn window_bounds(&self) -> Option<Rect> {
        None
    }
    fn presses(&self) -> u64 {
        self.0.presses.get()
    }
    fn set_bounds(&self, bounds: Rect) -> Result<(), ShellError> {
        self.0.bounds.set(Some(bounds));
        Ok(())
    }
    fn set_visible(&self, visible: bool) {
        self.0.visible.set(visible);
    }
    fn set_window_size(&self, _width: f64, _height: f64) {}
    fn handle_window_event(&self, _window_id: WindowId, _event: &WindowEvent<'_>) -> bool {
        false
    }
    fn close(self: Box<Self>) {
        self.0.closed.set(true);
    }
    fn surface(&self) -> Option<&SurfaceView> {
        None
    }
}

/// What the delegate heard, as words a table can compare.
#[derive(Default)]
struct Heard {
    notes: Vec<String>,
    slots: Vec<(usize, usize)>,
}

struct Listener(Rc<RefCell<Heard>>);

impl HostDelegate for Listener {
    fn notify_opened(&mut self, key: &SurfaceKey, _app: &lineup_host_core::InlineApp) {
        self.0
            .borrow_mut()
            .notes
            .push(format!("opened {}", key.instance));
    }
    fn notify_ready(&mut self, key: &SurfaceKey) {
        self.0
            .borrow_mut()
            .notes
            .push(format!("ready {}", key.instance));
    }
    fn notify_closed(&mut self, key: &SurfaceKey, reason: &lineup_host_core::CloseReason) {
        let note = format!("closed {} {reason:?}", key.instance);
        self.0.borrow_mut().notes.push(note);
    }
    fn notify_crashed(&mut self, key: &SurfaceKey) {
        self.0
            .borrow_mut()
            .notes
            .push(format!("crashed {}", key.instance));
    }
    fn notify_refused(&mut self, key: &SurfaceKey, refusal: &Refusal) {
        let note = format!("refused {} {refusal:?}", key.instance);
        self.0.borrow_mut().notes.push(note);
    }
    fn notify_probe_failed(&mut self, reason: &str) {
        self.0
            .borrow_mut()
            .notes
            .push(format!("probe failed {reason}"));
    }
    fn request_child_placement(&mut self, slot: &ChildSlot<'_>) -> Rect {
        self.0.borrow_mut().slots.push((slot.index, slot.count));
        let width = slot.width / u32::try_from(slot.count).unwrap_or(1);
        Rect {
            x: i32::try_from(slot.index).unwrap_or(0) * i32::try_from(width).unwrap_or(0),
            y: 0,
            width,
            height: slot.height,
        }
    }
}

/// Sessions on a clock that stands still: nothing here waits for time.
struct StillClock;

impl lineup_host_core::Clock for StillClock {
    fn monotonic(&self) -> std::time::Duration {
        std::time::Duration::ZERO
    }
}

impl SessionFactory for StillClock {
    fn clock(&mut self) -> Box<dyn lineup_host_core::Clock> {
        Box::new(StillClock)
    }

    fn capabilities(
        &mut self,
        _agent: Option<&lineup_host_core::AgentIdentity>,
    ) -> Result<Option<lineup_host_core::CapabilitySetup>, String> {
        Ok(None)
    }
}

/// An engine with no capabilities and no components, on the fake port.
struct Rig {
    engine: Engine,
    port: Rc<RefCell<PortLog>>,
    probe: Rc<RefCell<ProbeStatus>>,
    heard: Rc<RefCell<Heard>>,
    /// What went to the agent, as JSON, in order.
    sent: Rc<RefCell<Vec<Value>>>,
    /// The host's events on their way to the loop.
    queue: Arc<Mutex<VecDeque<HostEvent>>>,
}

struct Setup {
    children: bool,
    reopen: bool,
    limits: Limits,
    probe: ProbeStatus,
}

impl Default for Setup {
    fn default() -> Self {
        Self {
            children: false,
            reopen: true,
            limits: Limits::default(),
            probe: ProbeStatus::Passed,
        }
    }
}

impl Rig {
    fn new(setup: Setup) -> Self {
        let mut template = SessionConfig::new(PartyId::try_from("desktop").unwrap(), "out");
        template.limits = setup.limits;
        let factory = StillClock;
        let sessions = Sessions::new(template, Box::new(factory)).unwrap();
        let port = Rc::new(RefCell::new(PortLog::default()));
        let probe = Rc::new(RefCell::new(setup.probe));
        let views = Views::new(
            Box::new(FakePort {
                log: Rc::clone(&port),
                children: setup.children,
                probe: Rc::clone(&probe),
            }),
            ViewsConfig {
                window_size: (480, 320),
                resize_bounds: (40, 2000),
                document: DocumentOptions::default(),
                contrast: Contrast::Normal,
                watchdog: Watchdog::new(WatchdogConfig::default()),
                standby: None,
            },
        );
        let queue = Arc::new(Mutex::new(VecDeque::new()));
        let queued = Arc::clone(&queue);
        let proxy = HostProxy::from_fn(move |event| {
            queued.lock().unwrap().push_back(event);
            Ok(())
        });
        let sent = Rc::new(RefCell::new(Vec::new()));
        let out = Rc::clone(&sent);
        let heard = Rc::new(RefCell::new(Heard::default()));
        let outbound: super::options::OutboundFn = Box::new(move |message| {
            out.borrow_mut()
                .push(serde_json::from_str(&message.to_json()).unwrap());
        });
        let upstream = Upstream::new(Some(outbound), Box::new(Listener(Rc::clone(&heard))), None);
        let engine = Engine {
            sessions,
            views,
            driver: None,
            proxy,
            upstream,
            reopen: setup.reopen,
            components: None,
            records: Records::new(None),
            work: Work::default(),
        };
        Self {
            engine,
            port,
            probe,
            heard,
            sent,
            queue,
        }
    }

    /// The agent's envelope of `kind` in conversation `c1`.
    fn agent(&mut self, kind: &str, payload: Value) {
        let bytes = serde_json::to_vec(&json!({
            "v": 1, "id": format!("m{}", self.sent.borrow().len()), "type": format!("lineup.v1.{kind}"),
            "conversation_id": "c1", "sender": {"kind": "agent", "id": "agent_a"}, "payload": payload
        }))
        .unwrap();
        let effects = self.engine.sessions.handle_inbound(&bytes);
        self.engine.apply(effects, Some(1), &NoWindows);
        self.pump();
    }

    fn open(&mut self, instance: &str) {
        self.agent(
            "ui.open",
            json!({"instance_id": instance, "app": {"id": "com.example.w", "name": "Weather",
                   "version": "1.0.0", "html": "<main></main>", "css": "", "js": ""},
                   "state": {"n": 0}}),
        );
    }

    /// The `index`th view the port made.
    fn view(&self, index: usize) -> Rc<ViewRecord> {
        Rc::clone(&self.port.borrow().views[index])
    }

    fn views_made(&self) -> usize {
        self.port.borrow().views.len()
    }

    /// The page of view `index` reports `event`, through its own closure, then the loop runs.
    fn report(&mut self, index: usize, event: ViewEvent) {
        (self.view(index).events)(event);
        self.pump();
    }

    fn page(&mut self, index: usize, message: Value) {
        self.report(index, ViewEvent::Ipc(message.to_string()));
    }

    /// The page's own document committed and said `ready`, as a real page does.
    fn ready(&mut self, index: usize) {
        self.report(index, ViewEvent::DocumentCommitted);
        self.page(index, ready_from(&"a".repeat(32)));
    }

    /// Hands every queued host event to the engine, as the loop does.
    fn pump(&mut self) {
        loop {
            let next = self.queue.lock().unwrap().pop_front();
            let Some(HostEvent(inner)) = next else {
                return;
            };
            match inner {
                Inner::View { key, event } => self.engine.handle_view_event(key, event, &NoWindows),
                other => panic!("unexpected host event {other:?}"),
            }
        }
    }

    fn key(&self, instance: &str) -> SurfaceKey {
        let session = self
            .engine
            .sessions
            .id_of(&ConversationId::try_from("c1").unwrap())
            .expect("session c1");
        self.engine
            .views
            .keys()
            .into_iter()
            .find(|k| k.session == session && k.instance.as_str() == instance)
            .unwrap_or_else(|| panic!("{instance} is not open"))
    }

    /// The types of what went to the agent, from the `from`th message on.
    fn sent_types(&self, from: usize) -> Vec<String> {
        self.sent.borrow()[from..]
            .iter()
            .map(|m| m["type"].as_str().unwrap_or_default().to_owned())
            .collect()
    }

    fn notes(&self) -> Vec<String> {
        self.heard.borrow().notes.clone()
    }
}

/// A page's `ready`, from the document `document`.
fn ready_from(document: &str) -> Value {
    json!({"namespace": "lineup.surface.v1", "type": "ready", "document": document})
}

#[test]
fn an_open_makes_one_view_in_a_window_of_its_own_and_its_state_follows_ready() {
    let mut rig = Rig::new(Setup::default());
    rig.open("w1");
    assert_eq!(rig.views_made(), 1);
    let view = rig.view(0);
    match &view.place {
        Place::Window {
            title,
            width,
            height,
        } => {
            assert!(title.contains("Weather"), "{title}");
            assert_eq!((*width, *height), (480, 320));
        }
        Place::Child => panic!("a child view without child views"),
    }
    assert!(view.delivered.borrow().is_empty(), "state before ready");
    rig.ready(0);
    assert_eq!(*view.delivered.borrow(), [r#"{"n":0}"#]);
    assert_eq!(rig.notes(), ["opened w1", "ready w1"]);

    // A patch reaches the same view; a close closes it, and the delegate hears why.
    rig.agent("ui.patch", json!({"instance_id": "w1", "state": {"n": 1}}));
    assert_eq!(view.delivered.borrow().last().unwrap(), r#"{"n":1}"#);
    rig.agent("ui.close", json!({"instance_id": "w1"}));
    assert!(view.closed.get());
    assert!(rig.engine.views.is_empty());
    assert!(rig.notes().last().unwrap().starts_with("closed w1"));
}

#[test]
fn a_page_event_goes_to_the_agent_under_the_views_key_never_the_pages_word() {
    let mut rig = Rig::new(Setup::default());
    rig.open("w1");
    rig.open("w2");
    rig.ready(0);
    rig.ready(1);
    let before = rig.sent.borrow().len();
    // R-SEC-4: the page of w2 names w1; the event is w2's.
    rig.page(
        1,
        json!({"namespace": "lineup.surface.v1", "type": "event", "event": "go",
               "data": {}, "instance_id": "w1"}),
    );
    let sent = rig.sent.borrow()[before..].to_vec();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0]["type"], "lineup.v1.ui.event");
    assert_eq!(sent[0]["payload"]["instance_id"], "w2");
}

#[test]
fn each_refusal_of_a_view_reaches_the_delegate_and_nothing_goes_to_the_agent() {
    // The page's URLs are its words: the delegate's `Debug` shows their fingerprint.
    let table: [(ViewEvent, &str); 8] = [
        (
            ViewEvent::NavigationRefused("https://evil.example/".into()),
            "refused w1 Navigation(Fingerprint",
        ),
        (
            ViewEvent::NewWindowRefused("https://pop.example/".into()),
            "refused w1 NewWindow(Fingerprint",
        ),
        (
            ViewEvent::DownloadRefused("https://dl.example/x".into()),
            "refused w1 Download(Fingerprint",
        ),
        (ViewEvent::PermissionDenied, "refused w1 Permission"),
        (ViewEvent::DialogSuppressed, "refused w1 Dialog"),
        (ViewEvent::DropRefused, "refused w1 Drop"),
        (ViewEvent::FileChooserRefused, "refused w1 FileChooser"),
        (ViewEvent::PageCloseAttempt, "refused w1 PageClose"),
    ];
    for (event, note) in table {
        let mut rig = Rig::new(Setup::default());
        rig.open("w1");
        rig.ready(0);
        let before = rig.sent.borrow().len();
        rig.report(0, event);
        let last = rig.notes().last().cloned().unwrap_or_default();
        assert!(last.starts_with(note), "{last} is not {note}");
        assert!(rig.sent_types(before).is_empty(), "{note}: sent");
        assert!(!rig.view(0).closed.get(), "{note}: the view stays");
    }
}

#[test]
fn a_document_that_replaced_the_surfaces_own_is_replaced_again_and_then_gets_the_state() {
    let mut rig = Rig::new(Setup::default());
    rig.open("w1");
    rig.ready(0);
    rig.agent("ui.patch", json!({"instance_id": "w1", "state": {"n": 2}}));
    let view = rig.view(0);
    let delivered = view.delivered.borrow().len();
    // R-SEC-2a: `ready` from another document without a commit (a `javascript:` URL).
    rig.page(0, ready_from(&"b".repeat(32)));
    assert_eq!(view.restored.get(), 1);
    assert_eq!(
        rig.notes().last().map(String::as_str),
        Some("refused w1 DocumentReplaced")
    );
    assert_eq!(
        view.delivered.borrow().len(),
        delivered,
        "no state to that document"
    );
    // Its own document, loaded again, commits and gets the latest state after its `ready`.
    rig.report(0, ViewEvent::DocumentCommitted);
    rig.page(0, ready_from(&"c".repeat(32)));
    assert_eq!(view.delivered.borrow().len(), delivered + 1);
    assert_eq!(view.delivered.borrow().last().unwrap(), r#"{"n":2}"#);
}

#[test]
fn a_lost_view_is_reopened_in_its_place_or_closed_when_reopening_is_off() {
    // (reopen lost Surfaces, what ended it, views made, the close reason the agent hears)
    let table = [
        (true, ViewEvent::Crashed, 2, None),
        (true, ViewEvent::Unresponsive, 2, None),
        (false, ViewEvent::Crashed, 1, Some("crashed")),
        (false, ViewEvent::Unresponsive, 1, Some("unresponsive")),
        // Never reopened: the page would only fill its ceiling again (R-UI-12).
        (true, ViewEvent::MemoryExceeded, 1, Some("memory")),
    ];
    for (reopen, event, made, heard) in table {
        let name = format!("{event:?} reopen={reopen}");
        let mut rig = Rig::new(Setup {
            reopen,
            ..Setup::default()
        });
        rig.open("w1");
        rig.ready(0);
        rig.agent("ui.patch", json!({"instance_id": "w1", "state": {"n": 7}}));
        let before = rig.sent.borrow().len();
        rig.report(0, event);
        assert!(rig.view(0).closed.get(), "{name}: the lost view goes");
        assert_eq!(rig.views_made(), made, "{name}");
        let sent = rig.sent.borrow()[before..].to_vec();
        let reasons: Vec<&Value> = sent
            .iter()
            .filter(|m| m["type"] == "lineup.v1.ui.event" && m["payload"]["event"] == "close")
            .map(|m| &m["payload"]["data"]["reason"])
            .collect();
        assert_eq!(sent.len(), reasons.len(), "{name}: {sent:?}");
        assert_eq!(
            reasons,
            heard.map(|r| json!(r)).iter().collect::<Vec<_>>(),
            "{name}"
        );
        if made == 2 {
            // The same instance, in the same place, with its latest state after ready.
            assert_eq!(rig.view(1).place, rig.view(0).place, "{name}");
            rig.ready(1);
            assert_eq!(*rig.view(1).delivered.borrow(), [r#"{"n":7}"#], "{name}");
            assert_eq!(rig.key("w1").instance.as_str(), "w1");
        } else {
            assert!(rig.engine.views.is_empty(), "{name}");
        }
    }
}

#[test]
fn child_views_are_laid_out_by_the_delegate_and_a_hidden_one_leaves_the_layout() {
    let mut rig = Rig::new(Setup {
        children: true,
        ..Setup::default()
    });
    rig.open("w1");
    rig.open("w2");
    assert_eq!(rig.view(0).place, Place::Child);
    assert_eq!(
        rig.view(1).bounds.get(),
        Some(Rect {
            x: 400,
            y: 0,
            width: 400,
            height: 600
        })
    );
    assert_eq!(rig.heard.borrow().slots.last(), Some(&(1, 2)));
    let w1 = rig.key("w1");
    assert!(rig.engine.views.set_visible(&w1, false));
    rig.engine.relayout();
    assert!(!rig.view(0).visible.get());
    // Only w2 is asked for, alone in the area.
    assert_eq!(rig.heard.borrow().slots.last(), Some(&(0, 1)));
    assert_eq!(rig.view(1).bounds.get().map(|b| b.width), Some(800));
}

#[test]
fn past_the_live_cap_the_least_recently_shown_hidden_view_hibernates_unless_pressed() {
    // (presses on w1 since its state was set, what happens to w1, whether w3 opens)
    let table = [(0, true, true), (1, false, false)];
    for (presses, w1_sleeps, w3_opens) in table {
        let mut limits = Limits::default();
        limits.max_live_surfaces = 2;
        let mut rig = Rig::new(Setup {
            children: true,
            limits,
            ..Setup::default()
        });
        rig.open("w1");
        rig.open("w2");
        rig.ready(0);
        rig.ready(1);
        rig.view(0).presses.set(presses);
        let w1 = rig.key("w1");
        rig.engine.views.set_visible(&w1, false);
        let before = rig.sent.borrow().len();
        rig.open("w3");
        assert_eq!(rig.view(0).closed.get(), w1_sleeps, "presses {presses}");
        assert_eq!(rig.engine.views.is_hibernated(&w1), w1_sleeps);
        assert_eq!(rig.views_made() == 3, w3_opens, "presses {presses}");
        if !w3_opens {
            // R-UI-12: refused with the limit named, and nothing else changed.
            let sent = rig.sent.borrow()[before..].to_vec();
            assert_eq!(sent.len(), 1, "{sent:?}");
            assert_eq!(sent[0]["type"], "lineup.v1.client.error");
            assert!(sent[0]["payload"].to_string().contains('2'), "{sent:?}");
        }
    }
}

#[test]
fn views_made_while_the_probe_runs_close_when_it_fails_and_the_agent_hears_why() {
    let mut rig = Rig::new(Setup {
        probe: ProbeStatus::Pending,
        ..Setup::default()
    });
    rig.open("w1");
    assert_eq!(rig.views_made(), 1, "made at once; its document waits");
    rig.engine.poll_probe(&NoWindows);
    assert!(!rig.view(0).closed.get(), "pending decides nothing");
    *rig.probe.borrow_mut() = ProbeStatus::Failed("no sandbox".into());
    let before = rig.sent.borrow().len();
    rig.engine.poll_probe(&NoWindows);
    assert!(rig.view(0).closed.get());
    assert!(rig.notes().contains(&"probe failed no sandbox".to_owned()));
    let sent = rig.sent.borrow()[before..].to_vec();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0]["payload"]["code"], "surface_failed");
    assert_eq!(sent[0]["payload"]["in_reply_to"], "m0");
    let message = sent[0]["payload"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("R-SEC-8") && message.contains("no sandbox"),
        "{message}"
    );
    assert!(rig.engine.views.is_empty());
    // A view the port cannot make fails its open the same way, naming why.
    rig.port.borrow_mut().refuse = Some("no more views".into());
    let before = rig.sent.borrow().len();
    rig.open("w2");
    assert_eq!(rig.views_made(), 1);
    let sent = rig.sent.borrow()[before..].to_vec();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0]["payload"]["code"], "surface_failed");
    assert!(sent[0].to_string().contains("no more views"), "{sent:?}");
}

#[test]
fn closing_every_session_closes_each_view_silently() {
    let mut rig = Rig::new(Setup::default());
    rig.open("w1");
    rig.open("w2");
    let before = rig.sent.borrow().len();
    rig.engine.close_all();
    assert!(rig.view(0).closed.get() && rig.view(1).closed.get());
    assert!(rig.engine.views.is_empty());
    assert!(
        rig.sent_types(before).is_empty(),
        "nothing is sent at shutdown"
    );
}
