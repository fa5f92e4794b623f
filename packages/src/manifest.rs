//! `manifest.json`: what a package is, its Surfaces and its assets, checked against its files.

use std::collections::{BTreeMap, BTreeSet};

pub use lineup_host_core::SCRIPT_MIME;
use lineup_host_core::{
    AppId, AppVersion, Asset, Assets, CatalogRefusal, DeclaredSurface, EventName, InlineApp,
    InlineBundle, InventoryApp, ResolvedSurface, SourceFiles, SurfaceId,
};
use serde::Deserialize;

use crate::{PackageDigest, PackageError, PackageFiles, PackagePath};

/// The manifest's name inside a package.
pub const MANIFEST: &str = "manifest.json";

/// Caps on what a manifest declares.
///
/// | cap | default | rule |
/// | --- | --- | --- |
/// | `max_bundle_bytes` (one Surface's html + css + js) | 160 KiB | R-UI-2 |
/// | `max_asset_bytes` (one media asset) | 4 MiB | host choice |
/// | `max_code_bytes` (all script assets of the package) | 8 MiB | R-SEC-3a |
/// | `max_surfaces` | 32 | host choice |
/// | `max_events` (declared per Surface) | 64 | host choice |
/// | `max_name_bytes` (`name`) | 128 | host choice |
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ManifestLimits {
    /// One Surface's html + css + js, in UTF-8 bytes (R-UI-2).
    pub max_bundle_bytes: usize,
    /// One media asset's bytes (images, fonts, sound and video).
    pub max_asset_bytes: u64,
    /// All script assets of one package together, in bytes (R-SEC-3a): the per-package code
    /// limit. One script may use all of it. The host's configuration sets it; a package cannot
    /// raise it.
    pub max_code_bytes: u64,
    /// Surfaces in one package.
    pub max_surfaces: usize,
    /// Event names one Surface declares.
    pub max_events: usize,
    /// Bytes of the package's `name`.
    pub max_name_bytes: usize,
}

impl Default for ManifestLimits {
    fn default() -> Self {
        Self {
            max_bundle_bytes: 160 * 1024,
            max_asset_bytes: 4 * 1024 * 1024,
            max_code_bytes: 8 * 1024 * 1024,
            max_surfaces: 32,
            max_events: 64,
            max_name_bytes: 128,
        }
    }
}

/// The file extensions a media asset may have and the MIME type it is served with (looked up
/// with `mime_guess`); anything else but a script ([`SCRIPT_EXTENSIONS`]) is refused at install.
/// No HTML, SVG, XML, CSS or JSON: a media asset is passive, never a second document.
pub const ASSET_EXTENSIONS: [&str; 15] = [
    "png", "jpg", "jpeg", "gif", "webp", "avif", "ico", "woff", "woff2", "ttf", "otf", "mp3",
    "ogg", "wav", "webm",
];

/// The MIME type an asset is served with, if its extension is in [`ASSET_EXTENSIONS`].
///
/// ```
/// use lineup_packages::{asset_mime, PackagePath};
/// assert_eq!(asset_mime(&PackagePath::new("a/Logo.PNG").unwrap()), Some("image/png"));
/// assert_eq!(asset_mime(&PackagePath::new("font.woff2").unwrap()), Some("font/woff2"));
/// assert_eq!(asset_mime(&PackagePath::new("x.svg").unwrap()), None);
/// ```
pub fn asset_mime(path: &PackagePath) -> Option<&'static str> {
    let ext = path.extension()?.to_ascii_lowercase();
    if SCRIPT_EXTENSIONS.contains(&ext.as_str()) {
        return Some(SCRIPT_MIME);
    }
    if !ASSET_EXTENSIONS.contains(&ext.as_str()) {
        return None;
    }
    mime_guess::from_ext(&ext).first_raw()
}

/// The file extensions of a script asset (R-SEC-3a): code signed with the package, which its
/// Surfaces load as classic (`.js`) or module (`.mjs`, or `.js` with `type=module`) scripts
/// from their own host, counted against [`ManifestLimits::max_code_bytes`].
pub const SCRIPT_EXTENSIONS: [&str; 2] = ["js", "mjs"];

/// Whether `mime` is the script assets' ([`SCRIPT_MIME`]: UTF-8 JavaScript, so that a script
/// decodes as UTF-8 whatever the host's locale; script assets must be UTF-8).
///
/// ```
/// use lineup_packages::{asset_mime, is_script_mime, PackagePath};
/// let mime = asset_mime(&PackagePath::new("lib/chart.umd.js").unwrap()).unwrap();
/// assert!(is_script_mime(mime));
/// assert!(is_script_mime(asset_mime(&PackagePath::new("main.MJS").unwrap()).unwrap()));
/// ```
pub fn is_script_mime(mime: &str) -> bool {
    mime == SCRIPT_MIME
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    id: AppId,
    name: String,
    version: AppVersion,
    surfaces: BTreeMap<SurfaceId, RawSurface>,
    #[serde(default)]
    assets: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSurface {
    html: String,
    #[serde(default)]
    css: Option<String>,
    #[serde(default)]
    js: Option<String>,
    #[serde(default)]
    events: Vec<EventName>,
}

/// One Surface of a package: its bundle and the events it may send.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PackageSurface {
    bundle: InlineBundle,
    events: BTreeSet<EventName>,
    sources: SourceFiles,
}

impl PackageSurface {
    /// The Surface's html, css and js, checked like an inline bundle (R-UI-2, R-UI-6a).
    pub fn bundle(&self) -> &InlineBundle {
        &self.bundle
    }

    /// The event names the Surface may send; others are dropped and counted.
    pub fn events(&self) -> &BTreeSet<EventName> {
        &self.events
    }

    /// The files its manifest entry names for the bundle's parts, for positions in diagnostics
    /// (R-DIAG-1).
    pub fn sources(&self) -> &SourceFiles {
        &self.sources
    }
}

/// A package whose files and manifest agree: every file the manifest names is there, every
/// file is named, every Surface's bundle passes the inline bundle's checks and size limit, and
/// every asset has an allowed type and size. Its [`digest`](Self::digest) covers all of it.
#[derive(Clone, Debug)]
pub struct Package {
    id: AppId,
    name: String,
    version: AppVersion,
    surfaces: BTreeMap<SurfaceId, PackageSurface>,
    assets: BTreeMap<PackagePath, &'static str>,
    files: PackageFiles,
    digest: PackageDigest,
    code_bytes: u64,
}

fn manifest_error(field: impl Into<String>, reason: impl Into<String>) -> PackageError {
    PackageError::Manifest {
        field: field.into(),
        reason: reason.into(),
    }
}

impl Package {
    /// Checks `files` against their manifest.
    ///
    /// # Errors
    /// [`PackageError::NoManifest`], [`PackageError::Manifest`] naming the field, the value
    /// and the rule, or [`PackageError::Unlisted`].
    pub fn from_files(files: PackageFiles, limits: &ManifestLimits) -> Result<Self, PackageError> {
        let text = files
            .get(MANIFEST)
            .ok_or(PackageError::NoManifest(MANIFEST))?;
        let mut de = serde_json::Deserializer::from_slice(text);
        let raw: RawManifest = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let field = e.path().to_string();
            manifest_error(
                if field == "." { "(top)".into() } else { field },
                e.into_inner().to_string(),
            )
        })?;
        de.end()
            .map_err(|e| manifest_error("(top)", e.to_string()))?;

        if raw.name.trim().is_empty() || raw.name.len() > limits.max_name_bytes {
            return Err(manifest_error(
                "name",
                format!(
                    "{:?} must be 1 to {} bytes and not blank",
                    raw.name, limits.max_name_bytes
                ),
            ));
        }
        if raw.surfaces.is_empty() || raw.surfaces.len() > limits.max_surfaces {
            return Err(manifest_error(
                "surfaces",
                format!(
                    "{} surfaces; a package has 1 to {}",
                    raw.surfaces.len(),
                    limits.max_surfaces
                ),
            ));
        }
        let mut listed: BTreeSet<String> = BTreeSet::from([MANIFEST.to_owned()]);
        let text_of = |field: String, name: &str| -> Result<String, PackageError> {
            let path = PackagePath::new(name).map_err(|e| manifest_error(&field, e.to_string()))?;
            let bytes = files
                .get(path.as_str())
                .ok_or_else(|| manifest_error(&field, format!("{name:?} is not in the package")))?;
            String::from_utf8(bytes.to_vec())
                .map_err(|_| manifest_error(&field, format!("{name:?} is not UTF-8")))
        };
        let mut surfaces = BTreeMap::new();
        for (id, raw_surface) in raw.surfaces {
            let at = format!("surfaces.{id}");
            let html = text_of(format!("{at}.html"), &raw_surface.html)?;
            listed.insert(raw_surface.html.clone());
            let mut part = |field: &str, name: &Option<String>| -> Result<String, PackageError> {
                match name {
                    Some(name) => {
                        listed.insert(name.clone());
                        text_of(format!("{at}.{field}"), name)
                    }
                    None => Ok(String::new()),
                }
            };
            let css = part("css", &raw_surface.css)?;
            let js = part("js", &raw_surface.js)?;
            let size = html.len() + css.len() + js.len();
            if size > limits.max_bundle_bytes {
                return Err(manifest_error(
                    &at,
                    format!(
                        "html + css + js is {size} bytes, over the limit of {} (R-UI-2)",
                        limits.max_bundle_bytes
                    ),
                ));
            }
            let bundle =
                InlineBundle::new(html, css, js).map_err(|e| manifest_error(&at, e.to_string()))?;
            if raw_surface.events.len() > limits.max_events {
                return Err(manifest_error(
                    format!("{at}.events"),
                    format!(
                        "{} event names, over the limit of {}",
                        raw_surface.events.len(),
                        limits.max_events
                    ),
                ));
            }
            let mut events = BTreeSet::new();
            for (i, event) in raw_surface.events.into_iter().enumerate() {
                if event.as_str() == "close" {
                    return Err(manifest_error(
                        format!("{at}.events[{i}]"),
                        "\"close\" is the user's, never a Surface's (R-UI-5)",
                    ));
                }
                if !events.insert(event.clone()) {
                    return Err(manifest_error(
                        format!("{at}.events[{i}]"),
                        format!("{:?} is listed twice", event.as_str()),
                    ));
                }
            }
            let sources = SourceFiles::named(
                &raw_surface.html,
                raw_surface.css.as_deref(),
                raw_surface.js.as_deref(),
            );
            surfaces.insert(
                id,
                PackageSurface {
                    bundle,
                    events,
                    sources,
                },
            );
        }
        let mut assets = BTreeMap::new();
        let mut code_bytes: u64 = 0;
        for (i, name) in raw.assets.iter().enumerate() {
            let field = format!("assets[{i}]");
            let path = PackagePath::new(name).map_err(|e| manifest_error(&field, e.to_string()))?;
            let Some(mime) = asset_mime(&path) else {
                return Err(manifest_error(
                    &field,
                    format!(
                        "{name:?}: an asset's extension must be one of {}, or {} for a script \
                         (R-SEC-3a)",
                        ASSET_EXTENSIONS.join(", "),
                        SCRIPT_EXTENSIONS.join(", ")
                    ),
                ));
            };
            let bytes = files
                .get(name)
                .ok_or_else(|| manifest_error(&field, format!("{name:?} is not in the package")))?;
            let size = bytes.len() as u64;
            if is_script_mime(mime) {
                // R-SEC-3a: scripts share the package's code limit; one may use all of it.
                if std::str::from_utf8(bytes).is_err() {
                    return Err(manifest_error(
                        &field,
                        format!("{name:?} is a script and is not UTF-8"),
                    ));
                }
                code_bytes += size;
                if code_bytes > limits.max_code_bytes {
                    return Err(manifest_error(
                        &field,
                        format!(
                            "{name:?} ({size} bytes) brings the package's script assets to \
                             {code_bytes} bytes, over the per-package code limit of {} \
                             (R-SEC-3a)",
                            limits.max_code_bytes
                        ),
                    ));
                }
            } else if size > limits.max_asset_bytes {
                return Err(manifest_error(
                    &field,
                    format!(
                        "{name:?} is {size} bytes, over the media asset limit of {}",
                        limits.max_asset_bytes
                    ),
                ));
            }
            if listed.contains(name) || assets.insert(path, mime).is_some() {
                return Err(manifest_error(&field, format!("{name:?} is listed twice")));
            }
            listed.insert(name.clone());
        }
        if let Some(unlisted) = files
            .name_set()
            .into_iter()
            .find(|name| !listed.contains(*name))
        {
            return Err(PackageError::Unlisted(unlisted.to_owned()));
        }
        let digest = files.digest();
        Ok(Self {
            id: raw.id,
            name: raw.name,
            version: raw.version,
            surfaces,
            assets,
            files,
            digest,
            code_bytes,
        })
    }

    /// The app id (reverse-DNS, R-UI-2).
    pub fn id(&self) -> &AppId {
        &self.id
    }

    /// The display name, as the author wrote it (the host cleans it before showing it).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The SemVer version.
    pub fn version(&self) -> &AppVersion {
        &self.version
    }

    /// The Surfaces by id.
    pub fn surfaces(&self) -> &BTreeMap<SurfaceId, PackageSurface> {
        &self.surfaces
    }

    /// The assets and the MIME type each is served with.
    pub fn assets(&self) -> &BTreeMap<PackagePath, &'static str> {
        &self.assets
    }

    /// The bytes of all script assets together, counted against
    /// [`ManifestLimits::max_code_bytes`] (R-SEC-3a).
    pub fn code_bytes(&self) -> u64 {
        self.code_bytes
    }

    /// The files.
    pub fn files(&self) -> &PackageFiles {
        &self.files
    }

    /// The package digest over every file, the manifest included.
    pub fn digest(&self) -> PackageDigest {
        self.digest
    }

    /// The package's entry in `client.inventory` `applications` (R-INV-3): its id, version,
    /// Surfaces and their events; never a path or origin.
    pub fn inventory_app(&self) -> InventoryApp {
        InventoryApp {
            id: self.id.clone(),
            version: self.version.clone(),
            surfaces: self
                .surfaces
                .iter()
                .map(|(id, surface)| DeclaredSurface {
                    id: id.clone(),
                    events: surface.events.iter().cloned().collect(),
                })
                .collect(),
        }
    }

    /// Surface `surface` as the app it opens (R-UI-9): its bundle, with `integrity` set to the
    /// bundle's digest and the package's name and version; `None` when there is no such Surface.
    pub fn inline_app(&self, surface: &SurfaceId) -> Option<InlineApp> {
        let bundle = self.surfaces.get(surface)?.bundle.clone();
        Some(InlineApp {
            id: self.id.clone(),
            name: Some(self.name.clone()),
            version: self.version.clone(),
            integrity: Some(bundle.digest()),
            bundle,
        })
    }

    /// Surface `surface` resolved for an open by id (R-UI-9, R-INV-4): its app, events and
    /// assets, with `signed_by` as given; refused when the agent named another version or the
    /// package has no such Surface.
    ///
    /// # Errors
    /// [`CatalogRefusal::OtherVersion`], [`CatalogRefusal::UnknownSurface`].
    pub fn resolve(
        &self,
        version: Option<&AppVersion>,
        surface: &SurfaceId,
        signed_by: Option<String>,
    ) -> Result<ResolvedSurface, CatalogRefusal> {
        if version.is_some_and(|v| *v != self.version) {
            return Err(CatalogRefusal::OtherVersion {
                enabled: self.version.clone(),
            });
        }
        let (Some(found), Some(app)) = (self.surfaces.get(surface), self.inline_app(surface))
        else {
            return Err(CatalogRefusal::UnknownSurface {
                surfaces: self.surfaces.keys().cloned().collect(),
            });
        };
        Ok(ResolvedSurface {
            app,
            events: found.events.clone(),
            assets: self.served_assets(),
            sources: found.sources.clone(),
            signed_by,
        })
    }

    /// The assets to serve from the Surface's own host (R-SEC-3a): each with its MIME type and
    /// bytes, by path in the package.
    pub fn served_assets(&self) -> Assets {
        Assets(std::sync::Arc::new(
            self.assets
                .iter()
                .filter_map(|(path, mime)| {
                    let bytes = self.files.get(path.as_str())?;
                    Some((
                        path.as_str().to_owned(),
                        Asset {
                            mime: (*mime).to_owned(),
                            bytes: bytes.into(),
                        },
                    ))
                })
                .collect(),
        ))
    }
}
