//! The embedder's own renderer of standard components (R-STD-16): a Rust app draws the
//! components it supports in its own native UI, from the kernel's validated, cleaned component,
//! and answers through a [`ComponentReply`]. The host checks every answer again, applies one
//! answer per round (R-STD-7) and marks it `via: "embedder"`: the embedder vouches for the
//! gesture (R-STD-8 is the built-in renderer's). What the renderer declines, the built-in
//! renderer draws when it is on; otherwise the component closes `renderer_failed` (R-STD-13).

use std::fmt;

use lineup_host_core::{
    validate_answer, AnswerRefusal, ComponentClosed, ComponentKind, InputKind, JsonObject,
    SafeMarkdown, ShownComponent, SurfaceKey, UserAnswer, Via,
};
use serde_json::Value;

use super::handle::{EmbedderInput, HostEvent, Inner};
use super::proxy::HostProxy;

/// Draws standard components in the embedder's own UI, on the event-loop thread
/// ([`HostBuilder::component_renderer`](crate::HostBuilder::component_renderer)).
///
/// Strings in a [`ShownComponent`] are cleaned agent text: show them as text (a label's text,
/// never markup), and draw Markdown from its closed [`SafeMarkdown`] tree (R-STD-10).
pub trait ComponentRenderer {
    /// Whether it draws `kind` (version 1); `client.inventory` lists what it or the built-in
    /// renderer draws (R-STD-14).
    fn supports(&self, kind: ComponentKind) -> bool;

    /// Shows `component`; the user's answers, close and draft go through `reply`.
    /// `Err(Declined)` hands it to the built-in renderer when that is on.
    fn show(&mut self, component: &ShownComponent, reply: ComponentReply) -> Result<(), Declined>;

    /// The agent patched the state of `key`: show `state` (and its Markdown) in place of the
    /// old; `reopened` opens a new round with the user's draft kept (R-STD-7).
    fn update(
        &mut self,
        key: &SurfaceKey,
        state: &JsonObject,
        markdown: Option<&SafeMarkdown>,
        reopened: bool,
    );

    /// The round of `key` was answered: lock its controls (R-STD-7).
    fn lock(&mut self, key: &SurfaceKey) {
        let _ = key;
    }

    /// Take `key` off the screen, for `reason`.
    fn hide(&mut self, key: &SurfaceKey, reason: &ComponentClosed);
}

/// The renderer does not draw this component now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Declined;

impl fmt::Display for Declined {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the embedder's renderer declined the component")
    }
}

impl std::error::Error for Declined {}

/// How the embedder's renderer answers for one shown component; `Send + Clone`, so a UI on
/// another thread may hold it. Every answer is checked against the component's props here and
/// again by the kernel, which also drops an answer to a round already answered, or to a
/// component replaced or closed since (its [`SurfaceKey`] is the shown generation's).
#[derive(Clone)]
pub struct ComponentReply {
    key: SurfaceKey,
    kind: ComponentKind,
    props: JsonObject,
    proxy: HostProxy,
}

impl fmt::Debug for ComponentReply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ComponentReply")
            .field("key", &self.key)
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

impl ComponentReply {
    pub(super) fn new(shown: &ShownComponent, proxy: HostProxy) -> Self {
        Self {
            key: shown.key.clone(),
            kind: shown.kind,
            props: shown.props.clone(),
            proxy,
        }
    }

    /// The component this reply answers for.
    pub fn key(&self) -> &SurfaceKey {
        &self.key
    }

    /// The user submitted `answer` with an input event of `input`'s kind. `Err` when the answer
    /// does not fit the component (an option it does not offer, a length or range it
    /// exceeds…), naming the field; nothing is sent then (R-STD-16).
    ///
    /// # Errors
    /// [`AnswerRefusal::Invalid`] for an answer that does not fit.
    pub fn submit(&self, answer: Value, input: InputKind) -> Result<(), AnswerRefusal> {
        validate_answer(self.kind, &self.props, &answer)?;
        self.send(EmbedderInput::Answered(UserAnswer::Submit {
            answer,
            via: Via::Embedder,
            input,
        }));
        Ok(())
    }

    /// The user cancelled (Escape, a cancel button).
    pub fn cancel(&self, input: InputKind) {
        self.send(EmbedderInput::Answered(UserAnswer::Cancel {
            via: Via::Embedder,
            input,
        }));
    }

    /// The user closed the component: the agent gets one `close {}` (R-UI-5).
    pub fn close(&self) {
        self.send(EmbedderInput::Closed);
    }

    /// The user's unsent draft, in the shape of the answer: kept for a restart (R-STD-15),
    /// except what a `secret` input holds.
    pub fn save_draft(&self, draft: Value) {
        self.send(EmbedderInput::Draft(draft));
    }

    fn send(&self, input: EmbedderInput) {
        let event = HostEvent(Inner::EmbedderComponent {
            key: self.key.clone(),
            input,
        });
        if self.proxy.send_event(event).is_err() {
            tracing::debug!(
                "component {}: answer after the host ended; dropped",
                self.key
            );
        }
    }
}
