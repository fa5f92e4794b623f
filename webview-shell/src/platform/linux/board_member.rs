//! One instance's box in a component board (R-STD-8 per instance): its own guard delay, its own
//! credit, and whether it is shown or ended. The board decides which member an input event
//! reached; a member only keeps what that event earned it.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::{Duration, Instant};

use gtk::glib;
use lineup_host_core::InputKind;

use super::guard::Guard;
use crate::components::{ComponentAction, ComponentContent, CREDIT_LIFETIME};
use lineup_host_core::{JsonObject, SafeMarkdown};

/// Who hears what the user did.
pub(super) type ActionSink = Rc<dyn Fn(ComponentAction)>;

/// One instance of a board.
///
/// Invariants: once `ended`, it reports nothing more and takes no credit; a credit is used at
/// most once, and only while the member accepts input.
pub(super) struct Member {
    guard: Guard,
    on_action: ActionSink,
    /// Whether Enter reaches the page ([`takes_enter`](crate::components::takes_enter)).
    enter: bool,
    /// Whether its box was built (the page said `rendered`).
    shown: Cell<bool>,
    /// Whether it reported its last action (closed or failed).
    ended: Cell<bool>,
    /// The last real input event that reached its box, not yet used by an answer.
    credit: Cell<Option<(InputKind, Instant)>>,
    /// What its box shows now (state, Markdown, lock, the user's draft), to build it again
    /// after a crash of the web process (R-STD-15).
    content: RefCell<ComponentContent>,
}

impl Member {
    /// A member showing `content`, not yet shown, whose guard delay is `guard_delay`.
    pub(super) fn new(
        content: &ComponentContent,
        guard_delay: Duration,
        enter: bool,
        on_action: ActionSink,
    ) -> Self {
        Self {
            content: RefCell::new(content.clone()),
            guard: Guard::new(guard_delay),
            on_action,
            enter,
            shown: Cell::new(false),
            ended: Cell::new(false),
            credit: Cell::new(None),
        }
    }

    /// Whether its box is shown, not ended, and past its guard delay; the board adds whether
    /// the board itself is visible.
    pub(super) fn ready_for_input(&self) -> bool {
        self.shown.get() && !self.ended.get() && self.guard.open()
    }

    /// Whether its box was built and it has not ended.
    pub(super) fn is_shown(&self) -> bool {
        self.shown.get() && !self.ended.get()
    }

    /// What its box shows now.
    pub(super) fn content(&self) -> ComponentContent {
        self.content.borrow().clone()
    }

    /// Its box shows `state` (and `markdown`); `reopened` unlocked it.
    pub(super) fn note_update(
        &self,
        state: &JsonObject,
        markdown: Option<&SafeMarkdown>,
        reopened: bool,
    ) {
        let mut content = self.content.borrow_mut();
        content.state = state.as_map().clone();
        content.markdown = markdown.cloned();
        if reopened {
            content.locked = false;
        }
    }

    /// Its box was locked after an answer.
    pub(super) fn note_lock(&self) {
        self.content.borrow_mut().locked = true;
    }

    /// The user's unsent draft in its box is `draft` (never a secret field's: the page leaves
    /// those out).
    pub(super) fn note_draft(&self, draft: &serde_json::Value) {
        self.content.borrow_mut().draft = Some(draft.clone());
    }

    /// Whether it ended.
    pub(super) fn is_ended(&self) -> bool {
        self.ended.get()
    }

    /// Whether Enter may reach its page.
    pub(super) fn takes_enter(&self) -> bool {
        self.enter
    }

    /// Its box was built: shown from now, its guard delay starting now. Returns whether this
    /// is the first time.
    pub(super) fn mark_shown(&self) -> bool {
        if self.ended.get() || self.shown.replace(true) {
            return false;
        }
        self.guard.restart("shown");
        true
    }

    /// The guard delay starts again (R-STD-8 (b)).
    pub(super) fn restart_guard(&self, why: &str) {
        self.guard.restart(why);
    }

    /// A real input event of `kind` reached its box (none when `synthetic`).
    pub(super) fn grant(&self, kind: InputKind, synthetic: bool) {
        if !synthetic {
            self.credit.set(Some((kind, Instant::now())));
        }
    }

    /// The input kind of the unused credit, used up now; `None` when there is none from the
    /// last [`CREDIT_LIFETIME`] or `accepts` is false (R-STD-8 (a)).
    pub(super) fn take_credit(&self, accepts: bool) -> Option<InputKind> {
        let (kind, at) = self.credit.take()?;
        (accepts && at.elapsed() <= CREDIT_LIFETIME).then_some(kind)
    }

    /// Reports `action` from the main loop, unless it ended.
    pub(super) fn report(&self, action: ComponentAction) {
        if self.ended.get() {
            return;
        }
        let sink = Rc::clone(&self.on_action);
        glib::idle_add_local_once(move || sink(action));
    }

    /// Reports `action` and ends: it takes no more input. Returns whether it had not ended.
    pub(super) fn end(&self, action: ComponentAction) -> bool {
        if self.ended.get() {
            return false;
        }
        self.report(action);
        self.ended.set(true);
        true
    }

    /// Ends without a report (its owner dropped it).
    pub(super) fn forget(&self) {
        self.ended.set(true);
    }
}
