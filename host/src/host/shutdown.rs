//! What becomes of the ending sessions' effects when the host shuts down
//! ([`Engine::close_all`](super::engine::Engine::close_all)): each effect by name, and where one
//! is not carried out, why.

use lineup_host_core::{
    CapabilityEffect, CloseReason, ComponentEffect, Effect, SurfaceKey, Ticket,
};

/// An ending session's effect at shutdown. Sessions that end close their Surfaces, hide their
/// components and withdraw their prompts; their records are already in the store.
#[derive(Debug)]
pub(super) enum AtShutdown {
    /// A Surface's view closes, its delegate told why; nothing goes upstream.
    Close {
        key: SurfaceKey,
        reason: CloseReason,
    },
    /// A consent prompt or a hook request is withdrawn.
    Withdraw(Ticket),
    /// Not carried out.
    Unapplied(Unapplied),
}

/// Why an ending session's effect is not carried out at shutdown; logged by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Unapplied {
    /// A standard component's box: the boards close with the host, each box with them.
    BoardsCloseWithTheHost,
    /// A view to open, reload, resize or feed: the views close with the host.
    ViewsCloseWithTheHost,
    /// Something for the agent or the delegate to hear: the agent's stream ended, and the
    /// delegate hears of each close.
    NobodyToTell,
    /// A new decision, run or activity: an ending session starts none (a running call finishes
    /// on its own and is recorded).
    NoNewCapabilityWork,
}

impl AtShutdown {
    /// What becomes of `effect` at shutdown.
    pub(super) fn of(effect: Effect) -> Self {
        let unapplied = match effect {
            Effect::Close { key, reason } => return AtShutdown::Close { key, reason },
            Effect::Capability(CapabilityEffect::Withdraw(ticket)) => {
                return AtShutdown::Withdraw(ticket)
            }
            Effect::Capability(
                CapabilityEffect::Prompt(_)
                | CapabilityEffect::Hook(_)
                | CapabilityEffect::Run(_)
                | CapabilityEffect::Activity(_),
            ) => Unapplied::NoNewCapabilityWork,
            Effect::Component(
                ComponentEffect::Show(_)
                | ComponentEffect::Update { .. }
                | ComponentEffect::Lock { .. }
                | ComponentEffect::Hide { .. },
            ) => Unapplied::BoardsCloseWithTheHost,
            Effect::Open(_)
            | Effect::OpenHibernated(_)
            | Effect::Replace { .. }
            | Effect::Reopen { .. }
            | Effect::RestoreDocument(_)
            | Effect::DeliverState { .. }
            | Effect::Resize { .. }
            | Effect::Mcp(_) => Unapplied::ViewsCloseWithTheHost,
            Effect::Ready(_)
            | Effect::Reloaded(_)
            | Effect::Send(_)
            | Effect::Rejected(_)
            | Effect::Diagnostic { .. }
            | Effect::Dropped { .. } => Unapplied::NobodyToTell,
        };
        AtShutdown::Unapplied(unapplied)
    }
}
