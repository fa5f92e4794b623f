//! The agent's envelopes to the host (R-ENV-1): each typed payload wrapped with a new id, the
//! conversation and the agent as sender, serialized once, and refused when it would pass the
//! bound the host reads (R-ENV-4).

use lineup_host_core::{ConversationId, Envelope, Limits, MessageId, Party, PartyId, Payload};

use crate::error::McpError;

/// One envelope for the host, serialized: exactly the bytes of one `lineup.v1` line or frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outgoing {
    id: MessageId,
    kind: &'static str,
    bytes: Vec<u8>,
}

impl Outgoing {
    /// Its envelope id (a `client.error`'s `in_reply_to` names it).
    pub fn id(&self) -> &MessageId {
        &self.id
    }

    /// Its envelope type (`lineup.v1.mcp.tool`).
    pub fn kind(&self) -> &'static str {
        self.kind
    }

    /// Its JSON, without a line end.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Its JSON, by value.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }
}

/// Makes the envelopes one agent sends in one conversation: ids `mcp-1`, `mcp-2`, … (unique
/// within it), the conversation and the agent as sender.
///
/// Invariant: every [`Outgoing`] it made is at most `max_envelope_bytes` long.
#[derive(Debug, Clone)]
pub struct Outbox {
    conversation: ConversationId,
    sender: Party,
    next: u64,
    max_envelope_bytes: usize,
}

impl Outbox {
    /// For `agent`'s envelopes in `conversation`, within the host's default envelope bound
    /// ([`Limits::max_envelope_bytes`], 1 MiB).
    pub fn new(conversation: ConversationId, agent: PartyId) -> Self {
        Self {
            conversation,
            sender: Party {
                kind: agent_kind(),
                id: agent,
            },
            next: 0,
            max_envelope_bytes: Limits::default().max_envelope_bytes,
        }
    }

    /// This outbox for a host whose envelope bound is `max_envelope_bytes`.
    pub fn with_max_envelope_bytes(mut self, max_envelope_bytes: usize) -> Self {
        self.max_envelope_bytes = max_envelope_bytes;
        self
    }

    /// The envelope bound it keeps.
    pub fn max_envelope_bytes(&self) -> usize {
        self.max_envelope_bytes
    }

    /// The conversation its envelopes belong to.
    pub fn conversation(&self) -> &ConversationId {
        &self.conversation
    }

    /// The envelope of `payload` with the next id; refused, using no id, when it is longer
    /// than the bound (`what` names it in the refusal).
    pub fn envelope<P: Payload>(
        &mut self,
        what: &'static str,
        payload: P,
    ) -> Result<Outgoing, McpError> {
        let id = self.next_id();
        let envelope = Envelope {
            id: id.clone(),
            conversation_id: self.conversation.clone(),
            sender: self.sender.clone(),
            target: None,
            payload,
        };
        // A protocol payload always serializes: its maps have string keys.
        let bytes = serde_json::to_vec(&envelope).unwrap_or_default();
        if bytes.len() > self.max_envelope_bytes {
            return Err(McpError::EnvelopeTooLarge {
                what,
                size: bytes.len(),
                limit: self.max_envelope_bytes,
            });
        }
        self.next += 1;
        Ok(Outgoing {
            id,
            kind: P::TYPE,
            bytes,
        })
    }

    fn next_id(&self) -> MessageId {
        // `mcp-` and a number: always a valid id.
        MessageId::try_from(format!("mcp-{}", self.next + 1)).unwrap_or_else(|_| fallback_id())
    }
}

/// `agent`, the sender kind of every envelope an agent sends.
fn agent_kind() -> PartyId {
    PartyId::try_from("agent").unwrap_or_else(|e| unreachable_id(&e.to_string()))
}

fn fallback_id() -> MessageId {
    MessageId::try_from("mcp").unwrap_or_else(|e| unreachable_id(&e.to_string()))
}

#[allow(clippy::panic)]
fn unreachable_id<T>(why: &str) -> T {
    panic!("a short ASCII word is a valid id: {why}")
}
