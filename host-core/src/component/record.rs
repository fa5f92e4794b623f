//! R-STD-15's restoration records: what the store keeps of each open component instance of a
//! vouched identity's conversation, written on every change, forgotten at close, and read back
//! when the same identity re-establishes the conversation after a restart.
//!
//! The kernel stays sans-IO: a session keeps, forgets and reads its records through its
//! [`StorePort`](crate::StorePort), over the platform's [`InstanceStore`]. What comes back from
//! a store is checked again like an agent's open (another process may share the data
//! directory); neither a `secret` input's draft nor its submitted value reaches a record.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ids::{ConversationId, InstanceId, MessageId, Party, PartyId};
use crate::json::JsonObject;

/// At most this many records are kept per identity; the least recently written go first
/// (R-STD-15).
pub const MAX_RECORDS_PER_IDENTITY: usize = 256;

/// Records older than this many seconds are not restored and are deleted (R-STD-15: 7 days).
pub const RECORD_TTL_SECS: i64 = 7 * 24 * 60 * 60;

/// The largest draft a record keeps, in bytes of JSON; a larger one is not kept.
pub const MAX_DRAFT_BYTES: usize = 16 * 1024;

/// Where a recorded instance stood: `restored {status}` (R-STD-15).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordStatus {
    /// Waiting for the user.
    Open,
    /// Submitted in its last round.
    Answered,
    /// Cancelled in its last round.
    Cancelled,
}

impl RecordStatus {
    /// The wire form.
    pub fn as_str(self) -> &'static str {
        match self {
            RecordStatus::Open => "open",
            RecordStatus::Answered => "answered",
            RecordStatus::Cancelled => "cancelled",
        }
    }
}

/// One open component instance as the store keeps it (R-STD-15).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstanceRecord {
    /// Its conversation.
    pub conversation: ConversationId,
    /// Its instance id.
    pub instance_id: InstanceId,
    /// The component id (`confirm`, …).
    pub component: String,
    /// The component version (`1`).
    pub version: String,
    /// Its props, cleaned.
    pub props: JsonObject,
    /// Its state, cleaned.
    pub state: JsonObject,
    /// The `id` of the `ui.open` that made it.
    pub opened_by: MessageId,
    /// The `id` of the last open or patch applied.
    pub state_from: MessageId,
    /// The agent that opened it, who hears `restored`.
    pub opener: Party,
    /// Where it stood.
    pub status: RecordStatus,
    /// Its answer round.
    pub round: u32,
    /// The user's unsent draft (never a `secret` one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draft: Option<Value>,
    /// The data of the last `submit` or `cancel` it sent (its `answer_id` among it), without
    /// the value of a `secret` input or `form` field (§3: never stored).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last: Option<JsonObject>,
}

/// The error of an [`InstanceStore`].
pub type InstanceStoreError = Box<dyn std::error::Error + Send + Sync>;

/// Where the platform keeps [`InstanceRecord`]s, by vouched identity and conversation
/// (R-STD-15); the kernel calls it through its [`StorePort`](crate::StorePort)
/// ([`StorePort::with_records`](crate::StorePort::with_records)). Implementations bound what they keep by [`MAX_RECORDS_PER_IDENTITY`] and
/// [`RECORD_TTL_SECS`].
pub trait InstanceStore {
    /// Inserts `record` for `owner`, or replaces the one of the same conversation and instance.
    fn put_instance(
        &mut self,
        owner: &PartyId,
        record: &InstanceRecord,
    ) -> Result<(), InstanceStoreError>;

    /// Deletes `owner`'s record of `instance` in `conversation`, if there is one.
    fn forget_instance(
        &mut self,
        owner: &PartyId,
        conversation: &ConversationId,
        instance: &InstanceId,
    ) -> Result<(), InstanceStoreError>;

    /// `owner`'s records of `conversation` still within [`RECORD_TTL_SECS`], oldest first.
    fn instances(
        &mut self,
        owner: &PartyId,
        conversation: &ConversationId,
    ) -> Result<Vec<InstanceRecord>, InstanceStoreError>;

    /// Inserts the record of a hibernated Surface for `owner` (#29), or replaces the record of
    /// the same conversation and instance, of either kind; bounded with the components' records
    /// by [`MAX_RECORDS_PER_IDENTITY`]. [`InstanceStore::forget_instance`] forgets it.
    fn put_surface(
        &mut self,
        owner: &PartyId,
        record: &crate::SurfaceRecord,
    ) -> Result<(), InstanceStoreError>;

    /// `owner`'s hibernated Surfaces of `conversation` still within [`RECORD_TTL_SECS`],
    /// oldest first.
    fn surfaces(
        &mut self,
        owner: &PartyId,
        conversation: &ConversationId,
    ) -> Result<Vec<crate::SurfaceRecord>, InstanceStoreError>;
}
