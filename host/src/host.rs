//! The embedding API: a [`Host`] joins the protocol's session table ([`Sessions`], one
//! [`Session`](lineup_host_core::Session) per conversation, R-SES-1) to the webviews of its view
//! table ([`views`]) and the embedder's callbacks, on the event-loop thread; a [`HostHandle`]
//! feeds it from any thread.
//!
//! `Host` is the one interpreter of the kernel's effects and the dispatcher of the loop's
//! events; each concept it drives is a type of its own beside it: the view table ([`views`],
//! with the warm pool and what a reopen keeps), the standby screen, the activity notices, the
//! app center's and the operator policy's watches, the session factory.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use lineup_host_core::{
    Activity, AgentIdentity, Answer, CapabilityEffect, CapabilityName, Clock, CloseReason,
    ComponentEffect, ConversationId, Effect, GoneReason, Limits, Message, PageInput, PartyId,
    SessionEffects, SessionId, Sessions, SurfaceKey, SurfaceOpen, Ticket,
};
use lineup_webview_shell::tao::event::{Event, WindowEvent};
use lineup_webview_shell::tao::event_loop::{
    ControlFlow, EventLoop, EventLoopProxy, EventLoopWindowTarget,
};
use lineup_webview_shell::tao::window::WindowId;
use lineup_webview_shell::{Contrast, ProbeStatus, ShellError, SurfaceView, Theme, ViewEvent};

use crate::capabilities::CapabilityDriver;
use crate::delegate::{HostDelegate, Refusal};

mod activity;
mod builder;
mod factory;
mod handle;
mod link;
mod policy;
mod pool;
mod recovery;
mod standby;
mod views;

use activity::ActivityNotices;
use builder::OutboundFn;
pub use builder::{DangerousHostBuilder, HostBuilder};
use factory::*;
use handle::*;
pub use handle::{event_loop, HostClosed, HostEvent, HostEventLoop, HostHandle};
use link::AnnounceDone;
use policy::{PolicyChange, PolicyWatch};
use recovery::{Kept, Verdict};
use views::{ProbeNews, Views, ViewsConfig};

struct MonotonicClock(Instant);

impl Clock for MonotonicClock {
    fn monotonic(&self) -> Duration {
        self.0.elapsed()
    }
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
    /// Every open Surface's webview, and what places and feeds them.
    views: Views,
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
    /// The app center, watched for changes ([`HostBuilder::app_center`]).
    apps: Option<AppsWatch>,
    /// [`HostBuilder::capability_policy`].
    policy: Option<PolicyWatch>,
    outbound: Option<OutboundFn>,
    delegate: Box<dyn HostDelegate>,
    exit: bool,
    /// [`HostHandle::shutdown_when_last_closed`] was asked: exit once no view is open.
    exit_when_empty: bool,
    /// Whether lost Surfaces are reopened ([`HostBuilder::reopen_lost_surfaces`]).
    reopen: bool,
    /// [`HostBuilder::ignore_parent_close`].
    ignore_parent_close: bool,
    /// The activity notices, when [`HostBuilder::activity_notices`] is on.
    notices: Option<ActivityNotices>,
    /// Effects waiting for [`Host::interpret`], in order ([`Host::apply`]).
    work: VecDeque<(SessionId, Effect, Option<u64>)>,
    /// Whether [`Host::apply`] is draining `work` further up the stack.
    draining: bool,
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Host")
            .field("sessions", &self.sessions)
            .field("views", &self.views.keys().len())
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
        self.views.keys()
    }

    /// The webview of Surface `key`, while it is open.
    pub fn view(&self, key: &SurfaceKey) -> Option<&SurfaceView> {
        self.views.view(key)
    }

    /// Where the isolation probe stands.
    pub fn probe_status(&self) -> ProbeStatus {
        self.views.shell.probe_status()
    }

    /// How many started views wait in the warm pool ([`HostBuilder::warm_pool`]).
    pub fn pooled_views(&self) -> usize {
        self.views.shell.pooled()
    }

    /// How many Surfaces got their view from the warm pool so far.
    pub fn pool_taken(&self) -> u64 {
        self.views.shell.pool_taken()
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
        self.views.set_contrast(contrast);
    }

    /// Withdraws capability `name` from every session ([`HostHandle::withdraw_capability`]) on
    /// the loop thread; `false` when no capability of that name was registered.
    pub fn withdraw_capability(
        &mut self,
        name: &CapabilityName,
        target: &EventLoopWindowTarget<HostEvent>,
    ) -> bool {
        match self.sessions.unregister_capability(name) {
            Ok(effects) => {
                tracing::info!("capability {name} withdrawn from every session (R-INV-4)");
                self.apply_all(effects, target);
                true
            }
            Err(e) => {
                tracing::warn!("capability {name} not withdrawn: {e}");
                false
            }
        }
    }

    /// [`HostHandle::set_capability_visible`] on the loop thread.
    pub fn set_capability_visible(
        &mut self,
        agent: &AgentIdentity,
        name: &CapabilityName,
        visible: bool,
        target: &EventLoopWindowTarget<HostEvent>,
    ) {
        match self.sessions.set_capability_visible(agent, name, visible) {
            Ok(effects) => {
                let state = if visible { "shown to" } else { "hidden from" };
                tracing::info!("capability {name} {state} agent {agent}");
                self.apply_all(effects, target);
            }
            Err(e) => tracing::warn!("capability {name}: visibility not changed: {e}"),
        }
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
        if self.views.probe_reported() && !self.views.opening() {
            // The probe's view, kept while the first Surfaces committed their documents.
            self.views.shell.close_finished_probe();
        }
        let mut wakeup = self.poll_capabilities(target);
        let mut wake_at = |at: Option<Instant>| {
            if let Some(at) = at {
                wakeup = Some(wakeup.map_or(at, |w: Instant| w.min(at)));
            }
        };
        wake_at(self.poll_apps(target));
        wake_at(self.poll_policy(target));
        wake_at(self.poll_watchdog(target));
        let idle = idle_turn && self.inbound.load(Ordering::Relaxed) == 0;
        wake_at(self.views.refill_pool(idle, target));
        if let Some(idle) = self.session_idle {
            for ended in self.sessions.end_idle(idle) {
                self.apply(ended, None, target);
            }
            if let Some(next) = self.sessions.next_idle_check(idle) {
                wake_at(Some(Instant::now() + next.max(Duration::from_millis(10))));
            }
        }
        if self.exit_when_empty && !self.exit && self.views.is_empty() {
            tracing::info!("the last surface closed; exiting");
            self.close_all();
            self.exit = true;
        }
        if self.exit {
            ControlFlow::Exit
        } else if self.views.probe_reported() {
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
        let (changed, next) = self.apps.as_mut()?.poll();
        if changed {
            let effects = self.sessions.apps_changed();
            self.apply_all(effects, target);
        }
        Some(next)
    }

    /// Applies what changed in the operator's capability policy, when due; returns when to
    /// look again.
    fn poll_policy(&mut self, target: &EventLoopWindowTarget<HostEvent>) -> Option<Instant> {
        let (changes, next) = self.policy.as_mut()?.poll(&self.sessions);
        for change in changes {
            match change {
                PolicyChange::Withdraw(name) => {
                    self.withdraw_capability(&name, target);
                }
                PolicyChange::Visible(agent, name, visible) => {
                    self.set_capability_visible(&agent, &name, visible, target);
                }
            }
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
            let effects = self.sessions.poll_capabilities();
            self.apply_all(effects, target);
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
            Inner::BinaryFrame { len } => {
                self.inbound_handled();
                let effects = self.sessions.handle_binary_frame(len);
                self.apply(effects, None, target);
            }
            Inner::EventsDropped { instance, count } => {
                let effects = self.sessions.events_dropped(&instance, count);
                self.apply_all(effects, target);
            }
            Inner::OpenSession {
                conversation,
                agent,
            } => {
                if let Err(e) = self.open_session(conversation, agent) {
                    tracing::warn!("session not opened: {e}");
                }
            }
            Inner::EndSession { conversation } => {
                if !self.end_session(&conversation) {
                    tracing::info!("conversation {conversation} has no session to end");
                }
            }
            Inner::Wake => {}
            Inner::StandbyIndicator(text) => {
                if let Some(standby) = &self.views.standby {
                    standby.set_indicator(text.as_deref());
                }
            }
            Inner::StandbyStatus(status) => {
                if let Some(standby) = &self.views.standby {
                    standby.set_status(&status);
                }
            }
            Inner::View { key, event } => self.handle_view_event(key, event, target),
            Inner::Reload { instance, bundle } => {
                let max = self.sessions.limits().max_bundle_bytes;
                self.views.reload_bundle(&instance, &bundle, max);
            }
            Inner::Snapshot { instance, done } => match self.views.by_instance(&instance) {
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
            } => {
                let effects = self.sessions.surfaces_gone(conversation.as_ref(), reason);
                self.apply_all(effects, target);
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

    /// [`HostHandle::announce_inventory`], applied at once so that `done` runs after the
    /// inventory went to the outbound callback. A conversation whose session ended gets it
    /// opened again, vouching for `agent` (R-SES-1).
    fn announce_inventory(
        &mut self,
        conversation: ConversationId,
        agent: Option<PartyId>,
        done: AnnounceDone,
        target: &EventLoopWindowTarget<HostEvent>,
    ) {
        let effects = match self.sessions.announce_inventory(&conversation) {
            Some(effects) => Some(effects),
            None => match self.sessions.open_session(conversation.clone(), agent) {
                Ok(effects) => {
                    tracing::info!("conversation {conversation}: session opened again (R-SES-1)");
                    Some(effects)
                }
                Err(e) => {
                    tracing::warn!("conversation {conversation}: no session to announce: {e}");
                    None
                }
            },
        };
        let announced = effects.as_ref().is_some_and(|fx| {
            fx.effects
                .iter()
                .any(|e| matches!(e, Effect::Send(Message::ClientInventory(_))))
        });
        if let Some(effects) = effects {
            self.apply(effects, None, target);
        }
        (done.0)(announced);
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

    /// Whether `key` names a Surface open now in a live session.
    fn is_current(&self, key: &SurfaceKey) -> bool {
        self.sessions
            .get(key.session)
            .is_some_and(|s| s.is_current(key))
    }

    /// What the webview of `key` reported: page input goes to its session through the session
    /// table (R-SEC-4: the key is the view's, never the page's word); a refusal goes to the
    /// delegate.
    fn handle_view_event(
        &mut self,
        key: SurfaceKey,
        event: ViewEvent,
        target: &EventLoopWindowTarget<HostEvent>,
    ) {
        let input = match event {
            ViewEvent::Ipc(raw) => {
                // For `lineup-bench`'s patch profile: the event loop took the bridge message.
                tracing::debug!(target: "lineup_phase", phase = "bridge_message_handled");
                let dropped = self.views.bridge_message_taken(&key, &raw);
                if dropped.messages > 0 {
                    let flood = PageInput::Flood {
                        count: dropped.messages,
                    };
                    self.page_input(&key, flood, target);
                }
                if dropped.diagnostics > 0 {
                    let count = dropped.diagnostics;
                    self.page_input(&key, PageInput::DiagnosticsDropped { count }, target);
                }
                return self.page_input(&key, PageInput::Message(&raw), target);
            }
            ViewEvent::UserCloseRequested => PageInput::UserClosed,
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
                PageInput::Gone(GoneReason::Memory)
            }
            ViewEvent::IpcTooLarge { len } => PageInput::Oversized { len },
            ViewEvent::LoadFinished => return,
            ViewEvent::DocumentCommitted => {
                if self.views.committed(&key) {
                    PageInput::EmbedderReloaded
                } else {
                    PageInput::DocumentCommitted
                }
            }
            ViewEvent::PageCloseAttempt => return self.refused(&key, Refusal::PageClose),
            ViewEvent::NavigationRefused(url) => {
                return self.refused(&key, Refusal::Navigation(url))
            }
            ViewEvent::NewWindowRefused(url) => return self.refused(&key, Refusal::NewWindow(url)),
            ViewEvent::DownloadRefused(url) => return self.refused(&key, Refusal::Download(url)),
            ViewEvent::PermissionDenied => return self.refused(&key, Refusal::Permission),
            ViewEvent::DialogSuppressed => return self.refused(&key, Refusal::Dialog),
            ViewEvent::DropRefused => return self.refused(&key, Refusal::Drop),
            ViewEvent::FileChooserRefused => return self.refused(&key, Refusal::FileChooser),
        };
        self.page_input(&key, input, target);
    }

    /// Hands `input` of the view of `key` to its session and carries out what follows.
    fn page_input(
        &mut self,
        key: &SurfaceKey,
        input: PageInput<'_>,
        target: &EventLoopWindowTarget<HostEvent>,
    ) {
        let effects = self.sessions.handle_page(key, input);
        self.apply(effects, None, target);
    }

    /// The view of `key` refused what its page tried; the delegate hears of it.
    fn refused(&mut self, key: &SurfaceKey, refusal: Refusal) {
        if self.is_current(key) {
            self.delegate.notify_refused(key, &refusal);
        }
    }

    fn handle_window_event(
        &mut self,
        window_id: WindowId,
        event: &WindowEvent<'_>,
        target: &EventLoopWindowTarget<HostEvent>,
    ) {
        if !self.views.is_parent(window_id) {
            return self.views.window_event(window_id, event);
        }
        match event {
            WindowEvent::Resized(_) | WindowEvent::ScaleFactorChanged { .. } => {
                self.views.relayout(self.delegate.as_mut())
            }
            WindowEvent::CloseRequested if self.ignore_parent_close => {
                tracing::info!("close request for the kiosk window ignored");
            }
            WindowEvent::CloseRequested => {
                // The user closed the window that holds every Surface.
                for key in self.views.keys() {
                    self.page_input(&key, PageInput::UserClosed, target);
                }
                self.exit = true;
            }
            _ => {}
        }
    }

    fn poll_probe(&mut self, target: &EventLoopWindowTarget<HostEvent>) {
        match self.views.poll_probe() {
            ProbeNews::None | ProbeNews::Passed => {}
            ProbeNews::Failed { reason, held } => {
                self.delegate.notify_probe_failed(&reason);
                let why = format!("the isolation probe failed (R-SEC-8): {reason}");
                // Views created while the probe ran: their documents were never served (the
                // gate refused them); they close, and the agent hears the open failed.
                for key in held {
                    self.page_input(&key, PageInput::OpenFailed(&why), target);
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
                self.views.ready(&key);
                self.delegate.notify_ready(&key);
            }
            Effect::Reloaded(key) => self.delegate.notify_reloaded(&key),
            Effect::RestoreDocument(key) => {
                // R-SEC-2a: the page replaced its document without a navigation (a
                // `javascript:` URL); its own document is loaded again and gets the current
                // state after its `ready` (R-UI-10).
                if let Some(view) = self.views.view(&key) {
                    if let Err(e) = view.restore_document() {
                        tracing::warn!("surface {key}: cannot restore its document: {e}");
                    }
                }
                self.delegate
                    .notify_refused(&key, &Refusal::DocumentReplaced);
            }
            Effect::DeliverState { key, state } => {
                if let Some(view) = self.views.view(&key) {
                    if let Err(e) = view.deliver_state(&state.to_json()) {
                        tracing::warn!("surface {key}: state not delivered: {e}");
                    }
                }
            }
            Effect::Resize { key, height } => {
                self.views.resize(&key, height, self.delegate.as_mut());
            }
            Effect::Diagnostic { key, diagnostic } => {
                self.views
                    .diagnostic(&key, diagnostic, self.delegate.as_mut());
            }
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

    /// Carries out each batch of `effects`, in order.
    fn apply_all(
        &mut self,
        effects: Vec<SessionEffects>,
        target: &EventLoopWindowTarget<HostEvent>,
    ) {
        for effects in effects {
            self.apply(effects, None, target);
        }
    }

    /// R-SEC-8: the view is created at once, even while the isolation probe runs; its document
    /// is then held until the probe passed ([`Shell::open_gated`]), and the view closed with
    /// `open_failed` if it failed ([`Host::poll_probe`]).
    ///
    /// [`Shell::open_gated`]: lineup_webview_shell::Shell::open_gated
    fn open(&mut self, open: SurfaceOpen, target: &EventLoopWindowTarget<HostEvent>) {
        self.views.hold_until_probed(&open.key);
        self.create(open, Kept::default(), target);
    }

    /// Creates the webview of `open` ([`Views::create`], the one place a Surface's webview is
    /// made); a reopened one keeps what its predecessor had (`kept`). A view that cannot be
    /// made fails the open, or leaves a reopened Surface gone (R-UI-12).
    fn create(&mut self, open: SurfaceOpen, kept: Kept, target: &EventLoopWindowTarget<HostEvent>) {
        let key = open.key.clone();
        let limits = self.sessions.limits().clone();
        match self
            .views
            .create(&open, &kept, &limits, &self.proxy, target)
        {
            Ok(()) => {
                // The delegate hears of the Surface before it is asked where to put it, so a
                // layout by key (a kiosk's regions) knows it on the first placement.
                self.delegate.notify_opened(&key, &open.app);
                self.views.relayout(self.delegate.as_mut());
            }
            Err(e) => {
                let why = e.to_string();
                match kept.lost {
                    Some(reason) => {
                        tracing::warn!("surface {key}: cannot be reopened: {why}");
                        self.page_input(&key, PageInput::Gone(reason), target);
                    }
                    None => self.page_input(&key, PageInput::OpenFailed(&why), target),
                }
            }
        }
    }

    /// Closes the webview of `key`, and lays out the rest again.
    fn destroy(&mut self, key: &SurfaceKey) {
        if self.views.destroy(key) {
            self.views.relayout(self.delegate.as_mut());
        }
    }

    /// The web process of `key` died (`Crashed`) or was terminated as hung (`Unresponsive`): its
    /// session reopens the Surface within its budget, or closes it and tells the agent; with
    /// [`HostBuilder::reopen_lost_surfaces`] off it is closed at once. Nothing for a stale key.
    fn lost(
        &mut self,
        key: SurfaceKey,
        reason: GoneReason,
        target: &EventLoopWindowTarget<HostEvent>,
    ) {
        let input = if self.reopen {
            PageInput::Lost(reason)
        } else {
            PageInput::Gone(reason)
        };
        self.page_input(&key, input, target);
    }

    /// Carries out [`Effect::Reopen`]: the webview of `old` goes, and `open` (same instance, new
    /// generation) is created where it was, with the embedder's reloaded bundle if there was
    /// one. Its state follows its page's `ready` (R-UI-12).
    fn reopen(
        &mut self,
        old: SurfaceKey,
        mut open: SurfaceOpen,
        reason: GoneReason,
        target: &EventLoopWindowTarget<HostEvent>,
    ) {
        let kept = self.views.kept(&old, reason);
        if let Some(bundle) = &kept.reloaded {
            open.app.bundle = bundle.clone();
        }
        tracing::warn!(
            "surface {old}: web process lost ({reason}); reopened as {} (R-UI-12)",
            open.key
        );
        self.destroy(&old);
        self.delegate
            .notify_closed(&old, &CloseReason::Reopened(reason));
        self.create(open, kept, target);
    }

    /// Runs the hang watchdog (R-UI-12): the web process of a view past its deadline is
    /// terminated (the crash path follows when the engine reports it, as `unresponsive`), and a
    /// Surface whose termination the engine never reported ends anyway. Returns when to check
    /// again.
    fn poll_watchdog(&mut self, target: &EventLoopWindowTarget<HostEvent>) -> Option<Instant> {
        let (verdicts, next) = self.views.poll_watchdog();
        for (key, verdict) in verdicts {
            match verdict {
                Verdict::Terminate => {
                    tracing::warn!(
                        "surface {key}: its page stopped answering; its web process is terminated (R-UI-12)"
                    );
                    self.delegate.notify_unresponsive(&key);
                    if let Some(view) = self.views.view(&key) {
                        view.terminate_web_process();
                    }
                }
                Verdict::TerminationLost => {
                    tracing::warn!(
                        "surface {key}: the engine did not report the termination of its web process; ended anyway"
                    );
                    self.lost(key, GoneReason::Unresponsive, target);
                }
                Verdict::Wait | Verdict::Ping => {}
            }
        }
        next
    }

    /// What ran (original §5.3): logged (never the reason), told to the delegate, and shown in
    /// the host's notice when the user saw nothing of it.
    fn activity(&mut self, activity: &Activity) {
        tracing::info!("activity: {activity}");
        self.delegate.notify_capability_ran(activity);
        if let Some(notices) = self.notices.as_mut() {
            notices.show(activity, self.views.standby.as_ref());
        }
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
                self.page_input(&shown.key, PageInput::ComponentFailed, target);
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
}
