//! The host's view table: every open Surface's webview ([`Live`], keyed by session and
//! instance), the hibernated ones ([`Hibernation`], #29), and everything that creates, places,
//! feeds and closes those views, and what a reopened Surface keeps of its predecessor
//! (R-UI-12). The effect interpreter ([`Engine`](super::engine::Engine)) decides; this carries
//! out what concerns the webviews.

use std::collections::{BTreeMap, HashSet};
use std::rc::Rc;
use std::time::Instant;

use lineup_host_core::{
    ConversationId, Diagnostic, GoneReason, InlineBundle, InstanceId, Limits, McpAppTool,
    McpViewOpen, SurfaceKey, SurfaceOpen,
};
use lineup_surface_runtime::{DocumentLayout, DocumentOptions, SurfaceServer};
use lineup_webview_shell::tao::event::WindowEvent;
use lineup_webview_shell::tao::window::WindowId;
use lineup_webview_shell::Contrast;
use lineup_webview_shell::WindowMaker;
use lineup_webview_shell::{Placeholder, Rect, ShellError, SurfaceView, WindowPixels};

use super::backlog::{self, Backlog, Dropped};
use super::documents::Documents;
use super::handle::{PixelsDone, SnapshotDone};
use super::hibernation::Hibernation;
use super::live::{Awake, Kept, Live};
use super::pool;
use super::probe_gate::{ProbeGate, ProbeNews};
use super::proxy::HostProxy;
use super::standby::HostStandby;
use crate::delegate::{ChildSlot, HostDelegate};
use crate::port::{Place, PortView, ViewKind, ViewPort};
use crate::watchdog::{Verdict, Watchdog};
use crate::HostError;

/// The webviews of every open Surface, and what places and feeds them.
///
/// Invariants: an open Surface has a webview ([`Live`]) or is hibernated, never both, one per
/// session and instance (two generations only while a replaced MCP App view tears down);
/// only hidden child views of Surfaces hibernate; a webview is watched by the hang watchdog
/// from its creation until it closes or hibernates.
pub(super) struct Views {
    /// Where Surface views are made and what they are children of.
    port: Box<dyn ViewPort>,
    /// By key: instance ids are scoped to their session (R-SES-1), and a replaced MCP App
    /// view stays beside its successor until its teardown is over (R-MCP-8).
    live: BTreeMap<SurfaceKey, Live>,
    /// Open Surfaces without a webview: hibernated while hidden (#29).
    sleep: Hibernation,
    /// The Surfaces whose documents wait for the isolation probe's verdict (R-SEC-8).
    probe: ProbeGate,
    /// The conversations the embedder hid: what they open starts hidden.
    hidden_conversations: HashSet<ConversationId>,
    window_size: (u32, u32),
    resize_bounds: (u32, u32),
    /// What each Surface's document is made with.
    documents: Documents,
    /// The hang watchdog of every open view (R-UI-12).
    watchdog: Watchdog,
    /// The standby screen over the parent window ([`HostBuilder::standby`]).
    ///
    /// [`HostBuilder::standby`]: super::HostBuilder::standby
    standby: Option<HostStandby>,
}

/// How a [`Views`] is set up ([`HostBuilder::build`](super::HostBuilder::build)).
pub(super) struct ViewsConfig {
    pub(super) window_size: (u32, u32),
    pub(super) resize_bounds: (u32, u32),
    pub(super) document: DocumentOptions,
    pub(super) contrast: Contrast,
    pub(super) watchdog: Watchdog,
    pub(super) standby: Option<HostStandby>,
}

impl Views {
    /// Hides `conversation` (what it opens starts hidden) or shows it again.
    pub(super) fn set_conversation_hidden(&mut self, conversation: &ConversationId, hidden: bool) {
        if hidden {
            self.hidden_conversations.insert(conversation.clone());
        } else {
            self.hidden_conversations.remove(conversation);
        }
    }

    /// Whether the embedder hid `conversation`.
    pub(super) fn conversation_hidden(&self, conversation: &ConversationId) -> bool {
        self.hidden_conversations.contains(conversation)
    }

    pub(super) fn new(port: Box<dyn ViewPort>, config: ViewsConfig) -> Self {
        let ViewsConfig {
            window_size,
            resize_bounds,
            document,
            contrast,
            watchdog,
            standby,
        } = config;
        Self {
            port,
            live: BTreeMap::new(),
            sleep: Hibernation::default(),
            probe: ProbeGate::default(),
            hidden_conversations: HashSet::new(),
            window_size,
            resize_bounds,
            documents: Documents::new(document, contrast),
            watchdog,
            standby,
        }
    }

    /// The Surfaces open now: those with a webview, and the hibernated ones.
    pub(super) fn keys(&self) -> Vec<SurfaceKey> {
        self.live
            .values()
            .map(|l| &l.key)
            .chain(self.sleep.keys())
            .cloned()
            .collect()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.live.is_empty() && self.sleep.is_empty()
    }

    /// The view of Surface `key` and what is kept beside it, while that generation is open.
    pub(super) fn live(&self, key: &SurfaceKey) -> Option<&Live> {
        self.live.get(key)
    }

    fn live_mut(&mut self, key: &SurfaceKey) -> Option<&mut Live> {
        self.live.get_mut(key)
    }

    /// The webview of Surface `key`, while it is open.
    pub(super) fn view(&self, key: &SurfaceKey) -> Option<&dyn PortView> {
        self.live(key).map(|l| l.view.as_ref())
    }

    /// The platform's view of Surface `key`, while it is open.
    pub(super) fn surface_view(&self, key: &SurfaceKey) -> Option<&SurfaceView> {
        self.view(key)?.surface()
    }

    /// The port Surface views are made through.
    pub(super) fn port(&self) -> &dyn ViewPort {
        self.port.as_ref()
    }

    /// Whether Surfaces are child views of one parent window.
    pub(super) fn children(&self) -> bool {
        self.port.children()
    }

    /// The standby screen over the parent window, when there is one.
    pub(super) fn standby(&self) -> Option<&HostStandby> {
        self.standby.as_ref()
    }

    /// Lets an engine the embedder brought do its work; it reports its views' events then.
    pub(super) fn spin_engine(&self) {
        if let Some(shell) = self.port.shell() {
            shell.spin_engine();
        }
    }

    /// The open Surface named `instance`, in any session (the preview has one): the newest
    /// generation of the first session that has one.
    fn by_instance(&self, instance: &InstanceId) -> Option<&Live> {
        let mut named = self.live.values().filter(|l| l.key.instance == *instance);
        let first = named.next()?;
        Some(
            named
                .take_while(|l| l.key.session == first.key.session)
                .last()
                .unwrap_or(first),
        )
    }

    /// [`HostHandle::screen_pixels`](super::HostHandle::screen_pixels): what the view of
    /// `instance` shows on screen now, or why there is nothing, to `done`.
    pub(super) fn screen_pixels(&self, instance: InstanceId, done: PixelsDone) {
        (done.0)(match self.by_instance(&instance) {
            Some(live) => live.view.screen_pixels().map_err(HostError::from),
            None => Err(HostError::NotOpen { instance }),
        })
    }

    /// [`HostHandle::snapshot_png`](super::HostHandle::snapshot_png): the view of `instance`
    /// as PNG bytes, or why there are none, to `done`.
    pub(super) fn snapshot(&self, instance: InstanceId, done: SnapshotDone) {
        match self.by_instance(&instance) {
            Some(live) => {
                live.view
                    .snapshot_png(Box::new(move |png: Result<Vec<u8>, ShellError>| {
                        (done.0)(png.map_err(HostError::from))
                    }))
            }
            None => (done.0)(Err(HostError::NotOpen { instance })),
        }
    }

    /// Surfaces opened from now on get the high-contrast values, or not (R-UI-11).
    pub(super) fn set_contrast(&mut self, contrast: Contrast) {
        self.documents.set_contrast(contrast);
    }

    /// The host context's language (the views' configuration, else the environment's).
    pub(super) fn language(&self) -> lineup_host_core::LanguageTag {
        self.port.language()
    }

    /// Whether a Surface or a component opening now gets the high-contrast values (R-UI-11).
    pub(super) fn high_contrast(&self) -> bool {
        self.documents.high_contrast()
    }

    /// Whether the isolation probe's verdict has been taken.
    pub(super) fn probe_reported(&self) -> bool {
        self.probe.reported()
    }

    /// Takes the probe's verdict once it is there (R-SEC-8).
    pub(super) fn poll_probe(&mut self) -> ProbeNews {
        let port = self.port.as_ref();
        self.probe.poll(|| port.probe_status())
    }

    /// Closes the probe's view, kept while the first Surfaces committed their documents, once
    /// the verdict is taken and no Surface opens.
    pub(super) fn close_finished_probe(&self) {
        if self.probe.reported() && !self.opening() {
            if let Some(shell) = self.port.shell() {
                shell.close_finished_probe();
            }
        }
    }

    /// Surface `key` opens while the probe runs: its document waits for the verdict.
    pub(super) fn hold_until_probed(&mut self, key: &SurfaceKey) {
        self.probe.hold(key);
    }

    /// Whether a Surface said its first `ready` (the warm component board may start then).
    pub(super) fn any_ready(&self) -> bool {
        self.live
            .values()
            .any(|live| live.opening_since().is_none())
    }

    /// Whether a Surface opened within [`pool::OPENING_HOLD`] still waits for its first
    /// `ready` (the warm pool is not refilled, nor the warm component board started, then).
    pub(super) fn opening(&self) -> bool {
        self.live.values().any(|live| {
            live.opening_since()
                .is_some_and(|since| since.elapsed() < pool::OPENING_HOLD)
        })
    }

    /// At an idle turn, starts one warm pool view if the pool is short and no Surface opens
    /// ([`pool::refill`]); returns when to come back while it still is.
    pub(super) fn refill_pool(
        &mut self,
        idle_turn: bool,
        target: &dyn WindowMaker,
    ) -> Option<Instant> {
        pool::refill(self.port.as_ref(), self.opening(), idle_turn, target)
    }

    /// Creates the webview of `open`, placed where its predecessor was when it is a reopen
    /// (`kept`) ([`Views::make`]).
    pub(super) fn create(
        &mut self,
        open: &SurfaceOpen,
        kept: &Kept,
        limits: &Limits,
        proxy: &HostProxy,
        target: &dyn WindowMaker,
    ) -> Result<(), ShellError> {
        let token = pool::surface_token(self.port.as_ref())?;
        let (server, layout) = self.documents.server(open, token);
        let (name, id) = (open.app.name.as_deref(), open.app.id.as_str());
        let new = (open.key.clone(), ViewKind::Surface, None);
        self.make(
            new,
            (server, layout),
            (name, id),
            kept,
            (limits, proxy, target),
        )
    }

    /// Creates the webview of MCP App view `open` (R-MCP-7): the host's top document with the
    /// view's HTML as its only child, on a fresh token (never a pool view), placed as a
    /// Surface is ([`Views::make`]).
    pub(super) fn create_mcp(
        &mut self,
        open: &McpViewOpen,
        limits: &Limits,
        proxy: &HostProxy,
        target: &dyn WindowMaker,
    ) -> Result<(), ShellError> {
        let token = pool::fresh_token()?;
        let (server, layout) = self.documents.mcp_server(&open.html, token);
        let tool = open.tool.name.as_str();
        let new = (open.key.clone(), ViewKind::McpApp, Some(open.tool.clone()));
        let kept = Kept::default();
        self.make(
            new,
            (server, layout),
            (Some(tool), open.server.as_str()),
            &kept,
            (limits, proxy, target),
        )
    }

    /// Makes the webview of `key` of `kind` (the one place a view is made), titled after
    /// `name` and `id` when it has a window of its own, hidden or where it was as `kept` says.
    /// Its events go to the loop through `proxy`, tagged with its key ([`backlog::reporter`]).
    /// R-SEC-8: created at once; its document waits for the probe's verdict.
    fn make(
        &mut self,
        (key, kind, mcp): (SurfaceKey, ViewKind, Option<McpAppTool>),
        (server, layout): (SurfaceServer, DocumentLayout),
        (name, id): (Option<&str>, &str),
        kept: &Kept,
        (limits, proxy, target): (&Limits, &HostProxy, &dyn WindowMaker),
    ) -> Result<(), ShellError> {
        let place = if self.port.children() {
            Place::Child
        } else {
            Place::Window {
                // R-SEC-5: a host-owned marker, and never the consent prompt's title.
                title: lineup_webview_shell::surface_window_title(name, id, &self.language()),
                width: self.window_size.0,
                height: self.window_size.1,
            }
        };
        let backlog = Rc::new(Backlog::new(
            limits.max_pending_bridge_messages,
            limits.max_pending_diagnostics,
        ));
        let events = backlog::reporter(key.clone(), proxy.clone(), Rc::clone(&backlog));
        let view = self.port.open(target, (kind, server), place, events)?;
        if kept.hidden {
            view.set_visible(false);
        }
        if let Some(bounds) = kept.window {
            if let Err(e) = view.set_bounds(bounds) {
                tracing::warn!("surface {key}: cannot put it where it was: {e}");
            }
        }
        let live = Live::new((key.clone(), view, mcp), backlog, layout, kept);
        self.live.insert(key.clone(), live);
        self.watchdog.watch(&key);
        Ok(())
    }

    /// Posts `message` to MCP App view `key` through its relay (R-MCP-7); nothing for a key
    /// without a view.
    pub(super) fn post_to_mcp_view(&self, key: &SurfaceKey, message: &str) {
        if let Some(view) = self.view(key) {
            if let Err(e) = view.post_to_mcp_view(message) {
                tracing::warn!("mcp app view {key}: a message not posted: {e}");
            }
        }
    }

    /// Closes the view of `key` (the standby screen first comes up if it was the last one);
    /// returns whether a view went, so the rest are laid out again.
    pub(super) fn destroy(&mut self, key: &SurfaceKey) -> bool {
        let mut closed = false;
        self.sleep.forget(key);
        if self.live(key).is_some() {
            if let Some(standby) = self.standby.as_mut() {
                // Up before the view goes, so the window never shows it half torn down.
                standby.gone(key);
            }
            if let Some(live) = self.live.remove(key) {
                live.view.close();
                closed = true;
            }
        }
        self.watchdog.forget(key);
        self.probe.forget(key);
        closed
    }

    /// The page of `key` said `ready`: it is no longer opening, it answered the watchdog, and
    /// the standby screen may step aside.
    pub(super) fn ready(&mut self, key: &SurfaceKey) {
        if let Some(live) = self.live_mut(key) {
            live.ready();
        }
        self.watchdog.ready(key);
        if let Some(standby) = self.standby.as_mut() {
            let view = self.live.get(key).and_then(|l| l.view.surface());
            standby.ready(key, view);
        }
    }

    /// R-SEC-2a: loads the own document of `key` again, in place of the one its page put there
    /// without a navigation (a `javascript:` URL).
    pub(super) fn restore_document(&self, key: &SurfaceKey) {
        if let Some(view) = self.view(key) {
            if let Err(e) = view.restore_document() {
                tracing::warn!("surface {key}: cannot restore its document: {e}");
            }
        }
    }

    /// The state of `key` was just set (open or patch): presses until now are the agent's to
    /// have seen.
    pub(super) fn state_set(&mut self, key: &SurfaceKey) {
        if let Some(live) = self.live_mut(key) {
            live.state_set();
        }
    }

    /// A new document committed in the view of `key`; returns whether the embedder loaded it
    /// ([`HostHandle::reload_bundle`](super::HostHandle::reload_bundle)).
    pub(super) fn committed(&mut self, key: &SurfaceKey) -> bool {
        self.watchdog.committed(key);
        self.live_mut(key).is_some_and(Live::committed)
    }

    /// A bridge message of `key` reached the loop: it no longer waits, and what was dropped
    /// while it waited is handed over once.
    pub(super) fn bridge_message_taken(&self, key: &SurfaceKey, raw: &str) -> Dropped {
        self.live(key)
            .map_or_else(Dropped::default, |live| live.taken(raw))
    }

    /// [`HostHandle::reload_bundle`](super::HostHandle::reload_bundle): the new document under
    /// the view's same token.
    pub(super) fn reload_bundle(
        &mut self,
        instance: &InstanceId,
        bundle: &InlineBundle,
        max: usize,
    ) {
        if bundle.len() > max {
            tracing::warn!(
                "surface {instance}: reload refused: the bundle is {} bytes, the limit is {max} (R-UI-2)",
                bundle.len()
            );
            return;
        }
        let Some(key) = self.by_instance(instance).map(|live| live.key.clone()) else {
            tracing::warn!("surface {instance}: reload refused: it is not open");
            return;
        };
        let document = self.documents.assemble(bundle);
        let Some(live) = self.live_mut(&key) else {
            return;
        };
        live.reload(document, bundle);
    }

    /// A page's `LineUpSurface.resize`, clamped to the resize bounds: its own window gets that
    /// inner height; a child view gets it through the layout
    /// ([`HostDelegate::request_child_placement`]); the delegate hears it either way.
    pub(super) fn resize(
        &mut self,
        key: &SurfaceKey,
        height: f64,
        delegate: &mut dyn HostDelegate,
    ) {
        let (min, max) = self.resize_bounds;
        let clamped = height.clamp(f64::from(min), f64::from(max));
        // Within 40 ..= 2000 by default; the bounds are u32, so the rounded value fits.
        let pixels = clamped.round() as u32;
        let width = f64::from(self.window_size.0);
        let Some(live) = self.live_mut(key) else {
            return;
        };
        live.requested_height = Some(pixels);
        live.view.set_window_size(width, clamped);
        let was_clamped = clamped.round() != height.round();
        delegate.notify_resize_request(key, pixels, was_clamped);
        self.relayout(delegate);
    }

    /// R-DIAG-1: maps the page's document position back to the author's part of the bundle
    /// (`script.js:3:14`) when the page named its own document (or nothing), and hands the
    /// diagnostic to the delegate; nothing goes upstream.
    pub(super) fn diagnostic(
        &self,
        key: &SurfaceKey,
        mut diagnostic: Diagnostic,
        delegate: &mut dyn HostDelegate,
    ) {
        let Some(live) = self.live(key) else {
            return;
        };
        live.locate(&mut diagnostic);
        delegate.notify_diagnostic(key, &diagnostic);
    }

    /// Lays the child views out again, each where the delegate puts it.
    pub(super) fn relayout(&self, delegate: &mut dyn HostDelegate) {
        // The host's container's size: rectangles are in its coordinates (#49 item 3).
        let Some((width, height)) = self.port.child_area() else {
            return;
        };
        let shown: Vec<&Live> = self.live.values().filter(|l| !l.hidden()).collect();
        let count = shown.len();
        for (index, live) in shown.into_iter().enumerate() {
            live.place(delegate.request_child_placement(&ChildSlot {
                key: &live.key,
                index,
                count,
                width,
                height,
                requested_height: live.requested_height,
            }));
        }
    }

    /// Hides or shows the view of `key` (a child view leaves the layout while hidden); returns
    /// whether `key` has a view.
    pub(super) fn set_visible(&mut self, key: &SurfaceKey, visible: bool) -> bool {
        let children = self.port.children();
        let Some(live) = self.live_mut(key) else {
            return false;
        };
        live.set_visible(visible, children);
        true
    }

    /// The window of the child views, when Surfaces are child views.
    pub(super) fn parent(&self) -> Option<&lineup_webview_shell::tao::window::Window> {
        self.port.parent()
    }

    /// Whether `window_id` is the parent window that holds the child views.
    pub(super) fn is_parent(&self, window_id: WindowId) -> bool {
        self.port
            .parent()
            .is_some_and(|parent| parent.id() == window_id)
    }

    /// Hands a window event to the Surface window it belongs to.
    pub(super) fn window_event(&self, window_id: WindowId, event: &WindowEvent<'_>) {
        for live in self.live.values() {
            if live.view.handle_window_event(window_id, event) {
                break;
            }
        }
    }

    /// The hang watchdog's verdict on `key` (R-UI-12): its page stopped answering; the delegate
    /// hears of it and its web process is terminated (the crash path follows when the engine
    /// reports it).
    pub(super) fn terminate(&self, key: &SurfaceKey, delegate: &mut dyn HostDelegate) {
        tracing::warn!(
            "surface {key}: its page stopped answering; its web process is terminated (R-UI-12)"
        );
        delegate.notify_unresponsive(key);
        if let Some(view) = self.view(key) {
            view.terminate_web_process();
        }
    }

    /// Runs the hang watchdog over every open view: pings those that are due, and gives the
    /// verdicts of those past their deadline (to be terminated, or whose termination the engine
    /// never reported), with when to check again (R-UI-12).
    pub(super) fn poll_watchdog(&mut self) -> (Vec<(SurfaceKey, Verdict)>, Option<Instant>) {
        let live = &self.live;
        self.watchdog
            .check(|key| live.get(key).map(|l| l.view.as_ref()))
    }

    /// What the Surface replacing `old` keeps of its webview, for a reopen after `reason`.
    pub(super) fn kept(&self, old: &SurfaceKey, reason: GoneReason) -> Kept {
        self.live(old)
            .map(|live| live.kept(reason))
            .unwrap_or(Kept {
                lost: Some(reason),
                ..Kept::default()
            })
    }

    /// What the choice of the Surface to hibernate reads of each one with a webview; an MCP
    /// App view is never a candidate (R-MCP-12's teardown on hibernation is still to come).
    fn awake(&self) -> impl Iterator<Item = Awake<'_>> {
        (self.live.values())
            .filter(|live| live.mcp_tool().is_none())
            .map(Live::awake)
    }

    /// Whether `key` is hibernated.
    pub(super) fn is_hibernated(&self, key: &SurfaceKey) -> bool {
        self.sleep.is_hibernated(key)
    }

    /// Hibernates `key`: its webview and web process go, what it needs to come back stays.
    /// Returns whether it did (it must be a live, hidden child view of a Surface: an MCP App
    /// view never hibernates).
    pub(super) fn hibernate(&mut self, key: &SurfaceKey, max_picture_bytes: usize) -> bool {
        let hibernates = |l: &Live| l.hidden() && l.mcp_tool().is_none();
        if !self.children() || !self.live(key).is_some_and(hibernates) {
            return false;
        }
        let Some(live) = self.live.remove(key) else {
            return false;
        };
        tracing::info!("surface {key}: hidden since it was last shown; hibernated (#29)");
        let (kept, picture, last_shown) = live.release();
        self.sleep
            .keep(key, kept, picture, last_shown, max_picture_bytes);
        self.watchdog.forget(key);
        true
    }

    /// Hibernates the least recently shown hidden child views without fresh presses (never
    /// `except`) until fewer than `max_live` Surfaces have a webview; whether there is room.
    pub(super) fn make_room(
        &mut self,
        max_live: usize,
        max_picture_bytes: usize,
        except: Option<&SurfaceKey>,
    ) -> bool {
        while self.live.len() >= max_live {
            let candidate = if self.children() {
                Hibernation::candidate(self.awake(), except)
            } else {
                None
            };
            let Some(key) = candidate else {
                return false;
            };
            self.hibernate(&key, max_picture_bytes);
        }
        true
    }

    /// Hibernates the hidden child views hidden for `Limits::hibernate_hidden_after` or longer
    /// (with no presses since their state was set); returns when the next one is due.
    pub(super) fn poll_hibernation(&mut self, limits: &Limits) -> Option<Instant> {
        let after = limits.hibernate_hidden_after?;
        let max_picture_bytes = limits.max_hibernated_bytes;
        if !self.children() {
            return None;
        }
        for key in Hibernation::due(self.awake(), Instant::now(), after) {
            self.hibernate(&key, max_picture_bytes);
        }
        Hibernation::next_due(self.awake(), after)
    }

    /// Registers restored Surface `key` (#29, after a restart) as hibernated and hidden, with
    /// no picture: it wakes when the embedder shows it.
    pub(super) fn sleep_restored(&mut self, key: &SurfaceKey) {
        tracing::info!("surface {key}: restored from its record, hibernated until shown (#29)");
        self.sleep.keep_restored(key);
    }

    /// Queues hibernated `key` to wake at the loop's next turn; whether it was not queued yet.
    pub(super) fn queue_wake(&mut self, key: &SurfaceKey) -> bool {
        self.sleep.queue_wake(key)
    }

    /// The hibernated Surfaces the embedder showed since the last turn, to wake now.
    pub(super) fn take_wakes(&mut self) -> Vec<SurfaceKey> {
        self.sleep.take_wakes()
    }

    /// The Surfaces hibernated since the kernel last heard of it.
    pub(super) fn take_newly_hibernated(&mut self) -> Vec<SurfaceKey> {
        self.sleep.take_news()
    }

    /// Takes hibernated `key` out of its sleep, for its wake: what it kept, and its picture.
    pub(super) fn take_sleeping(
        &mut self,
        key: &SurfaceKey,
    ) -> Option<(Kept, Option<WindowPixels>)> {
        self.sleep.take(key)
    }

    /// Puts `picture`, what woken `key` last showed, over its new view until its page says
    /// `ready` (#29).
    pub(super) fn stand_in(&mut self, key: &SurfaceKey, picture: Option<&WindowPixels>) {
        let placeholder = match (picture, self.parent()) {
            (Some(picture), Some(parent)) => Placeholder::new(parent, picture, Rect::default())
                .map_err(|e| tracing::warn!("surface {key}: no picture while it wakes: {e}"))
                .ok(),
            _ => None,
        };
        if let Some(live) = self.live_mut(key) {
            live.stand_in(placeholder);
        }
    }
}
