//! Where what the host tells its embedder goes.

use lineup_host_core::{Activity, Message};

use super::activity::ActivityNotices;
use super::options::OutboundFn;
use super::standby::HostStandby;
use crate::delegate::HostDelegate;

/// What the host tells outside the kernel: the embedder's outbound callback
/// ([`HostBuilder::on_outbound`](super::HostBuilder::on_outbound)) and [`HostDelegate`], and
/// the user's activity notices (original §5.3), when on.
///
/// Invariants: each message for the agent reaches the callback first, then the delegate's
/// `notify_outbound`, each exactly once ([`Upstream::send`]); each call that ran reaches the
/// delegate, then the notice ([`Upstream::activity`]).
pub(super) struct Upstream {
    outbound: Option<OutboundFn>,
    delegate: Box<dyn HostDelegate>,
    notices: Option<ActivityNotices>,
}

impl Upstream {
    /// The listeners the builder was given.
    pub(super) fn new(
        outbound: Option<OutboundFn>,
        delegate: Box<dyn HostDelegate>,
        notices: Option<ActivityNotices>,
    ) -> Self {
        Self {
            outbound,
            delegate,
            notices,
        }
    }

    /// What ran: logged (never the reason), told to the delegate, and shown in the host's
    /// notice (over `standby` when there is one) when the user saw nothing of it.
    pub(super) fn activity(&mut self, activity: &Activity, standby: Option<&HostStandby>) {
        tracing::info!("activity: {activity}");
        self.delegate.notify_capability_ran(activity);
        if let Some(notices) = self.notices.as_mut() {
            notices.show(activity, standby);
        }
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
