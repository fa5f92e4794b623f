//! The built-in App Capabilities of the spec's examples (§5.2): `app.open_url`,
//! `clipboard.write`, `device.pick_file` and `artifact.save`, each off until the embedder enables
//! it, with their effects on the desktop behind the [`Desktop`] trait (R-SEC-5, R-CAP-2/3).

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use lineup_host_core::{
    display_line, Answer, ArgumentRule, Capability, CapabilityName, HandlerError, HookAnswer,
    HookRequest, JsonObject, Limits, OpaqueVersion, Risk, RunRequest, SessionId, Ticket,
};
use serde::Deserialize;
use serde_json::{json, Value};

use lineup_host_core::open_url_host;
use lineup_webview_shell::ShellError;

mod dialogs;
mod recording;

use lineup_host_core::{AnswerSink, CapabilityProvider, PromptWording};

use dialogs::{Chosen, Dialogs};
pub use lineup_webview_shell::{
    ChooseFile, Deadline, Desktop, DesktopError, PickedFile, SaveFile, SaveLocation, SavedFile,
    SystemDesktop,
};
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

/// One built-in capability (spec §5.2), version `1.0`, with the spec's risk. None is on unless
/// the embedder enables it ([`HostBuilder::builtin`](https://docs.rs/lineup-host)) or `lineup
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
/// chooser itself, and `artifact.save`'s save dialog is part of its decision: after the user
/// allowed the call (in the consent prompt, or by a remembered grant for `artifact.save`), the
/// dialog takes the place of the embedder's
/// [`permission_hook`](https://docs.rs/lineup-host), bounded by the call's deadline.
///
/// | the user | `app.open_url`, `clipboard.write` | `device.pick_file` | `artifact.save` |
/// | --- | --- | --- | --- |
/// | allows in the prompt | `completed` (`failed` if the desktop cannot) | the chooser opens | the save dialog opens |
/// | denies in the prompt | `rejected` | `rejected` | `rejected` |
/// | dismisses the prompt (Escape, closes it) | `cancelled` | `cancelled` | `cancelled` |
/// | chooses a file / presses Save | — | `completed`; `failed` over [`MAX_PICKED_FILE_BYTES`] | `completed`; `failed` if the write fails |
/// | cancels the chooser or the save dialog | — | `cancelled` | `cancelled`, nothing written |
/// | lets `expires_at` pass (prompt or dialog open) | `expired` | `expired`, the chooser closes | `expired`, the dialog closes, nothing written |
///
/// ```
/// use lineup_builtins::Builtin;
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

    /// What its consent prompt says it asks, in plain words (R-CAP-4): the built-in's own
    /// wording, not the platform's.
    pub fn headline(self) -> &'static str {
        match self {
            Builtin::OpenUrl => "asks to open a link in your browser",
            Builtin::ClipboardWrite => "asks to copy text to your clipboard",
            Builtin::PickFile => "asks you to choose a file to give it",
            Builtin::SaveArtifact => "asks to save a file on your computer",
        }
    }

    /// Its `input_schema`.
    pub fn input_schema(self) -> Value {
        match self {
            Builtin::OpenUrl => json!({
                "type": "object",
                "required": ["url"],
                "properties": {
                    "url": { "type": "string", "minLength": 1, "maxLength": lineup_host_core::MAX_URL_BYTES }
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
        let capability = Capability::new(name, version, self.risk(), schema)?;
        Ok(match self {
            // R-CAP-4: the link rule is checked before consent, in every grant state.
            Builtin::OpenUrl => {
                capability.with_argument_rule(ArgumentRule::link("url", &Limits::default()))
            }
            // R-CAP-4: the save dialog is part of the decision, bounded by the deadline.
            Builtin::SaveArtifact => capability.with_hook(),
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

/// The file name `artifact.save` suggests for an agent's `file_name`: one line of visible text
/// (control, format and bidi characters removed by `display_line`, R-SEC-6), no path
/// separators (`/ \` and the characters Windows refuses, `: * ? " < > |`, become `_`), no `..`,
/// no leading or trailing dots or spaces, at most [`MAX_FILE_NAME_GRAPHEMES`] grapheme clusters
/// and 255 bytes, the extension kept when it is capped; `artifact` when nothing is left.
///
/// ```
/// use lineup_builtins::sanitize_file_name;
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
    /// Suggested by the save dialog ([`dialogs`]), not used by the handler.
    #[serde(rename = "file_name")]
    _file_name: String,
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

/// `artifact.save`'s handler, after its save dialog chose `location`: the content decoded and
/// capped, then written there. The result names the file, never its folder.
fn save_artifact(
    desktop: &dyn Desktop,
    arguments: JsonObject,
    location: Result<SaveLocation, DesktopError>,
) -> Result<JsonObject, HandlerError> {
    let SaveArgs {
        content_base64,
        text,
        ..
    } = parse(arguments)?;
    let bytes = match (content_base64, text) {
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
    let location = location.map_err(desktop_error)?;
    let saved = desktop
        .write_file(&location, &bytes)
        .map_err(desktop_error)?;
    object(json!({
        "saved": true,
        "file_name": saved.name(),
        "size": saved.size(),
    }))
}

/// The built-ins an embedder enabled, and the desktop they act on, as the host's builder
/// collects them.
#[derive(Default)]
pub struct BuiltinConfig {
    /// The built-ins that are on; every other one is off.
    pub enabled: BTreeSet<Builtin>,
    /// The desktop they act on; [`SystemDesktop`] when `None`.
    pub desktop: Option<Arc<dyn Desktop>>,
}

/// Runs the enabled built-ins for the capability driver: their handlers on threads of their own,
/// and their dialogs (the crate's `dialogs` module) in place of the permission hook.
pub struct Builtins {
    enabled: BTreeSet<Builtin>,
    desktop: Arc<dyn Desktop>,
    dialogs: Dialogs,
}

impl Builtins {
    /// The runtime of `config`, with `desktop` when the embedder gave none; the capabilities to
    /// register come with it.
    ///
    /// # Errors
    /// [`ShellError::Unsupported`] when no desktop was given and this platform has none, and
    /// [`ShellError::Usage`] when a built-in's declaration does not compile.
    pub fn start(config: BuiltinConfig) -> Result<Option<(Self, Vec<Capability>)>, ShellError> {
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
                dialogs: Dialogs::new(Arc::clone(&desktop)),
                desktop,
            },
            capabilities,
        )))
    }

    fn builtin(&self, capability: &CapabilityName) -> Option<Builtin> {
        Builtin::from_name(capability.as_str()).filter(|b| self.enabled.contains(b))
    }
}

impl CapabilityProvider for Builtins {
    /// The built-in's own wording; for `app.open_url` the host the link leads to, by
    /// host-core's link rule, the one the kernel checked the argument with before any prompt
    /// (`ArgumentRule::link`). A link that rule refuses gets no wording, so no prompt.
    fn prompt_wording(
        &self,
        capability: &CapabilityName,
        arguments: &JsonObject,
    ) -> Option<Result<PromptWording, String>> {
        let builtin = self.builtin(capability)?;
        let link_host = match builtin {
            Builtin::OpenUrl => match arguments.as_map().get("url") {
                Some(Value::String(url)) => match open_url_host(url) {
                    Ok(host) => Some(host),
                    Err(e) => return Some(Err(format!("the url argument is refused: {e}"))),
                },
                _ => return Some(Err("app.open_url has no url argument".to_owned())),
            },
            Builtin::ClipboardWrite | Builtin::PickFile | Builtin::SaveArtifact => None,
        };
        Some(Ok(PromptWording {
            headline: builtin.headline().to_owned(),
            link_host,
        }))
    }

    /// Whether the permission check of `request` is a built-in's dialog.
    fn owns_hook(&self, request: &HookRequest) -> bool {
        matches!(
            self.builtin(&request.call.capability),
            Some(Builtin::PickFile | Builtin::SaveArtifact)
        )
    }

    /// The permission check of a built-in with a dialog: the dialog, on a thread of its own,
    /// bounded by the call's deadline (the `dialogs` module).
    fn hook(&mut self, session: SessionId, request: HookRequest, sink: &AnswerSink) {
        match self.builtin(&request.call.capability) {
            Some(builtin @ (Builtin::PickFile | Builtin::SaveArtifact)) => {
                self.dialogs.show(builtin, session, request, sink);
            }
            _ => sink(session, request.ticket, Answer::Hook(HookAnswer::Deny)),
        }
    }

    /// The kernel no longer wants the answer to `ticket`: its dialog goes away.
    fn withdraw(&mut self, session: SessionId, ticket: Ticket) {
        self.dialogs.withdraw(session, ticket);
    }

    /// Runs `request` if it is an enabled built-in's, on a thread of its own (never the GUI
    /// thread), answering through `sink`; gives it back otherwise.
    fn run(
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
        let chosen = self.dialogs.take(&request.call);
        let answer = Arc::clone(sink);
        let spawned = std::thread::Builder::new()
            .name(format!("lineup-builtin-{builtin}"))
            .spawn(move || {
                let outcome = match (builtin, chosen) {
                    (Builtin::OpenUrl, _) => open_url(desktop.as_ref(), request.arguments),
                    (Builtin::ClipboardWrite, _) => {
                        clipboard_write(desktop.as_ref(), request.arguments)
                    }
                    (Builtin::PickFile, Some(Chosen::File(file))) => picked_result(file),
                    (Builtin::SaveArtifact, Some(Chosen::SaveTo(location))) => {
                        save_artifact(desktop.as_ref(), request.arguments, location)
                    }
                    (Builtin::PickFile, _) => {
                        Err(HandlerError::new("no file was chosen for this call"))
                    }
                    (Builtin::SaveArtifact, _) => Err(HandlerError::new(
                        "no place to save was chosen for this call",
                    )),
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
