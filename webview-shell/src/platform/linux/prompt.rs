//! The built-in consent prompt's window on Linux: a GTK toplevel of the host's own, apart from
//! every Surface, holding a [`TrustedView`]; the guard delay is enforced on GTK's events before
//! the engine sees any of them.

use std::cell::{Cell, OnceCell, RefCell};
use std::collections::HashSet;
use std::rc::{Rc, Weak};
use std::time::{Duration, Instant};

use gtk::gdk;
use gtk::glib;
use gtk::prelude::*;

use super::guard::{connect, Guard, GuardedWindow};
use super::trusted::{TrustedEvent, TrustedView};
use lineup_host_core::ConsentAnswer;

use crate::consent::ConsentHandle;
use crate::error::ShellError;
use crate::prompt::{parse_snapshot, PromptOptions, PromptOutcome, PromptSnapshot, SNAPSHOT_JS};
use crate::trusted::TrustedDocument;

/// The longest message the prompt's document posts (`rendered`, `allow`, …).
const MAX_MESSAGE_BYTES: usize = 64;
/// How often a showing prompt checks whether its request was withdrawn.
const WITHDRAW_POLL: Duration = Duration::from_millis(100);
/// How long the document may take to render before the prompt gives up (answering `Cancelled`).
const RENDER_TIMEOUT: Duration = Duration::from_secs(20);

/// Who hears how a prompt ended.
type OutcomeSink = Box<dyn Fn(PromptOutcome)>;

/// One prompt window, closed when dropped.
pub(crate) struct PlatformPrompt {
    state: Rc<PromptState>,
}

struct PromptState {
    window: gtk::Window,
    view: TrustedView,
    guard: Guard,
    remember_allowed: bool,
    on_outcome: RefCell<Option<OutcomeSink>>,
    on_shown: RefCell<Option<Box<dyn FnOnce()>>>,
    shown: Cell<bool>,
    /// Keys and buttons whose press fell inside the guard delay: their release is dropped too.
    swallowed_keys: RefCell<HashSet<u16>>,
    swallowed_buttons: RefCell<HashSet<u32>>,
}

/// The window a prompt is attached to, kept weakly: the prompt never keeps it alive.
pub(crate) struct PromptParent(glib::WeakRef<gtk::Window>);

impl PromptParent {
    /// `window`'s GTK window.
    pub(crate) fn of(window: &tao::window::Window) -> Self {
        use tao::platform::unix::WindowExtUnix;
        Self(
            window
                .gtk_window()
                .clone()
                .upcast::<gtk::Window>()
                .downgrade(),
        )
    }
}

impl PlatformPrompt {
    /// Whether this platform has the built-in prompt.
    pub(crate) fn supported() -> Result<(), ShellError> {
        Ok(())
    }

    /// Builds the window and its view and starts rendering `document` for `request` (whose
    /// language titles the window, a title no Surface window shows or imitates, R-SEC-5, and
    /// which says whether "always" may be answered); the window is mapped once
    /// the document has rendered. `on_outcome` hears, once and from the main loop, how it ended;
    /// `on_shown`, from the main loop, that the window was shown with its document rendered
    /// (never, when it ended before).
    pub(crate) fn new(
        document: TrustedDocument,
        options: &PromptOptions,
        parent: Option<&PromptParent>,
        request: &crate::PromptContent,
        withdrawal: ConsentHandle,
        on_outcome: OutcomeSink,
        on_shown: Box<dyn FnOnce()>,
    ) -> Result<Self, ShellError> {
        let slot: Rc<OnceCell<Weak<PromptState>>> = Rc::new(OnceCell::new());
        let events = Rc::clone(&slot);
        let view = TrustedView::new(
            document,
            MAX_MESSAGE_BYTES,
            Rc::new(move |event| {
                if let Some(state) = events.get().and_then(Weak::upgrade) {
                    state.view_event(event);
                }
            }),
        )?;

        let window = gtk::Window::new(gtk::WindowType::Toplevel);
        window.set_title(
            lineup_host_core::host_word(request.language(), "prompt_title").unwrap_or_default(),
        );
        window.set_default_size(560, 480);
        // Attached to the embedder's window where it gave one: transient for it (the window
        // manager keeps it with that window) and centred on it; else centred on the screen.
        match parent.and_then(|p| p.0.upgrade()) {
            Some(parent) => {
                window.set_transient_for(Some(&parent));
                window.set_position(gtk::WindowPosition::CenterOnParent);
            }
            None => window.set_position(gtk::WindowPosition::Center),
        }
        window.set_type_hint(gdk::WindowTypeHint::Dialog);
        // Above every Surface window where a window manager honours it; without one (or when it
        // does not), the prompt raises itself whenever it is covered.
        window.set_keep_above(true);
        window.set_urgency_hint(true);
        window
            .add_events(gdk::EventMask::VISIBILITY_NOTIFY_MASK | gdk::EventMask::FOCUS_CHANGE_MASK);
        window.add(view.widget());

        let state = Rc::new(PromptState {
            window,
            view,
            guard: Guard::new(options.guard_delay()),
            remember_allowed: request.remember_allowed(),
            on_outcome: RefCell::new(Some(on_outcome)),
            on_shown: RefCell::new(Some(on_shown)),
            shown: Cell::new(false),
            swallowed_keys: RefCell::new(HashSet::new()),
            swallowed_buttons: RefCell::new(HashSet::new()),
        });
        // Cannot be set already: the cell was created above and is set only here.
        let _ = slot.set(Rc::downgrade(&state));
        connect(&state);
        watch(&state, withdrawal);
        Ok(Self { state })
    }

    /// Whether the prompt is shown and its guard delay has passed.
    pub(crate) fn accepts_input(&self) -> bool {
        self.state.shown.get() && self.state.guard.open()
    }

    /// Reads back what the page shows.
    pub(crate) fn snapshot(&self, done: Box<dyn FnOnce(Option<PromptSnapshot>)>) {
        let other = self.state.view.other_requests();
        self.state.view.evaluate(
            SNAPSHOT_JS,
            Box::new(move |json| done(json.and_then(|j| parse_snapshot(&j, other)))),
        );
    }

    /// Puts `html` into the reason as markup (a positive control for tests).
    #[cfg(feature = "test-controls")]
    pub(crate) fn plant_markup_for_test(&self, html: &str) {
        let literal = serde_json::Value::String(html.to_owned()).to_string();
        let script = format!("document.getElementById('reason').innerHTML = {literal}; 'ok'");
        self.state.view.evaluate(&script, Box::new(|_| {}));
    }
}

impl PromptState {
    fn view_event(&self, event: TrustedEvent) {
        match event {
            TrustedEvent::Message(message) if message == "rendered" => self.show(),
            TrustedEvent::Message(message) => {
                if !(self.shown.get() && self.guard.open()) {
                    tracing::debug!(%message, "consent prompt answer inside the guard delay ignored");
                    return;
                }
                let answer = match message.as_str() {
                    "allow" => ConsentAnswer::Allow,
                    "deny" => ConsentAnswer::Deny,
                    "always" if self.remember_allowed => ConsentAnswer::AllowAlways,
                    _ => return,
                };
                self.conclude(PromptOutcome::Answered(answer));
            }
            TrustedEvent::Crashed => {
                self.conclude(PromptOutcome::Answered(ConsentAnswer::Dismissed))
            }
        }
    }

    fn show(&self) {
        if self.shown.replace(true) || self.on_outcome.borrow().is_none() {
            return;
        }
        self.window.show_all();
        self.window.present();
        self.view.widget().grab_focus();
        self.guard.restart("shown");
        if let Some(on_shown) = self.on_shown.borrow_mut().take() {
            glib::idle_add_local_once(on_shown);
        }
    }

    /// Ends the prompt with `outcome`, once: hides the window now, tells the owner from the main
    /// loop (which then drops the prompt).
    fn conclude(&self, outcome: PromptOutcome) {
        let Some(on_outcome) = self.on_outcome.borrow_mut().take() else {
            return;
        };
        self.window.hide();
        glib::idle_add_local_once(move || on_outcome(outcome));
    }

    fn key_press(&self, event: &gdk::EventKey) -> glib::Propagation {
        if !(self.shown.get() && self.guard.open()) {
            self.swallowed_keys
                .borrow_mut()
                .insert(event.hardware_keycode());
            return glib::Propagation::Stop;
        }
        use gdk::keys::constants as key;
        let k = event.keyval();
        if [key::Return, key::KP_Enter, key::ISO_Enter].contains(&k) {
            return glib::Propagation::Stop;
        }
        if k == key::Escape {
            self.conclude(PromptOutcome::Answered(ConsentAnswer::Dismissed));
            return glib::Propagation::Stop;
        }
        glib::Propagation::Proceed
    }

    fn key_release(&self, event: &gdk::EventKey) -> glib::Propagation {
        use gdk::keys::constants as key;
        let swallowed = self
            .swallowed_keys
            .borrow_mut()
            .remove(&event.hardware_keycode());
        let k = event.keyval();
        if swallowed || [key::Return, key::KP_Enter, key::ISO_Enter].contains(&k) {
            glib::Propagation::Stop
        } else {
            glib::Propagation::Proceed
        }
    }

    fn button_press(&self, event: &gdk::EventButton) -> glib::Propagation {
        if self.shown.get() && self.guard.open() {
            return glib::Propagation::Proceed;
        }
        tracing::debug!("consent prompt click inside the guard delay ignored");
        self.swallowed_buttons.borrow_mut().insert(event.button());
        glib::Propagation::Stop
    }

    fn button_release(&self, event: &gdk::EventButton) -> glib::Propagation {
        if self.swallowed_buttons.borrow_mut().remove(&event.button()) {
            glib::Propagation::Stop
        } else {
            glib::Propagation::Proceed
        }
    }

    /// Map, focus and visibility changes restart the guard delay; being covered also raises
    /// the window again.
    fn window_event(&self, event: &gdk::Event) {
        if self.guard.restart_on_map_or_focus(event)
            || event.event_type() != gdk::EventType::VisibilityNotify
        {
            return;
        }
        self.guard.restart("visibility changed");
        let covered = event
            .downcast_ref::<gdk::EventVisibility>()
            .is_none_or(|v| v.state() != gdk::VisibilityState::Unobscured);
        if covered {
            if let Some(own) = self.window.window() {
                own.raise();
            }
        }
    }
}

impl Drop for PromptState {
    #[allow(unsafe_code)]
    fn drop(&mut self) {
        self.on_outcome.borrow_mut().take();
        self.window.hide();
        // SAFETY: the window is this prompt's own toplevel; nothing else holds it but GTK and
        // the signal handlers connected in `connect`, which reach this state through a `Weak`
        // that no longer upgrades, so no Rust code uses the widget after it is destroyed.
        // `gtk_widget_destroy` is what ends a toplevel that was never shown, too.
        unsafe { self.window.destroy() };
    }
}

impl GuardedWindow for PromptState {
    fn window(&self) -> &gtk::Window {
        &self.window
    }

    fn view(&self) -> &webkit2gtk::WebView {
        self.view.widget()
    }

    fn on_key_press(&self, event: &gdk::EventKey) -> glib::Propagation {
        self.key_press(event)
    }

    fn on_key_release(&self, event: &gdk::EventKey) -> glib::Propagation {
        self.key_release(event)
    }

    fn on_window_event(&self, event: &gdk::Event) {
        self.window_event(event);
    }

    fn on_close_requested(&self) {
        self.conclude(PromptOutcome::Answered(ConsentAnswer::Dismissed));
    }

    fn on_button_press(&self, event: &gdk::EventButton) -> glib::Propagation {
        self.button_press(event)
    }

    fn on_button_release(&self, event: &gdk::EventButton) -> glib::Propagation {
        self.button_release(event)
    }

    /// Touch passes to the page only while the prompt is shown and its guard is open.
    fn on_touch(&self, _event: &gdk::Event) -> glib::Propagation {
        if self.shown.get() && self.guard.open() {
            glib::Propagation::Proceed
        } else {
            glib::Propagation::Stop
        }
    }
}

/// Ends the prompt when its request is withdrawn, or when its document never renders.
fn watch(state: &Rc<PromptState>, withdrawal: ConsentHandle) {
    let weak = Rc::downgrade(state);
    let started = Instant::now();
    glib::timeout_add_local(WITHDRAW_POLL, move || {
        let Some(state) = weak.upgrade() else {
            return glib::ControlFlow::Break;
        };
        if withdrawal.is_withdrawn() {
            state.conclude(PromptOutcome::Withdrawn);
            return glib::ControlFlow::Break;
        }
        if !state.shown.get() && started.elapsed() > RENDER_TIMEOUT {
            tracing::error!("the consent prompt's document did not render; cancelled");
            state.conclude(PromptOutcome::Answered(ConsentAnswer::Dismissed));
            return glib::ControlFlow::Break;
        }
        glib::ControlFlow::Continue
    });
}
