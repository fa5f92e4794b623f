//! The app center as the kernel sees it (R-UI-9, R-INV-3, R-INV-4): a catalog of installed,
//! verified apps behind a trait, so that opening a Surface by app id stays sans-IO here while
//! the embedder's catalog reads and verifies the bytes (for example `lineup-store`'s registry).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Arc;

use crate::error::{ErrorCode, ProtocolError};
use crate::ids::{AppId, AppVersion, EventName, SurfaceId};
use crate::message::{InlineApp, InstalledSurface, InventoryApp};
use crate::source::SourceFiles;

/// The `Content-Type` a script asset of an installed app is served with (R-SEC-3a, RFC 9239):
/// UTF-8 JavaScript, whatever the host's locale.
pub const SCRIPT_MIME: &str = "text/javascript; charset=utf-8";

/// One static asset of an installed app: its MIME type and bytes, verified with its package.
#[derive(Clone, PartialEq, Eq)]
pub struct Asset {
    /// The `Content-Type` it is served with, from the package's extension allowlist.
    pub mime: String,
    /// The bytes.
    pub bytes: Arc<[u8]>,
}

impl Asset {
    /// Whether this is a script asset ([`SCRIPT_MIME`]), code signed with its package, which
    /// the Surface may load from its own host (R-SEC-3a).
    pub fn is_script(&self) -> bool {
        self.mime == SCRIPT_MIME
    }
}

/// An installed app's assets by path in the package (like `assets/logo.png`), served from the
/// Surface's own scheme host, from memory; empty for an inline bundle. Cheap to clone.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Assets(pub Arc<BTreeMap<String, Asset>>);

impl Assets {
    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether any is a script ([`Asset::is_script`]).
    pub fn has_scripts(&self) -> bool {
        self.0.values().any(Asset::is_script)
    }
}

impl fmt::Debug for Assets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Paths and sizes; the bytes are the app's.
        f.debug_map()
            .entries(self.0.iter().map(|(path, a)| (path, a.bytes.len())))
            .finish()
    }
}

/// An installed app's Surface, resolved and verified by the catalog: its bundle and assets to
/// serve from memory and the events it declared.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedSurface {
    /// The app as if it had been sent inline, with `integrity` set to the bundle's digest.
    pub app: InlineApp,
    /// The event names the Surface may send; others are dropped and counted.
    pub events: BTreeSet<EventName>,
    /// The package's assets.
    pub assets: Assets,
    /// The files the manifest names for the bundle's parts, for positions in diagnostics
    /// (R-DIAG-1).
    pub sources: SourceFiles,
    /// The trusted key whose signature the package was installed with (`ed25519:<base64>`), if
    /// any; [`BundlePolicy::SignedOnly`](crate::BundlePolicy::SignedOnly) opens only these.
    pub signed_by: Option<String>,
}

/// Why a catalog does not open an installed Surface; each maps to one deterministic refusal
/// (R-INV-4) and never to a fallback.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CatalogRefusal {
    /// No app of this id is installed, and none was.
    Unknown,
    /// The app is installed but disabled.
    Disabled,
    /// The app was installed and has been removed.
    Removed,
    /// The agent named another version than the enabled one.
    OtherVersion {
        /// The enabled version.
        enabled: AppVersion,
    },
    /// The app has no Surface of this id.
    UnknownSurface {
        /// The Surfaces it has.
        surfaces: Vec<SurfaceId>,
    },
    /// The cached bytes no longer match the recorded digest; nothing is served.
    Tampered,
    /// The catalog could not be read; nothing is served.
    Unavailable(String),
    /// The installed package is over a limit of this host's (its per-package code limit,
    /// R-SEC-3a), lower than the one it was installed under; the text names the file, the size
    /// and the limit. Nothing is served.
    OverLimit(String),
}

impl fmt::Display for CatalogRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unknown => f.write_str("is not installed"),
            Self::Disabled => f.write_str("is disabled"),
            Self::Removed => f.write_str("was removed"),
            Self::OtherVersion { enabled } => {
                write!(f, "is enabled at version {enabled}, not the one asked for")
            }
            Self::UnknownSurface { surfaces } => {
                let names: Vec<&str> = surfaces.iter().map(SurfaceId::as_str).collect();
                write!(f, "has no such surface; it has {}", names.join(", "))
            }
            Self::Tampered => {
                f.write_str("failed verification: its installed bytes no longer match their digest")
            }
            Self::Unavailable(why) => write!(f, "cannot be read from the app center: {why}"),
            Self::OverLimit(why) => write!(f, "is over this host's limits: {why}"),
        }
    }
}

/// An enabled, verified app as the catalog lists it for the inventory: what the agent sees,
/// and the key it was signed with, so the kernel lists only what its bundle policy opens
/// (R-INV-1, R-INV-3).
#[derive(Debug, Clone, PartialEq)]
pub struct ListedApp {
    /// The inventory entry (R-INV-3: ids, versions, Surfaces and their events; never a path,
    /// source or origin).
    pub app: InventoryApp,
    /// The trusted key its current version was installed with (`ed25519:<base64>`), if any.
    pub signed_by: Option<String>,
}

/// Why an app id is reserved in the app center (R-UI-9 as amended): an id the app center
/// holds or has held, compared ignoring ASCII case, never opens from inline bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reservation {
    /// An app of this id (in this spelling) is installed and enabled.
    Enabled(AppId),
    /// An app of this id is installed and disabled.
    Disabled(AppId),
    /// An app of this id was installed and removed; its tombstone stays until an operator
    /// forgets it explicitly.
    Removed(AppId),
}

impl Reservation {
    /// The id as the app center holds it (its spelling may differ in case from the one asked).
    pub fn held_id(&self) -> &AppId {
        match self {
            Self::Enabled(id) | Self::Disabled(id) | Self::Removed(id) => id,
        }
    }
}

/// The installed, verified apps a host offers (R-UI-9). The kernel asks it at `ui.open` by
/// app id and when it announces the inventory; an implementation reads its registry and
/// verifies bytes against their recorded digest before returning them.
pub trait AppCatalog {
    /// The enabled apps whose bytes verify, for `client.inventory` `applications` (R-INV-3).
    /// The kernel leaves out those its bundle policy would refuse (R-INV-1).
    fn applications(&self) -> Vec<ListedApp>;

    /// Surface `surface` of app `id`, at `version` when the agent named one.
    ///
    /// # Errors
    /// A [`CatalogRefusal`]; the kernel answers it without loading anything.
    fn resolve(
        &self,
        id: &AppId,
        version: Option<&AppVersion>,
        surface: &SurfaceId,
    ) -> Result<ResolvedSurface, CatalogRefusal>;

    /// Whether `id`, compared ignoring ASCII case, is held or was held by the app center
    /// (R-UI-9): an inline bundle under a reserved id is refused and never loaded, whatever
    /// its bytes. `None` when the id is free.
    fn reservation(&self, id: &AppId) -> Option<Reservation>;

    /// A value that changes whenever the catalog may have changed, also through another
    /// process (for example a store's revision counter); the host looks about once a second
    /// and, when it moved, tells every session ([`Session::apps_changed`](crate::Session::apps_changed)).
    /// `None` (the default) never looks.
    fn change_marker(&self) -> Option<u64> {
        None
    }
}

/// The refusal of an inline bundle under a reserved app id (R-UI-9, R-INV-4): `revoked` for
/// a disabled or removed app, `policy_violation` for an enabled one; `payload.app.id` named.
pub(crate) fn reserved_error(asked: &AppId, reservation: &Reservation) -> ProtocolError {
    let held = reservation.held_id();
    let spelled = if held.as_str() == asked.as_str() {
        String::new()
    } else {
        format!(" (held as {held}; ids are compared ignoring ASCII case)")
    };
    let (code, state, fix) = match reservation {
        Reservation::Enabled(_) => (
            ErrorCode::PolicyViolation,
            "is installed and enabled in the app center",
            "open it by id: {\"app\": {\"id\", \"surface\"}}",
        ),
        Reservation::Disabled(_) => (
            ErrorCode::Revoked,
            "is installed and disabled in the app center",
            "it opens only by id, once enabled again",
        ),
        Reservation::Removed(_) => (
            ErrorCode::Revoked,
            "was removed from the app center",
            "its id stays reserved until an operator forgets it",
        ),
    };
    ProtocolError::new(
        code,
        "R-UI-9",
        format!(
            "app id {asked}{spelled} {state}; an inline bundle under it is refused and was not loaded; {fix}"
        ),
    )
    .field("payload.app.id")
}

/// The refusal of `ui.open` for `installed` (R-INV-4): `revoked` where the app (or its
/// version) once was enabled, `unsupported` otherwise.
pub(crate) fn refusal_error(
    installed: &InstalledSurface,
    refusal: &CatalogRefusal,
) -> ProtocolError {
    let (code, field) = match refusal {
        CatalogRefusal::Disabled | CatalogRefusal::Removed => {
            (ErrorCode::Revoked, "payload.app.id")
        }
        CatalogRefusal::OtherVersion { .. } => (ErrorCode::Unsupported, "payload.app.version"),
        CatalogRefusal::UnknownSurface { .. } => (ErrorCode::Unsupported, "payload.app.surface"),
        CatalogRefusal::OverLimit(_) => (ErrorCode::BundleTooLarge, "payload.app.id"),
        _ => (ErrorCode::Unsupported, "payload.app.id"),
    };
    let asked = installed
        .version
        .as_ref()
        .map(|v| format!(" version {v}"))
        .unwrap_or_default();
    ProtocolError::new(
        code,
        "R-INV-4",
        format!(
            "surface {} of app {}{asked}: the app {refusal}; nothing was loaded",
            installed.surface, installed.id
        ),
    )
    .field(field)
}
