//! What the agent tells a view about the tool call it shows (R-MCP-5), checked for order and
//! held until the view said `initialized`.

use serde_json::{json, Map, Value};

use super::jsonrpc::notification;
use crate::redact::Fingerprint;

/// One message from the agent about the tool call a view shows (R-MCP-5). `Debug` prints
/// [`Fingerprint`]s of what it carries (the agent's data).
#[derive(Clone, PartialEq)]
pub enum ToolNews {
    /// Part of the tool's arguments while the model still writes them (0..n, only before the
    /// input).
    InputPartial(Map<String, Value>),
    /// The tool's arguments, complete (at most once).
    Input(Map<String, Value>),
    /// The tool's result, a `CallToolResult` (after the input, at most once).
    Result(Map<String, Value>),
    /// The call was cancelled (at most once, never after a result).
    Cancelled(String),
}

impl std::fmt::Debug for ToolNews {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let carried = match self {
            ToolNews::InputPartial(m) | ToolNews::Input(m) | ToolNews::Result(m) => {
                Fingerprint::of(Value::Object(m.clone()).to_string())
            }
            ToolNews::Cancelled(reason) => Fingerprint::of(reason),
        };
        f.debug_tuple(self.name()).field(&carried).finish()
    }
}

impl ToolNews {
    fn name(&self) -> &'static str {
        match self {
            ToolNews::InputPartial(_) => "tool-input-partial",
            ToolNews::Input(_) => "tool-input",
            ToolNews::Result(_) => "tool-result",
            ToolNews::Cancelled(_) => "tool-cancelled",
        }
    }

    fn message(&self) -> String {
        match self {
            ToolNews::InputPartial(arguments) => notification(
                "ui/notifications/tool-input-partial",
                json!({"arguments": arguments}),
            ),
            ToolNews::Input(arguments) => notification(
                "ui/notifications/tool-input",
                json!({"arguments": arguments}),
            ),
            ToolNews::Result(result) => notification(
                "ui/notifications/tool-result",
                Value::Object(result.clone()),
            ),
            ToolNews::Cancelled(reason) => {
                notification("ui/notifications/tool-cancelled", json!({"reason": reason}))
            }
        }
    }
}

/// How far the tool call has come.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Waiting,
    Partial,
    Input,
    Result,
    Cancelled,
}

impl Stage {
    fn name(self) -> &'static str {
        match self {
            Stage::Waiting => "nothing",
            Stage::Partial => "tool-input-partial",
            Stage::Input => "tool-input",
            Stage::Result => "tool-result",
            Stage::Cancelled => "tool-cancelled",
        }
    }
}

/// The tool call's news for one view.
///
/// Invariants: news reaches the view in the order R-MCP-5 allows (partials, the input, then a
/// result or a cancel, each of the last three at most once); nothing reaches a view that has
/// not said `initialized` since its last `ui/initialize` (it waits in `queued`, in order); after
/// a reload (a second `ui/initialize`) the input and the result or cancel go again (R-MCP-7).
#[derive(Debug)]
pub(crate) struct ToolLifecycle {
    stage: Stage,
    initialized: bool,
    queued: Vec<String>,
    /// The input and the result or cancel as sent, for a reload.
    replay: Vec<String>,
}

impl Default for ToolLifecycle {
    fn default() -> Self {
        Self {
            stage: Stage::Waiting,
            initialized: false,
            queued: Vec::new(),
            replay: Vec::new(),
        }
    }
}

impl ToolLifecycle {
    /// Takes `news` in order: the messages for the view now (none while it is not initialized),
    /// or why `news` is out of order.
    pub(crate) fn news(&mut self, news: &ToolNews) -> Result<Vec<String>, String> {
        let next = match (news, self.stage) {
            (ToolNews::InputPartial(_), Stage::Waiting | Stage::Partial) => Stage::Partial,
            (ToolNews::Input(_), Stage::Waiting | Stage::Partial) => Stage::Input,
            (ToolNews::Result(_), Stage::Input) => Stage::Result,
            (ToolNews::Cancelled(_), Stage::Waiting | Stage::Partial | Stage::Input) => {
                Stage::Cancelled
            }
            (news, stage) => {
                return Err(format!(
                    "{} is out of order after {} (R-MCP-5)",
                    news.name(),
                    stage.name()
                ))
            }
        };
        self.stage = next;
        let message = news.message();
        if !matches!(news, ToolNews::InputPartial(_)) {
            self.replay.push(message.clone());
        }
        Ok(self.deliver(message))
    }

    /// Whether the call ended (a result or a cancel went).
    pub(crate) fn ended(&self) -> bool {
        matches!(self.stage, Stage::Result | Stage::Cancelled)
    }

    fn deliver(&mut self, message: String) -> Vec<String> {
        if self.initialized {
            vec![message]
        } else {
            self.queued.push(message);
            Vec::new()
        }
    }

    /// Whether the view said `initialized` since its last `ui/initialize`.
    pub(crate) fn is_initialized(&self) -> bool {
        self.initialized
    }

    /// The view said `initialized`: what waited goes now, in order.
    pub(crate) fn initialized(&mut self) -> Vec<String> {
        self.initialized = true;
        std::mem::take(&mut self.queued)
    }

    /// The view sent `ui/initialize`; `true` when it is a reload (it had said `initialized`
    /// since its last one): then the input and the result or cancel wait to go again.
    pub(crate) fn initialize(&mut self) -> bool {
        if !self.initialized {
            return false;
        }
        self.initialized = false;
        self.queued = self.replay.clone();
        true
    }
}
