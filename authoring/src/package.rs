//! An app package folder previewed as the installed app would run (R-UI-9, R-SEC-3a): read and
//! checked as `lineup apps verify` does, and offered to the host through an in-memory app
//! catalog, so that the Surface opens by id and its assets come from its own host under the
//! installed app's policy. Nothing is installed: no data directory, store or signature.

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use lineup_host_core::{
    AppCatalog, AppId, AppVersion, CatalogRefusal, InlineApp, ListedApp, Reservation,
    ResolvedSurface, SurfaceId,
};
use lineup_packages::{ManifestLimits, Package, PackageFiles, PackageLimits, MANIFEST};

use crate::error::{refused, AuthoringError};
use crate::source::check_js;

/// Whether `dir` is an app package folder: it has a `manifest.json`.
pub(crate) fn is_package(dir: &Path) -> bool {
    dir.join(MANIFEST).is_file()
}

/// Reads and checks the package folder `dir` as an install would (safe names, manifest and
/// files agree, limits), then parses each Surface's script as a classic script, naming its
/// file (R-UI-6a).
pub(crate) fn read_package(dir: &Path) -> Result<Package, AuthoringError> {
    let at = |e: lineup_packages::PackageError| refused(dir.display().to_string(), e.to_string());
    let files = PackageFiles::read_dir(dir, &PackageLimits::default()).map_err(at)?;
    let package = Package::from_files(files, &ManifestLimits::default()).map_err(at)?;
    let manifest: serde_json::Value = package
        .files()
        .get(MANIFEST)
        .and_then(|bytes| serde_json::from_slice(bytes).ok())
        .unwrap_or_default();
    for (id, surface) in package.surfaces() {
        let file = manifest["surfaces"][id.as_str()]["js"]
            .as_str()
            .unwrap_or("script.js");
        check_js(file, surface.bundle().js())?;
    }
    Ok(package)
}

/// The Surface a preview opens: `main` when the package has one, else its first.
pub(crate) fn default_surface(package: &Package) -> Option<SurfaceId> {
    let main = SurfaceId::try_from("main").ok()?;
    if package.surfaces().contains_key(&main) {
        return Some(main);
    }
    package.surfaces().keys().next().cloned()
}

/// One package, not installed, as the host's app catalog: it lists and opens that app only,
/// with its assets; every other id is unknown, and no id is reserved. The package can be
/// replaced while the host runs ([`PreviewCatalog::replace`]), for a preview's reload.
#[derive(Clone, Debug)]
pub struct PreviewCatalog(Arc<Mutex<Package>>);

impl PreviewCatalog {
    /// A catalog of `package`.
    pub fn new(package: Package) -> Self {
        Self(Arc::new(Mutex::new(package)))
    }

    fn package(&self) -> MutexGuard<'_, Package> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Serves `package` from now on (the Surfaces open at the time keep what they loaded).
    pub fn replace(&self, package: Package) {
        *self.package() = package;
    }

    /// The package's Surface `surface` as an inline app, to compare readings and report its
    /// size.
    pub fn app(&self, surface: &SurfaceId) -> Option<InlineApp> {
        self.package().inline_app(surface)
    }
}

impl AppCatalog for PreviewCatalog {
    fn applications(&self) -> Vec<ListedApp> {
        vec![ListedApp {
            app: self.package().inventory_app(),
            signed_by: None,
        }]
    }

    fn resolve(
        &self,
        id: &AppId,
        version: Option<&AppVersion>,
        surface: &SurfaceId,
    ) -> Result<ResolvedSurface, CatalogRefusal> {
        let package = self.package();
        if id != package.id() {
            return Err(CatalogRefusal::Unknown);
        }
        package.resolve(version, surface, None)
    }

    fn reservation(&self, _id: &AppId) -> Option<Reservation> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn package_dir(name: &str, js: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "lineup-authoring-package-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("assets")).unwrap();
        std::fs::write(
            dir.join(MANIFEST),
            r#"{"id": "com.example.pkg", "name": "Pkg", "version": "1.2.0",
                "surfaces": {"side": {"html": "a.html", "js": "app.js", "events": ["e"]}},
                "assets": ["assets/dot.png"]}"#,
        )
        .unwrap();
        std::fs::write(dir.join("a.html"), "<img src=assets/dot.png>").unwrap();
        std::fs::write(dir.join("app.js"), js).unwrap();
        std::fs::write(dir.join("assets/dot.png"), b"\x89PNG").unwrap();
        dir
    }

    /// R-SEC-3a: the package's Surface resolves with its assets and declared events, by its
    /// id only; a syntax error names the manifest's script file.
    #[test]
    fn r_sec_3a_a_package_folder_resolves_with_its_assets() {
        let dir = package_dir("ok", "LineUpSurface.event('e', {});");
        assert!(is_package(&dir));
        let package = read_package(&dir).unwrap();
        let surface = default_surface(&package).unwrap();
        assert_eq!(surface.as_str(), "side");
        let catalog = PreviewCatalog::new(package);
        let id = AppId::try_from("com.example.pkg").unwrap();
        let resolved = catalog.resolve(&id, None, &surface).unwrap();
        assert_eq!(resolved.assets.0.len(), 1);
        assert!(resolved.assets.0.contains_key("assets/dot.png"));
        assert_eq!(resolved.events.len(), 1);
        // Negative controls: another id, another Surface.
        let other = AppId::try_from("com.example.other").unwrap();
        assert_eq!(
            catalog.resolve(&other, None, &surface),
            Err(CatalogRefusal::Unknown)
        );
        let main = SurfaceId::try_from("main").unwrap();
        assert!(catalog.resolve(&id, None, &main).is_err());
        assert_eq!(catalog.reservation(&id), None);

        let broken = package_dir("broken", "let x = ;");
        let err = read_package(&broken).unwrap_err().to_string();
        assert!(err.starts_with("app.js:1:9: "), "{err}");
    }
}
