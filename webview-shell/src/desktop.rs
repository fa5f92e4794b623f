//! The desktop the built-ins act on: the [`Desktop`] trait, its real implementation
//! ([`SystemDesktop`]), what a chooser or a save dialog is asked ([`ChooseFile`], [`SaveFile`])
//! and answers ([`PickedFile`], [`SaveLocation`], [`SavedFile`]), and the [`Deadline`] that ends
//! a dialog (R-CAP-4, R-SEC-5).

use std::fmt;
use std::fs::File;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use lineup_host_core::Fingerprint;

/// How long an interactive desktop effect (a chooser, a save dialog) may take, and whether the
/// host took it back (the call expired). Clones share the withdrawal.
#[derive(Debug, Clone)]
pub struct Deadline {
    at: Instant,
    withdrawn: Arc<AtomicBool>,
}

impl Deadline {
    /// A deadline `after` from now.
    pub fn after(after: Duration) -> Self {
        Self {
            at: Instant::now() + after,
            withdrawn: Arc::default(),
        }
    }

    /// When it passes.
    pub fn at(&self) -> Instant {
        self.at
    }

    /// Whether it passed or was withdrawn: the dialog should go away and nothing be done.
    pub fn is_over(&self) -> bool {
        self.is_withdrawn() || Instant::now() >= self.at
    }

    /// Whether the host took the request back.
    pub fn is_withdrawn(&self) -> bool {
        self.withdrawn.load(Ordering::SeqCst)
    }

    /// Takes the request back.
    pub fn withdraw(&self) {
        self.withdrawn.store(true, Ordering::SeqCst);
    }

    /// The time left, zero once over.
    pub fn remaining(&self) -> Duration {
        if self.is_withdrawn() {
            return Duration::ZERO;
        }
        self.at.saturating_duration_since(Instant::now())
    }
}

/// What `device.pick_file` asks of the desktop: a modal, host-owned file chooser.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ChooseFile {
    /// A file larger than this is refused with [`DesktopError::TooLarge`].
    pub max_bytes: u64,
    /// When the chooser must go away unanswered.
    pub until: Deadline,
}

/// What `artifact.save` asks of the desktop: a save dialog suggesting a sanitized name, shown
/// as part of the call's decision (where the file goes is the user's choice) and gone by the
/// call's deadline. `Debug` shows the name, the agent's argument, as a [`Fingerprint`] (logs
/// reach journald).
#[derive(Clone)]
#[non_exhaustive]
pub struct SaveFile {
    /// The file name to suggest, already sanitized
    /// (the built-in's `sanitize_file_name`).
    pub suggested_name: String,
    /// When the dialog must go away unanswered.
    pub until: Deadline,
}

impl ChooseFile {
    /// A chooser for a file of at most `max_bytes`, gone by `until`.
    pub fn new(max_bytes: u64, until: Deadline) -> Self {
        Self { max_bytes, until }
    }
}

impl SaveFile {
    /// A save dialog suggesting `suggested_name` (already sanitized), gone by `until`.
    pub fn new(suggested_name: impl Into<String>, until: Deadline) -> Self {
        Self {
            suggested_name: suggested_name.into(),
            until,
        }
    }
}

impl fmt::Debug for SaveFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SaveFile")
            .field("suggested_name", &Fingerprint::of(&self.suggested_name))
            .finish_non_exhaustive()
    }
}

/// Where the user chose to save (`artifact.save`'s dialog): a path that stays in the host; only
/// its final name ever reaches the agent. `Debug` shows the path as a [`Fingerprint`].
#[derive(Clone, PartialEq, Eq)]
pub struct SaveLocation {
    path: PathBuf,
}

impl SaveLocation {
    /// The location `path`.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// The path chosen.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Its final name, without the folder.
    pub fn name(&self) -> String {
        self.path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }
}

impl fmt::Debug for SaveLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("SaveLocation")
            .field(&Fingerprint::of(self.path.to_string_lossy().as_ref()))
            .finish()
    }
}

/// A file the user picked: its name (never a path), size, MIME type and content. `Debug` shows
/// the name and the content, the capability's result, as [`Fingerprint`]s (logs reach journald).
#[derive(Clone, PartialEq, Eq)]
pub struct PickedFile {
    name: String,
    mime_type: String,
    bytes: Vec<u8>,
}

impl PickedFile {
    /// A picked file called `name` (a final path component is kept if a path is given) with
    /// `bytes`; the MIME type is guessed from the name's extension
    /// (`application/octet-stream` when unknown).
    pub fn new(name: &str, bytes: Vec<u8>) -> Self {
        let name = name
            .rsplit(['/', '\\'])
            .next()
            .unwrap_or_default()
            .to_owned();
        let mime_type = mime_guess::from_path(&name)
            .first_or_octet_stream()
            .essence_str()
            .to_owned();
        Self {
            name,
            mime_type,
            bytes,
        }
    }

    /// The file's name, without its folder.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its size in bytes.
    pub fn size(&self) -> u64 {
        self.bytes.len() as u64
    }

    /// Its MIME type, guessed from the name.
    pub fn mime_type(&self) -> &str {
        &self.mime_type
    }

    /// Its content.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

impl fmt::Debug for PickedFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PickedFile")
            .field("name", &Fingerprint::of(&self.name))
            .field("mime_type", &self.mime_type)
            .field("bytes", &Fingerprint::of(&self.bytes))
            .finish()
    }
}

/// A file `artifact.save` wrote: the name the user gave it (never a path) and its size. `Debug`
/// shows the name as a [`Fingerprint`] (logs reach journald).
#[derive(Clone, PartialEq, Eq)]
pub struct SavedFile {
    name: String,
    size: u64,
}

impl fmt::Debug for SavedFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SavedFile")
            .field("name", &Fingerprint::of(&self.name))
            .field("size", &self.size)
            .finish()
    }
}

impl SavedFile {
    /// A saved file called `name` (a final path component is kept if a path is given).
    pub fn new(name: &str, size: u64) -> Self {
        Self {
            name: name
                .rsplit(['/', '\\'])
                .next()
                .unwrap_or_default()
                .to_owned(),
            size,
        }
    }

    /// Its name, without its folder.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its size in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }
}

/// Why a desktop effect did not happen. Its text goes to the agent (as a `failed` result's
/// message), so it never names a path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DesktopError {
    /// The picked file is larger than the limit.
    #[error("the chosen file is {size} bytes, more than the limit of {limit} bytes; pick a smaller file")]
    TooLarge {
        /// Its size.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// The dialog was open too long and was closed; nothing was done.
    #[error("the dialog was open for longer than {seconds} s and was closed; nothing was done")]
    TimedOut {
        /// How long it was allowed.
        seconds: u64,
    },
    /// The desktop could not do it (no display, no handler for the link, a write failed).
    #[error("the desktop could not do it: {0}")]
    Failed(String),
    /// This platform has no such effect.
    #[error("unsupported on this platform: {0}")]
    Unsupported(&'static str),
}

/// The desktop effects of the built-ins. The host calls these from a thread of its own, never
/// from the GUI thread, and only after consent (R-SEC-5); an implementation that needs the GUI
/// thread marshals there itself. [`SystemDesktop`](crate::SystemDesktop) is the real one;
/// `lineup_builtins::RecordingDesktop` records calls for tests.
pub trait Desktop: Send + Sync + 'static {
    /// Opens `uri` (http or https, no userinfo: checked before) with the desktop's handler.
    fn open_uri(&self, uri: &url::Url) -> Result<(), DesktopError>;
    /// Puts `text` on the system clipboard.
    fn set_clipboard_text(&self, text: &str) -> Result<(), DesktopError>;
    /// Shows a modal file chooser; `Ok(None)` when the user cancelled it or the deadline passed
    /// unanswered.
    fn choose_file(&self, request: &ChooseFile) -> Result<Option<PickedFile>, DesktopError>;
    /// Shows a modal save dialog and gives back where the user chose to save, writing
    /// nothing; `Ok(None)` when the user cancelled it or the deadline passed unanswered.
    fn choose_save_location(
        &self,
        request: &SaveFile,
    ) -> Result<Option<SaveLocation>, DesktopError>;
    /// Writes `bytes` at `location` (chosen by [`Desktop::choose_save_location`] for this call).
    fn write_file(&self, location: &SaveLocation, bytes: &[u8]) -> Result<SavedFile, DesktopError>;
}

/// Reads the file the user chose, at most `max_bytes` of it: a bigger one is
/// [`DesktopError::TooLarge`] (checked on the metadata and again while reading, in case it grew).
/// Only its final name leaves here, never the path.
pub fn read_picked(path: &Path, max_bytes: u64) -> Result<PickedFile, DesktopError> {
    let unreadable =
        |e: std::io::Error| DesktopError::Failed(format!("the chosen file cannot be read: {e}"));
    let file = File::open(path).map_err(unreadable)?;
    let metadata = file.metadata().map_err(unreadable)?;
    if !metadata.is_file() {
        return Err(DesktopError::Failed(
            "the chosen item is not a regular file".into(),
        ));
    }
    let too_large = |size: u64| DesktopError::TooLarge {
        size,
        limit: max_bytes,
    };
    if metadata.len() > max_bytes {
        return Err(too_large(metadata.len()));
    }
    let mut bytes = Vec::new();
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_large(bytes.len() as u64));
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".to_owned());
    Ok(PickedFile::new(&name, bytes))
}

/// Writes `bytes` where the user chose to save; only the final name leaves here.
pub fn write_saved(path: &Path, bytes: &[u8]) -> Result<SavedFile, DesktopError> {
    std::fs::write(path, bytes)
        .map_err(|e| DesktopError::Failed(format!("the file could not be written: {e}")))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(SavedFile::new(&name, bytes.len() as u64))
}
