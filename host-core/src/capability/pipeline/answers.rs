//! The answers the pipeline gives: each `app.result` it builds from a call's facts (R-CAP-3..5,
//! R-INV-4). Pure.

use std::time::Duration;

use super::call::{Call, Subject};
use crate::capability::digest::ArgsDigest;
use crate::capability::effect::{Answer, HandlerError, Ticket};
use crate::error::{ErrorCode, UsageError};
use crate::ids::{shorten, CapabilityName, Status};
use crate::json::JsonObject;
use crate::message::{AppError, AppResult};

/// The answer to the call of `subject`: `status`, a plain `message`, and `code` when it failed
/// for a reason the agent can act on.
pub(super) fn answer_with(
    subject: &Subject,
    status: Status,
    message: &str,
    code: Option<ErrorCode>,
) -> AppResult {
    AppResult {
        call_id: subject.key.call_id.clone(),
        status,
        result: None,
        message: Some(message.to_owned()),
        error: code.map(|code| AppError {
            code,
            field: None,
            limit: None,
        }),
    }
}

/// The `failed` answer to a key reused for another capability or other arguments (R-CAP-5), or
/// `None` when the call is a true repeat.
pub(super) fn reused(
    capability: &CapabilityName,
    digest: &ArgsDigest,
    call: &Subject,
) -> Option<AppResult> {
    if *capability == call.capability && *digest == call.digest {
        return None;
    }
    let what = if *capability != call.capability {
        format!("capability {capability}")
    } else {
        "other arguments".to_owned()
    };
    Some(answer_with(
        call,
        Status::Failed,
        &format!(
            "call_id reused: {} was already used in this conversation for {what}; use a new call_id (R-CAP-5)",
            call.key.call_id
        ),
        Some(ErrorCode::CallIdReused),
    ))
}

/// The platform answered `ticket` with `got` where `expected` was due.
pub(super) fn wrong(ticket: Ticket, expected: &'static str, got: &Answer) -> UsageError {
    UsageError::WrongAnswer {
        ticket: ticket.0,
        expected,
        got: got.kind(),
    }
}

/// The answer to a call over the cap of `max` unanswered calls.
pub(super) fn too_many_in_flight(subject: &Subject, max: usize) -> AppResult {
    let mut result = answer_with(
        subject,
        Status::Failed,
        &format!("{max} calls of this session are unanswered; the limit is {max}; wait for answers and retry"),
        Some(ErrorCode::TooManyCalls),
    );
    if let Some(error) = result.error.as_mut() {
        error.limit = u64::try_from(max).ok();
    }
    result
}

/// R-INV-4: a capability unknown, or hidden from the caller, gets the same answer; one that was
/// `offered` to it is `revoked`.
pub(super) fn unavailable(subject: &Subject, offered: bool) -> AppResult {
    let name = &subject.capability;
    if offered {
        answer_with(
            subject,
            Status::Unsupported,
            &format!("capability {name} was revoked; it is not run (R-INV-4)"),
            Some(ErrorCode::Revoked),
        )
    } else {
        answer_with(
            subject,
            Status::Unsupported,
            &format!("capability {name} is not available on this host (R-INV-4)"),
            None,
        )
    }
}

/// The answer to a call whose handler gave `outcome`.
pub(super) fn ran(subject: &Subject, outcome: Result<JsonObject, HandlerError>) -> AppResult {
    match outcome {
        Ok(value) => AppResult {
            call_id: subject.key.call_id.clone(),
            status: Status::Completed,
            result: Some(value),
            message: None,
            error: None,
        },
        Err(e) => answer_with(
            subject,
            Status::Failed,
            &format!("the capability failed: {}", shorten(&e.message, 500)),
            Some(ErrorCode::HandlerFailed),
        ),
    }
}

/// The answer to a call whose deadline passed before it was decided (R-CAP-4); `max_lifetime`
/// is named when it brought the deadline forward.
pub(super) fn expired(call: &Call, max_lifetime: Duration) -> AppResult {
    let message = match call.capped_from {
        Some(asked) => format!(
            "the call expired at {} before it was decided; it did not run: its expires_at \
             {asked} is later than max_call_lifetime ({} s) after it was received (R-CAP-4)",
            call.expires_at,
            max_lifetime.as_secs()
        ),
        None => format!(
            "the call expired at {} before it was decided; it did not run (R-CAP-4)",
            call.expires_at
        ),
    };
    answer_with(&call.subject, Status::Expired, &message, None)
}

/// The answer to a call whose deadline passed while another host process had it: `expired`
/// here, and the record left to that process, which answers with the real outcome (R-CAP-5).
pub(super) fn expired_elsewhere(call: &Call) -> AppResult {
    answer_with(
        &call.subject,
        Status::Expired,
        &format!(
            "the call expired at {} while another host process still had it; it is not run here (R-CAP-4, R-CAP-5)",
            call.expires_at
        ),
        None,
    )
}

/// R-CAP-5: the answer to an unfinished call found after a restart: one that `was_running` is
/// never run again and is `failed` with `outcome_unknown`; one that never ran is `cancelled`.
pub(super) fn recovered(subject: &Subject, was_running: bool) -> AppResult {
    if was_running {
        answer_with(
            subject,
            Status::Failed,
            "the host stopped while the call was running; it is not run again and its outcome is unknown (R-CAP-5)",
            Some(ErrorCode::OutcomeUnknown),
        )
    } else {
        answer_with(
            subject,
            Status::Cancelled,
            "the host stopped before the call was decided; it did not run (R-CAP-5)",
            None,
        )
    }
}

/// The answer to a call whose `running` record the store could not keep, for reason `why`: it
/// is not run (R-CAP-5).
pub(super) fn not_recorded(subject: &Subject, why: &str) -> AppResult {
    answer_with(
        subject,
        Status::Failed,
        &format!(
            "the call could not be recorded durably, so it was not run: {} (R-CAP-5)",
            shorten(why, 200)
        ),
        Some(ErrorCode::NotRecorded),
    )
}

/// The answer to a call whose handler did not answer within `timeout`.
pub(super) fn timed_out(subject: &Subject, timeout: Duration) -> AppResult {
    answer_with(
        subject,
        Status::Failed,
        &format!(
            "the capability did not answer within {} s; a later result is discarded",
            timeout.as_secs()
        ),
        Some(ErrorCode::HandlerTimeout),
    )
}

/// The answer to a call still waiting for a lookup or a decision when the session ends.
pub(super) fn ended(subject: &Subject) -> AppResult {
    answer_with(
        subject,
        Status::Cancelled,
        "the session ended before the call was decided; it did not run",
        None,
    )
}
