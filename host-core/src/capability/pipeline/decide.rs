//! What decides a call, without effects: its key's record, the checks before consent, how
//! consent is sought by risk, and the answers that refuse it (R-SEC-5, R-CAP-2..5, R-SES-1).
//! Pure.

use super::answers::{answer_with, reused};
use super::call::Subject;
use super::grantee::Grantee;
use crate::capability::effect::{ConsentAnswer, HookAnswer};
use crate::capability::registry::Capability;
use crate::capability::store::{CallRecord, Decision, DecisionSource, GrantKey};
use crate::error::ErrorCode;
use crate::ids::{AgentIdentity, Risk, Status};
use crate::json::JsonObject;
use crate::message::AppResult;

/// What the store's record of a call's key means for the call (R-CAP-5, R-SES-1).
pub(super) enum Lookup {
    /// No record this identity's call can be answered from: the call is a new one.
    New,
    /// The key was used for another call: every sender waiting on it gets this answer.
    Refused(AppResult),
    /// The key's record is this call's: it is answered from it (finished, or left unfinished
    /// by a host that is gone).
    Recorded(Box<CallRecord>),
}

/// What `record`, the store's record of the key of the call of `subject`, if any, means for it,
/// when `owner` makes the call and `vouched` says whether that is a vouched identity.
pub(super) fn lookup(
    subject: &Subject,
    record: Option<Box<CallRecord>>,
    owner: &AgentIdentity,
    vouched: bool,
) -> Lookup {
    let Some(record) = record else {
        return Lookup::New;
    };
    // R-CAP-5, R-SES-1: a key's record answers only the identity that made it.
    if record.owner.as_ref() != Some(owner) {
        if vouched {
            // Another vouched identity's call (or an ownerless old one): this identity's
            // call is a new one, with its own consent and record.
            return Lookup::New;
        }
        return Lookup::Refused(answer_with(
            subject,
            Status::Failed,
            &format!(
                "call_id {} was used before by another session or host process on this data directory; it is not run again (R-CAP-5)",
                subject.key.call_id
            ),
            Some(ErrorCode::CallIdReused),
        ));
    }
    match reused(&record.capability, &record.arguments_digest, subject) {
        Some(reused) => Lookup::Refused(reused),
        None => Lookup::Recorded(record),
    }
}

/// The policy's refusal of the call of `subject` to `capability` with `arguments`, if any:
/// arguments that break the `input_schema` (R-CAP-2) or the capability's own rules (R-CAP-4,
/// R-CAP-6: before consent and in every grant state), or a call that would wait for consent
/// while `waiting` calls already do, `max` or more.
pub(super) fn refusal(
    subject: &Subject,
    capability: &Capability,
    arguments: &JsonObject,
    waiting: usize,
    max: usize,
) -> Option<AppResult> {
    if let Some(result) = invalid_arguments(subject, capability, arguments) {
        return Some(result);
    }
    (capability.risk() != Risk::DisplayOnly && waiting >= max)
        .then(|| too_many_waiting(subject, max))
}

/// The answer to arguments that break `capability`'s `input_schema` (R-CAP-2) or one of its own
/// rules (R-CAP-4: before consent and in every grant state), naming the JSON pointer and the
/// rule; `None` when they keep both.
fn invalid_arguments(
    subject: &Subject,
    capability: &Capability,
    arguments: &JsonObject,
) -> Option<AppResult> {
    if let Err(e) = capability.check(arguments) {
        let at = if e.pointer.is_empty() {
            "/"
        } else {
            &e.pointer
        };
        let mut result = answer_with(
            subject,
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
        return Some(result);
    }
    let e = capability.check_rules(arguments).err()?;
    let pointer = e.pointer();
    let mut result = answer_with(
        subject,
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
    Some(result)
}

/// The answer to a call over the cap of `max` calls waiting for consent.
fn too_many_waiting(subject: &Subject, max: usize) -> AppResult {
    let mut result = answer_with(
        subject,
        Status::Failed,
        &format!(
            "{max} calls of this session are waiting for consent; the limit is {max}; wait for an answer and retry"
        ),
        Some(ErrorCode::TooManyCalls),
    );
    if let Some(error) = result.error.as_mut() {
        error.limit = u64::try_from(max).ok();
    }
    result
}

/// How an admitted call is allowed, by its capability's risk.
pub(super) enum Consent {
    /// `display_only`: the policy allows it.
    Policy,
    /// `user_confirmation` with a grant identity: the store is asked for its grant (R-CAP-2:
    /// at every decision, so a revocation elsewhere holds at once).
    CheckGrant(GrantKey),
    /// `user_confirmation` answered "always" in this conversation.
    Remembered,
    /// The user is asked: `user_confirmation` without a grant; `system_permission` and
    /// `restricted` every time, never remembered, and then the embedder's hook (R-CAP-3).
    Prompt,
}

/// How a call to `capability` made for `grantee` is allowed.
pub(super) fn consent(capability: &Capability, grantee: &Grantee) -> Consent {
    match capability.risk() {
        Risk::DisplayOnly => Consent::Policy,
        Risk::UserConfirmation => match grantee.grant_identity() {
            Some(agent) => Consent::CheckGrant(GrantKey {
                agent,
                capability: capability.name().clone(),
                version: capability.version().clone(),
            }),
            None => {
                let grant = (capability.name().clone(), capability.version().clone());
                if grantee.granted(&grant) {
                    Consent::Remembered
                } else {
                    Consent::Prompt
                }
            }
        },
        Risk::SystemPermission | Risk::Restricted => Consent::Prompt,
    }
}

/// The answer, and the decision it records, when the user's `consent` to the call of `subject`
/// does not allow it; `None` when it does.
pub(super) fn declined(
    subject: &Subject,
    consent: ConsentAnswer,
) -> Option<(AppResult, (Decision, DecisionSource))> {
    let (status, message, decided) = match consent {
        ConsentAnswer::Deny => (
            Status::Rejected,
            "the user declined the call",
            (Decision::Denied, DecisionSource::Prompt),
        ),
        ConsentAnswer::Dismissed => (
            Status::Cancelled,
            "the consent prompt was dismissed without an answer; the call did not run",
            (Decision::Cancelled, DecisionSource::Prompt),
        ),
        ConsentAnswer::Unavailable => (
            Status::Failed,
            "no consent prompt could be shown on this host; the call did not run",
            (Decision::Cancelled, DecisionSource::Policy),
        ),
        ConsentAnswer::Allow | ConsentAnswer::AllowAlways => return None,
    };
    Some((answer_with(subject, status, message, None), decided))
}

/// The answer, and the decision it records, when the embedder's permission check `hook` does
/// not allow the call of `subject` (R-CAP-3); `None` when it does.
pub(super) fn hook_refused(
    subject: &Subject,
    hook: HookAnswer,
) -> Option<(AppResult, (Decision, DecisionSource))> {
    let (status, message, decision) = match hook {
        HookAnswer::Allow => return None,
        HookAnswer::Dismissed => (
            Status::Cancelled,
            "the user closed the capability's dialog without choosing; the call did not run",
            Decision::Cancelled,
        ),
        HookAnswer::Deny => (
            Status::Rejected,
            "the host's permission check refused the call (R-CAP-3)",
            Decision::Denied,
        ),
    };
    let result = answer_with(subject, status, message, None);
    Some((result, (decision, DecisionSource::Hook)))
}
