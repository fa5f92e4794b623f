//! One MCP App view's router ([`McpRouter`]): every message between the view, the host and
//! the agent passes here, checked.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{json, Map, Value};

use super::forwarding::Forwarding;
use super::jsonrpc::{
    self, Incoming, RpcError, RpcId, INVALID_REQUEST, METHOD_NOT_FOUND, REFUSED, TIMED_OUT,
};
use super::lifecycle::{ToolLifecycle, ToolNews};
use super::McpLimits;

/// The view's requests the host forwards to the agent (R-MCP-6); `sampling/createMessage`
/// only when the agent declared it.
const FORWARDED: [&str; 5] = [
    "tools/call",
    "resources/read",
    "resources/list",
    "resources/templates/list",
    "ui/message",
];
/// The view's requests the host answers itself (R-MCP-8, R-MCP-9).
const HOST_REQUESTS: [&str; 5] = [
    "ui/initialize",
    "ui/request-display-mode",
    "ui/open-link",
    "ui/download-file",
    "ping",
];
/// The view's notifications the host takes itself.
const HOST_NOTIFICATIONS: [&str; 2] = [
    "ui/notifications/size-changed",
    "ui/notifications/request-teardown",
];
/// The view's notifications that go up to the agent as they are.
const UP_NOTIFICATIONS: [&str; 2] = ["notifications/message", "notifications/cancelled"];

/// A request the host forwards to the agent for the view (R-MCP-6): the agent answers it with
/// [`McpRouter::upstream_answered`] under `id`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct UpstreamRequest {
    /// The host's id for it, never reused by this view's router.
    pub id: u64,
    /// The method, one the host forwards.
    pub method: String,
    /// The view's params, as sent (untrusted).
    pub params: Map<String, Value>,
}

/// A message of the view that the host answers or takes itself (R-MCP-8, R-MCP-9): a request
/// (`id` set; answer it with [`McpRouter::host_answer`]) or a notification.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct HostOwned {
    /// The view's id for a request; `None` for a notification.
    pub id: Option<RpcId>,
    /// The method.
    pub method: String,
    /// Its params (untrusted).
    pub params: Map<String, Value>,
}

/// What the router asks the driver to do.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum McpOut {
    /// Post this JSON-RPC message to the view.
    ToView(String),
    /// Send the agent this request; its answer comes back by its id.
    Upstream(UpstreamRequest),
    /// Send the agent this notification of the view (no answer).
    UpstreamNotification {
        /// The method.
        method: String,
        /// Its params (untrusted).
        params: Map<String, Value>,
    },
    /// Tell the agent that forwarded request `id` no longer wants an answer.
    UpstreamCancelled {
        /// The host's id for it.
        id: u64,
        /// Why.
        reason: String,
    },
    /// Answer or take this message of the view in the host (R-MCP-8, R-MCP-9).
    HostOwned(HostOwned),
    /// The view sent `ui/initialize` again: its page reloaded (R-MCP-7); tell the agent.
    Reloaded,
    /// The view acknowledged `ui/resource-teardown` (or never initialized): close it now.
    TornDown,
}

/// The tool whose result the view shows (R-MCP-3), as the agent's `ui.open` names it: its
/// name and who may call it (`_meta.ui.visibility`; absent means the model and the app).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShownTool {
    name: String,
    app_may_call: bool,
}

impl ShownTool {
    /// The tool `name` with its `_meta` (the tool listing's, untrusted): the app may call it
    /// unless `_meta.ui.visibility` is an array without `"app"`.
    pub fn new(name: impl Into<String>, meta: &Value) -> Self {
        let app_may_call = match meta.get("ui").and_then(|ui| ui.get("visibility")) {
            Some(Value::Array(who)) => who.iter().any(|w| w == "app"),
            _ => true,
        };
        Self {
            name: name.into(),
            app_may_call,
        }
    }
}

/// What the router dropped or refused, for diagnostics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct McpStats {
    /// `ui/notifications/sandbox-*` messages from the view, dropped (R-MCP-8).
    pub sandbox_dropped: u64,
    /// Messages of the view refused with a JSON-RPC error, or unknown notifications dropped.
    pub refused: u64,
    /// Answers or progress of the agent for a request not waiting (answered, timed out).
    pub late: u64,
}

/// One MCP App view's JSON-RPC traffic, sans-IO: the driver feeds it what the view posts
/// ([`McpRouter::from_view`]), what the agent sends ([`McpRouter::tool_news`],
/// [`McpRouter::upstream_answered`], [`McpRouter::upstream_progress`]) and the time
/// ([`McpRouter::handle_timeout`] at [`McpRouter::poll_timeout`]), and carries out the
/// [`McpOut`]s it returns, in order.
///
/// Invariants: every request of the view gets exactly one answer (the agent's, the host's, or
/// a JSON-RPC error naming the limit or rule); the agent's answers and progress reach the
/// view only for a forwarded request still waiting; the tool call's news reaches the view in
/// R-MCP-5's order, after its `initialized`; of the `ui/update-model-context`s within
/// [`McpLimits::model_context_delay`] only the last goes upstream.
#[derive(Debug)]
pub struct McpRouter {
    limits: McpLimits,
    shown: ShownTool,
    lifecycle: ToolLifecycle,
    forwarding: Forwarding,
    /// The latest model context not sent yet, and when it goes.
    model_context: Option<(Map<String, Value>, Duration)>,
    /// The host's own requests to the view waiting for its answer, by id, with their method.
    asked: BTreeMap<i64, &'static str>,
    next_ask: i64,
    stats: McpStats,
}

impl McpRouter {
    /// A router for a new view of `shown`'s result, within `limits`.
    pub fn new(limits: McpLimits, shown: ShownTool) -> Self {
        Self {
            limits,
            shown,
            lifecycle: ToolLifecycle::default(),
            forwarding: Forwarding::default(),
            model_context: None,
            asked: BTreeMap::new(),
            next_ask: 0,
            stats: McpStats::default(),
        }
    }

    /// What it dropped and refused so far.
    pub fn stats(&self) -> McpStats {
        self.stats
    }

    /// How many forwarded requests wait for the agent.
    pub fn in_flight(&self) -> usize {
        self.forwarding.in_flight()
    }

    /// One message the view posted, at `now` (the kernel's monotonic clock).
    pub fn from_view(&mut self, text: &str, now: Duration) -> Vec<McpOut> {
        if text.len() > self.limits.max_message_bytes {
            return self.oversized(text.len());
        }
        match jsonrpc::read(text) {
            Err((id, error)) => self.refuse(id.as_ref(), error),
            Ok(Incoming::Request { id, method, params }) => self.request(id, method, params, now),
            Ok(Incoming::Notification { method, params }) => self.notification(method, params),
            Ok(Incoming::Response { id, .. }) => self.response(&id),
        }
    }

    /// A message of `len` bytes the view posted over [`McpLimits::max_message_bytes`], dropped
    /// before it was read (by the router, or where it arrived): the view hears a JSON-RPC
    /// error naming the limit, under id `null`, as its id could not be read.
    pub fn oversized(&mut self, len: usize) -> Vec<McpOut> {
        let error = RpcError::new(
            INVALID_REQUEST,
            format!(
                "the message is {len} bytes; the limit is {} (R-MCP-6)",
                self.limits.max_message_bytes
            ),
        );
        self.refuse(None, error)
    }

    fn refuse(&mut self, id: Option<&RpcId>, error: RpcError) -> Vec<McpOut> {
        self.stats.refused += 1;
        vec![McpOut::ToView(jsonrpc::response(id, Err(error)))]
    }

    fn request(
        &mut self,
        id: RpcId,
        method: String,
        params: Map<String, Value>,
        now: Duration,
    ) -> Vec<McpOut> {
        if method == "ui/update-model-context" {
            // Answered at once; only the last one within the delay goes upstream (R-MCP-6).
            let due = match &self.model_context {
                Some((_, due)) => *due,
                None => now + self.limits.model_context_delay,
            };
            self.model_context = Some((params, due));
            return vec![McpOut::ToView(jsonrpc::response(Some(&id), Ok(json!({}))))];
        }
        let forwarded = FORWARDED.contains(&method.as_str())
            || method == "sampling/createMessage" && self.limits.sampling;
        if method == "tools/call"
            && !self.shown.app_may_call
            && params.get("name").and_then(Value::as_str) == Some(self.shown.name.as_str())
        {
            // R-MCP-6: the tool the view shows is not the app's to call; refused at once.
            let why = format!(
                "tools/call: tool {:?} is not visible to the app (its _meta.ui.visibility lacks \"app\") (R-MCP-6)",
                self.shown.name
            );
            return self.refuse(Some(&id), RpcError::new(REFUSED, why));
        }
        if forwarded {
            let token = params
                .get("_meta")
                .and_then(|m| m.get("progressToken"))
                .cloned();
            return match self
                .forwarding
                .admit(&id, &method, token, now, &self.limits)
            {
                Ok(upstream) => vec![McpOut::Upstream(UpstreamRequest {
                    id: upstream,
                    method,
                    params,
                })],
                Err(error) => self.refuse(Some(&id), error),
            };
        }
        if HOST_REQUESTS.contains(&method.as_str()) {
            let mut out = Vec::new();
            if method == "ui/initialize" && self.lifecycle.initialize() {
                out.push(McpOut::Reloaded);
            }
            out.push(McpOut::HostOwned(HostOwned {
                id: Some(id),
                method,
                params,
            }));
            return out;
        }
        let why = if method == "sampling/createMessage" {
            format!("{method} is not forwarded: the agent did not declare it (R-MCP-6)")
        } else {
            format!("{method} is not a method this host answers or forwards (R-MCP-6, R-MCP-8)")
        };
        self.refuse(Some(&id), RpcError::new(METHOD_NOT_FOUND, why))
    }

    fn notification(&mut self, method: String, params: Map<String, Value>) -> Vec<McpOut> {
        if method.starts_with("ui/notifications/sandbox-") {
            self.stats.sandbox_dropped += 1;
            return Vec::new();
        }
        if method == "ui/notifications/initialized" {
            return self
                .lifecycle
                .initialized()
                .into_iter()
                .map(McpOut::ToView)
                .collect();
        }
        if HOST_NOTIFICATIONS.contains(&method.as_str()) {
            return vec![McpOut::HostOwned(HostOwned {
                id: None,
                method,
                params,
            })];
        }
        if !UP_NOTIFICATIONS.contains(&method.as_str()) {
            self.stats.refused += 1;
            return Vec::new();
        }
        let mut out = Vec::new();
        if method == "notifications/cancelled" {
            // The view gave up on one of its requests: it wants no answer, and the agent hears
            // it by the host's id.
            let upstream = params
                .get("requestId")
                .and_then(RpcId::read)
                .and_then(|id| self.forwarding.by_view(&id));
            let Some(upstream) = upstream.and_then(|u| self.forwarding.take(u).map(|_| u)) else {
                self.stats.late += 1;
                return out;
            };
            let reason = params
                .get("reason")
                .and_then(Value::as_str)
                .unwrap_or("the view cancelled it")
                .to_owned();
            out.push(McpOut::UpstreamCancelled {
                id: upstream,
                reason,
            });
            return out;
        }
        out.push(McpOut::UpstreamNotification { method, params });
        out
    }

    fn response(&mut self, id: &RpcId) -> Vec<McpOut> {
        let RpcId::Number(n) = id else {
            self.stats.late += 1;
            return Vec::new();
        };
        match self.asked.remove(n) {
            Some("ui/resource-teardown") => vec![McpOut::TornDown],
            Some(_) => Vec::new(),
            None => {
                self.stats.late += 1;
                Vec::new()
            }
        }
    }

    /// The host's answer to the view's request `id` that it took itself
    /// ([`McpOut::HostOwned`]), as a message for the view.
    pub fn host_answer(&self, id: &RpcId, outcome: Result<Value, RpcError>) -> McpOut {
        McpOut::ToView(jsonrpc::response(Some(id), outcome))
    }

    /// The agent's news of the tool call the view shows (R-MCP-5): what goes to the view now
    /// (nothing before its `initialized`), or why the news is refused (out of order; the
    /// driver answers the agent with a definite error).
    pub fn tool_news(&mut self, news: &ToolNews) -> Result<Vec<McpOut>, String> {
        Ok(self
            .lifecycle
            .news(news)?
            .into_iter()
            .map(McpOut::ToView)
            .collect())
    }

    /// The agent answered forwarded request `id`: the answer goes to the view under its own
    /// id, only while the request waits (a late one is dropped and counted).
    pub fn upstream_answered(&mut self, id: u64, outcome: Result<Value, RpcError>) -> Vec<McpOut> {
        match self.forwarding.take(id) {
            Some(pending) => vec![McpOut::ToView(jsonrpc::response(
                Some(&pending.view_id),
                outcome,
            ))],
            None => {
                self.stats.late += 1;
                Vec::new()
            }
        }
    }

    /// The agent's `notifications/progress` for forwarded request `id`: relayed under the
    /// view's own progress token, only while the request waits and only when the view asked
    /// for progress.
    pub fn upstream_progress(&mut self, id: u64, mut params: Map<String, Value>) -> Vec<McpOut> {
        let Some(token) = self
            .forwarding
            .get(id)
            .and_then(|p| p.progress_token.clone())
        else {
            self.stats.late += 1;
            return Vec::new();
        };
        params.insert("progressToken".to_owned(), token);
        vec![McpOut::ToView(jsonrpc::notification(
            "notifications/progress",
            Value::Object(params),
        ))]
    }

    /// The agent went away: the view hears the tool call was cancelled (unless it ended), and
    /// every forwarded request waiting is answered with an error (R-MCP-5).
    pub fn agent_gone(&mut self) -> Vec<McpOut> {
        let mut out = Vec::new();
        if !self.lifecycle.ended() {
            let news = ToolNews::Cancelled("the agent went away".to_owned());
            if let Ok(sent) = self.lifecycle.news(&news) {
                out.extend(sent.into_iter().map(McpOut::ToView));
            }
        }
        for (_, pending) in self.forwarding.drain() {
            let error = RpcError::new(
                TIMED_OUT,
                format!("{}: the agent went away before answering", pending.method),
            );
            out.push(McpOut::ToView(jsonrpc::response(
                Some(&pending.view_id),
                Err(error),
            )));
        }
        out
    }

    /// Asks the view to tear down before it is closed, hibernated or replaced (R-MCP-8): a
    /// `ui/resource-teardown` request whose answer is [`McpOut::TornDown`]; a view that never
    /// initialized is torn down at once.
    pub fn teardown(&mut self, reason: &str) -> Vec<McpOut> {
        if !self.lifecycle.is_initialized() {
            return vec![McpOut::TornDown];
        }
        self.next_ask += 1;
        self.asked.insert(self.next_ask, "ui/resource-teardown");
        vec![McpOut::ToView(jsonrpc::request(
            &RpcId::Number(self.next_ask),
            "ui/resource-teardown",
            json!({"reason": reason}),
        ))]
    }

    /// When [`McpRouter::handle_timeout`] has work next: a forwarded request's deadline, or the
    /// latest model context going upstream.
    pub fn poll_timeout(&self) -> Option<Duration> {
        let context = self.model_context.as_ref().map(|(_, due)| *due);
        match (self.forwarding.next_deadline(), context) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Does what is due at `now`: a forwarded request past its deadline is answered with an
    /// error and the agent told to drop it; the latest model context goes upstream.
    pub fn handle_timeout(&mut self, now: Duration) -> Vec<McpOut> {
        let mut out = Vec::new();
        for (id, pending) in self.forwarding.expired(now) {
            let waited = self.limits.request_timeout().as_secs();
            let message = format!(
                "{}: no answer within {waited} s; the limit is {waited} s (R-MCP-6)",
                pending.method
            );
            out.push(McpOut::ToView(jsonrpc::response(
                Some(&pending.view_id),
                Err(RpcError::new(TIMED_OUT, message.clone())),
            )));
            out.push(McpOut::UpstreamCancelled {
                id,
                reason: message,
            });
        }
        if self
            .model_context
            .as_ref()
            .is_some_and(|(_, due)| *due <= now)
        {
            if let Some((params, _)) = self.model_context.take() {
                out.push(McpOut::UpstreamNotification {
                    method: "ui/update-model-context".to_owned(),
                    params,
                });
            }
        }
        out
    }
}
