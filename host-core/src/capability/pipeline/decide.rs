//! Deciding a call: its key's record, the capability and its arguments, consent by risk, the
//! permission check, remembered grants (R-SEC-5, R-CAP-2..5).

use crate::capability::pipeline::{answer_with, reused, Call, Stage};
use crate::capability::Out;
use crate::{
    AuditKind, CallRecord, CallState, Capabilities, CapabilityEffect, ConsentAnswer,
    ConsentRequest, Decision, DecisionSource, ErrorCode, GrantKey, GrantRecord, HookRequest, Risk,
    Status,
};

impl Capabilities {
    pub(super) fn looked_up(&mut self, call: Call, record: Option<CallRecord>, out: &mut Vec<Out>) {
        let Some(record) = record else {
            return self.admit(call, out);
        };
        // R-CAP-5, R-SES-1: a key's record answers only the identity that made it.
        if record.owner.as_ref() != Some(&self.owner()) {
            if self.grantee.agent().is_some() {
                // Another vouched identity's call (or an ownerless old one): this identity's
                // call is a new one, with its own consent and record.
                return self.admit(call, out);
            }
            let result = answer_with(
                &call.subject,
                Status::Failed,
                &format!(
                    "call_id {} was used before by another session or host process on this data directory; it is not run again (R-CAP-5)",
                    call.subject.key.call_id
                ),
                Some(ErrorCode::CallIdReused),
            );
            for to in call.to {
                self.refuse(&call.subject, result.clone(), to, out);
            }
            return;
        }
        if let Some(reused) = reused(&record.capability, &record.arguments_digest, &call.subject) {
            for to in call.to {
                self.refuse(&call.subject, reused.clone(), to, out);
            }
            return;
        }
        let result = match record.state {
            CallState::Finished { result } => result,
            // An unfinished record of a host that is gone (R-CAP-5).
            _ => self.recover(record, out),
        };
        self.finish_quietly(call, result, out);
    }

    /// Known and visible, not expired, valid arguments, then consent by risk.
    pub(super) fn admit(&mut self, mut call: Call, out: &mut Vec<Out>) {
        let Some(capability) = self
            .registry
            .visible(&call.subject.capability, self.grantee.agent())
            .cloned()
        else {
            // R-INV-4: unknown and hidden get the same answer; once offered, `revoked`.
            let name = &call.subject.capability;
            let result = if self.announcements.was_offered(name) {
                answer_with(
                    &call.subject,
                    Status::Unsupported,
                    &format!("capability {name} was revoked; it is not run (R-INV-4)"),
                    Some(ErrorCode::Revoked),
                )
            } else {
                answer_with(
                    &call.subject,
                    Status::Unsupported,
                    &format!("capability {name} is not available on this host (R-INV-4)"),
                    None,
                )
            };
            return self.finish(
                call,
                result,
                Some((Decision::Denied, DecisionSource::Policy)),
                out,
            );
        };
        call.subject.version = Some(capability.version().clone());
        call.subject.risk = Some(capability.risk());
        if self.wall.now() >= call.expires_at {
            return self.expire(call, out);
        }
        if let Err(e) = capability.check(&call.arguments) {
            let at = if e.pointer.is_empty() {
                "/"
            } else {
                &e.pointer
            };
            let mut result = answer_with(
                &call.subject,
                Status::Failed,
                &format!(
                    "arguments at {at} break the input_schema rule {:?}: {} (R-CAP-2)",
                    e.rule, e.detail
                ),
                Some(ErrorCode::InvalidArguments),
            );
            if let Some(error) = result.error.as_mut() {
                error.field = Some(format!("payload.arguments{}", e.pointer));
            }
            return self.finish(
                call,
                result,
                Some((Decision::Denied, DecisionSource::Policy)),
                out,
            );
        }
        // R-CAP-4, R-CAP-6: the capability's own rules, before consent and in every grant
        // state; a policy refusal, never reported as the user's decision.
        if let Err(e) = capability.check_rules(&call.arguments) {
            let pointer = e.pointer();
            let mut result = answer_with(
                &call.subject,
                Status::Failed,
                &format!(
                    "arguments at {pointer} break the {} rule {:?}: {} {} (R-CAP-4); no prompt was shown",
                    capability.name(),
                    e.rule,
                    e.argument,
                    e.detail
                ),
                Some(ErrorCode::InvalidArguments),
            );
            if let Some(error) = result.error.as_mut() {
                error.field = Some(format!("payload.arguments{pointer}"));
                error.limit = e.limit.and_then(|l| u64::try_from(l).ok());
            }
            return self.finish(
                call,
                result,
                Some((Decision::Denied, DecisionSource::Policy)),
                out,
            );
        }
        let risk = capability.risk();
        let max = self.limits.max_waiting_consent;
        if risk != Risk::DisplayOnly && self.pending().1 >= max {
            let mut result = answer_with(
                &call.subject,
                Status::Failed,
                &format!(
                    "{max} calls of this session are waiting for consent; the limit is {max}; wait for an answer and retry"
                ),
                Some(ErrorCode::TooManyCalls),
            );
            if let Some(error) = result.error.as_mut() {
                error.limit = u64::try_from(max).ok();
            }
            return self.finish(
                call,
                result,
                Some((Decision::Denied, DecisionSource::Policy)),
                out,
            );
        }
        call.capability = Some(capability.clone());
        out.push(Out::Effect(CapabilityEffect::PersistCall {
            ack: None,
            record: self.record(&call.subject, CallState::Received),
        }));
        match risk {
            Risk::DisplayOnly => {
                self.decided(&mut call, Decision::Allowed, DecisionSource::Policy, out);
                self.persist_running(call, out);
            }
            Risk::UserConfirmation => match self.grantee.grant_identity() {
                // R-CAP-2: asked at every decision, so a revocation elsewhere holds at once.
                Some(agent) => {
                    let ticket = self.ticket();
                    out.push(Out::Effect(CapabilityEffect::CheckGrant {
                        ticket,
                        key: GrantKey {
                            agent,
                            capability: capability.name().clone(),
                            version: capability.version().clone(),
                        },
                    }));
                    self.wait(call, Stage::CheckingGrant, ticket);
                }
                None => {
                    let grant = (capability.name().clone(), capability.version().clone());
                    if self.grantee.granted(&grant) {
                        self.decided(
                            &mut call,
                            Decision::Allowed,
                            DecisionSource::RememberedGrant,
                            out,
                        );
                        self.allowed(call, out);
                    } else {
                        self.prompt(call, out);
                    }
                }
            },
            // R-CAP-3: a prompt every time, never remembered, and the embedder's hook.
            Risk::SystemPermission | Risk::Restricted => self.prompt(call, out),
        }
    }

    pub(super) fn prompt(&mut self, call: Call, out: &mut Vec<Out>) {
        let Some(summary) = self.summary(&call) else {
            return;
        };
        let ticket = self.ticket();
        out.push(Out::Effect(CapabilityEffect::PersistCall {
            ack: None,
            record: self.record(&call.subject, CallState::AwaitingConsent),
        }));
        out.push(Out::Effect(CapabilityEffect::Prompt(ConsentRequest {
            ticket,
            may_remember: summary.risk == Risk::UserConfirmation,
            call: summary,
            reason: call.reason.clone(),
            expires_at: call.expires_at,
        })));
        self.wait(call, Stage::Prompting, ticket);
    }

    pub(super) fn consented(&mut self, mut call: Call, consent: ConsentAnswer, out: &mut Vec<Out>) {
        let Some(risk) = call.subject.risk else {
            return;
        };
        match consent {
            ConsentAnswer::Deny => {
                let result = answer_with(
                    &call.subject,
                    Status::Rejected,
                    "the user declined the call",
                    None,
                );
                self.finish(
                    call,
                    result,
                    Some((Decision::Denied, DecisionSource::Prompt)),
                    out,
                );
            }
            ConsentAnswer::Dismissed => {
                let result = answer_with(
                    &call.subject,
                    Status::Cancelled,
                    "the consent prompt was dismissed without an answer; the call did not run",
                    None,
                );
                self.finish(
                    call,
                    result,
                    Some((Decision::Cancelled, DecisionSource::Prompt)),
                    out,
                );
            }
            ConsentAnswer::Unavailable => {
                let result = answer_with(
                    &call.subject,
                    Status::Failed,
                    "no consent prompt could be shown on this host; the call did not run",
                    None,
                );
                self.finish(
                    call,
                    result,
                    Some((Decision::Cancelled, DecisionSource::Policy)),
                    out,
                );
            }
            ConsentAnswer::Allow | ConsentAnswer::AllowAlways => {
                let always = consent == ConsentAnswer::AllowAlways && risk.may_be_remembered();
                let decision = if always {
                    Decision::AllowedAlways
                } else {
                    Decision::Allowed
                };
                self.decided(&mut call, decision, DecisionSource::Prompt, out);
                if always {
                    self.remember(&call, out);
                }
                self.allowed(call, out);
            }
        }
    }

    /// After the user's or a remembered grant: the permission check when the risk needs one
    /// (R-CAP-3) or the capability decides with a dialog of its own, else the run.
    pub(super) fn allowed(&mut self, call: Call, out: &mut Vec<Out>) {
        let (Some(risk), Some(capability)) = (call.subject.risk, call.capability.as_ref()) else {
            return;
        };
        if risk.may_be_remembered() && !capability.asks_hook() {
            return self.persist_running(call, out);
        }
        let Some(summary) = self.summary(&call) else {
            return;
        };
        let ticket = self.ticket();
        out.push(Out::Effect(CapabilityEffect::Hook(HookRequest {
            ticket,
            expires_at: call.expires_at,
            call: summary,
        })));
        self.wait(call, Stage::Hook, ticket);
    }

    /// R-CAP-2, R-SES-1: a vouched identity's grant goes to the store; without one, it lasts
    /// the conversation.
    pub(super) fn remember(&mut self, call: &Call, out: &mut Vec<Out>) {
        let Some(version) = call.subject.version.clone() else {
            return;
        };
        match self.grantee.grant_identity() {
            Some(agent) => {
                let note = if self.grantee.agent().is_some() {
                    "remembered for this agent identity"
                } else {
                    "remembered for this conversation of this host process only: no vouched agent identity"
                };
                out.push(Out::Effect(CapabilityEffect::RememberGrant(GrantRecord {
                    key: GrantKey {
                        agent,
                        capability: call.subject.capability.clone(),
                        version,
                    },
                    granted_at: self.wall.now(),
                    conversation_id: call.subject.key.conversation_id.clone(),
                    call_id: call.subject.key.call_id.clone(),
                })));
                self.audit(
                    &call.subject,
                    AuditKind::GrantRemembered,
                    Some(Decision::AllowedAlways),
                    Some(DecisionSource::Prompt),
                    note,
                    out,
                );
            }
            None => {
                self.grantee.grant(call.subject.capability.clone(), version);
                self.audit(
                    &call.subject,
                    AuditKind::GrantRemembered,
                    Some(Decision::AllowedAlways),
                    Some(DecisionSource::Prompt),
                    "remembered for this conversation only: no vouched agent identity",
                    out,
                );
            }
        }
    }
}
