//! Servo behind the host's engine seam ([`SurfaceEngine`]): a `lineup_host::Host` built with
//! `HostBuilder::dangerous().engine(..)` runs its sessions, capabilities, consent and watchdog
//! on Servo, each Surface in a window of its own.

use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use lineup_surface_runtime::{SurfaceDocument, SurfaceServer};
use lineup_webview_shell::tao::event::{ElementState, WindowEvent};
use lineup_webview_shell::tao::window::{Window, WindowId};
use lineup_webview_shell::{
    EngineView, Hardening, Rect, SurfaceEngine, ViewConfig, ViewEvent, WindowPixels,
};

use crate::engine::{EngineConfig, ServoEngine};
use crate::probe::ProbeStatus;
use crate::surface::ServoSurface;
use crate::window::SurfaceWindow;
use crate::ServoError;

/// The closure that wakes the host's loop, set once the host is built.
type WakeSlot = Arc<Mutex<Option<Box<dyn Fn() + Send + Sync>>>>;

/// The process's one Servo as a host's engine: hand it to
/// `HostBuilder::dangerous().engine(..)`.
///
/// ```no_run
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use std::rc::Rc;
/// use lineup_host::{event_loop, HostBuilder};
/// use lineup_servo::{EngineConfig, ServoHostEngine};
///
/// let event_loop = event_loop()?;
/// let servo = ServoHostEngine::start(EngineConfig::default())?;
/// let host = HostBuilder::new().dangerous().engine(Rc::new(servo)).build(&event_loop)?;
/// host.run(event_loop)?;
/// # Ok(())
/// # }
/// ```
pub struct ServoHostEngine {
    engine: ServoEngine,
    wake: WakeSlot,
    views: RefCell<Vec<Weak<HostedView>>>,
    /// Ends the ticker thread ([`TICK`]) when the engine goes.
    stopped: Arc<std::sync::atomic::AtomicBool>,
}

/// How often the host's loop is woken whatever Servo does: the loop's own timed wake-up does not
/// come while Servo's threads are idle (under tao's GTK loop), and the host's timers (the
/// watchdog, hibernation, deadlines) and Servo's frames need turns.
const TICK: Duration = Duration::from_millis(100);

impl ServoHostEngine {
    /// Starts Servo (one per process: [`ServoError::AlreadyStarted`] the second time) and its
    /// isolation probe, which the host's build waits for.
    pub fn start(config: EngineConfig) -> Result<Self, ServoError> {
        let wake: WakeSlot = Arc::default();
        let waker = Arc::clone(&wake);
        let engine = ServoEngine::start(config, move || {
            if let Some(wake) = &*waker.lock().unwrap_or_else(PoisonError::into_inner) {
                wake();
            }
        })?;
        Ok(Self {
            engine,
            wake,
            views: RefCell::new(Vec::new()),
            stopped: Arc::default(),
        })
    }
}

impl Drop for ServoHostEngine {
    fn drop(&mut self) {
        self.stopped
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

impl SurfaceEngine for ServoHostEngine {
    fn name(&self) -> &str {
        "servo"
    }

    fn set_waker(&self, wake: Box<dyn Fn() + Send + Sync>) {
        *self.wake.lock().unwrap_or_else(PoisonError::into_inner) = Some(wake);
        let slot = Arc::clone(&self.wake);
        let stopped = Arc::clone(&self.stopped);
        let ticker = std::thread::Builder::new()
            .name("lineup-servo-tick".into())
            .spawn(move || {
                while !stopped.load(std::sync::atomic::Ordering::SeqCst) {
                    std::thread::sleep(TICK);
                    if let Some(wake) = &*slot.lock().unwrap_or_else(PoisonError::into_inner) {
                        wake();
                    }
                }
            });
        if let Err(e) = ticker {
            tracing::warn!("no ticker for the host's loop: {e}");
        }
    }

    fn probe(&self, timeout: Duration) -> Result<(), String> {
        match self.engine.wait_for_probe(timeout) {
            ProbeStatus::Passed => Ok(()),
            ProbeStatus::Pending => {
                Err(format!("the probe page did not report within {timeout:?}"))
            }
            ProbeStatus::Failed(why) => Err(why),
        }
    }

    /// What Servo 0.7 gives every view, as this crate sets it up: temporary storage shared by
    /// every Surface of the process (no context of its own), no process sandbox, no devtools, no
    /// popups without a gesture, no system clipboard (a clipboard per Surface), the console kept
    /// off stdout (its lines are the bridge's channel).
    fn hardening(&self) -> Hardening {
        let mut hardening = Hardening::default();
        hardening.ephemeral = true;
        hardening.media_requires_gesture = true;
        hardening
    }

    fn open(
        &self,
        window: Window,
        server: SurfaceServer,
        _config: &ViewConfig,
        events: Box<dyn Fn(ViewEvent)>,
    ) -> Result<Box<dyn EngineView>, String> {
        let size = window.inner_size();
        let window = SurfaceWindow::from_window(window).map_err(|e| e.to_string())?;
        let events: Rc<dyn Fn(ViewEvent)> = Rc::from(events);
        let forward = Rc::clone(&events);
        let surface = self
            .engine
            .open(
                server,
                size.width.max(1),
                size.height.max(1),
                move |event| forward(event),
            )
            .map_err(|e| e.to_string())?;
        let view = Rc::new(HostedView {
            url: surface.url().to_owned(),
            surface,
            window_handle: Rc::clone(window.window()),
            window: RefCell::new(window),
            presses: Cell::new(0),
            events,
        });
        self.views.borrow_mut().push(Rc::downgrade(&view));
        Ok(Box::new(ServoView(view)))
    }

    fn spin(&self) {
        self.engine.spin();
        let live: Vec<Rc<HostedView>> = {
            let mut views = self.views.borrow_mut();
            views.retain(|v| v.strong_count() > 0);
            views.iter().filter_map(Weak::upgrade).collect()
        };
        for view in live {
            if let Err(e) = view.window.borrow_mut().present(&view.surface) {
                tracing::debug!("a Surface's frame was not shown: {e}");
            }
        }
    }
}

impl std::fmt::Debug for ServoHostEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServoHostEngine")
            .field("engine", &self.engine)
            .finish_non_exhaustive()
    }
}

/// A Surface's Servo view and its window.
struct HostedView {
    url: String,
    surface: ServoSurface,
    window_handle: Rc<Window>,
    window: RefCell<SurfaceWindow>,
    presses: Cell<u64>,
    /// The view's closure, to report what the engine itself cannot (a termination).
    events: Rc<dyn Fn(ViewEvent)>,
}

/// The host's handle on a [`HostedView`]; dropping it closes the view.
struct ServoView(Rc<HostedView>);

impl EngineView for ServoView {
    fn url(&self) -> &str {
        &self.0.url
    }

    fn deliver_state(&self, state_json: &str) -> Result<(), String> {
        self.0
            .surface
            .deliver_state(state_json)
            .map_err(|e| e.to_string())
    }

    fn restore_document(&self) -> Result<(), String> {
        self.0.surface.restore_document();
        Ok(())
    }

    fn replace_document(&self, document: SurfaceDocument) -> Result<(), String> {
        self.0
            .surface
            .replace_document(document)
            .map_err(|e| e.to_string())
    }

    fn snapshot_png(&self, done: Box<dyn FnOnce(Result<Vec<u8>, String>)>) {
        self.0
            .surface
            .screenshot_png(move |result| done(result.map_err(|e| e.to_string())));
    }

    fn screen_pixels(&self) -> Result<WindowPixels, String> {
        let window = self.0.window.borrow();
        let frame = window
            .frame()
            .ok_or_else(|| "the window has shown no frame yet".to_owned())?;
        let rgb = frame
            .pixels()
            .flat_map(|pixel| [pixel.0[0], pixel.0[1], pixel.0[2]])
            .collect();
        WindowPixels::new(frame.width(), frame.height(), rgb)
            .ok_or_else(|| "the frame's size does not match its pixels".to_owned())
    }

    fn ping(&self, done: Box<dyn FnOnce()>) {
        self.0.surface.evaluate("0", move |_| done());
    }

    /// Servo 0.7 runs every page in the host's process and cannot end one script thread: the
    /// page stays (its thread busy) until the view is dropped; the view reports itself ended
    /// so that the host recovers the Surface as after a termination (`FEATURES.md`, Servo).
    fn terminate(&self) {
        tracing::warn!("Servo cannot end a Surface's script thread; the view is given up");
        (self.0.events)(ViewEvent::Unresponsive);
    }

    fn presses(&self) -> u64 {
        self.0.presses.get()
    }

    fn window(&self) -> &Window {
        &self.0.window_handle
    }

    fn handle_window_event(&self, window_id: WindowId, event: &WindowEvent<'_>) -> bool {
        let pressed = match event {
            WindowEvent::MouseInput { state, .. } => *state == ElementState::Pressed,
            WindowEvent::KeyboardInput { event, .. } => event.state == ElementState::Pressed,
            _ => false,
        };
        let ours =
            self.0
                .window
                .borrow_mut()
                .handle_window_event(&self.0.surface, window_id, event);
        if ours && pressed {
            self.0.presses.set(self.0.presses.get() + 1);
        }
        ours
    }

    fn resize(&self, bounds: Rect) {
        let scale = self.0.window_handle.scale_factor();
        let width = (f64::from(bounds.width) * scale).round() as u32;
        let height = (f64::from(bounds.height) * scale).round() as u32;
        self.0.surface.resize(width, height);
    }
}
