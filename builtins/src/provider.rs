//! How a set of capabilities with a runtime of its own plugs into the host's capability driver:
//! the built-ins are one such provider ([`Builtins`](crate::Builtins)). The driver asks a
//! provider first, and runs an embedder's own handler only for what the provider gives back.

use std::sync::Arc;

use lineup_host_core::{Answer, HookRequest, RunRequest, SessionId, Ticket};

/// How an answer reaches the kernel from another thread (a handler's or a dialog's): tickets
/// are per session, so the answer names the session whose effect asked.
pub type AnswerSink = Arc<dyn Fn(SessionId, Ticket, Answer) + Send + Sync>;

/// Capabilities that run themselves: their handlers, and for some their own dialog in place of
/// the permission hook (R-CAP-3, R-CAP-4). Every answer goes through the sink, exactly once per
/// ticket it took.
pub trait CapabilityProvider {
    /// Whether the permission check of `request` is this provider's own (a dialog that decides
    /// the call), so the embedder's permission hook is not asked.
    fn owns_hook(&self, request: &HookRequest) -> bool;

    /// Carries out the permission check of a `request` it owns, answering
    /// [`Answer::Hook`] through `sink`.
    fn hook(&mut self, session: SessionId, request: HookRequest, sink: &AnswerSink);

    /// The kernel no longer wants the answer to `ticket` (the call expired): whatever this
    /// provider shows for it goes away.
    fn withdraw(&mut self, session: SessionId, ticket: Ticket);

    /// Runs `request` if it is this provider's, answering [`Answer::Ran`] through `sink`; gives it
    /// back otherwise.
    fn run(&self, session: SessionId, request: RunRequest, sink: &AnswerSink)
        -> Option<RunRequest>;
}
