//! A bundle folder written as an app package folder (#26 item 3, R-SEC-3a): for a Surface whose
//! libraries do not fit the 160 KiB of an inline bundle. The folder's `scripts/*.js` become
//! script assets loaded by `<script src>` tags after its `index.html`, so they run before
//! `script.js` as they would joined; its `assets/` files become media assets. The package is
//! checked as an install would check it before anything is written.

use std::path::{Path, PathBuf};

use lineup_host_core::{EventName, InstalledSurface, Message, SurfaceId, SurfaceSource, UiOpen};
use lineup_packages::{ManifestLimits, Package, PackageFiles, PackageLimits, MANIFEST};

use crate::error::{refused, AuthoringError};
use crate::folder::{BundleFolder, OpenOptions};
use crate::scripts::SCRIPTS_DIR;
use crate::source::{check_js, read_text};

/// The folder of a bundle whose files become media assets of its package.
pub const ASSETS_DIR: &str = "assets";

/// The id of the package's one Surface.
pub const PACKAGE_SURFACE: &str = "main";

/// A package written by [`write_package`]: the checked package and where it is.
#[derive(Clone, Debug)]
pub struct WrittenPackage {
    /// The package, as an install reads it (its digest, code bytes, assets).
    pub package: Package,
    /// The folder it was written to.
    pub path: PathBuf,
    /// What an author should know (a Surface that declares no events).
    pub warnings: Vec<String>,
}

impl WrittenPackage {
    /// A ready `lineup.v1.ui.open` envelope opening the package's Surface by id (R-UI-9) once it
    /// is installed, with the state of `options` or else of the folder's `state.json`.
    pub fn ui_open(
        &self,
        folder: &BundleFolder,
        options: &OpenOptions,
    ) -> Result<Message, AuthoringError> {
        let mut message = folder.ui_open(options)?;
        if let Message::UiOpen(envelope) = &mut message {
            envelope.payload = UiOpen {
                instance_id: envelope.payload.instance_id.clone(),
                app: SurfaceSource::Installed(InstalledSurface {
                    id: self.package.id().clone(),
                    version: Some(self.package.version().clone()),
                    surface: SurfaceId::try_from(PACKAGE_SURFACE)
                        .map_err(|e| refused("surface", e.to_string()))?,
                }),
                state: envelope.payload.state.take(),
            };
        }
        Ok(message)
    }
}

/// Writes the bundle folder `folder` as an app package folder at `out`, which must not exist
/// or be an empty folder: `manifest.json` (id, name and version from `options`, one Surface
/// `main` declaring `events`), `index.html` with one `<script src>` per library after the
/// author's fragment, `style.css`, `script.js`, `scripts/*.js` as script assets and `assets/*`
/// as media assets. The files are checked as `lineup apps verify` would, against `limits`
/// (the per-package code limit among them), before the first is written.
///
/// # Errors
/// [`AuthoringError::Refused`] naming the file or limit, [`AuthoringError::Read`], or an
/// error writing `out`.
pub fn write_package(
    folder: &BundleFolder,
    options: &OpenOptions,
    events: &[EventName],
    out: &Path,
    limits: &ManifestLimits,
) -> Result<WrittenPackage, AuthoringError> {
    let src = folder.path();
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    let mut assets: Vec<String> = Vec::new();
    let mut html = read_text(&src.join("index.html"), true)?;
    for name in listed(src, SCRIPTS_DIR, |name| name.ends_with(".js"))? {
        let text = read_text(&src.join(&name), true)?;
        check_js(&name, &text)?;
        html.push_str(&format!("\n<script src=\"{name}\"></script>"));
        files.push((name.clone(), text.into_bytes()));
        assets.push(name);
    }
    for name in listed(src, ASSETS_DIR, |_| true)? {
        let bytes = std::fs::read(src.join(&name)).map_err(|source| AuthoringError::Read {
            path: src.join(&name),
            source,
        })?;
        files.push((name.clone(), bytes));
        assets.push(name);
    }
    let mut surface = serde_json::json!({"html": "index.html", "events": events});
    files.push(("index.html".to_owned(), html.into_bytes()));
    for (field, name) in [("css", "style.css"), ("js", "script.js")] {
        let text = read_text(&src.join(name), false)?;
        if !text.is_empty() {
            surface[field] = name.into();
            files.push((name.to_owned(), text.into_bytes()));
        }
    }
    let manifest = serde_json::json!({
        "id": options.app_id.as_str(),
        "name": options.name.clone().unwrap_or_else(|| options.app_id.as_str().to_owned()),
        "version": options.version.to_string(),
        "surfaces": {PACKAGE_SURFACE: surface},
        "assets": assets,
    });
    let manifest =
        serde_json::to_vec_pretty(&manifest).map_err(|e| refused(MANIFEST, e.to_string()))?;
    files.push((MANIFEST.to_owned(), manifest));

    let checked = PackageFiles::from_memory(
        files.iter().map(|(n, b)| (n.as_str(), b.clone())),
        &PackageLimits::default(),
    )
    .and_then(|f| Package::from_files(f, limits))
    .map_err(|e| refused(out.display().to_string(), e.to_string()))?;
    prepare(out)?;
    for (name, bytes) in &files {
        let path = out.join(name);
        let written = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&path, bytes));
        written.map_err(|source| AuthoringError::Write { path, source })?;
    }
    let mut warnings = Vec::new();
    if events.is_empty() {
        warnings.push(format!(
            "Surface {PACKAGE_SURFACE} declares no events: an installed app's Surface may send \
             only the events its manifest lists (--events NAME,…)"
        ));
    }
    Ok(WrittenPackage {
        package: checked,
        path: out.to_path_buf(),
        warnings,
    })
}

/// The files of `src/dir` accepted by `keep`, as `dir/name`, in name order; none when it is
/// not a folder. A file an asset cannot be is refused by the manifest check, naming it.
fn listed(
    src: &Path,
    dir: &str,
    keep: impl Fn(&str) -> bool,
) -> Result<Vec<String>, AuthoringError> {
    let at = src.join(dir);
    if !at.is_dir() {
        return Ok(Vec::new());
    }
    let entries = std::fs::read_dir(&at).map_err(|source| AuthoringError::Read {
        path: at.clone(),
        source,
    })?;
    let mut names: Vec<String> = entries
        .flatten()
        .filter(|e| e.path().is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| keep(name))
        .map(|name| format!("{dir}/{name}"))
        .collect();
    names.sort();
    Ok(names)
}

/// `out` ready to be written: created, or an empty folder already.
fn prepare(out: &Path) -> Result<(), AuthoringError> {
    let error = |source| AuthoringError::Write {
        path: out.to_path_buf(),
        source,
    };
    if out.exists() {
        let empty = out.is_dir()
            && std::fs::read_dir(out)
                .map_err(|source| AuthoringError::Read {
                    path: out.to_path_buf(),
                    source,
                })?
                .next()
                .is_none();
        if !empty {
            return Err(refused(
                out.display().to_string(),
                "exists and is not an empty folder; nothing was written",
            ));
        }
        return Ok(());
    }
    std::fs::create_dir_all(out).map_err(error)
}
