//! The local app registry (R-UI-9, R-SEC-7, R-INV-3): installed app packages, their versions
//! and which one is current, in table `apps` and `app_versions`; the bytes in a
//! content-addressed cache beside the database, `packages/<hex digest>.tar`.
//!
//! A package is verified (safe to unpack, manifest and files agree, the digest asked for) before
//! anything is kept; its cache file is the canonical tar of its files
//! ([`PackageFiles::write_tar`]), written to a temporary name, synced and renamed before the row
//! that names it commits, so a crash leaves at most an unnamed file. Reading it back
//! ([`Apps::load`]) checks the digest again, so a changed byte is caught at every load.
//!
//! Every change (install, upgrade, roll back, enable, disable, remove) bumps the inventory
//! revision counter in the same transaction, so a host watching the counter
//! ([`Revisions::counter`](crate::Revisions::counter)) sees each change exactly once, also one
//! made by another process.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use lineup_host_core::{
    AppCatalog, AppId, AppVersion, CatalogRefusal, ListedApp, Reservation, ResolvedSurface,
    SurfaceId,
};
use lineup_packages::{
    Package, PackageDigest, PackageError, PackageFiles, PackageLimits, PublicKey,
};
use rusqlite::OptionalExtension as _;
use serde::Serialize;

use crate::db::now_rfc3339;
use crate::reserved::Held;
use crate::{Store, StoreError};

/// The cache folder inside the data directory.
pub const PACKAGE_CACHE: &str = "packages";

/// One installed app as `lineup apps list` shows it. No path, source or install origin: an
/// inventory built from it has nothing of the machine in it (R-INV-3).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct InstalledApp {
    /// The app id.
    pub id: String,
    /// The current version's display name.
    pub name: String,
    /// The current version.
    pub version: String,
    /// The current version's package digest.
    pub digest: String,
    /// Whether agents may open it.
    pub enabled: bool,
    /// Every installed version, oldest first.
    pub versions: Vec<String>,
}

/// What a registry change did, for the command's output.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AppChange {
    /// The app id.
    pub id: String,
    /// The current version before the change, if the app was installed.
    pub from: Option<String>,
    /// The current version after it; `None` when removed.
    pub to: Option<String>,
    /// Whether agents may open it after the change.
    pub enabled: bool,
    /// The inventory revision counter after the change.
    pub revision: u64,
}

fn app_error(id: &str, reason: impl Into<String>) -> StoreError {
    StoreError::App {
        id: id.to_owned(),
        reason: reason.into(),
    }
}

fn hex(digest: &PackageDigest) -> String {
    digest
        .as_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The local app registry of a [`Store`] ([`Store::apps`]): tables `apps` and `app_versions`
/// and the package cache beside the database.
///
/// Invariants: a version's row commits only after its package is in the cache under its digest,
/// written and synced, and a package is checked against its digest and this store's limits
/// ([`Store::with_manifest_limits`]) at every read; each app has one current version, one of its
/// installed ones, which [`Apps::upgrade`] only moves to a newer one; every change commits in one
/// transaction together with a bump of the revision counter, and a refused install leaves
/// nothing behind.
#[derive(Debug, Clone, Copy)]
pub struct Apps<'s> {
    store: &'s Store,
}

impl<'s> Apps<'s> {
    /// The registry of `store`.
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// The package cache folder of this store.
    pub fn cache_dir(&self) -> PathBuf {
        self.store
            .path()
            .parent()
            .unwrap_or_else(|| Path::new("."))
            .join(PACKAGE_CACHE)
    }

    fn cache_file(&self, digest: &PackageDigest) -> PathBuf {
        self.cache_dir().join(format!("{}.tar", hex(digest)))
    }

    /// Writes the package's canonical tar under its digest, unless it is there already.
    fn put_in_cache(&self, package: &Package) -> Result<(), StoreError> {
        let dir = self.cache_dir();
        let io = |path: &Path| {
            let path = path.to_owned();
            move |source| StoreError::Io { path, source }
        };
        std::fs::create_dir_all(&dir).map_err(io(&dir))?;
        let target = self.cache_file(&package.digest());
        if target.exists() {
            // Content-addressed: a file there with the right bytes is this package; one with
            // other bytes is replaced.
            if self.read_cache(&package.digest()).is_ok() {
                return Ok(());
            }
        }
        let mut temp = tempfile_in(&dir).map_err(io(&dir))?;
        package
            .files()
            .write_tar(&mut temp.1)
            .and_then(|()| temp.1.flush())
            .and_then(|()| temp.1.sync_all())
            .map_err(io(&temp.0))?;
        std::fs::rename(&temp.0, &target).map_err(io(&target))?;
        std::fs::File::open(&dir)
            .and_then(|d| d.sync_all())
            .map_err(io(&dir))
    }

    /// Reads a cached package and checks it still has `digest`.
    fn read_cache(&self, digest: &PackageDigest) -> Result<Package, StoreError> {
        let path = self.cache_file(digest);
        let file = std::fs::File::open(&path).map_err(|source| StoreError::Io {
            path: path.clone(),
            source,
        })?;
        let files =
            PackageFiles::read_tar(std::io::BufReader::new(file), &PackageLimits::default())
                .map_err(StoreError::Package)?;
        digest.check(&files).map_err(StoreError::Package)?;
        Package::from_files(files, self.store.manifest_limits()).map_err(StoreError::Package)
    }

    /// `package` checked again against this store's limits ([`Store::with_manifest_limits`]),
    /// which may be lower than those it was read with.
    fn within_limits(&self, package: &Package) -> Result<(), StoreError> {
        Package::from_files(package.files().clone(), self.store.manifest_limits())
            .map(drop)
            .map_err(StoreError::Package)
    }

    /// Installs a package that is not installed yet, as its app's current, enabled version.
    ///
    /// # Errors
    /// [`StoreError::Package`] when it is over this store's limits
    /// ([`Store::with_manifest_limits`]); [`StoreError::App`] when the app is installed
    /// already (use [`Apps::upgrade`]).
    /// `signed_by` is the trusted key whose signature the caller checked, if it installed by
    /// signature; it is kept for the `signed-only` bundle policy.
    pub fn install(
        &self,
        package: &Package,
        signed_by: Option<&PublicKey>,
    ) -> Result<AppChange, StoreError> {
        self.within_limits(package)?;
        let id = package.id().as_str();
        let tx = self.store.write("begin app install")?;
        let installed: Option<String> = tx
            .query_row("SELECT current FROM apps WHERE id = ?1", [id], |r| r.get(0))
            .optional()
            .map_err(self.store.sqlite("select from apps"))?;
        if let Some(current) = installed {
            return Err(app_error(
                id,
                format!("version {current} is installed: upgrade it instead"),
            ));
        }
        // R-UI-9: no id equal ignoring case to one held, and no tombstoned id.
        crate::reserved::check_installable(self.store, &tx, id)?;
        // Under the write lock, after the checks: a refusal leaves no file behind.
        self.put_in_cache(package)?;
        insert_version(&tx, package, signed_by)
            .map_err(self.store.sqlite("insert into app_versions"))?;
        tx.execute(
            "INSERT INTO apps (id, current, enabled) VALUES (?1, ?2, 1)",
            (id, package.version().to_string()),
        )
        .map_err(self.store.sqlite("insert into apps"))?;
        let revision = crate::revision::bump(&tx).map_err(self.store.sqlite("update revision"))?;
        tx.commit()
            .map_err(self.store.sqlite("commit app install"))?;
        Ok(AppChange {
            id: id.to_owned(),
            from: None,
            to: Some(package.version().to_string()),
            enabled: true,
            revision,
        })
    }

    /// Makes a newer version of an installed app its current one; the version it replaces is
    /// kept for [`Apps::rollback`].
    ///
    /// # Errors
    /// [`StoreError::App`] when the app is not installed or the version is not newer.
    /// `signed_by` as for [`Apps::install`].
    pub fn upgrade(
        &self,
        package: &Package,
        signed_by: Option<&PublicKey>,
    ) -> Result<AppChange, StoreError> {
        self.within_limits(package)?;
        let id = package.id().as_str();
        let tx = self.store.write("begin app upgrade")?;
        let Some((current, enabled)) =
            current_of(&tx, id).map_err(self.store.sqlite("select from apps"))?
        else {
            return Err(app_error(id, "not installed: install it first"));
        };
        let newer = semver::Version::parse(&current)
            .map(|current| package.version().semver() > &current)
            .unwrap_or(false);
        if !newer {
            return Err(app_error(
                id,
                format!(
                    "version {} is not newer than the current {current}",
                    package.version()
                ),
            ));
        }
        self.put_in_cache(package)?;
        tx.execute(
            "DELETE FROM app_versions WHERE id = ?1 AND version = ?2",
            (id, package.version().to_string()),
        )
        .map_err(self.store.sqlite("delete from app_versions"))?;
        insert_version(&tx, package, signed_by)
            .map_err(self.store.sqlite("insert into app_versions"))?;
        tx.execute(
            "UPDATE apps SET current = ?2 WHERE id = ?1",
            (id, package.version().to_string()),
        )
        .map_err(self.store.sqlite("update apps"))?;
        let revision = crate::revision::bump(&tx).map_err(self.store.sqlite("update revision"))?;
        tx.commit()
            .map_err(self.store.sqlite("commit app upgrade"))?;
        Ok(AppChange {
            id: id.to_owned(),
            from: Some(current),
            to: Some(package.version().to_string()),
            enabled,
            revision,
        })
    }

    /// Makes the version installed before the current one current again; the current one is
    /// forgotten (a later upgrade installs it anew).
    ///
    /// # Errors
    /// [`StoreError::App`] when the app is not installed or has no earlier version.
    pub fn rollback(&self, id: &str) -> Result<AppChange, StoreError> {
        let tx = self.store.write("begin app rollback")?;
        let Some((current, enabled)) =
            current_of(&tx, id).map_err(self.store.sqlite("select from apps"))?
        else {
            return Err(app_error(id, "not installed"));
        };
        let previous: Option<String> = tx
            .query_row(
                "SELECT version FROM app_versions WHERE id = ?1 AND seq < \
                 (SELECT seq FROM app_versions WHERE id = ?1 AND version = ?2) \
                 ORDER BY seq DESC LIMIT 1",
                (id, &current),
                |r| r.get(0),
            )
            .optional()
            .map_err(self.store.sqlite("select from app_versions"))?;
        let Some(previous) = previous else {
            return Err(app_error(
                id,
                format!("version {current} is the only one installed: nothing to roll back to"),
            ));
        };
        // The version to go back to must still verify before it is made current.
        let digest: String = tx
            .query_row(
                "SELECT digest FROM app_versions WHERE id = ?1 AND version = ?2",
                (id, &previous),
                |r| r.get(0),
            )
            .map_err(self.store.sqlite("select from app_versions"))?;
        let digest = PackageDigest::parse(&digest).map_err(StoreError::Package)?;
        self.read_cache(&digest)?;
        tx.execute(
            "DELETE FROM app_versions WHERE id = ?1 AND version = ?2",
            (id, &current),
        )
        .map_err(self.store.sqlite("delete from app_versions"))?;
        tx.execute(
            "UPDATE apps SET current = ?2 WHERE id = ?1",
            (id, &previous),
        )
        .map_err(self.store.sqlite("update apps"))?;
        let revision = crate::revision::bump(&tx).map_err(self.store.sqlite("update revision"))?;
        tx.commit()
            .map_err(self.store.sqlite("commit app rollback"))?;
        Ok(AppChange {
            id: id.to_owned(),
            from: Some(current),
            to: Some(previous),
            enabled,
            revision,
        })
    }

    /// Enables or disables an installed app.
    ///
    /// # Errors
    /// [`StoreError::App`] when it is not installed or already so.
    pub fn set_enabled(&self, id: &str, enabled: bool) -> Result<AppChange, StoreError> {
        let tx = self.store.write("begin app enable")?;
        let Some((current, was)) =
            current_of(&tx, id).map_err(self.store.sqlite("select from apps"))?
        else {
            return Err(app_error(id, "not installed"));
        };
        if was == enabled {
            return Err(app_error(
                id,
                if enabled {
                    "already enabled"
                } else {
                    "already disabled"
                },
            ));
        }
        tx.execute(
            "UPDATE apps SET enabled = ?2 WHERE id = ?1",
            (id, i64::from(enabled)),
        )
        .map_err(self.store.sqlite("update apps"))?;
        let revision = crate::revision::bump(&tx).map_err(self.store.sqlite("update revision"))?;
        tx.commit()
            .map_err(self.store.sqlite("commit app enable"))?;
        Ok(AppChange {
            id: id.to_owned(),
            from: Some(current.clone()),
            to: Some(current),
            enabled,
            revision,
        })
    }

    /// Removes an app and all its versions; cache files no other version names are deleted.
    ///
    /// # Errors
    /// [`StoreError::App`] when it is not installed.
    pub fn remove(&self, id: &str) -> Result<AppChange, StoreError> {
        let tx = self.store.write("begin app remove")?;
        let Some((current, _)) =
            current_of(&tx, id).map_err(self.store.sqlite("select from apps"))?
        else {
            return Err(app_error(id, "not installed"));
        };
        let digests: Vec<String> = {
            let mut statement = tx
                .prepare("SELECT digest FROM app_versions WHERE id = ?1")
                .map_err(self.store.sqlite("select from app_versions"))?;
            let rows = statement
                .query_map([id], |r| r.get(0))
                .map_err(self.store.sqlite("select from app_versions"))?;
            rows.collect::<Result<_, _>>()
                .map_err(self.store.sqlite("select from app_versions"))?
        };
        tx.execute("DELETE FROM app_versions WHERE id = ?1", [id])
            .map_err(self.store.sqlite("delete from app_versions"))?;
        tx.execute("DELETE FROM apps WHERE id = ?1", [id])
            .map_err(self.store.sqlite("delete from apps"))?;
        tx.execute(
            "INSERT OR REPLACE INTO apps_removed (id, removed_at) VALUES (?1, ?2)",
            (id, now_rfc3339()),
        )
        .map_err(self.store.sqlite("insert into apps_removed"))?;
        let revision = crate::revision::bump(&tx).map_err(self.store.sqlite("update revision"))?;
        let orphans = self.orphans(&tx, digests)?;
        tx.commit()
            .map_err(self.store.sqlite("commit app remove"))?;
        self.delete_from_cache(orphans);
        Ok(AppChange {
            id: id.to_owned(),
            from: Some(current),
            to: None,
            enabled: false,
            revision,
        })
    }

    /// Those of `digests` that no version names any more, in `tx`.
    fn orphans(
        &self,
        tx: &rusqlite::Transaction<'_>,
        digests: Vec<String>,
    ) -> Result<Vec<String>, StoreError> {
        let mut orphans = Vec::new();
        for digest in digests {
            let used: bool = tx
                .query_row(
                    "SELECT EXISTS (SELECT 1 FROM app_versions WHERE digest = ?1)",
                    [&digest],
                    |r| r.get(0),
                )
                .map_err(self.store.sqlite("select from app_versions"))?;
            if !used {
                orphans.push(digest);
            }
        }
        Ok(orphans)
    }

    /// Deletes cache files, after the commit that stopped naming them: a crash before this
    /// leaves a file no row names, which is harmless.
    fn delete_from_cache(&self, digests: Vec<String>) {
        for digest in digests {
            if let Ok(digest) = PackageDigest::parse(&digest) {
                let _ = std::fs::remove_file(self.cache_file(&digest));
            }
        }
    }

    /// Every installed app, by id.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`].
    pub fn list(&self) -> Result<Vec<InstalledApp>, StoreError> {
        let rows = self.store.select_all(
            "select from apps",
            "SELECT a.id, v.name, a.current, v.digest, a.enabled, \
               (SELECT group_concat(version, char(10)) FROM \
                  (SELECT version FROM app_versions WHERE id = a.id ORDER BY seq)) \
             FROM apps a JOIN app_versions v ON v.id = a.id AND v.version = a.current \
             ORDER BY a.id",
            [],
            |r| {
                let versions: Option<String> = r.get(5)?;
                Ok(InstalledApp {
                    id: r.get(0)?,
                    name: r.get(1)?,
                    version: r.get(2)?,
                    digest: r.get(3)?,
                    enabled: r.get::<_, i64>(4)? != 0,
                    versions: versions
                        .unwrap_or_default()
                        .split('\n')
                        .filter(|v| !v.is_empty())
                        .map(str::to_owned)
                        .collect(),
                })
            },
        )?;
        Ok(rows)
    }

    /// The current version of app `id` if it is installed and enabled, read from the cache and
    /// verified against its recorded digest: the bytes to serve from memory.
    ///
    /// # Errors
    /// [`StoreError::App`] when it is not installed or disabled; [`StoreError::Package`] (a
    /// digest mismatch) or [`StoreError::Io`] when its cache file was changed or lost.
    pub fn load(&self, id: &str) -> Result<Package, StoreError> {
        let row: Option<(String, i64)> = self
            .store
            .conn()
            .query_row(
                "SELECT v.digest, a.enabled FROM apps a JOIN app_versions v \
                 ON v.id = a.id AND v.version = a.current WHERE a.id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(self.store.sqlite("select from apps"))?;
        let Some((digest, enabled)) = row else {
            return Err(app_error(id, "not installed"));
        };
        if enabled == 0 {
            return Err(app_error(id, "disabled"));
        }
        let digest = PackageDigest::parse(&digest).map_err(StoreError::Package)?;
        self.read_cache(&digest)
    }

    /// Verifies every installed version's cache file against its recorded digest; returns the
    /// `(id, version, error)` of each that fails. A host runs this at start.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`].
    pub fn verify(&self) -> Result<Vec<(String, String, StoreError)>, StoreError> {
        let versions = self.store.select_all(
            "select from app_versions",
            "SELECT id, version, digest FROM app_versions ORDER BY id, seq",
            [],
            |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                ))
            },
        )?;
        let mut failed = Vec::new();
        for (id, version, digest) in versions {
            let checked = PackageDigest::parse(&digest)
                .map_err(StoreError::Package)
                .and_then(|d| self.read_cache(&d).map(drop));
            if let Err(e) = checked {
                failed.push((id, version, e));
            }
        }
        Ok(failed)
    }

    /// The key app `app`'s current version was installed with, if any.
    fn signed_by(&self, app: &InstalledApp) -> Option<String> {
        self.store
            .conn()
            .query_row(
                "SELECT signed_by FROM app_versions WHERE id = ?1 AND version = ?2",
                (app.id.as_str(), app.version.as_str()),
                |r| r.get(0),
            )
            .unwrap_or(None)
    }
}

/// A new file in `dir` opened for writing, named to be invisible to the cache.
fn tempfile_in(dir: &Path) -> std::io::Result<(PathBuf, std::fs::File)> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    // `create_new`: two writers never share a file, whatever the name.
    let path = dir.join(format!(".incoming-{}-{nanos}", std::process::id()));
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)?;
    Ok((path, file))
}

fn insert_version(
    tx: &rusqlite::Transaction<'_>,
    package: &Package,
    signed_by: Option<&PublicKey>,
) -> rusqlite::Result<usize> {
    tx.execute(
        "INSERT INTO app_versions (id, version, name, digest, installed_at, seq, signed_by) \
         VALUES (?1, ?2, ?3, ?4, ?5, \
                 (SELECT coalesce(max(seq), 0) + 1 FROM app_versions WHERE id = ?1), ?6)",
        (
            package.id().as_str(),
            package.version().to_string(),
            package.name(),
            package.digest().to_string(),
            now_rfc3339(),
            signed_by.map(ToString::to_string),
        ),
    )
}

fn current_of(
    tx: &rusqlite::Transaction<'_>,
    id: &str,
) -> rusqlite::Result<Option<(String, bool)>> {
    tx.query_row(
        "SELECT current, enabled FROM apps WHERE id = ?1",
        [id],
        |r| Ok((r.get(0)?, r.get::<_, i64>(1)? != 0)),
    )
    .optional()
}

/// The registry as the kernel's app catalog (R-UI-9): only enabled apps whose cached bytes
/// still verify are listed or opened; everything is read and verified at the moment it is
/// asked for, so a change by another process is seen at once.
impl AppCatalog for Store {
    fn change_marker(&self) -> Option<u64> {
        self.revisions().counter().ok()
    }

    fn applications(&self) -> Vec<ListedApp> {
        let registry = self.apps();
        let Ok(apps) = registry.list() else {
            return Vec::new();
        };
        apps.iter()
            .filter(|app| app.enabled)
            // Read and verified at every listing: bytes that fail are not listed (R-INV-3).
            .filter_map(|app| Some((registry.load(&app.id).ok()?, registry.signed_by(app))))
            .map(|(package, signed_by)| ListedApp {
                app: package.inventory_app(),
                signed_by,
            })
            .collect()
    }

    fn resolve(
        &self,
        id: &AppId,
        version: Option<&AppVersion>,
        surface: &SurfaceId,
    ) -> Result<ResolvedSurface, CatalogRefusal> {
        let package = match self.apps().load(id.as_str()) {
            Ok(package) => package,
            Err(StoreError::App { .. }) => {
                // Not loadable: installed but disabled, removed once, or never installed; an id
                // held in another case is refused as the held one is (R-UI-9).
                return Err(match crate::reserved::reservation_in(self.conn(), id.as_str()) {
                    Ok(Some((_, Held::Removed))) => CatalogRefusal::Removed,
                    Ok(Some((_, Held::Disabled))) => CatalogRefusal::Disabled,
                    Ok(Some((held, Held::Enabled))) => CatalogRefusal::Unavailable(format!(
                        "the app center holds it as {held}; ids are compared ignoring ASCII case, open it by that id"
                    )),
                    Ok(None) => CatalogRefusal::Unknown,
                    Err(e) => CatalogRefusal::Unavailable(e.to_string()),
                });
            }
            // Bytes that match their digest but not this store's limits (R-SEC-3a's code limit,
            // lower than the one it was installed under): over a limit, not tampered.
            Err(StoreError::Package(e @ PackageError::Manifest { .. })) => {
                return Err(CatalogRefusal::OverLimit(e.to_string()))
            }
            Err(StoreError::Package(_)) => return Err(CatalogRefusal::Tampered),
            Err(e) => return Err(CatalogRefusal::Unavailable(e.to_string())),
        };
        let signed_by: Option<String> = self
            .conn()
            .query_row(
                "SELECT signed_by FROM app_versions WHERE id = ?1 AND version = ?2",
                (id.as_str(), package.version().to_string()),
                |r| r.get(0),
            )
            .unwrap_or(None);
        package.resolve(version, surface, signed_by)
    }

    fn reservation(&self, id: &AppId) -> Option<Reservation> {
        match self.app_ids().reservation(id.as_str()) {
            Ok(found) => found,
            // Unreadable: the id is treated as held and enabled, so no inline bundle passes
            // (fail closed).
            Err(_) => Some(Reservation::Enabled(id.clone())),
        }
    }
}

impl From<PackageError> for StoreError {
    fn from(error: PackageError) -> Self {
        StoreError::Package(error)
    }
}
