//! How a set of capabilities with a runtime of its own plugs into the host's capability driver:
//! the built-ins (`lineup_builtins::Builtins`) are one such provider. The driver asks a
//! provider first, and runs an embedder's own handler only for what the provider gives back.
//! The trait is here, beside the kernel's effects it answers, so that the host and every
//! provider depend on it and not on each other.

use std::sync::Arc;

use crate::capability::effect::{Answer, HookRequest, RunRequest, Ticket};
use crate::ids::CapabilityName;
use crate::json::JsonObject;
use crate::SessionId;

/// How an answer reaches the kernel from another thread (a handler's or a dialog's): tickets
/// are per session, so the answer names the session whose effect asked.
pub type AnswerSink = Arc<dyn Fn(SessionId, Ticket, Answer) + Send + Sync>;

/// What a consent prompt says about a provider's capability, in its owner's words (R-CAP-4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptWording {
    /// What the agent asks, in plain words ("asks to open a link in your browser").
    pub headline: String,
    /// For a link argument, the host it leads to, in punycode.
    pub link_host: Option<String>,
}

/// Capabilities that run themselves: their handlers, and for some their own dialog in place of
/// the permission hook (R-CAP-3, R-CAP-4). Every answer goes through the sink, exactly once per
/// ticket it took.
pub trait CapabilityProvider {
    /// The consent prompt's wording for a call of `capability` with `arguments`, if the
    /// capability is this provider's: `Err` says why no prompt can be shown for it (the
    /// call then ends without one, and is not reported as the user's decision).
    fn prompt_wording(
        &self,
        capability: &CapabilityName,
        arguments: &JsonObject,
    ) -> Option<Result<PromptWording, String>>;

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
