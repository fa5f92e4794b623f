//! The built-in renderer of standard components (R-STD-8, §4 of standard-components.md): one
//! [`ComponentWindow`] per shown instance, keyed by its [`SurfaceKey`]. It carries out the
//! kernel's [`ComponentEffect`]s on its windows, and turns what a window reported into the page
//! input that goes to the session through the session table ([`ComponentInput`]).

use std::collections::HashMap;

use lineup_host_core::{
    ComponentEffect, ComponentKind, ComponentSet, PageInput, SurfaceKey, UserAnswer, Via,
};
use lineup_webview_shell::tao::event_loop::EventLoopWindowTarget;
use lineup_webview_shell::{ComponentAction, ComponentContent, ComponentOptions, ComponentWindow};
use serde_json::Value;

/// The components the built-in renderer draws: the whole v1 catalog.
pub(super) fn rendered_set() -> ComponentSet {
    ComponentSet::of(ComponentKind::ALL)
}

/// Who hears what the window of a key reports.
pub(super) type ReportSink = Box<dyn Fn(ComponentAction)>;

/// What a component window's report means for its session.
pub(super) enum ComponentInput {
    /// The user answered, through the host's own input gate (`via: "host"`).
    Answered(UserAnswer),
    /// The user's unsent draft changed (R-STD-15).
    Draft(Value),
    /// The user closed the window.
    Closed,
    /// The view failed.
    Failed,
}

impl ComponentInput {
    /// As the session table's page input.
    pub(super) fn page_input(&self) -> PageInput<'_> {
        match self {
            ComponentInput::Answered(answer) => PageInput::ComponentAnswered(answer),
            ComponentInput::Closed => PageInput::ComponentClosed,
            ComponentInput::Draft(draft) => PageInput::ComponentDraft(draft),
            ComponentInput::Failed => PageInput::ComponentFailed,
        }
    }
}

/// The built-in renderer's windows.
pub(super) struct ComponentViews {
    options: ComponentOptions,
    windows: HashMap<SurfaceKey, ComponentWindow>,
}

impl ComponentViews {
    /// No window yet; each one behaves as `options` says.
    pub(super) fn new(options: ComponentOptions) -> Self {
        Self {
            options,
            windows: HashMap::new(),
        }
    }

    /// Carries out `effect` on the windows of `views` (`None`: no renderer), making a new
    /// window's report sink with `sink`; a new window gets the high-contrast look when
    /// `high_contrast` (read at each open, like a Surface's). Returns the key of a component
    /// that could not be shown: its session closes it with `renderer_failed` (R-STD-13).
    pub(super) fn carry_out<T: 'static>(
        views: Option<&mut Self>,
        effect: ComponentEffect,
        target: &EventLoopWindowTarget<T>,
        high_contrast: bool,
        sink: impl FnOnce(SurfaceKey) -> ReportSink,
    ) -> Option<SurfaceKey> {
        let Some(views) = views else {
            if let ComponentEffect::Show(shown) = effect {
                tracing::warn!("component {}: no renderer; closed", shown.key);
                return Some(shown.key);
            }
            return None;
        };
        match effect {
            ComponentEffect::Show(shown) => {
                if !rendered_set().contains_kind(shown.kind) {
                    tracing::warn!(
                        "component {}: {} is not rendered; closed",
                        shown.key,
                        shown.kind
                    );
                    return Some(shown.key);
                }
                let report = sink(shown.key.clone());
                let content = ComponentContent::from(&shown);
                let options = views.options.clone().with_high_contrast(high_contrast);
                match ComponentWindow::new(target, &content, &options, report) {
                    Ok(window) => {
                        views.windows.insert(shown.key, window);
                    }
                    Err(e) => {
                        tracing::warn!("component {}: no window: {e}; closed", shown.key);
                        return Some(shown.key);
                    }
                }
            }
            ComponentEffect::Update {
                key,
                state,
                markdown,
                round: _,
                reopened,
            } => {
                if let Some(window) = views.windows.get(&key) {
                    window.update(&state, markdown.as_ref(), reopened);
                }
            }
            ComponentEffect::Lock { key, round: _ } => {
                if let Some(window) = views.windows.get(&key) {
                    window.lock();
                }
            }
            ComponentEffect::Hide { key, reason } => {
                if views.windows.remove(&key).is_some() {
                    tracing::debug!("component {key}: hidden ({reason:?})");
                }
            }
            // The engine carries out the records' effects itself (R-STD-15).
            ComponentEffect::Persist { .. }
            | ComponentEffect::Forget { .. }
            | ComponentEffect::Restore { .. } => {}
        }
        None
    }

    /// What `action`, reported by the window of `key`, means for its session; `None` when
    /// that window is gone (the key is the window's, never the page's word).
    pub(super) fn input_of(
        &self,
        key: &SurfaceKey,
        action: ComponentAction,
    ) -> Option<ComponentInput> {
        if !self.windows.contains_key(key) {
            return None;
        }
        Some(match action {
            ComponentAction::Submit { answer, input } => {
                ComponentInput::Answered(UserAnswer::Submit {
                    answer,
                    via: Via::Host,
                    input,
                })
            }
            ComponentAction::Cancel { input } => ComponentInput::Answered(UserAnswer::Cancel {
                via: Via::Host,
                input,
            }),
            ComponentAction::Close => ComponentInput::Closed,
            ComponentAction::Draft(draft) => ComponentInput::Draft(draft),
            ComponentAction::Failed => ComponentInput::Failed,
        })
    }
}
