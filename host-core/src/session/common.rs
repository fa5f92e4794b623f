//! What every part of a session reads or draws from: its configuration, clock, conversation,
//! numbers, open bounds and counters, and the one place where its envelopes are built and its
//! refusals answered (R-ENV-1, R-ENV-2, R-ENV-5, R-SES-1).

use std::time::Duration;

use super::numbers::Numbers;
use super::opens::Opens;
use crate::capability::{reported, StorePort};
use crate::error::{ErrorCode, ProtocolError};
use crate::ids::{shorten, ConversationId, InstanceId, MessageId, PartyId};
use crate::keys::Generation;
use crate::limits::Limits;
use crate::message::Payload;
use crate::message::{AppError, AppResult, ClientError, Direction, Envelope, Message, Party};
use crate::session_config::{Clock, SessionConfig};
use crate::Status;
use crate::{Effect, Stats, SurfaceKey};

/// The `sender.kind` of every envelope the client accepts.
const AGENT_KIND: &str = "agent";

/// A session's configuration, clock and conversation, the numbers it draws, the bounds on its
/// opens and its counters.
///
/// Invariants: the conversation, once set, never changes (R-SES-1); every outbound envelope is
/// built by [`Common::build`], with a fresh id under the configured prefix (checked valid by
/// `Session::new`) and the configured client as its sender; every refusal is counted once.
pub(super) struct Common {
    config: SessionConfig,
    clock: Box<dyn Clock>,
    conversation: Option<ConversationId>,
    numbers: Numbers,
    opens: Opens,
    stats: Stats,
}

impl Common {
    /// A session's common part for `config`, no conversation yet unless configured.
    pub(super) fn new(config: SessionConfig, clock: Box<dyn Clock>) -> Self {
        Self {
            conversation: config.conversation_id.clone(),
            config,
            clock,
            numbers: Numbers::default(),
            opens: Opens::default(),
            stats: Stats::default(),
        }
    }

    /// The configuration.
    pub(super) fn config(&self) -> &SessionConfig {
        &self.config
    }

    /// The limits in force.
    pub(super) fn limits(&self) -> &Limits {
        &self.config.limits
    }

    /// The standard components the driver renders now (R-STD-14).
    pub(super) fn set_standard_components(&mut self, set: crate::component::ComponentSet) {
        self.config.standard_components = set;
    }

    /// The clock's monotonic time now.
    pub(super) fn now(&self) -> Duration {
        self.clock.monotonic()
    }

    /// The conversation, once known.
    pub(super) fn conversation(&self) -> Option<&ConversationId> {
        self.conversation.as_ref()
    }

    /// Sets the conversation when there is none yet; whether it was set now (R-SES-1).
    pub(super) fn establish(&mut self, conversation: &ConversationId) -> bool {
        if self.conversation.is_some() {
            return false;
        }
        self.conversation = Some(conversation.clone());
        true
    }

    /// The counters.
    pub(super) fn stats(&self) -> &Stats {
        &self.stats
    }

    /// The counters, to count.
    pub(super) fn stats_mut(&mut self) -> &mut Stats {
        &mut self.stats
    }

    /// The numbers the session draws.
    pub(super) fn numbers(&mut self) -> &mut Numbers {
        &mut self.numbers
    }

    /// The generation of the next view of an instance.
    pub(super) fn generation(&mut self) -> Generation {
        self.numbers.generation()
    }

    /// Surfaces open in the table's other sessions, for the message about to be handled
    /// (R-SES-1); back to 0 after it.
    pub(super) fn set_elsewhere(&mut self, open: usize) {
        self.opens.set_elsewhere(open);
    }

    /// Refuses a new Surface when `here` (this session's) and the other sessions' reach
    /// `Limits::max_surfaces` (R-SES-1, R-SEC-2).
    pub(super) fn admit_count(&self, here: usize) -> Result<(), ProtocolError> {
        self.opens.admit_count(here, &self.config.limits)
    }

    /// The limits in force and the counters, both at once (to count while reading a bound).
    pub(super) fn limits_and_stats(&mut self) -> (&Limits, &mut Stats) {
        (&self.config.limits, &mut self.stats)
    }

    /// Counts one open (of a Surface or a component: one window, R-STD-17) against
    /// `Limits::max_opens_per_window`, or refuses it `rate_limited`.
    pub(super) fn admit_open_rate(&mut self) -> Result<(), ProtocolError> {
        let now = self.clock.monotonic();
        self.opens.admit_rate(now, &self.config.limits)
    }

    /// The key of view `generation` of `instance` in this session.
    pub(super) fn key(&self, instance: &InstanceId, generation: Generation) -> SurfaceKey {
        SurfaceKey {
            session: self.config.session_id,
            instance: instance.clone(),
            generation,
        }
    }

    /// Whether `key` names a view of this session (not whether it is current).
    pub(super) fn owns(&self, key: &SurfaceKey) -> bool {
        key.session == self.config.session_id
    }

    /// Who a record of this session belongs to and its conversation, when the session is
    /// vouched and has a conversation (nothing is kept for an unvouched one, R-STD-15, #29).
    pub(super) fn record_owner(&self) -> Option<(PartyId, ConversationId)> {
        Some((self.config.agent_id.clone()?, self.conversation.clone()?))
    }

    /// The store the session keeps its records in ([`SessionConfig::store`]).
    pub(super) fn store(&self) -> &StorePort {
        &self.config.store
    }

    /// Forgets the store's record of `instance`, when the session keeps records: it closed
    /// (R-STD-15), woke (#29), or did not pass an open's checks after a restart.
    pub(super) fn forget_record(&self, instance: &InstanceId) {
        if let Some((owner, conversation)) = self.record_owner() {
            let store = &self.config.store;
            reported(store.forget_instance(&owner, &conversation, instance));
        }
    }

    /// The checks every decoded inbound envelope passes before it may change anything, on its
    /// parts: its conversation (R-ENV-1, R-SES-1), its direction (R-ENV-2) and its sender
    /// (R-ENV-1, R-SES-1: the agent the transport vouches for).
    pub(super) fn admit_envelope(
        &self,
        conversation: &ConversationId,
        direction: Direction,
        message_type: &str,
        sender: &Party,
    ) -> Result<(), ProtocolError> {
        if let Some(ours) = self
            .conversation
            .as_ref()
            .filter(|ours| *ours != conversation)
        {
            return Err(ProtocolError::new(
                ErrorCode::WrongConversation,
                "R-ENV-1",
                format!("conversation_id {conversation} is not this session's conversation {ours}"),
            )
            .field("conversation_id"));
        }
        if direction == Direction::ClientToAgent {
            return Err(ProtocolError::new(
                ErrorCode::WrongDirection,
                "R-ENV-2",
                format!("{message_type} is sent by the client, not to it"),
            )
            .field("type"));
        }
        let kind = &sender.kind;
        if kind.as_str() != AGENT_KIND {
            return Err(ProtocolError::new(
                ErrorCode::WrongSender,
                "R-ENV-1",
                format!(
                    "sender.kind is {:?}; only a sender of kind {AGENT_KIND:?} sends {message_type} to the client",
                    shorten(kind.as_str(), 40),
                ),
            )
            .field("sender.kind"));
        }
        let id = &sender.id;
        if let Some(vouched) = self.config.agent_id.as_ref().filter(|v| *v != id) {
            return Err(ProtocolError::new(
                ErrorCode::WrongSender,
                "R-SES-1",
                format!(
                    "sender.id is {:?}; this session's agent is {:?}, vouched for by the transport",
                    shorten(id.as_str(), 64),
                    vouched.as_str()
                ),
            )
            .field("sender.id"));
        }
        Ok(())
    }

    /// Answers a refused envelope, counted: `app.result` when it has a readable `call_id`
    /// (`failed` with an [`AppError`] for a malformed call, `unsupported` for an unknown
    /// `app.*` type), `client.error` otherwise; in the refused envelope's conversation when it
    /// could be read (R-ENV-5). The capability kernel's audit of a refused call is the
    /// session's to add.
    pub(super) fn refusal(&mut self, err: ProtocolError, target: Option<Party>) -> [Effect; 2] {
        self.stats.envelopes_refused += 1;
        let conversation = err.conversation_id.clone();
        let answer = match &err.call_id {
            Some(call_id) => {
                let failed = err.code != ErrorCode::Unsupported;
                let payload = AppResult {
                    call_id: call_id.clone(),
                    status: if failed {
                        Status::Failed
                    } else {
                        Status::Unsupported
                    },
                    result: None,
                    // The message names the rule; most already do, the rest get it appended.
                    message: Some(if err.message.contains("(R-") {
                        err.message.clone()
                    } else {
                        err.to_string()
                    }),
                    error: failed.then(|| AppError {
                        code: err.code,
                        field: err.field.clone(),
                        limit: err.limit,
                    }),
                };
                self.build(payload, target, conversation)
            }
            None => {
                let payload = ClientError {
                    in_reply_to: err.in_reply_to.clone(),
                    code: err.code,
                    message: err.message.clone(),
                    field: err.field.clone(),
                    limit: err.limit,
                    instance_id: None,
                    count: None,
                };
                self.build(payload, target, conversation)
            }
        };
        [Effect::Rejected(err), Effect::Send(answer)]
    }

    /// An outbound envelope in the session's conversation.
    pub(super) fn outbound<P>(&mut self, payload: P, target: Option<Party>) -> Message
    where
        P: Payload,
        Envelope<P>: Into<Message>,
    {
        self.build(payload, target, None)
    }

    /// The one place where outbound envelopes are built: in `conversation` when given (the
    /// conversation of a refused envelope, R-ENV-5), else in the session's, else in `"unknown"`.
    pub(super) fn build<P>(
        &mut self,
        payload: P,
        target: Option<Party>,
        conversation: Option<ConversationId>,
    ) -> Message
    where
        P: Payload,
        Envelope<P>: Into<Message>,
    {
        let n = self.numbers.message();
        // `Session::new` checked that the prefix makes valid ids.
        let id = MessageId::known(format!("{}-{n}", self.config.message_id_prefix));
        let conversation_id = conversation
            .or_else(|| self.conversation.clone())
            .unwrap_or_else(|| ConversationId::known("unknown"));
        Envelope {
            id,
            conversation_id,
            sender: self.config.client.clone(),
            target,
            payload,
        }
        .into()
    }
}
