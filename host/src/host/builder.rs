//! [`HostBuilder`]: the defaults table and every option an embedder sets, kept as one plain
//! [`HostConfig`] that [`HostBuilder::build`] starts the host from (its steps are in
//! `build.rs`); [`DangerousHostBuilder`] for what weakens isolation.

use std::rc::Rc;
use std::time::Duration;

use lineup_host_core::mcp::McpLimits;
use lineup_host_core::{
    AppCatalog, BundlePolicy, Capability, CapabilityPolicy, CapabilityStore, ConversationId,
    HookRequest, LanguageTag, Limits, LinkPolicy, Message, PartyId,
};
use lineup_webview_shell::tao::window::Window;

use crate::capabilities::{CapabilityConfig, CapabilityHandler, PromptChoice};
use crate::delegate::HostDelegate;
use crate::held_prompts::HiddenConversationPrompts;
use crate::watchdog::MIN_DEADLINE;
use lineup_webview_shell::ConsentPrompt;
use lineup_webview_shell::{Contrast, Theme, ViewConfig};

use super::options::{HostConfig, Layout};
use crate::{DangerousHostBuilder, Host, HostError, HostUserEvent};
use lineup_webview_shell::tao::event_loop::EventLoop;
use std::sync::Arc;

/// Configures a [`Host`](crate::Host). Deny by default; the defaults are:
///
/// | setting | default |
/// | --- | --- |
/// | client id (`sender.id` of outbound envelopes) | `lineup-host` |
/// | limits | [`Limits::default`]: envelope 1 MiB, depth 32, bundle 160 KiB, data < 16 KiB, 256 open Surfaces, 16 live ones, 30 opens / 10 s |
/// | sessions (R-SES-1) | one per conversation, established by its first accepted envelope; at most [`Limits::max_sessions`] (64); 256 open Surfaces in each and in total, 16 with a web process in total; ended through [`Host::end_session`](crate::Host::end_session) or at shutdown, never for idleness |
/// | hibernation (#29) | with [`HostBuilder::child_views_in`], past [`Limits::max_live_surfaces`] live Surfaces the least recently shown hidden one without fresh input hibernates ([`Host::is_hibernated`](crate::Host::is_hibernated)) and wakes when shown |
/// | vouched agent | none: any `sender.id`, and "always" lasts one conversation |
/// | bundle policy | [`BundlePolicy::SandboxOnly`]: integrity verified when present (R-SEC-7) |
/// | links in standard components (R-STD-11) | [`LinkPolicy::Confirm`]: a link opens only after a real input event and the host's link confirm, audited; [`HostBuilder::link_policy`] |
/// | placement | a window of its own per Surface, 480 × 360, titled with the sanitised app name |
/// | resize requests | clamped to 40 ..= 2000 logical pixels |
/// | webviews | [`ViewConfig::default`]: devtools off, web-process sandbox on, network through a refusing proxy, isolation probe |
/// | memory per Surface | [`Limits::surface_memory_limit_mib`] (512 MiB); past it the Surface is closed, `memory` upstream |
/// | document | [`DocumentOptions::default`](lineup_surface_runtime::DocumentOptions::default): the strict CSP with `sandbox allow-scripts` |
/// | language (R-UI-11) | the environment's ([`language_from_environment`](crate::platform::language_from_environment)), `en` under the POSIX locale |
/// | theme (R-UI-11) | [`Theme::System`]: the desktop's `prefers-color-scheme` |
/// | contrast (R-UI-11) | [`Contrast::System`]: the desktop's, read at each open |
/// | text zoom (R-UI-11) | 1.0; the Ctrl± zoom keys are off |
/// | diagnostics (R-DIAG-1) | to [`HostDelegate::notify_diagnostic`], 100 per Surface per 10 s; never to the agent |
/// | MCP App views (R-MCP-3 … R-MCP-13) | on, within [`McpLimits::default`]: `ui.open` with `mcp_app` shows the view in its own webview under every Surface rule, listed as `mcp_apps` in `client.inventory`; never hibernated; off with an embedder's engine; [`HostBuilder::mcp_apps`] |
/// | App Capabilities (R-SEC-5) | off: every `app.call` answered `unsupported`; [`HostBuilder::enable_capabilities`] |
/// | built-in capabilities | none; each enabled by [`HostBuilder::builtin`], acting on [`SystemDesktop`](crate::SystemDesktop) |
/// | recovery (R-UI-12) | a Surface whose web process died or was ended by the hang watchdog is reopened in place with its last state, at most [`Limits::max_reopens_per_window`] (3) times per [`Limits::reopen_window`] (60 s), then closed with `crashed` or `unresponsive` upstream; never after its memory ceiling; [`HostBuilder::reopen_lost_surfaces`] |
/// | activity notices (original §5.3) | on: a call that runs with nothing of it visible (`display_only`, a remembered grant) shows the host's own notice for [`NOTICE_DURATION`](crate::platform::NOTICE_DURATION), in the standby screen's colours over the Surfaces when there is one, else in a small window of its own titled [`NOTICE_TITLE`](crate::platform::NOTICE_TITLE); every call that runs reaches [`HostDelegate::notify_capability_ran`]; [`HostBuilder::activity_notices`] |
/// | hang watchdog (R-UI-12) | on: a page without a sign of life for 10 s ([`HostBuilder::hang_deadline`]), or without its first `ready` for 20 s ([`HostBuilder::first_ready_deadline`]), has its web process terminated; [`HostBuilder::without_hang_watchdog`] |
///
/// Everything that weakens isolation is behind [`HostBuilder::dangerous`].
pub struct HostBuilder {
    /// Every setting, as one plain value that [`HostBuilder::build`] starts the host from.
    pub(super) config: HostConfig,
}

impl Default for HostBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for HostBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostBuilder")
            .field("client_id", &self.config.sessions.client_id)
            .field("limits", &self.config.sessions.limits)
            .field("bundle_policy", &self.config.sessions.bundle_policy)
            .field("link_policy", &self.config.sessions.link_policy)
            .field("view_config", &self.config.views.view_config)
            .finish_non_exhaustive()
    }
}

impl HostBuilder {
    /// The defaults listed above.
    pub fn new() -> Self {
        Self {
            config: HostConfig::default(),
        }
    }

    /// Turns App Capabilities on (R-SEC-5, R-INV-1): each session gets `client.inventory` and
    /// `app.list` first, and `app.call`s go through the pipeline (known and visible, not expired,
    /// arguments valid, consent by risk, run once, one `app.result`). Registering a capability
    /// turns them on too. Without this, every well-formed `app.call` is answered `unsupported`.
    pub fn enable_capabilities(mut self) -> Self {
        self.config
            .capabilities
            .get_or_insert_with(CapabilityConfig::default);
        self
    }

    /// Registers a capability and its handler, which runs on a thread of its own (never the GUI
    /// thread). A name registered twice makes [`HostBuilder::build`] fail.
    pub fn capability(mut self, capability: Capability, handler: impl CapabilityHandler) -> Self {
        self.config
            .capabilities
            .get_or_insert_with(CapabilityConfig::default)
            .registrations
            .push((capability, Arc::new(handler)));
        self
    }

    /// Where call records, remembered grants, the audit and revision epochs are kept (R-CAP-5,
    /// R-CAP-6, R-INV-2). The default, a [`MemoryStore`](lineup_host_core::MemoryStore), keeps
    /// nothing across restarts; the `lineup-store` crate's SQLite store does.
    pub fn capability_store(mut self, store: impl CapabilityStore + 'static) -> Self {
        self.config
            .capabilities
            .get_or_insert_with(CapabilityConfig::default)
            .store = lineup_host_core::StorePort::new(store);
        self
    }

    /// The embedder's own renderer of standard components (R-STD-16): it draws, in the app's
    /// own UI, the components it [supports](super::renderer::ComponentRenderer::supports);
    /// `client.inventory` lists them with the built-in renderer's. Its answers are checked
    /// again, one per round, and go upstream with `via: "embedder"`. What it declines the
    /// built-in renderer draws when [`HostBuilder::builtin_components`] is on; otherwise that
    /// component closes `renderer_failed`.
    pub fn component_renderer(
        mut self,
        renderer: impl super::renderer::ComponentRenderer + 'static,
    ) -> Self {
        self.config.parts.component_renderer = Some(Box::new(renderer));
        self
    }

    /// Where the standard components of vouched sessions are kept for a restart (R-STD-15):
    /// each open instance with its state, round, last answer and the user's draft (never a
    /// `secret` one), forgotten at close; when the same vouched identity establishes the
    /// conversation again, they are shown again and the agent gets `restored` for each. The
    /// default keeps nothing; the `lineup-store` crate's SQLite store keeps them.
    pub fn component_store(
        mut self,
        store: impl lineup_host_core::InstanceStore + 'static,
    ) -> Self {
        self.config.parts.component_store = Some(Box::new(store));
        self
    }

    /// The agent the embedder or the transport vouches for (R-SES-1) in every session an
    /// envelope establishes, and in those [`Host::open_session`](crate::Host::open_session) opens without one of its own:
    /// an inbound envelope whose `sender.id` is another is refused `wrong_sender`, and
    /// remembered grants belong to this identity. Without one, any `sender.id` is taken and
    /// "always" lasts the conversation.
    pub fn vouched_agent(mut self, agent: PartyId) -> Self {
        self.config.sessions.agent_id = Some(agent);
        self
    }

    /// Shows consent requests with the embedder's UI instead of the built-in trusted prompt
    /// window.
    pub fn consent_prompt(mut self, prompt: impl ConsentPrompt + 'static) -> Self {
        self.config
            .capabilities
            .get_or_insert_with(CapabilityConfig::default)
            .prompt = PromptChoice::Custom(Box::new(prompt));
        self
    }

    /// What becomes of a consent request whose conversation the app has hidden
    /// ([`Host::set_conversation_visible`](crate::Host::set_conversation_visible)): shown at
    /// once naming the conversation (the default), or held until that conversation is shown
    /// ([`HiddenConversationPrompts::WaitUntilShown`]; [`Host::waiting_prompts`](crate::Host::waiting_prompts)
    /// counts them, for a badge in the app's list of conversations).
    pub fn hidden_conversation_prompts(mut self, policy: HiddenConversationPrompts) -> Self {
        self.config
            .capabilities
            .get_or_insert_with(CapabilityConfig::default)
            .hidden_prompts = policy;
        self
    }

    /// The extra check `system_permission` and `restricted` calls need after the user allowed
    /// them (R-CAP-3); without one they are denied.
    pub fn permission_hook(mut self, hook: impl FnMut(&HookRequest) -> bool + 'static) -> Self {
        self.config
            .capabilities
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
        self.config
            .capabilities
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

    /// Where the built-in capabilities act, and where a standard component's link opens once
    /// the user allowed it in the link confirm (R-STD-11): the real desktop by default; a
    /// [`RecordingDesktop`](crate::RecordingDesktop) in tests.
    pub fn desktop(mut self, desktop: impl crate::Desktop) -> Self {
        self.config
            .capabilities
            .get_or_insert_with(CapabilityConfig::default)
            .builtins
            .desktop = Some(Arc::new(desktop));
        self
    }

    /// The language Surfaces see (R-UI-11): `navigator.language`, `navigator.languages`,
    /// `Intl`'s default locale and `<html lang>`. By default the environment's
    /// ([`language_from_environment`](crate::platform::language_from_environment)).
    ///
    /// ## Platform-specific
    /// Linux: each Surface's web context's preferred languages, set before its first load.
    pub fn language(mut self, language: LanguageTag) -> Self {
        self.config.views.language = Some(language);
        self
    }

    /// The colour scheme Surfaces see as `prefers-color-scheme`, which also switches the
    /// `--lineup-color-*` custom properties (R-UI-11). Change it later with
    /// [`Host::set_theme`](crate::Host::set_theme).
    ///
    /// ## Platform-specific
    /// Linux: GTK's process-wide dark-theme preference; see [`Theme`] for what that means for
    /// the embedder's own windows.
    pub fn theme(mut self, theme: Theme) -> Self {
        self.config.views.theme = theme;
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
        self.config.parts.app_center = Some(catalog);
        self
    }

    /// Keeps the "always" answers of sessions without a vouched agent in the capability store,
    /// under [`unvouched_identity`](lineup_host_core::unvouched_identity)`(scope, conversation)`,
    /// instead of in memory (R-SES-1): asked at every decision, they can be listed and revoked
    /// from another process (`lineup grants`). `scope` must name this host process and no other
    /// (draw it at random); the embedder deletes its grants when the process ends. Off by
    /// default.
    pub fn unvouched_grants_scope(mut self, scope: impl Into<String>) -> Self {
        self.config.sessions.unvouched_scope = Some(scope.into());
        self
    }

    /// Watches the operator's capability `policy` (R-INV-1, R-INV-4): applied before the first
    /// session is established, and again, by difference, whenever its change marker moves
    /// (looked at four times a second): withdrawn capabilities are unregistered, hidden ones
    /// hidden from their agent, and every affected session gets a new inventory.
    /// `lineup-store`'s `Store` is such a policy (`lineup capabilities`).
    pub fn capability_policy(mut self, policy: Rc<dyn CapabilityPolicy>) -> Self {
        self.config.parts.capability_policy = Some(policy);
        self
    }

    /// Whether Surfaces get the high-contrast values of the `--lineup-*` custom properties and
    /// `data-lineup-contrast="more"` on their root element (R-UI-11), decided when each one
    /// opens. Change it later with [`Host::set_contrast`](crate::Host::set_contrast).
    pub fn contrast(mut self, contrast: Contrast) -> Self {
        self.config.views.contrast = contrast;
        self
    }

    /// Scales the text of every Surface by `factor` (zoom text only, clamped to 0.25 ..= 5.0);
    /// the user's Ctrl± zoom keys stay off (R-UI-11).
    ///
    /// ## Platform-specific
    /// Linux: WebKit's `zoom-text-only` and the view's zoom level.
    pub fn text_zoom(mut self, factor: f64) -> Self {
        self.config.views.view_config = self.config.views.view_config.with_text_zoom(factor);
        self
    }

    /// The client id written as `sender.id` of every outbound envelope.
    pub fn client_id(mut self, id: PartyId) -> Self {
        self.config.sessions.client_id = id;
        self
    }

    /// Opens a session for this conversation when the host is built (with capabilities on, its
    /// `client.inventory` goes out at the first event). Other conversations still get sessions
    /// of their own when an accepted envelope names them (R-SES-1).
    pub fn conversation_id(mut self, id: ConversationId) -> Self {
        self.config.sessions.conversation_id = Some(id);
        self
    }

    /// Ends a session after `idle` without an accepted envelope, an open Surface or a pending
    /// call; it then ends as [`Host::end_session`](crate::Host::end_session) ends it. By default sessions end only through
    /// the API or at shutdown.
    pub fn end_idle_sessions_after(mut self, idle: Duration) -> Self {
        self.config.sessions.session_idle = Some(idle);
        self
    }

    /// Whether the host renders standard components itself (R-STD-1, R-STD-14): on (the
    /// default, with [`ComponentOptions::default`](lineup_webview_shell::ComponentOptions)),
    /// every session offers the whole v1 catalog (R-STD-14) in `client.inventory` and shows
    /// each in a trusted window of the host's own, whose input gate waits `options`' guard
    /// delay after the window was mapped or focused and needs a real input event for each
    /// answer (R-STD-8); answers go upstream as `submit`/`cancel` with `via: "host"`. `None`
    /// offers none (but what an embedder's [`ComponentRenderer`](crate::ComponentRenderer)
    /// draws), and a component shown anyway closes with `renderer_failed`.
    ///
    /// ## Platform-specific
    /// Linux only; elsewhere a shown component closes with `renderer_failed`.
    pub fn builtin_components(
        mut self,
        options: Option<lineup_webview_shell::ComponentOptions>,
    ) -> Self {
        self.config.views.components = options;
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
        self.config.sessions.reopen = reopen;
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
        self.config.views.watchdog.deadline = deadline.max(MIN_DEADLINE);
        self.config.views.watchdog.enabled = true;
        self
    }

    /// How long a new Surface's page (a first open or a reopen) may take to say `ready`
    /// before the hang watchdog terminates its web process (R-UI-12); 20 s by default, at
    /// least 100 ms. A page spinning in its top-level script never says `ready`. Turns the
    /// watchdog on if it was off.
    pub fn first_ready_deadline(mut self, deadline: Duration) -> Self {
        self.config.views.watchdog.first_ready = deadline.max(MIN_DEADLINE);
        self.config.views.watchdog.enabled = true;
        self
    }

    /// Keeps `views` blank, isolated webviews started for the next Surfaces (#12; hidden child
    /// views with [`HostBuilder::child_views_in`]; [`ViewConfig::with_warm_pool`]). Default 0
    /// (off): each waiting view costs a web process (about 70–80 MiB PSS).
    pub fn warm_pool(mut self, views: usize) -> Self {
        self.config.views.view_config = self.config.views.view_config.with_warm_pool(views);
        self
    }

    /// Turns the hang watchdog off: a page that stops answering stays as it is (a crash is
    /// still detected and recovered). A page paused in the web inspector's debugger does not
    /// answer either, so turn it off where devtools are on.
    pub fn without_hang_watchdog(mut self) -> Self {
        self.config.views.watchdog.enabled = false;
        self
    }

    /// The bounds on input and on the number of Surfaces and sessions: each session has them,
    /// and `max_surfaces` and `max_sessions` also bound the host in total (R-SES-1).
    pub fn limits(mut self, limits: Limits) -> Self {
        self.config.sessions.limits = limits;
        self
    }

    /// Whether MCP App views are shown (R-MCP-3 … R-MCP-13), and each view's traffic within
    /// which limits: `Some(limits)` (the default: [`McpLimits::default`]) shows them and lists
    /// `mcp_apps` in `client.inventory`; `None` turns them off, and every `ui.open` with
    /// `mcp_app` and every `mcp.*` envelope is then answered `unsupported` (R-MCP-13). With an
    /// embedder's engine ([`DangerousHostBuilder`]'s) they are off whatever this says: only the
    /// platform's webview has their relay. Shown views are laid out, hidden, shown and closed
    /// as Surfaces are, but never hibernated (R-MCP-12's teardown on hibernation is to come).
    ///
    /// ```no_run
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use lineup_host::HostBuilder;
    /// let event_loop = lineup_host::event_loop()?;
    /// let host = HostBuilder::new().mcp_apps(None).build(&event_loop)?;
    /// # let _ = host; Ok(()) }
    /// ```
    pub fn mcp_apps(mut self, limits: Option<McpLimits>) -> Self {
        self.config.sessions.mcp_apps = limits;
        self
    }

    /// Whether the standard components' links are live (R-STD-11): [`LinkPolicy::Confirm`]
    /// (the default: opened on [`HostBuilder::desktop`] after a real input event and the link
    /// confirm, audited) or [`LinkPolicy::Off`] (inert text, as a kiosk wants).
    pub fn link_policy(mut self, policy: LinkPolicy) -> Self {
        self.config.sessions.link_policy = policy;
        self
    }

    /// Which inline bundles are accepted (R-SEC-7).
    pub fn bundle_policy(mut self, policy: BundlePolicy) -> Self {
        self.config.sessions.bundle_policy = policy;
        self
    }

    /// The webview configuration (limits, probe timeout). Its weakening settings are reached
    /// through [`ViewConfig::dangerous`].
    pub fn view_config(mut self, config: ViewConfig) -> Self {
        self.config.views.view_config = config;
        self
    }

    /// The inner size of each Surface's own window, in logical pixels.
    pub fn window_size(mut self, width: u32, height: u32) -> Self {
        self.config.views.window_size = (width, height);
        self
    }

    /// The range a page's `LineUpSurface.resize(height)` is clamped to.
    pub fn resize_bounds(mut self, min: u32, max: u32) -> Self {
        self.config.views.resize_bounds = (min.min(max), max.max(min));
        self
    }

    /// Puts every Surface as a child view inside `parent`, a window the embedder owns, where
    /// [`HostDelegate::request_child_placement`] says (by default equal columns from
    /// [`HostDelegate::request_child_bounds`], each with the height its page asked for); laid
    /// out again when `parent` resizes. The views live in a `gtk::Fixed` the host packs into
    /// tao's `default_vbox` of `parent` (under a `gtk::Overlay` once there are standard
    /// components or a standby screen), which expands to the space the vbox's other children
    /// leave: an app's own widgets packed into that vbox (not expanding) keep their natural
    /// size beside the views. With the built-in renderer on, standard components join the
    /// Surfaces there, over them ([`HostDelegate::request_component_placement`], R-STD-13).
    pub fn child_views_in(mut self, parent: Rc<Window>) -> Self {
        self.config.views.layout = Layout::Children(parent);
        self
    }

    /// Shows `screen`, a trusted host page, over the parent window of
    /// [`HostBuilder::child_views_in`] whenever no Surface there has drawn: from start until the
    /// first Surface's page is ready and painted, and again from just before the last Surface's
    /// view goes (closed, replaced, or lost and being reopened). A kiosk never shows an empty
    /// window. While Surfaces are up, what none of them covers (an empty region) is painted
    /// in the standby screen's background colour. [`HostHandle::set_standby_status`](crate::HostHandle::set_standby_status) changes
    /// its status line. Building fails with
    /// [`HostError::Platform`](crate::HostError::Platform) (`ShellError::NoContainer`) without
    /// child-view placement.
    pub fn standby(mut self, screen: crate::StandbyScreen) -> Self {
        self.config.views.standby = Some(screen);
        self
    }

    /// Ignores a close request for the parent window of [`HostBuilder::child_views_in`] (the
    /// window manager's close button or its keys): a kiosk stays up. By default the request
    /// closes every Surface there as the user's close (R-UI-5) and ends [`Host::run`](crate::Host::run).
    pub fn ignore_parent_close(mut self) -> Self {
        self.config.views.ignore_parent_close = true;
        self
    }

    /// Whether the host shows its own activity notice when a call runs with nothing of it
    /// visible (`display_only`, a remembered grant; original §5.3). On by default. Turn it off
    /// only where the embedder shows the notice itself, from
    /// [`HostDelegate::notify_capability_ran`]: the user must see what runs.
    pub fn activity_notices(mut self, on: bool) -> Self {
        self.config.views.activity_notices = on;
        self
    }

    /// Called with every message for the agent, on the event-loop thread: hand it on without
    /// waiting (a tokio embedder sends it into an unbounded channel:
    /// `let (tx, rx) = tokio::sync::mpsc::unbounded_channel(); builder.on_outbound(move |m| { let _ = tx.send(m.clone()); })`).
    /// A later call replaces an earlier one.
    pub fn on_outbound(mut self, f: impl FnMut(&Message) + 'static) -> Self {
        self.config.parts.outbound = Some(Box::new(f));
        self
    }

    /// Receives the host's notifications.
    pub fn delegate(mut self, delegate: impl HostDelegate + 'static) -> Self {
        self.config.parts.delegate = Box::new(delegate);
        self
    }

    /// Creates the host on `event_loop` and starts the isolation probe (R-SEC-8). A Surface
    /// opened before the probe passes gets its view at once, side by side with the probe's, but
    /// its document is held until the probe passed; if the probe fails, that Surface is closed
    /// unserved and its open fails (`surface_failed` upstream), and later opens are refused.
    ///
    /// The loop's user-event type is [`HostEvent`](crate::HostEvent) ([`event_loop`](crate::event_loop) makes one)
    /// or an app's own enum that carries it ([`HostUserEvent`]).
    pub fn build<T: HostUserEvent>(self, event_loop: &EventLoop<T>) -> Result<Host, HostError> {
        super::build::build(self.config, event_loop)
    }

    /// The settings that weaken isolation.
    pub fn dangerous(self) -> DangerousHostBuilder {
        DangerousHostBuilder::new(self)
    }
}
