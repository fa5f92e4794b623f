//! What a Surface webview reports to its owner.

use std::fmt;

use lineup_host_core::Fingerprint;

/// Something a Surface webview saw or refused.
///
/// Each view reports to the closure it was opened with, so the identity of an event, and above
/// all of an [`ViewEvent::Ipc`] message, is the view whose closure received it, never a field the
/// page wrote (R-SEC-4). Events are delivered from the event loop after the engine's callback has
/// returned, in the order they happened, and none is delivered once the view is closed.
///
/// `Debug` shows what the page wrote (an IPC message, a refused URL) as a length and a digest,
/// never the text: it may carry agent state or event data, and logs reach journald.
#[derive(Clone, PartialEq, Eq)]
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

    /// The main frame committed the Surface's own document: its first load, or a reload the
    /// page asked for (R-UI-10).
    DocumentCommitted,

    /// The user asked to close the view's window (the window manager's `WM_DELETE_WINDOW`). The
    /// view stays open; the owner decides (R-UI-5).
    UserCloseRequested,
    /// The page called `window.close()`. Nothing was closed (R-UI-5).
    PageCloseAttempt,
    /// The web process ended: it crashed, the system ran out of memory or it was killed.
    Crashed,
    /// The web process was ended on the host's request because its page stopped answering:
    /// the hang watchdog's termination, which the engine reports as requested by its API
    /// (R-UI-12).
    Unresponsive,
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

    /// A JSON-RPC 2.0 message an MCP App view posted to its host (`window.parent`), as its
    /// relay passed it on: posted by the view's own frame, one JSON-RPC object, within
    /// [`ViewConfig::max_mcp_message_bytes`](crate::ViewConfig::max_mcp_message_bytes)
    /// (R-MCP-7). Its JSON text, checked for that shape only: still to be validated.
    McpMessage(String),
    /// A message posted to an MCP App view's host document that its relay dropped, and why
    /// (R-MCP-7).
    McpDropped(McpDrop),
    /// The view's policy blocked a load or an evaluation in some frame of an MCP App view (its
    /// host document, the view, a frame nested in it), as that frame's
    /// `securitypolicyviolation` said (R-MCP-10). Every SDK 2.0.x view makes one `script-src`
    /// report for `eval` at load.
    McpBlocked {
        /// The directive that blocked it (`connect-src`, `img-src`, `script-src`, …).
        directive: String,
        /// What was blocked: a URL the page wrote, or `eval` or `inline`; at most 6000 bytes.
        blocked: String,
    },
}

/// Why the relay of an MCP App view did not pass a message on to the host (R-MCP-7).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum McpDrop {
    /// It was not posted by the view's own frame: a frame nested in the view posting to
    /// `window.top` or `window.parent.parent`, say.
    WrongSource,
    /// It was not one JSON-RPC 2.0 request, notification or response object (an array, a
    /// string, another `jsonrpc`, a request with a result, data without JSON text).
    NotJsonRpc,
    /// Its JSON text was longer than the bound.
    TooLarge {
        /// Its length in bytes (UTF-8).
        len: usize,
        /// The bound, [`ViewConfig::max_mcp_message_bytes`](crate::ViewConfig::max_mcp_message_bytes).
        max: usize,
    },
}

/// Writes `name(Fingerprint { .. })`: the `Debug` of a variant holding text the page wrote (an
/// IPC message, a URL it navigated to), shown as a length and a digest, never as itself.
pub fn page_text(name: &str, text: &str, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    f.debug_tuple(name).field(&Fingerprint::of(text)).finish()
}

impl fmt::Debug for ViewEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ViewEvent::Ipc(message) => page_text("Ipc", message, f),
            ViewEvent::NavigationRefused(url) => page_text("NavigationRefused", url, f),
            ViewEvent::NewWindowRefused(url) => page_text("NewWindowRefused", url, f),
            ViewEvent::DownloadRefused(url) => page_text("DownloadRefused", url, f),
            ViewEvent::IpcTooLarge { len } => {
                f.debug_struct("IpcTooLarge").field("len", len).finish()
            }
            ViewEvent::LoadFinished => f.write_str("LoadFinished"),
            ViewEvent::DocumentCommitted => f.write_str("DocumentCommitted"),
            ViewEvent::UserCloseRequested => f.write_str("UserCloseRequested"),
            ViewEvent::PageCloseAttempt => f.write_str("PageCloseAttempt"),
            ViewEvent::Crashed => f.write_str("Crashed"),
            ViewEvent::Unresponsive => f.write_str("Unresponsive"),
            ViewEvent::MemoryExceeded => f.write_str("MemoryExceeded"),
            ViewEvent::PermissionDenied => f.write_str("PermissionDenied"),
            ViewEvent::DialogSuppressed => f.write_str("DialogSuppressed"),
            ViewEvent::DropRefused => f.write_str("DropRefused"),
            ViewEvent::FileChooserRefused => f.write_str("FileChooserRefused"),
            ViewEvent::McpMessage(message) => page_text("McpMessage", message, f),
            ViewEvent::McpDropped(drop) => f.debug_tuple("McpDropped").field(drop).finish(),
            ViewEvent::McpBlocked { directive, blocked } => f
                .debug_struct("McpBlocked")
                .field("directive", &Fingerprint::of(directive))
                .field("blocked", &Fingerprint::of(blocked))
                .finish(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Logs reach journald: what a page posted or navigated to is shown as a length and a digest,
    /// never in any form of its text.
    #[test]
    fn debug_does_not_print_what_the_page_wrote() {
        const SECRET: &str = "zQ7\"secret-event-Ω";
        let ipc = format!(
            r#"{{"namespace":"lineup.surface.v1","type":"event","event":"go","data":{{"s":{}}}}}"#,
            serde_json::to_string(SECRET).unwrap_or_default()
        );
        let url = format!("https://example.invalid/?s={SECRET}");
        for event in [
            ViewEvent::Ipc(ipc.clone()),
            ViewEvent::NavigationRefused(url.clone()),
            ViewEvent::NewWindowRefused(url.clone()),
            ViewEvent::DownloadRefused(url.clone()),
            ViewEvent::McpMessage(ipc.clone()),
            ViewEvent::McpBlocked {
                directive: "connect-src".to_owned(),
                blocked: url.clone(),
            },
        ] {
            for text in [format!("{event:?}"), format!("{event:#?}")] {
                assert!(text.contains("bytes"), "a length is shown: {text}");
                assert_eq!(
                    lineup_host_core::leaked_form(&text, SECRET),
                    None,
                    "Debug printed page data: {text}"
                );
            }
        }
        // Positive control: the derived form would have shown it.
        assert!(lineup_host_core::leaked_form(&format!("{ipc:?}"), SECRET).is_some());
        assert_eq!(
            format!("{:?}", ViewEvent::IpcTooLarge { len: 9 }),
            "IpcTooLarge { len: 9 }"
        );
        assert_eq!(format!("{:?}", ViewEvent::Crashed), "Crashed");
    }
}
