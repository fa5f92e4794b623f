//! A hibernated Surface's record (#29 item 3): what the store keeps of a vouched session's
//! Surface while it has no webview, beside the standard components' records (R-STD-15), so
//! that after a restart the same identity's conversation gets it back the same way.
//!
//! Written when the host hibernates the Surface and at every patch while it sleeps, forgotten
//! when it wakes or closes; a session that ends keeps it. What a store gives back is checked
//! again like an agent's `ui.open` (another process may share the data directory), and an
//! installed app's Surface is resolved again at the version it was opened with.

use serde::{Deserialize, Serialize};

use crate::ids::{ConversationId, InstanceId, MessageId, Party};
use crate::json::JsonObject;
use crate::message::SurfaceSource;

/// The `kind` a store files a [`SurfaceRecord`] under, apart from component ids.
pub const SURFACE_RECORD_KIND: &str = "surface";

/// One hibernated Surface as the store keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SurfaceRecord {
    /// Its conversation.
    pub conversation: ConversationId,
    /// Its instance id.
    pub instance_id: InstanceId,
    /// What it was opened from, in the wire form of `payload.app`: an inline bundle, or an
    /// installed app's Surface by id at the version it was opened with.
    pub app: SurfaceSource,
    /// Its latest state (R-UI-3: the last open or patch).
    pub state: JsonObject,
    /// The `id` of the `ui.open` that made it.
    pub opened_by: MessageId,
    /// The `id` of the last open or patch applied.
    pub state_from: MessageId,
    /// The agent that opened it, who hears `restored`.
    pub opener: Party,
}
