//! What may establish a session (R-SES-1): a decoded envelope, or a well-formed envelope whose
//! payload was refused, and the table's answers when none can be established.

use crate::error::{ErrorCode, ProtocolError, UsageError};
use crate::ids::ConversationId;
use crate::message::Message;
use crate::session::{Effect, Session};

/// An envelope of a conversation without a session.
pub(super) enum Establishing {
    /// A decoded envelope.
    Message(Message),
    /// A well-formed envelope whose payload was refused ([`ProtocolError::sender`]).
    Refused {
        err: ProtocolError,
        conversation: ConversationId,
    },
}

impl Establishing {
    /// Its conversation.
    pub(super) fn conversation(&self) -> &ConversationId {
        match self {
            Self::Message(message) => message.conversation_id(),
            Self::Refused { conversation, .. } => conversation,
        }
    }

    /// The table's own admission check, before anything is set up.
    pub(super) fn admission(&self, table: &Session) -> Result<(), ProtocolError> {
        match self {
            Self::Message(message) => table.check_admission(message),
            Self::Refused { err, .. } => table.check_refused_admission(err),
        }
    }

    /// The table answers instead of a session; nothing changes.
    pub(super) fn refuse_on(&self, table: &mut Session, err: ProtocolError) -> Vec<Effect> {
        match self {
            Self::Message(message) => table.refuse_message(message, err),
            Self::Refused { err: refused, .. } => table.refuse_about(refused, err),
        }
    }

    /// Hands it to `session`, a new one, with `total` Surfaces open over the table.
    pub(super) fn establish(self, session: &mut Session, total: usize) -> Vec<Effect> {
        match self {
            Self::Message(message) => session.handle_message_within(message, total),
            Self::Refused { err, .. } => session.establish_refusing(err),
        }
    }
}

/// The refusal of a new conversation when `open` sessions reach the table's `limit`.
pub(super) fn too_many_sessions(
    conversation: &ConversationId,
    open: usize,
    limit: usize,
) -> ProtocolError {
    ProtocolError::new(
        ErrorCode::TooManySessions,
        "R-SES-1",
        format!(
            "conversation {conversation} would be session {} of this host; the limit is {limit}; \
             end a conversation first",
            open + 1
        ),
    )
    .field("conversation_id")
    .limit(limit)
}

/// The refusal of a conversation whose session could not be started (`e`).
pub(super) fn cannot_start(e: &UsageError) -> ProtocolError {
    ProtocolError::new(
        ErrorCode::Unsupported,
        "R-SES-1",
        format!("the host cannot start a session for this conversation now: {e}"),
    )
}
