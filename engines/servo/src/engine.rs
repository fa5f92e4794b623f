//! The one Servo of the process and the Surfaces it shows.

use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};
use std::sync::Arc;

use std::time::Instant;

use lineup_host_core::InlineBundle;
use lineup_surface_runtime::{
    DeliveryKey, DocumentOptions, SurfaceDocument, SurfaceServer, SurfaceToken,
};
use servo::protocol_handler::ProtocolRegistry;
use servo::{
    EventLoopWaker, RenderingContext, Servo, ServoBuilder, SoftwareRenderingContext,
    UserContentManager, UserScript, WebViewBuilder,
};

use crate::clipboard::OwnClipboard;
use crate::delegate::{EventQueue, SurfaceDelegate, ViewLink};
use crate::preferences::{options, preferences};
use crate::probe::{Probe, ProbeStatus, PROBE_JS, PROBE_TIMEOUT};
use crate::protocol::{Routes, SurfaceProtocol};
use crate::surface::ServoSurface;
use crate::ServoError;
use lineup_webview_shell::ViewEvent;

/// How the engine is set up.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    max_ipc_bytes: usize,
    test_helpers: bool,
    probe_without_csp: bool,
}

impl Default for EngineConfig {
    fn default() -> Self {
        Self {
            max_ipc_bytes: 256 * 1024,
            test_helpers: false,
            probe_without_csp: false,
        }
    }
}

impl EngineConfig {
    /// The most bytes one bridge message may have; longer ones are dropped and reported as
    /// [`ViewEvent::IpcTooLarge`]. 256 KiB by default, as with WebKitGTK.
    pub fn with_max_ipc_bytes(mut self, bytes: usize) -> Self {
        self.max_ipc_bytes = bytes;
        self
    }

    /// Serves the isolation probe's page without its CSP, so that the probe fails: the probe's
    /// own positive control, for tests only (no Surface is ever served by such an engine).
    pub fn dangerous_probe_without_csp(mut self) -> Self {
        self.probe_without_csp = true;
        self
    }

    /// Turns on Servo's `ServoTestUtils` in every page, whose `panic()` makes a script thread
    /// panic: for crash tests only.
    pub fn dangerous_with_test_helpers(mut self) -> Self {
        self.test_helpers = true;
        self
    }
}

/// Servo, set up for Surfaces: the `lineup-surface` scheme, hardened preferences, and the views
/// it shows, whose events it hands out after each turn ([`ServoEngine::spin`]).
///
/// Servo allows one instance per process, and it is neither `Send` nor `Sync`: make the engine
/// once, on the thread that runs the event loop.
pub struct ServoEngine {
    servo: Servo,
    routes: Routes,
    config: EngineConfig,
    views: RefCell<Vec<Weak<ViewLink>>>,
    probe: RefCell<Probe>,
}

impl ServoEngine {
    /// Starts Servo. `wake` is called from any thread when Servo has work; the embedder then
    /// calls [`ServoEngine::spin`] on the engine's thread (say, by sending its event loop a user
    /// event).
    pub fn start(
        config: EngineConfig,
        wake: impl Fn() + Send + Sync + 'static,
    ) -> Result<Self, ServoError> {
        static STARTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        if STARTED.swap(true, std::sync::atomic::Ordering::SeqCst) {
            return Err(ServoError::AlreadyStarted);
        }
        // Servo's own provider, unless the process chose one (an `Err` then): with the
        // `ring` of the host's WebSocket link in the process too, rustls cannot choose, and
        // Servo's network thread would panic at start.
        let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
        let routes = Routes::default();
        let mut registry = ProtocolRegistry::default();
        registry
            .register(
                SurfaceProtocol::SCHEME,
                SurfaceProtocol {
                    routes: routes.clone(),
                },
            )
            .map_err(|e| ServoError::Engine(format!("registering the scheme: {e:?}")))?;
        let servo = ServoBuilder::default()
            .opts(options())
            .preferences(preferences(config.test_helpers))
            .event_loop_waker(Box::new(Waker(Arc::new(wake))))
            .protocol_registry(registry)
            .build();
        report_script_panics(&servo);
        let engine = Self {
            servo,
            routes,
            config,
            views: RefCell::new(Vec::new()),
            probe: RefCell::new(Probe {
                view: None,
                report: Rc::default(),
                deadline: Instant::now() + PROBE_TIMEOUT,
                status: ProbeStatus::Pending,
            }),
        };
        let probe_page = InlineBundle::new("<p>lineup isolation probe</p>", "", PROBE_JS)
            .map_err(|e| ServoError::Engine(format!("the probe page: {e}")))?;
        let server = SurfaceServer::new(
            SurfaceToken::from_random_bytes(random_bytes()?),
            SurfaceDocument::assemble(
                &probe_page,
                &if engine.config.probe_without_csp {
                    DocumentOptions::default().dangerous().without_csp()
                } else {
                    DocumentOptions::default()
                },
            ),
        );
        let report = Rc::clone(&engine.probe.borrow().report);
        let view = engine.open_view(server, 64, 64, Probe::sink(&report))?;
        engine.probe.borrow_mut().view = Some(view);
        Ok(engine)
    }

    /// Where the isolation probe stands (R-SEC-8): [`ServoEngine::open`] serves Surfaces only
    /// once it passed.
    pub fn probe_status(&self) -> ProbeStatus {
        self.probe.borrow().status.clone()
    }

    /// Opens `server`'s document in a new webview of `width` × `height` device pixels, drawn in
    /// software; `on_event` gets what the view reports, on this thread, from
    /// [`ServoEngine::spin`]. The bridge runs in the page before the guest's scripts, with a
    /// delivery key of the view's own.
    ///
    /// Refused with [`ServoError::ProbePending`] until the isolation probe passed (spin the
    /// engine meanwhile), and with [`ServoError::ProbeFailed`] for good if it failed.
    pub fn open(
        &self,
        server: SurfaceServer,
        width: u32,
        height: u32,
        on_event: impl Fn(ViewEvent) + 'static,
    ) -> Result<ServoSurface, ServoError> {
        match self.probe_status() {
            ProbeStatus::Passed => self.open_view(server, width, height, on_event),
            ProbeStatus::Pending => Err(ServoError::ProbePending),
            ProbeStatus::Failed(why) => Err(ServoError::ProbeFailed(why)),
        }
    }

    fn open_view(
        &self,
        server: SurfaceServer,
        width: u32,
        height: u32,
        on_event: impl Fn(ViewEvent) + 'static,
    ) -> Result<ServoSurface, ServoError> {
        let url = url::Url::parse(&server.url())
            .map_err(|e| ServoError::Engine(format!("the document URL: {e}")))?;
        let token = server.token().as_str().to_owned();
        let context = Rc::new(
            SoftwareRenderingContext::new(dpi::PhysicalSize { width, height })
                .map_err(|e| ServoError::Engine(format!("software rendering: {e:?}")))?,
        );
        context
            .make_current()
            .map_err(|e| ServoError::Engine(format!("software rendering: {e:?}")))?;
        let key = DeliveryKey::from_random_bytes(random_bytes()?);
        let contents = Rc::new(UserContentManager::new(&self.servo));
        // Servo runs user scripts in every frame, WebKit (as the host asks it) in the top
        // frame only: a subframe's bridge would post its own `ready` as the Surface's, a new
        // document each time (R-UI-10). `window.top` is unforgeable, and the guest has not run.
        // R-SEC-3: no WebAssembly in any frame, as on WebKitGTK.
        let bridge = format!(
            "{} if (window.top === window) {}",
            lineup_surface_runtime::WEBASSEMBLY_GUARD_JS,
            key.bridge_script()
        );
        contents.add_script(Rc::new(UserScript::new(bridge, None)));
        let events: Rc<EventQueue> = Rc::default();
        let delegate = Rc::new(SurfaceDelegate {
            document: url.to_string(),
            events: Rc::clone(&events),
            max_ipc_bytes: self.config.max_ipc_bytes,
            frame_ready: Cell::new(false),
        });
        self.routes.add(server);
        let rendering: Rc<dyn RenderingContext> = context.clone();
        let webview = WebViewBuilder::new(&self.servo, rendering)
            .delegate(delegate.clone())
            .user_content_manager(Rc::clone(&contents))
            .clipboard_delegate(Rc::new(OwnClipboard::default()))
            .url(url.clone())
            .build();
        // Bound before the first request: the document is served to this webview only.
        self.routes.bind(&token, webview.id());
        let link = Rc::new(ViewLink {
            events,
            on_event: Box::new(on_event),
        });
        self.views.borrow_mut().push(Rc::downgrade(&link));
        Ok(ServoSurface {
            webview,
            token,
            key,
            url,
            delegate,
            context,
            _contents: contents,
            _link: link,
            routes: self.routes.clone(),
        })
    }

    /// Lets Servo do its pending work, then hands every live view's events to its closure, in
    /// order, with no engine callback on the stack.
    pub fn spin(&self) {
        self.servo.spin_event_loop();
        let live: Vec<Rc<ViewLink>> = {
            let mut views = self.views.borrow_mut();
            views.retain(|v| v.strong_count() > 0);
            views.iter().filter_map(Weak::upgrade).collect()
        };
        for view in live {
            loop {
                let next = view.events.borrow_mut().pop_front();
                match next {
                    Some(event) => (view.on_event)(event),
                    None => break,
                }
            }
        }
        self.probe.borrow_mut().advance();
    }

    /// Spins until the isolation probe has a verdict (or `timeout` passed) and returns it: for
    /// a program that has nothing to show before its first Surface.
    pub fn wait_for_probe(&self, timeout: std::time::Duration) -> ProbeStatus {
        let deadline = Instant::now() + timeout;
        while self.probe_status() == ProbeStatus::Pending && Instant::now() < deadline {
            self.spin();
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        self.probe_status()
    }

    /// The Servo instance, for what this crate does not wrap.
    pub fn servo(&self) -> &Servo {
        &self.servo
    }
}

impl std::fmt::Debug for ServoEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServoEngine")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

fn random_bytes() -> Result<[u8; 16], ServoError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| ServoError::Engine(format!("randomness: {e}")))?;
    Ok(bytes)
}

/// Servo learns that a script thread panicked only from an error-level `log` record reaching its
/// constellation: this installs Servo's logger (the `log` crate's global logger, with
/// `env_logger`'s `RUST_LOG` filter for the rest) and a panic hook that logs each panic at error
/// level before the hook that was there. Without it a page's panic would go unreported
/// (`notify_crashed` never comes). An embedder that set a `log` logger of its own keeps it, and
/// is told that script panics will not be reported.
fn report_script_panics(servo: &Servo) {
    let installed =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| servo.setup_logging())).is_ok();
    if !installed {
        tracing::warn!(
            "a log logger is set already: a Surface's script panic will not be reported as a crash"
        );
        return;
    }
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        log::error!("{info}");
        previous(info);
    }));
}

/// Servo's waker over the embedder's closure.
#[derive(Clone)]
struct Waker(Arc<dyn Fn() + Send + Sync>);

impl EventLoopWaker for Waker {
    fn clone_box(&self) -> Box<dyn EventLoopWaker> {
        Box::new(self.clone())
    }

    fn wake(&self) {
        (self.0)();
    }
}
