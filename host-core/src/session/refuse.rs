//! Refusals and the messages the session sends: `client.error` answers, refusals audited by the
//! capability kernel, and the envelopes built for the agent (R-ENV-5, R-CAP-6).

use crate::session::{Out, Readable};
use crate::{
    AppError, AppResult, ClientError, ConversationId, Direction, Effect, Envelope, ErrorCode,
    Message, MessageId, Party, Payload, ProtocolError, Session, Status,
};

impl Session {
    /// Refuses `message` with `err` (the session table's own refusals, e.g.
    /// `too_many_sessions`), answered like any refusal (R-ENV-5); nothing else changes.
    pub(crate) fn refuse_message(&mut self, message: &Message, err: ProtocolError) -> Vec<Effect> {
        let about = Readable {
            id: Some(message.id().clone()),
            conversation_id: Some(message.conversation_id().clone()),
            call_id: match message {
                Message::AppCall(env) => Some(env.payload.call_id.clone()),
                _ => None,
            },
            sender: None,
            capability: match message {
                Message::AppCall(env) => Some(Box::new(env.payload.capability.clone())),
                _ => None,
            },
        };
        let mut fx = Vec::new();
        self.refuse(err.about(about), Some(message.sender().clone()), &mut fx);
        fx
    }

    /// [`Session::check_admission`] for a well-formed envelope whose payload was refused
    /// ([`ProtocolError::sender`]).
    pub(crate) fn check_refused_admission(
        &self,
        refused: &ProtocolError,
    ) -> Result<(), ProtocolError> {
        match (&refused.conversation_id, &refused.sender) {
            (Some(conversation), Some(sender)) => self.admit_envelope(
                conversation,
                Direction::AgentToClient,
                "lineup.v1 message",
                sender,
            ),
            _ => Err(refused.clone()),
        }
    }

    /// nothing else changes.
    pub(crate) fn refuse_about(
        &mut self,
        refused: &ProtocolError,
        err: ProtocolError,
    ) -> Vec<Effect> {
        let about = Readable {
            id: refused.in_reply_to.clone(),
            conversation_id: refused.conversation_id.clone(),
            call_id: refused.call_id.clone(),
            sender: None,
            capability: refused.capability.clone(),
        };
        let mut fx = Vec::new();
        self.refuse(
            err.about(about),
            refused.sender.as_deref().cloned(),
            &mut fx,
        );
        fx
    }

    /// Refuses an inbound envelope that could not be decoded (R-ENV-5); the session table
    /// answers those itself, in the refused envelope's conversation when it can be read.
    pub(crate) fn refuse_undecodable(&mut self, err: ProtocolError) -> Vec<Effect> {
        let mut fx = Vec::new();
        self.refuse(err, None, &mut fx);
        fx
    }

    /// The audit records of refusals merged so far (R-CAP-6), written out now.
    pub(crate) fn flush_refusal_audit(&mut self) -> Vec<Effect> {
        let Some(caps) = self.capabilities.as_mut() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        caps.flush_refusals(&mut out);
        self.capability_effects(out)
    }

    /// Establishes the session for a well-formed envelope whose payload could not be decoded
    /// (R-SES-1, [`ProtocolError::sender`]): admitted like any envelope, then the inventory
    /// first (R-INV-1) and the refusal's answer. Without a readable sender and conversation it
    /// is refused like any undecodable envelope.
    pub(crate) fn establish_refusing(&mut self, err: ProtocolError) -> Vec<Effect> {
        let mut fx = Vec::new();
        let (Some(sender), Some(conversation)) =
            (err.sender.as_deref().cloned(), err.conversation_id.clone())
        else {
            self.refuse(err, None, &mut fx);
            return fx;
        };
        if let Err(admission) = self.admit_envelope(
            &conversation,
            Direction::AgentToClient,
            "lineup.v1 message",
            &sender,
        ) {
            return self.refuse_about(&err, admission);
        }
        self.establish(&conversation, &mut fx);
        self.refuse(err, Some(sender), &mut fx);
        fx
    }

    /// Answers a refused envelope: `app.result` when it has a readable `call_id` (`failed` with
    /// an [`AppError`] for a malformed call, `unsupported` for an unknown `app.*` type),
    /// `client.error` otherwise; in the refused envelope's conversation when it could be read
    /// (R-ENV-5).
    pub(super) fn refuse(
        &mut self,
        err: ProtocolError,
        target: Option<Party>,
        fx: &mut Vec<Effect>,
    ) {
        self.stats.envelopes_refused += 1;
        let conversation = err.conversation_id.clone();
        if err.call_id.is_some() {
            // R-CAP-6: a refused call is audited with its reason, never its payload.
            let status = if err.code == ErrorCode::Unsupported {
                Status::Unsupported
            } else {
                Status::Failed
            };
            if let Some(caps) = self.capabilities.as_mut() {
                let mut out = Vec::new();
                caps.audit_refusal(&err, status, &mut out);
                fx.extend(out.into_iter().filter_map(|o| match o {
                    Out::Effect(effect) => Some(Effect::Capability(effect)),
                    _ => None,
                }));
            }
        }
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
        fx.push(Effect::Rejected(err));
        fx.push(Effect::Send(answer));
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
