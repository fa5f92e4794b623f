//! The shell: one configuration for every Surface webview, the fail-closed isolation gate in
//! front of them (R-SEC-8) and the cap on how many are open at once.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::{Rc, Weak};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::windows::WindowMaker;
use lineup_surface_runtime::{SurfaceServer, SurfaceToken};

use crate::config::{Placement, ViewConfig};
use crate::engine::SurfaceEngine;
use crate::engine_view::EngineSurface;
use crate::error::ShellError;
use crate::event::ViewEvent;
use crate::gate::Gate;
use crate::platform::PlatformView;
use crate::pool::Pooled;
use crate::running_probe::RunningProbe;
use crate::view::{Slot, SurfaceView};
use crate::view_start::ViewStart;

/// Opens Surface webviews, once the isolation probe has shown that their policy really applies.
///
/// [`Shell::start`] loads a probe document through the same path every Surface takes, in a hidden
/// window. Until its script has reported an opaque origin, a blocked `eval` and unavailable
/// storage, and the engine has confirmed the hardening (own ephemeral context, devtools as
/// configured, and with the web-process sandbox on, web processes in a namespace of their own;
/// with the refusing network proxy on, the page's preconnect to a loopback listener the probe
/// owns never arrives there, but at the probe view's own proxy, a second listener),
/// [`Shell::open`] refuses with [`ShellError::ProbePending`]; if any check fails or the probe
/// takes longer than [`ViewConfig::probe_timeout`], it refuses for good with
/// [`ShellError::ProbeFailed`]. The event loop must run for the probe to progress.
///
/// [`Shell::open_gated`] does not wait for the probe: the view (its context, window and
/// sandboxed web process) is created at once, but every request for its document is held until
/// the verdict, then served if the probe passed or refused if it failed, so no guest byte is
/// served before the probe passed (R-SEC-8).
pub struct Shell {
    config: ViewConfig,
    live: Rc<Cell<usize>>,
    probe: RefCell<ProbeState>,
    /// The gates of views opened while the probe runs, settled by its verdict.
    gates: RefCell<Vec<Weak<Gate>>>,
    /// Started, untaken views ([`ViewConfig::with_warm_pool`]), oldest first.
    pool: RefCell<VecDeque<Pooled>>,
    /// How many views were taken from the pool.
    taken: Cell<u64>,
    /// A passed probe whose view is not closed yet: see [`Shell::close_finished_probe`].
    finished: RefCell<Option<Box<RunningProbe>>>,
    /// The engine the embedder brought in place of the platform's
    /// ([`Shell::start_with_engine`]).
    engine: Option<Rc<dyn SurfaceEngine>>,
    /// Set by the engine's waker, cleared by [`Shell::spin_engine`].
    engine_woke: Arc<AtomicBool>,
    /// When the engine last spun.
    engine_spun: Cell<Option<Instant>>,
}

/// How long [`Shell::spin_engine`] lets an engine that did not wake the loop wait at most.
const ENGINE_TICK: Duration = Duration::from_millis(100);

/// Where the isolation probe stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProbeStatus {
    /// Still waiting for the probe page's report.
    Pending,
    /// Every check passed; Surfaces are served.
    Passed,
    /// A check failed or the probe timed out; no Surface will be served.
    Failed(String),
}

enum ProbeState {
    Running(Box<RunningProbe>),
    Passed,
    Failed(String),
}

impl Shell {
    /// Creates the shell and starts the isolation probe.
    pub fn start(target: &dyn WindowMaker, config: ViewConfig) -> Result<Self, ShellError> {
        let probe = RunningProbe::start(target, &config)?;
        Ok(Self {
            config,
            live: Rc::new(Cell::new(0)),
            probe: RefCell::new(ProbeState::Running(Box::new(probe))),
            gates: RefCell::new(Vec::new()),
            pool: RefCell::new(VecDeque::new()),
            taken: Cell::new(0),
            finished: RefCell::new(None),
            engine: None,
            engine_woke: Arc::default(),
            engine_spun: Cell::new(None),
        })
    }

    /// Creates a shell whose Surfaces `engine` shows, each in a window of its own, in place of
    /// the platform's webviews. `wake` wakes the event loop, which then calls
    /// [`Shell::spin_engine`]. The engine's isolation probe runs to its verdict here, within
    /// [`ViewConfig::probe_timeout`] (R-SEC-8): a failed probe is this call's error, so no
    /// Surface is ever served by an engine that failed it. No warm pool and no child views.
    pub fn start_with_engine(
        config: ViewConfig,
        engine: Rc<dyn SurfaceEngine>,
        wake: Box<dyn Fn() + Send + Sync>,
    ) -> Result<Self, ShellError> {
        let engine_woke: Arc<AtomicBool> = Arc::default();
        let woke = Arc::clone(&engine_woke);
        engine.set_waker(Box::new(move || {
            // Many wakes before the loop turns are one spin.
            if !woke.swap(true, Ordering::SeqCst) {
                wake();
            }
        }));
        engine
            .probe(config.probe_timeout())
            .map_err(|reason| ShellError::ProbeFailed {
                reason: format!("{}: {reason}", engine.name()),
            })?;
        let hardening = engine.hardening();
        tracing::warn!(
            engine = engine.name(),
            ?hardening,
            "isolation probe passed (R-SEC-8); Surfaces are shown by an engine other than the \
             platform's, with the hardening it reports"
        );
        Ok(Self {
            config,
            live: Rc::new(Cell::new(0)),
            probe: RefCell::new(ProbeState::Passed),
            gates: RefCell::new(Vec::new()),
            pool: RefCell::new(VecDeque::new()),
            taken: Cell::new(0),
            finished: RefCell::new(None),
            engine: Some(engine),
            engine_woke,
            engine_spun: Cell::new(None),
        })
    }

    /// The name of the engine the embedder brought, if any ([`Shell::start_with_engine`]).
    pub fn engine_name(&self) -> Option<String> {
        self.engine.as_ref().map(|engine| engine.name().to_owned())
    }

    /// Lets the embedder's engine do its pending work and hand out its views' events, when it
    /// woke the loop since it last spun or a tick (100 ms) has passed; nothing without an
    /// engine. The host calls it on every turn of the loop: a page flooding the host with
    /// messages makes many turns but not as many spins.
    pub fn spin_engine(&self) {
        let Some(engine) = &self.engine else {
            return;
        };
        let woke = self.engine_woke.swap(false, Ordering::SeqCst);
        let due = self
            .engine_spun
            .get()
            .is_none_or(|at| at.elapsed() >= ENGINE_TICK);
        if woke || due {
            self.engine_spun.set(Some(Instant::now()));
            engine.spin();
        }
    }

    /// The configuration every view of this shell gets.
    pub fn config(&self) -> &ViewConfig {
        &self.config
    }

    /// Where the probe stands; a finished probe's view is closed here.
    pub fn probe_status(&self) -> ProbeStatus {
        let mut state = self.probe.borrow_mut();
        let outcome = match &*state {
            ProbeState::Passed => return ProbeStatus::Passed,
            ProbeState::Failed(reason) => return ProbeStatus::Failed(reason.clone()),
            ProbeState::Running(probe) => probe.outcome(Instant::now(), &self.config),
        };
        let Some(outcome) = outcome else {
            return ProbeStatus::Pending;
        };
        let finished = match &outcome {
            Ok(()) => ProbeState::Passed,
            Err(reason) => ProbeState::Failed(reason.clone()),
        };
        let network_seen = match &*state {
            ProbeState::Running(probe) => probe.network_seen(),
            _ => String::new(),
        };
        let previous = std::mem::replace(&mut *state, finished);
        drop(state);
        if outcome.is_err() {
            // Nothing will be served: the started views go.
            self.pool.borrow_mut().clear();
        }
        // R-SEC-8: the documents of views opened meanwhile are served only now, and only if
        // the probe passed.
        let gates = std::mem::take(&mut *self.gates.borrow_mut());
        for gate in gates.iter().filter_map(Weak::upgrade) {
            if outcome.is_ok() {
                gate.pass();
            } else {
                gate.refuse();
            }
        }
        if let ProbeState::Running(probe) = previous {
            if outcome.is_ok() {
                // Closing a view takes the GTK thread and a core while the Surfaces just
                // served commit their documents: it waits for a quiet moment.
                *self.finished.borrow_mut() = Some(probe);
            } else {
                probe.close();
            }
        }
        match outcome {
            Ok(()) => {
                tracing::info!(network = %network_seen, "isolation probe passed (R-SEC-8)");
                ProbeStatus::Passed
            }
            Err(reason) => {
                tracing::error!(%reason, "isolation probe failed; no surface will be served (R-SEC-8)");
                ProbeStatus::Failed(reason)
            }
        }
    }

    /// A control for the probe's race (R-SEC-8): every attempt of a probe still running is held
    /// between the listing of its web processes and the read of their mount namespaces, and
    /// `hold` is given the pids listed, as a test that ends them meanwhile needs, or that adds
    /// a process of its own to be checked.
    #[cfg(feature = "test-controls")]
    pub fn hold_probe_check_for_test(
        &self,
        hold: impl FnMut(&mut std::collections::HashSet<u32>) + 'static,
    ) {
        if let ProbeState::Running(probe) = &*self.probe.borrow() {
            probe.hold(Box::new(hold));
        }
    }

    /// A control for what waits on the probe (R-SEC-8): a probe still running stays undecided
    /// (`None`) or fails with `failure`, whatever its page reports, from the next
    /// [`Shell::probe_status`] on.
    #[cfg(feature = "test-controls")]
    pub fn force_probe_for_test(&self, failure: Option<String>) {
        if let ProbeState::Running(probe) = &*self.probe.borrow() {
            probe.force(failure);
        }
    }

    /// Whether the probe passed (`false` while it runs); its failure as the error that refuses
    /// every view (R-SEC-8).
    fn probe_passed(&self) -> Result<bool, ShellError> {
        match self.probe_status() {
            ProbeStatus::Passed => Ok(true),
            ProbeStatus::Pending => Ok(false),
            ProbeStatus::Failed(reason) => Err(ShellError::ProbeFailed { reason }),
        }
    }

    /// Closes the view of a probe that passed, if it is still open. A passed probe's view
    /// stays open (its page idle) until this is called, so that its close does not compete
    /// with the first Surfaces' documents, served in the same moment; call it once those
    /// Surfaces are ready. [`Shell::fill_pool`] calls it too; dropping the shell closes it.
    pub fn close_finished_probe(&self) {
        if let Some(probe) = self.finished.borrow_mut().take() {
            probe.close();
        }
    }

    /// Opens a hardened webview for `server`'s document at `placement`; `events` receives
    /// everything the view reports, and is the view's identity (R-SEC-4).
    ///
    /// Refused while the probe is pending or after it failed, and when
    /// [`ViewConfig::max_views`] views are open.
    pub fn open(
        &self,
        target: &dyn WindowMaker,
        server: SurfaceServer,
        placement: Placement<'_>,
        events: impl Fn(ViewEvent) + 'static,
    ) -> Result<SurfaceView, ShellError> {
        if !self.probe_passed()? {
            return Err(ShellError::ProbePending);
        }
        self.create(
            target,
            server,
            placement,
            ViewStart::Surface,
            Box::new(events),
            Gate::open(),
        )
    }

    /// Like [`Shell::open`], but while the probe is pending the view is created at once and its
    /// document held: no request of it is answered until the probe's verdict, then every one is
    /// served if the probe passed and refused if it failed (the page never runs; the owner
    /// closes the view when it hears of the failure). Refused after the probe failed, and when
    /// [`ViewConfig::max_views`] views are open.
    ///
    /// This takes the probe out of the first Surface's way: the probe's web process and the
    /// Surface's start side by side instead of one after the other.
    pub fn open_gated(
        &self,
        target: &dyn WindowMaker,
        server: SurfaceServer,
        placement: Placement<'_>,
        events: impl Fn(ViewEvent) + 'static,
    ) -> Result<SurfaceView, ShellError> {
        let passed = self.probe_passed()?;
        if self.engine.is_some() {
            return self.create(
                target,
                server,
                placement,
                ViewStart::Surface,
                Box::new(events),
                Gate::open(),
            );
        }
        let child = matches!(placement, Placement::Child { .. });
        let pooled = self
            .pool
            .borrow()
            .front()
            .is_some_and(|p| &p.token == server.token() && p.is_child() == child);
        if !pooled {
            return self.create_gated(target, server, placement, ViewStart::Surface, events);
        }
        let slot = Slot::take(&self.live, self.config.max_views())?;
        let pooled = self
            .pool
            .borrow_mut()
            .pop_front()
            .ok_or(ShellError::NoContainer)?;
        let (inner, gate) = pooled.bind(server, &placement, Box::new(events))?;
        self.taken.set(self.taken.get() + 1);
        self.settle(&gate, passed);
        Ok(SurfaceView::new(inner, slot))
    }

    /// Opens an MCP App view (R-MCP-7) for `server`, whose document is
    /// [`SurfaceDocument::mcp_app`](lineup_surface_runtime::SurfaceDocument::mcp_app)'s, at
    /// `placement`; `events` receives everything the view reports, and is the view's identity
    /// (R-SEC-4).
    ///
    /// The view is hardened as a Surface's is (its own context and sandboxed web process, the
    /// network wall, no navigation, no popups, the same settings and policy handlers), but it has
    /// no `LineUpSurface` bridge and no page-world message handler at all: its one way to the
    /// host is a relay in a script world of the host's own, in the top frame only, which passes
    /// on what the view's own frame posts to `window.parent` if it is one JSON-RPC 2.0 object
    /// within [`ViewConfig::max_mcp_message_bytes`], as [`ViewEvent::McpMessage`], and reports
    /// what it drops as [`ViewEvent::McpDropped`]. A listener in another such world of every
    /// frame reports each blocked load as [`ViewEvent::McpBlocked`] (R-MCP-10). The host's
    /// messages go to the view with [`SurfaceView::post_to_mcp_view`].
    ///
    /// Like [`Shell::open_gated`], while the probe is pending the view is created at once and
    /// its document held until the verdict (R-SEC-8). No warm-pool view is used. Refused after
    /// the probe failed, when [`ViewConfig::max_views`] views are open, and with an embedder's
    /// engine ([`ShellError::Unsupported`]).
    ///
    /// ## Platform-specific
    /// Linux: WebKitGTK script worlds (`webkit_user_script_new_for_world`,
    /// `webkit_user_content_manager_register_script_message_handler_in_world`).
    pub fn open_mcp_app(
        &self,
        target: &dyn WindowMaker,
        server: SurfaceServer,
        placement: Placement<'_>,
        events: impl Fn(ViewEvent) + 'static,
    ) -> Result<SurfaceView, ShellError> {
        if self.engine.is_some() {
            return Err(ShellError::Unsupported(
                "MCP App views need the platform's webview, not an embedder's engine",
            ));
        }
        self.create_gated(target, server, placement, ViewStart::McpApp, events)
    }

    /// A cold view whose document is held until the probe passed, if it has not yet.
    fn create_gated(
        &self,
        target: &dyn WindowMaker,
        server: SurfaceServer,
        placement: Placement<'_>,
        start: ViewStart,
        events: impl Fn(ViewEvent) + 'static,
    ) -> Result<SurfaceView, ShellError> {
        let passed = self.probe_passed()?;
        let gate = if passed { Gate::open() } else { Gate::held() };
        let view = self.create(
            target,
            server,
            placement,
            start,
            Box::new(events),
            Rc::clone(&gate),
        )?;
        self.settle(&gate, passed);
        Ok(view)
    }

    /// Opens `gate` now if the probe passed, else leaves it to the probe's verdict (R-SEC-8).
    fn settle(&self, gate: &Rc<Gate>, passed: bool) {
        if passed {
            gate.pass();
        } else {
            self.gates.borrow_mut().push(Rc::downgrade(gate));
        }
    }

    /// The token of the pool view the next [`Shell::open_gated`] takes, if one is ready: the
    /// Surface's server must be made for it. Views whose web process ended while they waited
    /// are dropped here.
    pub fn pooled_token(&self) -> Option<SurfaceToken> {
        let mut pool = self.pool.borrow_mut();
        pool.retain(Pooled::usable);
        pool.front().map(|p| p.token.clone())
    }

    /// How many started views wait in the pool.
    pub fn pooled(&self) -> usize {
        self.pool.borrow().len()
    }

    /// How many views Surfaces took from the pool so far (each once).
    pub fn pool_taken(&self) -> u64 {
        self.taken.get()
    }

    /// Starts one pool view if the pool is below [`ViewConfig::warm_pool`], the open and
    /// pooled views together stay within [`ViewConfig::max_views`] (the process cap), and the
    /// probe has not failed; returns whether the pool still wants more. The view gets a window
    /// of its own, or, with `parent`, is a hidden child view of it, for Surfaces placed there
    /// ([`Placement::Child`]); give every call of one shell the same `parent`.
    pub fn fill_pool(
        &self,
        target: &dyn WindowMaker,
        parent: Option<&tao::window::Window>,
    ) -> bool {
        self.close_finished_probe();
        if self.engine.is_some() {
            return false;
        }
        let want = self.config.warm_pool();
        let have = self.pooled();
        if have >= want || matches!(self.probe_status(), ProbeStatus::Failed(_)) {
            return false;
        }
        if self.live.get() + have >= self.config.max_views() {
            return false;
        }
        match Pooled::start(target, &self.config, parent) {
            Ok(view) => self.pool.borrow_mut().push_back(view),
            Err(e) => {
                tracing::warn!("cannot start a pool view: {e}");
                return false;
            }
        }
        self.pooled() < want
    }

    fn create(
        &self,
        target: &dyn WindowMaker,
        server: SurfaceServer,
        placement: Placement<'_>,
        start: ViewStart,
        events: Box<dyn Fn(ViewEvent)>,
        gate: Rc<Gate>,
    ) -> Result<SurfaceView, ShellError> {
        let slot = Slot::take(&self.live, self.config.max_views())?;
        if let Some(engine) = &self.engine {
            let inner = EngineSurface::open(
                engine.as_ref(),
                target,
                server,
                &self.config,
                placement,
                events,
            )?;
            return Ok(SurfaceView::from_engine(inner, slot));
        }
        let inner =
            PlatformView::new(target, server, &self.config, placement, start, events, gate)?;
        Ok(SurfaceView::new(inner, slot))
    }

    /// How many views of this shell are open.
    pub fn open_views(&self) -> usize {
        self.live.get()
    }
}

impl std::fmt::Debug for Shell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shell")
            .field("config", &self.config)
            .field("open_views", &self.live.get())
            .finish_non_exhaustive()
    }
}
