//! The embedding API: a [`Host`] joins the protocol's session table ([`Sessions`], one
//! [`Session`](lineup_host_core::Session) per conversation, R-SES-1) to the webviews of its view
//! table ([`views`]) and the embedder's callbacks, on the event-loop thread; a [`HostHandle`]
//! feeds it from any thread.
//!
//! `Host` is the dispatcher of the loop's events and the public API; its engine ([`engine`]) is
//! the one interpreter of the kernel's effects, over its kernel side ([`kernel`]: the session
//! table and its queue) and its screen side ([`screen`]: the views and the components'
//! renderers). Each concept they drive is a type of its own beside them: the view table
//! ([`views`], with each Surface's webview, hibernation, the probe's gate, the documents, the
//! warm pool and what a reopen keeps), the standby screen, the activity notices, the loop's
//! intake and exit, the app center's and the operator policy's watches, the session factory.

use std::time::{Duration, Instant};

use lineup_host_core::{
    AgentIdentity, CapabilityName, ConversationId, Limits, PartyId, SessionId, Sessions, SurfaceKey,
};
use lineup_webview_shell::tao::event::{Event, WindowEvent};
use lineup_webview_shell::tao::event_loop::{ControlFlow, EventLoop, EventLoopWindowTarget};
use lineup_webview_shell::tao::window::WindowId;
use lineup_webview_shell::WindowMaker;
use lineup_webview_shell::{Contrast, ProbeStatus, SurfaceView, Theme};

use crate::HostError;

mod activity;
mod backlog;
mod build;
mod builder;
mod component_layout;
mod conversations;
pub use conversations::ConversationItem;
mod component_links;
mod components;
mod dangerous;
mod documents;
#[cfg(test)]
mod driver_tests;
mod engine;
#[cfg(test)]
mod engine_tests;
mod exit;
mod factory;
mod handle;
mod hibernation;
mod kernel;
mod link;
mod live;
mod mcp_facts;
#[cfg(test)]
mod mcp_tests;
mod options;
mod policy;
mod pool;
mod probe_gate;
mod proxy;
mod renderer;
#[cfg(test)]
mod rig_tests;
mod screen;
mod shell_start;
mod shutdown;
mod standby;
mod upstream;
mod view_input;
mod views;
mod work;

pub use builder::HostBuilder;
pub use dangerous::DangerousHostBuilder;
use engine::Engine;
use exit::Exit;
use handle::*;
pub use handle::{event_loop, event_loop_with, HostClosed, HostEvent, HostEventLoop, HostHandle};
use link::AnnounceDone;
use policy::{PolicyChange, Watches};
use proxy::HostProxy;
pub use proxy::HostUserEvent;
pub use renderer::{ComponentRenderer, ComponentReply, Declined};

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
    /// The session table and what its effects act on.
    engine: Engine,
    /// Inbound lines on their way (counted with every [`HostHandle`]) and effects made outside
    /// the event loop, applied at the next event.
    intake: Intake,
    /// Sessions end after this long idle ([`HostBuilder::end_idle_sessions_after`]).
    session_idle: Option<Duration>,
    /// The app center ([`HostBuilder::app_center`]) and the operator's capability policy
    /// ([`HostBuilder::capability_policy`]), watched for changes.
    watches: Watches,
    /// When the loop ends.
    exit: Exit,
    /// Armed at the earliest deadline of every poller after each turn of the loop: the one
    /// way an idle loop is woken for a deadline (expiry, retries, polls, hibernation).
    wake_timer: lineup_webview_shell::WakeTimer,
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Host")
            .field("sessions", self.engine.sessions())
            .field("views", &self.engine.screen().surfaces().len())
            .finish_non_exhaustive()
    }
}

impl Host {
    /// A host driving `engine` ([`HostBuilder::build`]), with the loop's `intake`, sessions
    /// ending after `session_idle`, the `watches`, and whether a close of the parent window is
    /// ignored.
    fn new(
        engine: Engine,
        intake: Intake,
        session_idle: Option<Duration>,
        watches: Watches,
        ignore_parent_close: bool,
    ) -> Self {
        let waker = engine.screen().proxy().clone();
        let wake_timer = lineup_webview_shell::WakeTimer::new(move || {
            let _ = waker.send_event(HostEvent(Inner::Wake));
        });
        Self {
            engine,
            intake,
            session_idle,
            watches,
            exit: Exit::new(ignore_parent_close),
            wake_timer,
        }
    }

    /// A handle that feeds this host from any thread.
    pub fn handle(&self) -> HostHandle {
        self.intake.handle(self.engine.screen().proxy().clone())
    }

    /// The limits in force, per session and in total.
    pub fn limits(&self) -> &Limits {
        self.engine.sessions().limits()
    }

    /// The counters of every session, ended ones included, and of what the session table
    /// refused itself, added up.
    pub fn stats(&self) -> lineup_host_core::Stats {
        self.engine.sessions().stats()
    }

    /// The session table: which conversations have a session, and each session's state.
    pub fn sessions(&self) -> &Sessions {
        self.engine.sessions()
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
        let opened = self.engine.open_session(conversation, agent)?;
        let id = opened.session;
        self.intake.queue(opened, self.engine.screen().proxy());
        Ok(id)
    }

    /// Ends the session of `conversation`: its Surfaces close without a word upstream
    /// ([`CloseReason::SessionEnded`](lineup_host_core::CloseReason::SessionEnded) to the
    /// delegate), its calls waiting for a decision are
    /// cancelled and their prompts withdrawn; calls already running finish and are recorded.
    /// Returns whether it was open; the rest happens at the next event.
    pub fn end_session(&mut self, conversation: &ConversationId) -> bool {
        match self.engine.end_session(conversation) {
            Some(ended) => {
                self.intake.queue(ended, self.engine.screen().proxy());
                true
            }
            None => false,
        }
    }

    /// The Surfaces whose webviews are open now.
    pub fn surfaces(&self) -> Vec<SurfaceKey> {
        self.engine.screen().surfaces()
    }

    /// The standard components the built-in renderer shows now: their documents rendered and
    /// their views in a mapped window (R-STD-13). Components the embedder's renderer draws are
    /// not listed.
    pub fn shown_components(&self) -> Vec<SurfaceKey> {
        self.engine.screen().shown_components()
    }

    /// A control for activation tests: the page of component `key`, shown by the built-in
    /// renderer, itself posts `message` to the host, with no input event behind it (R-STD-8,
    /// R-STD-11). Does nothing when no such view shows.
    #[cfg(feature = "test-controls")]
    pub fn post_from_component_page_for_test(&self, key: &SurfaceKey, message: &str) {
        if let Some(components) = self.engine.screen().components() {
            components.post_from_page_for_test(key, message);
        }
    }

    /// Hides (`false`) or shows (`true`) the webview of Surface `key` without closing it: its
    /// page, state and web process stay; a hidden child view takes no room, and the others are
    /// laid out again at once, so an app switching conversations hides one set and shows
    /// another with no window growth. The agent is told nothing. Returns whether `key` is open.
    pub fn set_surface_visible(&mut self, key: &SurfaceKey, visible: bool) -> bool {
        self.engine.set_surface_visible(key, visible)
    }

    /// Hibernates hidden Surface `key` now, even with presses since its state was last set
    /// (the embedder knows its input is not needed); returns whether it did: it must be a
    /// hidden child view with a webview.
    pub fn hibernate(&mut self, key: &SurfaceKey) -> bool {
        self.engine.hibernate(key)
    }

    /// Whether Surface `key` is hibernated (#29): open, hidden, its webview and web process
    /// released until it is shown again. Hidden child views hibernate when
    /// `Limits::max_live_surfaces` Surfaces have a web process and another needs one, the
    /// least recently shown first, never one with presses since its state was last set.
    pub fn is_hibernated(&self, key: &SurfaceKey) -> bool {
        self.engine.screen().is_hibernated(key)
    }

    /// Shows or hides every Surface and standard component of `conversation` together, as an
    /// app switching conversations does: hidden Surfaces keep their page and state (as
    /// [`Host::set_surface_visible`]); hidden components take no input, and shown again their
    /// guard delay starts again (R-STD-8). What the conversation opens while hidden starts
    /// hidden, also before its first envelope. The agent is told nothing. Returns whether the
    /// conversation has a session now.
    pub fn set_conversation_visible(
        &mut self,
        conversation: &ConversationId,
        visible: bool,
    ) -> bool {
        self.engine.set_conversation_visible(conversation, visible)
    }

    /// Names `conversation` `label` in the consent prompts it causes, in place of the agent's
    /// id for it (`None`: the id again). The label is the embedder's own words; one that
    /// imitates the prompt's lines is not shown (R-SEC-5).
    pub fn set_conversation_label(&mut self, conversation: &ConversationId, label: Option<&str>) {
        self.engine.set_conversation_label(conversation, label);
    }

    /// How many consent requests of `conversation` wait for it to be shown
    /// ([`HiddenConversationPrompts::WaitUntilShown`](crate::HiddenConversationPrompts)); the
    /// app can show a badge beside it.
    pub fn waiting_prompts(&self, conversation: &ConversationId) -> usize {
        self.engine.waiting_prompts(conversation)
    }

    /// Whether `conversation` is hidden ([`Host::set_conversation_visible`]).
    pub fn is_conversation_hidden(&self, conversation: &ConversationId) -> bool {
        self.engine.screen().conversation_hidden(conversation)
    }

    /// The Surfaces and the built-in renderer's standard components of `conversation`, by key.
    pub fn conversation_items(&self, conversation: &ConversationId) -> Vec<ConversationItem> {
        let Some(session) = self.engine.sessions().id_of(conversation) else {
            return Vec::new();
        };
        self.engine.screen().conversation_items(session)
    }

    /// A control for tests: reads back the box of component `key` that the built-in renderer
    /// shows (`done` hears it on the loop thread); returns whether there is one.
    #[cfg(feature = "test-controls")]
    pub fn component_snapshot_for_test(
        &self,
        key: &SurfaceKey,
        done: impl FnOnce(Option<lineup_webview_shell::ComponentSnapshot>) + 'static,
    ) -> bool {
        let components = self.engine.screen().components();
        components.is_some_and(|c| c.snapshot_for_test(key, done))
    }

    /// A control for checks: a real left click (the X server's XTEST) at the middle of the
    /// element `id` (`confirm`, say) of component `key`'s box, where the built-in renderer shows
    /// it now; `done` hears on the loop thread whether it was sent. Returns whether `key` has a
    /// box.
    #[cfg(feature = "test-controls")]
    pub fn click_component_for_test(
        &self,
        key: &SurfaceKey,
        id: &str,
        done: impl FnOnce(Result<(), String>) + 'static,
    ) -> bool {
        let components = self.engine.screen().components();
        components.is_some_and(|c| c.click_for_test(key, id, done))
    }

    /// Lays the child views (and the standard components over them) out again, asking the
    /// delegate where each goes: after the app changed what its placement returns.
    pub fn relayout(&mut self) {
        self.engine.relayout();
    }

    /// The webview of Surface `key`, while it is open.
    pub fn view(&self, key: &SurfaceKey) -> Option<&SurfaceView> {
        self.engine.screen().surface_view(key)
    }

    /// Where the isolation probe stands.
    pub fn probe_status(&self) -> ProbeStatus {
        self.engine.screen().port().probe_status()
    }

    /// A control for what waits on the isolation probe (R-SEC-8): a probe still running stays
    /// undecided (`None`) or fails with `failure`, whatever its page reports; the host learns
    /// the failure at its next turn.
    #[cfg(feature = "test-controls")]
    pub fn force_probe_for_test(&self, failure: Option<String>) {
        if let Some(shell) = self.engine.screen().port().shell() {
            shell.force_probe_for_test(failure);
        }
    }

    /// How many started views wait in the warm pool ([`HostBuilder::warm_pool`]).
    pub fn pooled_views(&self) -> usize {
        let shell = self.engine.screen().port().shell();
        shell.map_or(0, |shell| shell.pooled())
    }

    /// How many Surfaces got their view from the warm pool so far.
    pub fn pool_taken(&self) -> u64 {
        let shell = self.engine.screen().port().shell();
        shell.map_or(0, |shell| shell.pool_taken())
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
        self.engine.set_contrast(contrast);
    }

    /// Withdraws capability `name` from every session ([`HostHandle::withdraw_capability`]) on
    /// the loop thread; `false` when no capability of that name was registered.
    pub fn withdraw_capability(&mut self, name: &CapabilityName, target: &dyn WindowMaker) -> bool {
        self.engine.withdraw_capability(name, target)
    }

    /// [`HostHandle::set_capability_visible`] on the loop thread.
    pub fn set_capability_visible(
        &mut self,
        agent: &AgentIdentity,
        name: &CapabilityName,
        visible: bool,
        target: &dyn WindowMaker,
    ) {
        (self.engine).set_capability_visible(agent, name, visible, target);
    }

    /// Runs the event loop until [`HostHandle::shutdown`] (or, with child views, until the
    /// parent window is closed), then closes every Surface and returns.
    pub fn run<T: HostUserEvent>(mut self, mut event_loop: EventLoop<T>) -> Result<(), HostError> {
        use lineup_webview_shell::tao::platform::run_return::EventLoopExtRunReturn;
        event_loop.run_return(|event, target, flow| {
            *flow = self.handle_event(event, target);
        });
        self.engine.close_all();
        Ok(())
    }

    /// Ends every session as a shutdown does: each Surface's view closes (nothing goes
    /// upstream), waiting capability calls are cancelled and their records finished. For an
    /// embedder that drives the host from its own loop ([`Host::handle_event`]) and tears down
    /// there; dropping the host does it too. Calling it again does nothing more.
    pub fn close_all(&mut self) {
        self.engine.close_all();
    }

    /// Handles one inbound envelope (agent → client) right away, on the event-loop thread.
    /// Other threads use [`HostHandle::send_inbound`] instead.
    pub fn handle_inbound(&mut self, bytes: &[u8], target: &dyn WindowMaker) {
        self.engine.handle_inbound(bytes, None, target);
    }

    /// Handles one event of a loop the embedder runs; returns the control flow the host needs
    /// (`Exit` once it was shut down).
    ///
    /// The loop's user-event type may be the app's own ([`HostUserEvent`]): the host takes the
    /// events that carry a [`HostEvent`] and leaves the app's own to the app.
    pub fn handle_event<T: HostUserEvent>(
        &mut self,
        event: Event<'_, T>,
        target: &EventLoopWindowTarget<T>,
    ) -> ControlFlow {
        let idle_turn = matches!(event, Event::MainEventsCleared);
        match event {
            Event::UserEvent(user) => {
                if let Ok(HostEvent(inner)) = user.into_host_event() {
                    self.handle_user_event(inner, target);
                }
            }
            Event::WindowEvent {
                window_id, event, ..
            } => self.handle_window_event(window_id, &event, target),
            _ => {}
        }
        let Some(wakeup) = self.handle_timeout(idle_turn, target) else {
            self.wake_timer.arm(None);
            return ControlFlow::Exit;
        };
        // One timer wakes the idle loop at the earliest deadline, under `Host::run` and under
        // an embedder's own loop alike; tao's `WaitUntil` is the fallback where it cannot be
        // armed.
        self.wake_timer.arm(wakeup);
        match (self.wake_timer.armed(), wakeup) {
            (None, Some(at)) => ControlFlow::WaitUntil(at),
            _ => ControlFlow::Wait,
        }
    }

    /// The host's one clock (with the kernel's inside it): does every timed or polled piece of
    /// work that is due (the engine's views and probe, the capability answers waiting, the
    /// kernel's deadlines, the app center and policy polls, the hang watchdog, hibernation,
    /// the pool, the warm component board) and returns the earliest moment it next has any
    /// (`Some(None)`: none), or `None` once the host is shutting down. `idle_turn`: the loop
    /// has nothing else to do, so work that waits for an idle moment may start.
    fn handle_timeout(
        &mut self,
        idle_turn: bool,
        target: &dyn WindowMaker,
    ) -> Option<Option<Instant>> {
        self.engine.start_turn(target);
        while let Some(effects) = self.intake.next() {
            self.engine.apply(effects, None, target);
        }
        // The kernel's one clock: calls, components and idle sessions.
        let mut wakeup = self.engine.handle_timeout(self.session_idle, target);
        let mut wake_at = |at: Option<Instant>| {
            if let Some(at) = at {
                wakeup = Some(wakeup.map_or(at, |w: Instant| w.min(at)));
            }
        };
        wake_at(self.poll_apps(target));
        wake_at(self.poll_policy(target));
        let intake = &self.intake;
        wake_at(self.engine.tend(|| idle_turn && intake.idle(), target));
        if self.exit.ends_when(|| self.engine.screen().is_empty()) {
            tracing::info!("the last surface closed; exiting");
            self.engine.close_all();
            self.exit.now();
        }
        if self.exit.ends() {
            return None;
        }
        Some(wakeup)
    }

    /// Looks at the app center's change marker when due; when it moved, every session hears of
    /// it. Returns when to look again.
    fn poll_apps(&mut self, target: &dyn WindowMaker) -> Option<Instant> {
        let (changed, next) = self.watches.poll_apps()?;
        if changed {
            self.engine.apps_changed(target);
        }
        Some(next)
    }

    /// Applies what changed in the operator's capability policy, when due; returns when to
    /// look again.
    fn poll_policy(&mut self, target: &dyn WindowMaker) -> Option<Instant> {
        let (changes, next) = self.watches.poll_policy(self.engine.sessions())?;
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

    /// The loop's own events (sessions opened and ended through the API, the wake, the
    /// shutdowns); the rest goes to the engine ([`Engine::handle_event`]), an inbound line
    /// counted as taken first.
    fn handle_user_event(&mut self, inner: Inner, target: &dyn WindowMaker) {
        match inner {
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
            Inner::Shutdown => {
                self.engine.close_all();
                self.exit.now();
            }
            Inner::ShutdownWhenEmpty => self.exit.when_empty(),
            event => {
                if event.is_inbound() {
                    self.intake.handled();
                }
                self.engine.handle_event(event, target);
            }
        }
    }

    fn handle_window_event(
        &mut self,
        window_id: WindowId,
        event: &WindowEvent<'_>,
        target: &dyn WindowMaker,
    ) {
        if !self.engine.window_event(window_id, event) {
            return;
        }
        if !self.exit.on_parent_close() {
            tracing::info!("close request for the kiosk window ignored");
            return;
        }
        // The user closed the window that holds every Surface.
        self.engine.user_closed_all(target);
        self.exit.now();
    }
}

impl Drop for Host {
    /// [`Host::close_all`]: an embedder's own loop tears down by dropping the host.
    fn drop(&mut self) {
        self.engine.close_all();
    }
}
