//! [`HostBuilder::build`]: starts the shell, the capability driver and the session table from
//! what the builder holds, and makes the [`Host`].

use std::collections::VecDeque;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::Instant;

use lineup_host_core::{CapabilitySetup, CatalogRef, SessionConfig, Sessions};
use lineup_webview_shell::tao::event_loop::EventLoop;
use lineup_webview_shell::{ShellError, SystemWallClock};

use super::builder::HostBuilder;
use super::options::Layout;
use crate::host::{
    start_capabilities, ActivityNotices, AppsWatch, Engine, HostEvent, HostProxy, HostSessions,
    Inner, PolicyWatch, Views, ViewsConfig, APPS_POLL,
};
use crate::port::ShellPort;
use crate::watchdog::Watchdog;
use crate::{Host, HostError, HostUserEvent};

impl HostBuilder {
    /// Creates the host on `event_loop` and starts the isolation probe (R-SEC-8). A Surface
    /// opened before the probe passes gets its view at once, side by side with the probe's, but
    /// its document is held until the probe passed; if the probe fails, that Surface is closed
    /// unserved and its open fails (`surface_failed` upstream), and later opens are refused.
    ///
    /// The loop's user-event type is [`HostEvent`] ([`event_loop`](crate::event_loop) makes one)
    /// or an app's own enum that carries it ([`HostUserEvent`]).
    pub fn build<T: HostUserEvent>(self, event_loop: &EventLoop<T>) -> Result<Host, HostError> {
        let mut prefix = [0u8; 6];
        getrandom::fill(&mut prefix)
            .map_err(|e| ShellError::Platform(format!("no random source: {e}")))?;
        let prefix: String = prefix.iter().map(|b| format!("{b:02x}")).collect();
        let mut template = SessionConfig::new(self.sessions.client_id, format!("lineup-{prefix}"));
        template.limits = self.sessions.limits.clone();
        template.bundle_policy = self.sessions.bundle_policy.clone();
        template.link_policy = self.sessions.link_policy;
        template.agent_id = self.sessions.agent_id.clone();
        template.app_catalog = self.parts.app_center.clone().map(CatalogRef);
        template.standard_components = super::components::rendered_set(
            self.views.components.is_some(),
            self.parts.component_renderer.as_deref(),
        );
        // R-UI-11: one language for the engine and the document's `<html lang>`.
        let language = self
            .views
            .language
            .clone()
            .unwrap_or_else(|| self.views.view_config.effective_language());
        // The webviews: the live Surfaces (the engine hibernates or refuses first, with a
        // protocol answer), the warm pool, and one for a wake past the cap.
        let max_views =
            self.sessions.limits.max_live_surfaces + self.views.view_config.warm_pool() + 1;
        let view_config = self
            .views
            .view_config
            .with_max_views(max_views)
            .with_memory_limit_mib(self.sessions.limits.surface_memory_limit_mib)
            // R-UI-7: the page's messages are bounded where they arrive, by the same limit.
            .with_max_ipc_bytes(self.sessions.limits.max_bridge_message_bytes)
            .with_language(language.clone());
        lineup_webview_shell::apply_theme(self.views.theme);
        let standby = match (&self.views.standby, &self.views.layout) {
            (None, _) => None,
            (Some(screen), Layout::Children(parent)) => {
                // What no Surface covers (an empty region of a kiosk) shows the standby
                // screen's background, never the toolkit's light grey window.
                let [r, g, b] = screen.background().components();
                parent.set_background_color(Some((r, g, b, 255)));
                Some(super::standby::HostStandby::new(
                    lineup_webview_shell::StandbyWindow::new(parent, screen)?,
                ))
            }
            (Some(_), Layout::Windows) => return Err(ShellError::NoContainer.into()),
        };
        let proxy = HostProxy::new(event_loop.create_proxy());
        if let Layout::Children(parent) = &self.views.layout {
            // The app's own layout may move the container's edges with the window's size
            // unchanged: the views are laid out again then too (#49 item 3).
            let resized = proxy.clone();
            lineup_webview_shell::on_child_area_resized(parent, move || {
                let _ = resized.send_event(HostEvent(Inner::ChildAreaResized));
            })?;
        }
        let shell = super::shell_start::start_shell(
            self.parts.engine,
            matches!(self.views.layout, Layout::Children(_)),
            event_loop,
            view_config,
            proxy.clone(),
        )?;
        let usage = ShellError::Usage;
        let start = Instant::now();
        // R-INV-1: every session gets its inventory, capabilities on or off; off is the
        // kernel with nothing registered, so every `app.call` is answered `unsupported`.
        let config = self.capabilities.unwrap_or_default();
        // The components' allowed links open where the built-ins act (R-STD-11).
        let links =
            super::component_links::Links::new(config.builtins.desktop.clone(), proxy.clone());
        let (driver, store, started) = {
            let parent = match &self.views.layout {
                Layout::Children(parent) => Some(parent.as_ref()),
                Layout::Windows => None,
            };
            let (driver, store, started) =
                start_capabilities(config, event_loop, proxy.clone(), parent, language.clone())?;
            (Some(driver), Some(store), Some(started))
        };
        let factory = HostSessions {
            start,
            store,
            unvouched_scope: self.sessions.unvouched_scope.clone(),
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
        let policy = match self.parts.capability_policy {
            Some(policy) => {
                let (watch, effects) = PolicyWatch::start(policy, &mut sessions);
                pending.extend(effects);
                Some(watch)
            }
            None => None,
        };
        if let Some(conversation) = self.sessions.conversation_id {
            pending.push_back(sessions.open_session(conversation, None).map_err(usage)?);
        }
        let parent = match self.views.layout {
            Layout::Children(parent) => Some(parent),
            Layout::Windows => None,
        };
        let views = Views::new(
            Box::new(ShellPort::new(shell, parent)),
            ViewsConfig {
                window_size: self.views.window_size,
                resize_bounds: self.views.resize_bounds,
                document: self.views.document.with_language(language.clone()),
                contrast: self.views.contrast,
                watchdog: Watchdog::new(self.views.watchdog),
                standby,
            },
        );
        let waker = proxy.clone();
        let wake_timer = lineup_webview_shell::WakeTimer::new(move || {
            let _ = waker.send_event(HostEvent(Inner::Wake));
        });
        Ok(Host {
            wake_timer,
            engine: Engine {
                sessions,
                views,
                driver,
                proxy,
                upstream: super::upstream::Upstream::new(
                    self.parts.outbound,
                    self.parts.delegate,
                    self.views
                        .activity_notices
                        .then(|| ActivityNotices::new(language.clone())),
                ),
                reopen: self.sessions.reopen,
                components: super::components::ComponentViews::new(
                    self.views.components,
                    self.parts.component_renderer,
                    links,
                ),
                records: super::records::Records::new(self.parts.component_store),
                work: super::work::Work::default(),
            },
            pending,
            session_idle: self.sessions.session_idle,
            inbound: Arc::new(AtomicUsize::new(0)),
            policy,
            apps: self.parts.app_center.map(|catalog| AppsWatch {
                seen: catalog.change_marker(),
                catalog,
                next: Instant::now() + APPS_POLL,
            }),
            exit: false,
            exit_when_empty: false,
            ignore_parent_close: self.views.ignore_parent_close,
        })
    }
}
