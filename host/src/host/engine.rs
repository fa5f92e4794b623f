//! The one interpreter of the kernel's effects ([`Engine::interpret`], every [`Effect`] by
//! name) and the one route of a webview's reports into the kernel
//! ([`Engine::handle_view_event`] → `Sessions::handle_page`), with what both act on: the
//! session table, the view table, the capability driver, the delegate and the outbound
//! callback. [`Host`](super::Host) owns one and feeds it the loop's events.

use std::time::{Duration, Instant};

use lineup_host_core::WallClock;
use lineup_host_core::{
    Activity, Answer, CapabilityEffect, CloseReason, ComponentEffect, ConversationId, Effect,
    GoneReason, PageInput, PartyId, SessionEffects, SessionId, Sessions, SurfaceKey, SurfaceOpen,
    Ticket,
};
use lineup_webview_shell::WindowMaker;
use lineup_webview_shell::{ComponentAction, SystemWallClock, ViewEvent};

use super::components::{ComponentViews, ShowContext};
use super::handle::EmbedderInput;
use super::handle::{HostEvent, Inner};
use super::link::{self, AnnounceDone};
use super::live::Kept;
use super::probe_gate::ProbeNews;
use super::proxy::HostProxy;
use super::shutdown::AtShutdown;
use super::upstream::Upstream;
use super::view_input::ViewInput;
use super::views::Views;
use super::work::Work;
use crate::capabilities::CapabilityDriver;
use crate::delegate::Refusal;
use crate::watchdog::Verdict;

/// The shortest wait the kernel's clock asks of the loop, so that a deadline due now cannot
/// spin it.
const MIN_TIMER: Duration = Duration::from_millis(10);

/// The session table joined to the views, the capability driver and the embedder's callbacks:
/// what the kernel's effects act on.
pub(super) struct Engine {
    pub(super) sessions: Sessions,
    /// Every open Surface's webview, and what places and feeds them.
    pub(super) views: Views,
    /// Carries out the capability kernels' effects, when capabilities are enabled.
    pub(super) driver: Option<CapabilityDriver>,
    pub(super) proxy: HostProxy,
    /// The embedder's outbound callback and delegate.
    pub(super) upstream: Upstream,
    /// Whether lost Surfaces are reopened ([`HostBuilder::reopen_lost_surfaces`]).
    ///
    /// [`HostBuilder::reopen_lost_surfaces`]: super::HostBuilder::reopen_lost_surfaces
    pub(super) reopen: bool,
    /// The built-in renderer of standard components, when
    /// [`HostBuilder::builtin_components`] is on.
    ///
    /// [`HostBuilder::builtin_components`]: super::HostBuilder::builtin_components
    pub(super) components: Option<ComponentViews>,
    /// Effects waiting for [`Engine::interpret`], in order ([`Engine::apply`]).
    pub(super) work: Work,
}

impl Engine {
    /// Hands the kernel an answer to one of its tickets (a prompt's, the hook's, a handler's)
    /// and carries out what follows.
    pub(super) fn answered(
        &mut self,
        session: SessionId,
        ticket: Ticket,
        answer: Answer,
        target: &dyn WindowMaker,
    ) {
        match self.sessions.answered(session, ticket, answer) {
            Ok(effects) => self.apply(effects, None, target),
            Err(e) => tracing::error!("answer refused by the kernel: {e}"),
        }
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

    /// [`HostHandle::announce_inventory`], applied at once so that `done` runs after the
    /// inventory went to the outbound callback. A conversation whose session ended gets it
    /// opened again, vouching for `agent` (R-SES-1).
    pub(super) fn announce_inventory(
        &mut self,
        conversation: ConversationId,
        agent: Option<PartyId>,
        done: AnnounceDone,
        target: &dyn WindowMaker,
    ) {
        let effects = link::announce_again(&mut self.sessions, conversation, agent);
        let announced = effects.as_ref().is_some_and(link::announces);
        if let Some(effects) = effects {
            self.apply(effects, None, target);
        }
        (done.0)(announced);
    }

    /// Whether `key` names a Surface open now in a live session.
    pub(super) fn is_current(&self, key: &SurfaceKey) -> bool {
        self.sessions
            .get(key.session)
            .is_some_and(|s| s.is_current(key))
    }

    /// Whether the conversation of `session` is hidden.
    pub(super) fn is_hidden(&self, session: SessionId) -> bool {
        self.sessions
            .get(session)
            .and_then(|s| s.conversation_id())
            .is_some_and(|c| self.views.conversation_hidden(c))
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
        // A hibernated Surface's released view may still have events on their way: what its
        // page posted goes on (nothing is lost); its ending is the hibernation's, not news.
        if self.views.is_hibernated(&key) && !matches!(event, ViewEvent::Ipc(_)) {
            return;
        }
        match ViewInput::of(&mut self.views, &key, event) {
            ViewInput::Message { raw, dropped } => {
                for dropped in dropped.inputs() {
                    self.page_input(&key, dropped, target);
                }
                self.page_input(&key, PageInput::Message(&raw), target);
            }
            ViewInput::Page(input) => self.page_input(&key, input, target),
            ViewInput::Crashed => {
                if self.is_current(&key) {
                    self.upstream.delegate().notify_crashed(&key);
                }
                self.lost(key, GoneReason::Crashed, target);
            }
            ViewInput::Unresponsive => self.lost(key, GoneReason::Unresponsive, target),
            ViewInput::Refused(refusal) => self.refused(&key, refusal),
            ViewInput::Nothing => {}
        }
    }

    /// Hands `input` of the view of `key` to its session and carries out what follows.
    pub(super) fn page_input(
        &mut self,
        key: &SurfaceKey,
        input: PageInput<'_>,
        target: &dyn WindowMaker,
    ) {
        let effects = self.sessions.handle_page(key, input);
        self.apply(effects, None, target);
    }

    /// The view of `key` refused what its page tried; the delegate hears of it.
    pub(super) fn refused(&mut self, key: &SurfaceKey, refusal: Refusal) {
        if self.is_current(key) {
            self.upstream.delegate().notify_refused(key, &refusal);
        }
    }

    pub(super) fn poll_probe(&mut self, target: &dyn WindowMaker) {
        match self.views.poll_probe() {
            ProbeNews::None | ProbeNews::Passed => {}
            ProbeNews::Failed { reason, held } => {
                self.upstream.delegate().notify_probe_failed(&reason);
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
    pub(super) fn apply(
        &mut self,
        effects: SessionEffects,
        line: Option<u64>,
        target: &dyn WindowMaker,
    ) {
        let SessionEffects { session, effects } = effects;
        // Effects that arise while one is carried out (a capability answer's, a failed open's)
        // go first, before the rest of the batch, as a nested call would take them; the
        // outermost call drains the queue, so nothing recurses through here.
        self.work.push_front(session, effects, line);
        if !self.work.start() {
            return;
        }
        while let Some((session, effect, line)) = self.work.next() {
            self.interpret(session, effect, line, target);
        }
        self.work.finish();
    }

    /// The one interpreter of the kernel's effects: every [`Effect`] by name.
    pub(super) fn interpret(
        &mut self,
        session: SessionId,
        effect: Effect,
        line: Option<u64>,
        target: &dyn WindowMaker,
    ) {
        match effect {
            Effect::Component(effect) => self.component(effect, target),
            Effect::Open(open) => self.open(open, target),
            Effect::OpenHibernated(open) => self.open_hibernated(open, target),
            Effect::Replace { old, open } => {
                self.close(&old, &CloseReason::Replaced);
                self.open(open, target);
            }
            Effect::Reopen { old, open, reason } => self.reopen(old, open, reason, target),
            Effect::Ready(key) => {
                self.views.ready(&key);
                self.upstream.delegate().notify_ready(&key);
            }
            Effect::Reloaded(key) => self.upstream.delegate().notify_reloaded(&key),
            Effect::RestoreDocument(key) => {
                // R-SEC-2a: the page replaced its document without a navigation (a
                // `javascript:` URL); its own document is loaded again and gets the current
                // state after its `ready` (R-UI-10).
                self.views.restore_document(&key);
                self.upstream
                    .delegate()
                    .notify_refused(&key, &Refusal::DocumentReplaced);
            }
            Effect::DeliverState { key, state } => {
                // A hibernated Surface has no view: the kernel's state is its latest, delivered
                // after its new page's `ready` (#29).
                if let Some(view) = self.views.view(&key) {
                    if let Err(e) = view.deliver_state(&state.to_json()) {
                        tracing::warn!("surface {key}: state not delivered: {e}");
                    }
                }
                self.views.state_set(&key);
            }
            Effect::Resize { key, height } => {
                self.views.resize(&key, height, self.upstream.delegate());
            }
            Effect::Diagnostic { key, diagnostic } => {
                self.views
                    .diagnostic(&key, diagnostic, self.upstream.delegate());
            }
            Effect::Close { key, reason } => self.close(&key, &reason),
            Effect::Send(message) => {
                self.upstream.send(&message);
            }
            Effect::Rejected(error) => self.upstream.delegate().notify_rejected(&error, line),
            // This host leaves `SessionConfig::mcp_apps` off, so its sessions refuse every
            // `mcp_app` open `unsupported` (R-MCP-13) and emit no MCP App work.
            Effect::Mcp(effect) => {
                tracing::error!(
                    "an MCP App effect reached a host that shows none; ignored: {effect:?}"
                );
            }
            Effect::Dropped { key, error } => self.upstream.delegate().notify_dropped(&key, &error),
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

    /// Carries out each batch of `effects`, in order.
    pub(super) fn apply_all(&mut self, effects: Vec<SessionEffects>, target: &dyn WindowMaker) {
        for effects in effects {
            self.apply(effects, None, target);
        }
    }

    /// R-SEC-8: the view is created at once, even while the isolation probe runs; its document
    /// is then held until the probe passed ([`Shell::open_gated`]), and the view closed with
    /// `open_failed` if it failed ([`Engine::poll_probe`]).
    ///
    /// [`Shell::open_gated`]: lineup_webview_shell::Shell::open_gated
    pub(super) fn open(&mut self, open: SurfaceOpen, target: &dyn WindowMaker) {
        // #29: a web process for it, hibernating a hidden Surface if the live cap says so.
        if !self.make_room(None) {
            let limit = self.sessions.limits().max_live_surfaces;
            self.page_input(&open.key, PageInput::LiveCapReached { limit }, target);
            return;
        }
        self.views.hold_until_probed(&open.key);
        self.create(open, Kept::default(), target);
    }

    /// Creates the webview of `open` ([`Views::create`], the one place a Surface's webview is
    /// made); a reopened one keeps what its predecessor had (`kept`). A view that cannot be
    /// made fails the open, or leaves a reopened Surface gone (R-UI-12).
    pub(super) fn create(&mut self, open: SurfaceOpen, kept: Kept, target: &dyn WindowMaker) {
        let key = open.key.clone();
        let limits = self.sessions.limits().clone();
        match self
            .views
            .create(&open, &kept, &limits, &self.proxy, target)
        {
            Ok(()) => {
                // The delegate hears of the Surface before it is asked where to put it, so a
                // layout by key (a kiosk's regions) knows it on the first placement.
                self.upstream.delegate().notify_opened(&key, &open.app);
                if self.is_hidden(key.session) {
                    self.views.set_visible(&key, false);
                }
                self.views.relayout(self.upstream.delegate());
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
    pub(super) fn destroy(&mut self, key: &SurfaceKey) {
        if self.views.destroy(key) {
            self.views.relayout(self.upstream.delegate());
        }
    }

    /// Closes the webview of `key` and tells the delegate why.
    fn close(&mut self, key: &SurfaceKey, reason: &CloseReason) {
        self.destroy(key);
        self.upstream.delegate().notify_closed(key, reason);
    }

    /// Lays the child views out again, Surfaces and the components over them (the window of
    /// the child views was resized).
    pub(super) fn relayout(&mut self) {
        self.views.relayout(self.upstream.delegate());
        if let (Some(views), Some(parent)) = (self.components.as_mut(), self.views.parent()) {
            views.relayout(parent, self.upstream.delegate());
        }
    }

    /// [`Host::set_surface_visible`](crate::Host::set_surface_visible): a hibernated Surface
    /// shown again wakes at the loop's next turn, its picture standing in (#29); a live one is
    /// hidden or shown and the views laid out again. Returns whether `key` is open.
    pub(super) fn set_surface_visible(&mut self, key: &SurfaceKey, visible: bool) -> bool {
        if self.views.is_hibernated(key) {
            if visible && self.views.queue_wake(key) {
                let _ = self.proxy.send_event(HostEvent(Inner::Wake));
            }
            return true;
        }
        let known = self.views.set_visible(key, visible);
        if known {
            self.relayout();
        }
        known
    }

    /// The web process of `key` died (`Crashed`) or was terminated as hung (`Unresponsive`): its
    /// session reopens the Surface within its budget, or closes it and tells the agent; with
    /// [`HostBuilder::reopen_lost_surfaces`] off it is closed at once. Nothing for a stale key.
    pub(super) fn lost(&mut self, key: SurfaceKey, reason: GoneReason, target: &dyn WindowMaker) {
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
    pub(super) fn reopen(
        &mut self,
        old: SurfaceKey,
        mut open: SurfaceOpen,
        reason: GoneReason,
        target: &dyn WindowMaker,
    ) {
        let kept = self.views.kept(&old, reason);
        if let Some(bundle) = &kept.reloaded {
            open.app.bundle = bundle.clone();
        }
        tracing::warn!(
            "surface {old}: web process lost ({reason}); reopened as {} (R-UI-12)",
            open.key
        );
        self.close(&old, &CloseReason::Reopened(reason));
        self.create(open, kept, target);
    }

    /// Restored Surface `open` (#29, after a restart): hibernated until the embedder shows it,
    /// where Surfaces are child views; opened at once where each has its own window.
    pub(super) fn open_hibernated(&mut self, open: SurfaceOpen, target: &dyn WindowMaker) {
        if !self.views.children() {
            return self.open(open, target);
        }
        self.views.sleep_restored(&open.key);
        self.upstream.delegate().notify_opened(&open.key, &open.app);
    }

    /// [`Host::hibernate`](crate::Host::hibernate): hibernates hidden child view `key` now,
    /// presses or not, and the kernel hears of it; whether it did.
    pub(super) fn hibernate(&mut self, key: &SurfaceKey) -> bool {
        let bytes = self.sessions.limits().max_hibernated_bytes;
        let done = self.views.hibernate(key, bytes);
        self.note_hibernated();
        done
    }

    /// Makes room for one more live view under `Limits::max_live_surfaces` by hibernating the
    /// least recently shown hidden Surfaces (never `except`); whether there is room now.
    pub(super) fn make_room(&mut self, except: Option<&SurfaceKey>) -> bool {
        let limits = self.sessions.limits();
        let (max_live, max_bytes) = (limits.max_live_surfaces, limits.max_hibernated_bytes);
        let room = self.views.make_room(max_live, max_bytes, except);
        self.note_hibernated();
        room
    }

    /// Tells the kernel of the Surfaces hibernated since it last heard, so that a vouched
    /// session keeps their records (#29), written through its store port now.
    pub(super) fn note_hibernated(&mut self) {
        for key in self.views.take_newly_hibernated() {
            self.sessions.surface_hibernated(&key);
        }
    }

    /// Wakes the hibernated Surfaces the embedder showed since the last turn.
    pub(super) fn wake_pending(&mut self, target: &dyn WindowMaker) {
        for key in self.views.take_wakes() {
            self.wake(&key, target);
        }
    }

    /// Gives hibernated `key` a new webview where it was, shown, with its picture over it
    /// until its page says `ready`; the kernel delivers its latest state after that `ready`.
    /// A wake that cannot make a view closes the Surface `crashed` (R-UI-12).
    fn wake(&mut self, key: &SurfaceKey, target: &dyn WindowMaker) {
        let Some((mut kept, picture)) = self.views.take_sleeping(key) else {
            return;
        };
        if !self.make_room(Some(key)) {
            // The user asked to see it: it shows, and the cap is back once one is hidden.
            tracing::info!(
                "surface {key}: shown past max_live_surfaces; nothing hidden can hibernate"
            );
        }
        // Its record, if the store keeps one, is forgotten.
        let Some(open) = self.sessions.wake_surface(key) else {
            return;
        };
        kept.hidden = false;
        let limits = self.sessions.limits().clone();
        if let Err(e) = self
            .views
            .create(&open, &kept, &limits, &self.proxy, target)
        {
            tracing::warn!("surface {key}: cannot be woken: {e}");
            self.page_input(key, PageInput::Gone(GoneReason::Crashed), target);
            return;
        }
        tracing::info!("surface {key}: shown again; woken (#29)");
        self.views.stand_in(key, picture.as_ref());
        self.views.relayout(self.upstream.delegate());
    }

    /// Runs the hang watchdog (R-UI-12): the web process of a view past its deadline is
    /// terminated (the crash path follows when the engine reports it, as `unresponsive`), and a
    /// Surface whose termination the engine never reported ends anyway. Returns when to check
    /// again.
    pub(super) fn poll_watchdog(&mut self, target: &dyn WindowMaker) -> Option<Instant> {
        let (verdicts, next) = self.views.poll_watchdog();
        for (key, verdict) in verdicts {
            match verdict {
                Verdict::Terminate => self.views.terminate(&key, self.upstream.delegate()),
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

    /// The engine's own polled work after the kernel's, in order: the hang watchdog,
    /// hibernation of the views hidden long enough (#29), then, at an idle turn (`idle`: the
    /// loop has nothing else to do), the warm pool and the warm component board; returns the
    /// earliest moment it next has some.
    pub(super) fn tend(
        &mut self,
        idle: impl FnOnce() -> bool,
        target: &dyn WindowMaker,
    ) -> Option<Instant> {
        let watchdog = self.poll_watchdog(target);
        let hibernation = self.views.poll_hibernation(self.sessions.limits());
        self.note_hibernated();
        let idle = idle();
        let pool = self.views.refill_pool(idle, target);
        let views = &self.views;
        let board = self
            .components
            .as_mut()
            .and_then(|c| c.tend(views, idle, target));
        [watchdog, hibernation, pool, board]
            .into_iter()
            .flatten()
            .min()
    }

    /// What ran (original §5.3): logged (never the reason), told to the delegate, and shown in
    /// the host's notice when the user saw nothing of it.
    pub(super) fn activity(&mut self, activity: &Activity) {
        self.upstream.activity(activity, self.views.standby());
    }

    /// Standard components (R-STD-1): the built-in renderer, when on, shows, updates, locks and
    /// hides each instance's window; without it, or for a component it does not draw, a shown
    /// component fails closed: the session closes it with `renderer_failed` (R-STD-13).
    pub(super) fn component(&mut self, effect: ComponentEffect, target: &dyn WindowMaker) {
        let hidden = match &effect {
            ComponentEffect::Show(shown) => self.is_hidden(shown.key.session),
            _ => false,
        };
        let cx = ShowContext {
            target,
            proxy: &self.proxy,
            hidden,
            high_contrast: self.views.high_contrast(),
            language: self.views.language(),
            parent: self.views.parent(),
            delegate: self.upstream.delegate(),
        };
        let failed = ComponentViews::carry_out(self.components.as_mut(), effect, cx);
        if let Some(key) = failed {
            self.page_input(&key, PageInput::ComponentFailed, target);
        }
    }

    /// The kernel's timed work that is due (capability deadlines, components' `expires_at`,
    /// with `idle` quiet sessions), and when it next has some (at least [`MIN_TIMER`] away).
    pub(super) fn handle_timeout(
        &mut self,
        idle: Option<Duration>,
        target: &dyn WindowMaker,
    ) -> Option<Instant> {
        let effects = self.sessions.handle_timeout(SystemWallClock.now(), idle);
        self.apply_all(effects, target);
        let next = self.sessions.poll_timeout(SystemWallClock.now(), idle)?;
        Some(Instant::now() + next.max(MIN_TIMER))
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
            let link = || self.sessions.component_link(&key, url);
            let (views, driver) = (self.components.as_ref(), self.driver.as_mut());
            return ComponentViews::follow_link(views, &key, link, driver);
        }
        let views = self.components.as_ref();
        if let Some(input) = views.and_then(|v| v.input_of(&key, action)) {
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
        let views = self.components.as_ref();
        if let Some(input) = views.and_then(|v| v.embedder_input_of(&key, input)) {
            self.page_input(&key, input.page_input(), target);
        }
    }

    /// Ends every session: Surfaces close silently; waiting calls are cancelled, their records
    /// finished in the store and their prompts withdrawn; nothing is sent. Every other effect
    /// of the ending sessions is named with why it is not carried out ([`AtShutdown`]).
    pub(super) fn close_all(&mut self) {
        for ended in self.sessions.end_all() {
            let SessionEffects { session, effects } = ended;
            for effect in effects {
                match AtShutdown::of(effect) {
                    AtShutdown::Close { key, reason } => self.close(&key, &reason),
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
