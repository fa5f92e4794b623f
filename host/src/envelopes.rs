//! Typed envelopes for an embedder's agent code: ids, conversation and sender filled in
//! (R-ENV-1), sent with [`HostHandle::send_envelope`](crate::HostHandle::send_envelope) through
//! the same checks as bytes from any agent.

use std::time::{SystemTime, UNIX_EPOCH};

use lineup_host_core::{ConversationId, Envelope, MessageId, Party, PartyId, Payload};

/// Makes the envelopes one agent sends in one conversation: each gets a new id (unique to this
/// maker: a prefix drawn from the clock at its creation, then a counter), the conversation and
/// the agent as its sender.
///
/// ```
/// use lineup_host::AgentEnvelopes;
/// use lineup_host_core::{decode, ConversationId, InstanceId, Limits, Message, PartyId, UiClose};
/// let mut out = AgentEnvelopes::new(
///     ConversationId::try_from("c1").unwrap(),
///     PartyId::try_from("agent").unwrap(),
/// );
/// let close = out.envelope(UiClose {
///     instance_id: InstanceId::try_from("w1").unwrap(),
///     reason: None,
/// });
/// let bytes = serde_json::to_vec(&close).unwrap();
/// // Exactly what the host's own decoder takes from an agent.
/// let Ok(Message::UiClose(back)) = decode(&bytes, &Limits::default()) else { panic!() };
/// assert_eq!(back.id, close.id);
/// assert_eq!(back.conversation_id.as_str(), "c1");
/// assert_eq!(back.sender.id.as_str(), "agent");
/// assert_ne!(out.envelope(back.payload).id, close.id);
/// ```
#[derive(Debug, Clone)]
pub struct AgentEnvelopes {
    conversation: ConversationId,
    sender: Party,
    prefix: String,
    next: u64,
}

impl AgentEnvelopes {
    /// For `agent`'s messages in `conversation`.
    pub fn new(conversation: ConversationId, agent: PartyId) -> Self {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        Self {
            conversation,
            sender: Party {
                // "agent" is a valid party id; the fallback is never taken.
                kind: PartyId::try_from("agent").unwrap_or_else(|_| agent.clone()),
                id: agent,
            },
            prefix: format!("m{:x}", nanos & 0xffff_ffff_ffff),
            next: 0,
        }
    }

    /// The envelope of `payload`, with the next id.
    pub fn envelope<P: Payload>(&mut self, payload: P) -> Envelope<P> {
        self.next += 1;
        let id = format!("{}-{}", self.prefix, self.next);
        Envelope {
            // A prefix of hex digits and a counter: always a valid id.
            id: MessageId::try_from(id).unwrap_or_else(|_| self.fallback_id()),
            conversation_id: self.conversation.clone(),
            sender: self.sender.clone(),
            target: None,
            payload,
        }
    }

    fn fallback_id(&self) -> MessageId {
        MessageId::try_from(format!("m-{}", self.next))
            .unwrap_or_else(|e| unreachable_id(&e.to_string()))
    }
}

#[allow(clippy::panic)]
fn unreachable_id(why: &str) -> MessageId {
    panic!("m-<n> is a valid message id: {why}")
}
