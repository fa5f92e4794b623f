//! The settings of a host that weaken isolation, apart from the builder's defaults.

use std::rc::Rc;

use lineup_surface_runtime::DocumentOptions;
use lineup_webview_shell::SurfaceEngine;

use super::builder::HostBuilder;

/// The settings of a [`HostBuilder`] that weaken isolation, behind [`HostBuilder::dangerous`].
#[derive(Debug)]
pub struct DangerousHostBuilder(HostBuilder);

impl DangerousHostBuilder {
    pub(super) fn new(builder: HostBuilder) -> Self {
        Self(builder)
    }

    /// Enables the web inspector in every Surface (preview mode, R-SEC-2).
    pub fn with_devtools(mut self) -> HostBuilder {
        self.0.config.views.view_config =
            self.0.config.views.view_config.dangerous().with_devtools();
        self.0
    }

    /// Runs web processes outside WebKit's bubblewrap sandbox (R-SEC-8).
    pub fn without_web_sandbox(mut self) -> HostBuilder {
        self.0.config.views.view_config = self
            .0
            .config
            .views
            .view_config
            .dangerous()
            .without_web_sandbox();
        self.0
    }

    /// Lets Surfaces reach the network layer without the proxy that refuses every connection
    /// (R-SEC-3). Only for tests that prove a leak would be seen (a positive control).
    pub fn without_network_proxy(mut self) -> HostBuilder {
        self.0.config.views.view_config = self
            .0
            .config
            .views
            .view_config
            .dangerous()
            .without_network_proxy();
        self.0
    }

    /// Serves Surface documents without a Content-Security-Policy header. Only for tests that
    /// prove a security test would see a leak (a positive control).
    pub fn without_csp(mut self) -> HostBuilder {
        self.0.config.views.document = DocumentOptions::default().dangerous().without_csp();
        self.0
    }

    /// Shows Surfaces with `engine` (say, the Servo backend of `engines/servo`) instead of the
    /// platform's webviews, each in a window of its own; the sessions, capabilities, consent and
    /// watchdog are the host's as with the platform's engine. Such an engine's isolation is
    /// weaker (Servo 0.7: one process for every Surface, one storage profile; see
    /// `FEATURES.md`), which is why it is here. Its probe runs to its verdict in
    /// [`HostBuilder::build`], which fails with [`HostError::Platform`](crate::HostError::Platform) (`ShellError::ProbeFailed`) if it fails; child
    /// views ([`HostBuilder::child_views_in`]) and the warm pool are the platform's only, and
    /// `build` refuses child views with [`HostError::Platform`](crate::HostError::Platform) (`ShellError::Unsupported`).
    pub fn engine(mut self, engine: Rc<dyn SurfaceEngine>) -> HostBuilder {
        self.0.config.parts.engine = Some(engine);
        self.0
    }
}
