//! The real desktop of this process, behind the [`Desktop`] port: the platform's default
//! handler, clipboard and file dialogs.

use crate::desktop::{
    write_saved, ChooseFile, Desktop, DesktopError, PickedFile, SaveFile, SaveLocation, SavedFile,
};
use crate::error::ShellError;

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

    fn choose_save_location(
        &self,
        request: &SaveFile,
    ) -> Result<Option<SaveLocation>, DesktopError> {
        crate::platform::desktop::choose_save_location(request)
    }

    fn write_file(&self, location: &SaveLocation, bytes: &[u8]) -> Result<SavedFile, DesktopError> {
        write_saved(location.path(), bytes)
    }
}
