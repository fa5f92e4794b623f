//! Where what the host tells its embedder goes.

use lineup_host_core::Message;

use super::builder::OutboundFn;
use crate::delegate::HostDelegate;

/// The embedder's two listeners: the outbound callback
/// ([`HostBuilder::on_outbound`](super::HostBuilder::on_outbound)) and the [`HostDelegate`].
///
/// Invariant: each message for the agent reaches the callback first, then the delegate's
/// `notify_outbound`, each exactly once ([`Upstream::send`]).
pub(super) struct Upstream {
    outbound: Option<OutboundFn>,
    delegate: Box<dyn HostDelegate>,
}

impl Upstream {
    /// The listeners the builder was given.
    pub(super) fn new(outbound: Option<OutboundFn>, delegate: Box<dyn HostDelegate>) -> Self {
        Self { outbound, delegate }
    }

    /// Hands one message for the agent to both listeners.
    pub(super) fn send(&mut self, message: &Message) {
        if let Some(outbound) = self.outbound.as_mut() {
            outbound(message);
        }
        self.delegate.notify_outbound(message);
    }

    /// The delegate, for every other notice and question.
    pub(super) fn delegate(&mut self) -> &mut dyn HostDelegate {
        self.delegate.as_mut()
    }
}
