//! What a `ui.open`'s `payload.app` must pass before anything changes: the app center for an
//! installed app's Surface or a reserved id, the bundle policy, and the bundle's integrity
//! (R-UI-2a, R-UI-9, R-SEC-7).

use super::entry::OpenedInstalled;
use crate::apps::{refusal_error, reserved_error};
use crate::error::{ErrorCode, ProtocolError};
use crate::message::{InlineApp, SurfaceSource};
use crate::session_config::{BundlePolicy, SessionConfig};

/// The app that `source` opens under `config`, with the installed app it comes from when it is
/// one; the first check it fails, otherwise.
pub(super) fn checked_source(
    config: &SessionConfig,
    source: SurfaceSource,
) -> Result<(InlineApp, Option<OpenedInstalled>), ProtocolError> {
    let catalog = config.app_catalog.as_ref();
    let (app, installed) = match source {
        SurfaceSource::Inline(app) => {
            // R-UI-9: an id the app center holds or has held is reserved, whatever the bytes:
            // its app opens only by id, and only while enabled.
            if let Some(reservation) = catalog.and_then(|c| c.0.reservation(&app.id)) {
                return Err(reserved_error(&app.id, &reservation));
            }
            (app, None)
        }
        SurfaceSource::Installed(s) => {
            let Some(catalog) = catalog else {
                return Err(ProtocolError::new(
                    ErrorCode::Unsupported,
                    "R-UI-9",
                    format!(
                        "surface {} of app {} cannot be opened by id: this host has no app center; send an inline bundle",
                        s.surface, s.id
                    ),
                )
                .field("payload.app.surface"));
            };
            let resolved = catalog
                .0
                .resolve(&s.id, s.version.as_ref(), &s.surface)
                .map_err(|refusal| refusal_error(&s, &refusal))?;
            let opened = OpenedInstalled {
                version: resolved.app.version.clone(),
                surface: s,
                events: resolved.events,
                assets: resolved.assets,
                sources: resolved.sources,
                signed_by: resolved.signed_by,
            };
            (resolved.app, Some(opened))
        }
    };
    let digest = app.bundle.digest();
    let policy = &config.bundle_policy;
    if let Some(installed) = &installed {
        if *policy == BundlePolicy::SignedOnly && installed.signed_by.is_none() {
            return Err(ProtocolError::new(
                ErrorCode::PolicyViolation,
                "R-SEC-7",
                format!(
                    "app {} was installed without a trusted signature; the bundle policy is signed-only",
                    installed.surface.id
                ),
            )
            .field("payload.app.id"));
        }
    } else {
        let refused = match policy {
            BundlePolicy::SignedOnly | BundlePolicy::AppCenterOnly => Some(format!(
                "the bundle policy is {}: this host opens only installed apps, by id; inline bundles are refused",
                policy.name()
            )),
            BundlePolicy::Allowlist(allowed) if !allowed.contains(&digest) => Some(format!(
                "the bundle's digest {digest} is not on this host's allowlist ({} digests)",
                allowed.len()
            )),
            _ => None,
        };
        if let Some(message) = refused {
            return Err(
                ProtocolError::new(ErrorCode::PolicyViolation, "R-SEC-7", message)
                    .field("payload.app"),
            );
        }
    }
    match (&app.integrity, policy) {
        (Some(declared), _) if *declared != digest => Err(ProtocolError::new(
            ErrorCode::IntegrityMismatch,
            "R-UI-2a",
            format!("integrity {declared} does not match the bundle, whose digest is {digest}"),
        )
        .field("payload.app.integrity")),
        (None, BundlePolicy::RequireIntegrity) => Err(ProtocolError::new(
            ErrorCode::PolicyViolation,
            "R-SEC-7",
            format!("the bundle policy requires app.integrity; this bundle's is {digest}"),
        )
        .field("payload.app.integrity")),
        _ => Ok((app, installed)),
    }
}
