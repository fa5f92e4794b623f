//! The engine on a fake view port, with no display (#50 item 4): each view the fake makes
//! records what the engine asked of it; a page's report goes through the view's own event
//! closure and the host's proxy, and an answer of the capability driver through its sink, as on
//! the real loop. Tests: `engine_tests.rs` (the interpreter, placement, hibernation, the
//! probe's gate) and `driver_tests.rs` (the capability driver).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::collections::VecDeque;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use lineup_host_core::mcp::McpLimits;
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

use super::components::ComponentViews;
use super::engine::Engine;
use super::factory::HostSessions;
use super::handle::{HostEvent, Inner};
use super::kernel::Kernel;
use super::proxy::HostProxy;
use super::renderer::{ComponentRenderer, ComponentReply, Declined};
use super::screen::Screen;
use super::upstream::Upstream;
use super::views::{Views, ViewsConfig};
use crate::capabilities::{logged_port, CapabilityDriver, CapabilityHandler};
use crate::delegate::{ChildSlot, HostDelegate, Refusal};
use crate::port::{Place, PortView, ViewKind, ViewPort};
use crate::watchdog::{Watchdog, WatchdogConfig};
use lineup_host_core::{
    AnswerSink, Capability, CapabilityName, HandlerError, JsonObject, OpaqueVersion, Risk,
};
use lineup_host_core::{ComponentClosed, ComponentKind, SafeMarkdown, ShownComponent};
use lineup_webview_shell::{ConsentPrompt, PendingConsent};

/// A loop that makes no windows: the fake port never asks it to.
pub(super) struct NoWindows;

impl WindowMaker for NoWindows {
    fn build_window(&self, _builder: WindowBuilder) -> Result<Window, OsError> {
        unreachable!("the fake port makes no windows")
    }

    fn monitors(&self) -> Vec<MonitorHandle> {
        Vec::new()
    }
}

/// What one fake view was asked, and its page's way to report.
pub(super) struct ViewRecord {
    pub(super) kind: ViewKind,
    pub(super) place: Place,
    pub(super) url: String,
    pub(super) events: Box<dyn Fn(ViewEvent)>,
    /// The states delivered, or for an MCP App view the messages posted to it.
    pub(super) delivered: RefCell<Vec<String>>,
    pub(super) visible: Cell<bool>,
    pub(super) bounds: Cell<Option<Rect>>,
    pub(super) closed: Cell<bool>,
    pub(super) terminated: Cell<bool>,
    pub(super) restored: Cell<u32>,
    /// Documents the host loaded in place of the page's (an embedder's reload).
    pub(super) replaced: Cell<u32>,
    /// Whether the page's script thread answers the watchdog's pings.
    pub(super) answers_pings: Cell<bool>,
    pub(super) presses: Cell<u64>,
}

#[derive(Default)]
pub(super) struct PortLog {
    pub(super) views: Vec<Rc<ViewRecord>>,
    /// Opens refused from now on, with this reason.
    pub(super) refuse: Option<String>,
}

pub(super) struct FakePort {
    log: Rc<RefCell<PortLog>>,
    children: bool,
    probe: Rc<RefCell<ProbeStatus>>,
}

impl ViewPort for FakePort {
    fn open(
        &self,
        _windows: &dyn WindowMaker,
        (kind, server): (ViewKind, SurfaceServer),
        place: Place,
        events: Box<dyn Fn(ViewEvent)>,
    ) -> Result<Box<dyn PortView>, ShellError> {
        let mut log = self.log.borrow_mut();
        if let Some(why) = &log.refuse {
            return Err(ShellError::Platform(why.clone()));
        }
        let record = Rc::new(ViewRecord {
            kind,
            place,
            url: server.url(),
            events,
            delivered: RefCell::default(),
            visible: Cell::new(true),
            bounds: Cell::new(None),
            closed: Cell::new(false),
            terminated: Cell::new(false),
            restored: Cell::new(0),
            replaced: Cell::new(0),
            answers_pings: Cell::new(true),
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

pub(super) struct FakeView(Rc<ViewRecord>);

impl PortView for FakeView {
    fn url(&self) -> &str {
        &self.0.url
    }
    fn deliver_state(&self, state_json: &str) -> Result<(), ShellError> {
        self.0.delivered.borrow_mut().push(state_json.to_owned());
        Ok(())
    }
    fn post_to_mcp_view(&self, json: &str) -> Result<(), ShellError> {
        self.deliver_state(json)
    }
    fn restore_document(&self) -> Result<(), ShellError> {
        self.0.restored.set(self.0.restored.get() + 1);
        Ok(())
    }
    fn replace_document(&self, _document: SurfaceDocument) -> Result<(), ShellError> {
        self.0.replaced.set(self.0.replaced.get() + 1);
        Ok(())
    }
    fn screen_pixels(&self) -> Result<WindowPixels, ShellError> {
        Err(ShellError::Unsupported("no screen in the fake port"))
    }
    fn snapshot_png(&self, done: Box<dyn FnOnce(Result<Vec<u8>, ShellError>)>) {
        done(Err(ShellError::Unsupported("no screen in the fake port")))
    }
    fn ping(&self, done: Box<dyn FnOnce()>) {
        if self.0.answers_pings.get() {
            done()
        }
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
pub(super) struct Heard {
    pub(super) notes: Vec<String>,
    pub(super) slots: Vec<(usize, usize)>,
    /// The height each placement request carried (the page's resize).
    pub(super) heights: Vec<Option<u32>>,
}

pub(super) struct Listener(Rc<RefCell<Heard>>);

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
    fn notify_resize_request(&mut self, key: &SurfaceKey, height: u32, clamped: bool) {
        let note = format!("resize {} {height} clamped={clamped}", key.instance);
        self.0.borrow_mut().notes.push(note);
    }
    fn notify_unresponsive(&mut self, key: &SurfaceKey) {
        let note = format!("unresponsive {}", key.instance);
        self.0.borrow_mut().notes.push(note);
    }
    fn notify_reloaded(&mut self, key: &SurfaceKey) {
        self.0
            .borrow_mut()
            .notes
            .push(format!("reloaded {}", key.instance));
    }
    fn notify_probe_failed(&mut self, reason: &str) {
        self.0
            .borrow_mut()
            .notes
            .push(format!("probe failed {reason}"));
    }
    fn request_child_placement(&mut self, slot: &ChildSlot<'_>) -> Rect {
        let mut heard = self.0.borrow_mut();
        heard.slots.push((slot.index, slot.count));
        heard.heights.push(slot.requested_height);
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
pub(super) struct StillClock;

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
pub(super) struct Rig {
    /// What the embedder's renderer drew, and its replies.
    pub(super) drawn: Rc<RefCell<Drawn>>,
    /// The consent requests the fake prompt was given, in order.
    pub(super) prompts: Rc<RefCell<Vec<PendingConsent>>>,
    /// The arguments of each run of `test.count`'s handler, in order.
    pub(super) runs: Arc<Mutex<Vec<Value>>>,
    pub(super) engine: Engine,
    pub(super) port: Rc<RefCell<PortLog>>,
    pub(super) probe: Rc<RefCell<ProbeStatus>>,
    pub(super) heard: Rc<RefCell<Heard>>,
    /// What went to the agent, as JSON, in order.
    pub(super) sent: Rc<RefCell<Vec<Value>>>,
    /// The host's events on their way to the loop.
    pub(super) queue: Arc<Mutex<VecDeque<HostEvent>>>,
}

/// The capability a rig registers (`test.count`), when it drives capabilities.
pub(super) struct Driven {
    /// Its risk level.
    pub(super) risk: Risk,
    /// Whether the host has a consent prompt (the fake's, which keeps each request).
    pub(super) prompt: bool,
}

pub(super) struct Setup {
    pub(super) driven: Option<Driven>,
    /// Whether the embedder's renderer draws standard components (the fake's, which offers
    /// every kind and declines a `choice` at show); without it none is offered.
    pub(super) renderer: bool,
    pub(super) children: bool,
    pub(super) reopen: bool,
    pub(super) limits: Limits,
    pub(super) watchdog: WatchdogConfig,
    pub(super) probe: ProbeStatus,
    /// Whether the sessions show MCP App views.
    pub(super) mcp_apps: bool,
}

impl Default for Setup {
    fn default() -> Self {
        Self {
            driven: None,
            renderer: false,
            children: false,
            reopen: true,
            limits: Limits::default(),
            watchdog: WatchdogConfig::default(),
            probe: ProbeStatus::Passed,
            mcp_apps: false,
        }
    }
}

impl Rig {
    pub(super) fn new(setup: Setup) -> Self {
        let mut template = SessionConfig::new(PartyId::try_from("desktop").unwrap(), "out");
        template.limits = setup.limits;
        template.mcp_apps = setup.mcp_apps.then(McpLimits::default);
        if setup.renderer {
            let renderer = FakeRenderer(Rc::default());
            template.standard_components = super::components::rendered_set(false, Some(&renderer));
        }
        let prompts = Rc::new(RefCell::new(Vec::new()));
        let drawn = Rc::new(RefCell::new(Drawn::default()));
        let runs = Arc::new(Mutex::new(Vec::new()));
        let queue = Arc::new(Mutex::new(VecDeque::new()));
        let (sessions, driver, capability) = match setup.driven {
            None => (
                Sessions::new(template, Box::new(StillClock)).unwrap(),
                None,
                None,
            ),
            Some(driven) => {
                let (factory, driver, capability) =
                    driven.start(Rc::clone(&prompts), Arc::clone(&runs), Arc::clone(&queue));
                let mut template = template;
                if let Some(store) = &factory.store {
                    template.store = store.clone();
                }
                let sessions = Sessions::new(template, Box::new(factory)).unwrap();
                (sessions, Some(driver), Some(capability))
            }
        };
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
                watchdog: Watchdog::new(setup.watchdog),
                standby: None,
            },
        );
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
        let components = setup.renderer.then(|| {
            let renderer = FakeRenderer(Rc::clone(&drawn));
            let links = super::component_links::Links::new(None, proxy.clone());
            ComponentViews::new(None, Some(Box::new(renderer)), links)
        });
        let mcp_facts = super::mcp_facts::McpFacts::new(lineup_webview_shell::Theme::Dark, false);
        let mut sessions = sessions;
        let registered = match capability {
            Some(capability) => sessions.register_capability(capability).unwrap(),
            None => Vec::new(),
        };
        let mut engine = Engine::new(
            Kernel::new(sessions, setup.reopen),
            Screen::new(views, components.flatten(), proxy, mcp_facts),
            driver,
            upstream,
        );
        for effects in registered {
            engine.apply(effects, None, &NoWindows);
        }
        Self {
            engine,
            drawn,
            prompts,
            runs,
            port,
            probe,
            heard,
            sent,
            queue,
        }
    }

    /// The agent's envelope of `kind` in conversation `c1`.
    pub(super) fn agent(&mut self, kind: &str, payload: Value) {
        let bytes = serde_json::to_vec(&json!({
            "v": 1, "id": format!("m{}", self.sent.borrow().len()), "type": format!("lineup.v1.{kind}"),
            "conversation_id": "c1", "sender": {"kind": "agent", "id": "agent_a"}, "payload": payload
        }))
        .unwrap();
        self.engine.handle_inbound(&bytes, Some(1), &NoWindows);
        self.pump();
    }

    pub(super) fn open(&mut self, instance: &str) {
        self.agent(
            "ui.open",
            json!({"instance_id": instance, "app": {"id": "com.example.w", "name": "Weather",
                   "version": "1.0.0", "html": "<main></main>", "css": "", "js": ""},
                   "state": {"n": 0}}),
        );
    }

    /// The `index`th view the port made.
    pub(super) fn view(&self, index: usize) -> Rc<ViewRecord> {
        Rc::clone(&self.port.borrow().views[index])
    }

    pub(super) fn views_made(&self) -> usize {
        self.port.borrow().views.len()
    }

    /// The page of view `index` reports `event`, through its own closure, then the loop runs.
    pub(super) fn report(&mut self, index: usize, event: ViewEvent) {
        (self.view(index).events)(event);
        self.pump();
    }

    pub(super) fn page(&mut self, index: usize, message: Value) {
        self.report(index, ViewEvent::Ipc(message.to_string()));
    }

    /// The page's own document committed and said `ready`, as a real page does.
    pub(super) fn ready(&mut self, index: usize) {
        self.report(index, ViewEvent::DocumentCommitted);
        self.page(index, ready_from(&"a".repeat(32)));
    }

    /// Hands every queued host event to the engine, as the loop does.
    pub(super) fn pump(&mut self) {
        loop {
            let next = self.queue.lock().unwrap().pop_front();
            let Some(HostEvent(inner)) = next else {
                return;
            };
            match inner {
                // The loop's next turn wakes what the embedder showed (`Host::handle_timeout`).
                Inner::Wake => self.engine.start_turn(&NoWindows),
                Inner::View { .. }
                | Inner::CapabilityAnswer { .. }
                | Inner::EmbedderComponent { .. } => self.engine.handle_event(inner, &NoWindows),
                other => panic!("unexpected host event {other:?}"),
            }
        }
    }

    /// Runs the loop until `done` holds: a handler answers from a thread of its own. Panics
    /// naming `what` after 20 s.
    pub(super) fn pump_until(&mut self, what: &str, done: impl Fn(&Self) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            self.pump();
            if done(self) {
                return;
            }
            assert!(Instant::now() < deadline, "still waiting for {what}");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// The payloads of the `app.result`s sent so far.
    pub(super) fn results(&self) -> Vec<Value> {
        self.sent
            .borrow()
            .iter()
            .filter(|m| m["type"] == "lineup.v1.app.result")
            .map(|m| m["payload"].clone())
            .collect()
    }

    pub(super) fn key(&self, instance: &str) -> SurfaceKey {
        let session = self
            .engine
            .sessions()
            .id_of(&ConversationId::try_from("c1").unwrap())
            .expect("session c1");
        self.engine
            .screen()
            .surfaces()
            .into_iter()
            .find(|k| k.session == session && k.instance.as_str() == instance)
            .unwrap_or_else(|| panic!("{instance} is not open"))
    }

    /// The types of what went to the agent, from the `from`th message on.
    pub(super) fn sent_types(&self, from: usize) -> Vec<String> {
        self.sent.borrow()[from..]
            .iter()
            .map(|m| m["type"].as_str().unwrap_or_default().to_owned())
            .collect()
    }

    pub(super) fn notes(&self) -> Vec<String> {
        self.heard.borrow().notes.clone()
    }
}

/// A page's `ready`, from the document `document`.
pub(super) fn ready_from(document: &str) -> Value {
    json!({"namespace": "lineup.surface.v1", "type": "ready", "document": document})
}

/// `test.count`'s handler: keeps its arguments, answers `{"counted": <tag>}`.
struct Counter(Arc<Mutex<Vec<Value>>>);

impl CapabilityHandler for Counter {
    fn call(&self, arguments: JsonObject) -> Result<JsonObject, HandlerError> {
        let arguments = Value::Object(arguments.as_map().clone());
        self.0.lock().unwrap().push(arguments.clone());
        let counted = json!({"counted": arguments["tag"]});
        JsonObject::try_from(counted).map_err(|e| HandlerError::new(e.to_string()))
    }
}

impl Driven {
    /// The host's own session factory and capability driver over one memory store (the
    /// sessions' store port too), with the
    /// fake prompt (keeping each request in `prompts`) and `test.count`; the driver's answers
    /// go to `queue` as on the real loop.
    fn start(
        self,
        prompts: Rc<RefCell<Vec<PendingConsent>>>,
        runs: Arc<Mutex<Vec<Value>>>,
        queue: Arc<Mutex<VecDeque<HostEvent>>>,
    ) -> (HostSessions, CapabilityDriver, Capability) {
        let memory = lineup_host_core::MemoryStore::default();
        let store = logged_port(lineup_host_core::StorePort::new(memory), None);
        let name = CapabilityName::try_from("test.count").unwrap();
        let capability = Capability::new(
            name.clone(),
            OpaqueVersion::try_from("1").unwrap(),
            self.risk,
            JsonObject::try_from(json!({"type": "object"})).unwrap(),
        )
        .unwrap();
        let mut handlers: HashMap<CapabilityName, Arc<dyn CapabilityHandler>> = HashMap::new();
        handlers.insert(name, Arc::new(Counter(runs)));
        let prompt: Option<Box<dyn ConsentPrompt>> = self.prompt.then(|| {
            Box::new(move |pending: PendingConsent| prompts.borrow_mut().push(pending))
                as Box<dyn ConsentPrompt>
        });
        let sink: AnswerSink = Arc::new(move |session, ticket, answer| {
            let answer = HostEvent(Inner::CapabilityAnswer {
                session,
                ticket,
                answer,
            });
            queue.lock().unwrap().push_back(answer);
        });
        let language = lineup_host_core::LanguageTag::try_from("en").unwrap();
        let driver = CapabilityDriver::new(
            store.clone(),
            handlers,
            prompt,
            Box::new(|_| false),
            sink,
            None,
            language,
        );
        let factory = HostSessions {
            start: Instant::now(),
            store: Some(store),
            unvouched_scope: None,
        };
        (factory, driver, capability)
    }
}

/// What the fake renderer was told, as words, and the reply of each component it shows.
#[derive(Default)]
pub(super) struct Drawn {
    pub(super) told: Vec<String>,
    pub(super) replies: Vec<ComponentReply>,
}

/// The embedder's renderer (R-STD-16) as a fake: supports every kind, and declines a `choice`
/// when it comes to showing one.
struct FakeRenderer(Rc<RefCell<Drawn>>);

impl ComponentRenderer for FakeRenderer {
    fn supports(&self, _kind: ComponentKind) -> bool {
        true
    }

    fn show(&mut self, component: &ShownComponent, reply: ComponentReply) -> Result<(), Declined> {
        if component.kind == ComponentKind::Choice {
            return Err(Declined);
        }
        let mut drawn = self.0.borrow_mut();
        drawn.told.push(format!("show {}", component.key.instance));
        drawn.replies.push(reply);
        Ok(())
    }

    fn update(
        &mut self,
        key: &SurfaceKey,
        _state: &JsonObject,
        _markdown: Option<&SafeMarkdown>,
        reopened: bool,
    ) {
        let told = format!("update {} reopened={reopened}", key.instance);
        self.0.borrow_mut().told.push(told);
    }

    fn lock(&mut self, key: &SurfaceKey) {
        self.0
            .borrow_mut()
            .told
            .push(format!("lock {}", key.instance));
    }

    fn hide(&mut self, key: &SurfaceKey, reason: &ComponentClosed) {
        let told = format!("hide {} {reason:?}", key.instance);
        self.0.borrow_mut().told.push(told);
    }
}
