//! What `lineup preview` shows and watches: a bundle folder or a bundle JSON file read into one
//! inline app and its state, read again whenever its files change (debounced), with the size and
//! `integrity` report an author needs (R-UI-2, R-UI-2a, R-UI-6a).

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use lineup_host_core::{
    AppId, ConversationId, Envelope, InlineApp, InstalledSurface, InstanceId, Integrity,
    JsonObject, Limits, Message, MessageId, Party, PartyId, SurfaceId, SurfaceSource, UiOpen,
    UiPatch,
};
use lineup_packages::Package;
use notify::Watcher;

use crate::error::{refused, AuthoringError};
use crate::folder::{BundleFolder, OpenOptions, FILES};

/// How long a preview waits after the last file event before it reads the files again, so one
/// editor save (often a write, a rename and a metadata change) is one reload.
pub const DEBOUNCE: Duration = Duration::from_millis(150);

/// What a preview shows: a bundle folder, an app package folder (with `manifest.json`), or a
/// JSON file holding a `ui.open` envelope (as `lineup bundle` prints it) or just its `app`
/// object (`lineup bundle --app-only`).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PreviewSource {
    /// A folder of `index.html`, `style.css`, `script.js` and optionally `state.json`.
    Folder(PathBuf),
    /// A `ui.open` envelope or an `app` object, as JSON.
    Json(PathBuf),
    /// An app package folder: `manifest.json` and the files it names, previewed as the
    /// installed app would run (R-SEC-3a), without installing it; the Surface named, else
    /// `main`, else the first.
    Package(PathBuf, Option<SurfaceId>),
}

/// One reading of a [`PreviewSource`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct PreviewBundle {
    /// The app, its bundle inline, `integrity` as declared (a JSON file) or computed (a folder).
    pub app: InlineApp,
    /// The instance id the preview opens it under.
    pub instance_id: InstanceId,
    /// For an app package folder: the package, opened by id as an installed app would be.
    pub package: Option<PackageReading>,
    /// What the author should know but the host does not refuse (a library script ending in a
    /// line comment), one line each.
    pub warnings: Vec<String>,
}

/// An app package as a preview read it: the package and the Surface it opens.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct PackageReading {
    /// The package, checked as an install would check it.
    pub package: Arc<Package>,
    /// The Surface the preview opens: `main`, else the package's first.
    pub surface: SurfaceId,
}

impl PartialEq for PackageReading {
    /// The same Surface of a package with the same digest (every file, R-SEC-7).
    fn eq(&self, other: &Self) -> bool {
        self.surface == other.surface
            && self.package.digest().as_bytes() == other.package.digest().as_bytes()
    }
}

impl PreviewSource {
    /// A package folder when `path` is a directory with a `manifest.json`, a bundle folder
    /// when it is another directory, else a JSON file; `Err` when it does not exist.
    pub fn new(path: impl AsRef<Path>) -> Result<Self, AuthoringError> {
        let path = path.as_ref().to_path_buf();
        match std::fs::metadata(&path) {
            Ok(meta) if meta.is_dir() && crate::package::is_package(&path) => {
                Ok(Self::Package(path, None))
            }
            Ok(meta) if meta.is_dir() => Ok(Self::Folder(path)),
            Ok(_) => Ok(Self::Json(path)),
            Err(source) => Err(AuthoringError::Read { path, source }),
        }
    }

    /// For an app package folder: open its Surface `surface` (`Err` for any other source).
    pub fn with_surface(self, surface: SurfaceId) -> Result<Self, AuthoringError> {
        match self {
            Self::Package(path, _) => Ok(Self::Package(path, Some(surface))),
            other => Err(refused(
                other.path().display().to_string(),
                "is no app package folder (no manifest.json): a Surface is chosen only in a package",
            )),
        }
    }

    /// The folder or file.
    pub fn path(&self) -> &Path {
        match self {
            Self::Folder(path) | Self::Json(path) | Self::Package(path, _) => path,
        }
    }

    /// Reads and checks the code: a folder as [`BundleFolder::read_bundle`] does (R-UI-6a), a
    /// JSON file as one `ui.open` envelope or `app` object with an inline bundle. The size is
    /// not checked here: see [`SizeReport`].
    pub fn read(&self) -> Result<PreviewBundle, AuthoringError> {
        match self {
            Self::Folder(path) => {
                let (bundle, warnings) = BundleFolder::read_code(path)?;
                // The defaults of `lineup bundle`, from the folder's name.
                let named = BundleFolder::from_parts(path.clone(), bundle, None);
                let options = OpenOptions::for_folder(&named)?;
                Ok(PreviewBundle {
                    app: named.app(&options),
                    instance_id: options.instance_id,
                    package: None,
                    warnings,
                })
            }
            Self::Json(path) => read_json(path),
            Self::Package(path, surface) => read_package(path, surface.as_ref()),
        }
    }

    /// The state to show: a folder's `state.json` (`None` without one), a JSON file's
    /// `payload.state`; none for a package, which holds only the files its manifest names.
    /// `Err` names the file and the position of a bad one (R-UI-3).
    pub fn read_state(&self) -> Result<Option<JsonObject>, AuthoringError> {
        match self {
            Self::Package(..) => Ok(None),
            Self::Folder(path) => {
                let file = path.join("state.json");
                if file.is_file() {
                    BundleFolder::read_state(&file).map(Some)
                } else {
                    Ok(None)
                }
            }
            Self::Json(path) => {
                let value = read_json_value(path)?;
                match value.get("payload").and_then(|p| p.get("state")) {
                    None | Some(serde_json::Value::Null) => Ok(None),
                    Some(state) => serde_json::from_value::<JsonObject>(state.clone())
                        .map(Some)
                        .map_err(|e| {
                            refused(
                                format!("{}: payload.state", path.display()),
                                format!("is not one JSON object: {e} (R-UI-3)"),
                            )
                        }),
                }
            }
        }
    }

    /// Watches the source's files and calls `changed` once per burst of changes, after
    /// `debounce` without a further one; the watcher stops when the returned value is dropped.
    /// Only the bundle's own files count (a folder's [`FILES`], or the JSON file).
    pub fn watch(
        &self,
        debounce: Duration,
        mut changed: impl FnMut() + Send + 'static,
    ) -> Result<SourceWatcher, AuthoringError> {
        // A package's every file counts (its manifest names them, assets included).
        let (dir, names): (PathBuf, Vec<std::ffi::OsString>) = match self {
            Self::Package(path, _) => (path.clone(), Vec::new()),
            Self::Folder(path) => (path.clone(), FILES.iter().map(Into::into).collect()),
            Self::Json(path) => (
                path.parent()
                    .filter(|p| !p.as_os_str().is_empty())
                    .map_or_else(|| PathBuf::from("."), Path::to_path_buf),
                path.file_name()
                    .map(ToOwned::to_owned)
                    .into_iter()
                    .collect(),
            ),
        };
        let (tx, rx) = mpsc::channel::<()>();
        let mut watcher =
            notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                let Ok(event) = event else { return };
                if matches!(event.kind, notify::EventKind::Access(_)) {
                    return;
                }
                let ours = names.is_empty()
                    || event.paths.iter().any(|p| {
                        p.file_name()
                            .is_some_and(|n| names.iter().any(|name| name.as_os_str() == n))
                    });
                if ours {
                    let _ = tx.send(());
                }
            })
            .map_err(|e| watch_error(&dir, e))?;
        let mode = if matches!(self, Self::Package(..)) {
            notify::RecursiveMode::Recursive
        } else {
            notify::RecursiveMode::NonRecursive
        };
        watcher
            .watch(&dir, mode)
            .map_err(|e| watch_error(&dir, e))?;
        std::thread::Builder::new()
            .name("lineup-preview-watch".into())
            .spawn(move || {
                // Ends when the watcher, and with it the sender, is dropped.
                while rx.recv().is_ok() {
                    loop {
                        match rx.recv_timeout(debounce) {
                            Ok(()) => continue,
                            Err(mpsc::RecvTimeoutError::Timeout) => break,
                            Err(mpsc::RecvTimeoutError::Disconnected) => return,
                        }
                    }
                    changed();
                }
            })
            .map_err(|source| AuthoringError::Read {
                path: dir.clone(),
                source,
            })?;
        Ok(SourceWatcher { _watcher: watcher })
    }
}

fn watch_error(dir: &Path, e: notify::Error) -> AuthoringError {
    refused(
        dir.display().to_string(),
        format!("cannot be watched for changes: {e}"),
    )
}

/// Watches a [`PreviewSource`] while it lives.
pub struct SourceWatcher {
    _watcher: notify::RecommendedWatcher,
}

impl fmt::Debug for SourceWatcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SourceWatcher")
    }
}

fn read_json_value(path: &Path) -> Result<serde_json::Value, AuthoringError> {
    let text = std::fs::read_to_string(path).map_err(|source| AuthoringError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|e| {
        refused(
            format!("{}:{}:{}", path.display(), e.line(), e.column()),
            format!("is not JSON: {e}"),
        )
    })
}

/// A `ui.open` envelope (its `payload.app` and `payload.instance_id`) or an `app` object.
fn read_json(path: &Path) -> Result<PreviewBundle, AuthoringError> {
    let value = read_json_value(path)?;
    let at = |field: &str| format!("{}: {field}", path.display());
    let (app, instance) = match value.get("payload") {
        Some(payload) => (
            payload.get("app").cloned().unwrap_or_default(),
            payload.get("instance_id").cloned(),
        ),
        None => (value, None),
    };
    let app = match serde_json::from_value::<SurfaceSource>(app) {
        Ok(SurfaceSource::Inline(app)) => app,
        Ok(SurfaceSource::Installed(_)) => {
            return Err(refused(
                at("app"),
                "names an installed app; a preview needs the bundle inline (html, css, js)",
            ))
        }
        Err(e) => {
            return Err(refused(
                at("app"),
                format!("is not an inline app: {e} (R-UI-2)"),
            ))
        }
    };
    let instance_id = match instance {
        Some(id) => serde_json::from_value::<InstanceId>(id)
            .map_err(|e| refused(at("payload.instance_id"), e.to_string()))?,
        None => default_instance(&app.id),
    };
    crate::source::check_js("script.js", app.bundle.js())?;
    Ok(PreviewBundle {
        app,
        instance_id,
        package: None,
        warnings: Vec::new(),
    })
}

/// A package folder: its Surface `surface` (else `main`, else its first), under the Surface's
/// id as instance id.
fn read_package(path: &Path, surface: Option<&SurfaceId>) -> Result<PreviewBundle, AuthoringError> {
    let package = crate::package::read_package(path)?;
    let surface = match surface {
        Some(asked) if package.surfaces().contains_key(asked) => asked.clone(),
        Some(asked) => {
            let names: Vec<&str> = package.surfaces().keys().map(SurfaceId::as_str).collect();
            return Err(refused(
                path.display().to_string(),
                format!("has no Surface {asked}; it has {}", names.join(", ")),
            ));
        }
        None => crate::package::default_surface(&package)
            .ok_or_else(|| refused(path.display().to_string(), "has no Surface"))?,
    };
    let app = package
        .inline_app(&surface)
        .ok_or_else(|| refused(path.display().to_string(), "lost its Surface"))?;
    let instance_id = InstanceId::try_from(surface.as_str().to_owned())
        .unwrap_or_else(|_| default_instance(&app.id));
    Ok(PreviewBundle {
        app,
        instance_id,
        package: Some(PackageReading {
            package: Arc::new(package),
            surface,
        }),
        warnings: Vec::new(),
    })
}

/// The app id's last label as the instance id, else `surface`.
fn default_instance(app: &AppId) -> InstanceId {
    let last = app.as_str().rsplit('.').next().unwrap_or_default();
    InstanceId::try_from(last.to_owned())
        .or_else(|_| InstanceId::try_from("surface".to_owned()))
        .unwrap_or_else(|_| unreachable_instance())
}

#[allow(clippy::panic)]
fn unreachable_instance() -> InstanceId {
    panic!("\"surface\" is a valid instance id")
}

impl PreviewBundle {
    /// The size of the code against `limits.max_bundle_bytes` (R-UI-2) and its `integrity`
    /// (R-UI-2a).
    pub fn size_report(&self, limits: &Limits) -> SizeReport {
        SizeReport {
            size: self.app.bundle.len(),
            limit: limits.max_bundle_bytes,
            integrity: self.app.bundle.digest(),
            declared: self.app.integrity,
        }
    }

    /// The `lineup.v1.ui.open` that opens it with `state`, as an agent would send it: inline,
    /// or by app id for a package (to be served by a [`PreviewCatalog`](crate::PreviewCatalog)).
    pub fn ui_open(
        &self,
        conversation: &ConversationId,
        state: Option<JsonObject>,
    ) -> Result<Message, AuthoringError> {
        Ok(Message::UiOpen(Envelope {
            id: message_id(format!("open-{}", self.instance_id))?,
            conversation_id: conversation.clone(),
            sender: agent()?,
            target: None,
            payload: UiOpen {
                instance_id: self.instance_id.clone(),
                // A package opens by id, as an installed app (R-UI-9); the rest inline.
                app: match &self.package {
                    Some(reading) => SurfaceSource::Installed(InstalledSurface {
                        id: self.app.id.clone(),
                        version: None,
                        surface: reading.surface.clone(),
                    }),
                    None => SurfaceSource::Inline(self.app.clone()),
                },
                state,
            },
        }))
    }

    /// The `lineup.v1.ui.patch` that gives it `state`, numbered `n`.
    pub fn ui_patch(
        &self,
        conversation: &ConversationId,
        state: JsonObject,
        n: u64,
    ) -> Result<Message, AuthoringError> {
        Ok(Message::UiPatch(Envelope {
            id: message_id(format!("patch-{n}"))?,
            conversation_id: conversation.clone(),
            sender: agent()?,
            target: None,
            payload: UiPatch {
                instance_id: self.instance_id.clone(),
                state,
            },
        }))
    }
}

fn message_id(id: String) -> Result<MessageId, AuthoringError> {
    MessageId::try_from(id).map_err(|e| refused("message id", e.to_string()))
}

fn agent() -> Result<Party, AuthoringError> {
    let id = |s: &str| PartyId::try_from(s).map_err(|e| refused("sender", e.to_string()));
    Ok(Party {
        kind: id("agent")?,
        id: id("preview")?,
    })
}

/// A bundle's size against the limit, and its integrity (R-UI-2, R-UI-2a).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SizeReport {
    /// The UTF-8 bytes of html + css + js.
    pub size: usize,
    /// `Limits::max_bundle_bytes`.
    pub limit: usize,
    /// The computed `integrity`.
    pub integrity: Integrity,
    /// The `integrity` the JSON file declared, if any.
    pub declared: Option<Integrity>,
}

impl SizeReport {
    /// Whether the bundle is over the limit: the host would refuse it (R-UI-2).
    pub fn is_over(&self) -> bool {
        self.size > self.limit
    }

    /// Whether a declared `integrity` differs from the bundle's: the host would refuse it
    /// (R-SEC-7).
    pub fn integrity_mismatch(&self) -> bool {
        self.declared.as_ref().is_some_and(|d| *d != self.integrity)
    }
}

impl fmt::Display for SizeReport {
    /// `bundle: 1234 of 163840 bytes (0.8%), integrity sha256-…`, with what is wrong appended.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "bundle: {} of {} bytes ({:.1}%), integrity {}",
            self.size,
            self.limit,
            self.size as f64 * 100.0 / self.limit.max(1) as f64,
            self.integrity
        )?;
        if self.is_over() {
            write!(
                f,
                "; OVER THE LIMIT by {} bytes: the host refuses it (R-UI-2)",
                self.size - self.limit
            )?;
        }
        if let (true, Some(declared)) = (self.integrity_mismatch(), &self.declared) {
            write!(
                f,
                "; the declared integrity {declared} does not match: the host refuses it (R-SEC-7)"
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lineup_host_core::InlineBundle;

    fn dir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("lineup-preview-src-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_folder_reads_its_code_even_while_its_state_file_is_broken() {
        let d = dir("broken-state").join("Clock");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("index.html"), "<p id=t></p>").unwrap();
        std::fs::write(d.join("state.json"), "{\"a\":").unwrap();
        let source = PreviewSource::new(&d).unwrap();
        let bundle = source.read().unwrap();
        assert_eq!(bundle.instance_id.as_str(), "Clock");
        assert_eq!(bundle.app.integrity, Some(bundle.app.bundle.digest()));
        let err = source.read_state().unwrap_err().to_string();
        assert!(
            err.contains("state.json:1:") && err.contains("R-UI-3"),
            "{err}"
        );
        std::fs::write(d.join("state.json"), "{\"a\":1}").unwrap();
        assert_eq!(source.read_state().unwrap().unwrap().to_json(), "{\"a\":1}");
    }

    #[test]
    fn a_json_file_is_an_envelope_or_an_app_object() {
        let d = dir("json");
        let app = serde_json::json!({"id": "com.example.clock", "version": "1.0.0",
            "html": "<p>x</p>", "css": "", "js": ""});
        let file = d.join("app.json");
        std::fs::write(&file, app.to_string()).unwrap();
        let source = PreviewSource::new(&file).unwrap();
        assert!(matches!(source, PreviewSource::Json(_)));
        let bundle = source.read().unwrap();
        assert_eq!(bundle.instance_id.as_str(), "clock");
        assert_eq!(source.read_state().unwrap(), None);
        let envelope = serde_json::json!({"payload": {"instance_id": "c1", "app": app,
            "state": {"n": 2}}});
        std::fs::write(&file, envelope.to_string()).unwrap();
        assert_eq!(source.read().unwrap().instance_id.as_str(), "c1");
        assert_eq!(source.read_state().unwrap().unwrap().to_json(), "{\"n\":2}");
        std::fs::write(&file, "{\"payload\": {\"app\": {\"id\": 3}}}").unwrap();
        let err = source.read().unwrap_err().to_string();
        assert!(err.contains("app: is not an inline app"), "{err}");
    }

    #[test]
    fn r_ui_2_the_size_report_names_the_size_the_limit_and_the_integrity() {
        let bundle = PreviewBundle {
            app: InlineApp {
                id: AppId::try_from("com.example.big").unwrap(),
                name: None,
                version: lineup_host_core::AppVersion::try_from("1.0.0").unwrap(),
                integrity: None,
                bundle: InlineBundle::new("x".repeat(2000), "", "").unwrap(),
            },
            instance_id: InstanceId::try_from("big".to_owned()).unwrap(),
            package: None,
            warnings: Vec::new(),
        };
        let mut limits = Limits::default();
        let report = bundle.size_report(&limits);
        assert!(!report.is_over());
        assert!(
            report
                .to_string()
                .starts_with("bundle: 2000 of 163840 bytes (1.2%), integrity sha256-"),
            "{report}"
        );
        limits.max_bundle_bytes = 1000;
        let report = bundle.size_report(&limits);
        assert!(report.is_over() && report.to_string().contains("by 1000 bytes"));
    }
}
