//! What a Surface webview reports to its owner.

/// Something a Surface webview saw or refused.
///
/// Each view reports to the closure it was opened with, so the identity of an event, and above
/// all of an [`ViewEvent::Ipc`] message, is the view whose closure received it, never a field the
/// page wrote (R-SEC-4). Events are delivered from the event loop after the engine's callback has
/// returned, in the order they happened, and none is delivered once the view is closed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ViewEvent {
    /// A message the page posted to the IPC handler, unparsed: any frame of the page can post
    /// (R-SEC-4), so it still needs validation.
    Ipc(String),
    /// An IPC message longer than the configured maximum was dropped.
    IpcTooLarge {
        /// Its length in bytes.
        len: usize,
    },
    /// The document finished loading.
    LoadFinished,
    /// The user asked to close the view's window (the window manager's `WM_DELETE_WINDOW`). The
    /// view stays open; the owner decides (R-UI-5).
    UserCloseRequested,
    /// The page called `window.close()`. Nothing was closed (R-UI-5).
    PageCloseAttempt,
    /// The web process ended: it crashed, the system ran out of memory or it was killed.
    Crashed,
    /// The web process was ended because its memory passed the view's ceiling
    /// ([`ViewConfig::with_memory_limit_mib`](crate::ViewConfig::with_memory_limit_mib)).
    MemoryExceeded,
    /// A navigation of some frame to this URL was refused (R-SEC-2, R-SEC-2a).
    NavigationRefused(String),
    /// A new window for this URL was refused (R-SEC-2).
    NewWindowRefused(String),
    /// A download of this URL was refused (R-SEC-2).
    DownloadRefused(String),
    /// A permission request (geolocation, notifications, camera, …) was denied (R-SEC-2).
    PermissionDenied,
    /// An `alert`, `confirm`, `prompt` or before-unload dialog was answered without being shown:
    /// cancel for `confirm` and before-unload, no text for `prompt`.
    DialogSuppressed,
    /// A drag from outside the view (files from a file manager, say) was refused.
    DropRefused,
    /// A file chooser (`<input type=file>`) was refused.
    FileChooserRefused,
}
