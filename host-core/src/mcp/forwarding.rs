//! The view's requests the host forwards to the agent (R-MCP-6): each under an id of the
//! host's own, within a cap on requests in flight and a rate for `tools/call`, until its
//! answer or its deadline.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;

use super::jsonrpc::{RpcError, RpcId, REFUSED};
use super::McpLimits;

/// One forwarded request waiting for the agent's answer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Pending {
    /// The view's id for it, to answer under.
    pub(crate) view_id: RpcId,
    /// Its method.
    pub(crate) method: String,
    /// When it times out.
    pub(crate) deadline: Duration,
    /// The view's `_meta.progressToken`, when it asked for progress.
    pub(crate) progress_token: Option<Value>,
}

/// The requests in flight and the `tools/call` rate.
///
/// Invariants: at most [`McpLimits::max_in_flight`] requests wait; an upstream id is given
/// once and names one request until it is answered, times out or is dropped; a view id names
/// at most one waiting request; `tools/call` passes at most one per
/// [`McpLimits::tools_call_interval`] sustained, after a burst of
/// [`McpLimits::tools_call_burst`] (a GCRA: `rate_at` is the theoretical arrival time of the
/// next call).
#[derive(Debug, Default)]
pub(crate) struct Forwarding {
    pending: BTreeMap<u64, Pending>,
    next_id: u64,
    rate_at: Duration,
}

impl Forwarding {
    /// Admits the view's request `view_id` for `method` at `now`: its upstream id, or why not.
    pub(crate) fn admit(
        &mut self,
        view_id: &RpcId,
        method: &str,
        progress_token: Option<Value>,
        now: Duration,
        limits: &McpLimits,
    ) -> Result<u64, RpcError> {
        if self.pending.values().any(|p| &p.view_id == view_id) {
            return Err(RpcError::new(
                REFUSED,
                format!("id {view_id:?} is already waiting for an answer; use a new id"),
            ));
        }
        if self.pending.len() >= limits.max_in_flight {
            return Err(RpcError::new(
                REFUSED,
                format!(
                    "{method}: {} requests are in flight; the limit is {} (R-MCP-6)",
                    self.pending.len(),
                    limits.max_in_flight
                ),
            ));
        }
        if method == "tools/call" {
            self.take_rate(now, limits)?;
        }
        self.next_id += 1;
        self.pending.insert(
            self.next_id,
            Pending {
                view_id: view_id.clone(),
                method: method.to_owned(),
                deadline: now + limits.request_timeout(),
                progress_token,
            },
        );
        Ok(self.next_id)
    }

    fn take_rate(&mut self, now: Duration, limits: &McpLimits) -> Result<(), RpcError> {
        let interval = limits.tools_call_interval;
        let burst = interval * limits.tools_call_burst;
        let next = self.rate_at.max(now) + interval;
        if next > now + burst {
            let wait = next - now - burst;
            return Err(RpcError::new(
                REFUSED,
                format!(
                    "tools/call: more than one every {} ms after a burst of {}; try again in {} ms (R-MCP-6)",
                    interval.as_millis(),
                    limits.tools_call_burst,
                    wait.as_millis()
                ),
            ));
        }
        self.rate_at = next;
        Ok(())
    }

    /// The request `id`, taken: it is answered.
    pub(crate) fn take(&mut self, id: u64) -> Option<Pending> {
        self.pending.remove(&id)
    }

    /// The request `id`, while it waits.
    pub(crate) fn get(&self, id: u64) -> Option<&Pending> {
        self.pending.get(&id)
    }

    /// The upstream id of the view's request `view_id`, while it waits.
    pub(crate) fn by_view(&self, view_id: &RpcId) -> Option<u64> {
        self.pending
            .iter()
            .find_map(|(id, p)| (&p.view_id == view_id).then_some(*id))
    }

    /// The requests whose deadline is at or before `now`, taken.
    pub(crate) fn expired(&mut self, now: Duration) -> Vec<(u64, Pending)> {
        let ids: Vec<u64> = self
            .pending
            .iter()
            .filter(|(_, p)| p.deadline <= now)
            .map(|(id, _)| *id)
            .collect();
        ids.into_iter()
            .filter_map(|id| self.pending.remove(&id).map(|p| (id, p)))
            .collect()
    }

    /// Every waiting request, taken.
    pub(crate) fn drain(&mut self) -> Vec<(u64, Pending)> {
        std::mem::take(&mut self.pending).into_iter().collect()
    }

    /// The earliest deadline of a waiting request.
    pub(crate) fn next_deadline(&self) -> Option<Duration> {
        self.pending.values().map(|p| p.deadline).min()
    }

    /// How many wait.
    pub(crate) fn in_flight(&self) -> usize {
        self.pending.len()
    }
}
