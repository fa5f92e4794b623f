//! A standard component's window on Linux (R-STD-8, §4 of standard-components.md): a GTK
//! toplevel of the host's own holding a [`TrustedView`] of the one component document. Its
//! input gate runs on GTK's events before the engine sees any: nothing is taken until the
//! guard delay after map or focus, each answer needs a real input event in this window (a
//! *credit*, not flagged `send_event`, at most [`CREDIT_LIFETIME`] old, used once), Enter never
//! reaches the page and Escape is `cancel`.

use std::cell::{Cell, OnceCell, RefCell};
use std::collections::HashSet;
use std::rc::{Rc, Weak};
use std::time::{Duration, Instant};

use gtk::gdk;
use gtk::glib;
use gtk::prelude::*;
use lineup_host_core::InputKind;

use super::component_stack::{ComponentStack, Stacked};
use super::guard::{connect, connect_child, connect_view, Guard, GuardedWindow};
use super::shared_trusted::SharedTrusted;
use super::trusted::{TrustedEvent, TrustedView};
use crate::component_snapshot::{parse_snapshot, ComponentSnapshot, SNAPSHOT_JS};
use crate::components::{
    component_document, component_window_title, parse_message, takes_enter, ComponentAction,
    ComponentContent, ComponentOptions, PageMessage, CREDIT_LIFETIME, LOCK_SCRIPT,
    MAX_COMPONENT_MESSAGE_BYTES,
};
use crate::config::Rect;
use crate::error::ShellError;

/// How long the document may take to render before the window reports a failure.
const RENDER_TIMEOUT: Duration = Duration::from_secs(20);
/// The window's size; its buttons sit at fixed places from the bottom right corner.
const WIDTH: i32 = 480;
const HEIGHT: i32 = 320;
/// The bounds of a stacked view's height, in pixels.
const MIN_STACKED_HEIGHT: f64 = 48.0;
const MAX_STACKED_HEIGHT: f64 = 640.0;

/// Who hears what the user did.
type ActionSink = Rc<dyn Fn(ComponentAction)>;

/// One component window, closed when dropped.
pub(crate) struct PlatformComponent {
    state: Rc<ComponentState>,
}

/// Where a new component's view goes.
pub(crate) enum PlatformPlace<'a> {
    /// A window of its own.
    Own,
    /// Its conversation's stack window (R-STD-13).
    Stacked(&'a ComponentStack),
    /// The components' layer of an embedder's (or the kiosk's) window, over its Surfaces'
    /// child views, at `bounds` (R-STD-13).
    Child {
        /// The window.
        parent: &'a tao::window::Window,
        /// Where, in logical pixels of its content area.
        bounds: Rect,
    },
}

/// Where a component's view is.
enum Frame {
    /// A window of its own.
    Own(gtk::Window),
    /// Its conversation's stack window.
    Stacked(ComponentStack),
    /// The components' layer of an embedder's window.
    Child {
        layer: gtk::Fixed,
        toplevel: gtk::Window,
        /// The toplevel's handler that restarts the guard on a map or a focus.
        handler: RefCell<Option<glib::SignalHandlerId>>,
    },
}

struct ComponentState {
    frame: Frame,
    view: TrustedView,
    guard: Guard,
    on_action: ActionSink,
    /// Whether Enter reaches the page ([`takes_enter`]).
    enter: bool,
    shown: Cell<bool>,
    /// Whether the window has reported its last action (closed or failed).
    ended: Cell<bool>,
    /// The last real input event that reached the page, not yet used by an answer.
    credit: Cell<Option<(InputKind, Instant)>>,
    /// Keys and buttons whose press fell inside the guard delay: their release is dropped too.
    swallowed_keys: RefCell<HashSet<u16>>,
    swallowed_buttons: RefCell<HashSet<u32>>,
}

impl PlatformComponent {
    /// Builds the window and its view and starts rendering `content` as `options` say, in
    /// `process` (shared with other component views) or in a web process of its own; the
    /// window is mapped once the document has rendered. `on_action` hears, from the main loop,
    /// what the user did.
    pub(crate) fn new(
        content: &ComponentContent,
        options: &ComponentOptions,
        process: Option<&SharedTrusted>,
        place: PlatformPlace<'_>,
        on_action: ActionSink,
    ) -> Result<Self, ShellError> {
        let token = match process {
            Some(_) => Some(SharedTrusted::token()?),
            None => None,
        };
        let document = component_document(content, options, token.as_deref())?;
        let guard_delay = options.guard_delay_for(content);
        let slot: Rc<OnceCell<Weak<ComponentState>>> = Rc::new(OnceCell::new());
        let events = Rc::clone(&slot);
        let on_event: Rc<dyn Fn(TrustedEvent)> = Rc::new(move |event| {
            if let Some(state) = events.get().and_then(Weak::upgrade) {
                state.view_event(event);
            }
        });
        let view = match (process, token) {
            (Some(process), Some(token)) => {
                process.view(token, document, MAX_COMPONENT_MESSAGE_BYTES, on_event)?
            }
            _ => TrustedView::new(document, MAX_COMPONENT_MESSAGE_BYTES, on_event)?,
        };
        let frame = match place {
            PlatformPlace::Stacked(stack) => Frame::Stacked(stack.clone()),
            PlatformPlace::Child { parent, bounds } => {
                use tao::platform::unix::WindowExtUnix;
                let layer = super::layers::component_layer(parent)?;
                let widget = view.widget();
                layer.put(widget, bounds.x, bounds.y);
                widget.set_size_request(clamp(bounds.width), clamp(bounds.height));
                let toplevel = parent.gtk_window().clone().upcast::<gtk::Window>();
                Frame::Child {
                    layer,
                    toplevel,
                    handler: RefCell::new(None),
                }
            }
            PlatformPlace::Own => {
                let window = gtk::Window::new(gtk::WindowType::Toplevel);
                window.set_title(&component_window_title(content.kind));
                window.set_default_size(WIDTH, HEIGHT);
                window.set_position(gtk::WindowPosition::Center);
                window.set_type_hint(gdk::WindowTypeHint::Dialog);
                window.set_keep_above(true);
                window.add_events(
                    gdk::EventMask::VISIBILITY_NOTIFY_MASK | gdk::EventMask::FOCUS_CHANGE_MASK,
                );
                window.add(view.widget());
                Frame::Own(window)
            }
        };
        let state = Rc::new(ComponentState {
            frame,
            view,
            guard: Guard::new(guard_delay),
            on_action,
            enter: takes_enter(content.kind),
            shown: Cell::new(false),
            ended: Cell::new(false),
            credit: Cell::new(None),
            swallowed_keys: RefCell::new(HashSet::new()),
            swallowed_buttons: RefCell::new(HashSet::new()),
        });
        // Cannot be set already: the cell was created above and is set only here.
        let _ = slot.set(Rc::downgrade(&state));
        match &state.frame {
            Frame::Own(_) => connect(&state),
            Frame::Stacked(stack) => {
                stack.add(&state, HEIGHT);
                connect_view(&state);
            }
            Frame::Child { handler, .. } => {
                connect_view(&state);
                handler.replace(Some(connect_child(&state)));
            }
        }
        watch_render(&state);
        Ok(Self { state })
    }

    /// Whether the window is shown and its guard delay has passed.
    pub(crate) fn accepts_input(&self) -> bool {
        self.state.accepts_input()
    }

    /// Whether the window is shown.
    /// Moves a child view to `bounds`; nothing for another frame.
    pub(crate) fn set_bounds(&self, bounds: Rect) {
        self.state.set_bounds(bounds);
    }

    pub(crate) fn is_shown(&self) -> bool {
        self.state.shown.get() && !self.state.ended.get()
    }

    /// Feeds the window a press and release of `keyval` flagged `send_event` (a test control).
    #[cfg(feature = "test-controls")]
    pub(crate) fn forge_key(&self, keyval: u32) {
        super::forged::forge_key(GuardedWindow::window(&*self.state), keyval);
    }

    /// Runs the host's own `script` (an update built by the port) in the page.
    pub(crate) fn run(&self, script: &str) {
        self.state.view.evaluate(script, Box::new(|_| {}));
    }

    /// Reads the page back (see [`ComponentSnapshot`]).
    pub(crate) fn snapshot(&self, done: Box<dyn FnOnce(Option<ComponentSnapshot>)>) {
        self.state.view.evaluate(
            SNAPSHOT_JS,
            Box::new(move |json| done(json.as_deref().and_then(parse_snapshot))),
        );
    }

    /// WebKit's snapshot of the whole document as PNG bytes.
    pub(crate) fn snapshot_png(&self, done: Box<dyn FnOnce(Result<Vec<u8>, ShellError>)>) {
        super::snapshot::full_document_png(self.state.view.widget(), done);
    }

    /// Locks the page after an answer.
    pub(crate) fn lock(&self) {
        self.run(LOCK_SCRIPT);
    }

    /// A change the user sees: the guard delay starts again (R-STD-8 (b)).
    pub(crate) fn restart_guard(&self, why: &str) {
        self.state.guard.restart(why);
    }
}

impl ComponentState {
    fn accepts_input(&self) -> bool {
        self.shown.get() && self.guard.open()
    }

    fn view_event(&self, event: TrustedEvent) {
        let message = match event {
            TrustedEvent::Message(text) => parse_message(&text),
            TrustedEvent::Crashed => return self.end(ComponentAction::Failed),
        };
        let Some(message) = message else {
            tracing::debug!("component page message not understood; dropped");
            return;
        };
        let action = match message {
            PageMessage::Rendered { height } => {
                self.resize(height);
                return self.show();
            }
            PageMessage::Resize { height } => return self.resize(Some(height)),
            PageMessage::Submit { answer } => self
                .credit()
                .map(|input| ComponentAction::Submit { answer, input }),
            PageMessage::Cancel {} => self.credit().map(|input| ComponentAction::Cancel { input }),
            PageMessage::Link { url } => self
                .credit()
                .map(|input| ComponentAction::Link { url, input }),
            PageMessage::Draft { draft } => {
                if self.shown.get() && !self.ended.get() {
                    self.report(ComponentAction::Draft(draft));
                }
                return;
            }
            PageMessage::Dismiss {} => match self.credit() {
                Some(_) => return self.end(ComponentAction::Close),
                None => None,
            },
        };
        match action {
            Some(action) => self.report(action),
            None => tracing::debug!(
                "component answer without a real input event after the guard delay; dropped"
            ),
        }
    }

    /// The input kind of the unused credit, used up now; `None` when there is none that the
    /// gate let through in the last [`CREDIT_LIFETIME`] (R-STD-8 (a)).
    fn credit(&self) -> Option<InputKind> {
        let (kind, at) = self.credit.take()?;
        (self.accepts_input() && at.elapsed() <= CREDIT_LIFETIME).then_some(kind)
    }

    fn grant(&self, kind: InputKind, synthetic: bool) {
        if !synthetic {
            self.credit.set(Some((kind, Instant::now())));
        }
    }

    fn show(&self) {
        if self.shown.replace(true) || self.ended.get() {
            return;
        }
        match &self.frame {
            Frame::Own(window) => {
                window.show_all();
                window.present();
                self.view.widget().grab_focus();
                self.guard.restart("shown");
            }
            Frame::Stacked(stack) => stack.show(self.view.widget()),
            // Shown where the embedder placed it, without taking the keyboard from the app:
            // the user clicks or tabs into it.
            Frame::Child { .. } => {
                self.view.widget().show();
                self.guard.restart("shown");
            }
        }
    }

    /// Moves a child view to `bounds`; nothing for another frame.
    fn set_bounds(&self, bounds: Rect) {
        if let Frame::Child { layer, .. } = &self.frame {
            let widget = self.view.widget();
            layer.move_(widget, bounds.x, bounds.y);
            widget.set_size_request(clamp(bounds.width), clamp(bounds.height));
            // What is under the pointer moved (R-STD-8 (b)).
            self.guard.restart("moved");
        }
    }

    /// A stacked view takes its content's height (in CSS pixels, as the page measured it);
    /// a child view's is reported, for the host to lay it out again.
    fn resize(&self, height: Option<f64>) {
        let Some(height) = height.filter(|h| h.is_finite()) else {
            return;
        };
        // Whole pixels within the bounds: the cast cannot overflow.
        #[allow(clippy::cast_possible_truncation)]
        let height = height.clamp(MIN_STACKED_HEIGHT, MAX_STACKED_HEIGHT) as i32;
        match &self.frame {
            Frame::Stacked(stack) => stack.resize(self.view.widget(), height),
            Frame::Child { .. } => {
                if !self.ended.get() {
                    let height = u32::try_from(height).unwrap_or(0);
                    let sink = Rc::clone(&self.on_action);
                    glib::idle_add_local_once(move || sink(ComponentAction::Resized { height }));
                }
            }
            Frame::Own(_) => {}
        }
    }

    fn report(&self, action: ComponentAction) {
        if self.ended.get() {
            return;
        }
        let sink = Rc::clone(&self.on_action);
        glib::idle_add_local_once(move || sink(action));
    }

    /// Reports `action` and takes no more input: the window closed or failed.
    fn end(&self, action: ComponentAction) {
        self.report(action);
        self.ended.set(true);
        match &self.frame {
            Frame::Own(window) => window.hide(),
            Frame::Stacked(stack) => stack.remove(self.view.widget()),
            Frame::Child { .. } => self.view.widget().hide(),
        }
    }

    fn key_press(&self, event: &gdk::EventKey) -> glib::Propagation {
        if !self.accepts_input() {
            self.swallowed_keys
                .borrow_mut()
                .insert(event.hardware_keycode());
            return glib::Propagation::Stop;
        }
        if is_enter(event) && !self.enter {
            return glib::Propagation::Stop;
        }
        glib::Propagation::Proceed
    }

    fn key_release(&self, event: &gdk::EventKey) -> glib::Propagation {
        let swallowed = self
            .swallowed_keys
            .borrow_mut()
            .remove(&event.hardware_keycode());
        if swallowed || (is_enter(event) && !self.enter) {
            return glib::Propagation::Stop;
        }
        if event.keyval() == gdk::keys::constants::Escape {
            if !event.is_send_event() && self.accepts_input() {
                self.report(ComponentAction::Cancel {
                    input: InputKind::Keyboard,
                });
            }
            return glib::Propagation::Stop;
        }
        // The page acts on a key's release (a button's Space) or press (a radio's arrows):
        // either finds the credit of this release or of the press before it.
        self.grant(InputKind::Keyboard, event.is_send_event());
        glib::Propagation::Proceed
    }

    fn button_press(&self, event: &gdk::EventButton) -> glib::Propagation {
        if self.accepts_input() {
            return glib::Propagation::Proceed;
        }
        tracing::debug!("component click inside the guard delay ignored");
        self.swallowed_buttons.borrow_mut().insert(event.button());
        glib::Propagation::Stop
    }

    fn button_release(&self, event: &gdk::EventButton) -> glib::Propagation {
        if self.swallowed_buttons.borrow_mut().remove(&event.button()) {
            return glib::Propagation::Stop;
        }
        if self.accepts_input() {
            self.grant(InputKind::Pointer, event.is_send_event());
        }
        glib::Propagation::Proceed
    }

    fn touch(&self, event: &gdk::Event) -> glib::Propagation {
        if !self.accepts_input() {
            return glib::Propagation::Stop;
        }
        if event.event_type() == gdk::EventType::TouchEnd {
            self.grant(InputKind::Touch, event.is_send_event());
        }
        glib::Propagation::Proceed
    }

    /// Map and focus restart the guard delay (R-STD-8 (b)).
    fn window_event(&self, event: &gdk::Event) {
        self.guard.restart_on_map_or_focus(event);
    }
}

impl Drop for ComponentState {
    #[allow(unsafe_code)]
    fn drop(&mut self) {
        self.ended.set(true);
        match &self.frame {
            Frame::Own(window) => {
                window.hide();
                // SAFETY: the window is this component's own toplevel; nothing else holds it
                // but GTK and the signal handlers connected in `connect`, which reach this state
                // through a `Weak` that no longer upgrades, so no Rust code uses the widget
                // after it is destroyed.
                unsafe { window.destroy() };
            }
            Frame::Stacked(stack) => stack.remove(self.view.widget()),
            Frame::Child {
                layer,
                toplevel,
                handler,
            } => {
                if let Some(handler) = handler.take() {
                    toplevel.disconnect(handler);
                }
                layer.remove(self.view.widget());
            }
        }
    }
}

impl GuardedWindow for ComponentState {
    fn window(&self) -> &gtk::Window {
        match &self.frame {
            Frame::Own(window) => window,
            Frame::Stacked(stack) => stack.window(),
            Frame::Child { toplevel, .. } => toplevel,
        }
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
        self.end(ComponentAction::Close);
    }

    fn on_button_press(&self, event: &gdk::EventButton) -> glib::Propagation {
        self.button_press(event)
    }

    fn on_button_release(&self, event: &gdk::EventButton) -> glib::Propagation {
        self.button_release(event)
    }

    fn on_touch(&self, event: &gdk::Event) -> glib::Propagation {
        self.touch(event)
    }
}

/// A size in logical pixels as GTK takes it.
fn clamp(value: u32) -> i32 {
    i32::try_from(value).unwrap_or(i32::MAX)
}

/// Whether `event` is one of the Enter keys.
fn is_enter(event: &gdk::EventKey) -> bool {
    use gdk::keys::constants as key;
    [key::Return, key::KP_Enter, key::ISO_Enter].contains(&event.keyval())
}

/// Reports a failure when the document never renders.
fn watch_render(state: &Rc<ComponentState>) {
    let weak = Rc::downgrade(state);
    glib::timeout_add_local_once(RENDER_TIMEOUT, move || {
        if let Some(state) = weak.upgrade() {
            if !state.shown.get() {
                tracing::error!("a component's document did not render; it fails");
                state.end(ComponentAction::Failed);
            }
        }
    });
}

impl Stacked for ComponentState {
    fn restart_guard(&self, why: &str) {
        self.guard.restart(why);
    }
}
