//! Conversations as the unit an app shows and hides (#49): a conversation's Surfaces and
//! standard components go together. A hidden conversation's components take no input (R-STD-8
//! (a)); shown again, their guard delay starts again (R-STD-8 (b)); what a hidden conversation
//! opens starts hidden.

use lineup_host_core::{ConversationId, SessionId, SurfaceKey};

use super::engine::Engine;
use super::Host;

/// What a conversation holds, as [`Host::conversation_items`] lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConversationItem {
    /// A Surface (an app's webview).
    Surface(SurfaceKey),
    /// A standard component the built-in renderer shows.
    Component(SurfaceKey),
}

impl Host {
    /// Shows or hides every Surface and standard component of `conversation` together, as an
    /// app switching conversations does: hidden Surfaces keep their page and state (as
    /// [`Host::set_surface_visible`]); hidden components take no input, and shown again their
    /// guard delay starts again (R-STD-8). What the conversation opens while hidden starts
    /// hidden, also before its first envelope. The agent is told nothing. Returns whether the
    /// conversation has a session now.
    pub fn set_conversation_visible(
        &mut self,
        conversation: &ConversationId,
        visible: bool,
    ) -> bool {
        self.engine
            .views
            .set_conversation_hidden(conversation, !visible);
        if let Some(driver) = self.engine.driver.as_mut() {
            driver.set_conversation_visible(conversation, visible);
        }
        let Some(session) = self.engine.sessions.id_of(conversation) else {
            return false;
        };
        let keys: Vec<SurfaceKey> = self
            .engine
            .views
            .keys()
            .into_iter()
            .filter(|k| k.session == session)
            .collect();
        for key in keys {
            self.set_surface_visible(&key, visible);
        }
        if let Some(components) = self.engine.components.as_mut() {
            components.set_session_visible(session, visible);
        }
        true
    }

    /// Names `conversation` `label` in the consent prompts it causes, in place of the agent's
    /// id for it (`None`: the id again). The label is the embedder's own words; one that
    /// imitates the prompt's lines is not shown (R-SEC-5).
    pub fn set_conversation_label(&mut self, conversation: &ConversationId, label: Option<&str>) {
        if let Some(driver) = self.engine.driver.as_mut() {
            driver.set_label(conversation, label);
        }
    }

    /// How many consent requests of `conversation` wait for it to be shown
    /// ([`HiddenConversationPrompts::WaitUntilShown`](crate::HiddenConversationPrompts)); the
    /// app can show a badge beside it.
    pub fn waiting_prompts(&self, conversation: &ConversationId) -> usize {
        self.engine
            .driver
            .as_ref()
            .map_or(0, |driver| driver.waiting_prompts(conversation))
    }

    /// Whether `conversation` is hidden ([`Host::set_conversation_visible`]).
    pub fn is_conversation_hidden(&self, conversation: &ConversationId) -> bool {
        self.engine.views.conversation_hidden(conversation)
    }

    /// A control for tests: reads back the box of component `key` that the built-in renderer
    /// shows (`done` hears it on the loop thread); returns whether there is one.
    #[cfg(feature = "test-controls")]
    pub fn component_snapshot_for_test(
        &self,
        key: &SurfaceKey,
        done: impl FnOnce(Option<lineup_webview_shell::ComponentSnapshot>) + 'static,
    ) -> bool {
        match self.engine.components.as_ref().and_then(|c| c.window(key)) {
            Some(window) => {
                window.snapshot(done);
                true
            }
            None => false,
        }
    }

    /// A control for checks: a real left click (the X server's XTEST) at the middle of the
    /// element `id` (`confirm`, say) of component `key`'s box, where the built-in renderer shows
    /// it now; `done` hears on the loop thread whether it was sent. Returns whether `key` has a
    /// box.
    #[cfg(feature = "test-controls")]
    pub fn click_component_for_test(
        &self,
        key: &SurfaceKey,
        id: &str,
        done: impl FnOnce(Result<(), String>) + 'static,
    ) -> bool {
        match self.engine.components.as_ref().and_then(|c| c.window(key)) {
            Some(window) => {
                window.click_for_test(id, move |sent| done(sent.map_err(|e| e.to_string())));
                true
            }
            None => false,
        }
    }

    /// The Surfaces and the built-in renderer's standard components of `conversation`, by key.
    pub fn conversation_items(&self, conversation: &ConversationId) -> Vec<ConversationItem> {
        let Some(session) = self.engine.sessions.id_of(conversation) else {
            return Vec::new();
        };
        let mut items: Vec<ConversationItem> = self
            .engine
            .views
            .keys()
            .into_iter()
            .filter(|k| k.session == session)
            .map(ConversationItem::Surface)
            .collect();
        if let Some(components) = self.engine.components.as_ref() {
            items.extend(
                components
                    .keys()
                    .into_iter()
                    .filter(|k| k.session == session)
                    .map(ConversationItem::Component),
            );
        }
        items
    }
}

impl Engine {
    /// Whether the conversation of `session` is hidden.
    pub(super) fn is_hidden(&self, session: SessionId) -> bool {
        self.sessions
            .get(session)
            .and_then(|s| s.conversation_id())
            .is_some_and(|c| self.views.conversation_hidden(c))
    }
}
