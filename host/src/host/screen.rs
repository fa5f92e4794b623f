//! The engine's screen side: the Surfaces' webviews ([`Views`]), the renderers of standard
//! components ([`ComponentViews`]) and the loop's proxy through which both report back. What a
//! kernel effect or a host request does on screen is carried out here; what follows for a
//! session is queued in the [`Kernel`] (passed in), whose queue the engine drains.

use std::time::{Duration, Instant};

use lineup_host_core::mcp::HostOwned;
use lineup_host_core::mcp_host::{host_reply, HostReply};
use lineup_host_core::{
    CloseReason, ComponentEffect, ComponentLink, ConsentAnswer, ConversationId, Diagnostic,
    GoneReason, InlineBundle, InstanceId, JsonObject, McpViewOpen, PageInput, SessionId,
    SurfaceKey, SurfaceOpen,
};
use lineup_webview_shell::tao::event::WindowEvent;
use lineup_webview_shell::tao::window::WindowId;
use lineup_webview_shell::{ComponentAction, SurfaceView, ViewEvent, WindowMaker};

use super::components::{ComponentInput, ComponentViews, ShowContext};
use super::conversations::{self, ConversationItem};
use super::handle::{EmbedderInput, HostEvent, Inner, PixelsDone, SnapshotDone};
use super::kernel::Kernel;
use super::live::Kept;
use super::mcp_facts::McpFacts;
use super::probe_gate::ProbeNews;
use super::proxy::HostProxy;
use super::standby::HostStandby;
use super::view_input::ViewInput;
use super::views::Views;
use crate::capabilities::CapabilityDriver;
use crate::delegate::HostDelegate;
use crate::port::ViewPort;
use crate::watchdog::Verdict;

/// How soon the loop looks again while the isolation probe has not reported: its verdict gates
/// the first Surfaces' documents (R-SEC-8).
const PROBE_TURN: Duration = Duration::from_millis(10);

/// The Surfaces' webviews and the standard components' boxes, as the engine shows them.
///
/// Invariants: every view and box made here reports back through `proxy`, under its own key
/// (never the page's word). An open Surface has a live view or sleeps hibernated, never both,
/// and the kernel hears of every hibernation; a new Surface's view is made only with room under
/// `Limits::max_live_surfaces` (a hidden Surface hibernated for it when one may), a reopened
/// one takes its predecessor's place, and a wake the user asked for shows past the cap. What a
/// hidden conversation opens starts hidden, boxes included, and a conversation's Surfaces and
/// boards are shown or hidden together. Once a view comes, goes or is shown or hidden, the
/// Surfaces are laid out again; a new size of the parent window lays out the boards too. A
/// view that cannot be made fails its open (`open_failed`), or leaves a reopened or woken
/// Surface gone, through its session.
pub(super) struct Screen {
    /// Every open Surface's webview, and what places and feeds them.
    views: Views,
    /// The renderers of standard components, when the builder turned one on
    /// ([`HostBuilder::builtin_components`](super::HostBuilder::builtin_components)).
    components: Option<ComponentViews>,
    /// How the views and the renderers report back to the loop.
    proxy: HostProxy,
    /// What MCP App views are told of the host (R-MCP-8).
    mcp: McpFacts,
}

impl Screen {
    /// `views` and the renderers `components`, reporting through `proxy`; MCP App views are
    /// told `mcp`.
    pub(super) fn new(
        views: Views,
        components: Option<ComponentViews>,
        proxy: HostProxy,
        mcp: McpFacts,
    ) -> Self {
        Self {
            views,
            components,
            proxy,
            mcp,
        }
    }

    /// How the loop is reached from the views (and from a [`HostHandle`](super::HostHandle)).
    pub(super) fn proxy(&self) -> &HostProxy {
        &self.proxy
    }

    /// What makes the Surfaces' views: the probe's status and the warm pool are read there.
    pub(super) fn port(&self) -> &dyn ViewPort {
        self.views.port()
    }

    /// The Surfaces open now, hibernated ones included.
    pub(super) fn surfaces(&self) -> Vec<SurfaceKey> {
        self.views.keys()
    }

    /// Whether no Surface is open.
    pub(super) fn is_empty(&self) -> bool {
        self.views.is_empty()
    }

    /// The webview of Surface `key`, while it has one.
    pub(super) fn surface_view(&self, key: &SurfaceKey) -> Option<&SurfaceView> {
        self.views.surface_view(key)
    }

    /// Whether Surface `key` is hibernated (#29).
    pub(super) fn is_hibernated(&self, key: &SurfaceKey) -> bool {
        self.views.is_hibernated(key)
    }

    /// Whether `conversation` is hidden.
    pub(super) fn conversation_hidden(&self, conversation: &ConversationId) -> bool {
        self.views.conversation_hidden(conversation)
    }

    /// Whether the conversation of `session` (in `kernel`'s table) is hidden.
    fn is_hidden(&self, kernel: &Kernel, session: SessionId) -> bool {
        kernel
            .sessions()
            .get(session)
            .and_then(|s| s.conversation_id())
            .is_some_and(|c| self.views.conversation_hidden(c))
    }

    /// The built-in renderer of standard components, when it is on (for the test controls).
    #[cfg(feature = "test-controls")]
    pub(super) fn components(&self) -> Option<&ComponentViews> {
        self.components.as_ref()
    }

    /// The standard components the built-in renderer shows now.
    pub(super) fn shown_components(&self) -> Vec<SurfaceKey> {
        let components = self.components.as_ref();
        components.map(ComponentViews::shown).unwrap_or_default()
    }

    /// The Surfaces and the built-in renderer's boxes of `session`.
    pub(super) fn conversation_items(&self, session: SessionId) -> Vec<ConversationItem> {
        conversations::items(session, self.views.keys(), self.components.as_ref())
    }

    /// The standby screen, when there is one.
    pub(super) fn standby(&self) -> Option<&HostStandby> {
        self.views.standby()
    }

    /// Lets an engine the embedder brought do its work; it reports its views' events then.
    pub(super) fn spin_engine(&self) {
        self.views.spin_engine();
    }

    /// Takes the isolation probe's verdict once it is there (R-SEC-8).
    pub(super) fn poll_probe(&mut self) -> ProbeNews {
        self.views.poll_probe()
    }

    /// Closes the probe's view once its verdict is taken and no Surface opens.
    pub(super) fn close_finished_probe(&self) {
        self.views.close_finished_probe();
    }

    /// What `event` of the view of `key` means. A hibernated Surface's released view may still
    /// have events on their way: what its page posted goes on (nothing is lost); its ending is
    /// the hibernation's, not news.
    pub(super) fn view_input(&mut self, key: &SurfaceKey, event: ViewEvent) -> ViewInput {
        if self.views.is_hibernated(key) && !matches!(event, ViewEvent::Ipc(_)) {
            return ViewInput::Nothing;
        }
        ViewInput::of(&mut self.views, key, event)
    }

    /// The page of `key` said `ready`.
    pub(super) fn ready(&mut self, key: &SurfaceKey) {
        self.views.ready(key);
    }

    /// R-SEC-2a: the own document of `key` is loaded again.
    pub(super) fn restore_document(&self, key: &SurfaceKey) {
        self.views.restore_document(key);
    }

    /// Delivers `state` to the page of `key`. A hibernated Surface has no view: the kernel's
    /// state is its latest, delivered after its new page's `ready` (#29).
    pub(super) fn deliver_state(&mut self, key: &SurfaceKey, state: &JsonObject) {
        if let Some(view) = self.views.view(key) {
            if let Err(e) = view.deliver_state(&state.to_json()) {
                tracing::warn!("surface {key}: state not delivered: {e}");
            }
        }
        self.views.state_set(key);
    }

    /// A page's resize ([`Views::resize`]).
    pub(super) fn resize(&mut self, key: &SurfaceKey, height: f64, d: &mut dyn HostDelegate) {
        self.views.resize(key, height, d);
    }

    /// A page's diagnostic ([`Views::diagnostic`]).
    pub(super) fn diagnostic(&self, key: &SurfaceKey, diag: Diagnostic, d: &mut dyn HostDelegate) {
        self.views.diagnostic(key, diag, d);
    }

    /// R-SEC-8: the view is created at once, even while the isolation probe runs; its document
    /// is then held until the probe passed ([`Shell::open_gated`]), and the view closed with
    /// `open_failed` if it failed. A web process for it first (#29): a hidden Surface
    /// hibernates if the live cap says so, or the open is refused naming the cap.
    ///
    /// [`Shell::open_gated`]: lineup_webview_shell::Shell::open_gated
    pub(super) fn open(
        &mut self,
        open: SurfaceOpen,
        kernel: &mut Kernel,
        delegate: &mut dyn HostDelegate,
        target: &dyn WindowMaker,
    ) {
        if !self.make_room(None, kernel) {
            let limit = kernel.limits().max_live_surfaces;
            kernel.page(&open.key, PageInput::LiveCapReached { limit });
            return;
        }
        self.views.hold_until_probed(&open.key);
        self.create(open, Kept::default(), kernel, delegate, target);
    }

    /// Opens MCP App view `open` (R-MCP-7) as [`Screen::open`] opens a Surface: room under
    /// the live cap, its document held until the probe passed, placed as a child view or a
    /// window of its own, hidden when its conversation is; a view it replaces that still
    /// tears down (R-MCP-8) leaves the layout, and closes by its own `Effect::Close`. A view
    /// that cannot be made fails the open (`surface_failed`).
    pub(super) fn open_mcp(
        &mut self,
        open: McpViewOpen,
        kernel: &mut Kernel,
        delegate: &mut dyn HostDelegate,
        target: &dyn WindowMaker,
    ) {
        let key = open.key.clone();
        if !self.make_room(None, kernel) {
            let limit = kernel.limits().max_live_surfaces;
            kernel.page(&key, PageInput::LiveCapReached { limit });
            return;
        }
        let replaced = self.views.keys().into_iter().filter(|other| {
            (other.session, &other.instance) == (key.session, &key.instance) && *other != key
        });
        for old in replaced.collect::<Vec<_>>() {
            self.views.set_visible(&old, false);
        }
        self.views.hold_until_probed(&key);
        match (self.views).create_mcp(&open, kernel.limits(), &self.proxy, target) {
            Ok(()) => {
                delegate.notify_mcp_opened(&key, &open);
                if self.is_hidden(kernel, key.session) {
                    self.views.set_visible(&key, false);
                }
                self.views.relayout(delegate);
            }
            Err(e) => kernel.page(&key, PageInput::OpenFailed(&e.to_string())),
        }
    }

    /// Posts `message` to MCP App view `key` (R-MCP-7).
    pub(super) fn post_to_mcp_view(&self, key: &SurfaceKey, message: &str) {
        self.views.post_to_mcp_view(key, message);
    }

    /// What the host does with `message` of MCP App view `key` that it answers or takes
    /// itself (R-MCP-8, [`host_reply`]), told the host's facts now; `None` for a key with no
    /// MCP App view.
    pub(super) fn mcp_reply(&self, key: &SurfaceKey, message: &HostOwned) -> Option<HostReply> {
        let tool = self.views.live(key)?.mcp_tool()?;
        let facts = self.mcp.facts(&self.views.language());
        Some(host_reply(message, tool, &facts))
    }

    /// Creates the webview of `open` ([`Views::create`], the one place a Surface's webview is
    /// made); a reopened one keeps what its predecessor had (`kept`). A view that cannot be
    /// made fails the open, or leaves a reopened Surface gone (R-UI-12).
    pub(super) fn create(
        &mut self,
        open: SurfaceOpen,
        kept: Kept,
        kernel: &mut Kernel,
        delegate: &mut dyn HostDelegate,
        target: &dyn WindowMaker,
    ) {
        let key = open.key.clone();
        match (self.views).create(&open, &kept, kernel.limits(), &self.proxy, target) {
            Ok(()) => {
                // The delegate hears of the Surface before it is asked where to put it, so a
                // layout by key (a kiosk's regions) knows it on the first placement.
                delegate.notify_opened(&key, &open.app);
                if self.is_hidden(kernel, key.session) {
                    self.views.set_visible(&key, false);
                }
                self.views.relayout(delegate);
            }
            Err(e) => {
                let why = e.to_string();
                match kept.lost {
                    Some(reason) => {
                        tracing::warn!("surface {key}: cannot be reopened: {why}");
                        kernel.page(&key, PageInput::Gone(reason));
                    }
                    None => kernel.page(&key, PageInput::OpenFailed(&why)),
                }
            }
        }
    }

    /// Closes the webview of `key`, and lays out the rest again.
    pub(super) fn destroy(&mut self, key: &SurfaceKey, delegate: &mut dyn HostDelegate) {
        if self.views.destroy(key) {
            self.views.relayout(delegate);
        }
    }

    /// Closes the webview of `key` and tells the delegate why.
    pub(super) fn close(
        &mut self,
        key: &SurfaceKey,
        reason: &CloseReason,
        delegate: &mut dyn HostDelegate,
    ) {
        self.destroy(key, delegate);
        delegate.notify_closed(key, reason);
    }

    /// Carries out [`Effect::Reopen`](lineup_host_core::Effect::Reopen): the webview of `old`
    /// goes, and `open` (same instance, new generation) is created where it was, with the
    /// embedder's reloaded bundle if there was one. Its state follows its page's `ready`
    /// (R-UI-12).
    pub(super) fn reopen(
        &mut self,
        old: SurfaceKey,
        mut open: SurfaceOpen,
        reason: GoneReason,
        kernel: &mut Kernel,
        delegate: &mut dyn HostDelegate,
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
        self.close(&old, &CloseReason::Reopened(reason), delegate);
        self.create(open, kept, kernel, delegate, target);
    }

    /// Restored Surface `open` (#29, after a restart): hibernated until the embedder shows it,
    /// where Surfaces are child views; opened at once where each has its own window.
    pub(super) fn open_hibernated(
        &mut self,
        open: SurfaceOpen,
        kernel: &mut Kernel,
        delegate: &mut dyn HostDelegate,
        target: &dyn WindowMaker,
    ) {
        if !self.views.children() {
            return self.open(open, kernel, delegate, target);
        }
        self.views.sleep_restored(&open.key);
        delegate.notify_opened(&open.key, &open.app);
    }

    /// Lays the child views out again, Surfaces and the components over them.
    pub(super) fn relayout(&mut self, delegate: &mut dyn HostDelegate) {
        self.views.relayout(delegate);
        if let (Some(views), Some(parent)) = (self.components.as_mut(), self.views.parent()) {
            views.relayout(parent, delegate);
        }
    }

    /// [`Host::set_surface_visible`](crate::Host::set_surface_visible): a hibernated Surface
    /// shown again wakes at the loop's next turn, its picture standing in (#29); a live one is
    /// hidden or shown and the views laid out again. Returns whether `key` is open.
    pub(super) fn set_surface_visible(
        &mut self,
        key: &SurfaceKey,
        visible: bool,
        delegate: &mut dyn HostDelegate,
    ) -> bool {
        if self.views.is_hibernated(key) {
            if visible && self.views.queue_wake(key) {
                let _ = self.proxy.send_event(HostEvent(Inner::Wake));
            }
            return true;
        }
        let known = self.views.set_visible(key, visible);
        if known {
            self.relayout(delegate);
        }
        known
    }

    /// Hides or shows `conversation`: what it opens from now on starts so, and, when it has a
    /// session (`session`), its Surfaces and boards go together.
    pub(super) fn set_conversation_visible(
        &mut self,
        conversation: &ConversationId,
        session: Option<SessionId>,
        visible: bool,
        delegate: &mut dyn HostDelegate,
    ) {
        self.views.set_conversation_hidden(conversation, !visible);
        let Some(session) = session else {
            return;
        };
        for key in self.views.keys() {
            if key.session == session {
                self.set_surface_visible(&key, visible, delegate);
            }
        }
        if let Some(components) = self.components.as_mut() {
            components.set_session_visible(session, visible);
        }
    }

    /// Surfaces opened from now on get the high-contrast values, or not (R-UI-11).
    pub(super) fn set_contrast(&mut self, contrast: lineup_webview_shell::Contrast) {
        self.views.set_contrast(contrast);
    }

    /// [`Host::hibernate`](crate::Host::hibernate): hibernates hidden child view `key` now,
    /// presses or not, and the kernel hears of it; whether it did.
    pub(super) fn hibernate(&mut self, key: &SurfaceKey, kernel: &mut Kernel) -> bool {
        let bytes = kernel.limits().max_hibernated_bytes;
        let done = self.views.hibernate(key, bytes);
        kernel.hibernated(self.views.take_newly_hibernated());
        done
    }

    /// Makes room for one more live view under `Limits::max_live_surfaces` by hibernating the
    /// least recently shown hidden Surfaces (never `except`), the kernel hearing of each;
    /// whether there is room now.
    fn make_room(&mut self, except: Option<&SurfaceKey>, kernel: &mut Kernel) -> bool {
        let limits = kernel.limits();
        let (max_live, max_bytes) = (limits.max_live_surfaces, limits.max_hibernated_bytes);
        let room = self.views.make_room(max_live, max_bytes, except);
        kernel.hibernated(self.views.take_newly_hibernated());
        room
    }

    /// The hibernated Surfaces the embedder showed since the last turn, to wake.
    pub(super) fn take_wakes(&mut self) -> Vec<SurfaceKey> {
        self.views.take_wakes()
    }

    /// Gives hibernated `key` a new webview where it was, shown, with its picture over it
    /// until its page says `ready`; the kernel delivers its latest state after that `ready`.
    /// A wake that cannot make a view closes the Surface `crashed` (R-UI-12).
    pub(super) fn wake(
        &mut self,
        key: &SurfaceKey,
        kernel: &mut Kernel,
        delegate: &mut dyn HostDelegate,
        target: &dyn WindowMaker,
    ) {
        let Some((mut kept, picture)) = self.views.take_sleeping(key) else {
            return;
        };
        if !self.make_room(Some(key), kernel) {
            // The user asked to see it: it shows, and the cap is back once one is hidden.
            tracing::info!(
                "surface {key}: shown past max_live_surfaces; nothing hidden can hibernate"
            );
        }
        // Its record, if the store keeps one, is forgotten.
        let Some(open) = kernel.wake(key) else {
            return;
        };
        kept.hidden = false;
        if let Err(e) = (self.views).create(&open, &kept, kernel.limits(), &self.proxy, target) {
            tracing::warn!("surface {key}: cannot be woken: {e}");
            kernel.page(key, PageInput::Gone(GoneReason::Crashed));
            return;
        }
        tracing::info!("surface {key}: shown again; woken (#29)");
        self.views.stand_in(key, picture.as_ref());
        self.views.relayout(delegate);
    }

    /// The hang watchdog's verdicts (R-UI-12), and when to check again.
    pub(super) fn poll_watchdog(&mut self) -> (Vec<(SurfaceKey, Verdict)>, Option<Instant>) {
        self.views.poll_watchdog()
    }

    /// Terminates the web process of `key`, whose page stopped answering (R-UI-12).
    pub(super) fn terminate(&self, key: &SurfaceKey, delegate: &mut dyn HostDelegate) {
        self.views.terminate(key, delegate);
    }

    /// The screen's polled work after the watchdog's, in order: hibernation of the views hidden
    /// long enough (#29), the kernel hearing of it, then, at an idle turn (`idle`), the warm
    /// pool and the warm component board; returns the earliest moment it next has some
    /// (soon while the isolation probe has not reported).
    pub(super) fn tend(
        &mut self,
        idle: impl FnOnce() -> bool,
        kernel: &mut Kernel,
        target: &dyn WindowMaker,
    ) -> Option<Instant> {
        let hibernation = self.views.poll_hibernation(kernel.limits());
        kernel.hibernated(self.views.take_newly_hibernated());
        let idle = idle();
        let pool = self.views.refill_pool(idle, target);
        let views = &self.views;
        let board = (self.components.as_mut()).and_then(|c| c.tend(views, idle, target));
        let probe = (!views.probe_reported()).then(|| Instant::now() + PROBE_TURN);
        [hibernation, pool, board, probe]
            .into_iter()
            .flatten()
            .min()
    }

    /// Shows, updates, locks or hides a standard component (`effect`) with the renderer of its
    /// instance ([`ComponentViews::carry_out`]); a new box of a hidden conversation starts
    /// hidden. Returns the key of a component that could not be shown (R-STD-13).
    pub(super) fn show_component(
        &mut self,
        effect: ComponentEffect,
        kernel: &Kernel,
        delegate: &mut dyn HostDelegate,
        target: &dyn WindowMaker,
    ) -> Option<SurfaceKey> {
        let hidden = match &effect {
            ComponentEffect::Show(shown) => self.is_hidden(kernel, shown.key.session),
            _ => false,
        };
        let cx = ShowContext {
            target,
            proxy: &self.proxy,
            hidden,
            high_contrast: self.views.high_contrast(),
            language: self.views.language(),
            parent: self.views.parent(),
            delegate,
        };
        ComponentViews::carry_out(self.components.as_mut(), effect, cx)
    }

    /// What the built-in renderer's box of `key` reported, for its session.
    pub(super) fn component_input(
        &self,
        key: &SurfaceKey,
        action: ComponentAction,
    ) -> Option<ComponentInput> {
        (self.components.as_ref()).and_then(|v| v.input_of(key, action))
    }

    /// What the embedder's renderer reported for `key`, for its session (R-STD-16).
    pub(super) fn embedder_input(
        &self,
        key: &SurfaceKey,
        input: EmbedderInput,
    ) -> Option<ComponentInput> {
        (self.components.as_ref()).and_then(|v| v.embedder_input_of(key, input))
    }

    /// R-STD-11: a link in the box of `key`, followed only when the built-in renderer shows
    /// that box and `link_of` finds it in the kernel's own tree, through the link confirm.
    pub(super) fn follow_link(
        &self,
        key: &SurfaceKey,
        link_of: impl FnOnce() -> Option<ComponentLink>,
        driver: Option<&mut CapabilityDriver>,
    ) {
        ComponentViews::follow_link(self.components.as_ref(), key, link_of, driver);
    }

    /// The user answered the link confirm of `link`: audited, and opened when allowed.
    pub(super) fn link_answered(
        &mut self,
        link: &ComponentLink,
        answer: ConsentAnswer,
        driver: Option<&mut CapabilityDriver>,
    ) {
        if let Some(views) = self.components.as_mut() {
            views.link_answered(link, answer, driver);
        }
    }

    /// A window event: a Surface window's goes to that window; a new size of the parent window
    /// lays the views out again. Returns whether the user asked to close the parent window.
    pub(super) fn window_event(
        &mut self,
        window_id: WindowId,
        event: &WindowEvent<'_>,
        delegate: &mut dyn HostDelegate,
    ) -> bool {
        if !self.views.is_parent(window_id) {
            self.views.window_event(window_id, event);
            return false;
        }
        match event {
            WindowEvent::Resized(_) | WindowEvent::ScaleFactorChanged { .. } => {
                self.relayout(delegate);
                false
            }
            WindowEvent::CloseRequested => true,
            _ => false,
        }
    }

    /// [`HostHandle::set_standby_indicator`](super::HostHandle::set_standby_indicator).
    pub(super) fn set_standby_indicator(&self, text: Option<&str>) {
        if let Some(standby) = self.views.standby() {
            standby.set_indicator(text);
        }
    }

    /// [`HostHandle::set_standby_status`](super::HostHandle::set_standby_status).
    pub(super) fn set_standby_status(&self, status: &str) {
        if let Some(standby) = self.views.standby() {
            standby.set_status(status);
        }
    }

    /// [`HostHandle::reload_bundle`](super::HostHandle::reload_bundle), within `max` bytes.
    pub(super) fn reload_bundle(
        &mut self,
        instance: &InstanceId,
        bundle: &InlineBundle,
        max: usize,
    ) {
        self.views.reload_bundle(instance, bundle, max);
    }

    /// [`HostHandle::screen_pixels`](super::HostHandle::screen_pixels).
    pub(super) fn screen_pixels(&self, instance: InstanceId, done: PixelsDone) {
        self.views.screen_pixels(instance, done);
    }

    /// [`HostHandle::snapshot_png`](super::HostHandle::snapshot_png).
    pub(super) fn snapshot(&self, instance: InstanceId, done: SnapshotDone) {
        self.views.snapshot(instance, done);
    }
}
