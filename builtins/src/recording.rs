//! A [`Desktop`] that records what the built-ins asked of it and answers as told, so tests see
//! their effects without a desktop.

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use lineup_host_core::Fingerprint;

use super::{ChooseFile, Desktop, DesktopError, PickedFile, SaveFile, SaveLocation, SavedFile};

/// One effect a built-in asked of the desktop. `Debug` shows the URI, the text, the name and the
/// content, the agent's arguments, as [`Fingerprint`]s (logs reach journald).
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DesktopCall {
    /// [`Desktop::open_uri`] with this URI.
    OpenUri(String),
    /// [`Desktop::set_clipboard_text`] with this text.
    SetClipboardText(String),
    /// [`Desktop::choose_file`] with this size limit.
    ChooseFile {
        /// The largest file allowed.
        max_bytes: u64,
    },
    /// [`Desktop::choose_save_location`] with this suggested name.
    SaveFile {
        /// The sanitized name suggested.
        suggested_name: String,
    },
    /// [`Desktop::write_file`]: this content written under this name (the location's final
    /// name; nothing reaches the disk).
    WriteFile {
        /// The location's final name.
        name: String,
        /// The content.
        bytes: Vec<u8>,
    },
}

impl fmt::Debug for DesktopCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DesktopCall::OpenUri(uri) => f
                .debug_tuple("OpenUri")
                .field(&Fingerprint::of(uri))
                .finish(),
            DesktopCall::SetClipboardText(text) => f
                .debug_tuple("SetClipboardText")
                .field(&Fingerprint::of(text))
                .finish(),
            DesktopCall::ChooseFile { max_bytes } => f
                .debug_struct("ChooseFile")
                .field("max_bytes", max_bytes)
                .finish(),
            DesktopCall::SaveFile { suggested_name } => f
                .debug_struct("SaveFile")
                .field("suggested_name", &Fingerprint::of(suggested_name))
                .finish(),
            DesktopCall::WriteFile { name, bytes } => f
                .debug_struct("WriteFile")
                .field("name", &Fingerprint::of(name))
                .field("bytes", &Fingerprint::of(bytes))
                .finish(),
        }
    }
}

/// A recording [`Desktop`] for tests: every call is kept in order ([`RecordingDesktop::calls`]);
/// the chooser answers what [`RecordingDesktop::answer_pick`] set (by default the user
/// cancels), the save dialog what [`RecordingDesktop::answer_save`] set (by default the
/// suggested name in the current folder; writing records the content and touches no disk), and
/// the other effects succeed unless
/// [`RecordingDesktop::fail_with`] set an error. Clones share the record.
///
/// ```
/// use lineup_builtins::{Desktop, DesktopCall, RecordingDesktop};
/// let desktop = RecordingDesktop::new();
/// desktop.set_clipboard_text("hello")?;
/// assert_eq!(desktop.calls(), [DesktopCall::SetClipboardText("hello".into())]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct RecordingDesktop {
    state: Arc<Mutex<State>>,
}

#[derive(Debug, Default)]
struct State {
    calls: Vec<DesktopCall>,
    pick: Option<Result<Option<PickedFile>, DesktopError>>,
    save: Option<Result<Option<SaveLocation>, DesktopError>>,
    fail: Option<DesktopError>,
}

impl RecordingDesktop {
    /// A desktop with no calls yet and the default answers.
    pub fn new() -> Self {
        Self::default()
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Every call so far, in order.
    pub fn calls(&self) -> Vec<DesktopCall> {
        self.state().calls.clone()
    }

    /// What every later chooser answers.
    pub fn answer_pick(&self, answer: Result<Option<PickedFile>, DesktopError>) {
        self.state().pick = Some(answer);
    }

    /// What every later save dialog answers.
    pub fn answer_save(&self, answer: Result<Option<SaveLocation>, DesktopError>) {
        self.state().save = Some(answer);
    }

    /// Makes every later `open_uri` and `set_clipboard_text` fail with `error`.
    pub fn fail_with(&self, error: DesktopError) {
        self.state().fail = Some(error);
    }
}

impl Desktop for RecordingDesktop {
    fn open_uri(&self, uri: &url::Url) -> Result<(), DesktopError> {
        let mut state = self.state();
        state.calls.push(DesktopCall::OpenUri(uri.to_string()));
        state.fail.clone().map_or(Ok(()), Err)
    }

    fn set_clipboard_text(&self, text: &str) -> Result<(), DesktopError> {
        let mut state = self.state();
        state
            .calls
            .push(DesktopCall::SetClipboardText(text.to_owned()));
        state.fail.clone().map_or(Ok(()), Err)
    }

    fn choose_file(&self, request: &ChooseFile) -> Result<Option<PickedFile>, DesktopError> {
        let mut state = self.state();
        state.calls.push(DesktopCall::ChooseFile {
            max_bytes: request.max_bytes,
        });
        state.pick.clone().unwrap_or(Ok(None))
    }

    fn choose_save_location(
        &self,
        request: &SaveFile,
    ) -> Result<Option<SaveLocation>, DesktopError> {
        let mut state = self.state();
        state.calls.push(DesktopCall::SaveFile {
            suggested_name: request.suggested_name.clone(),
        });
        state
            .save
            .clone()
            .unwrap_or_else(|| Ok(Some(SaveLocation::new(&request.suggested_name))))
    }

    fn write_file(&self, location: &SaveLocation, bytes: &[u8]) -> Result<SavedFile, DesktopError> {
        let mut state = self.state();
        let name = location.name();
        state.calls.push(DesktopCall::WriteFile {
            name: name.clone(),
            bytes: bytes.to_vec(),
        });
        state
            .fail
            .clone()
            .map_or_else(|| Ok(SavedFile::new(&name, bytes.len() as u64)), Err)
    }
}
