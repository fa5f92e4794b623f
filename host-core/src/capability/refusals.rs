//! The audit of `app.call`s refused before the pipeline (R-CAP-6): a malformed call, a wrong
//! sender, a session-table limit. Each is recorded with its error code and field, never the
//! refused payload; a flood of identical refusals (same code, field and capability) within
//! [`FLOOD_WINDOW`] is one record at its start and one counted record for the rest, so a
//! hostile agent cannot fill the disk.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::capability::digest::ArgsDigest;
use crate::capability::store::{AuditKind, AuditRecord, CallKey, Decision, DecisionSource};
use crate::error::{ErrorCode, ProtocolError};
use crate::ids::{AgentIdentity, CapabilityName, ConversationId, Status};
use crate::json::JsonObject;
use crate::message::{AppError, Timestamp};

/// How long identical refusals are merged into one counted record.
pub(crate) const FLOOD_WINDOW: Duration = Duration::from_secs(60);

/// The most distinct refusal kinds tracked at once; past it the merged counts are written out
/// and tracking starts again.
const MAX_TRACKED: usize = 256;

/// What makes two refusals identical.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Kind {
    /// The code's wire name.
    name: String,
    field: Option<String>,
    capability: CapabilityName,
}

/// One tracked kind: when its window started, how many were merged since, the last one's call,
/// its answer's status and limit.
struct Tracked {
    code: ErrorCode,
    since: Timestamp,
    merged: u64,
    last: CallKey,
    status: Status,
    limit: Option<u64>,
}

/// The refusals of one session, merged per kind.
#[derive(Default)]
pub(crate) struct Refusals {
    tracked: BTreeMap<Kind, Tracked>,
}

impl Refusals {
    /// The audit records for refusal `err` (answered with `status`) at `now`: one for the
    /// first of its kind in a window, one counting the merged ones when a window closes, none
    /// for one merged.
    pub(crate) fn record(
        &mut self,
        err: &ProtocolError,
        status: Status,
        agent: Option<&AgentIdentity>,
        now: Timestamp,
    ) -> Vec<AuditRecord> {
        let Some(call_id) = err.call_id.clone() else {
            return Vec::new();
        };
        let kind = Kind {
            name: err.code.to_string(),
            field: err.field.clone(),
            capability: err
                .capability
                .as_deref()
                .cloned()
                .unwrap_or_else(|| CapabilityName::known("unreadable")),
        };
        let call = CallKey {
            conversation_id: err
                .conversation_id
                .clone()
                .unwrap_or_else(|| ConversationId::known("unknown")),
            call_id,
        };
        let mut out = Vec::new();
        if let Some(t) = self.tracked.get_mut(&kind) {
            if t.since.until(&now) < FLOOD_WINDOW {
                t.merged += 1;
                t.last = call;
                return out;
            }
            if t.merged > 0 {
                out.push(audit(&kind, t, agent, now));
            }
            self.tracked.remove(&kind);
        }
        if self.tracked.len() >= MAX_TRACKED {
            out.extend(self.flush(agent, now));
        }
        let tracked = Tracked {
            code: err.code,
            since: now,
            merged: 0,
            last: call,
            status,
            limit: err.limit,
        };
        let mut first = audit(&kind, &tracked, agent, now);
        first.count = None;
        out.push(first);
        self.tracked.insert(kind, tracked);
        out
    }

    /// The counted records of every kind with merged refusals; tracking starts again.
    pub(crate) fn flush(
        &mut self,
        agent: Option<&AgentIdentity>,
        now: Timestamp,
    ) -> Vec<AuditRecord> {
        let out = self
            .tracked
            .iter()
            .filter(|(_, t)| t.merged > 0)
            .map(|(kind, t)| audit(kind, t, agent, now))
            .collect();
        self.tracked.clear();
        out
    }
}

/// The record of refusals of `kind`, `tracked.merged` of them (the last one's call).
fn audit(
    kind: &Kind,
    tracked: &Tracked,
    agent: Option<&AgentIdentity>,
    now: Timestamp,
) -> AuditRecord {
    AuditRecord {
        at: now,
        kind: AuditKind::Refused,
        call: tracked.last.clone(),
        agent: agent.cloned(),
        capability: kind.capability.clone(),
        version: None,
        risk: None,
        arguments_digest: ArgsDigest::of(&JsonObject::default()),
        decision: Some(Decision::Denied),
        source: Some(DecisionSource::Policy),
        status: Some(tracked.status),
        note: "refused before the pipeline; the payload is not kept".to_owned(),
        error: Some(AppError {
            code: tracked.code,
            field: kind.field.clone(),
            limit: tracked.limit,
        }),
        count: Some(tracked.merged),
    }
}
