//! What a Surface's webview reports to the kernel ([`PageInput`]): the one route for page input,
//! through the session table ([`Sessions::handle_page`](crate::Sessions::handle_page)) to the
//! session its [`SurfaceKey`](crate::SurfaceKey) names, as agent input goes through
//! [`Sessions::handle_inbound`](crate::Sessions::handle_inbound).

use crate::component::UserAnswer;
use crate::effect::{Effect, GoneReason};
use crate::session::Session;
use crate::SurfaceKey;

/// One report of a Surface's webview (or of a standard component's view), for its session.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PageInput<'a> {
    /// A bridge message the page posted (R-UI-6, R-UI-7).
    Message(&'a str),
    /// A bridge message longer than `Limits::max_bridge_message_bytes`, dropped where it
    /// arrived (R-UI-7).
    Oversized {
        /// Its length in bytes.
        len: usize,
    },
    /// Bridge messages dropped while `Limits::max_pending_bridge_messages` waited (R-ENV-4).
    Flood {
        /// How many.
        count: u64,
    },
    /// Diagnostics dropped while `Limits::max_pending_diagnostics` waited (R-DIAG-1).
    DiagnosticsDropped {
        /// How many.
        count: u64,
    },
    /// The user closed the Surface's window (R-UI-5).
    UserClosed,
    /// Its web process ended and it is not restored (R-UI-12).
    Gone(GoneReason),
    /// Its web process ended: reopen it in place with its last state (R-UI-12).
    Lost(GoneReason),
    /// A new document committed in its view (the page reloaded itself, R-UI-10).
    DocumentCommitted,
    /// A new document committed because the embedder reloaded it.
    EmbedderReloaded,
    /// Its view could not be made or its document not served.
    OpenFailed(&'a str),
    /// Its view was not made: `limit` Surfaces have a web process
    /// (`Limits::max_live_surfaces`) and no hidden one could hibernate; the open is refused
    /// `too_many_live_surfaces`, naming the limit.
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
    /// A standard component's view reports the user's unsent draft (R-STD-15): kept for a
    /// vouched session's restoration, never a `secret` input's.
    ComponentDraft(&'a serde_json::Value),
}

impl PageInput<'_> {
    /// Hands the input to `session`.
    pub(crate) fn apply(self, session: &mut Session, key: &SurfaceKey) -> Vec<Effect> {
        match self {
            PageInput::Message(raw) => session.handle_bridge(key, raw),
            PageInput::Oversized { len } => session.handle_bridge_oversized(key, len),
            PageInput::Flood { count } => {
                let limit = session.limits().max_pending_bridge_messages;
                session.handle_bridge_flood(key, count, limit)
            }
            PageInput::DiagnosticsDropped { count } => session.diagnostics_dropped(key, count),
            PageInput::UserClosed => session.user_closed(key),
            PageInput::Gone(reason) => session.surface_gone(key, reason),
            PageInput::Lost(reason) => session.surface_lost(key, reason),
            PageInput::DocumentCommitted => session.document_committed(key),
            PageInput::EmbedderReloaded => session.embedder_reloaded(key),
            PageInput::OpenFailed(why) => session.open_failed(key, why),
            PageInput::LiveCapReached { limit } => session.open_refused_live(key, limit),
            PageInput::ComponentFailed => session.component_failed(key),
            // A refused answer is counted by the session; nothing else follows.
            PageInput::ComponentAnswered(answer) => session
                .component_answered(key, answer.clone())
                .unwrap_or_default(),
            PageInput::ComponentClosed => session.component_closed_by_user(key),
            PageInput::ComponentDraft(draft) => session.component_draft(key, draft),
        }
    }
}
