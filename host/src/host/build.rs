//! The steps of [`HostBuilder::build`](super::HostBuilder::build), from the builder's plain
//! [`HostConfig`]: the session template and the views' configuration, the standby screen, the
//! shell, the capability driver and the session table, then the [`Engine`] and the [`Host`]
//! that drives it.

use std::collections::VecDeque;
use std::rc::Rc;
use std::time::Instant;

use lineup_host_core::mcp::McpLimits;
use lineup_host_core::{
    CapabilityPolicy, CapabilitySetup, CatalogRef, ConversationId, LanguageTag, SessionConfig,
    SessionEffects, Sessions,
};
use lineup_webview_shell::tao::event_loop::EventLoop;
use lineup_webview_shell::{ShellError, SystemWallClock, ViewConfig};

use super::activity::ActivityNotices;
use super::components::ComponentViews;
use super::engine::Engine;
use super::factory::{start_capabilities, HostSessions, Started};
use super::handle::{HostEvent, Inner, Intake};
use super::kernel::Kernel;
use super::mcp_facts::McpFacts;
use super::options::{EmbedderParts, HostConfig, Layout, SessionOptions, ViewOptions};
use super::policy::{PolicyWatch, Watches};
use super::proxy::HostProxy;
use super::screen::Screen;
use super::standby::HostStandby;
use super::upstream::Upstream;
use super::views::{Views, ViewsConfig};
use crate::port::ShellPort;
use crate::watchdog::Watchdog;
use crate::{Host, HostError, HostUserEvent};

/// Creates the host `config` describes on `event_loop` and starts the isolation probe
/// (R-SEC-8): see [`HostBuilder::build`](super::HostBuilder::build).
pub(super) fn build<T: HostUserEvent>(
    config: HostConfig,
    event_loop: &EventLoop<T>,
) -> Result<Host, HostError> {
    let HostConfig {
        sessions: options,
        views,
        parts,
        capabilities,
    } = config;
    let mut template = session_template(&options, &views, &parts)?;
    // R-UI-11: one language for the engine and the document's `<html lang>`.
    let language = views
        .language
        .clone()
        .unwrap_or_else(|| views.view_config.effective_language());
    let view_config = view_config(&options, &views, language.clone());
    lineup_webview_shell::apply_theme(views.theme);
    let standby = standby(&views)?;
    let proxy = HostProxy::new(event_loop.create_proxy());
    if let Layout::Children(parent) = &views.layout {
        // The app's own layout may move the container's edges with the window's size
        // unchanged: the views are laid out again then too (#49 item 3).
        let resized = proxy.clone();
        lineup_webview_shell::on_child_area_resized(parent, move || {
            let _ = resized.send_event(HostEvent(Inner::ChildAreaResized));
        })?;
    }
    let shell = super::shell_start::start_shell(
        parts.engine,
        matches!(views.layout, Layout::Children(_)),
        event_loop,
        view_config,
        proxy.clone(),
    )?;
    let start = Instant::now();
    // R-INV-1: every session gets its inventory, capabilities on or off; off is the
    // kernel with nothing registered, so every `app.call` is answered `unsupported`.
    let capabilities = capabilities.unwrap_or_default();
    // The components' allowed links open where the built-ins act (R-STD-11).
    let links =
        super::component_links::Links::new(capabilities.builtins.desktop.clone(), proxy.clone());
    let parent = match &views.layout {
        Layout::Children(parent) => Some(parent.as_ref()),
        Layout::Windows => None,
    };
    let (driver, store, started) = start_capabilities(
        (capabilities, parts.component_store),
        event_loop,
        proxy.clone(),
        parent,
        language.clone(),
    )?;
    template.store = store.clone();
    let factory = HostSessions {
        start,
        store: Some(store),
        unvouched_scope: options.unvouched_scope.clone(),
    };
    let sessions = Sessions::new(template, Box::new(factory)).map_err(ShellError::Usage)?;
    let (sessions, pending, policy) = start_sessions(
        sessions,
        started,
        parts.capability_policy,
        options.conversation_id,
    )?;
    let parent = match views.layout {
        Layout::Children(parent) => Some(parent),
        Layout::Windows => None,
    };
    let view_table = Views::new(
        Box::new(ShellPort::new(shell, parent)),
        ViewsConfig {
            window_size: views.window_size,
            resize_bounds: views.resize_bounds,
            document: views.document.with_language(language.clone()),
            contrast: views.contrast,
            watchdog: Watchdog::new(views.watchdog),
            standby,
        },
    );
    let notices = views
        .activity_notices
        .then(|| ActivityNotices::new(language.clone()));
    let components = ComponentViews::new(views.components, parts.component_renderer, links);
    let sampling = options.mcp_apps.as_ref().is_some_and(|mcp| mcp.sampling);
    let mcp_facts = McpFacts::new(views.theme, sampling);
    let engine = Engine::new(
        Kernel::new(sessions, options.reopen),
        Screen::new(view_table, components, proxy, mcp_facts),
        Some(driver),
        Upstream::new(parts.outbound, parts.delegate, notices),
    );
    let watches = Watches::new(parts.app_center, policy);
    let intake = Intake::new(pending);
    let ignore_parent_close = views.ignore_parent_close;
    Ok(Host::new(
        engine,
        intake,
        options.session_idle,
        watches,
        ignore_parent_close,
    ))
}

/// What every session starts from: the builder's session options, the app center, and the
/// standard components the renderers draw; outbound envelope ids under a prefix drawn at
/// random for this host.
fn session_template(
    options: &SessionOptions,
    views: &ViewOptions,
    parts: &EmbedderParts,
) -> Result<SessionConfig, HostError> {
    let mut prefix = [0u8; 6];
    getrandom::fill(&mut prefix)
        .map_err(|e| ShellError::Platform(format!("no random source: {e}")))?;
    let prefix: String = prefix.iter().map(|b| format!("{b:02x}")).collect();
    let mut template = SessionConfig::new(options.client_id.clone(), format!("lineup-{prefix}"));
    template.limits = options.limits.clone();
    template.bundle_policy = options.bundle_policy.clone();
    template.link_policy = options.link_policy;
    template.agent_id = options.agent_id.clone();
    template.app_catalog = parts.app_center.clone().map(CatalogRef);
    template.standard_components = super::components::rendered_set(
        views.components.is_some(),
        parts.component_renderer.as_deref(),
    );
    // Only the platform's webview has an MCP App view's relay (R-MCP-7, R-MCP-13).
    template.mcp_apps = options.mcp_apps.clone().filter(|_| parts.engine.is_none());
    Ok(template)
}

/// The webviews' configuration: the embedder's, bounded by the limits, in `language`.
fn view_config(options: &SessionOptions, views: &ViewOptions, language: LanguageTag) -> ViewConfig {
    let limits = &options.limits;
    // The webviews: the live Surfaces (the engine hibernates or refuses first, with a
    // protocol answer), the warm pool, and one for a wake past the cap.
    let max_views = limits.max_live_surfaces + views.view_config.warm_pool() + 1;
    views
        .view_config
        .clone()
        .with_max_views(max_views)
        .with_memory_limit_mib(limits.surface_memory_limit_mib)
        // R-UI-7: the page's messages are bounded where they arrive, by the same limit.
        .with_max_ipc_bytes(limits.max_bridge_message_bytes)
        // R-MCP-6: so are an MCP App view's.
        .with_max_mcp_message_bytes(
            options
                .mcp_apps
                .as_ref()
                .map_or(McpLimits::default().max_message_bytes, |mcp| {
                    mcp.max_message_bytes
                }),
        )
        .with_language(language)
}

/// The standby screen over the parent window, when the builder has one; it needs child views.
fn standby(views: &ViewOptions) -> Result<Option<HostStandby>, HostError> {
    match (&views.standby, &views.layout) {
        (None, _) => Ok(None),
        (Some(screen), Layout::Children(parent)) => {
            // What no Surface covers (an empty region of a kiosk) shows the standby
            // screen's background, never the toolkit's light grey window.
            let [r, g, b] = screen.background().components();
            parent.set_background_color(Some((r, g, b, 255)));
            let window = lineup_webview_shell::StandbyWindow::new(parent, screen)?;
            Ok(Some(HostStandby::new(window)))
        }
        (Some(_), Layout::Windows) => Err(ShellError::NoContainer.into()),
    }
}

/// The session table's start: the store's unfinished calls finished (written now) and the
/// capabilities registered (`started`), the operator's `policy` applied, and the builder's
/// `conversation` opened; the effects wait for the loop's first turn.
fn start_sessions(
    mut sessions: Sessions,
    started: Started,
    policy: Option<Rc<dyn CapabilityPolicy>>,
    conversation: Option<ConversationId>,
) -> Result<(Sessions, VecDeque<SessionEffects>, Option<PolicyWatch>), HostError> {
    let usage = ShellError::Usage;
    let mut pending = VecDeque::new();
    let (capabilities, unfinished) = started;
    if !unfinished.is_empty() {
        // R-CAP-5: finished once at start; a kernel of no session announces nothing,
        // so its epoch is never used.
        let mut setup = CapabilitySetup::new(
            lineup_host_core::RevisionEpoch(0),
            Box::new(SystemWallClock),
        );
        setup.unfinished = unfinished;
        sessions.recover(setup).map_err(usage)?;
    }
    for capability in capabilities {
        pending.extend(sessions.register_capability(capability).map_err(usage)?);
    }
    // The operator's policy holds before the first session is established (R-INV-1).
    let policy = match policy {
        Some(policy) => {
            let (watch, effects) = PolicyWatch::start(policy, &mut sessions);
            pending.extend(effects);
            Some(watch)
        }
        None => None,
    };
    if let Some(conversation) = conversation {
        pending.push_back(sessions.open_session(conversation, None).map_err(usage)?);
    }
    Ok((sessions, pending, policy))
}
