//! The host's view table: every open Surface's webview, keyed by session and instance, with
//! what belongs to it (its bridge-message backlog, its document layout, its requested height),
//! and everything that creates, places, feeds and closes those views, and what a reopened
//! Surface keeps of its predecessor (R-UI-12). The effect interpreter
//! ([`Host`](super::Host)) decides; this carries out what concerns the webviews.

use std::collections::{BTreeMap, HashSet};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

use lineup_host_core::{
    ConversationId, Diagnostic, GoneReason, InlineBundle, InstanceId, Limits, PageText, SessionId,
    SurfaceKey, SurfaceOpen,
};
use lineup_surface_runtime::{
    DocumentLayout, DocumentOptions, SurfaceDocument, SurfaceServer, SCHEME,
};
use lineup_webview_shell::tao::event::WindowEvent;
use lineup_webview_shell::tao::window::WindowId;
use lineup_webview_shell::WindowMaker;
use lineup_webview_shell::{Contrast, ViewEvent};
use lineup_webview_shell::{ProbeStatus, Rect, ShellError, SurfaceView};

use super::backlog::{Backlog, Dropped};
use super::handle::{HostEvent, Inner};
use super::proxy::HostProxy;
use super::standby::HostStandby;
use crate::delegate::{ChildSlot, HostDelegate};
use crate::port::{Place, PortView, ViewPort};
use crate::watchdog::{Verdict, Watchdog};

/// What a reopened Surface keeps of the webview it replaces, so it comes back in the same place
/// showing the same thing; nothing for a Surface opened by the agent.
#[derive(Debug, Default)]
pub(super) struct Kept {
    /// Where its own window was, and its inner size (window placement).
    pub(super) window: Option<Rect>,
    /// The height its page last asked for (child views are laid out with it).
    pub(super) requested_height: Option<u32>,
    /// The bundle the embedder last reloaded it with ([`HostHandle::reload_bundle`]).
    ///
    /// [`HostHandle::reload_bundle`]: super::HostHandle::reload_bundle
    pub(super) reloaded: Option<InlineBundle>,
    /// The loss the reopen answers; should the new webview not be created, the Surface is gone
    /// for this reason.
    pub(super) lost: Option<GoneReason>,
    /// Whether the embedder had hidden it ([`Host::set_surface_visible`]): a reopen keeps it so.
    ///
    /// [`Host::set_surface_visible`]: crate::Host::set_surface_visible
    pub(super) hidden: bool,
}

/// A hibernated Surface (#29, `host/hibernation.rs`): what its new webview is made with when
/// it wakes.
pub(super) struct Sleeping {
    pub(super) key: SurfaceKey,
    /// Where it goes and what it was reloaded with; `hidden` is set.
    pub(super) kept: Kept,
    /// What it showed when it was hidden, if the screen could be read and the byte cap left it.
    pub(super) picture: Option<lineup_webview_shell::WindowPixels>,
    /// When it was last shown, for the byte cap's order.
    pub(super) last_shown: Instant,
}

/// One open Surface's webview and what the host keeps beside it.
pub(super) struct Live {
    pub(super) key: SurfaceKey,
    pub(super) view: Box<dyn PortView>,
    backlog: Rc<Backlog>,
    /// Where the bundle's parts are in the document, to map diagnostics back (R-DIAG-1).
    layout: DocumentLayout,
    /// The height the page last asked for, clamped; honoured in child-view placement.
    pub(super) requested_height: Option<u32>,
    /// Hidden by the embedder: no room in the layout, no input, page and state kept.
    pub(super) hidden: bool,
    /// Documents the embedder loaded ([`HostHandle::reload_bundle`]) whose commit is still to
    /// come; those commits do not count toward the reload-loop bound (R-UI-10).
    ///
    /// [`HostHandle::reload_bundle`]: super::HostHandle::reload_bundle
    embedder_reloads: u32,
    /// The bundle the embedder last reloaded the Surface with, if any: what a reopen shows.
    pub(super) reloaded: Option<InlineBundle>,
    /// When the view was created, until its page first said `ready`: the warm pool is not
    /// refilled meanwhile (#12).
    pub(super) opening_since: Option<Instant>,
    /// When the embedder last showed it (or it opened): the least recently shown hidden
    /// Surface hibernates first (#29).
    pub(super) last_shown: Instant,
    /// Since when the embedder has hidden it.
    pub(super) hidden_since: Option<Instant>,
    /// The view's press count when its state was last set (open or patch): more presses since
    /// mean input the agent may not have seen, and the Surface is not hibernated.
    pub(super) presses_seen: u64,
    /// What it showed on screen when the embedder hid it: its picture while it hibernates.
    pub(super) picture: Option<lineup_webview_shell::WindowPixels>,
    /// That picture over a woken Surface's new view, until its page says `ready`.
    pub(super) placeholder: Option<lineup_webview_shell::Placeholder>,
}

/// Where a Surface's webview is kept: instance ids are scoped to their session (R-SES-1).
fn slot(key: &SurfaceKey) -> (SessionId, InstanceId) {
    (key.session, key.instance.clone())
}

/// What the isolation probe's verdict means for the views, once.
pub(super) enum ProbeNews {
    /// Still running, or reported already.
    None,
    /// Passed: the held documents are served.
    Passed,
    /// Failed: these views' documents were never served; they are to close.
    Failed {
        /// The check that failed.
        reason: String,
        /// The Surfaces opened while the probe ran.
        held: Vec<SurfaceKey>,
    },
}

/// The webviews of every open Surface, and what places and feeds them.
pub(super) struct Views {
    /// Where Surface views are made and what they are children of.
    port: Box<dyn ViewPort>,
    live: BTreeMap<(SessionId, InstanceId), Live>,
    /// Open Surfaces without a webview: hibernated while hidden (#29).
    pub(super) sleeping: BTreeMap<(SessionId, InstanceId), Sleeping>,
    /// Hibernated Surfaces the embedder showed, woken at the loop's next turn.
    pub(super) wakes: Vec<SurfaceKey>,
    /// The Surfaces hibernated since the kernel last heard of it, so that it keeps their
    /// records (#29).
    pub(super) newly_hibernated: Vec<SurfaceKey>,
    /// Surfaces whose views were created while the probe ran, their documents held (R-SEC-8).
    held: Vec<SurfaceKey>,
    probe_reported: bool,
    /// The conversations the embedder hid: what they open starts hidden.
    hidden_conversations: HashSet<ConversationId>,
    window_size: (u32, u32),
    resize_bounds: (u32, u32),
    document: DocumentOptions,
    /// Read at each open (R-UI-11).
    contrast: Contrast,
    /// The hang watchdog of every open view (R-UI-12).
    pub(super) watchdog: Watchdog,
    /// The standby screen over the parent window ([`HostBuilder::standby`]).
    ///
    /// [`HostBuilder::standby`]: super::HostBuilder::standby
    pub(super) standby: Option<HostStandby>,
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
            sleeping: BTreeMap::new(),
            wakes: Vec::new(),
            newly_hibernated: Vec::new(),
            held: Vec::new(),
            probe_reported: false,
            hidden_conversations: HashSet::new(),
            window_size,
            resize_bounds,
            document,
            contrast,
            watchdog,
            standby,
        }
    }

    /// The Surfaces open now: those with a webview, and the hibernated ones.
    pub(super) fn keys(&self) -> Vec<SurfaceKey> {
        self.live
            .values()
            .map(|l| l.key.clone())
            .chain(self.sleeping.values().map(|s| s.key.clone()))
            .collect()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.live.is_empty() && self.sleeping.is_empty()
    }

    /// The view of Surface `key` and what is kept beside it, while that generation is open.
    pub(super) fn live(&self, key: &SurfaceKey) -> Option<&Live> {
        self.live.get(&slot(key)).filter(|l| l.key == *key)
    }

    /// Takes the view of `key` and what is kept beside it out of the table.
    pub(super) fn take_live(&mut self, key: &SurfaceKey) -> Option<Live> {
        self.live(key)?;
        self.live.remove(&slot(key))
    }

    pub(super) fn live_mut(&mut self, key: &SurfaceKey) -> Option<&mut Live> {
        self.live.get_mut(&slot(key)).filter(|l| l.key == *key)
    }

    pub(super) fn live_values(&self) -> impl Iterator<Item = &Live> {
        self.live.values()
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

    /// The first open Surface named `instance`, in any session (the preview has one).
    pub(super) fn by_instance(&self, instance: &InstanceId) -> Option<&Live> {
        self.live
            .iter()
            .find(|((_, i), _)| i == instance)
            .map(|(_, live)| live)
    }

    /// Surfaces opened from now on get the high-contrast values, or not (R-UI-11).
    pub(super) fn set_contrast(&mut self, contrast: Contrast) {
        self.contrast = contrast;
    }

    /// The document options of a Surface opening now: the contrast is read at open.
    fn document_options(&self) -> DocumentOptions {
        self.document
            .clone()
            .with_high_contrast(self.high_contrast())
    }

    /// Whether a Surface or a component opening now gets the high-contrast values (R-UI-11).
    /// The host context's language (the views' configuration, else the environment's).
    pub(super) fn language(&self) -> lineup_host_core::LanguageTag {
        self.port.language()
    }

    pub(super) fn high_contrast(&self) -> bool {
        match self.contrast {
            Contrast::High => true,
            Contrast::Normal => false,
            _ => lineup_webview_shell::desktop_high_contrast(),
        }
    }

    /// Whether the isolation probe's verdict has been taken.
    pub(super) fn probe_reported(&self) -> bool {
        self.probe_reported
    }

    /// Takes the probe's verdict once it is there (R-SEC-8).
    pub(super) fn poll_probe(&mut self) -> ProbeNews {
        if self.probe_reported {
            return ProbeNews::None;
        }
        match self.port.probe_status() {
            ProbeStatus::Pending => ProbeNews::None,
            ProbeStatus::Passed => {
                self.probe_reported = true;
                self.held.clear();
                ProbeNews::Passed
            }
            ProbeStatus::Failed(reason) => {
                self.probe_reported = true;
                ProbeNews::Failed {
                    reason,
                    held: std::mem::take(&mut self.held),
                }
            }
        }
    }

    /// Surface `key` opens while the probe runs: its document waits for the verdict.
    pub(super) fn hold_until_probed(&mut self, key: &SurfaceKey) {
        if !self.probe_reported {
            self.held.push(key.clone());
        }
    }

    /// Creates the webview of `open` (the one place a Surface's webview is made), placed where
    /// its predecessor was when it is a reopen (`kept`). Its view events go to the loop through
    /// `proxy`, tagged with its key: the closure is the view's identity (R-SEC-4).
    pub(super) fn create(
        &mut self,
        open: &SurfaceOpen,
        kept: &Kept,
        limits: &Limits,
        proxy: &HostProxy,
        target: &dyn WindowMaker,
    ) -> Result<(), ShellError> {
        let key = open.key.clone();
        let token = self.surface_token()?;
        let mut options = self.document_options().with_sources(open.sources.clone());
        if !open.assets.is_empty() {
            // R-SEC-3a: this Surface's own assets, and no other's.
            options = options.with_own_assets(&format!("{SCHEME}://{token}"));
            if open.assets.has_scripts() {
                // R-SEC-3a: its script assets, code signed with its package.
                options = options.with_own_scripts();
            }
        }
        let document = SurfaceDocument::assemble(&open.app.bundle, &options);
        let layout = document.layout();
        let assets = open
            .assets
            .0
            .iter()
            .map(|(path, asset)| (path.clone(), asset.mime.clone(), Arc::clone(&asset.bytes)));
        let server = SurfaceServer::new(token, document).with_assets(assets);
        let place = if self.port.children() {
            Place::Child
        } else {
            Place::Window {
                // R-SEC-5: a host-owned marker, and never the consent prompt's title.
                title: lineup_webview_shell::surface_window_title(
                    open.app.name.as_deref(),
                    open.app.id.as_str(),
                    &self.language(),
                ),
                width: self.window_size.0,
                height: self.window_size.1,
            }
        };
        let proxy = proxy.clone();
        let tagged = key.clone();
        let backlog = Rc::new(Backlog::new(
            limits.max_pending_bridge_messages,
            limits.max_pending_diagnostics,
        ));
        let counted = Rc::clone(&backlog);
        // R-SEC-8: created at once; its document waits for the probe's verdict.
        let events = Box::new(move |event| {
            // R-DIAG-1: diagnostics wait apart, so a chatty page loses diagnostics, not
            // events.
            if let ViewEvent::Ipc(raw) = &event {
                if !counted.admit(raw) {
                    return;
                }
            }
            let _ = proxy.send_event(HostEvent(Inner::View {
                key: tagged.clone(),
                event,
            }));
        });
        let view = self.port.open(target, server, place, events)?;
        if kept.hidden {
            view.set_visible(false);
        }
        if let Some(bounds) = kept.window {
            if let Err(e) = view.set_bounds(bounds) {
                tracing::warn!("surface {key}: cannot put it where it was: {e}");
            }
        }
        self.live.insert(
            slot(&key),
            Live {
                key: key.clone(),
                view,
                backlog,
                layout,
                requested_height: kept.requested_height,
                hidden: kept.hidden,
                embedder_reloads: 0,
                reloaded: kept.reloaded.clone(),
                opening_since: Some(Instant::now()),
                last_shown: Instant::now(),
                hidden_since: kept.hidden.then(Instant::now),
                presses_seen: 0,
                picture: None,
                placeholder: None,
            },
        );
        self.watchdog.watch(&key);
        Ok(())
    }

    /// Closes the view of `key` (the standby screen first comes up if it was the last one);
    /// returns whether a view went, so the rest are laid out again.
    pub(super) fn destroy(&mut self, key: &SurfaceKey) -> bool {
        let mut closed = false;
        if self.sleeping.get(&slot(key)).is_some_and(|s| s.key == *key) {
            self.sleeping.remove(&slot(key));
        }
        if self.live(key).is_some() {
            if let Some(standby) = self.standby.as_mut() {
                // Up before the view goes, so the window never shows it half torn down.
                standby.gone(key);
            }
            if let Some(live) = self.live.remove(&slot(key)) {
                live.view.close();
                closed = true;
            }
        }
        self.watchdog.forget(key);
        self.held.retain(|k| k != key);
        closed
    }

    /// The page of `key` said `ready`: it is no longer opening, it answered the watchdog, and
    /// the standby screen may step aside.
    pub(super) fn ready(&mut self, key: &SurfaceKey) {
        if let Some(live) = self.live_mut(key) {
            live.opening_since = None;
            // A woken Surface's picture stood in until now (#29).
            live.placeholder = None;
        }
        self.watchdog.ready(key);
        if let Some(standby) = self.standby.as_mut() {
            let view = self
                .live
                .get(&slot(key))
                .filter(|l| l.key == *key)
                .and_then(|l| l.view.surface());
            standby.ready(key, view);
        }
    }

    /// A new document committed in the view of `key`; returns whether the embedder loaded it
    /// ([`HostHandle::reload_bundle`](super::HostHandle::reload_bundle)).
    pub(super) fn committed(&mut self, key: &SurfaceKey) -> bool {
        self.watchdog.committed(key);
        match self.live_mut(key) {
            Some(live) if live.embedder_reloads > 0 => {
                live.embedder_reloads -= 1;
                true
            }
            _ => false,
        }
    }

    /// A bridge message of `key` reached the loop: it no longer waits, and what was dropped
    /// while it waited is handed over once.
    pub(super) fn bridge_message_taken(&self, key: &SurfaceKey, raw: &str) -> Dropped {
        let Some(live) = self.live(key) else {
            return Dropped::default();
        };
        live.backlog.taken(raw)
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
        let options = self.document_options();
        let Some(live) = self.live_mut(&key) else {
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
        let url = live.view.url();
        let own_document = diagnostic
            .source
            .as_ref()
            .is_none_or(|s| s.is_empty() || s.as_str() == url);
        if let (true, Some(line)) = (own_document, diagnostic.line) {
            diagnostic.position = live.layout.locate(line, diagnostic.column.unwrap_or(1));
        }
        // R-SEC-3a: a position in one of its own script assets reads as that file's.
        let asset = diagnostic
            .source
            .as_ref()
            .and_then(|s| s.as_str().strip_prefix(url))
            .filter(|path| !path.is_empty() && url.ends_with('/'))
            .map(|path| PageText::capped(path, 512));
        if asset.is_some() {
            diagnostic.asset = asset;
        }
        delegate.notify_diagnostic(key, &diagnostic);
    }

    /// Lays the child views out again, each where the delegate puts it.
    pub(super) fn relayout(&self, delegate: &mut dyn HostDelegate) {
        // The host's container's size: rectangles are in its coordinates (#49 item 3).
        let Some((width, height)) = self.port.child_area() else {
            return;
        };
        let shown: Vec<&Live> = self.live.values().filter(|l| !l.hidden).collect();
        let count = shown.len();
        for (index, live) in shown.into_iter().enumerate() {
            let bounds = delegate.request_child_placement(&ChildSlot {
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
            if let Some(placeholder) = &live.placeholder {
                placeholder.set_bounds(bounds);
            }
        }
    }

    /// Hides or shows the view of `key` (a child view leaves the layout while hidden); returns
    /// whether `key` has a view.
    pub(super) fn set_visible(&mut self, key: &SurfaceKey, visible: bool) -> bool {
        let children = self.port.children();
        let Some(live) = self.live_mut(key) else {
            return false;
        };
        if visible {
            live.last_shown = Instant::now();
            live.hidden_since = None;
            // Taken again at the next hide: a shown Surface keeps no picture.
            live.picture = None;
        } else if children && !live.hidden {
            // What the user last saw of it: its picture, should it hibernate (#29).
            live.picture = live.view.screen_pixels().ok();
            live.hidden_since = Some(Instant::now());
        }
        live.hidden = !visible;
        live.view.set_visible(visible);
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

    /// Runs the hang watchdog over every open view: pings those that are due, and gives the
    /// verdicts of those past their deadline (to be terminated, or whose termination the engine
    /// never reported), with when to check again (R-UI-12).
    pub(super) fn poll_watchdog(&mut self) -> (Vec<(SurfaceKey, Verdict)>, Option<Instant>) {
        let live = &self.live;
        self.watchdog.check(|key| {
            live.get(&slot(key))
                .filter(|l| l.key == *key)
                .map(|l| l.view.as_ref())
        })
    }

    /// What the Surface replacing `old` keeps of its webview, for a reopen after `reason`.
    pub(super) fn kept(&self, old: &SurfaceKey, reason: GoneReason) -> Kept {
        self.live(old)
            .map(|live| Kept {
                window: live.view.window_bounds(),
                requested_height: live.requested_height,
                reloaded: live.reloaded.clone(),
                lost: Some(reason),
                hidden: live.hidden,
            })
            .unwrap_or(Kept {
                lost: Some(reason),
                ..Kept::default()
            })
    }
}
