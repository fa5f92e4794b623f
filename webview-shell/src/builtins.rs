//! The built-in App Capabilities of the spec's examples (§5.2): `app.open_url`,
//! `clipboard.write`, `device.pick_file` and `artifact.save`, each off until the embedder enables
//! it, with their effects on the desktop behind the [`Desktop`] trait (R-SEC-5, R-CAP-2/3).

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt;
use std::fs::File;
use std::io::Read as _;
use std::path::Path;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine as _;
use lineup_host_core::{
    display_line, Answer, ArgumentRule, CallKey, Capability, CapabilityName, Fingerprint,
    HandlerError, HookRequest, JsonObject, Limits, OpaqueVersion, Risk, RunRequest, SessionId,
    Ticket,
};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::capabilities::AnswerSink;
use crate::consent::open_url_host;
use crate::error::ShellError;

mod recording;

pub use recording::{DesktopCall, RecordingDesktop};

/// The most text `clipboard.write` takes, in characters (`maxLength` of `text`).
pub const MAX_CLIPBOARD_CHARS: usize = 64 * 1024;
/// The largest file `device.pick_file` hands to the agent, in bytes (1 MiB); a bigger one is
/// `failed`, naming the limit.
pub const MAX_PICKED_FILE_BYTES: u64 = 1024 * 1024;
/// The largest artifact `artifact.save` writes, in bytes (1 MiB), after base64 decoding. With the
/// default envelope limit (1 MiB) the envelope is refused first.
pub const MAX_ARTIFACT_BYTES: usize = 1024 * 1024;
/// The longest file name `artifact.save` suggests, in extended grapheme clusters; it is also kept
/// within 255 bytes, the usual file-system limit.
pub const MAX_FILE_NAME_GRAPHEMES: usize = 120;
/// The longest a file name may be in bytes.
const MAX_FILE_NAME_BYTES: usize = 255;
/// The name suggested when nothing of the agent's is left after sanitizing.
const FALLBACK_FILE_NAME: &str = "artifact";
/// How long the `device.pick_file` chooser stays open at most; the call's `expires_at` usually
/// closes it earlier (host choice).
pub const MAX_CHOOSER_OPEN: Duration = Duration::from_secs(10 * 60);
/// How much earlier than the kernel's handler timeout the save dialog closes itself, so that
/// nothing is written after the call was answered `failed`.
const SAVE_MARGIN: Duration = Duration::from_secs(5);
/// How many chosen files wait for their call to run (each at most [`MAX_PICKED_FILE_BYTES`]).
const MAX_WAITING_PICKS: usize = 8;

/// One built-in capability (spec §5.2), version `1.0`, with the spec's risk. None is on unless
/// the embedder enables it ([`HostBuilder::builtin`](crate::HostBuilder::builtin)) or `lineup
/// host --enable` names it.
///
/// | name | risk | arguments | result |
/// | --- | --- | --- | --- |
/// | `app.open_url` | `user_confirmation` | `{"url": "http(s)://…"}`, no userinfo, ≤ 8 KiB | `{"opened": true}` |
/// | `clipboard.write` | `user_confirmation` | `{"text": "…"}`, ≤ [`MAX_CLIPBOARD_CHARS`] | `{"copied": true, "chars": n}` |
/// | `device.pick_file` | `system_permission` | `{}` | `{"name", "size", "mime_type", "content_base64"}` |
/// | `artifact.save` | `user_confirmation` | `{"file_name", "content_base64" \| "text"}` | `{"saved": true, "file_name", "size"}` |
///
/// No result ever holds a path. `device.pick_file`'s OS permission (R-CAP-3) is the file
/// chooser itself: after the user allowed the call in the consent prompt, the chooser takes the
/// place of the embedder's [`permission_hook`](crate::HostBuilder::permission_hook); cancelling
/// it refuses the permission, so the call is answered `rejected`. A file over
/// [`MAX_PICKED_FILE_BYTES`] is `failed`, naming the limit. Cancelling `artifact.save`'s save
/// dialog answers `failed` ("nothing was saved"): a handler cannot answer `cancelled` yet.
///
/// ```
/// use lineup_webview_shell::Builtin;
/// let enabled: Builtin = "clipboard.write".parse()?;
/// assert_eq!(enabled, Builtin::ClipboardWrite);
/// assert_eq!(enabled.capability()?.risk(), lineup_host_core::Risk::UserConfirmation);
/// assert!("shell.exec".parse::<Builtin>().is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Builtin {
    /// `app.open_url`: opens an http(s) link with the desktop's handler.
    OpenUrl,
    /// `clipboard.write`: puts text on the system clipboard.
    ClipboardWrite,
    /// `device.pick_file`: the user picks a file, whose content goes to the agent.
    PickFile,
    /// `artifact.save`: the user saves content the agent made, through a save dialog.
    SaveArtifact,
}

impl Builtin {
    /// Every built-in, in the spec's order.
    pub const ALL: [Builtin; 4] = [
        Builtin::OpenUrl,
        Builtin::ClipboardWrite,
        Builtin::PickFile,
        Builtin::SaveArtifact,
    ];

    /// The capability name the agent calls.
    pub fn name(self) -> &'static str {
        match self {
            Builtin::OpenUrl => "app.open_url",
            Builtin::ClipboardWrite => "clipboard.write",
            Builtin::PickFile => "device.pick_file",
            Builtin::SaveArtifact => "artifact.save",
        }
    }

    /// The spec's risk for it (R-CAP-2).
    pub fn risk(self) -> Risk {
        match self {
            Builtin::PickFile => Risk::SystemPermission,
            _ => Risk::UserConfirmation,
        }
    }

    /// Its `input_schema`.
    pub fn input_schema(self) -> Value {
        match self {
            Builtin::OpenUrl => json!({
                "type": "object",
                "required": ["url"],
                "properties": {
                    "url": { "type": "string", "minLength": 1, "maxLength": crate::MAX_URL_BYTES }
                },
                "additionalProperties": false
            }),
            Builtin::ClipboardWrite => json!({
                "type": "object",
                "required": ["text"],
                "properties": {
                    "text": { "type": "string", "maxLength": MAX_CLIPBOARD_CHARS }
                },
                "additionalProperties": false
            }),
            Builtin::PickFile => json!({
                "type": "object",
                "additionalProperties": false
            }),
            Builtin::SaveArtifact => json!({
                "type": "object",
                "required": ["file_name"],
                "properties": {
                    "file_name": { "type": "string", "minLength": 1, "maxLength": 1024 },
                    "content_base64": {
                        "type": "string",
                        "maxLength": MAX_ARTIFACT_BYTES.div_ceil(3) * 4
                    },
                    "text": { "type": "string", "maxLength": MAX_ARTIFACT_BYTES }
                },
                "oneOf": [
                    { "required": ["content_base64"] },
                    { "required": ["text"] }
                ],
                "additionalProperties": false
            }),
        }
    }

    /// The capability as the inventory declares it: name, version `1.0`, risk, `input_schema`.
    pub fn capability(self) -> Result<Capability, ShellError> {
        let platform = |e: String| ShellError::Platform(format!("built-in {}: {e}", self.name()));
        let name = CapabilityName::try_from(self.name()).map_err(|e| platform(e.to_string()))?;
        let version = OpaqueVersion::try_from("1.0").map_err(|e| platform(e.to_string()))?;
        let schema =
            JsonObject::try_from(self.input_schema()).map_err(|e| platform(e.to_string()))?;
        let capability = Capability::new(name, version, self.risk(), schema)
            .map_err(|e| platform(e.to_string()))?;
        Ok(match self {
            // R-CAP-4: the link rule is checked before consent, in every grant state.
            Builtin::OpenUrl => {
                capability.with_argument_rule(ArgumentRule::link("url", &Limits::default()))
            }
            _ => capability,
        })
    }

    /// The built-in called `name`, if there is one.
    pub fn from_name(name: &str) -> Option<Builtin> {
        Builtin::ALL.into_iter().find(|b| b.name() == name)
    }
}

impl fmt::Display for Builtin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not a built-in capability's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "'{name}' is not a built-in capability; the built-ins are {}",
    known_names()
)]
pub struct UnknownBuiltin {
    /// The name as given.
    pub name: String,
}

fn known_names() -> String {
    Builtin::ALL.map(Builtin::name).join(", ")
}

impl FromStr for Builtin {
    type Err = UnknownBuiltin;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Builtin::from_name(s).ok_or_else(|| UnknownBuiltin {
            name: display_line(s, 64),
        })
    }
}

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

/// What `artifact.save` asks of the desktop: a save dialog suggesting a sanitized name. `Debug`
/// shows the name and the content, the agent's arguments, as [`Fingerprint`]s (logs reach
/// journald).
#[derive(Clone)]
#[non_exhaustive]
pub struct SaveFile {
    /// The file name to suggest, already sanitized ([`sanitize_file_name`]).
    pub suggested_name: String,
    /// What to write.
    pub bytes: Vec<u8>,
    /// When the dialog must go away; nothing is written after it.
    pub until: Deadline,
}

impl fmt::Debug for SaveFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SaveFile")
            .field("suggested_name", &Fingerprint::of(&self.suggested_name))
            .field("bytes", &Fingerprint::of(&self.bytes))
            .finish_non_exhaustive()
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
/// thread marshals there itself. [`SystemDesktop`] is the real one; [`RecordingDesktop`]
/// records calls for tests.
pub trait Desktop: Send + Sync + 'static {
    /// Opens `uri` (http or https, no userinfo: checked before) with the desktop's handler.
    fn open_uri(&self, uri: &url::Url) -> Result<(), DesktopError>;
    /// Puts `text` on the system clipboard.
    fn set_clipboard_text(&self, text: &str) -> Result<(), DesktopError>;
    /// Shows a modal file chooser; `Ok(None)` when the user cancelled it or the deadline passed
    /// unanswered.
    fn choose_file(&self, request: &ChooseFile) -> Result<Option<PickedFile>, DesktopError>;
    /// Shows a save dialog and writes the bytes where the user chose; `Ok(None)` when the user
    /// cancelled it.
    fn save_file(&self, request: &SaveFile) -> Result<Option<SavedFile>, DesktopError>;
}

/// The real desktop: GIO's default handler for links, GTK's clipboard, GTK file choosers.
///
/// ## Platform-specific
/// Linux: `gio::AppInfo::launch_default_for_uri`, the `CLIPBOARD` selection (the text lives as
/// long as the host process unless a clipboard manager keeps it), `GtkFileChooserNative` (the
/// XDG portal's chooser when the host is sandboxed), each run on the GTK main thread, reached
/// with `glib::MainContext::invoke` and answered through a channel with a timeout. Elsewhere
/// [`SystemDesktop::new`] fails with [`ShellError::Unsupported`].
#[derive(Debug, Clone)]
pub struct SystemDesktop {
    _private: (),
}

impl SystemDesktop {
    /// The real desktop of this process. Build it once the GUI toolkit is up (after the event
    /// loop exists).
    pub fn new() -> Result<Self, ShellError> {
        crate::platform::desktop::supported()?;
        Ok(Self { _private: () })
    }
}

impl Desktop for SystemDesktop {
    fn open_uri(&self, uri: &url::Url) -> Result<(), DesktopError> {
        crate::platform::desktop::open_uri(uri.as_str())
    }

    fn set_clipboard_text(&self, text: &str) -> Result<(), DesktopError> {
        crate::platform::desktop::set_clipboard_text(text)
    }

    fn choose_file(&self, request: &ChooseFile) -> Result<Option<PickedFile>, DesktopError> {
        crate::platform::desktop::choose_file(request)
    }

    fn save_file(&self, request: &SaveFile) -> Result<Option<SavedFile>, DesktopError> {
        crate::platform::desktop::save_file(request)
    }
}

/// The file name `artifact.save` suggests for an agent's `file_name`: one line of visible text
/// (control, format and bidi characters removed by `display_line`, R-SEC-6), no path
/// separators (`/ \` and the characters Windows refuses, `: * ? " < > |`, become `_`), no `..`,
/// no leading or trailing dots or spaces, at most [`MAX_FILE_NAME_GRAPHEMES`] grapheme clusters
/// and 255 bytes, the extension kept when it is capped; `artifact` when nothing is left.
///
/// ```
/// use lineup_webview_shell::sanitize_file_name;
/// assert_eq!(sanitize_file_name("../../etc/passwd"), "_._etc_passwd");
/// assert_eq!(sanitize_file_name("invoice\u{202E}fdp.exe"), "invoicefdp.exe");
/// assert_eq!(sanitize_file_name(".."), "artifact");
/// ```
pub fn sanitize_file_name(name: &str) -> String {
    let cleaned: String = display_line(name, usize::MAX)
        .chars()
        .map(|c| match c {
            '/' | '\\' | ':' | '*' | '?' | '"' | '<' | '>' | '|' => '_',
            c => c,
        })
        .collect();
    let mut name = cleaned;
    while name.contains("..") {
        name = name.replace("..", ".");
    }
    let name = name.trim_matches(['.', ' ']);
    if name.is_empty() {
        return FALLBACK_FILE_NAME.to_owned();
    }
    let (stem, extension) = match name.rsplit_once('.') {
        Some((stem, ext))
            if !stem.is_empty()
                && (1..=16).contains(&ext.chars().count())
                && !ext.contains(' ') =>
        {
            (stem, Some(ext))
        }
        _ => (name, None),
    };
    let suffix = extension.map(|e| format!(".{e}")).unwrap_or_default();
    let fits = |s: &str| s.len() <= MAX_FILE_NAME_BYTES;
    let whole = format!("{stem}{suffix}");
    if fits(&whole) && display_line(&whole, MAX_FILE_NAME_GRAPHEMES) == whole {
        return whole;
    }
    // Cap the stem (display_line adds `…`), keeping the extension, within both bounds.
    let mut budget = MAX_FILE_NAME_GRAPHEMES.saturating_sub(suffix.chars().count() + 1);
    loop {
        let capped = format!("{}{suffix}", display_line(stem, budget));
        if fits(&capped) || budget == 0 {
            return capped;
        }
        budget -= 1;
    }
}

/// Reads the file the user chose, at most `max_bytes` of it: a bigger one is
/// [`DesktopError::TooLarge`] (checked on the metadata and again while reading, in case it grew).
/// Only its final name leaves here, never the path.
pub(crate) fn read_picked(path: &Path, max_bytes: u64) -> Result<PickedFile, DesktopError> {
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
pub(crate) fn write_saved(path: &Path, bytes: &[u8]) -> Result<SavedFile, DesktopError> {
    std::fs::write(path, bytes)
        .map_err(|e| DesktopError::Failed(format!("the file could not be written: {e}")))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(SavedFile::new(&name, bytes.len() as u64))
}

/// The arguments of `app.open_url`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OpenUrlArgs {
    url: String,
}

/// The arguments of `clipboard.write`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ClipboardArgs {
    text: String,
}

/// The arguments of `artifact.save`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SaveArgs {
    file_name: String,
    content_base64: Option<String>,
    text: Option<String>,
}

fn parse<A: serde::de::DeserializeOwned>(arguments: JsonObject) -> Result<A, HandlerError> {
    serde_json::from_value(Value::Object(arguments.into_map()))
        .map_err(|e| HandlerError::new(format!("the arguments do not fit: {e}")))
}

fn object(value: Value) -> Result<JsonObject, HandlerError> {
    JsonObject::try_from(value).map_err(|e| HandlerError::new(format!("no result: {e}")))
}

fn desktop_error(e: DesktopError) -> HandlerError {
    HandlerError::new(e.to_string())
}

/// `app.open_url`: the link is checked again ([`open_url_host`]: http or https, a host, no
/// userinfo, at most 8 KiB) before the desktop opens it.
fn open_url(desktop: &dyn Desktop, arguments: JsonObject) -> Result<JsonObject, HandlerError> {
    let args: OpenUrlArgs = parse(arguments)?;
    open_url_host(&args.url).map_err(|e| HandlerError::new(e.to_string()))?;
    let url = url::Url::parse(&args.url)
        .map_err(|e| HandlerError::new(format!("url is not valid: {e}")))?;
    desktop.open_uri(&url).map_err(desktop_error)?;
    object(json!({ "opened": true }))
}

/// `clipboard.write`.
fn clipboard_write(
    desktop: &dyn Desktop,
    arguments: JsonObject,
) -> Result<JsonObject, HandlerError> {
    let args: ClipboardArgs = parse(arguments)?;
    let chars = args.text.chars().count();
    if chars > MAX_CLIPBOARD_CHARS {
        return Err(HandlerError::new(format!(
            "text is {chars} characters, more than the limit of {MAX_CLIPBOARD_CHARS}"
        )));
    }
    desktop
        .set_clipboard_text(&args.text)
        .map_err(desktop_error)?;
    object(json!({ "copied": true, "chars": chars }))
}

/// The result of `device.pick_file` from what the chooser gave: never a path, the content in
/// base64, the size cap checked again.
fn picked_result(picked: Result<PickedFile, DesktopError>) -> Result<JsonObject, HandlerError> {
    let file = picked.map_err(desktop_error)?;
    if file.size() > MAX_PICKED_FILE_BYTES {
        return Err(desktop_error(DesktopError::TooLarge {
            size: file.size(),
            limit: MAX_PICKED_FILE_BYTES,
        }));
    }
    object(json!({
        "name": file.name(),
        "size": file.size(),
        "mime_type": file.mime_type(),
        "content_base64": base64::engine::general_purpose::STANDARD.encode(file.bytes()),
    }))
}

/// `artifact.save`: the name sanitized, the content decoded and capped, then the save dialog.
fn save_artifact(
    desktop: &dyn Desktop,
    arguments: JsonObject,
    until: Deadline,
) -> Result<JsonObject, HandlerError> {
    let args: SaveArgs = parse(arguments)?;
    let bytes = match (args.content_base64, args.text) {
        (Some(encoded), None) => base64::engine::general_purpose::STANDARD
            .decode(encoded.as_bytes())
            .map_err(|e| HandlerError::new(format!("content_base64 is not valid base64: {e}")))?,
        (None, Some(text)) => text.into_bytes(),
        _ => {
            return Err(HandlerError::new(
                "give exactly one of content_base64 and text",
            ))
        }
    };
    if bytes.len() > MAX_ARTIFACT_BYTES {
        return Err(HandlerError::new(format!(
            "the content is {} bytes, more than the limit of {MAX_ARTIFACT_BYTES} bytes",
            bytes.len()
        )));
    }
    let request = SaveFile {
        suggested_name: sanitize_file_name(&args.file_name),
        bytes,
        until,
    };
    match desktop.save_file(&request).map_err(desktop_error)? {
        Some(saved) => object(json!({
            "saved": true,
            "file_name": saved.name(),
            "size": saved.size(),
        })),
        None => Err(HandlerError::new(
            "the user cancelled the save dialog; nothing was saved",
        )),
    }
}

/// The built-ins an embedder enabled, and the desktop they act on, as a
/// [`HostBuilder`](crate::HostBuilder) collects them.
#[derive(Default)]
pub(crate) struct BuiltinConfig {
    pub(crate) enabled: BTreeSet<Builtin>,
    pub(crate) desktop: Option<Arc<dyn Desktop>>,
}

/// Files chosen for `device.pick_file` calls whose handler has not run yet, by call key.
type Picks = Mutex<VecDeque<(CallKey, Result<PickedFile, DesktopError>)>>;

/// Runs the enabled built-ins for the capability driver: their handlers on threads of their own,
/// and `device.pick_file`'s chooser in place of the permission hook.
pub(crate) struct Builtins {
    enabled: BTreeSet<Builtin>,
    desktop: Arc<dyn Desktop>,
    picks: Arc<Picks>,
    /// Choosers showing, by session and hook ticket, so the kernel can withdraw them.
    choosing: Arc<Mutex<BTreeMap<(SessionId, Ticket), Deadline>>>,
}

impl Builtins {
    /// The runtime of `config`, with `desktop` when the embedder gave none; the capabilities to
    /// register come with it.
    pub(crate) fn start(
        config: BuiltinConfig,
    ) -> Result<Option<(Self, Vec<Capability>)>, ShellError> {
        if config.enabled.is_empty() {
            return Ok(None);
        }
        let desktop: Arc<dyn Desktop> = match config.desktop {
            Some(desktop) => desktop,
            None => Arc::new(SystemDesktop::new()?),
        };
        let capabilities = config
            .enabled
            .iter()
            .map(|b| b.capability())
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Some((
            Self {
                enabled: config.enabled,
                desktop,
                picks: Arc::default(),
                choosing: Arc::default(),
            },
            capabilities,
        )))
    }

    fn builtin(&self, capability: &CapabilityName) -> Option<Builtin> {
        Builtin::from_name(capability.as_str()).filter(|b| self.enabled.contains(b))
    }

    /// Whether the permission check of `request` is a built-in's (the file chooser).
    pub(crate) fn owns_hook(&self, request: &HookRequest) -> bool {
        self.builtin(&request.call.capability) == Some(Builtin::PickFile)
    }

    /// `device.pick_file`'s permission check (R-CAP-3): the chooser, on a thread of its own. A
    /// chosen file allows the call and waits for its handler; a cancelled chooser refuses it
    /// (`rejected`); a file over the limit or a desktop failure allows it, and the handler then
    /// answers `failed` with the reason.
    pub(crate) fn hook(&mut self, session: SessionId, request: HookRequest, sink: &AnswerSink) {
        let ticket = request.ticket;
        let until = Deadline::after(MAX_CHOOSER_OPEN);
        if let Ok(mut choosing) = self.choosing.lock() {
            choosing.insert((session, ticket), until.clone());
        }
        let desktop = Arc::clone(&self.desktop);
        let picks = Arc::clone(&self.picks);
        let choosing = Arc::clone(&self.choosing);
        let answer = Arc::clone(sink);
        let key = request.call.key;
        let spawned = std::thread::Builder::new()
            .name("lineup-builtin-device.pick_file".into())
            .spawn(move || {
                let chosen = desktop.choose_file(&ChooseFile {
                    max_bytes: MAX_PICKED_FILE_BYTES,
                    until,
                });
                if let Ok(mut choosing) = choosing.lock() {
                    choosing.remove(&(session, ticket));
                }
                let outcome = match chosen {
                    Ok(Some(file)) => Some(Ok(file)),
                    Ok(None) => None,
                    Err(e) => Some(Err(e)),
                };
                let allowed = outcome.is_some();
                if let (Some(outcome), Ok(mut picks)) = (outcome, picks.lock()) {
                    if picks.len() >= MAX_WAITING_PICKS {
                        picks.pop_front();
                    }
                    picks.push_back((key, outcome));
                }
                answer(session, ticket, Answer::Hook(allowed));
            });
        if let Err(e) = spawned {
            tracing::error!("the file chooser could not be started: {e}");
            sink(session, ticket, Answer::Hook(false));
        }
    }

    /// The kernel no longer wants the answer to `ticket`: its chooser goes away.
    pub(crate) fn withdraw(&mut self, session: SessionId, ticket: Ticket) {
        if let Some(until) = self
            .choosing
            .lock()
            .ok()
            .and_then(|mut choosing| choosing.remove(&(session, ticket)))
        {
            until.withdraw();
        }
    }

    /// Runs `request` if it is an enabled built-in's, on a thread of its own (never the GUI
    /// thread), answering through `sink`; gives it back otherwise.
    pub(crate) fn run(
        &self,
        session: SessionId,
        request: RunRequest,
        sink: &AnswerSink,
    ) -> Option<RunRequest> {
        let Some(builtin) = self.builtin(&request.capability) else {
            return Some(request);
        };
        let ticket = request.ticket;
        let desktop = Arc::clone(&self.desktop);
        let picks = Arc::clone(&self.picks);
        let answer = Arc::clone(sink);
        let spawned = std::thread::Builder::new()
            .name(format!("lineup-builtin-{builtin}"))
            .spawn(move || {
                let outcome = match builtin {
                    Builtin::OpenUrl => open_url(desktop.as_ref(), request.arguments),
                    Builtin::ClipboardWrite => clipboard_write(desktop.as_ref(), request.arguments),
                    Builtin::PickFile => {
                        let chosen = picks.lock().ok().and_then(|mut picks| {
                            let at = picks.iter().position(|(key, _)| *key == request.call)?;
                            picks.remove(at).map(|(_, file)| file)
                        });
                        match chosen {
                            Some(file) => picked_result(file),
                            None => Err(HandlerError::new("no file was chosen for this call")),
                        }
                    }
                    Builtin::SaveArtifact => save_artifact(
                        desktop.as_ref(),
                        request.arguments,
                        Deadline::after(request.timeout.saturating_sub(SAVE_MARGIN)),
                    ),
                };
                answer(session, ticket, Answer::Ran(outcome));
            });
        if let Err(e) = spawned {
            sink(
                session,
                ticket,
                Answer::Ran(Err(HandlerError::new(format!(
                    "the handler could not be started: {e}"
                )))),
            );
        }
        None
    }
}

#[cfg(test)]
mod tests;
