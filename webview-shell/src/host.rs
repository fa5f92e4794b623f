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
    AgentIdentity, Answer, AppCatalog, BundlePolicy, Capability, CapabilityName, CapabilityPolicy,
    CapabilitySetup, CapabilityStore, CatalogRef, Clock, CloseReason, ConversationId, Diagnostic,
    Effect, GoneReason, HookRequest, InlineBundle, InstanceId, LanguageTag, Limits, Message,
    PartyId, Session, SessionConfig, SessionEffects, SessionFactory, SessionId, Sessions,
    SurfaceKey, SurfaceOpen, Ticket, BRIDGE_NAMESPACE,
};
use lineup_surface_runtime::{
    DocumentLayout, DocumentOptions, SurfaceDocument, SurfaceServer, SCHEME,
};
use tao::dpi::LogicalSize;
use tao::event::{Event, WindowEvent};
use tao::event_loop::{
    ControlFlow, EventLoop, EventLoopBuilder, EventLoopProxy, EventLoopWindowTarget,
};
use tao::window::Window;

use crate::capabilities::{
    AnswerSink, CapabilityConfig, CapabilityDriver, CapabilityHandler, PromptChoice, SharedStore,
    SystemWallClock,
};
use crate::config::{Contrast, Placement, Rect, Theme, ViewConfig};
use crate::consent::ConsentPrompt;
use crate::delegate::{ChildSlot, HostDelegate, NoDelegate, Refusal};
use crate::error::ShellError;
use crate::event::ViewEvent;
use crate::prompt::{PromptOptions, PromptQueue};
use crate::shell::{ProbeStatus, Shell};
use crate::view::SurfaceView;
use crate::watchdog::{Watchdog, WatchdogConfig, MIN_DEADLINE};

mod link;
mod policy;
mod pool;
mod recovery;
mod standby;

use link::AnnounceDone;
use recovery::Kept;
use standby::HostStandby;

/// The user event of the host's event loop. Opaque: made by [`HostHandle`] and the webviews.
/// `Debug` shows an inbound envelope as a length and a digest (logs reach journald).
#[derive(Debug)]
pub struct HostEvent(Inner);

#[cfg(test)]
impl HostEvent {
    /// The event [`HostHandle::send_inbound_line`] sends, for tests of its `Debug`.
    pub(crate) fn inbound_line(line: u64, bytes: Vec<u8>) -> Self {
        Self(Inner::Inbound {
            line: Some(line),
            bytes: InboundBytes(bytes),
        })
    }
}

/// An inbound envelope's bytes: the agent's message, its state and arguments included. `Debug`
/// shows a [`Fingerprint`](lineup_host_core::Fingerprint).
struct InboundBytes(Vec<u8>);

impl std::fmt::Debug for InboundBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        lineup_host_core::Fingerprint::of(&self.0).fmt(f)
    }
}

#[derive(Debug)]
enum Inner {
    Inbound {
        line: Option<u64>,
        bytes: InboundBytes,
    },
    Oversized {
        line: Option<u64>,
        len: u64,
    },
    EventsDropped {
        instance: InstanceId,
        count: u64,
    },
    CapabilityAnswer {
        session: SessionId,
        ticket: Ticket,
        answer: Answer,
    },
    OpenSession {
        conversation: ConversationId,
        agent: Option<PartyId>,
    },
    EndSession {
        conversation: ConversationId,
    },
    /// Wakes the loop to apply effects queued outside it.
    Wake,
    /// A new status line for the standby screen.
    StandbyStatus(String),
    /// The standby screen's small indicator over the Surfaces, or none.
    StandbyIndicator(Option<String>),
    View {
        key: SurfaceKey,
        event: ViewEvent,
    },
    Reload {
        instance: InstanceId,
        bundle: InlineBundle,
    },
    Snapshot {
        instance: InstanceId,
        done: SnapshotDone,
    },
    Shutdown,
    /// Ends [`Host::run`] once no Surface is open (at once when none is).
    ShutdownWhenEmpty,
    /// [`HostHandle::announce_inventory`].
    AnnounceInventory {
        conversation: ConversationId,
        agent: Option<PartyId>,
        done: AnnounceDone,
    },
    /// [`HostHandle::surfaces_gone`].
    SurfacesGone {
        conversation: Option<ConversationId>,
        reason: GoneReason,
    },
    /// [`HostHandle::send_binary_frame`].
    BinaryFrame {
        len: u64,
    },
    /// [`HostHandle::withdraw_capability`].
    Withdraw {
        name: CapabilityName,
    },
    /// [`HostHandle::set_capability_visible`].
    SetVisible {
        agent: AgentIdentity,
        name: CapabilityName,
        visible: bool,
    },
}

/// Where a snapshot's PNG bytes (or why there are none) go, from the event-loop thread.
struct SnapshotDone(Box<dyn FnOnce(Result<Vec<u8>, ShellError>) + Send>);

impl std::fmt::Debug for SnapshotDone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SnapshotDone")
    }
}

/// The event loop a [`Host`] runs on, as [`event_loop`] creates it.
pub type HostEventLoop = tao::event_loop::EventLoop<HostEvent>;

/// Creates the event loop a [`Host`] runs on.
///
/// ## Platform-specific
/// Linux: needs an X11 or Wayland display (`DISPLAY` or `WAYLAND_DISPLAY`); without one this
/// returns [`ShellError::Platform`] rather than letting GTK abort the process.
pub fn event_loop() -> Result<EventLoop<HostEvent>, ShellError> {
    crate::platform::check_display()?;
    Ok(EventLoopBuilder::<HostEvent>::with_user_event().build())
}

/// The event loop has ended; nothing more can be sent to the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the host's event loop has ended")]
pub struct HostClosed;

/// A `Send + Clone` handle that forwards input into the host's event loop from any thread.
#[derive(Debug, Clone)]
pub struct HostHandle {
    proxy: EventLoopProxy<HostEvent>,
    /// Inbound lines handed to the event loop and not handled yet, over every clone.
    inbound: Arc<AtomicUsize>,
}

impl HostHandle {
    fn send(&self, inner: Inner) -> Result<(), HostClosed> {
        let inbound = matches!(
            inner,
            Inner::Inbound { .. } | Inner::Oversized { .. } | Inner::BinaryFrame { .. }
        );
        if inbound {
            self.inbound.fetch_add(1, Ordering::Relaxed);
        }
        let sent = self.proxy.send_event(HostEvent(inner));
        if sent.is_err() && inbound {
            self.inbound.fetch_sub(1, Ordering::Relaxed);
        }
        sent.map_err(|_| HostClosed)
    }

    /// How many inbound envelopes (and oversized-line reports) handed over through any handle of
    /// this host the event loop has not handled yet. A reader that stops reading input while
    /// this is high keeps the loop's queue, and the answers it will produce, bounded (R-ENV-4).
    pub fn inbound_waiting(&self) -> usize {
        self.inbound.load(Ordering::Relaxed)
    }

    /// Hands one inbound envelope (agent → client) to the host.
    pub fn send_inbound(&self, bytes: Vec<u8>) -> Result<(), HostClosed> {
        self.send(Inner::Inbound {
            line: None,
            bytes: InboundBytes(bytes),
        })
    }

    /// Hands one inbound envelope to the host, numbered for diagnostics
    /// ([`HostDelegate::notify_rejected`] receives the number).
    pub fn send_inbound_line(&self, line: u64, bytes: Vec<u8>) -> Result<(), HostClosed> {
        self.send(Inner::Inbound {
            line: Some(line),
            bytes: InboundBytes(bytes),
        })
    }

    /// Reports an inbound line of `len` bytes that was too long to be read (R-ENV-4); the agent
    /// gets `client.error` `too_large`.
    pub fn send_oversized_line(&self, line: u64, len: u64) -> Result<(), HostClosed> {
        self.send(Inner::Oversized {
            line: Some(line),
            len,
        })
    }

    /// Reports that `count` page events of Surface `instance` were dropped on the way out because
    /// the agent's reader fell behind (for instance by [`crate::LineWriter`], once its queue
    /// drained). The host's session builds the `client.error` `events_dropped` and sends it
    /// through the outbound callback, like every other outbound message.
    pub fn report_events_dropped(
        &self,
        instance: InstanceId,
        count: u64,
    ) -> Result<(), HostClosed> {
        self.send(Inner::EventsDropped { instance, count })
    }

    /// Reloads Surface `instance` in place with `bundle`: the same webview, window and state,
    /// a new document assembled as for `ui.open` (same CSP, same bridge). The page gets the
    /// current state again after its `ready` (R-UI-10), and the reload does **not** count
    /// toward the reload-loop bound (`Limits::max_documents_per_window`), since the embedder
    /// asked for it, not the page: this is a preview's hot reload. A bundle over
    /// `Limits::max_bundle_bytes` (R-UI-2) or an instance that is not open is refused with a
    /// warning in the log, and nothing changes. Nothing goes to the agent.
    pub fn reload_bundle(
        &self,
        instance: InstanceId,
        bundle: InlineBundle,
    ) -> Result<(), HostClosed> {
        self.send(Inner::Reload { instance, bundle })
    }

    /// Takes WebKit's snapshot of Surface `instance`'s whole document as PNG bytes, once what
    /// the host sent the page before (its state, say) has run and two animation frames have
    /// passed ([`SurfaceView::snapshot_png`]); `done` gets the bytes, or why there are none,
    /// on the event-loop thread.
    pub fn snapshot_png(
        &self,
        instance: InstanceId,
        done: impl FnOnce(Result<Vec<u8>, ShellError>) + Send + 'static,
    ) -> Result<(), HostClosed> {
        self.send(Inner::Snapshot {
            instance,
            done: SnapshotDone(Box::new(done)),
        })
    }

    /// Opens a session for `conversation`, vouching for `agent` (R-SES-1; `None`: the
    /// builder's [`HostBuilder::vouched_agent`]); see [`Host::open_session`]. A refusal (the
    /// session is open already, `max_sessions`) is logged.
    pub fn open_session(
        &self,
        conversation: ConversationId,
        agent: Option<PartyId>,
    ) -> Result<(), HostClosed> {
        self.send(Inner::OpenSession {
            conversation,
            agent,
        })
    }

    /// Ends the session of `conversation`; see [`Host::end_session`].
    pub fn end_session(&self, conversation: ConversationId) -> Result<(), HostClosed> {
        self.send(Inner::EndSession { conversation })
    }

    /// Sets the status line of the standby screen ([`HostBuilder::standby`]), cut to
    /// [`MAX_STANDBY_STATUS_CHARS`](crate::MAX_STANDBY_STATUS_CHARS) characters and shown as
    /// text; nothing happens without a standby screen.
    pub fn set_standby_status(&self, status: impl Into<String>) -> Result<(), HostClosed> {
        self.send(Inner::StandbyStatus(status.into()))
    }

    /// Shows `text` in a small host-owned indicator over the Surfaces in the parent window of
    /// [`HostBuilder::child_views_in`] (say, "Agent away: reconnecting in 4 s"), or hides it
    /// with `None`; cut like [`HostHandle::set_standby_status`] and shown as text. Nothing
    /// happens without a standby screen ([`HostBuilder::standby`]).
    pub fn set_standby_indicator(&self, text: Option<String>) -> Result<(), HostClosed> {
        self.send(Inner::StandbyIndicator(text))
    }

    /// Closes every Surface (nothing goes upstream) and ends [`Host::run`].
    pub fn shutdown(&self) -> Result<(), HostClosed> {
        self.send(Inner::Shutdown)
    }

    /// Ends [`Host::run`] once the last Surface has closed (by the user, the page or the agent),
    /// at once when none is open. Messages sent before it are handled first, so a `ui.open`
    /// that was the last line of input still opens its Surface. `lineup host --stdio
    /// --until-closed` sends it at end of input.
    pub fn shutdown_when_last_closed(&self) -> Result<(), HostClosed> {
        self.send(Inner::ShutdownWhenEmpty)
    }
}

/// The embedder's outbound callback.
type OutboundFn = Box<dyn FnMut(&Message)>;

/// Where the host puts Surfaces.
enum Layout {
    Windows,
    Children(Rc<Window>),
}

/// Configures a [`Host`]. Deny by default; the defaults are:
///
/// | setting | default |
/// | --- | --- |
/// | client id (`sender.id` of outbound envelopes) | `lineup-host` |
/// | limits | [`Limits::default`]: envelope 1 MiB, depth 32, bundle 160 KiB, data < 16 KiB, 16 Surfaces, 30 opens / 10 s |
/// | sessions (R-SES-1) | one per conversation, established by its first accepted envelope; at most [`Limits::max_sessions`] (64); 16 Surfaces in each and in total; ended through [`Host::end_session`] or at shutdown, never for idleness |
/// | vouched agent | none: any `sender.id`, and "always" lasts one conversation |
/// | bundle policy | [`BundlePolicy::SandboxOnly`]: integrity verified when present (R-SEC-7) |
/// | placement | a window of its own per Surface, 480 × 360, titled with the sanitised app name |
/// | resize requests | clamped to 40 ..= 2000 logical pixels |
/// | webviews | [`ViewConfig::default`]: devtools off, web-process sandbox on, network through a refusing proxy, isolation probe |
/// | memory per Surface | [`Limits::surface_memory_limit_mib`] (512 MiB); past it the Surface is closed, `memory` upstream |
/// | document | [`DocumentOptions::default`]: the strict CSP with `sandbox allow-scripts` |
/// | language (R-UI-11) | the environment's ([`language_from_environment`](crate::language_from_environment)), `en` under the POSIX locale |
/// | theme (R-UI-11) | [`Theme::System`]: the desktop's `prefers-color-scheme` |
/// | contrast (R-UI-11) | [`Contrast::System`]: the desktop's, read at each open |
/// | text zoom (R-UI-11) | 1.0; the Ctrl± zoom keys are off |
/// | diagnostics (R-DIAG-1) | to [`HostDelegate::notify_diagnostic`], 100 per Surface per 10 s; never to the agent |
/// | App Capabilities (R-SEC-5) | off: every `app.call` answered `unsupported`; [`HostBuilder::enable_capabilities`] |
/// | built-in capabilities | none; each enabled by [`HostBuilder::builtin`], acting on [`SystemDesktop`](crate::SystemDesktop) |
/// | recovery (R-UI-12) | a Surface whose web process died or was ended by the hang watchdog is reopened in place with its last state, at most [`Limits::max_reopens_per_window`] (3) times per [`Limits::reopen_window`] (60 s), then closed with `crashed` or `unresponsive` upstream; never after its memory ceiling; [`HostBuilder::reopen_lost_surfaces`] |
/// | hang watchdog (R-UI-12) | on: a page without a sign of life for 10 s ([`HostBuilder::hang_deadline`]), or without its first `ready` for 20 s ([`HostBuilder::first_ready_deadline`]), has its web process terminated; [`HostBuilder::without_hang_watchdog`] |
///
/// Everything that weakens isolation is behind [`HostBuilder::dangerous`].
pub struct HostBuilder {
    client_id: PartyId,
    conversation_id: Option<ConversationId>,
    limits: Limits,
    bundle_policy: BundlePolicy,
    view_config: ViewConfig,
    document: DocumentOptions,
    window_size: (u32, u32),
    resize_bounds: (u32, u32),
    layout: Layout,
    outbound: Option<OutboundFn>,
    delegate: Box<dyn HostDelegate>,
    capabilities: Option<CapabilityConfig>,
    agent_id: Option<PartyId>,
    language: Option<LanguageTag>,
    theme: Theme,
    contrast: Contrast,
    session_idle: Option<Duration>,
    app_center: Option<Rc<dyn AppCatalog>>,
    unvouched_scope: Option<String>,
    capability_policy: Option<Rc<dyn CapabilityPolicy>>,
    reopen: bool,
    watchdog: WatchdogConfig,
    standby: Option<crate::StandbyScreen>,
    ignore_parent_close: bool,
}

impl Default for HostBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for HostBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostBuilder")
            .field("client_id", &self.client_id)
            .field("limits", &self.limits)
            .field("bundle_policy", &self.bundle_policy)
            .field("view_config", &self.view_config)
            .finish_non_exhaustive()
    }
}

impl HostBuilder {
    /// The defaults listed above.
    pub fn new() -> Self {
        Self {
            client_id: PartyId::try_from("lineup-host").unwrap_or_else(|_| unreachable_party()),
            conversation_id: None,
            limits: Limits::default(),
            bundle_policy: BundlePolicy::default(),
            view_config: ViewConfig::default(),
            document: DocumentOptions::default(),
            window_size: (480, 360),
            resize_bounds: (40, 2000),
            layout: Layout::Windows,
            outbound: None,
            delegate: Box::new(NoDelegate),
            capabilities: None,
            agent_id: None,
            language: None,
            theme: Theme::System,
            contrast: Contrast::System,
            app_center: None,
            unvouched_scope: None,
            capability_policy: None,
            session_idle: None,
            reopen: true,
            watchdog: WatchdogConfig::default(),
            standby: None,
            ignore_parent_close: false,
        }
    }

    /// Turns App Capabilities on (R-SEC-5, R-INV-1): each session gets `client.inventory` and
    /// `app.list` first, and `app.call`s go through the pipeline (known and visible, not expired,
    /// arguments valid, consent by risk, run once, one `app.result`). Registering a capability
    /// turns them on too. Without this, every well-formed `app.call` is answered `unsupported`.
    pub fn enable_capabilities(mut self) -> Self {
        self.capabilities
            .get_or_insert_with(CapabilityConfig::default);
        self
    }

    /// Registers a capability and its handler, which runs on a thread of its own (never the GUI
    /// thread). A name registered twice makes [`HostBuilder::build`] fail.
    pub fn capability(mut self, capability: Capability, handler: impl CapabilityHandler) -> Self {
        self.capabilities
            .get_or_insert_with(CapabilityConfig::default)
            .registrations
            .push((capability, Arc::new(handler)));
        self
    }

    /// Where call records, remembered grants, the audit and revision epochs are kept (R-CAP-5,
    /// R-CAP-6, R-INV-2). The default, a [`MemoryStore`](lineup_host_core::MemoryStore), keeps
    /// nothing across restarts; the `lineup-store` crate's SQLite store does.
    pub fn capability_store(mut self, store: impl CapabilityStore + 'static) -> Self {
        self.capabilities
            .get_or_insert_with(CapabilityConfig::default)
            .store = Box::new(store);
        self
    }

    /// The agent the embedder or the transport vouches for (R-SES-1) in every session an
    /// envelope establishes, and in those [`Host::open_session`] opens without one of its own:
    /// an inbound envelope whose `sender.id` is another is refused `wrong_sender`, and
    /// remembered grants belong to this identity. Without one, any `sender.id` is taken and
    /// "always" lasts the conversation.
    pub fn vouched_agent(mut self, agent: PartyId) -> Self {
        self.agent_id = Some(agent);
        self
    }

    /// Shows consent requests with the embedder's UI instead of the built-in trusted prompt
    /// window.
    pub fn consent_prompt(mut self, prompt: impl ConsentPrompt + 'static) -> Self {
        self.capabilities
            .get_or_insert_with(CapabilityConfig::default)
            .prompt = PromptChoice::Custom(Box::new(prompt));
        self
    }

    /// The extra check `system_permission` and `restricted` calls need after the user allowed
    /// them (R-CAP-3); without one they are denied.
    pub fn permission_hook(mut self, hook: impl FnMut(&HookRequest) -> bool + 'static) -> Self {
        self.capabilities
            .get_or_insert_with(CapabilityConfig::default)
            .hook = Box::new(hook);
        self
    }

    /// Enables one built-in capability (spec §5.2, R-SEC-5): it is registered with the spec's
    /// name, version `1.0` and risk, listed in the inventory, and runs only after consent. None
    /// is on by default. Their effects go to [`HostBuilder::desktop`], by default the real
    /// [`SystemDesktop`](crate::SystemDesktop). A capability of the same name registered with
    /// [`HostBuilder::capability`] makes [`HostBuilder::build`] fail.
    ///
    /// `device.pick_file` (`system_permission`) takes the file chooser as its OS permission
    /// (R-CAP-3): the [`permission_hook`](HostBuilder::permission_hook) is not asked for it; see
    /// [`Builtin`](crate::Builtin) for each one's arguments, result and refusals.
    pub fn builtin(mut self, builtin: crate::Builtin) -> Self {
        self.capabilities
            .get_or_insert_with(CapabilityConfig::default)
            .builtins
            .enabled
            .insert(builtin);
        self
    }

    /// Enables each of `builtins` ([`HostBuilder::builtin`]).
    pub fn builtins(self, builtins: &[crate::Builtin]) -> Self {
        builtins.iter().fold(self, |b, builtin| b.builtin(*builtin))
    }

    /// Where the built-in capabilities act: the real desktop by default; a
    /// [`RecordingDesktop`](crate::RecordingDesktop) in tests.
    pub fn desktop(mut self, desktop: impl crate::Desktop) -> Self {
        self.capabilities
            .get_or_insert_with(CapabilityConfig::default)
            .builtins
            .desktop = Some(Arc::new(desktop));
        self
    }

    /// The language Surfaces see (R-UI-11): `navigator.language`, `navigator.languages`,
    /// `Intl`'s default locale and `<html lang>`. By default the environment's
    /// ([`language_from_environment`](crate::language_from_environment)).
    ///
    /// ## Platform-specific
    /// Linux: each Surface's web context's preferred languages, set before its first load.
    pub fn language(mut self, language: LanguageTag) -> Self {
        self.language = Some(language);
        self
    }

    /// The colour scheme Surfaces see as `prefers-color-scheme`, which also switches the
    /// `--lineup-color-*` custom properties (R-UI-11). Change it later with
    /// [`Host::set_theme`].
    ///
    /// ## Platform-specific
    /// Linux: GTK's process-wide dark-theme preference; see [`Theme`] for what that means for
    /// the embedder's own windows.
    pub fn theme(mut self, theme: Theme) -> Self {
        self.theme = theme;
        self
    }

    /// Serves the installed apps of `catalog` (R-UI-9): `ui.open` by app id opens a Surface of
    /// an enabled, verified app from the catalog's bytes, `client.inventory` lists the enabled
    /// apps, and about once a second the host checks
    /// [`AppCatalog::change_marker`] four times a second: when the catalog changed (also through another process,
    /// like `lineup apps`), every session gets its new inventory and the Surfaces of apps
    /// disabled, removed, upgraded or rolled back are closed (`app_disabled`, `app_removed`,
    /// `app_upgraded`). `lineup-store`'s `Store` is such a catalog.
    pub fn app_center(mut self, catalog: Rc<dyn AppCatalog>) -> Self {
        self.app_center = Some(catalog);
        self
    }

    /// Keeps the "always" answers of sessions without a vouched agent in the capability store,
    /// under [`unvouched_identity`](lineup_host_core::unvouched_identity)`(scope, conversation)`,
    /// instead of in memory (R-SES-1): asked at every decision, they can be listed and revoked
    /// from another process (`lineup grants`). `scope` must name this host process and no other
    /// (draw it at random); the embedder deletes its grants when the process ends. Off by
    /// default.
    pub fn unvouched_grants_scope(mut self, scope: impl Into<String>) -> Self {
        self.unvouched_scope = Some(scope.into());
        self
    }

    /// Watches the operator's capability `policy` (R-INV-1, R-INV-4): applied before the first
    /// session is established, and again, by difference, whenever its change marker moves
    /// (looked at four times a second): withdrawn capabilities are unregistered, hidden ones
    /// hidden from their agent, and every affected session gets a new inventory.
    /// `lineup-store`'s `Store` is such a policy (`lineup capabilities`).
    pub fn capability_policy(mut self, policy: Rc<dyn CapabilityPolicy>) -> Self {
        self.capability_policy = Some(policy);
        self
    }

    /// Whether Surfaces get the high-contrast values of the `--lineup-*` custom properties and
    /// `data-lineup-contrast="more"` on their root element (R-UI-11), decided when each one
    /// opens. Change it later with [`Host::set_contrast`].
    pub fn contrast(mut self, contrast: Contrast) -> Self {
        self.contrast = contrast;
        self
    }

    /// Scales the text of every Surface by `factor` (zoom text only, clamped to 0.25 ..= 5.0);
    /// the user's Ctrl± zoom keys stay off (R-UI-11).
    ///
    /// ## Platform-specific
    /// Linux: WebKit's `zoom-text-only` and the view's zoom level.
    pub fn text_zoom(mut self, factor: f64) -> Self {
        self.view_config = self.view_config.with_text_zoom(factor);
        self
    }

    /// The client id written as `sender.id` of every outbound envelope.
    pub fn client_id(mut self, id: PartyId) -> Self {
        self.client_id = id;
        self
    }

    /// Opens a session for this conversation when the host is built (with capabilities on, its
    /// `client.inventory` goes out at the first event). Other conversations still get sessions
    /// of their own when an accepted envelope names them (R-SES-1).
    pub fn conversation_id(mut self, id: ConversationId) -> Self {
        self.conversation_id = Some(id);
        self
    }

    /// Ends a session after `idle` without an accepted envelope, an open Surface or a pending
    /// call; it then ends as [`Host::end_session`] ends it. By default sessions end only through
    /// the API or at shutdown.
    pub fn end_idle_sessions_after(mut self, idle: Duration) -> Self {
        self.session_idle = Some(idle);
        self
    }

    /// Whether a Surface whose web process died (crashed, killed by the system or a signal) or
    /// was ended by the hang watchdog is reopened in place (R-UI-12): the same bundle, window or
    /// child slot, requested height and last state, under a new generation, with nothing sent
    /// to the agent; at most `Limits::max_reopens_per_window` times per `Limits::reopen_window`
    /// (3 per 60 s), after which it is closed and the agent gets `ui.event` `close` with
    /// `data.reason` `crashed` or `unresponsive`. On by default. Off, such a Surface is closed
    /// at its first loss. A Surface ended at its memory ceiling is never reopened.
    pub fn reopen_lost_surfaces(mut self, reopen: bool) -> Self {
        self.reopen = reopen;
        self
    }

    /// How long a Surface's page may go without a sign of life once it said `ready`, before the
    /// hang watchdog terminates its web process (R-UI-12); 10 s by default, at least 100 ms.
    /// The sign of life is the completion of a no-op script the host evaluates in a script
    /// world of its own, which a page spinning in `while (true) {}` cannot give, or WebKit
    /// reporting the web process unresponsive for as long. A hang is found within the deadline
    /// plus about a tenth of it; the Surface is then reopened or closed as after a crash, with
    /// reason `unresponsive`. Turns the watchdog on if it was off.
    ///
    /// ## Platform-specific
    /// Linux: `webkit_web_view_run_javascript_in_world`, `is-web-process-responsive` and
    /// `webkit_web_view_terminate_web_process`.
    pub fn hang_deadline(mut self, deadline: Duration) -> Self {
        self.watchdog.deadline = deadline.max(MIN_DEADLINE);
        self.watchdog.enabled = true;
        self
    }

    /// How long a new Surface's page (a first open or a reopen) may take to say `ready`
    /// before the hang watchdog terminates its web process (R-UI-12); 20 s by default, at
    /// least 100 ms. A page spinning in its top-level script never says `ready`. Turns the
    /// watchdog on if it was off.
    pub fn first_ready_deadline(mut self, deadline: Duration) -> Self {
        self.watchdog.first_ready = deadline.max(MIN_DEADLINE);
        self.watchdog.enabled = true;
        self
    }

    /// Keeps `views` blank, isolated webviews started for the next Surfaces (#12), so that an
    /// open skips starting a web context and a sandboxed web process; see
    /// [`ViewConfig::with_warm_pool`]. Default 0 (off): each waiting view costs a web process
    /// (about 70–80 MiB PSS). Only Surfaces in windows of their own use the pool.
    pub fn warm_pool(mut self, views: usize) -> Self {
        self.view_config = self.view_config.with_warm_pool(views);
        self
    }

    /// Turns the hang watchdog off: a page that stops answering stays as it is (a crash is
    /// still detected and recovered). A page paused in the web inspector's debugger does not
    /// answer either, so turn it off where devtools are on.
    pub fn without_hang_watchdog(mut self) -> Self {
        self.watchdog.enabled = false;
        self
    }

    /// The bounds on input and on the number of Surfaces and sessions: each session has them,
    /// and `max_surfaces` and `max_sessions` also bound the host in total (R-SES-1).
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Which inline bundles are accepted (R-SEC-7).
    pub fn bundle_policy(mut self, policy: BundlePolicy) -> Self {
        self.bundle_policy = policy;
        self
    }

    /// The webview configuration (limits, probe timeout). Its weakening settings are reached
    /// through [`ViewConfig::dangerous`].
    pub fn view_config(mut self, config: ViewConfig) -> Self {
        self.view_config = config;
        self
    }

    /// The inner size of each Surface's own window, in logical pixels.
    pub fn window_size(mut self, width: u32, height: u32) -> Self {
        self.window_size = (width, height);
        self
    }

    /// The range a page's `LineUpSurface.resize(height)` is clamped to.
    pub fn resize_bounds(mut self, min: u32, max: u32) -> Self {
        self.resize_bounds = (min.min(max), max.max(min));
        self
    }

    /// Puts every Surface as a child view inside `parent`, a window the embedder owns, at the
    /// bounds [`HostDelegate::request_child_bounds`] returns; re-laid out when `parent` resizes.
    pub fn child_views_in(mut self, parent: Rc<Window>) -> Self {
        self.layout = Layout::Children(parent);
        self
    }

    /// Shows `screen`, a trusted host page, over the parent window of
    /// [`HostBuilder::child_views_in`] whenever no Surface there has drawn: from start until the
    /// first Surface's page is ready and painted, and again from just before the last Surface's
    /// view goes (closed, replaced, or lost and being reopened). A kiosk never shows an empty
    /// window. While Surfaces are up, what none of them covers (an empty region) is painted
    /// in the standby screen's background colour. [`HostHandle::set_standby_status`] changes
    /// its status line. Building fails with
    /// [`ShellError::NoContainer`] without child-view placement.
    pub fn standby(mut self, screen: crate::StandbyScreen) -> Self {
        self.standby = Some(screen);
        self
    }

    /// Ignores a close request for the parent window of [`HostBuilder::child_views_in`] (the
    /// window manager's close button or its keys): a kiosk stays up. By default the request
    /// closes every Surface there as the user's close (R-UI-5) and ends [`Host::run`].
    pub fn ignore_parent_close(mut self) -> Self {
        self.ignore_parent_close = true;
        self
    }

    /// Called with every message for the agent.
    pub fn on_outbound(mut self, f: impl FnMut(&Message) + 'static) -> Self {
        self.outbound = Some(Box::new(f));
        self
    }

    /// Sends every message for the agent into a tokio channel, for embedders whose agent
    /// connection runs on a tokio runtime. The channel is unbounded because the event loop must
    /// never block; the receiver should keep up.
    #[cfg(feature = "tokio")]
    pub fn outbound_channel(self) -> (Self, tokio::sync::mpsc::UnboundedReceiver<Message>) {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let builder = self.on_outbound(move |message| {
            let _ = tx.send(message.clone());
        });
        (builder, rx)
    }

    /// Receives the host's notifications.
    pub fn delegate(mut self, delegate: impl HostDelegate + 'static) -> Self {
        self.delegate = Box::new(delegate);
        self
    }

    /// The settings that weaken isolation.
    pub fn dangerous(self) -> DangerousHostBuilder {
        DangerousHostBuilder(self)
    }

    /// Creates the host on `event_loop` and starts the isolation probe (R-SEC-8). A Surface
    /// opened before the probe passes gets its view at once, side by side with the probe's, but
    /// its document is held until the probe passed; if the probe fails, that Surface is closed
    /// unserved and its open fails (`surface_failed` upstream), and later opens are refused.
    pub fn build(self, event_loop: &EventLoop<HostEvent>) -> Result<Host, ShellError> {
        let mut prefix = [0u8; 6];
        getrandom::fill(&mut prefix)
            .map_err(|e| ShellError::Platform(format!("no random source: {e}")))?;
        let prefix: String = prefix.iter().map(|b| format!("{b:02x}")).collect();
        let mut template = SessionConfig::new(self.client_id, format!("lineup-{prefix}"));
        template.limits = self.limits.clone();
        template.bundle_policy = self.bundle_policy.clone();
        template.agent_id = self.agent_id.clone();
        template.app_catalog = self.app_center.clone().map(CatalogRef);
        // R-UI-11: one language for the engine and the document's `<html lang>`.
        let language = self
            .language
            .clone()
            .unwrap_or_else(|| self.view_config.effective_language());
        // One limit for both layers: the session table refuses first, with a protocol answer.
        let view_config = self
            .view_config
            .with_max_views(self.limits.max_surfaces)
            .with_memory_limit_mib(self.limits.surface_memory_limit_mib)
            .with_language(language.clone());
        crate::platform::apply_theme(self.theme);
        let standby = match (&self.standby, &self.layout) {
            (None, _) => None,
            (Some(screen), Layout::Children(parent)) => {
                // What no Surface covers (an empty region of a kiosk) shows the standby
                // screen's background, never the toolkit's light grey window.
                let [r, g, b] = screen.background().components();
                parent.set_background_color(Some((r, g, b, 255)));
                Some(HostStandby::new(crate::platform::PlatformStandby::new(
                    parent, screen,
                )?))
            }
            (Some(_), Layout::Windows) => return Err(ShellError::NoContainer),
        };
        let shell = Shell::start(event_loop, view_config)?;
        let proxy = event_loop.create_proxy();
        let usage = |e: lineup_host_core::UsageError| ShellError::Platform(e.to_string());
        let start = Instant::now();
        // R-INV-1: every session gets its inventory, capabilities on or off; off is the
        // kernel with nothing registered, so every `app.call` is answered `unsupported`.
        let config = self.capabilities.unwrap_or_default();
        let (driver, store, started) = {
            let (driver, store, started) = start_capabilities(config, event_loop, proxy.clone())?;
            (Some(driver), Some(store), Some(started))
        };
        let factory = HostSessions {
            start,
            store,
            unvouched_scope: self.unvouched_scope.clone(),
        };
        let mut sessions = Sessions::new(template, Box::new(factory)).map_err(usage)?;
        let mut pending = VecDeque::new();
        if let Some((capabilities, unfinished)) = started {
            if !unfinished.is_empty() {
                // R-CAP-5: finished once at start; a kernel of no session announces nothing,
                // so its epoch is never used.
                let mut setup = CapabilitySetup::new(
                    lineup_host_core::RevisionEpoch(0),
                    Box::new(SystemWallClock),
                );
                setup.unfinished = unfinished;
                pending.push_back(sessions.recover(setup).map_err(usage)?);
            }
            for capability in capabilities {
                pending.extend(sessions.register_capability(capability).map_err(usage)?);
            }
        }
        // The operator's policy holds before the first session is established (R-INV-1).
        let policy = match self.capability_policy {
            Some(policy) => {
                let (watch, effects) = policy::PolicyWatch::start(policy, &mut sessions);
                pending.extend(effects);
                Some(watch)
            }
            None => None,
        };
        if let Some(conversation) = self.conversation_id {
            pending.push_back(sessions.open_session(conversation, None).map_err(usage)?);
        }
        Ok(Host {
            sessions,
            shell,
            driver,
            pending,
            session_idle: self.session_idle,
            proxy,
            inbound: Arc::new(AtomicUsize::new(0)),
            document: self.document.with_language(language),
            contrast: self.contrast,
            policy,
            apps: self.app_center.map(|catalog| AppsWatch {
                seen: catalog.change_marker(),
                catalog,
                next: Instant::now() + APPS_POLL,
            }),
            window_size: self.window_size,
            resize_bounds: self.resize_bounds,
            layout: self.layout,
            outbound: self.outbound,
            delegate: self.delegate,
            views: BTreeMap::new(),
            held: Vec::new(),
            probe_reported: false,
            exit: false,
            exit_when_empty: false,
            reopen: self.reopen,
            watchdog: Watchdog::new(self.watchdog),
            standby,
            ignore_parent_close: self.ignore_parent_close,
        })
    }
}

#[allow(clippy::panic)]
fn unreachable_party() -> PartyId {
    panic!("\"lineup-host\" is a valid party id")
}

/// The settings of a [`HostBuilder`] that weaken isolation, behind [`HostBuilder::dangerous`].
#[derive(Debug)]
pub struct DangerousHostBuilder(HostBuilder);

impl DangerousHostBuilder {
    /// Enables the web inspector in every Surface (preview mode, R-SEC-2).
    pub fn with_devtools(mut self) -> HostBuilder {
        self.0.view_config = self.0.view_config.dangerous().with_devtools();
        self.0
    }

    /// Runs web processes outside WebKit's bubblewrap sandbox (R-SEC-8).
    pub fn without_web_sandbox(mut self) -> HostBuilder {
        self.0.view_config = self.0.view_config.dangerous().without_web_sandbox();
        self.0
    }

    /// Lets Surfaces reach the network layer without the proxy that refuses every connection
    /// (R-SEC-3). Only for tests that prove a leak would be seen (a positive control).
    pub fn without_network_proxy(mut self) -> HostBuilder {
        self.0.view_config = self.0.view_config.dangerous().without_network_proxy();
        self.0
    }

    /// Serves Surface documents without a Content-Security-Policy header. Only for tests that
    /// prove a security test would see a leak (a positive control).
    pub fn without_csp(mut self) -> HostBuilder {
        self.0.document = DocumentOptions::default().dangerous().without_csp();
        self.0
    }
}

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
/// use lineup_webview_shell::{event_loop, HostBuilder};
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

    /// Whether the standby screen ([`HostBuilder::standby`]) covers the parent window now;
    /// `None` without one.
    pub fn standby_shown(&self) -> Option<bool> {
        self.standby.as_ref().map(HostStandby::is_shown)
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
        crate::platform::apply_theme(theme);
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
            _ => crate::platform::desktop_high_contrast(),
        };
        self.document.clone().with_high_contrast(high)
    }

    /// Runs the event loop until [`HostHandle::shutdown`] (or, with child views, until the
    /// parent window is closed), then closes every Surface and returns.
    pub fn run(mut self, mut event_loop: EventLoop<HostEvent>) -> Result<(), ShellError> {
        use tao::platform::run_return::EventLoopExtRunReturn;
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
    fn in_session(
        &mut self,
        key: &SurfaceKey,
        f: impl FnOnce(&mut Session) -> Vec<Effect>,
    ) -> SessionEffects {
        SessionEffects {
            session: key.session,
            effects: self
                .sessions
                .get_mut(key.session)
                .map(f)
                .unwrap_or_default(),
        }
    }

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
                let mut effects = Vec::new();
                let Some(session) = self.sessions.get_mut(key.session) else {
                    return; // its session ended; the view is gone or going
                };
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
                    let dropped = backlog.dropped.replace(0);
                    if dropped > 0 {
                        let limit = session.limits().max_pending_bridge_messages;
                        effects = session.handle_bridge_flood(&key, dropped, limit);
                    }
                    let dropped = backlog.diagnostics_dropped.replace(0);
                    if dropped > 0 {
                        effects.extend(session.diagnostics_dropped(&key, dropped));
                    }
                }
                effects.extend(session.handle_bridge(&key, &raw));
                let effects = SessionEffects {
                    session: key.session,
                    effects,
                };
                return self.apply(effects, None, target);
            }
            ViewEvent::UserCloseRequested => {
                let effects = self.in_session(&key, |s| s.user_closed(&key));
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
                let effects = self.in_session(&key, |s| s.surface_gone(&key, GoneReason::Memory));
                return self.apply(effects, None, target);
            }
            ViewEvent::IpcTooLarge { len } => {
                let effects = self.in_session(&key, |s| s.handle_bridge_oversized(&key, len));
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
                let effects = self.in_session(&key, |s| {
                    if by_embedder {
                        s.embedder_reloaded(&key)
                    } else {
                        s.document_committed(&key)
                    }
                });
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
        window_id: tao::window::WindowId,
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
                            let effects = self.in_session(&key, |s| s.user_closed(&key));
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
                    let effects = self.in_session(&key, |s| s.open_failed(&key, &why));
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
        for effect in effects {
            match effect {
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
                _ => {}
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
                        self.in_session(&key, |s| s.surface_gone(&key, reason))
                    }
                    None => self.in_session(&key, |s| s.open_failed(&key, &why)),
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
                title: crate::title::surface_window_title(
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
                    _ => {}
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

/// What starting capabilities hands back beside the driver: the registered capabilities, for
/// the session table to fan out, and the store's unfinished call records (R-CAP-5).
type Started = (Vec<Capability>, Vec<lineup_host_core::CallRecord>);

/// Starts capabilities from `config`: the driver that carries out every session's capability
/// effects, the store it shares with the session factory, the registrations and the store's
/// unfinished records.
fn start_capabilities(
    config: CapabilityConfig,
    target: &EventLoopWindowTarget<HostEvent>,
    proxy: EventLoopProxy<HostEvent>,
) -> Result<(CapabilityDriver, SharedStore, Started), ShellError> {
    let CapabilityConfig {
        registrations,
        mut store,
        prompt,
        hook,
        builtins,
    } = config;
    let store_error = |e: String| ShellError::Platform(format!("capability store: {e}"));
    let unfinished = store.unfinished().map_err(store_error)?;
    let mut capabilities = Vec::new();
    let mut handlers = std::collections::HashMap::new();
    for (capability, handler) in registrations {
        handlers.insert(capability.name().clone(), handler);
        capabilities.push(capability);
    }
    let builtins = match crate::builtins::Builtins::start(builtins)? {
        Some((builtins, builtin_capabilities)) => {
            capabilities.extend(builtin_capabilities);
            Some(builtins)
        }
        None => None,
    };
    let prompt: Box<dyn ConsentPrompt> = match prompt {
        PromptChoice::Custom(prompt) => prompt,
        PromptChoice::BuiltIn => Box::new(PromptQueue::new(target, PromptOptions::default())?),
    };
    // The proxy is `Send` but not `Sync`; answers come from handler and prompt threads.
    let proxy = std::sync::Mutex::new(proxy);
    let sink: AnswerSink = Arc::new(move |session, ticket, answer| {
        if let Ok(proxy) = proxy.lock() {
            let _ = proxy.send_event(HostEvent(Inner::CapabilityAnswer {
                session,
                ticket,
                answer,
            }));
        }
    });
    let store: SharedStore = Rc::new(std::cell::RefCell::new(store));
    let driver = CapabilityDriver::new(
        Rc::clone(&store),
        handlers,
        Some(prompt),
        hook,
        sink,
        builtins,
    );
    Ok((driver, store, (capabilities, unfinished)))
}

/// Starts the host's sessions: one monotonic clock origin for all, and, with capabilities on,
/// a revision epoch of the store for each (R-INV-2).
/// How often the host looks at the app center's change marker: a revoked app's Surfaces must
/// close within 2 s of the change (R-INV-4, R-UI-12), and a look is one read of one row.
const APPS_POLL: Duration = Duration::from_millis(250);

/// The app center and the change marker last seen.
struct AppsWatch {
    catalog: Rc<dyn AppCatalog>,
    seen: Option<u64>,
    next: Instant,
}

struct HostSessions {
    start: Instant,
    store: Option<SharedStore>,
    /// [`HostBuilder::unvouched_grants_scope`].
    unvouched_scope: Option<String>,
}

impl SessionFactory for HostSessions {
    fn clock(&mut self) -> Box<dyn Clock> {
        Box::new(MonotonicClock(self.start))
    }

    fn capabilities(
        &mut self,
        agent: Option<&AgentIdentity>,
    ) -> Result<Option<CapabilitySetup>, String> {
        let Some(store) = &self.store else {
            return Ok(None);
        };
        let epoch = store
            .borrow_mut()
            .next_epoch()
            .map_err(|e| format!("capability store: {e}"))?;
        let mut setup = CapabilitySetup::new(epoch, Box::new(SystemWallClock));
        if let Some(agent) = agent {
            // R-INV-4: what this identity was offered before, also by an earlier process.
            let offered = store.borrow_mut().offered(agent);
            match offered {
                Ok(names) => setup.offered_before = names.into_iter().collect(),
                Err(e) => tracing::error!("capability store: offered capabilities: {e}"),
            }
        }
        setup.agent = agent.cloned();
        setup.unvouched_scope = self.unvouched_scope.clone();
        Ok(Some(setup))
    }
}
