//! One tool call's view, shown through a host and relayed until it closes: the agent lists the
//! server's tools, calls the one picked, reads its view (R-MCP-2), opens it (R-MCP-3, R-MCP-4),
//! hands it the call's input and result (R-MCP-5), then answers every request the host forwards
//! for it (R-MCP-6). The host is a channel in and a sink out, so the same loop serves any
//! transport: a `lineup_host::Host` in the same process (`lineup mcp`, the examples), or the
//! lines of a `lineup host --stdio` or the frames of a WebSocket link.

use std::collections::BTreeMap;

use lineup_host_core::{
    ClientError, InstanceId, McpAnswer, McpServerId, Message, MessageId, UiEvent,
};
use serde_json::{Map, Value};
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::task::{AbortHandle, JoinSet};

use crate::error::McpError;
use crate::opening::ShownView;
use crate::outbox::{Outbox, Outgoing};
use crate::relay::{answer_envelope, Forward, Note, Relay, RequestKey, Taken};
use crate::server::McpServer;
use crate::tool::UiTool;

/// What reaches the agent from the host.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum FromHost {
    /// A `lineup.v1` message of the host (boxed: most messages are small).
    Message(Box<Message>),
    /// The host answered view `instance`'s `ui/initialize`: the embedder's
    /// `HostDelegate::notify_ready` of it, which only an agent in the host's process hears
    /// (lineup.v1 carries no such notice). The host hands the view the tool's input and result
    /// once it says `initialized` (R-MCP-5).
    ViewReady(InstanceId),
}

impl From<Message> for FromHost {
    fn from(message: Message) -> Self {
        FromHost::Message(Box::new(message))
    }
}

/// What happened, as the show loop tells its caller.
#[derive(Debug)]
#[non_exhaustive]
pub enum ShowEvent<'a> {
    /// An envelope went to the host.
    Sent(&'a Outgoing),
    /// The host refused an envelope of this agent (`client.error`, `in_reply_to` one of its).
    Refused {
        /// The host's error.
        error: &'a ClientError,
        /// The refused envelope's type (`lineup.v1.ui.open`).
        kind: &'static str,
    },
    /// The host reported something without naming an envelope of this agent (`client.error`
    /// with another `in_reply_to` or none: dropped events, a view that failed).
    HostError(&'a ClientError),
    /// A request of the view goes to the server.
    Forwarded(&'a Forward),
    /// A forwarded request's answer went back to the host, or an answer the agent gave itself.
    Answered(&'a McpAnswer),
    /// A note of the view for the agent (`ui/message`, a log message, the model context).
    Note(&'a Note),
    /// A `ui.event` of the view other than its close (`reloaded`: its page started again,
    /// R-MCP-7; `blocked`: a load its CSP refused, R-MCP-10).
    Event(&'a UiEvent),
    /// The host answered the view's `ui/initialize` ([`FromHost::ViewReady`]).
    ViewReady,
    /// Any other message of the host.
    Other(&'a Message),
}

/// Whether the show loop goes on after an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Go on.
    Continue,
    /// Stop relaying and return [`ShowEnd::Stopped`].
    Stop,
}

/// Why the show loop ended.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ShowEnd {
    /// The view closed (the user closed its window, or the host closed it): the reason the
    /// host gave (`data.reason` of its `ui.event` `close`), `None` for the user's close.
    Closed(Option<String>),
    /// The caller said [`Flow::Stop`].
    Stopped,
    /// The host's channel ended (it exited, or stopped reading).
    HostGone,
}

/// A tool call whose view is to be shown: the envelopes that show it, made, and the relay
/// that answers its requests.
#[derive(Debug)]
pub struct Show {
    relay: Relay,
    shown: ShownView,
    outbox: Outbox,
    first: Vec<Outgoing>,
}

impl Show {
    /// Lists the server's tools, picks one (`tool`, else the first that names a view and that
    /// a model may be offered, R-MCP-2), calls it with `arguments`, reads its view, and makes
    /// the envelopes that open it as `instance` (the server known to the host as `id`) and hand
    /// it the call's input and result.
    pub async fn prepare(
        server: &McpServer,
        id: McpServerId,
        tool: Option<&str>,
        arguments: Map<String, Value>,
        instance: InstanceId,
        mut outbox: Outbox,
    ) -> Result<Self, McpError> {
        let tools = server.tools().await?;
        let picked = UiTool::pick(&tools, tool)?;
        let call = server.call(picked.name(), arguments.clone()).await?;
        let view = server.read_view(picked.uri()).await?;
        let (shown, mut first) =
            ShownView::open(&mut outbox, instance, id.clone(), picked, call.id, &view)?;
        first.push(shown.input(&mut outbox, arguments)?);
        first.push(shown.result(&mut outbox, &call.result)?);
        Ok(Self {
            relay: Relay::new(server, id, tools),
            shown,
            outbox,
            first,
        })
    }

    /// The view as opened.
    pub fn shown(&self) -> &ShownView {
        &self.shown
    }

    /// The envelopes [`Show::run`] sends first: the view's chunks when it goes by digest, its
    /// `ui.open`, and the call's `tool-input` and `tool-result`.
    pub fn first(&self) -> &[Outgoing] {
        &self.first
    }

    /// Sends the first envelopes to the host, then relays: each `mcp.request` for the view
    /// is answered (forwarded ones beside each other), each `mcp.notify` taken, until the view
    /// closes, the host goes, or `on` says [`Flow::Stop`]. `to_host` hands the host one
    /// envelope's bytes (`false`: the host is gone) and must not block: a channel's send, or
    /// `HostHandle::send_inbound`. Every event goes to `on` first. The relay is handed back
    /// with the end (it holds the last model context).
    pub async fn run<T, F>(
        self,
        from_host: &mut UnboundedReceiver<FromHost>,
        to_host: T,
        on: F,
    ) -> Result<(ShowEnd, Relay), McpError>
    where
        T: FnMut(Vec<u8>) -> bool,
        F: FnMut(ShowEvent<'_>) -> Flow,
    {
        let mut relaying = Relaying {
            relay: self.relay,
            instance: self.shown.instance().clone(),
            outbox: self.outbox,
            ours: BTreeMap::new(),
            to_host,
            on,
            forwards: JoinSet::new(),
            running: BTreeMap::new(),
        };
        let end = relaying.run(self.first, from_host).await?;
        Ok((end, relaying.relay))
    }
}

/// The show loop's state.
///
/// Invariant: `running` holds the abort handle of each forward in `forwards` that has not
/// finished, by its key; `ours` the id and type of every envelope sent.
struct Relaying<T, F> {
    relay: Relay,
    instance: InstanceId,
    outbox: Outbox,
    ours: BTreeMap<MessageId, &'static str>,
    to_host: T,
    on: F,
    forwards: JoinSet<McpAnswer>,
    running: BTreeMap<RequestKey, AbortHandle>,
}

/// `None`: go on; `Some(end)`: the loop ends so.
type Step = Result<Option<ShowEnd>, McpError>;

impl<T: FnMut(Vec<u8>) -> bool, F: FnMut(ShowEvent<'_>) -> Flow> Relaying<T, F> {
    async fn run(
        &mut self,
        first: Vec<Outgoing>,
        from_host: &mut UnboundedReceiver<FromHost>,
    ) -> Result<ShowEnd, McpError> {
        for out in first {
            if let Some(end) = self.send(out)? {
                return Ok(end);
            }
        }
        loop {
            let step = tokio::select! {
                message = from_host.recv() => match message {
                    Some(FromHost::Message(message)) => self.take(*message),
                    Some(FromHost::ViewReady(instance)) if instance == self.instance => {
                        Ok(self.tell(ShowEvent::ViewReady))
                    }
                    Some(_) => Ok(None),
                    None => Ok(Some(ShowEnd::HostGone)),
                },
                Some(done) = self.forwards.join_next(), if !self.forwards.is_empty() => {
                    match done {
                        Ok(answer) => {
                            self.running.remove(&RequestKey::of(&answer));
                            self.answer(answer)
                        }
                        // An aborted forward was cancelled by the host: it wants no answer.
                        Err(_) => Ok(None),
                    }
                }
            };
            if let Some(end) = step? {
                self.forwards.abort_all();
                return Ok(end);
            }
        }
    }

    /// Tells the caller; `Some(Stopped)` when it says stop.
    fn tell(&mut self, event: ShowEvent<'_>) -> Option<ShowEnd> {
        match (self.on)(event) {
            Flow::Continue => None,
            Flow::Stop => Some(ShowEnd::Stopped),
        }
    }

    fn send(&mut self, out: Outgoing) -> Step {
        self.ours.insert(out.id().clone(), out.kind());
        if let Some(end) = self.tell(ShowEvent::Sent(&out)) {
            return Ok(Some(end));
        }
        match (self.to_host)(out.into_bytes()) {
            true => Ok(None),
            false => Ok(Some(ShowEnd::HostGone)),
        }
    }

    fn answer(&mut self, answer: McpAnswer) -> Step {
        if let Some(end) = self.tell(ShowEvent::Answered(&answer)) {
            return Ok(Some(end));
        }
        let out = answer_envelope(&mut self.outbox, answer)?;
        self.send(out)
    }

    fn take(&mut self, message: Message) -> Step {
        match message {
            Message::McpRequest(request) => match self.relay.request(request.payload) {
                Taken::Forward(forward) => {
                    if let Some(end) = self.tell(ShowEvent::Forwarded(&forward)) {
                        return Ok(Some(end));
                    }
                    let key = forward.key().clone();
                    let handle = self.forwards.spawn(forward.answer());
                    self.running.insert(key, handle);
                    Ok(None)
                }
                Taken::Answered { answer, note } => {
                    if let Some(end) = note.and_then(|note| self.tell(ShowEvent::Note(&note))) {
                        return Ok(Some(end));
                    }
                    self.answer(answer)
                }
                Taken::Note(note) => Ok(self.tell(ShowEvent::Note(&note))),
                Taken::Cancelled(key) => Ok(self.cancel(&key)),
            },
            Message::McpNotify(notify) => match self.relay.notify(notify.payload) {
                Some(Taken::Note(note)) => Ok(self.tell(ShowEvent::Note(&note))),
                Some(Taken::Cancelled(key)) => Ok(self.cancel(&key)),
                _ => Ok(None),
            },
            Message::UiEvent(event) if event.payload.instance_id == self.instance => {
                if event.payload.event.as_str() != "close" {
                    return Ok(self.tell(ShowEvent::Event(&event.payload)));
                }
                let reason = event.payload.data.as_map().get("reason");
                let reason = reason.and_then(Value::as_str).map(str::to_owned);
                Ok(Some(ShowEnd::Closed(reason)))
            }
            Message::ClientError(error) => {
                let refused = error.payload.in_reply_to.as_ref();
                match refused.and_then(|id| self.ours.get(id)) {
                    Some(kind) => Ok(self.tell(ShowEvent::Refused {
                        error: &error.payload,
                        kind,
                    })),
                    None => Ok(self.tell(ShowEvent::HostError(&error.payload))),
                }
            }
            other => Ok(self.tell(ShowEvent::Other(&other))),
        }
    }

    /// Drops the forward of `key`, which cancels it at the server: the host wants no answer.
    fn cancel(&mut self, key: &RequestKey) -> Option<ShowEnd> {
        if let Some(handle) = self.running.remove(key) {
            handle.abort();
        }
        None
    }
}
