//! How a [`Session`](crate::Session) is set up: its clock, its bundle policy (R-SEC-7), its
//! configuration, and the app catalog and store port it shares with the other sessions of its
//! host.

use std::collections::BTreeSet;
use std::fmt;
use std::time::Duration;

use crate::apps::AppCatalog;
use crate::capability::StorePort;
use crate::component::ComponentSet;
use crate::ids::Party;
use crate::ids::{ConversationId, PartyId};
use crate::keys::SessionId;
use crate::limits::Limits;
use crate::mcp::McpLimits;
use crate::url_policy::LinkPolicy;
use crate::Integrity;

/// A monotonic time source, provided by the embedder (or webview-shell).
pub trait Clock {
    /// Time elapsed since an arbitrary fixed origin; never goes backwards.
    fn monotonic(&self) -> Duration;
}

/// Which bundles the session accepts (R-SEC-7). Under every policy an `integrity` that does
/// not match its bundle is refused (`integrity_mismatch`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum BundlePolicy {
    /// `allow`: accept an inline bundle without `integrity`, relying on the sandbox; verify
    /// `integrity` when present. The default, like the reference host's (R-SEC-7 host choice).
    #[default]
    SandboxOnly,
    /// Every inline bundle must carry an `integrity` that matches (R-UI-2a).
    RequireIntegrity,
    /// `allowlist`: only inline bundles whose digest is one of these; installed apps as usual.
    Allowlist(BTreeSet<Integrity>),
    /// `signed-only`: no inline bundles; only installed apps whose package was installed with a
    /// signature by a trusted key ([`ResolvedSurface::signed_by`](crate::ResolvedSurface::signed_by)).
    SignedOnly,
    /// `app-center-only`: no inline bundles; only installed, verified apps.
    AppCenterOnly,
}

impl BundlePolicy {
    /// The policy's name, as the CLI spells it.
    pub fn name(&self) -> &'static str {
        match self {
            BundlePolicy::SandboxOnly => "allow",
            BundlePolicy::RequireIntegrity => "require-integrity",
            BundlePolicy::Allowlist(_) => "allowlist",
            BundlePolicy::SignedOnly => "signed-only",
            BundlePolicy::AppCenterOnly => "app-center-only",
        }
    }
}

/// How a [`Session`](crate::Session) is set up.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SessionConfig {
    /// The conversation this session serves; `None` adopts the conversation of the first
    /// accepted envelope (a refused one changes nothing, R-SES-1).
    pub conversation_id: Option<ConversationId>,
    /// The client as it names itself in `sender` of every outbound envelope.
    pub client: Party,
    /// Prefix of outbound message ids (`<prefix>-<n>`); make it unique per session, e.g. random.
    pub message_id_prefix: String,
    /// Bounds on input and on the registry.
    pub limits: Limits,
    /// Which inline bundles are accepted.
    pub bundle_policy: BundlePolicy,
    /// The agent the transport vouches for (R-SES-1): an inbound envelope whose `sender.id` is
    /// another is refused `wrong_sender`. `None` accepts any `sender.id`.
    pub agent_id: Option<PartyId>,
    /// The session's id in its host's session table, carried by every [`SurfaceKey`](crate::SurfaceKey) it makes;
    /// [`SessionId::STANDALONE`] for a session outside a table.
    pub session_id: SessionId,
    /// The installed apps that `ui.open` by app id opens and `client.inventory` lists
    /// (R-UI-9); `None` refuses every open by id `unsupported`.
    pub app_catalog: Option<CatalogRef>,
    /// The standard components the driver can render now (R-STD-14): `client.inventory` lists
    /// exactly these and `ui.open` accepts only these (R-STD-4). Empty by default: a driver
    /// that renders none offers none. Change it with
    /// [`Session::set_standard_components`](crate::Session::set_standard_components).
    pub standard_components: ComponentSet,
    /// Whether Markdown links are live controls or inert text (R-STD-11); `Confirm` by
    /// default, `Off` in kiosk mode.
    pub link_policy: LinkPolicy,
    /// Where the kernel keeps what outlives a restart, called where a step needs it (the
    /// store module's table): call records, grants, the audit and the names offered (R-CAP-5,
    /// R-CAP-6, R-INV-4), and a vouched session's records of its open components and
    /// hibernated Surfaces (R-STD-15, #29). Every session of a host shares the host's; the
    /// default keeps calls in memory and no restoration records ([`StorePort::memory`]).
    pub store: StorePort,
    /// MCP App views (R-MCP-3 … R-MCP-8): `None`, the default, refuses every `ui.open` with
    /// `mcp_app` and every `mcp.*` envelope `unsupported` (R-MCP-13: a host that cannot show
    /// them yet); `Some(limits)` shows them, each view's traffic within `limits`.
    pub mcp_apps: Option<McpLimits>,
}

/// A shared [`AppCatalog`] in a [`SessionConfig`]; every session of a host uses the same.
#[derive(Clone)]
pub struct CatalogRef(pub std::rc::Rc<dyn AppCatalog>);

impl fmt::Debug for CatalogRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CatalogRef(..)")
    }
}

impl SessionConfig {
    /// A configuration with the default limits and policy, for the client `client_id`.
    pub fn new(client_id: PartyId, message_id_prefix: impl Into<String>) -> Self {
        Self {
            conversation_id: None,
            client: Party {
                kind: PartyId::known("client"),
                id: client_id,
            },
            message_id_prefix: message_id_prefix.into(),
            limits: Limits::default(),
            bundle_policy: BundlePolicy::default(),
            agent_id: None,
            session_id: SessionId::STANDALONE,
            app_catalog: None,
            standard_components: ComponentSet::default(),
            link_policy: LinkPolicy::default(),
            store: StorePort::memory(),
            mcp_apps: None,
        }
    }
}
