//! The request object a consent prompt answers ([`PendingConsent`]), its creator's handle on it
//! ([`ConsentHandle`]) and the trait a prompt implements ([`ConsentPrompt`]) (R-CAP-4).

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use lineup_host_core::ConsentAnswer;

use super::PromptContent;

/// The shared flag between a [`PendingConsent`] and its [`ConsentHandle`].
#[derive(Debug, Default)]
struct Shared {
    withdrawn: AtomicBool,
    settled: AtomicBool,
}

/// One consent request waiting for the user: answered exactly once, by [`allow`](Self::allow),
/// [`allow_always`](Self::allow_always), [`deny`](Self::deny) or [`cancel`](Self::cancel).
/// Dropping it unanswered answers [`ConsentAnswer::Dismissed`] and logs it, so nothing waits
/// forever.
///
/// The answer goes to the callback given to [`PendingConsent::new`], on the thread that answers
/// (or drops) it; it is `Send`, so the creator may live on another thread than the prompt. Once
/// the creator has [withdrawn](ConsentHandle::withdraw) the request (its call expired), no answer
/// reaches it any more.
///
/// ```
/// use std::sync::mpsc;
/// use lineup_host_core::Risk;
/// use lineup_webview_shell::{ConsentAnswer, PromptContent, PendingConsent};
/// let request = PromptContent::new(
///     "agent-7", "clipboard.write".try_into()?, "1".try_into()?,
///     Risk::UserConfirmation, "copy the summary", &serde_json::Map::new(),
/// );
/// let (tx, rx) = mpsc::channel();
/// let (pending, _handle) = PendingConsent::new(request, move |answer| { let _ = tx.send(answer); });
/// drop(pending); // nobody answered
/// assert_eq!(rx.recv()?, ConsentAnswer::Dismissed);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct PendingConsent {
    request: Arc<PromptContent>,
    shared: Arc<Shared>,
    respond: Option<Box<dyn FnOnce(ConsentAnswer) + Send>>,
}

/// The creator's side of a [`PendingConsent`]: withdraws it when the call expires, so that a
/// prompt showing it closes and its answer is discarded.
#[derive(Clone, Debug)]
pub struct ConsentHandle {
    shared: Arc<Shared>,
}

impl ConsentHandle {
    /// Withdraws the request: it is taken off the prompt queue (its window closed if showing)
    /// and no answer reaches the callback any more. Nothing happens once it was answered.
    pub fn withdraw(&self) {
        self.shared.withdrawn.store(true, Ordering::SeqCst);
    }

    /// Whether the creator withdrew the request.
    pub fn is_withdrawn(&self) -> bool {
        self.shared.withdrawn.load(Ordering::SeqCst)
    }

    /// Whether the request is still waiting: neither answered nor withdrawn.
    pub fn is_waiting(&self) -> bool {
        !self.shared.settled.load(Ordering::SeqCst) && !self.shared.withdrawn.load(Ordering::SeqCst)
    }
}

impl PendingConsent {
    /// A request waiting for an answer; `respond` receives it, exactly once, unless the request is
    /// withdrawn first through the returned [`ConsentHandle`].
    pub fn new(
        request: PromptContent,
        respond: impl FnOnce(ConsentAnswer) + Send + 'static,
    ) -> (Self, ConsentHandle) {
        let shared = Arc::new(Shared::default());
        let handle = ConsentHandle {
            shared: Arc::clone(&shared),
        };
        let pending = Self {
            request: Arc::new(request),
            shared,
            respond: Some(Box::new(respond)),
        };
        (pending, handle)
    }

    /// What to show.
    pub fn request(&self) -> &PromptContent {
        &self.request
    }

    /// A handle on this request's withdrawal, for a prompt to watch.
    pub(crate) fn watch(&self) -> ConsentHandle {
        ConsentHandle {
            shared: Arc::clone(&self.shared),
        }
    }

    /// Whether the creator withdrew the request; its answer would be discarded.
    pub fn is_withdrawn(&self) -> bool {
        self.shared.withdrawn.load(Ordering::SeqCst)
    }

    /// Allows the call this once.
    pub fn allow(self) {
        self.answer(ConsentAnswer::Allow);
    }

    /// Allows the call and asks to remember it; refused, handing the request back, when the
    /// request does not permit remembering (R-CAP-3).
    pub fn allow_always(self) -> Result<(), RememberNotPermitted> {
        if !self.request.remember_allowed() {
            return Err(RememberNotPermitted(self));
        }
        self.answer(ConsentAnswer::AllowAlways);
        Ok(())
    }

    /// Refuses the call.
    pub fn deny(self) {
        self.answer(ConsentAnswer::Deny);
    }

    /// Dismisses the request without a decision (Escape, window closed).
    pub fn cancel(self) {
        self.answer(ConsentAnswer::Dismissed);
    }

    fn answer(mut self, answer: ConsentAnswer) {
        self.settle(answer);
    }

    fn settle(&mut self, answer: ConsentAnswer) {
        let Some(respond) = self.respond.take() else {
            return;
        };
        self.shared.settled.store(true, Ordering::SeqCst);
        if self.is_withdrawn() {
            tracing::debug!(?answer, capability = %self.request.capability, "answer to a withdrawn consent request discarded");
            return;
        }
        respond(answer);
    }
}

impl Drop for PendingConsent {
    fn drop(&mut self) {
        if self.respond.is_some() && !self.is_withdrawn() {
            tracing::info!(
                capability = %self.request.capability,
                "consent request dropped unanswered: cancelled"
            );
        }
        self.settle(ConsentAnswer::Dismissed);
    }
}

impl fmt::Debug for PendingConsent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PendingConsent")
            .field("request", &self.request)
            .field("withdrawn", &self.is_withdrawn())
            .field("answered", &self.respond.is_none())
            .finish()
    }
}

/// [`PendingConsent::allow_always`] on a request that does not permit remembering; holds the
/// request, still unanswered, so it can be answered otherwise.
#[derive(Debug)]
pub struct RememberNotPermitted(PendingConsent);

impl RememberNotPermitted {
    /// The request, still waiting for an answer.
    pub fn into_pending(self) -> PendingConsent {
        self.0
    }
}

impl fmt::Display for RememberNotPermitted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "remembering is not permitted for '{}' ({} risk or not offered); answer allow or deny (R-CAP-3)",
            self.0.request.capability,
            self.0.request.risk.as_str()
        )
    }
}

impl std::error::Error for RememberNotPermitted {}

/// Shows consent requests to the user and answers them: the built-in
/// [`PromptQueue`](crate::PromptQueue), or the embedder's own UI.
///
/// An implementation answers each [`PendingConsent`] it receives once, or drops it (which answers
/// `Cancelled`). Closures `FnMut(PendingConsent)` are prompts too.
pub trait ConsentPrompt {
    /// Shows `request` (now or after those before it) and answers it when the user decides.
    fn request(&mut self, request: PendingConsent);
}

impl<F: FnMut(PendingConsent)> ConsentPrompt for F {
    fn request(&mut self, request: PendingConsent) {
        self(request);
    }
}
