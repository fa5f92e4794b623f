//! The embedding API: a [`Host`] joins the protocol's session table ([`Sessions`], one
//! [`Session`] per conversation, R-SES-1) to the [`Shell`]'s webviews and the embedder's
//! callbacks, on the event-loop thread; a [`HostHandle`] feeds it from any thread.

use std::cell::Cell;
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use lineup_host_core::{
    Answer, CapabilityEffect, Clock, CloseReason, ComponentEffect, ConversationId, Diagnostic,
    Effect, GoneReason, InlineBundle, InstanceId, Limits, PageInput, PartyId, SessionEffects,
    SessionId, Sessions, SurfaceKey, SurfaceOpen, Ticket, BRIDGE_NAMESPACE,
};
use lineup_surface_runtime::{
    DocumentLayout, DocumentOptions, SurfaceDocument, SurfaceServer, SCHEME,
};
use lineup_webview_shell::tao::dpi::LogicalSize;
use lineup_webview_shell::tao::event::{Event, WindowEvent};
use lineup_webview_shell::tao::event_loop::{
    ControlFlow, EventLoop, EventLoopProxy, EventLoopWindowTarget,
};

use crate::capabilities::CapabilityDriver;
use crate::delegate::{ChildSlot, HostDelegate, Refusal};
use crate::watchdog::Watchdog;
use lineup_webview_shell::ShellError;
use lineup_webview_shell::SurfaceView;
use lineup_webview_shell::ViewEvent;
use lineup_webview_shell::{Contrast, Placement, Rect, Theme};
use lineup_webview_shell::{ProbeStatus, Shell};

mod activity;
mod builder;
mod factory;
mod handle;
mod link;
mod policy;
mod pool;
mod recovery;
mod standby;

pub use builder::{DangerousHostBuilder, HostBuilder};
use builder::{Layout, OutboundFn};
use factory::*;
use handle::*;
pub use handle::{event_loop, HostClosed, HostEvent, HostEventLoop, HostHandle};
use link::AnnounceDone;
use recovery::Kept;
use standby::HostStandby;

struct MonotonicClock(Instant);

impl Clock for MonotonicClock {
    fn monotonic(&self) -> Duration {
        self.0.elapsed()
    }
}

struct Live {
    key: SurfaceKey,
    view: SurfaceView,
    backlog: Rc<Backlog>,
    /// Where the bundle's parts are in the document, to map diagnostics back (R-DIAG-1).
    layout: DocumentLayout,
    /// The height the page last asked for, clamped; honoured in child-view placement.
    requested_height: Option<u32>,
    /// Documents the embedder loaded ([`HostHandle::reload_bundle`]) whose commit is still to
    /// come; those commits do not count toward the reload-loop bound (R-UI-10).
    embedder_reloads: u32,
    /// The bundle the embedder last reloaded the Surface with, if any: what a reopen shows.
    reloaded: Option<InlineBundle>,
    /// When the view was created, until its page first said `ready`: the warm pool is not
    /// refilled meanwhile (#12).
    opening_since: Option<Instant>,
}

/// Where a Surface's webview is kept: instance ids are scoped to their session (R-SES-1).
fn slot(key: &SurfaceKey) -> (SessionId, InstanceId) {
    (key.session, key.instance.clone())
}

/// How a diagnostic the bridge posted starts; the page gains nothing by imitating it, since the
/// message is then decoded as the diagnostic it claims to be (R-DIAG-1).
fn is_diagnostic(raw: &str) -> bool {
    raw.strip_prefix("{\"namespace\":\"")
        .and_then(|rest| rest.strip_prefix(BRIDGE_NAMESPACE))
        .is_some_and(|rest| rest.starts_with("\",\"type\":\"diagnostic\""))
}

/// A view's bridge messages on their way through the event loop: a page that posts faster than
/// the host handles is cut off at `Limits::max_pending_bridge_messages`, so it can neither grow
/// memory nor starve the agent's envelopes queued behind it.
///
/// Diagnostics have a waiting cap of their own (`Limits::max_pending_diagnostics`), so a page
/// that logs a lot loses diagnostics, never events (R-DIAG-1).
#[derive(Default)]
struct Backlog {
    in_flight: Cell<usize>,
    dropped: Cell<u64>,
    diagnostics_in_flight: Cell<usize>,
    diagnostics_dropped: Cell<u64>,
}

/// Hosts the Surfaces of many conversations at once (R-SES-1): routes what the agents send to
/// the session of its `conversation_id` (established when an accepted envelope names a new one,
/// or opened through [`Host::open_session`]), opens an isolated webview per Surface, validates
/// what the pages post, and reports to the embedder. Instance ids are scoped to their session;
/// every webview is keyed by a [`SurfaceKey`] that names its session.
///
/// A host lives on the event-loop thread, one host per event loop (tao allows one loop per
/// process, and [`HostEvent`]s name no host); one host serves every conversation. Feed it through a [`HostHandle`] from any thread, and
/// either let [`Host::run`] drive the loop, or call [`Host::handle_event`] from a loop the
/// embedder runs.
///
/// ```no_run
/// use lineup_host::{event_loop, HostBuilder};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let event_loop = event_loop()?;
/// let host = HostBuilder::new()
///     .on_outbound(|message| println!("{}", message.to_json()))
///     .build(&event_loop)?;
/// let handle = host.handle();
/// std::thread::spawn(move || {
///     let open = br#"{"v":1,"id":"m1","type":"lineup.v1.ui.open","conversation_id":"c1",
///       "sender":{"kind":"agent","id":"a1"},"payload":{"instance_id":"w1","app":{
///       "id":"com.example.w","name":"W","version":"1.0.0",
///       "html":"<button onclick=\"LineUpSurface.event('go',{})\">go</button>","css":"","js":""}}}"#;
///     let _ = handle.send_inbound(open.to_vec());
/// });
/// host.run(event_loop)?; // returns after HostHandle::shutdown
/// # Ok(())
/// # }
/// ```
pub struct Host {
    sessions: Sessions,
    shell: Shell,
    /// Carries out the capability kernels' effects, when capabilities are enabled.
    driver: Option<CapabilityDriver>,
    /// Effects made outside the event loop (capability recovery, registrations, sessions opened
    /// through the API), applied at the next event.
    pending: VecDeque<SessionEffects>,
    /// Sessions end after this long idle ([`HostBuilder::end_idle_sessions_after`]).
    session_idle: Option<Duration>,
    proxy: EventLoopProxy<HostEvent>,
    /// Shared with every [`HostHandle`]: inbound lines sent and not handled yet.
    inbound: Arc<AtomicUsize>,
    document: DocumentOptions,
    /// Read at each open (R-UI-11).
    contrast: Contrast,
    /// The app center, watched for changes ([`HostBuilder::app_center`]).
    apps: Option<AppsWatch>,
    /// [`HostBuilder::capability_policy`].
    policy: Option<policy::PolicyWatch>,
    window_size: (u32, u32),
    resize_bounds: (u32, u32),
    layout: Layout,
    outbound: Option<OutboundFn>,
    delegate: Box<dyn HostDelegate>,
    /// Every open webview, by session and instance (instance ids are scoped to their session).
    views: BTreeMap<(SessionId, InstanceId), Live>,
    /// Surfaces whose views were created while the probe ran, their documents held (R-SEC-8).
    held: Vec<SurfaceKey>,
    probe_reported: bool,
    exit: bool,
    /// [`HostHandle::shutdown_when_last_closed`] was asked: exit once `views` is empty.
    exit_when_empty: bool,
    /// Whether lost Surfaces are reopened ([`HostBuilder::reopen_lost_surfaces`]).
    reopen: bool,
    /// The hang watchdog of every open view (R-UI-12).
    watchdog: Watchdog,
    /// The standby screen over the parent window ([`HostBuilder::standby`]).
    standby: Option<HostStandby>,
    /// [`HostBuilder::ignore_parent_close`].
    ignore_parent_close: bool,
    /// The activity notice's window, when [`HostBuilder::activity_notices`] is on.
    notice: Option<lineup_webview_shell::NoticeWindow>,
    /// Effects waiting for [`Host::interpret`], in order ([`Host::apply`]).
    work: VecDeque<(SessionId, Effect, Option<u64>)>,
    /// Whether [`Host::apply`] is draining `work` further up the stack.
    draining: bool,
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Host")
            .field("sessions", &self.sessions)
            .field("views", &self.views.len())
            .finish_non_exhaustive()
    }
}

impl Host {
    /// A handle that feeds this host from any thread.
    pub fn handle(&self) -> HostHandle {
        HostHandle {
            proxy: self.proxy.clone(),
            inbound: Arc::clone(&self.inbound),
        }
    }

    /// The limits in force, per session and in total.
    pub fn limits(&self) -> &Limits {
        self.sessions.limits()
    }

    /// The counters of every session, ended ones included, and of what the session table
    /// refused itself, added up.
    pub fn stats(&self) -> lineup_host_core::Stats {
        self.sessions.stats()
    }

    /// The session table: which conversations have a session, and each session's state.
    pub fn sessions(&self) -> &Sessions {
        &self.sessions
    }

    /// Opens a session for `conversation`, vouching for `agent` (R-SES-1; `None`: the builder's
    /// [`HostBuilder::vouched_agent`]): an envelope of it from another `sender.id` is refused
    /// `wrong_sender`, and remembered grants belong to that identity. With capabilities on, its
    /// `client.inventory` and `app.list` go out at the next event (R-INV-1). Fails when the
    /// conversation has a session already or `Limits::max_sessions` are open.
    pub fn open_session(
        &mut self,
        conversation: ConversationId,
        agent: Option<PartyId>,
    ) -> Result<SessionId, lineup_host_core::UsageError> {
        let opened = self.sessions.open_session(conversation, agent)?;
        let id = opened.session;
        self.queue(opened);
        Ok(id)
    }

    /// Ends the session of `conversation`: its Surfaces close without a word upstream
    /// ([`CloseReason::SessionEnded`] to the delegate), its calls waiting for a decision are
    /// cancelled and their prompts withdrawn; calls already running finish and are recorded.
    /// Returns whether it was open; the rest happens at the next event.
    pub fn end_session(&mut self, conversation: &ConversationId) -> bool {
        match self.sessions.end_session(conversation) {
            Some(ended) => {
                self.queue(ended);
                true
            }
            None => false,
        }
    }

    /// The Surfaces whose webviews are open now.
    pub fn surfaces(&self) -> Vec<SurfaceKey> {
        self.views.values().map(|l| l.key.clone()).collect()
    }

    /// The webview of Surface `key`, while it is open.
    pub fn view(&self, key: &SurfaceKey) -> Option<&SurfaceView> {
        self.views
            .get(&slot(key))
            .filter(|l| l.key == *key)
            .map(|l| &l.view)
    }

    /// Where the isolation probe stands.
    pub fn probe_status(&self) -> ProbeStatus {
        self.shell.probe_status()
    }

    /// Changes the colour scheme Surfaces see; open Surfaces follow it live, through
    /// `prefers-color-scheme` and the `--lineup-color-*` custom properties (R-UI-11).
    ///
    /// ## Platform-specific
    /// Linux: GTK's process-wide dark-theme preference; see [`Theme`].
    pub fn set_theme(&mut self, theme: Theme) {
        lineup_webview_shell::apply_theme(theme);
    }

    /// Changes whether Surfaces opened from now on get the high-contrast values (R-UI-11);
    /// open Surfaces keep theirs until they open again.
    pub fn set_contrast(&mut self, contrast: Contrast) {
        self.contrast = contrast;
    }

    /// The document options of a Surface opening now: the contrast is read at open.
    fn document_options(&self) -> DocumentOptions {
        let high = match self.contrast {
            Contrast::High => true,
            Contrast::Normal => false,
            _ => lineup_webview_shell::desktop_high_contrast(),
        };
        self.document.clone().with_high_contrast(high)
    }

    /// Runs the event loop until [`HostHandle::shutdown`] (or, with child views, until the
    /// parent window is closed), then closes every Surface and returns.
    pub fn run(mut self, mut event_loop: EventLoop<HostEvent>) -> Result<(), ShellError> {
        use lineup_webview_shell::tao::platform::run_return::EventLoopExtRunReturn;
        event_loop.run_return(|event, target, flow| {
            *flow = self.handle_event(event, target);
        });
        self.close_all();
        Ok(())
    }

    /// Handles one inbound envelope (agent → client) right away, on the event-loop thread.
    /// Other threads use [`HostHandle::send_inbound`] instead.
    pub fn handle_inbound(&mut self, bytes: &[u8], target: &EventLoopWindowTarget<HostEvent>) {
        let effects = self.sessions.handle_inbound(bytes);
        self.apply(effects, None, target);
    }

    /// Handles one event of a loop the embedder runs; returns the control flow the host needs
    /// (`Exit` once it was shut down).
    pub fn handle_event(
        &mut self,
        event: Event<'_, HostEvent>,
        target: &EventLoopWindowTarget<HostEvent>,
    ) -> ControlFlow {
        let idle_turn = matches!(event, Event::MainEventsCleared);
        match event {
            Event::UserEvent(HostEvent(inner)) => self.handle_user_event(inner, target),
            Event::WindowEvent {
                window_id, event, ..
            } => self.handle_window_event(window_id, &event, target),
            _ => {}
        }
        self.poll_probe(target);
        if self.probe_reported && !self.opening() {
            // The probe's view, kept while the first Surfaces committed their documents.
            self.shell.close_finished_probe();
        }
        let mut wakeup = self.poll_capabilities(target);
        if let Some(at) = self.poll_apps(target) {
            wakeup = Some(wakeup.map_or(at, |w| w.min(at)));
        }
        if let Some(at) = self.poll_policy(target) {
            wakeup = Some(wakeup.map_or(at, |w| w.min(at)));
        }
        if let Some(at) = self.poll_watchdog(target) {
            wakeup = Some(wakeup.map_or(at, |w| w.min(at)));
        }
        if let Some(at) = self.refill_pool(idle_turn, target) {
            wakeup = Some(wakeup.map_or(at, |w| w.min(at)));
        }
        if let Some(idle) = self.session_idle {
            for ended in self.sessions.end_idle(idle) {
                self.apply(ended, None, target);
            }
            if let Some(next) = self.sessions.next_idle_check(idle) {
                let at = Instant::now() + next.max(Duration::from_millis(10));
                wakeup = Some(wakeup.map_or(at, |w| w.min(at)));
            }
        }
        if self.exit_when_empty && !self.exit && self.views.is_empty() {
            tracing::info!("the last surface closed; exiting");
            self.close_all();
            self.exit = true;
        }
        if self.exit {
            ControlFlow::Exit
        } else if self.probe_reported {
            wakeup.map_or(ControlFlow::Wait, ControlFlow::WaitUntil)
        } else {
            // The probe's verdict gates the first Surfaces' documents (R-SEC-8): look often.
            let soon = Instant::now() + Duration::from_millis(10);
            ControlFlow::WaitUntil(wakeup.map_or(soon, |w| w.min(soon)))
        }
    }

    /// Looks at the app center's change marker when due; when it moved, every session hears of
    /// it. Returns when to look again.
    fn poll_apps(&mut self, target: &EventLoopWindowTarget<HostEvent>) -> Option<Instant> {
        let watch = self.apps.as_mut()?;
        let now = Instant::now();
        if now < watch.next {
            return Some(watch.next);
        }
        watch.next = now + APPS_POLL;
        let next = watch.next;
        let marker = watch.catalog.change_marker();
        if marker == watch.seen {
            return Some(next);
        }
        watch.seen = marker;
        for effects in self.sessions.apps_changed() {
            self.apply(effects, None, target);
        }
        Some(next)
    }

    /// Hands an answer to the capability kernel and carries out what follows.
    fn capability_answered(
        &mut self,
        session: SessionId,
        ticket: Ticket,
        answer: Answer,
        target: &EventLoopWindowTarget<HostEvent>,
    ) {
        match self.sessions.capability_answered(session, ticket, answer) {
            Ok(effects) => self.apply(effects, None, target),
            Err(e) => tracing::error!("capability answer refused by the kernel: {e}"),
        }
    }

    /// Applies what enabling capabilities produced, then expires and times out calls whose
    /// deadline passed; returns when to look again.
    fn poll_capabilities(&mut self, target: &EventLoopWindowTarget<HostEvent>) -> Option<Instant> {
        while let Some(effects) = self.pending.pop_front() {
            self.apply(effects, None, target);
        }
        let wait = self.sessions.next_capability_wakeup()?;
        if wait.is_zero() {
            for effects in self.sessions.poll_capabilities() {
                self.apply(effects, None, target);
            }
            return self
                .sessions
                .next_capability_wakeup()
                .map(|d| Instant::now() + d);
        }
        Some(Instant::now() + wait)
    }

    fn handle_user_event(&mut self, inner: Inner, target: &EventLoopWindowTarget<HostEvent>) {
        match inner {
            Inner::CapabilityAnswer {
                session,
                ticket,
                answer,
            } => {
                if let Some(driver) = self.driver.as_mut() {
                    driver.answered(session, ticket);
                }
                self.capability_answered(session, ticket, answer, target);
            }
            Inner::Inbound { line, bytes } => {
                // For `lineup-bench`'s patch profile: the event loop took the envelope.
                tracing::debug!(target: "lineup_phase", phase = "inbound_taken");
                self.inbound_handled();
                let effects = self.sessions.handle_inbound(&bytes.0);
                self.apply(effects, line, target);
            }
            Inner::Oversized { line, len } => {
                self.inbound_handled();
                let effects = self.sessions.handle_oversized(len);
                self.apply(effects, line, target);
            }
            Inner::EventsDropped { instance, count } => {
                for effects in self.sessions.events_dropped(&instance, count) {
                    self.apply(effects, None, target);
                }
            }
            Inner::OpenSession {
                conversation,
                agent,
            } => {
                if let Err(e) = self.open_session(conversation, agent) {
                    tracing::warn!("session not opened: {e}");
                }
            }
            Inner::Wake => {}
            Inner::StandbyIndicator(text) => {
                if let Some(standby) = &self.standby {
                    standby.set_indicator(text.as_deref());
                }
            }
            Inner::StandbyStatus(status) => {
                if let Some(standby) = &self.standby {
                    standby.set_status(&status);
                }
            }
            Inner::EndSession { conversation } => {
                if !self.end_session(&conversation) {
                    tracing::info!("conversation {conversation} has no session to end");
                }
            }
            Inner::View { key, event } => self.handle_view_event(key, event, target),
            Inner::Reload { instance, bundle } => self.reload_bundle(&instance, &bundle),
            Inner::Snapshot { instance, done } => match self.live_by_instance(&instance) {
                Some(live) => live.view.snapshot_png(done.0),
                None => (done.0)(Err(ShellError::Platform(format!(
                    "surface {instance} is not open"
                )))),
            },
            Inner::Shutdown => {
                self.close_all();
                self.exit = true;
            }
            Inner::ShutdownWhenEmpty => self.exit_when_empty = true,
            Inner::AnnounceInventory {
                conversation,
                agent,
                done,
            } => self.announce_inventory(conversation, agent, done, target),
            Inner::SurfacesGone {
                conversation,
                reason,
            } => self.surfaces_gone(conversation.as_ref(), reason, target),
            Inner::BinaryFrame { len } => {
                self.inbound_handled();
                let effects = self.sessions.handle_binary_frame(len);
                self.apply(effects, None, target);
            }
            Inner::Withdraw { name } => {
                self.withdraw_capability(&name, target);
            }
            Inner::SetVisible {
                agent,
                name,
                visible,
            } => self.set_capability_visible(&agent, &name, visible, target),
        }
    }

    /// [`HostHandle::reload_bundle`]: the new document under the view's same token.
    fn reload_bundle(&mut self, instance: &InstanceId, bundle: &InlineBundle) {
        let max = self.sessions.limits().max_bundle_bytes;
        if bundle.len() > max {
            tracing::warn!(
                "surface {instance}: reload refused: the bundle is {} bytes, the limit is {max} (R-UI-2)",
                bundle.len()
            );
            return;
        }
        let Some(key) = self.live_by_instance(instance).map(|live| live.key.clone()) else {
            tracing::warn!("surface {instance}: reload refused: it is not open");
            return;
        };
        let options = self.document_options();
        let Some(live) = self.views.get_mut(&slot(&key)) else {
            return;
        };
        let document = SurfaceDocument::assemble(bundle, &options);
        let layout = document.layout();
        match live.view.replace_document(document) {
            Ok(()) => {
                live.layout = layout;
                live.embedder_reloads += 1;
                live.reloaded = Some(bundle.clone());
            }
            Err(e) => tracing::warn!("surface {}: cannot reload: {e}", live.key),
        }
    }

    /// The first open Surface named `instance`, in any session (the preview has one).
    fn live_by_instance(&self, instance: &InstanceId) -> Option<&Live> {
        self.views
            .iter()
            .find(|((_, i), _)| i == instance)
            .map(|(_, live)| live)
    }

    fn inbound_handled(&self) {
        // Never below zero: only a HostHandle, which counted it, makes an inbound event.
        let _ = self
            .inbound
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
    }

    /// Queues effects made outside the loop's handling and wakes the loop to apply them.
    fn queue(&mut self, effects: SessionEffects) {
        self.pending.push_back(effects);
        let _ = self.proxy.send_event(HostEvent(Inner::Wake));
    }

    /// Runs `f` on the session `key` belongs to; nothing when that session has ended.
    /// Whether `key` names a Surface open now in a live session.
    fn is_current(&self, key: &SurfaceKey) -> bool {
        self.sessions
            .get(key.session)
            .is_some_and(|s| s.is_current(key))
    }

    fn handle_view_event(
        &mut self,
        key: SurfaceKey,
        event: ViewEvent,
        target: &EventLoopWindowTarget<HostEvent>,
    ) {
        let refusal = match event {
            ViewEvent::Ipc(raw) => {
                // For `lineup-bench`'s patch profile: the event loop took the bridge message.
                tracing::debug!(target: "lineup_phase", phase = "bridge_message_handled");
                let (mut flood, mut diagnostics) = (0, 0);
                if let Some(live) = self.views.get(&slot(&key)).filter(|l| l.key == key) {
                    let backlog = &live.backlog;
                    if is_diagnostic(&raw) {
                        let waiting = &backlog.diagnostics_in_flight;
                        waiting.set(waiting.get().saturating_sub(1));
                    } else {
                        backlog
                            .in_flight
                            .set(backlog.in_flight.get().saturating_sub(1));
                    }
                    flood = backlog.dropped.replace(0);
                    diagnostics = backlog.diagnostics_dropped.replace(0);
                }
                if flood > 0 {
                    let effects = self
                        .sessions
                        .handle_page(&key, PageInput::Flood { count: flood });
                    self.apply(effects, None, target);
                }
                if diagnostics > 0 {
                    let input = PageInput::DiagnosticsDropped { count: diagnostics };
                    let effects = self.sessions.handle_page(&key, input);
                    self.apply(effects, None, target);
                }
                let effects = self.sessions.handle_page(&key, PageInput::Message(&raw));
                return self.apply(effects, None, target);
            }
            ViewEvent::UserCloseRequested => {
                let effects = self.sessions.handle_page(&key, PageInput::UserClosed);
                return self.apply(effects, None, target);
            }
            ViewEvent::Crashed => {
                if self.is_current(&key) {
                    self.delegate.notify_crashed(&key);
                }
                return self.lost(key, GoneReason::Crashed, target);
            }
            // The hang watchdog's termination (R-UI-12).
            ViewEvent::Unresponsive => return self.lost(key, GoneReason::Unresponsive, target),
            // Never reopened: the page would only fill its ceiling again (R-UI-12).
            ViewEvent::MemoryExceeded => {
                tracing::warn!("surface {key}: web process ended at its memory ceiling");
                let effects = self
                    .sessions
                    .handle_page(&key, PageInput::Gone(GoneReason::Memory));
                return self.apply(effects, None, target);
            }
            ViewEvent::IpcTooLarge { len } => {
                let effects = self
                    .sessions
                    .handle_page(&key, PageInput::Oversized { len });
                return self.apply(effects, None, target);
            }
            ViewEvent::LoadFinished => return,
            ViewEvent::DocumentCommitted => {
                self.watchdog.committed(&key);
                let by_embedder = match self.views.get_mut(&slot(&key)) {
                    Some(live) if live.key == key && live.embedder_reloads > 0 => {
                        live.embedder_reloads -= 1;
                        true
                    }
                    _ => false,
                };
                let input = if by_embedder {
                    PageInput::EmbedderReloaded
                } else {
                    PageInput::DocumentCommitted
                };
                let effects = self.sessions.handle_page(&key, input);
                return self.apply(effects, None, target);
            }

            ViewEvent::PageCloseAttempt => Refusal::PageClose,
            ViewEvent::NavigationRefused(url) => Refusal::Navigation(url),
            ViewEvent::NewWindowRefused(url) => Refusal::NewWindow(url),
            ViewEvent::DownloadRefused(url) => Refusal::Download(url),
            ViewEvent::PermissionDenied => Refusal::Permission,
            ViewEvent::DialogSuppressed => Refusal::Dialog,
            ViewEvent::DropRefused => Refusal::Drop,
            ViewEvent::FileChooserRefused => Refusal::FileChooser,
        };
        if self.is_current(&key) {
            self.delegate.notify_refused(&key, &refusal);
        }
    }

    fn handle_window_event(
        &mut self,
        window_id: lineup_webview_shell::tao::window::WindowId,
        event: &WindowEvent<'_>,
        target: &EventLoopWindowTarget<HostEvent>,
    ) {
        if let Layout::Children(parent) = &self.layout {
            if parent.id() == window_id {
                match event {
                    WindowEvent::Resized(_) | WindowEvent::ScaleFactorChanged { .. } => {
                        self.relayout()
                    }
                    WindowEvent::CloseRequested if self.ignore_parent_close => {
                        tracing::info!("close request for the kiosk window ignored");
                    }
                    WindowEvent::CloseRequested => {
                        // The user closed the window that holds every Surface.
                        let keys: Vec<SurfaceKey> =
                            self.views.values().map(|l| l.key.clone()).collect();
                        for key in keys {
                            let effects = self.sessions.handle_page(&key, PageInput::UserClosed);
                            self.apply(effects, None, target);
                        }
                        self.exit = true;
                    }
                    _ => {}
                }
                return;
            }
        }
        for live in self.views.values() {
            if live.view.handle_window_event(window_id, event) {
                break;
            }
        }
    }

    fn poll_probe(&mut self, target: &EventLoopWindowTarget<HostEvent>) {
        if self.probe_reported {
            return;
        }
        match self.shell.probe_status() {
            ProbeStatus::Pending => {}
            ProbeStatus::Passed => {
                self.probe_reported = true;
                self.held.clear();
            }
            ProbeStatus::Failed(reason) => {
                self.probe_reported = true;
                self.delegate.notify_probe_failed(&reason);
                let why = format!("the isolation probe failed (R-SEC-8): {reason}");
                // Views created while the probe ran: their documents were never served (the
                // gate refused them); they close, and the agent hears the open failed.
                for key in std::mem::take(&mut self.held) {
                    let effects = self.sessions.handle_page(&key, PageInput::OpenFailed(&why));
                    self.apply(effects, None, target);
                    self.destroy(&key);
                }
            }
        }
    }

    /// Carries out the effects of one session (or of the session table); a capability effect's
    /// answer goes back to that session.
    fn apply(
        &mut self,
        effects: SessionEffects,
        line: Option<u64>,
        target: &EventLoopWindowTarget<HostEvent>,
    ) {
        let SessionEffects { session, effects } = effects;
        // Effects that arise while one is carried out (a capability answer's, a failed open's)
        // go first, before the rest of the batch, as a nested call would take them; the
        // outermost call drains the queue, so nothing recurses through here.
        for effect in effects.into_iter().rev() {
            self.work.push_front((session, effect, line));
        }
        if self.draining {
            return;
        }
        self.draining = true;
        while let Some((session, effect, line)) = self.work.pop_front() {
            self.interpret(session, effect, line, target);
        }
        self.draining = false;
    }

    /// The one interpreter of the kernel's effects: every [`Effect`] by name.
    fn interpret(
        &mut self,
        session: SessionId,
        effect: Effect,
        line: Option<u64>,
        target: &EventLoopWindowTarget<HostEvent>,
    ) {
        match effect {
            Effect::Component(effect) => self.component(effect, target),
            Effect::Open(open) => self.open(open, target),
            Effect::Replace { old, open } => {
                self.destroy(&old);
                self.delegate.notify_closed(&old, &CloseReason::Replaced);
                self.open(open, target);
            }
            Effect::Reopen { old, open, reason } => self.reopen(old, open, reason, target),
            Effect::Ready(key) => {
                if let Some(live) = self.views.get_mut(&slot(&key)) {
                    live.opening_since = None;
                }
                self.watchdog.ready(&key);
                if let Some(standby) = self.standby.as_mut() {
                    standby.ready(&key);
                }
                self.delegate.notify_ready(&key);
            }
            Effect::Reloaded(key) => self.delegate.notify_reloaded(&key),
            Effect::RestoreDocument(key) => {
                // R-SEC-2a: the page replaced its document without a navigation (a
                // `javascript:` URL); its own document is loaded again and gets the current
                // state after its `ready` (R-UI-10).
                if let Some(view) = self.view(&key) {
                    if let Err(e) = view.restore_document() {
                        tracing::warn!("surface {key}: cannot restore its document: {e}");
                    }
                }
                self.delegate
                    .notify_refused(&key, &Refusal::DocumentReplaced);
            }
            Effect::DeliverState { key, state } => {
                if let Some(view) = self.view(&key) {
                    if let Err(e) = view.deliver_state(&state.to_json()) {
                        tracing::warn!("surface {key}: state not delivered: {e}");
                    }
                }
            }
            Effect::Resize { key, height } => self.resize(&key, height),
            Effect::Diagnostic { key, diagnostic } => self.diagnostic(&key, diagnostic),
            Effect::Close { key, reason } => {
                self.destroy(&key);
                self.delegate.notify_closed(&key, &reason);
            }
            Effect::Send(message) => {
                if let Some(outbound) = self.outbound.as_mut() {
                    outbound(&message);
                }
                self.delegate.notify_outbound(&message);
            }
            Effect::Rejected(error) => self.delegate.notify_rejected(&error, line),
            Effect::Dropped { key, error } => self.delegate.notify_dropped(&key, &error),
            Effect::Capability(CapabilityEffect::Activity(activity)) => {
                self.activity(&activity);
            }
            // Only sessions whose factory turned capabilities on emit capability work.
            Effect::Capability(effect) => {
                let answer = match self.driver.as_mut() {
                    Some(driver) => driver.execute(session, effect),
                    None => {
                        // Its arguments are the agent's: not logged.
                        tracing::error!(
                            "a capability effect reached a host without capabilities; ignored"
                        );
                        None
                    }
                };
                if let Some((ticket, answer)) = answer {
                    self.capability_answered(session, ticket, answer, target);
                }
            }
        }
    }

    /// R-SEC-8: the view is created at once, even while the isolation probe runs; its document
    /// is then held until the probe passed ([`Shell::open_gated`]), and the view closed with
    /// `open_failed` if it failed ([`Host::poll_probe`]).
    fn open(&mut self, open: SurfaceOpen, target: &EventLoopWindowTarget<HostEvent>) {
        if !self.probe_reported {
            self.held.push(open.key.clone());
        }
        self.create(open, Kept::default(), target);
    }

    /// The one place where a Surface's webview is created; a reopened one keeps what its
    /// predecessor had (`kept`).
    fn create(&mut self, open: SurfaceOpen, kept: Kept, target: &EventLoopWindowTarget<HostEvent>) {
        let key = open.key.clone();
        match self.try_create(&open, target) {
            Ok((view, backlog, layout)) => {
                if let Some(bounds) = kept.window {
                    if let Err(e) = view.set_bounds(bounds) {
                        tracing::warn!("surface {key}: cannot put it where it was: {e}");
                    }
                }
                self.views.insert(
                    slot(&key),
                    Live {
                        key: key.clone(),
                        view,
                        backlog,
                        layout,
                        requested_height: kept.requested_height,
                        embedder_reloads: 0,
                        reloaded: kept.reloaded,
                        opening_since: Some(Instant::now()),
                    },
                );
                self.watchdog.watch(&key);
                // The delegate hears of the Surface before it is asked where to put it, so a
                // layout by key (a kiosk's regions) knows it on the first placement.
                self.delegate.notify_opened(&key, &open.app);
                self.relayout();
            }
            Err(e) => {
                let why = e.to_string();
                let effects = match kept.lost {
                    // A reopen that cannot be created leaves the Surface gone (R-UI-12).
                    Some(reason) => {
                        tracing::warn!("surface {key}: cannot be reopened: {why}");
                        self.sessions.handle_page(&key, PageInput::Gone(reason))
                    }
                    None => self.sessions.handle_page(&key, PageInput::OpenFailed(&why)),
                };
                self.apply(effects, None, target);
            }
        }
    }

    fn try_create(
        &mut self,
        open: &SurfaceOpen,
        target: &EventLoopWindowTarget<HostEvent>,
    ) -> Result<(SurfaceView, Rc<Backlog>, DocumentLayout), ShellError> {
        let token = self.surface_token()?;
        let mut options = self.document_options();
        if !open.assets.is_empty() {
            // R-SEC-3a: this Surface's own assets, and no other's.
            options = options.with_own_assets(&format!("{SCHEME}://{token}"));
        }
        let document = SurfaceDocument::assemble(&open.app.bundle, &options);
        let layout = document.layout();
        let assets = open
            .assets
            .0
            .iter()
            .map(|(path, asset)| (path.clone(), asset.mime.clone(), Arc::clone(&asset.bytes)));
        let server = SurfaceServer::new(token, document).with_assets(assets);
        let placement = match &self.layout {
            Layout::Windows => Placement::Window {
                // R-SEC-5: a host-owned marker, and never the consent prompt's title.
                title: lineup_webview_shell::surface_window_title(
                    open.app.name.as_deref(),
                    open.app.id.as_str(),
                ),
                width: self.window_size.0,
                height: self.window_size.1,
            },
            Layout::Children(parent) => Placement::Child {
                parent,
                bounds: Rect::default(),
            },
        };
        let proxy = self.proxy.clone();
        let key = open.key.clone();
        let backlog = Rc::new(Backlog::default());
        let counted = Rc::clone(&backlog);
        let limit = self.sessions.limits().max_pending_bridge_messages;
        let diagnostics_limit = self.sessions.limits().max_pending_diagnostics;
        // The closure is the view's identity: everything it receives is this key's (R-SEC-4).
        // R-SEC-8: created at once; its document waits for the probe's verdict.
        let shell = &self.shell;
        let view = shell.open_gated(target, server, placement, move |event| {
            if let ViewEvent::Ipc(raw) = &event {
                // R-DIAG-1: diagnostics wait apart, so a chatty page loses diagnostics, not events.
                let (waiting, dropped, limit) = if is_diagnostic(raw) {
                    (
                        &counted.diagnostics_in_flight,
                        &counted.diagnostics_dropped,
                        diagnostics_limit,
                    )
                } else {
                    (&counted.in_flight, &counted.dropped, limit)
                };
                if waiting.get() >= limit {
                    dropped.set(dropped.get() + 1);
                    return;
                }
                waiting.set(waiting.get() + 1);
            }
            let _ = proxy.send_event(HostEvent(Inner::View {
                key: key.clone(),
                event,
            }));
        })?;
        Ok((view, backlog, layout))
    }

    fn destroy(&mut self, key: &SurfaceKey) {
        if self.views.get(&slot(key)).is_some_and(|l| l.key == *key) {
            if let Some(standby) = self.standby.as_mut() {
                // Up before the view goes, so the window never shows it half torn down.
                standby.gone(key);
            }
            if let Some(live) = self.views.remove(&slot(key)) {
                live.view.close();
            }
            self.relayout();
        }
        self.watchdog.forget(key);
        self.held.retain(|k| k != key);
    }

    /// Standard components (R-STD-1): this host has no renderer for them yet, so it offers none
    /// (each session's renderable set stays empty and `client.inventory` lists none), and a
    /// component it is asked to show anyway fails closed: the session closes it with
    /// `renderer_failed` (R-STD-13). Nothing is on screen to update, lock or hide.
    fn component(&mut self, effect: ComponentEffect, target: &EventLoopWindowTarget<HostEvent>) {
        match effect {
            ComponentEffect::Show(shown) => {
                tracing::warn!(
                    "component {}: no renderer for standard components; closed",
                    shown.key
                );
                let effects = self
                    .sessions
                    .handle_page(&shown.key, PageInput::ComponentFailed);
                self.apply(effects, None, target);
            }
            ComponentEffect::Update { .. }
            | ComponentEffect::Lock { .. }
            | ComponentEffect::Hide { .. } => {}
        }
    }

    /// Ends every session: Surfaces close silently; waiting calls are cancelled and their
    /// records finished (the store effects run; nothing is sent).
    fn close_all(&mut self) {
        for ended in self.sessions.end_all() {
            let SessionEffects { session, effects } = ended;
            for effect in effects {
                match effect {
                    Effect::Close { key, reason } => {
                        self.destroy(&key);
                        self.delegate.notify_closed(&key, &reason);
                    }
                    Effect::Capability(effect) => {
                        if let Some(driver) = self.driver.as_mut() {
                            let _ = driver.execute(session, effect);
                        }
                    }
                    // Ending sessions close and cancel; nothing opens, draws or is sent.
                    Effect::Open(_)
                    | Effect::Replace { .. }
                    | Effect::Reopen { .. }
                    | Effect::Ready(_)
                    | Effect::Reloaded(_)
                    | Effect::RestoreDocument(_)
                    | Effect::DeliverState { .. }
                    | Effect::Resize { .. }
                    | Effect::Send(_)
                    | Effect::Rejected(_)
                    | Effect::Diagnostic { .. }
                    | Effect::Dropped { .. }
                    | Effect::Component(_) => {}
                }
            }
        }
    }

    /// A page's `LineUpSurface.resize`, clamped to the resize bounds: its own window gets that
    /// inner height; a child view gets it through the layout
    /// ([`HostDelegate::request_child_placement`]); the delegate hears it either way.
    fn resize(&mut self, key: &SurfaceKey, height: f64) {
        let (min, max) = self.resize_bounds;
        let clamped = height.clamp(f64::from(min), f64::from(max));
        // Within 40 ..= 2000 by default; the bounds are u32, so the rounded value fits.
        let pixels = clamped.round() as u32;
        let Some(live) = self.views.get_mut(&slot(key)).filter(|l| l.key == *key) else {
            return;
        };
        live.requested_height = Some(pixels);
        if let Some(window) = live.view.window() {
            window.set_inner_size(LogicalSize::new(f64::from(self.window_size.0), clamped));
        }
        let was_clamped = clamped.round() != height.round();
        self.delegate
            .notify_resize_request(key, pixels, was_clamped);
        self.relayout();
    }

    /// R-DIAG-1: maps the page's document position back to the author's part of the bundle
    /// (`script.js:3:14`) when the page named its own document (or nothing), and hands the diagnostic to
    /// the delegate; nothing goes upstream.
    fn diagnostic(&mut self, key: &SurfaceKey, mut diagnostic: Diagnostic) {
        let Some(live) = self.views.get(&slot(key)).filter(|l| l.key == *key) else {
            return;
        };
        let own_document = diagnostic
            .source
            .as_ref()
            .is_none_or(|s| s.is_empty() || s.as_str() == live.view.url());
        if let (true, Some(line)) = (own_document, diagnostic.line) {
            diagnostic.position = live.layout.locate(line, diagnostic.column.unwrap_or(1));
        }
        self.delegate.notify_diagnostic(key, &diagnostic);
    }

    fn relayout(&mut self) {
        let Layout::Children(parent) = &self.layout else {
            return;
        };
        let size = parent.inner_size().to_logical::<f64>(parent.scale_factor());
        let (width, height) = (size.width.max(0.0) as u32, size.height.max(0.0) as u32);
        let count = self.views.len();
        for (index, live) in self.views.values().enumerate() {
            let bounds = self.delegate.request_child_placement(&ChildSlot {
                key: &live.key,
                index,
                count,
                width,
                height,
                requested_height: live.requested_height,
            });
            if let Err(e) = live.view.set_bounds(bounds) {
                tracing::warn!("surface {}: cannot lay out: {e}", live.key);
            }
        }
    }
}
