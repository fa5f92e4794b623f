//! The renderers of standard components (R-STD-8, R-STD-16, §4 of standard-components.md): the
//! embedder's [`ComponentRenderer`] for what it supports and accepts, else the built-in one, a
//! [`ComponentWindow`] (a box of its target's board) per shown instance. It carries out the kernel's [`ComponentEffect`]s on
//! whichever drew the instance, and turns what a window or the embedder reported into the page
//! input that goes to the session through the session table ([`ComponentInput`]).

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use lineup_host_core::{
    ComponentEffect, ComponentKind, ComponentLink, ComponentSet, ConsentAnswer, LanguageTag,
    PageInput, SurfaceKey, UserAnswer, Via,
};
use lineup_webview_shell::tao::window::Window;
use lineup_webview_shell::WindowMaker;
use lineup_webview_shell::{ComponentAction, ComponentContent, ComponentOptions, ComponentWindow};
use serde_json::Value;

use super::component_layout::{ComponentBoards, Target};
use super::component_links::Links;
use super::handle::{EmbedderInput, HostEvent, Inner};
use super::proxy::HostProxy;
use super::renderer::{ComponentRenderer, ComponentReply};
use super::views::Views;
use crate::capabilities::CapabilityDriver;
use crate::delegate::HostDelegate;

/// The components drawn when the built-in renderer is `builtin` and the embedder's is
/// `renderer`: the whole v1 catalog with the built-in one, else what the embedder's supports.
pub(super) fn rendered_set(
    builtin: bool,
    renderer: Option<&dyn ComponentRenderer>,
) -> ComponentSet {
    ComponentSet::of(
        ComponentKind::ALL
            .into_iter()
            .filter(|k| builtin || renderer.is_some_and(|r| r.supports(*k))),
    )
}

/// Who hears what the window of a key reports.
type ReportSink = Box<dyn Fn(ComponentAction)>;

/// What the window of component `key` reports goes to the loop through `proxy`, tagged with its
/// key (the window's identity, never the page's word).
fn report_sink(proxy: HostProxy, key: SurfaceKey) -> ReportSink {
    Box::new(move |action| {
        let report = Inner::Component {
            key: key.clone(),
            action,
        };
        if proxy.send_event(HostEvent(report)).is_err() {
            tracing::debug!("component report after the loop ended; dropped");
        }
    })
}

/// What a renderer's report means for its session.
pub(super) enum ComponentInput {
    /// The user answered: through the host's own input gate (`via: "host"`), or in the
    /// embedder's UI (`via: "embedder"`).
    Answered(UserAnswer),
    /// The user's unsent draft changed (R-STD-15).
    Draft(Value),
    /// The user closed it.
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

/// How long after the start the warm component board starts, at an idle turn, when no Surface
/// said `ready` before.
const WARM_BOARD_AFTER: Duration = Duration::from_secs(2);
/// How soon the loop comes back while the warm board waits to start.
const WARM_BOARD_TURN: Duration = Duration::from_millis(100);

/// The renderers and what each one shows.
pub(super) struct ComponentViews {
    /// The built-in renderer's options; `None` when it is off.
    options: Option<ComponentOptions>,
    windows: HashMap<SurfaceKey, ComponentWindow>,
    /// The boards the built-in renderer's boxes are in (R-STD-13).
    boards: ComponentBoards,
    renderer: Option<Box<dyn ComponentRenderer>>,
    /// The instances the embedder's renderer shows.
    drawn: HashSet<SurfaceKey>,
    /// When the renderers were made (the warm board waits a while after the start).
    since: Instant,
    /// The link confirm of the built-in boxes' links (R-STD-11).
    links: Links,
}

/// What showing a component needs of the engine.
pub(super) struct ShowContext<'a> {
    /// The event loop.
    pub(super) target: &'a dyn WindowMaker,
    /// For an embedder's reply.
    pub(super) proxy: &'a HostProxy,
    /// Whether the component's conversation is hidden: a new board starts hidden.
    pub(super) hidden: bool,
    /// The desktop's contrast, read at each open (like a Surface's).
    pub(super) high_contrast: bool,
    /// The host context's language (the words the host draws itself).
    pub(super) language: LanguageTag,
    /// The window of the child views, when Surfaces are child views: components go there.
    pub(super) parent: Option<&'a Window>,
    /// Where a component in `parent` goes.
    pub(super) delegate: &'a mut dyn HostDelegate,
}

impl ComponentViews {
    /// Nothing shown yet; the built-in renderer on with `options`, the embedder's `renderer`
    /// first for what it supports. `None` when neither renders anything.
    pub(super) fn new(
        options: Option<ComponentOptions>,
        renderer: Option<Box<dyn ComponentRenderer>>,
        links: Links,
    ) -> Option<Self> {
        if options.is_none() && renderer.is_none() {
            return None;
        }
        Some(Self {
            options,
            windows: HashMap::new(),
            boards: ComponentBoards::default(),
            renderer,
            drawn: HashSet::new(),
            since: Instant::now(),
            links,
        })
    }

    /// The user activated a link in the box of `key` (R-STD-11): it is followed only when the
    /// built-in renderer (`views`) shows that box and `link_of` finds the link in the kernel's
    /// own tree, through the link confirm.
    pub(super) fn follow_link(
        views: Option<&Self>,
        key: &SurfaceKey,
        link_of: impl FnOnce() -> Option<ComponentLink>,
        driver: Option<&mut CapabilityDriver>,
    ) {
        let shown = views.filter(|v| v.shows(key));
        let link = shown.and_then(|_| link_of());
        match (shown, link, driver) {
            (Some(views), Some(link), Some(driver)) => views.links.confirm(link, driver),
            _ => tracing::debug!("a link {key} does not show; not followed"),
        }
    }

    /// The user answered the link confirm of `link`: audited, and opened when allowed.
    pub(super) fn link_answered(
        &mut self,
        link: &ComponentLink,
        answer: ConsentAnswer,
        driver: Option<&mut CapabilityDriver>,
    ) {
        self.links.answered(link, answer, driver);
    }

    /// Carries out `effect` on the renderer of its instance (`views` `None`: no renderer),
    /// making a new window's report sink and an embedder's reply with `cx.proxy`;
    /// a new window gets the high-contrast look when `cx.high_contrast`. With `cx.parent` the
    /// built-in renderer's boxes go into that window, in the board of the area `cx.delegate`
    /// names; else in their conversation's window. Returns the key of a component that could
    /// not be shown: its session closes it with `renderer_failed` (R-STD-13).
    pub(super) fn carry_out(
        views: Option<&mut Self>,
        effect: ComponentEffect,
        cx: ShowContext<'_>,
    ) -> Option<SurfaceKey> {
        let ShowContext {
            target,
            proxy,
            hidden,
            high_contrast,
            language,
            parent,
            delegate,
        } = cx;
        let Some(views) = views else {
            if let ComponentEffect::Show(shown) = effect {
                tracing::warn!("component {}: no renderer; closed", shown.key);
                return Some(shown.key);
            }
            return None;
        };
        match effect {
            ComponentEffect::Show(shown) => {
                if let Some(renderer) = views.renderer.as_mut() {
                    if renderer.supports(shown.kind) {
                        let reply = ComponentReply::new(&shown, proxy.clone());
                        match renderer.show(&shown, reply) {
                            Ok(()) => {
                                views.drawn.insert(shown.key);
                                return None;
                            }
                            Err(e) => tracing::debug!("component {}: {e}", shown.key),
                        }
                    }
                }
                let Some(options) = views.options.as_ref() else {
                    tracing::warn!(
                        "component {}: declined and no built-in renderer; closed",
                        shown.key
                    );
                    return Some(shown.key);
                };
                let report = report_sink(proxy.clone(), shown.key.clone());
                let content = ComponentContent::from(&shown);
                let options = options
                    .clone()
                    .with_high_contrast(high_contrast)
                    .with_default_language(language);
                let place = match parent {
                    Some(parent) => Target::Child { parent, delegate },
                    None => Target::Window,
                };
                let window = views
                    .boards
                    .board_for(target, &shown.key, shown.kind, place, &options, hidden)
                    .and_then(|(id, board)| {
                        ComponentWindow::in_board(target, &board, &content, &options, report)
                            .map(|window| (id, window))
                    });
                match window {
                    Ok((id, window)) => {
                        views.boards.placed(shown.key.clone(), shown.kind, id);
                        views.windows.insert(shown.key, window);
                    }
                    Err(e) => {
                        tracing::warn!("component {}: no view: {e}; closed", shown.key);
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
                if let Some(renderer) = views.embedder_of(&key) {
                    renderer.update(&key, &state, markdown.as_ref(), reopened);
                } else if let Some(window) = views.windows.get(&key) {
                    window.update(&state, markdown.as_ref(), reopened);
                }
            }
            ComponentEffect::Lock { key, round: _ } => {
                if let Some(renderer) = views.embedder_of(&key) {
                    renderer.lock(&key);
                } else if let Some(window) = views.windows.get(&key) {
                    window.lock();
                }
            }
            ComponentEffect::Hide { key, reason } => {
                if let Some(renderer) = views.embedder_of(&key) {
                    renderer.hide(&key, &reason);
                    views.drawn.remove(&key);
                } else if views.windows.remove(&key).is_some() {
                    tracing::debug!("component {key}: hidden ({reason:?})");
                    views.boards.removed(&key);
                }
            }
        }
        None
    }

    /// Drops the boards left empty a while ago, and starts the built-in renderer's warm board
    /// (§4 of standard-components.md) at an idle turn once a Surface said `ready` or the
    /// renderers are [`WARM_BOARD_AFTER`] old, never while a Surface opens (`views` tells),
    /// in the views' parent window with their contrast and language; returns when to look
    /// again while either waits.
    pub(super) fn tend(
        &mut self,
        views: &Views,
        idle_turn: bool,
        target: &dyn WindowMaker,
    ) -> Option<Instant> {
        let swept = self.boards.sweep();
        let Some(options) = self.options.as_ref().filter(|_| !self.boards.has_warm()) else {
            return swept;
        };
        let due = views.any_ready() || self.since.elapsed() >= WARM_BOARD_AFTER;
        if !idle_turn || !due || views.opening() {
            return Some(Instant::now() + WARM_BOARD_TURN);
        }
        let options = options
            .clone()
            .with_high_contrast(views.high_contrast())
            .with_default_language(views.language());
        self.boards.warm_up(target, views.parent(), &options);
        let again = (!self.boards.has_warm()).then(|| Instant::now() + WARM_BOARD_TURN);
        again.into_iter().chain(swept).min()
    }

    /// Shows or hides the boards of `session`'s conversation.
    pub(super) fn set_session_visible(
        &mut self,
        session: lineup_host_core::SessionId,
        visible: bool,
    ) {
        self.boards.set_session_visible(session, visible);
    }

    /// The instances the built-in renderer has a box for, shown or not.
    pub(super) fn keys(&self) -> Vec<SurfaceKey> {
        self.windows.keys().cloned().collect()
    }

    /// Lays the boards in `parent` out again (the window was resized).
    pub(super) fn relayout(&mut self, parent: &Window, delegate: &mut dyn HostDelegate) {
        self.boards.relayout(parent, delegate);
    }

    /// The instances the built-in renderer shows now.
    pub(super) fn shown(&self) -> Vec<SurfaceKey> {
        self.windows
            .iter()
            .filter(|(_, w)| w.is_shown())
            .map(|(k, _)| k.clone())
            .collect()
    }

    /// The embedder's renderer, when it shows `key`.
    fn embedder_of(&mut self, key: &SurfaceKey) -> Option<&mut Box<dyn ComponentRenderer>> {
        if self.drawn.contains(key) {
            self.renderer.as_mut()
        } else {
            None
        }
    }

    /// A control for activation tests ([`Host::post_from_component_page_for_test`]): the page
    /// of the box of `key` itself posts `message`.
    ///
    /// [`Host::post_from_component_page_for_test`]: super::Host::post_from_component_page_for_test
    #[cfg(feature = "test-controls")]
    pub(super) fn post_from_page_for_test(&self, key: &SurfaceKey, message: &str) {
        if let Some(window) = self.windows.get(key) {
            window.post_from_page_for_test(message);
        }
    }

    /// A control for tests: reads back the box of `key` (`done` hears it); whether there is one.
    #[cfg(feature = "test-controls")]
    pub(super) fn snapshot_for_test(
        &self,
        key: &SurfaceKey,
        done: impl FnOnce(Option<lineup_webview_shell::ComponentSnapshot>) + 'static,
    ) -> bool {
        let Some(window) = self.windows.get(key) else {
            return false;
        };
        window.snapshot(done);
        true
    }

    /// A control for checks: a real left click at the middle of the element `id` of the box of
    /// `key` (`done` hears whether it was sent); whether there is such a box.
    #[cfg(feature = "test-controls")]
    pub(super) fn click_for_test(
        &self,
        key: &SurfaceKey,
        id: &str,
        done: impl FnOnce(Result<(), String>) + 'static,
    ) -> bool {
        let Some(window) = self.windows.get(key) else {
            return false;
        };
        window.click_for_test(id, move |sent| done(sent.map_err(|e| e.to_string())));
        true
    }

    /// Whether the built-in renderer shows `key` now.
    pub(super) fn shows(&self, key: &SurfaceKey) -> bool {
        self.windows.contains_key(key)
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
            // A link is not an answer (the engine asks the link confirm).
            ComponentAction::Link { .. } => return None,
        })
    }

    /// What the embedder reported for `key`, when its renderer shows it (R-STD-16).
    pub(super) fn embedder_input_of(
        &self,
        key: &SurfaceKey,
        input: EmbedderInput,
    ) -> Option<ComponentInput> {
        if !self.drawn.contains(key) {
            return None;
        }
        Some(match input {
            EmbedderInput::Answered(answer) => ComponentInput::Answered(answer),
            EmbedderInput::Closed => ComponentInput::Closed,
            EmbedderInput::Draft(draft) => ComponentInput::Draft(draft),
        })
    }
}
