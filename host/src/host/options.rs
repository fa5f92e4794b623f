//! What a [`HostBuilder`](super::HostBuilder) holds ([`HostConfig`]), in three plain values: the
//! sessions' options, the views' options and the embedder's parts, beside the capability
//! configuration. They hold no invariant beyond their types: the builder's methods document
//! each setting, and [`HostBuilder::build`](super::HostBuilder::build) checks them together.

use std::rc::Rc;
use std::time::Duration;

use lineup_host_core::mcp::McpLimits;
use lineup_host_core::{
    AppCatalog, BundlePolicy, CapabilityPolicy, ConversationId, InstanceStore, LanguageTag, Limits,
    LinkPolicy, Message, PartyId,
};
use lineup_surface_runtime::DocumentOptions;
use lineup_webview_shell::tao::window::Window;
use lineup_webview_shell::{ComponentOptions, Contrast, SurfaceEngine, Theme, ViewConfig};

use super::renderer::ComponentRenderer;
use crate::capabilities::CapabilityConfig;
use crate::delegate::{HostDelegate, NoDelegate};
use crate::watchdog::WatchdogConfig;

/// Everything a host is built from ([`HostBuilder::build`](super::HostBuilder::build)).
#[derive(Default)]
pub(super) struct HostConfig {
    pub(super) sessions: SessionOptions,
    pub(super) views: ViewOptions,
    pub(super) parts: EmbedderParts,
    /// `None` until App Capabilities are turned on (a registration turns them on too).
    pub(super) capabilities: Option<CapabilityConfig>,
}

/// The embedder's outbound callback.
pub(super) type OutboundFn = Box<dyn FnMut(&Message)>;

/// Where the host puts Surfaces.
pub(super) enum Layout {
    Windows,
    Children(Rc<Window>),
}

/// What every session starts from (the kernel's `SessionConfig` template and the session
/// table's options).
pub(super) struct SessionOptions {
    pub(super) client_id: PartyId,
    pub(super) conversation_id: Option<ConversationId>,
    pub(super) limits: Limits,
    pub(super) bundle_policy: BundlePolicy,
    pub(super) link_policy: LinkPolicy,
    pub(super) agent_id: Option<PartyId>,
    pub(super) unvouched_scope: Option<String>,
    pub(super) session_idle: Option<Duration>,
    pub(super) reopen: bool,
    /// `None`: MCP App views off.
    pub(super) mcp_apps: Option<McpLimits>,
}

impl Default for SessionOptions {
    fn default() -> Self {
        Self {
            client_id: PartyId::try_from("lineup-host").unwrap_or_else(|_| unreachable_party()),
            conversation_id: None,
            limits: Limits::default(),
            bundle_policy: BundlePolicy::default(),
            link_policy: LinkPolicy::default(),
            agent_id: None,
            unvouched_scope: None,
            session_idle: None,
            reopen: true,
            mcp_apps: Some(McpLimits::default()),
        }
    }
}

/// Where the views go and how they look and are watched.
pub(super) struct ViewOptions {
    pub(super) view_config: ViewConfig,
    pub(super) document: DocumentOptions,
    pub(super) window_size: (u32, u32),
    pub(super) resize_bounds: (u32, u32),
    pub(super) layout: Layout,
    pub(super) language: Option<LanguageTag>,
    pub(super) theme: Theme,
    pub(super) contrast: Contrast,
    pub(super) standby: Option<crate::StandbyScreen>,
    pub(super) ignore_parent_close: bool,
    pub(super) watchdog: WatchdogConfig,
    pub(super) activity_notices: bool,
    pub(super) components: Option<ComponentOptions>,
}

impl Default for ViewOptions {
    fn default() -> Self {
        Self {
            view_config: ViewConfig::default(),
            document: DocumentOptions::default(),
            window_size: (480, 360),
            resize_bounds: (40, 2000),
            layout: Layout::Windows,
            language: None,
            theme: Theme::System,
            contrast: Contrast::System,
            standby: None,
            ignore_parent_close: false,
            watchdog: WatchdogConfig::default(),
            activity_notices: true,
            components: Some(ComponentOptions::default()),
        }
    }
}

/// The embedder's objects the host calls.
pub(super) struct EmbedderParts {
    pub(super) outbound: Option<OutboundFn>,
    pub(super) delegate: Box<dyn HostDelegate>,
    pub(super) app_center: Option<Rc<dyn AppCatalog>>,
    pub(super) capability_policy: Option<Rc<dyn CapabilityPolicy>>,
    pub(super) component_store: Option<Box<dyn InstanceStore>>,
    pub(super) component_renderer: Option<Box<dyn ComponentRenderer>>,
    pub(super) engine: Option<Rc<dyn SurfaceEngine>>,
}

impl Default for EmbedderParts {
    fn default() -> Self {
        Self {
            outbound: None,
            delegate: Box::new(NoDelegate),
            app_center: None,
            capability_policy: None,
            component_store: None,
            component_renderer: None,
            engine: None,
        }
    }
}

#[allow(clippy::panic)]
fn unreachable_party() -> PartyId {
    panic!("\"lineup-host\" is a valid party id")
}
