//! Where a session's inputs go when the part is chosen by what they name: a webview's report
//! ([`PageInput`]) to the Surface, standard component or MCP App view its key names (R-SEC-4:
//! the identity is the webview that reported it), and who a refusal of a message is about.

use super::common::Common;
use super::desk::ComponentDesk;
use super::mcp_views::McpViews;
use super::surfaces::Surfaces;
use crate::component::{AnswerRefusal, ComponentClosed, UserAnswer};
use crate::error::Readable;
use crate::message::Message;
use crate::page_input::PageInput;
use crate::{Effect, SurfaceKey};

/// Who and what a refusal of `message` is about (R-ENV-5).
pub(super) fn readable(message: &Message) -> Readable {
    let call = match message {
        Message::AppCall(env) => Some(&env.payload),
        _ => None,
    };
    Readable {
        id: Some(message.id().clone()),
        conversation_id: Some(message.conversation_id().clone()),
        call_id: call.map(|c| c.call_id.clone()),
        sender: None,
        capability: call.map(|c| Box::new(c.capability.clone())),
    }
}

/// See [`Session::component_answered`](crate::Session::component_answered): a refused answer
/// is counted.
pub(super) fn component_answered(
    key: &SurfaceKey,
    answer: &UserAnswer,
    common: &mut Common,
    components: &mut ComponentDesk,
) -> Result<Vec<Effect>, AnswerRefusal> {
    let result = components.answered(key, answer, common);
    if result.is_err() {
        common.stats_mut().answers_dropped += 1;
    }
    result
}

/// See [`Session::handle_page`](crate::Session::handle_page): what each report does is on its
/// [`PageInput`] variant; a report of an MCP App view goes to [`McpViews`] whatever it is.
pub(super) fn page(
    key: &SurfaceKey,
    input: PageInput<'_>,
    common: &mut Common,
    (surfaces, components, mcp): (&mut Surfaces, &mut ComponentDesk, &mut McpViews),
) -> Vec<Effect> {
    if mcp.holds(key, common) {
        return mcp.page(key, input, common);
    }
    match input {
        PageInput::Message(raw) => surfaces.handle_bridge(key, raw, common),
        PageInput::Oversized { len } => surfaces.bridge_oversized(key, len, common),
        PageInput::Flood { count } => {
            let limit = common.limits().max_pending_bridge_messages;
            surfaces.bridge_flood(key, (count, limit), common)
        }
        PageInput::DiagnosticsDropped { count } => {
            surfaces.diagnostics_dropped(key, count, common);
            Vec::new()
        }
        PageInput::UserClosed => surfaces.user_closed(key, common),
        PageInput::Gone(reason) => {
            let mut fx = Vec::new();
            surfaces.gone(key, reason, common, &mut fx);
            fx
        }
        PageInput::Lost(reason) => surfaces.lost(key, reason, common),
        PageInput::DocumentCommitted => surfaces.committed(key, true, common),
        PageInput::EmbedderReloaded => surfaces.committed(key, false, common),
        PageInput::OpenFailed(why) => surfaces.open_failed(key, why, common),
        PageInput::LiveCapReached { limit } => surfaces.refused_live(key, limit, common),
        PageInput::ComponentFailed => components.gone(key, ComponentClosed::RendererFailed, common),
        // A refused answer is counted; nothing else follows.
        PageInput::ComponentAnswered(answer) => {
            component_answered(key, answer, common, components).unwrap_or_default()
        }
        PageInput::ComponentClosed => components.gone(key, ComponentClosed::User, common),
        PageInput::ComponentDraft(draft) => components.draft(key, draft, common),
        // Not a view's (closed or replaced): counted, reaches nobody.
        PageInput::McpFromView(_)
        | PageInput::McpRelayDropped(_)
        | PageInput::McpBlocked { .. } => mcp.page(key, input, common),
    }
}
