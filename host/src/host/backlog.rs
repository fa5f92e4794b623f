//! A view's page messages on their way through the event loop (R-UI-7, R-DIAG-1, R-MCP-7), and
//! the event closure that sends them there ([`reporter`]).

use std::cell::Cell;
use std::rc::Rc;

use lineup_host_core::{PageInput, SurfaceKey, BRIDGE_NAMESPACE};
use lineup_webview_shell::ViewEvent;

use super::handle::{HostEvent, Inner};
use super::proxy::HostProxy;

/// How a diagnostic the bridge posted starts; the page gains nothing by imitating it, since the
/// message is then decoded as the diagnostic it claims to be (R-DIAG-1).
fn is_diagnostic(raw: &str) -> bool {
    raw.strip_prefix("{\"namespace\":\"")
        .and_then(|rest| rest.strip_prefix(BRIDGE_NAMESPACE))
        .is_some_and(|rest| rest.starts_with("\",\"type\":\"diagnostic\""))
}

/// One kind of waiting message: how many wait, how many were dropped since last reported,
/// and how many may wait.
#[derive(Default)]
struct Queue {
    in_flight: Cell<usize>,
    dropped: Cell<u64>,
    limit: usize,
}

impl Queue {
    fn admit(&self) -> bool {
        if self.in_flight.get() >= self.limit {
            self.dropped.set(self.dropped.get() + 1);
            return false;
        }
        self.in_flight.set(self.in_flight.get() + 1);
        true
    }

    fn taken(&self) {
        self.in_flight.set(self.in_flight.get().saturating_sub(1));
    }
}

/// A view's bridge messages on their way through the event loop: a page that posts faster than
/// the host handles is cut off at `Limits::max_pending_bridge_messages`, so it can neither grow
/// memory nor starve the agent's envelopes queued behind it.
///
/// Invariants: at most each queue's limit waits; diagnostics have a waiting cap of their own
/// (`Limits::max_pending_diagnostics`), so a page that logs a lot loses diagnostics, never
/// events (R-DIAG-1); each drop is reported once, with the next message that reaches the loop.
pub(super) struct Backlog {
    messages: Queue,
    diagnostics: Queue,
}

/// What a bridge message that reached the loop leaves to report first: page messages and
/// diagnostics dropped while it waited.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct Dropped {
    pub(super) messages: u64,
    pub(super) diagnostics: u64,
}

impl Dropped {
    /// What the session hears of the drops, before the message that reached the loop: the page
    /// messages dropped (a flood), then the diagnostics dropped.
    pub(super) fn inputs(self) -> impl Iterator<Item = PageInput<'static>> {
        let messages = self.messages;
        let flood = (messages > 0).then_some(PageInput::Flood { count: messages });
        let count = self.diagnostics;
        let diagnostics = (count > 0).then_some(PageInput::DiagnosticsDropped { count });
        flood.into_iter().chain(diagnostics)
    }
}

/// The event closure of the view of `key`: each report goes to the loop through `proxy`,
/// tagged with the key (R-SEC-4: the closure is the view's identity). A page's message (a
/// bridge message, or an MCP App view's JSON-RPC) waits in `backlog`, and past its bound is
/// dropped and counted, reported with the next one that reaches the loop (R-ENV-4,
/// R-DIAG-1): a flooding view loses its own messages, never the agent's.
pub(super) fn reporter(
    key: SurfaceKey,
    proxy: HostProxy,
    backlog: Rc<Backlog>,
) -> Box<dyn Fn(ViewEvent)> {
    Box::new(move |event| {
        if let ViewEvent::Ipc(raw) | ViewEvent::McpMessage(raw) = &event {
            if !backlog.admit(raw) {
                return;
            }
        }
        let _ = proxy.send_event(HostEvent(Inner::View {
            key: key.clone(),
            event,
        }));
    })
}

impl Backlog {
    /// At most `messages` page messages and `diagnostics` diagnostics wait at once.
    pub(super) fn new(messages: usize, diagnostics: usize) -> Self {
        let queue = |limit| Queue {
            limit,
            ..Queue::default()
        };
        Self {
            messages: queue(messages),
            diagnostics: queue(diagnostics),
        }
    }

    fn queue(&self, raw: &str) -> &Queue {
        if is_diagnostic(raw) {
            &self.diagnostics
        } else {
            &self.messages
        }
    }

    /// The view posted `raw`: whether it may wait for the loop (else it is dropped, counted).
    pub(super) fn admit(&self, raw: &str) -> bool {
        self.queue(raw).admit()
    }

    /// `raw` reached the loop: it no longer waits, and what was dropped while it waited is
    /// handed over once.
    pub(super) fn taken(&self, raw: &str) -> Dropped {
        self.queue(raw).taken();
        Dropped {
            messages: self.messages.dropped.replace(0),
            diagnostics: self.diagnostics.dropped.replace(0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_waits_within_its_own_limit_and_drops_are_reported_once() {
        let diagnostic =
            format!("{{\"namespace\":\"{BRIDGE_NAMESPACE}\",\"type\":\"diagnostic\",\"x\":1}}");
        let event = format!("{{\"namespace\":\"{BRIDGE_NAMESPACE}\",\"type\":\"event\"}}");
        let backlog = Backlog::new(2, 1);
        assert!(backlog.admit(&event) && backlog.admit(&event));
        assert!(
            !backlog.admit(&event),
            "a third message waited past the limit of 2"
        );
        assert!(
            backlog.admit(&diagnostic),
            "diagnostics wait apart from messages"
        );
        assert!(!backlog.admit(&diagnostic));
        assert!(!backlog.admit(&diagnostic));
        let first = backlog.taken(&event);
        assert_eq!(
            first,
            Dropped {
                messages: 1,
                diagnostics: 2
            }
        );
        assert_eq!(
            backlog.taken(&diagnostic),
            Dropped::default(),
            "reported twice"
        );
        assert!(backlog.admit(&event), "a taken message frees its place");
        assert!(!backlog.admit(&event));
    }
}
