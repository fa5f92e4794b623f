//! Consent prompts of hidden conversations (#49): shown at once naming the conversation that
//! asks, or held until the embedder shows that conversation again, as the embedder chooses.

use std::collections::HashSet;

use lineup_host_core::ConversationId;
use lineup_webview_shell::PendingConsent;

/// What the host does with a consent request whose conversation the embedder has hidden
/// ([`Host::set_conversation_visible`](crate::Host::set_conversation_visible)).
///
/// Either way the prompt names the conversation that asks (the embedder's label for it, else
/// the agent's id in its words), and the call's `expires_at` runs meanwhile: a call that expires
/// while its prompt is held ends `expired` and its prompt is never shown.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum HiddenConversationPrompts {
    /// The prompt shows at once, over whatever conversation is on screen, naming the one that
    /// asks. The default: a background task's question is not left waiting unseen.
    #[default]
    ShowNamingIt,
    /// The prompt waits until its conversation is shown again, then shows (in the order asked).
    WaitUntilShown,
}

/// The requests held for hidden conversations, and which conversations are hidden.
///
/// Invariant: with [`HiddenConversationPrompts::ShowNamingIt`] nothing is held; a held request
/// belongs to a conversation in `hidden`, and leaves when that conversation is shown (or is
/// dropped, unanswered, once its call withdrew it).
pub(crate) struct HeldPrompts {
    policy: HiddenConversationPrompts,
    hidden: HashSet<ConversationId>,
    held: Vec<(ConversationId, PendingConsent)>,
}

impl HeldPrompts {
    pub(crate) fn new(policy: HiddenConversationPrompts) -> Self {
        Self {
            policy,
            hidden: HashSet::new(),
            held: Vec::new(),
        }
    }

    /// Holds `pending` when `conversation` is hidden and the policy waits; otherwise hands it
    /// back to be shown now.
    pub(crate) fn hold(
        &mut self,
        conversation: &ConversationId,
        pending: PendingConsent,
    ) -> Option<PendingConsent> {
        self.held.retain(|(_, p)| !p.is_withdrawn());
        if self.policy == HiddenConversationPrompts::WaitUntilShown
            && self.hidden.contains(conversation)
        {
            self.held.push((conversation.clone(), pending));
            return None;
        }
        Some(pending)
    }

    /// Records that `conversation` is shown or hidden; shown, its held requests come back (in
    /// the order they were asked, withdrawn ones left out) to be shown now.
    pub(crate) fn set_visible(
        &mut self,
        conversation: &ConversationId,
        visible: bool,
    ) -> Vec<PendingConsent> {
        if !visible {
            self.hidden.insert(conversation.clone());
            return Vec::new();
        }
        self.hidden.remove(conversation);
        let (released, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut self.held)
            .into_iter()
            .partition(|(c, _)| c == conversation);
        self.held = kept;
        released
            .into_iter()
            .map(|(_, p)| p)
            .filter(|p| !p.is_withdrawn())
            .collect()
    }

    /// How many requests of `conversation` are held (withdrawn ones not counted).
    pub(crate) fn waiting(&self, conversation: &ConversationId) -> usize {
        self.held
            .iter()
            .filter(|(c, p)| c == conversation && !p.is_withdrawn())
            .count()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use lineup_host_core::{ConsentAnswer, Risk};
    use lineup_webview_shell::{ConsentHandle, PromptContent};

    use super::{HeldPrompts, HiddenConversationPrompts};

    type Answers = Arc<Mutex<Vec<(String, ConsentAnswer)>>>;

    fn conversation(id: &str) -> lineup_host_core::ConversationId {
        id.try_into().unwrap_or_else(|_| panic!("{id}"))
    }

    /// A request of `reason`, whose answer is recorded in `answers`.
    fn pending(
        reason: &str,
        answers: &Answers,
    ) -> (lineup_webview_shell::PendingConsent, ConsentHandle) {
        let content = PromptContent::new(
            "agent",
            "notes.save".try_into().unwrap_or_else(|_| panic!("name")),
            "1".try_into().unwrap_or_else(|_| panic!("version")),
            Risk::UserConfirmation,
            reason,
            &serde_json::Map::new(),
        );
        let answers = Arc::clone(answers);
        let reason = reason.to_owned();
        lineup_webview_shell::PendingConsent::new(content, move |answer| {
            answers
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((reason, answer));
        })
    }

    fn reasons(shown: &[lineup_webview_shell::PendingConsent]) -> Vec<&str> {
        shown.iter().map(|p| p.request().reason()).collect()
    }

    #[test]
    fn by_default_a_hidden_conversations_prompt_shows_at_once() {
        let answers = Answers::default();
        let mut held = HeldPrompts::new(HiddenConversationPrompts::default());
        let c1 = conversation("c1");
        assert!(held.set_visible(&c1, false).is_empty());
        let (request, _handle) = pending("a", &answers);
        assert!(held.hold(&c1, request).is_some());
        assert_eq!(held.waiting(&c1), 0);
    }

    #[test]
    fn waiting_prompts_show_in_order_when_their_conversation_is_shown() {
        let answers = Answers::default();
        let mut held = HeldPrompts::new(HiddenConversationPrompts::WaitUntilShown);
        let (c1, c2) = (conversation("c1"), conversation("c2"));
        held.set_visible(&c1, false);
        // A shown conversation's request (c2 was never hidden) shows at once: the control.
        let (shown, _h0) = pending("shown", &answers);
        let now = held.hold(&c2, shown);
        assert!(now.is_some());
        let (first, _h1) = pending("first", &answers);
        let (second, _h2) = pending("second", &answers);
        assert!(held.hold(&c1, first).is_none());
        assert!(held.hold(&c1, second).is_none());
        assert_eq!((held.waiting(&c1), held.waiting(&c2)), (2, 0));
        // Showing another conversation releases nothing of c1's.
        assert!(held.set_visible(&c2, true).is_empty());
        let released = held.set_visible(&c1, true);
        assert_eq!(reasons(&released), ["first", "second"]);
        assert_eq!(held.waiting(&c1), 0);
        // Shown now: the next request of c1 shows at once.
        let (later, _h3) = pending("later", &answers);
        let later = held.hold(&c1, later);
        assert!(later.is_some());
        // Holding and releasing answered nothing.
        assert!(answers.lock().unwrap_or_else(|e| e.into_inner()).is_empty());
        drop((now, released, later));
    }

    #[test]
    fn a_request_withdrawn_while_held_is_never_shown_nor_answered() {
        let answers = Answers::default();
        let mut held = HeldPrompts::new(HiddenConversationPrompts::WaitUntilShown);
        let c1 = conversation("c1");
        held.set_visible(&c1, false);
        let (expired, handle) = pending("expired", &answers);
        let (kept, _h) = pending("kept", &answers);
        assert!(held.hold(&c1, expired).is_none());
        assert!(held.hold(&c1, kept).is_none());
        handle.withdraw();
        assert_eq!(held.waiting(&c1), 1);
        let released = held.set_visible(&c1, true);
        assert_eq!(reasons(&released), ["kept"]);
        assert!(answers.lock().unwrap_or_else(|e| e.into_inner()).is_empty());
    }
}
