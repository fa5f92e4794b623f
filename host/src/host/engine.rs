//! The one interpreter of the kernel's effects ([`Engine::interpret`], every [`Effect`] by
//! name) and the one route of a webview's reports into the kernel
//! ([`Engine::handle_view_event`] → `Sessions::handle_page`), with what both act on: the
//! kernel side ([`Kernel`]: the session table and its queue), the screen side ([`Screen`]: the
//! views and the components' renderers), the capability driver and the embedder's callbacks.
//! [`Host`](super::Host) owns one, feeds it the loop's events and asks it for the rest by intent.

use std::time::{Duration, Instant};

use lineup_host_core::mcp::HostOwned;
use lineup_host_core::mcp_host::HostReply;
use lineup_host_core::{
    Activity, AgentIdentity, Answer, CapabilityEffect, CapabilityName, CloseReason,
    ComponentEffect, ConversationId, Effect, GoneReason, McpEffect, PageInput, PartyId,
    SessionEffects, SessionId, Sessions, SurfaceKey, Ticket, UsageError,
};
use lineup_webview_shell::tao::event::WindowEvent;
use lineup_webview_shell::tao::window::WindowId;
use lineup_webview_shell::{ComponentAction, Contrast, ViewEvent, WindowMaker};

use super::handle::{EmbedderInput, Inner};
use super::kernel::Kernel;
use super::probe_gate::ProbeNews;
use super::screen::Screen;
use super::shutdown::AtShutdown;
use super::upstream::Upstream;
use super::view_input::ViewInput;
use crate::capabilities::CapabilityDriver;
use crate::delegate::Refusal;
use crate::watchdog::Verdict;

/// The kernel side joined to the screen side, the capability driver and the embedder's
/// callbacks: what the kernel's effects act on.
///
/// Invariants: every effect the kernel makes reaches [`Engine::interpret`] through the
/// kernel's queue, drained by the outermost call ([`Engine::apply`] and every input), so
/// nothing recurses; every report of a view reaches its session through
/// [`Engine::handle_view_event`]. The host reads the parts and asks for every change by intent.
pub(super) struct Engine {
    /// The session table, the effects waiting for the interpreter, the reopen rule.
    kernel: Kernel,
    /// The Surfaces' views and the standard components' renderers.
    screen: Screen,
    /// Carries out the capability kernels' effects, when capabilities are enabled.
    driver: Option<CapabilityDriver>,
    /// The embedder's outbound callback and delegate.
    upstream: Upstream,
}

impl Engine {
    /// An engine of these parts.
    pub(super) fn new(
        kernel: Kernel,
        screen: Screen,
        driver: Option<CapabilityDriver>,
        upstream: Upstream,
    ) -> Self {
        Self {
            kernel,
            screen,
            driver,
            upstream,
        }
    }

    /// The session table, to read.
    pub(super) fn sessions(&self) -> &Sessions {
        self.kernel.sessions()
    }

    /// The screen side, to read.
    pub(super) fn screen(&self) -> &Screen {
        &self.screen
    }

    /// What the loop brought for the engine, each event by name; the host keeps its own (the
    /// sessions opened and ended through its API, the wake, the shutdowns).
    pub(super) fn handle_event(&mut self, event: Inner, target: &dyn WindowMaker) {
        match event {
            Inner::Inbound { line, bytes } => {
                // For `lineup-bench`'s patch profile: the event loop took the envelope.
                tracing::debug!(target: "lineup_phase", phase = "inbound_taken");
                self.handle_inbound(&bytes.0, line, target);
            }
            Inner::Oversized { line, len } => self.kernel.handle_oversized(len, line),
            Inner::BinaryFrame { len } => self.kernel.handle_binary_frame(len),
            Inner::EventsDropped { instance, count } => {
                self.kernel.events_dropped(&instance, count);
            }
            Inner::SurfacesGone {
                conversation,
                reason,
            } => self.kernel.surfaces_gone(conversation.as_ref(), reason),
            Inner::Withdraw { name } => {
                self.kernel.withdraw(&name);
            }
            Inner::SetVisible {
                agent,
                name,
                visible,
            } => self.kernel.set_visible(&agent, &name, visible),
            Inner::CapabilityAnswer {
                session,
                ticket,
                answer,
            } => self.capability_answer(session, ticket, answer, target),
            Inner::AnnounceInventory {
                conversation,
                agent,
                done,
            } => {
                // Applied at once, so that `done` runs after the inventory went out.
                let announced = self.kernel.announce(conversation, agent);
                self.drain(target);
                (done.0)(announced);
            }
            Inner::View { key, event } => self.handle_view_event(key, event, target),
            Inner::Component { key, action } => self.component_report(key, action, target),
            Inner::EmbedderComponent { key, input } => self.embedder_report(key, input, target),
            Inner::LinkAnswered { link, answer } => {
                (self.screen).link_answered(&link, answer, self.driver.as_mut());
            }
            Inner::ChildAreaResized => self.relayout(),
            Inner::StandbyIndicator(text) => self.screen.set_standby_indicator(text.as_deref()),
            Inner::StandbyStatus(status) => self.screen.set_standby_status(&status),
            Inner::Reload { instance, bundle } => {
                let max = self.kernel.limits().max_bundle_bytes;
                self.screen.reload_bundle(&instance, &bundle, max);
            }
            Inner::ScreenPixels { instance, done } => self.screen.screen_pixels(instance, done),
            Inner::Snapshot { instance, done } => self.screen.snapshot(instance, done),
            Inner::OpenSession { .. }
            | Inner::EndSession { .. }
            | Inner::Wake
            | Inner::Shutdown
            | Inner::ShutdownWhenEmpty => tracing::error!("a host event reached the engine"),
        }
        // What the kernel queued for an input above is carried out now.
        self.drain(target);
    }

    /// An inbound envelope (`line`: its number on the transport), carried out.
    pub(super) fn handle_inbound(
        &mut self,
        bytes: &[u8],
        line: Option<u64>,
        target: &dyn WindowMaker,
    ) {
        self.kernel.handle_inbound(bytes, line);
        tracing::debug!(target: "lineup_phase", phase = "inbound_decoded");
        self.drain(target);
    }

    /// The session table opens a session for `conversation`, vouching for `agent`: the
    /// effects, for the loop's next turn.
    pub(super) fn open_session(
        &mut self,
        conversation: ConversationId,
        agent: Option<PartyId>,
    ) -> Result<SessionEffects, UsageError> {
        self.kernel.open_session(conversation, agent)
    }

    /// The session table ends the session of `conversation`: the effects, for the loop's next
    /// turn; `None` when it has none.
    pub(super) fn end_session(&mut self, conversation: &ConversationId) -> Option<SessionEffects> {
        self.kernel.end_session(conversation)
    }

    /// The app center changed: every session hears of it.
    pub(super) fn apps_changed(&mut self, target: &dyn WindowMaker) {
        self.kernel.apps_changed();
        self.drain(target);
    }

    /// [`Host::withdraw_capability`](super::Host::withdraw_capability).
    pub(super) fn withdraw_capability(
        &mut self,
        name: &CapabilityName,
        target: &dyn WindowMaker,
    ) -> bool {
        let withdrawn = self.kernel.withdraw(name);
        self.drain(target);
        withdrawn
    }

    /// [`Host::set_capability_visible`](super::Host::set_capability_visible).
    pub(super) fn set_capability_visible(
        &mut self,
        agent: &AgentIdentity,
        name: &CapabilityName,
        visible: bool,
        target: &dyn WindowMaker,
    ) {
        self.kernel.set_visible(agent, name, visible);
        self.drain(target);
    }

    /// Hands the kernel an answer to one of its tickets (a prompt's, the hook's, a handler's)
    /// and carries out what follows.
    pub(super) fn answered(
        &mut self,
        session: SessionId,
        ticket: Ticket,
        answer: Answer,
        target: &dyn WindowMaker,
    ) {
        self.kernel.answered(session, ticket, answer);
        self.drain(target);
    }

    /// A capability's asynchronous answer arrived (the user's consent, a hook's verdict, a
    /// handler's outcome, from the driver's sink): the driver forgets the prompt it answers,
    /// and the kernel gets the answer.
    pub(super) fn capability_answer(
        &mut self,
        session: SessionId,
        ticket: Ticket,
        answer: Answer,
        target: &dyn WindowMaker,
    ) {
        if let Some(driver) = self.driver.as_mut() {
            driver.answered(session, ticket);
        }
        self.answered(session, ticket, answer, target);
    }

    /// Whether `key` names a Surface open now in a live session.
    fn is_current(&self, key: &SurfaceKey) -> bool {
        self.sessions()
            .get(key.session)
            .is_some_and(|s| s.is_current(key))
    }

    /// What the webview of `key` reported: page input goes to its session through the session
    /// table (R-SEC-4: the key is the view's, never the page's word); a refusal goes to the
    /// delegate.
    pub(super) fn handle_view_event(
        &mut self,
        key: SurfaceKey,
        event: ViewEvent,
        target: &dyn WindowMaker,
    ) {
        match self.screen.view_input(&key, event) {
            ViewInput::Message { raw, dropped } => {
                for dropped in dropped.inputs() {
                    self.page_input(&key, dropped, target);
                }
                self.page_input(&key, PageInput::Message(&raw), target);
            }
            ViewInput::Mcp { raw, dropped } => {
                for dropped in dropped.inputs() {
                    self.page_input(&key, dropped, target);
                }
                self.page_input(&key, PageInput::McpFromView(&raw), target);
            }
            ViewInput::McpBlocked { directive, blocked } => {
                let (directive, blocked) = (directive.as_str(), blocked.as_str());
                self.page_input(&key, PageInput::McpBlocked { directive, blocked }, target);
            }
            ViewInput::Page(input) => self.page_input(&key, input, target),
            ViewInput::Crashed => {
                if self.is_current(&key) {
                    self.upstream.delegate().notify_crashed(&key);
                }
                self.lost(key, GoneReason::Crashed, target);
            }
            ViewInput::Unresponsive => self.lost(key, GoneReason::Unresponsive, target),
            ViewInput::Refused(refusal) => {
                if self.is_current(&key) {
                    self.upstream.delegate().notify_refused(&key, &refusal);
                }
            }
            ViewInput::Nothing => {}
        }
    }

    /// Hands `input` of the view of `key` to its session and carries out what follows.
    fn page_input(&mut self, key: &SurfaceKey, input: PageInput<'_>, target: &dyn WindowMaker) {
        self.kernel.page(key, input);
        self.drain(target);
    }

    /// The web process of `key` died (`Crashed`) or was terminated as hung (`Unresponsive`): its
    /// session reopens the Surface within its budget, or closes it and tells the agent; with
    /// [`HostBuilder::reopen_lost_surfaces`] off it is closed at once. Nothing for a stale key.
    ///
    /// [`HostBuilder::reopen_lost_surfaces`]: super::HostBuilder::reopen_lost_surfaces
    fn lost(&mut self, key: SurfaceKey, reason: GoneReason, target: &dyn WindowMaker) {
        self.kernel.lost(&key, reason);
        self.drain(target);
    }

    /// The isolation probe's verdict, once it is there (R-SEC-8): a failure closes the views
    /// made while it ran, and their agents hear the open failed.
    pub(super) fn poll_probe(&mut self, target: &dyn WindowMaker) {
        match self.screen.poll_probe() {
            ProbeNews::None | ProbeNews::Passed => {}
            ProbeNews::Failed { reason, held } => {
                self.upstream.delegate().notify_probe_failed(&reason);
                let why = format!("the isolation probe failed (R-SEC-8): {reason}");
                // Their documents were never served (the gate refused them).
                for key in held {
                    self.page_input(&key, PageInput::OpenFailed(&why), target);
                    self.screen.destroy(&key, self.upstream.delegate());
                }
            }
        }
    }

    /// Carries out the effects of one session (or of the session table); a capability effect's
    /// answer goes back to that session.
    pub(super) fn apply(
        &mut self,
        effects: SessionEffects,
        line: Option<u64>,
        target: &dyn WindowMaker,
    ) {
        self.kernel.queue(effects, line);
        self.drain(target);
    }

    /// Carries out the effects waiting in the kernel's queue, in order. Effects that arise
    /// while one is carried out (a capability answer's, a failed open's) are queued ahead of
    /// the rest of the batch, as a nested call would take them; the outermost call drains the
    /// queue, so nothing recurses through here.
    fn drain(&mut self, target: &dyn WindowMaker) {
        if !self.kernel.start_drain() {
            return;
        }
        while let Some((session, effect, line)) = self.kernel.next() {
            self.interpret(session, effect, line, target);
        }
        self.kernel.finish_drain();
    }

    /// The one interpreter of the kernel's effects: every [`Effect`] by name.
    pub(super) fn interpret(
        &mut self,
        session: SessionId,
        effect: Effect,
        line: Option<u64>,
        target: &dyn WindowMaker,
    ) {
        let (kernel, delegate) = (&mut self.kernel, self.upstream.delegate());
        match effect {
            Effect::Component(effect) => self.component(effect, target),
            Effect::Open(open) => self.screen.open(open, kernel, delegate, target),
            Effect::OpenHibernated(open) => {
                self.screen.open_hibernated(open, kernel, delegate, target);
            }
            Effect::Replace { old, open } => {
                self.screen.close(&old, &CloseReason::Replaced, delegate);
                self.screen.open(open, kernel, delegate, target);
            }
            Effect::Reopen { old, open, reason } => {
                (self.screen).reopen(old, open, reason, kernel, delegate, target);
            }
            Effect::Ready(key) => {
                self.screen.ready(&key);
                delegate.notify_ready(&key);
            }
            Effect::Reloaded(key) => delegate.notify_reloaded(&key),
            Effect::RestoreDocument(key) => {
                // R-SEC-2a: the page replaced its document without a navigation (a
                // `javascript:` URL); its own document is loaded again and gets the current
                // state after its `ready` (R-UI-10).
                self.screen.restore_document(&key);
                delegate.notify_refused(&key, &Refusal::DocumentReplaced);
            }
            Effect::DeliverState { key, state } => self.screen.deliver_state(&key, &state),
            Effect::Resize { key, height } => self.screen.resize(&key, height, delegate),
            Effect::Diagnostic { key, diagnostic } => {
                self.screen.diagnostic(&key, diagnostic, delegate);
            }
            Effect::Close { key, reason } => self.screen.close(&key, &reason, delegate),
            Effect::Send(message) => {
                self.upstream.send(&message);
            }
            Effect::Rejected(error) => delegate.notify_rejected(&error, line),
            Effect::Mcp(McpEffect::Open(open)) => {
                self.screen.open_mcp(open, kernel, delegate, target);
            }
            Effect::Mcp(McpEffect::Post { key, message }) => {
                self.screen.post_to_mcp_view(&key, &message);
            }
            Effect::Mcp(McpEffect::HostOwned { key, message }) => {
                self.mcp_host_owned(key, &message, target);
            }
            Effect::Dropped { key, error } => delegate.notify_dropped(&key, &error),
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
                    self.answered(session, ticket, answer, target);
                }
            }
        }
    }

    /// What the host does with a message of MCP App view `key` that it answers or takes
    /// itself (R-MCP-8, [`Screen::mcp_reply`]): an answer goes to the view through its session
    /// ([`Sessions::mcp_host_answer`]); the `ui/initialize` answer is the view's `ready` (the
    /// watchdog's first sign of life, the delegate's `notify_ready`); a size change is a
    /// Surface's resize; a teardown request closes it as the user's close does (its opener
    /// hears `ui.event` `close`, then it is torn down).
    fn mcp_host_owned(&mut self, key: SurfaceKey, message: &HostOwned, target: &dyn WindowMaker) {
        let Some(reply) = self.screen.mcp_reply(&key, message) else {
            return;
        };
        let answer = |kernel: &mut Kernel, outcome| {
            if let Some(id) = &message.id {
                kernel.mcp_host_answer(&key, id, outcome);
            }
        };
        match reply {
            HostReply::Initialize(result) => {
                answer(&mut self.kernel, Ok(result));
                self.screen.ready(&key);
                self.upstream.delegate().notify_ready(&key);
            }
            HostReply::Answer(outcome) => answer(&mut self.kernel, outcome),
            HostReply::Resize(height) => {
                self.screen.resize(&key, height, self.upstream.delegate());
            }
            HostReply::Teardown => self.kernel.page(&key, PageInput::UserClosed),
            HostReply::Nothing => {}
        }
        self.drain(target);
    }

    /// What ran (original §5.3): logged (never the reason), told to the delegate, and shown in
    /// the host's notice when the user saw nothing of it.
    fn activity(&mut self, activity: &Activity) {
        self.upstream.activity(activity, self.screen.standby());
    }

    /// Standard components (R-STD-1): the built-in renderer, when on, shows, updates, locks and
    /// hides each instance's window; without it, or for a component it does not draw, a shown
    /// component fails closed: the session closes it with `renderer_failed` (R-STD-13).
    fn component(&mut self, effect: ComponentEffect, target: &dyn WindowMaker) {
        let delegate = self.upstream.delegate();
        if let Some(key) = (self.screen).show_component(effect, &self.kernel, delegate, target) {
            self.page_input(&key, PageInput::ComponentFailed, target);
        }
    }

    /// What the window of component `key` reported: the user's answer or close, or its
    /// failure, goes to its session through the session table.
    pub(super) fn component_report(
        &mut self,
        key: SurfaceKey,
        action: ComponentAction,
        target: &dyn WindowMaker,
    ) {
        if let ComponentAction::Link { url, .. } = &action {
            // R-STD-11: only a window the built-in renderer shows, only a link of the kernel's
            // own tree, and only after the link confirm.
            let link = || self.kernel.component_link(&key, url);
            return self.screen.follow_link(&key, link, self.driver.as_mut());
        }
        if let Some(input) = self.screen.component_input(&key, action) {
            self.page_input(&key, input.page_input(), target);
        }
    }

    /// What the embedder's renderer reported for component `key` (R-STD-16): its answer
    /// (`via: "embedder"`), close or draft goes to the session, which checks it again.
    pub(super) fn embedder_report(
        &mut self,
        key: SurfaceKey,
        input: EmbedderInput,
        target: &dyn WindowMaker,
    ) {
        if let Some(input) = self.screen.embedder_input(&key, input) {
            self.page_input(&key, input.page_input(), target);
        }
    }

    /// Lays the child views out again, Surfaces and the components over them (the window of
    /// the child views was resized, or the app changed its placement).
    pub(super) fn relayout(&mut self) {
        self.screen.relayout(self.upstream.delegate());
    }

    /// [`Host::set_surface_visible`](crate::Host::set_surface_visible) ([`Screen`]).
    pub(super) fn set_surface_visible(&mut self, key: &SurfaceKey, visible: bool) -> bool {
        (self.screen).set_surface_visible(key, visible, self.upstream.delegate())
    }

    /// [`Host::set_conversation_visible`](crate::Host::set_conversation_visible): its
    /// Surfaces, boards and consent prompts go together; whether it has a session.
    pub(super) fn set_conversation_visible(&mut self, c: &ConversationId, visible: bool) -> bool {
        if let Some(driver) = self.driver.as_mut() {
            driver.set_conversation_visible(c, visible);
        }
        let session = self.kernel.sessions().id_of(c);
        let delegate = self.upstream.delegate();
        (self.screen).set_conversation_visible(c, session, visible, delegate);
        session.is_some()
    }

    /// Names `conversation` `label` in the consent prompts it causes (`None`: its id again).
    pub(super) fn set_conversation_label(&mut self, c: &ConversationId, label: Option<&str>) {
        if let Some(driver) = self.driver.as_mut() {
            driver.set_label(c, label);
        }
    }

    /// How many consent requests of `conversation` wait for it to be shown.
    pub(super) fn waiting_prompts(&self, conversation: &ConversationId) -> usize {
        let driver = self.driver.as_ref();
        driver.map_or(0, |driver| driver.waiting_prompts(conversation))
    }

    /// Surfaces opened from now on get the high-contrast values, or not (R-UI-11).
    pub(super) fn set_contrast(&mut self, contrast: Contrast) {
        self.screen.set_contrast(contrast);
    }

    /// [`Host::hibernate`](crate::Host::hibernate) ([`Screen::hibernate`]).
    pub(super) fn hibernate(&mut self, key: &SurfaceKey) -> bool {
        self.screen.hibernate(key, &mut self.kernel)
    }

    /// What a turn of the loop starts with: an engine the embedder brought does its work and
    /// reports its views' events; the hibernated Surfaces shown since the last turn wake; the
    /// probe's verdict is taken, and its view closed once done with.
    pub(super) fn start_turn(&mut self, target: &dyn WindowMaker) {
        self.screen.spin_engine();
        self.wake_pending(target);
        self.poll_probe(target);
        self.screen.close_finished_probe();
    }

    /// Wakes the hibernated Surfaces the embedder showed since the last turn, each carried
    /// out before the next ([`Screen::wake`]).
    pub(super) fn wake_pending(&mut self, target: &dyn WindowMaker) {
        for key in self.screen.take_wakes() {
            let delegate = self.upstream.delegate();
            self.screen.wake(&key, &mut self.kernel, delegate, target);
            self.drain(target);
        }
    }

    /// A window event ([`Screen::window_event`]); whether the user asked to close the parent
    /// window.
    pub(super) fn window_event(&mut self, window_id: WindowId, event: &WindowEvent<'_>) -> bool {
        (self.screen).window_event(window_id, event, self.upstream.delegate())
    }

    /// The user closed the window that holds every Surface: each Surface's session hears it.
    pub(super) fn user_closed_all(&mut self, target: &dyn WindowMaker) {
        for key in self.screen.surfaces() {
            self.page_input(&key, PageInput::UserClosed, target);
        }
    }

    /// Runs the hang watchdog (R-UI-12): the web process of a view past its deadline is
    /// terminated (the crash path follows when the engine reports it, as `unresponsive`), and a
    /// Surface whose termination the engine never reported ends anyway. Returns when to check
    /// again.
    pub(super) fn poll_watchdog(&mut self, target: &dyn WindowMaker) -> Option<Instant> {
        let (verdicts, next) = self.screen.poll_watchdog();
        for (key, verdict) in verdicts {
            match verdict {
                Verdict::Terminate => self.screen.terminate(&key, self.upstream.delegate()),
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

    /// The engine's own polled work after the kernel's, in order: the hang watchdog, then the
    /// screen's ([`Screen::tend`]: hibernation, and at an idle turn the warm pool and board);
    /// returns the earliest moment it next has some.
    pub(super) fn tend(
        &mut self,
        idle: impl FnOnce() -> bool,
        target: &dyn WindowMaker,
    ) -> Option<Instant> {
        let watchdog = self.poll_watchdog(target);
        let screen = self.screen.tend(idle, &mut self.kernel, target);
        watchdog.into_iter().chain(screen).min()
    }

    /// The kernel's timed work that is due (capability deadlines, components' `expires_at`,
    /// with `idle` quiet sessions), and when it next has some.
    pub(super) fn handle_timeout(
        &mut self,
        idle: Option<Duration>,
        target: &dyn WindowMaker,
    ) -> Option<Instant> {
        self.kernel.handle_timeout(idle);
        self.drain(target);
        self.kernel.poll_timeout(idle)
    }

    /// Ends every session: Surfaces close silently; waiting calls are cancelled, their records
    /// finished in the store and their prompts withdrawn; nothing is sent. Every other effect
    /// of the ending sessions is named with why it is not carried out ([`AtShutdown`]).
    pub(super) fn close_all(&mut self) {
        for ended in self.kernel.end_all() {
            let SessionEffects { session, effects } = ended;
            for effect in effects {
                match AtShutdown::of(effect) {
                    AtShutdown::Close { key, reason } => {
                        self.screen.close(&key, &reason, self.upstream.delegate());
                    }
                    AtShutdown::Withdraw(ticket) => {
                        if let Some(driver) = self.driver.as_mut() {
                            let withdraw = CapabilityEffect::Withdraw(ticket);
                            let _withdrawals_have_no_answer = driver.execute(session, withdraw);
                        }
                    }
                    AtShutdown::Unapplied(why) => {
                        tracing::debug!(
                            "session {session} ends: an effect not carried out ({why:?})"
                        );
                    }
                }
            }
        }
    }
}
