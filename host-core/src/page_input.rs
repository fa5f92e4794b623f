//! What a Surface's webview reports to the kernel ([`PageInput`]): the one route for page input,
//! through the session table ([`Sessions::handle_page`](crate::Sessions::handle_page)) to the
//! session its [`SurfaceKey`](crate::SurfaceKey) names, as agent input goes through
//! [`Sessions::handle_inbound`](crate::Sessions::handle_inbound).

use crate::component::UserAnswer;
use crate::effect::GoneReason;

/// One report of a Surface's webview (or of a standard component's view), for its session.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PageInput<'a> {
    /// A bridge message the page posted (R-UI-6, R-UI-7).
    Message(&'a str),
    /// A bridge message longer than `Limits::max_bridge_message_bytes`, dropped where it
    /// arrived before it could be read; counted like any invalid bridge message (R-UI-7).
    Oversized {
        /// Its length in bytes.
        len: usize,
    },
    /// Bridge messages dropped while `Limits::max_pending_bridge_messages` waited (R-ENV-4):
    /// counted, never forwarded.
    Flood {
        /// How many.
        count: u64,
    },
    /// Diagnostics dropped while `Limits::max_pending_diagnostics` waited: they count against
    /// the Surface's budget as suppressed (R-DIAG-1).
    DiagnosticsDropped {
        /// How many.
        count: u64,
    },
    /// The user closed the Surface's window (window manager, host chrome): exactly one
    /// `ui.event close` goes upstream (R-UI-5).
    UserClosed,
    /// It went away on its own and is not restored (R-UI-12): it is closed and the agent gets
    /// `ui.event` `close` with `data.reason`, exactly once.
    Gone(GoneReason),
    /// Its web process died (crashed, killed by the system or a signal) or was ended because it
    /// stopped answering (R-UI-12). Within the Surface's budget (`Limits::max_reopens_per_window`
    /// per `Limits::reopen_window`) it is reopened ([`Effect::Reopen`](crate::Effect::Reopen)):
    /// same instance, a new generation, the same bundle, and its last state after the new page's
    /// `ready`; nothing goes upstream, and messages of the old generation reach nobody. Past the
    /// budget, and always for [`GoneReason::Memory`] and [`GoneReason::ReloadLoop`], it is
    /// closed as for [`PageInput::Gone`].
    Lost(GoneReason),
    /// Its main frame committed a new document (R-UI-10). The first commit is the Surface's own
    /// load; each later one is a reload: the page gets the current state again after its next
    /// `ready`, exactly once, and patches meanwhile coalesce to the latest. More than
    /// `Limits::max_documents_per_window` commits within `Limits::document_window` close the
    /// Surface as a reload loop (R-UI-12). Same-document navigations (fragments, `pushState`)
    /// are not commits.
    DocumentCommitted,
    /// Its main frame committed a document the **embedder** loaded on purpose (a preview's hot
    /// reload of an edited bundle): as for [`PageInput::DocumentCommitted`] the page gets the
    /// current state again after its next `ready` (R-UI-10), but the commit does not count
    /// toward the reload-loop bound, so an author saving often is never closed as a loop.
    EmbedderReloaded,
    /// Its view could not be made or its document not served: it closes and the agent gets a
    /// `client.error` `surface_failed` in reply to the open (R-ENV-5).
    OpenFailed(&'a str),
    /// Its view was not made: `limit` Surfaces have a web process
    /// (`Limits::max_live_surfaces`) and no hidden one could hibernate; the open is refused
    /// `too_many_live_surfaces`, naming the limit, in reply to the open (R-SES-1).
    LiveCapReached {
        /// The limit in force.
        limit: usize,
    },
    /// A standard component's renderer failed after its open was accepted: it closes with
    /// `renderer_failed` (R-STD-13).
    ComponentFailed,
    /// The user answered a standard component in the host's own view, after its input gate
    /// (R-STD-6, R-STD-8): checked against the props, then `submit` or `cancel` upstream; a
    /// refused answer is dropped and counted.
    ComponentAnswered(&'a UserAnswer),
    /// The user closed a standard component's view: one `ui.event close {}` upstream (R-UI-5).
    ComponentClosed,
    /// A standard component's view reports the user's unsent draft (R-STD-15): kept with the
    /// instance and in a vouched session's record, except what a `secret` input holds; dropped
    /// when it is not the shape of the component's answer or larger than
    /// [`MAX_DRAFT_BYTES`](crate::component::MAX_DRAFT_BYTES).
    ComponentDraft(&'a serde_json::Value),
    /// A message an MCP App view posted through its relay (R-MCP-6, R-MCP-7): one JSON-RPC 2.0
    /// message as text, checked by the view's router. Every request gets one answer (the
    /// agent's, the host's, or a JSON-RPC error naming the limit or the rule).
    McpFromView(&'a str),
    /// A message posted to an MCP App view's host document that its relay dropped before it
    /// was read (R-MCP-7): counted (`Stats::mcp_relay_dropped`), never answered, since it is
    /// not the view's own or not JSON-RPC. One over the size bound is
    /// [`PageInput::Oversized`] instead, and the view hears an error.
    McpRelayDropped(McpRelayDrop),
    /// The policy of an MCP App view blocked a load or an evaluation in one of its frames
    /// (R-MCP-10): the agent hears `ui.event` `blocked` with the directive and what was
    /// blocked, except the one `script-src` `eval` report every SDK 2.0.x view makes at load
    /// (one per load of the view), which is counted (`Stats::mcp_eval_reports`).
    McpBlocked {
        /// The directive that blocked it (`connect-src`, `img-src`, `script-src`, …).
        directive: &'a str,
        /// What was blocked: a URL the page wrote, or `eval` or `inline`.
        blocked: &'a str,
    },
}

/// Why the relay of an MCP App view dropped a message before it was read (R-MCP-7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpRelayDrop {
    /// It was not posted by the view's own frame (a frame nested in the view, say).
    WrongSource,
    /// It was not one JSON-RPC 2.0 object.
    NotJsonRpc,
}
