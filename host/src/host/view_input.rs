//! What one report of a Surface's or an MCP App view's webview means (R-SEC-4, R-UI-12,
//! R-MCP-7): page input for its session, a loss of its web process, or a refusal the delegate
//! hears of. The key is the view's (its event closure's), never the page's word; what the view
//! table keeps of the view (its waiting messages, the documents the embedder loaded) is
//! counted on the way.

use lineup_host_core::{GoneReason, McpRelayDrop, PageInput, SurfaceKey};
use lineup_webview_shell::{McpDrop, ViewEvent};

use super::backlog::Dropped;
use super::views::Views;
use crate::delegate::Refusal;

/// What one report of a Surface's view means for the engine.
pub(super) enum ViewInput {
    /// A bridge message its page posted, after what was dropped while it waited (R-DIAG-1).
    Message {
        /// The message.
        raw: String,
        /// What was dropped while it waited, handed over first.
        dropped: Dropped,
    },
    /// A JSON-RPC message an MCP App view posted, after what was dropped while it waited
    /// (R-MCP-7).
    Mcp {
        /// The message.
        raw: String,
        /// What was dropped while it waited, handed over first.
        dropped: Dropped,
    },
    /// The policy of an MCP App view blocked a load (R-MCP-10).
    McpBlocked {
        /// The directive that blocked it.
        directive: String,
        /// What was blocked.
        blocked: String,
    },
    /// Page input for its session.
    Page(PageInput<'static>),
    /// Its web process died; it is reopened or closed, as its session decides.
    Crashed,
    /// The hang watchdog's termination of its web process (R-UI-12).
    Unresponsive,
    /// It refused what its page tried.
    Refused(Refusal),
    /// Nothing to hand on.
    Nothing,
}

impl ViewInput {
    /// What `event`, reported by the view of `key`, means; `views` takes its bridge message
    /// off the view's backlog and counts the commits of the documents the embedder loaded.
    pub(super) fn of(views: &mut Views, key: &SurfaceKey, event: ViewEvent) -> Self {
        match event {
            ViewEvent::Ipc(raw) => {
                // For `lineup-bench`'s patch profile: the event loop took the bridge message.
                tracing::debug!(target: "lineup_phase", phase = "bridge_message_handled");
                let dropped = views.bridge_message_taken(key, &raw);
                ViewInput::Message { raw, dropped }
            }
            ViewEvent::UserCloseRequested => ViewInput::Page(PageInput::UserClosed),
            ViewEvent::Crashed => ViewInput::Crashed,
            ViewEvent::Unresponsive => ViewInput::Unresponsive,
            // Never reopened: the page would only fill its ceiling again (R-UI-12).
            ViewEvent::MemoryExceeded => {
                tracing::warn!("surface {key}: web process ended at its memory ceiling");
                ViewInput::Page(PageInput::Gone(GoneReason::Memory))
            }
            ViewEvent::IpcTooLarge { len } => ViewInput::Page(PageInput::Oversized { len }),
            ViewEvent::LoadFinished => ViewInput::Nothing,
            ViewEvent::DocumentCommitted => ViewInput::Page(if views.committed(key) {
                PageInput::EmbedderReloaded
            } else {
                PageInput::DocumentCommitted
            }),
            ViewEvent::PageCloseAttempt => ViewInput::Refused(Refusal::PageClose),
            ViewEvent::NavigationRefused(url) => ViewInput::Refused(Refusal::Navigation(url)),
            ViewEvent::NewWindowRefused(url) => ViewInput::Refused(Refusal::NewWindow(url)),
            ViewEvent::DownloadRefused(url) => ViewInput::Refused(Refusal::Download(url)),
            ViewEvent::PermissionDenied => ViewInput::Refused(Refusal::Permission),
            ViewEvent::DialogSuppressed => ViewInput::Refused(Refusal::Dialog),
            ViewEvent::DropRefused => ViewInput::Refused(Refusal::Drop),
            ViewEvent::FileChooserRefused => ViewInput::Refused(Refusal::FileChooser),
            ViewEvent::McpMessage(raw) => {
                let dropped = views.bridge_message_taken(key, &raw);
                ViewInput::Mcp { raw, dropped }
            }
            // One over the bound: the view hears an error naming it (R-MCP-6).
            ViewEvent::McpDropped(McpDrop::TooLarge { len, .. }) => {
                ViewInput::Page(PageInput::Oversized { len })
            }
            ViewEvent::McpDropped(McpDrop::WrongSource) => {
                ViewInput::Page(PageInput::McpRelayDropped(McpRelayDrop::WrongSource))
            }
            ViewEvent::McpDropped(McpDrop::NotJsonRpc) => {
                ViewInput::Page(PageInput::McpRelayDropped(McpRelayDrop::NotJsonRpc))
            }
            ViewEvent::McpBlocked { directive, blocked } => {
                ViewInput::McpBlocked { directive, blocked }
            }
        }
    }
}
