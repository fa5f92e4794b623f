//! Whether a shown view is up, as far as the agent can tell: the host refused nothing the agent
//! sent to show it, and, after its tool result was sent, the view gave a sign.
//!
//! The host holds the tool's input and result until the view has said `initialized`
//! (R-MCP-5), but lineup.v1 tells the agent nothing when a view initializes. An agent in the
//! host's process hears the host answer the view's `ui/initialize` ([`FromHost::ViewReady`](crate::FromHost::ViewReady));
//! over the wire alone, a view is seen up when it asks something (`mcp.request`), notifies
//! something (`mcp.notify`) or the host reports an event of it (`ui.event` other than its
//! close), so a view that does none of these of its own accord is seen up only once it is used.

use lineup_host_core::MessageId;

use crate::show::{Show, ShowEvent};

/// An envelope of the agent the host refused (`client.error` in reply to it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The refused envelope's type (`lineup.v1.ui.open`).
    pub kind: &'static str,
    /// The host's error code (`unsupported`).
    pub code: String,
    /// The host's sentence.
    pub message: String,
}

/// Reads the show loop's events for the signs that the view is up.
///
/// Invariant: `up` is set only by a sign of the view seen after the `tool-result` envelope was
/// sent, while nothing was refused.
#[derive(Debug, Clone)]
pub struct UpWatch {
    result: Option<MessageId>,
    result_sent: bool,
    refused: Option<Refusal>,
    up: bool,
}

impl UpWatch {
    /// A watch of `show`'s view (its `tool-result` is the last of [`Show::first`]).
    pub fn new(show: &Show) -> Self {
        Self::after(show.first().last().map(|out| out.id().clone()))
    }

    /// A watch whose `tool-result` envelope has id `result`.
    fn after(result: Option<MessageId>) -> Self {
        Self {
            result,
            result_sent: false,
            refused: None,
            up: false,
        }
    }

    /// Takes one event of the show loop.
    pub fn see(&mut self, event: &ShowEvent<'_>) {
        let spoke = match event {
            ShowEvent::Sent(out) => {
                self.result_sent |= self.result.as_ref() == Some(out.id());
                false
            }
            ShowEvent::Refused { error, kind } => {
                self.refused.get_or_insert_with(|| Refusal {
                    kind,
                    code: error.code.as_str().to_owned(),
                    message: error.message.clone(),
                });
                false
            }
            ShowEvent::Forwarded(_)
            | ShowEvent::Note(_)
            | ShowEvent::Event(_)
            | ShowEvent::ViewReady => true,
            _ => false,
        };
        self.up |= spoke && self.result_sent && self.refused.is_none();
    }

    /// Whether the view is seen up (and nothing was refused).
    pub fn is_up(&self) -> bool {
        self.up
    }

    /// The first refusal of the host, if any.
    pub fn refused(&self) -> Option<&Refusal> {
        self.refused.as_ref()
    }

    /// What is not seen yet, for a message: the tool result going out, or a sign of the view.
    pub fn missing(&self) -> &'static str {
        if !self.result_sent {
            "tool-result sent to the host"
        } else {
            "sign of the view after its tool result (its ui/initialize answered, a request, a \
             notification or a ui.event of it)"
        }
    }
}

#[cfg(test)]
mod tests {
    use lineup_host_core::mcp::ToolNews;
    use lineup_host_core::{
        ClientError, ConversationId, ErrorCode, EventName, InstanceId, JsonObject, McpTool,
        PartyId, UiEvent,
    };
    use serde_json::Map;

    use super::UpWatch;
    use crate::outbox::{Outbox, Outgoing};
    use crate::relay::Note;
    use crate::show::{ShowEvent, ShowEvent::Sent};

    fn news(outbox: &mut Outbox, news: ToolNews) -> Outgoing {
        let instance_id = InstanceId::try_from("v1").unwrap_or_else(|e| panic!("{e}"));
        let tool = McpTool { instance_id, news };
        outbox
            .envelope("news", tool)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    fn spoke() -> Note {
        Note::Log(Map::new())
    }

    fn event() -> UiEvent {
        UiEvent {
            instance_id: InstanceId::try_from("v1").unwrap_or_else(|e| panic!("{e}")),
            event: EventName::try_from("blocked").unwrap_or_else(|e| panic!("{e}")),
            data: JsonObject::new(),
        }
    }

    #[test]
    fn a_view_is_up_once_it_speaks_after_its_result_and_never_after_a_refusal() {
        let mut outbox = Outbox::new(
            ConversationId::try_from("c1").unwrap_or_else(|e| panic!("{e}")),
            PartyId::try_from("a").unwrap_or_else(|e| panic!("{e}")),
        );
        let input = news(&mut outbox, ToolNews::Input(Map::new()));
        let result = news(&mut outbox, ToolNews::Result(Map::new()));
        let mut watch = UpWatch::after(Some(result.id().clone()));
        watch.see(&Sent(&input));
        watch.see(&ShowEvent::Note(&spoke()));
        assert!(
            !watch.is_up(),
            "a sign before the result counts for nothing"
        );
        assert!(watch.missing().starts_with("tool-result"));
        watch.see(&Sent(&result));
        assert!(!watch.is_up());
        watch.see(&ShowEvent::Event(&event()));
        assert!(watch.is_up());

        let mut refused = UpWatch::after(Some(result.id().clone()));
        let error = ClientError {
            in_reply_to: Some(result.id().clone()),
            code: ErrorCode::Unsupported,
            message: "no views here".to_owned(),
            field: None,
            limit: None,
            instance_id: None,
            count: None,
        };
        refused.see(&Sent(&result));
        refused.see(&ShowEvent::Refused {
            error: &error,
            kind: "lineup.v1.mcp.tool",
        });
        refused.see(&ShowEvent::Note(&spoke()));
        assert!(!refused.is_up());
        let why = refused.refused().map(|r| (r.kind, r.code.as_str()));
        assert_eq!(why, Some(("lineup.v1.mcp.tool", "unsupported")));
    }
}
