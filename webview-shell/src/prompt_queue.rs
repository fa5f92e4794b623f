//! The built-in consent prompt: a FIFO of [`PendingConsent`]s shown one at a time in a trusted,
//! host-owned window apart from every Surface (R-CAP-4, R-SEC-6).

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::{Rc, Weak};

use crate::windows::WindowMaker;
use lineup_host_core::ConsentAnswer;
use serde_json::json;

use crate::consent::{ConsentPrompt, PendingConsent, PromptContent};
use crate::error::ShellError;
use crate::platform::{check_display, PlatformPrompt, PromptParent};
use crate::prompt::{PromptOptions, PromptOutcome, PromptSnapshot};
use crate::trusted::TrustedDocument;

/// The built-in consent prompt: requests shown one at a time, first in first out, each in a
/// trusted window of its own, separate from every Surface (R-CAP-4, R-SEC-6).
///
/// The window shows the requesting agent, what it asks in plain words, the capability and
/// version, the risk in plain words, for `app.open_url` the link's host (punycode), the agent's
/// reason and its arguments; every agent string as text, never markup. Its buttons are Deny
/// (focused first), Always allow (only when the request permits remembering) and Allow.
/// - Input, keys included, is taken only after the guard delay ([`PromptOptions`]), which
///   starts again whenever the window is mapped, focused, covered or uncovered by another
///   window, so a click or key meant for a Surface cannot land on it.
/// - Enter does nothing; Escape (after the guard delay) or closing the window answers
///   [`ConsentAnswer::Dismissed`]; so does a failure to show it.
/// - It asks to stay above other windows and raises itself when covered.
/// - A request withdrawn by its creator ([`ConsentHandle::withdraw`](crate::ConsentHandle::withdraw))
///   is taken off the queue, its window closed if showing, and gets no answer.
/// - Dropping the queue answers every request in it `Cancelled`.
///
/// Create it on the event-loop thread; answers reach each request's creator from there.
///
/// ## Platform-specific
/// Linux: a GTK window holding a WebKitGTK view with its own ephemeral context (sandboxed, all
/// network refused), which loads one host-written document from a scheme only that context
/// knows, under a nonce CSP; agent strings reach it as inert JSON and are set with
/// `textContent`. Elsewhere [`PromptQueue::new`] fails with [`ShellError::Unsupported`].
///
/// Clones share one queue: give one to `lineup_host::HostBuilder::consent_prompt`
/// and keep another to watch it, e.g. with [`PromptQueue::on_shown`].
#[derive(Clone)]
pub struct PromptQueue {
    inner: Rc<RefCell<Queue>>,
}

/// Who hears that a request's prompt is on screen.
type ShownObserver = Rc<RefCell<Box<dyn FnMut(&PromptContent)>>>;

struct Queue {
    options: PromptOptions,
    waiting: VecDeque<PendingConsent>,
    showing: Option<Showing>,
    on_shown: Option<ShownObserver>,
    /// The embedder's window the prompts are attached to ([`PromptQueue::attach_to`]).
    parent: Option<PromptParent>,
}

struct Showing {
    // Field order is drop order: the window goes before its request is answered.
    window: PlatformPrompt,
    pending: PendingConsent,
}

impl PromptQueue {
    /// An empty queue; `target` proves that this is the event-loop thread.
    pub fn new(target: &dyn WindowMaker, options: PromptOptions) -> Result<Self, ShellError> {
        let _ = target;
        check_display()?;
        PlatformPrompt::supported()?;
        Ok(Self {
            inner: Rc::new(RefCell::new(Queue {
                options,
                waiting: VecDeque::new(),
                showing: None,
                on_shown: None,
                parent: None,
            })),
        })
    }

    /// Attaches the prompts shown from now on to `window`, the embedder's: each is transient
    /// for it (the window manager keeps the prompt with that window) and centred on it, instead
    /// of centred on the screen. It still keeps itself above every Surface. The window is held
    /// weakly; once it is gone, prompts are centred on the screen again.
    pub fn attach_to(&self, window: &tao::window::Window) {
        self.inner.borrow_mut().parent = Some(PromptParent::of(window));
    }

    /// `observer` hears each request whose prompt window is on screen: shown and presented with
    /// its document rendered, so the person can read it (the guard delay starts then). It is
    /// called once per request, in the order shown, on the event-loop thread, from the main
    /// loop (never from inside another of this queue's methods); a request withdrawn, dropped
    /// or failing before its window was shown is never reported. An embedder can log or
    /// announce the prompt with it; the request's [`PromptContent::expires_at`] says how long
    /// the prompt waits. Replaces an earlier observer.
    pub fn on_shown(&self, observer: impl FnMut(&PromptContent) + 'static) {
        self.inner.borrow_mut().on_shown = Some(Rc::new(RefCell::new(Box::new(observer))));
    }

    /// How many requests wait behind the one showing (withdrawn ones not counted).
    pub fn waiting(&self) -> usize {
        let queue = self.inner.borrow();
        queue.waiting.iter().filter(|p| !p.is_withdrawn()).count()
    }

    /// Whether a prompt window is showing a request (or preparing to).
    pub fn is_showing(&self) -> bool {
        self.inner.borrow().showing.is_some()
    }

    /// Whether the prompt showing now takes input: shown, and its guard delay passed.
    pub fn accepts_input(&self) -> bool {
        self.inner
            .borrow()
            .showing
            .as_ref()
            .is_some_and(|s| s.window.accepts_input())
    }

    /// Reads back what the showing prompt displays, from the page itself (for tests and
    /// diagnostics); `done` gets `None` when nothing is showing or the page could not be read.
    pub fn snapshot(&self, done: impl FnOnce(Option<PromptSnapshot>) + 'static) {
        let queue = self.inner.borrow();
        match &queue.showing {
            Some(showing) => showing.window.snapshot(Box::new(done)),
            None => {
                drop(queue);
                done(None);
            }
        }
    }

    /// A positive control for escaping tests: puts `html` into the showing prompt's reason as
    /// markup, the way the prompt never does.
    #[cfg(feature = "test-controls")]
    pub fn plant_markup_for_test(&self, html: &str) {
        if let Some(showing) = &self.inner.borrow().showing {
            showing.window.plant_markup_for_test(html);
        }
    }
}

impl ConsentPrompt for PromptQueue {
    fn request(&mut self, request: PendingConsent) {
        {
            let mut queue = self.inner.borrow_mut();
            queue.waiting.retain(|p| !p.is_withdrawn());
            queue.waiting.push_back(request);
        }
        advance(&self.inner);
    }
}

impl std::fmt::Debug for PromptQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let queue = self.inner.borrow();
        f.debug_struct("PromptQueue")
            .field("options", &queue.options)
            .field("showing", &queue.showing.is_some())
            .field("waiting", &queue.waiting.len())
            .field("on_shown", &queue.on_shown.is_some())
            .finish()
    }
}

/// Shows the next waiting request if none is showing. Requests are answered (creator code) only
/// after the queue's borrow has ended.
fn advance(inner: &Rc<RefCell<Queue>>) {
    loop {
        let mut queue = inner.borrow_mut();
        if queue.showing.is_some() {
            return;
        }
        let Some(next) = queue.waiting.pop_front() else {
            return;
        };
        if next.is_withdrawn() {
            drop(queue);
            drop(next);
            continue;
        }
        let weak: Weak<RefCell<Queue>> = Rc::downgrade(inner);
        let weak_shown = Weak::clone(&weak);
        let request = next.request().clone();
        let document = prompt_document(next.request());
        let shown = document.and_then(|document| {
            PlatformPrompt::new(
                document,
                &queue.options,
                queue.parent.as_ref(),
                next.request(),
                next.watch(),
                Box::new(move |outcome| {
                    if let Some(inner) = weak.upgrade() {
                        finish(&inner, outcome);
                    }
                }),
                Box::new(move || {
                    if let Some(inner) = weak_shown.upgrade() {
                        announce(&inner, &request);
                    }
                }),
            )
        });
        match shown {
            Ok(window) => {
                queue.showing = Some(Showing {
                    window,
                    pending: next,
                });
                return;
            }
            Err(error) => {
                drop(queue);
                tracing::error!(%error, "the consent prompt could not be shown; cancelled");
                next.cancel();
            }
        }
    }
}

/// Tells the [`PromptQueue::on_shown`] observer that `request` is on screen; the queue is not
/// borrowed meanwhile, so the observer may use it.
fn announce(inner: &Rc<RefCell<Queue>>, request: &PromptContent) {
    let observer = inner.borrow().on_shown.clone();
    if let Some(observer) = observer {
        match observer.try_borrow_mut() {
            Ok(mut observer) => observer(request),
            Err(_) => {
                tracing::warn!("a consent prompt was shown while its observer ran; not reported")
            }
        }
    }
}

/// Closes the showing prompt, answers its request and shows the next.
fn finish(inner: &Rc<RefCell<Queue>>, outcome: PromptOutcome) {
    let showing = inner.borrow_mut().showing.take();
    if let Some(Showing { window, pending }) = showing {
        drop(window);
        match outcome {
            PromptOutcome::Answered(ConsentAnswer::Allow) => pending.allow(),
            PromptOutcome::Answered(ConsentAnswer::AllowAlways) => {
                if let Err(refused) = pending.allow_always() {
                    tracing::warn!(%refused, "always without permission; cancelled");
                    refused.into_pending().cancel();
                }
            }
            PromptOutcome::Answered(ConsentAnswer::Deny) => pending.deny(),
            PromptOutcome::Answered(_) => pending.cancel(),
            PromptOutcome::Withdrawn => drop(pending),
        }
    }
    advance(inner);
}

/// The prompt's host-written document for `request`, the host's own words (buttons, headings)
/// in the request's language (R-STD-9).
fn prompt_document(request: &PromptContent) -> Result<TrustedDocument, ShellError> {
    let arguments: Vec<[String; 2]> = request
        .arguments()
        .into_iter()
        .map(|line| [line.key, line.value])
        .collect();
    let language = request.language();
    let data = json!({
        "words": lineup_host_core::host_words(language),
        "lang": language.as_str(),
        "agent": request.agent(),
        "headline": request.headline(),
        "capability": request.capability().as_str(),
        "version": lineup_host_core::display_line(request.version().as_str(), 64),
        "risk": request.risk_words(),
        "host": request.link_host(),
        "reason": request.reason(),
        "arguments": arguments,
        "more": request.more_arguments(),
        "remember": request.remember_allowed(),
        "conversation": request.conversation_line(),
    });
    TrustedDocument::new(PROMPT_HTML, PROMPT_CSS, PROMPT_JS, &data)
}

const PROMPT_HTML: &str = include_str!("prompt/prompt.html");
const PROMPT_CSS: &str = include_str!("prompt/prompt.css");
const PROMPT_JS: &str = include_str!("prompt/prompt.js");

#[cfg(test)]
mod tests {
    use lineup_host_core::Risk;
    use serde_json::json;

    use super::*;

    #[test]
    fn r_sec_6_prompt_document_carries_agent_strings_as_data_only() {
        let arguments = json!({"<i>k</i>": "<b>v</b>"});
        let request = PromptContent::new(
            "<b>agent</b>",
            "x.y".try_into().unwrap_or_else(|_| panic!("name")),
            "1".try_into().unwrap_or_else(|_| panic!("version")),
            Risk::UserConfirmation,
            "<img src=x onerror=alert(1)></script>",
            arguments.as_object().unwrap_or_else(|| panic!("object")),
        );
        let document = prompt_document(&request).unwrap_or_else(|e| panic!("{e}"));
        let html = document.html();
        for agent_markup in ["<b>", "<img", "<i>", "</script><"] {
            assert!(!html.contains(agent_markup), "{agent_markup}");
        }
        assert!(html.contains("\\u003cb\\u003eagent\\u003c/b\\u003e"));
    }
}
