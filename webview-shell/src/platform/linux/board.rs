//! A component board on Linux (R-STD-8, R-STD-13, §4 of standard-components.md): one trusted
//! view of the host-written board document per placement target (a conversation's window of
//! its own, or a region of an embedder's or the kiosk's window), each instance a box in it.
//!
//! The input gate runs on GTK's events before the engine sees any, per instance: a pointer or
//! touch event counts for the box under its coordinates in the layout the page last reported,
//! a key for the box the page last reported holding the focus; nothing is taken inside that
//! instance's guard delay, which restarts when the window is mapped, focused, moved or raised,
//! when the board is shown again, and when its own box moves (another opening or closing above
//! it, a resize, a scroll). An answer needs a credit of its own box (a real event, not flagged
//! `send_event`, at most [`CREDIT_LIFETIME`](crate::components::CREDIT_LIFETIME) old, used
//! once); Enter never reaches a page that does not take it and Escape is `cancel`.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::rc::{Rc, Weak};
use std::time::{Duration, Instant};

use gtk::gdk;
use gtk::glib;
use gtk::prelude::*;
use lineup_host_core::InputKind;

use super::board_frame::{Frame, WIDTH};
use super::board_member::{ActionSink, Member};
use super::guard::{connect, connect_child, connect_view, GuardedWindow};
use super::shared_trusted::SharedTrusted;
use super::trusted::{TrustedEvent, TrustedView};
use crate::components::{
    add_script, board_document, parse_message, BoardFrame, BoardMessage, ComponentAction,
    ComponentContent, ComponentOptions, LayoutBox, PageMessage, CREDIT_LIFETIME,
    MAX_COMPONENT_MESSAGE_BYTES,
};
use crate::config::Rect;
use crate::error::ShellError;

/// How many times within [`RERENDER_WINDOW`] a board is built again after its web process
/// ended, before its boxes fail (as R-UI-12 bounds a Surface's reopens).
const MAX_RERENDERS: usize = 3;
const RERENDER_WINDOW: Duration = Duration::from_secs(60);
/// How long an instance's box may take to be built before it reports a failure.
const RENDER_TIMEOUT: Duration = Duration::from_secs(20);
/// Where a board's view goes.
pub(crate) enum PlatformBoardPlace<'a> {
    /// A host-owned toplevel of its own titled `title` (the host's words), mapped with its first
    /// shown instance and hidden when it holds none.
    Window {
        /// Its title.
        title: &'a str,
    },
    /// The components' layer of an embedder's (or the kiosk's) window, over its Surfaces' child
    /// views, in `area` (logical pixels of its content area): as tall as its boxes, at most the
    /// area, then its page scrolls.
    Child {
        /// The window.
        parent: &'a tao::window::Window,
        /// Where.
        area: Rect,
    },
}

/// One board: its view, its instances by slot, and the layout its page last reported.
pub(crate) struct Board {
    frame: Frame,
    view: TrustedView,
    /// Whether the page's script ran; scripts wait in `queued` until it has.
    ready: Cell<bool>,
    queued: RefCell<Vec<String>>,
    members: RefCell<HashMap<String, Rc<Member>>>,
    next_slot: Cell<u64>,
    /// Each box as the page last drew it, in order.
    layout: RefCell<Vec<LayoutBox>>,
    /// The slot holding the keyboard focus, as the page last said.
    focused: RefCell<Option<String>>,
    /// Whether the embedder shows the board (its conversation is shown).
    visible: Cell<bool>,
    /// Whether the window (or the view, in a parent) was shown once.
    mapped: Cell<bool>,
    /// The last real key release on the board, not yet used: it counts for the box that holds
    /// the focus when an answer comes (the page reports the focus before it acts on a later
    /// key, so by then the host knows where the key went).
    key_credit: Cell<Option<Instant>>,
    /// When the web process ended lately: the boxes are built again in a new one, up to
    /// [`MAX_RERENDERS`] times per [`RERENDER_WINDOW`] (R-STD-15).
    crashes: RefCell<Vec<Instant>>,
    /// Whether the reloaded page waits for its boxes.
    rebuild: Cell<bool>,
    /// Keys and buttons whose press was dropped: their release is dropped too.
    swallowed_keys: RefCell<HashSet<u16>>,
    swallowed_buttons: RefCell<HashSet<u32>>,
}

/// A board, shared by its instances' handles.
#[derive(Clone)]
pub(crate) struct PlatformBoard(Rc<Board>);

impl PlatformBoard {
    /// Builds the board's view at `place` and starts loading its document, in `process` when
    /// given (the web process every board shares) or in one of its own.
    pub(crate) fn new(
        place: PlatformBoardPlace<'_>,
        process: Option<&SharedTrusted>,
        options: &ComponentOptions,
    ) -> Result<Self, ShellError> {
        let (title, width) = match &place {
            PlatformBoardPlace::Window { title } => ((*title).to_owned(), WIDTH.unsigned_abs()),
            PlatformBoardPlace::Child { area, .. } => (
                crate::components::component_board_title(&options.language()),
                area.width,
            ),
        };
        let token = match process {
            Some(_) => Some(SharedTrusted::token()?),
            None => None,
        };
        let document = board_document(&title, width, options, token.as_deref())?;
        let slot: Rc<RefCell<Weak<Board>>> = Rc::new(RefCell::new(Weak::new()));
        let events = Rc::clone(&slot);
        let on_event: Rc<dyn Fn(TrustedEvent)> = Rc::new(move |event| {
            let board = events.borrow().upgrade();
            if let Some(board) = board {
                board.view_event(event);
            }
        });
        let view = match (process, token) {
            (Some(process), Some(token)) => {
                process.view(token, document, MAX_COMPONENT_MESSAGE_BYTES, on_event)?
            }
            _ => TrustedView::new(document, MAX_COMPONENT_MESSAGE_BYTES, on_event)?,
        };
        let frame = match place {
            PlatformBoardPlace::Window { title } => Frame::window(title, view.widget()),
            PlatformBoardPlace::Child { parent, area } => {
                Frame::child(parent, area, view.widget())?
            }
        };
        let board = Rc::new(Board {
            frame,
            view,
            ready: Cell::new(false),
            queued: RefCell::new(Vec::new()),
            members: RefCell::new(HashMap::new()),
            next_slot: Cell::new(0),
            layout: RefCell::new(Vec::new()),
            focused: RefCell::new(None),
            visible: Cell::new(true),
            mapped: Cell::new(false),
            key_credit: Cell::new(None),
            crashes: RefCell::new(Vec::new()),
            rebuild: Cell::new(false),
            swallowed_keys: RefCell::new(HashSet::new()),
            swallowed_buttons: RefCell::new(HashSet::new()),
        });
        *slot.borrow_mut() = Rc::downgrade(&board);
        if board.frame.is_child() {
            connect_view(&board);
            board.frame.keep_handler(connect_child(&board));
        } else {
            connect(&board);
        }
        Ok(Self(board))
    }

    /// Adds `content` as a box at the bottom; `on_action` hears what the user did in it.
    pub(super) fn add(
        &self,
        content: &ComponentContent,
        guard_delay: Duration,
        enter: bool,
        on_action: ActionSink,
    ) -> (String, Rc<Member>) {
        let board = &self.0;
        let number = board.next_slot.get() + 1;
        board.next_slot.set(number);
        let slot = format!("b{number}");
        let member = Rc::new(Member::new(content, guard_delay, enter, on_action));
        board
            .members
            .borrow_mut()
            .insert(slot.clone(), Rc::clone(&member));
        board.run(add_script(&slot, content));
        watch_render(&member);
        (slot, member)
    }

    /// Takes `slot` out of the board; a window board hides once it holds none.
    pub(crate) fn remove(&self, slot: &str) {
        let board = &self.0;
        if let Some(member) = board.members.borrow_mut().remove(slot) {
            member.forget();
        }
        board.run(crate::components::remove_script(slot));
        board.layout_removed(slot);
        if board.members.borrow().is_empty() && !board.frame.is_child() {
            board.frame.hide(board.view.widget());
            board.mapped.set(false);
        }
    }

    /// Runs the host's own `script` in the page, once its script ran.
    pub(crate) fn run(&self, script: String) {
        self.0.run(script);
    }

    /// Runs `script` and hands its result (a string) to `done`.
    pub(crate) fn evaluate(&self, script: &str, done: Box<dyn FnOnce(Option<String>)>) {
        self.0.view.evaluate(script, done);
    }

    /// Whether `member`'s box takes input now.
    pub(super) fn accepts_input(&self, member: &Member) -> bool {
        self.0.visible.get() && member.ready_for_input()
    }

    /// Whether the board is in an embedder's window.
    pub(crate) fn is_in_parent(&self) -> bool {
        self.0.frame.is_child()
    }

    /// Whether the board holds no instance.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.members.borrow().is_empty()
    }

    /// Whether the board is shown (its embedder has not hidden it).
    pub(crate) fn is_visible(&self) -> bool {
        self.0.visible.get()
    }

    /// Moves a board in a parent to `area` (every guard restarts: what is under the pointer
    /// changed); nothing for a window.
    pub(crate) fn set_area(&self, area: Rect) {
        let board = &self.0;
        if !board.frame.is_child() {
            return;
        }
        if board.frame.set_area(board.view.widget(), area) {
            board.run(crate::components::width_script(board.frame.width()));
        }
        board.restart_all("moved");
    }

    /// Hides or shows the board (its conversation is hidden or shown): a hidden board's
    /// instances take no credit, and showing it again restarts every guard (R-STD-8 (a), (b)).
    pub(crate) fn set_visible(&self, visible: bool) {
        let board = &self.0;
        if board.visible.replace(visible) == visible {
            return;
        }
        if !visible {
            board.frame.hide(board.view.widget());
        } else if board.mapped.get() || board.all().iter().any(|m| m.is_shown()) {
            // Shown again, or for the first time: its boxes were built while it was hidden.
            board.mapped.set(true);
            board.frame.show(board.view.widget());
        }
        board.restart_all(if visible { "shown again" } else { "hidden" });
    }

    /// The board's widget (for its snapshot).
    pub(crate) fn widget(&self) -> &webkit2gtk::WebView {
        self.0.view.widget()
    }

    /// The board's toplevel window.
    #[cfg(feature = "test-controls")]
    pub(crate) fn window(&self) -> &gtk::Window {
        GuardedWindow::window(&*self.0)
    }
}

impl Board {
    fn run(&self, script: String) {
        if self.ready.get() {
            self.view.evaluate(&script, Box::new(|_| {}));
        } else {
            self.queued.borrow_mut().push(script);
        }
    }

    fn member(&self, slot: &str) -> Option<Rc<Member>> {
        self.members.borrow().get(slot).cloned()
    }

    fn all(&self) -> Vec<Rc<Member>> {
        self.members.borrow().values().cloned().collect()
    }

    fn restart_all(&self, why: &str) {
        for member in self.all() {
            member.restart_guard(why);
        }
    }

    fn accepts(&self, member: &Member) -> bool {
        self.visible.get() && member.ready_for_input()
    }

    fn view_event(&self, event: TrustedEvent) {
        let text = match event {
            TrustedEvent::Message(text) => text,
            TrustedEvent::Crashed => return self.crashed(),
        };
        match parse_message(&text) {
            Some(BoardMessage::Board(frame)) => self.board_frame(frame),
            Some(BoardMessage::Instance { slot, message }) => match self.member(&slot) {
                Some(member) => self.instance_message(&member, &slot, message),
                None => tracing::debug!("message of a box that is gone; dropped"),
            },
            None => tracing::debug!("component page message not understood; dropped"),
        }
    }

    fn board_frame(&self, frame: BoardFrame) {
        match frame {
            BoardFrame::Ready {} => {
                self.ready.set(true);
                if self.rebuild.replace(false) {
                    self.build_again();
                }
                let queued = std::mem::take(&mut *self.queued.borrow_mut());
                for script in queued {
                    self.view.evaluate(&script, Box::new(|_| {}));
                }
            }
            BoardFrame::Layout { height, boxes } => self.relaid(height, boxes),
            BoardFrame::Focus { focused } => *self.focused.borrow_mut() = focused,
        }
    }

    /// The web process ended (a crash, its memory ceiling): the page is loaded again in a new
    /// one and every box built again as it was, with its state, lock and the user's draft, and
    /// its guard restarted; the agent hears nothing (R-STD-15). More than [`MAX_RERENDERS`]
    /// ends within [`RERENDER_WINDOW`] fail every box (`renderer_failed`).
    fn crashed(&self) {
        let now = Instant::now();
        let recent = {
            let mut crashes = self.crashes.borrow_mut();
            crashes.retain(|at| now.duration_since(*at) < RERENDER_WINDOW);
            crashes.push(now);
            crashes.len()
        };
        if recent > MAX_RERENDERS {
            tracing::warn!("a component board's web process ended again; its instances fail");
            for member in self.all() {
                member.end(ComponentAction::Failed);
            }
            return;
        }
        tracing::warn!("a component board's web process ended; its boxes are built again");
        self.ready.set(false);
        self.rebuild.set(true);
        self.layout.borrow_mut().clear();
        *self.focused.borrow_mut() = None;
        self.key_credit.set(None);
        self.restart_all("built again");
        webkit2gtk::WebViewExt::reload(self.view.widget());
    }

    /// Adds every box again, in slot order, as it shows now.
    fn build_again(&self) {
        let mut members: Vec<(u64, String, Rc<Member>)> = self
            .members
            .borrow()
            .iter()
            .map(|(slot, m)| {
                let number = slot.trim_start_matches('b').parse().unwrap_or(u64::MAX);
                (number, slot.clone(), Rc::clone(m))
            })
            .collect();
        members.sort_by_key(|(number, _, _)| *number);
        for (_, slot, member) in members {
            self.view
                .evaluate(&add_script(&slot, &member.content()), Box::new(|_| {}));
        }
    }

    /// The page drew its boxes anew: each box that moved or changed size restarts its guard
    /// (R-STD-8 (b)), and the view takes the boxes' height.
    fn relaid(&self, height: f64, boxes: Vec<LayoutBox>) {
        {
            let old = self.layout.borrow();
            for next in &boxes {
                let moved = old
                    .iter()
                    .find(|b| b.slot() == next.slot())
                    .is_none_or(|b| next.moved_from(b));
                if moved {
                    if let Some(member) = self.member(next.slot()) {
                        member.restart_guard("its box moved");
                    }
                }
            }
        }
        *self.layout.borrow_mut() = boxes;
        self.frame.fit(self.view.widget(), Some(height));
    }

    /// `slot` left: the boxes after it move up, so their guards restart now, before the page
    /// reports the new layout.
    fn layout_removed(&self, slot: &str) {
        let mut layout = self.layout.borrow_mut();
        if let Some(index) = layout.iter().position(|b| b.slot() == slot) {
            for after in layout.iter().skip(index + 1) {
                if let Some(member) = self.member(after.slot()) {
                    member.restart_guard("a box above it closed");
                }
            }
            layout.remove(index);
        }
    }

    fn instance_message(&self, member: &Rc<Member>, slot: &str, message: PageMessage) {
        let action = match message {
            PageMessage::Rendered {} => return self.shown(member),
            PageMessage::Submit { answer } => self
                .credit(member, slot)
                .map(|input| ComponentAction::Submit { answer, input }),
            PageMessage::Cancel {} => self
                .credit(member, slot)
                .map(|input| ComponentAction::Cancel { input }),
            PageMessage::Link { url } => self
                .credit(member, slot)
                .map(|input| ComponentAction::Link { url, input }),
            PageMessage::Draft { draft } => {
                member.note_draft(&draft);
                if member.is_shown() {
                    member.report(ComponentAction::Draft(draft));
                }
                return;
            }
            PageMessage::Dismiss {} => match self.credit(member, slot) {
                Some(_) => {
                    member.end(ComponentAction::Close);
                    return;
                }
                None => None,
            },
        };
        match action {
            Some(action) => member.report(action),
            None => tracing::debug!(
                "component answer without a real input event in its box after its guard delay; \
                 dropped"
            ),
        }
    }

    /// The credit of `member`'s answer, used up now (R-STD-8 (a)): a pointer or touch event
    /// in its box, else a key when its box holds the focus.
    fn credit(&self, member: &Member, slot: &str) -> Option<InputKind> {
        let accepts = self.accepts(member);
        if let Some(kind) = member.take_credit(accepts) {
            return Some(kind);
        }
        let focused = self.focused.borrow().as_deref() == Some(slot);
        let key = self.key_credit.take()?;
        (accepts && focused && key.elapsed() <= CREDIT_LIFETIME).then_some(InputKind::Keyboard)
    }

    /// `member`'s box was built: the board is shown (a window mapped and raised the first
    /// time, taking the keyboard; a view in a parent without taking it: the user clicks or
    /// tabs into it).
    fn shown(&self, member: &Member) {
        if !member.mark_shown() || !self.visible.get() {
            return;
        }
        if self.mapped.replace(true) {
            return;
        }
        self.frame.show(self.view.widget());
        self.restart_all("shown");
    }

    /// The member whose box holds (`x`, `y`) in the last layout.
    fn member_at(&self, x: f64, y: f64) -> Option<Rc<Member>> {
        let slot = self
            .layout
            .borrow()
            .iter()
            .find(|b| b.contains(x, y))
            .map(|b| b.slot().to_owned())?;
        self.member(&slot)
    }

    /// The member whose box holds the keyboard focus.
    fn focused_member(&self) -> Option<Rc<Member>> {
        let slot = self.focused.borrow().clone()?;
        self.member(&slot)
    }

    /// A key goes to the page unless the box the host knows holds the focus is inside its
    /// guard delay, or it is Enter and that box does not take Enter. While the focus is not
    /// known (it just moved), the page's own rules hold: Enter activates no button there.
    /// WebKit hands a key the page did not handle back to the toplevel, so such a key comes
    /// here twice; the second time it is dropped or passed on like the first, and a release
    /// grants a credit only for the box holding the focus when an answer comes.
    fn key_press(&self, event: &gdk::EventKey) -> glib::Propagation {
        let member = self.focused_member();
        if member.as_deref().is_some_and(|m| !self.accepts(m)) {
            self.swallowed_keys
                .borrow_mut()
                .insert(event.hardware_keycode());
            return glib::Propagation::Stop;
        }
        if is_enter(event) && member.is_some_and(|m| !m.takes_enter()) {
            return glib::Propagation::Stop;
        }
        glib::Propagation::Proceed
    }

    fn key_release(&self, event: &gdk::EventKey) -> glib::Propagation {
        let swallowed = self
            .swallowed_keys
            .borrow_mut()
            .remove(&event.hardware_keycode());
        let member = self.focused_member();
        if swallowed || (is_enter(event) && member.as_ref().is_some_and(|m| !m.takes_enter())) {
            return glib::Propagation::Stop;
        }
        if event.keyval() == gdk::keys::constants::Escape {
            if let Some(member) = member {
                if !event.is_send_event() && self.accepts(&member) {
                    member.report(ComponentAction::Cancel {
                        input: InputKind::Keyboard,
                    });
                }
            }
            return glib::Propagation::Stop;
        }
        // The page acts on a key's release (a button's Space) or press (a radio's arrows):
        // either finds the credit of this release or of the press before it.
        if !event.is_send_event() {
            self.key_credit.set(Some(Instant::now()));
        }
        glib::Propagation::Proceed
    }

    fn button_press(&self, event: &gdk::EventButton) -> glib::Propagation {
        let (x, y) = event.position();
        match self.member_at(x, y) {
            Some(member) if !self.accepts(&member) => {
                tracing::debug!("component click inside its guard delay ignored");
                self.swallowed_buttons.borrow_mut().insert(event.button());
                glib::Propagation::Stop
            }
            _ => glib::Propagation::Proceed,
        }
    }

    fn button_release(&self, event: &gdk::EventButton) -> glib::Propagation {
        if self.swallowed_buttons.borrow_mut().remove(&event.button()) {
            return glib::Propagation::Stop;
        }
        let (x, y) = event.position();
        if let Some(member) = self.member_at(x, y) {
            if self.accepts(&member) {
                member.grant(InputKind::Pointer, event.is_send_event());
            }
        }
        glib::Propagation::Proceed
    }

    fn touch(&self, event: &gdk::Event) -> glib::Propagation {
        let Some((x, y)) = event.coords() else {
            return glib::Propagation::Stop;
        };
        let Some(member) = self.member_at(x, y) else {
            return glib::Propagation::Proceed;
        };
        if !self.accepts(&member) {
            return glib::Propagation::Stop;
        }
        if event.event_type() == gdk::EventType::TouchEnd {
            member.grant(InputKind::Touch, event.is_send_event());
        }
        glib::Propagation::Proceed
    }

    /// A map, a focus, a move or a raise of the window restarts every guard (R-STD-8 (b)).
    fn window_event(&self, event: &gdk::Event) {
        let why = match event.event_type() {
            gdk::EventType::Map => "mapped",
            gdk::EventType::Configure => "moved or raised",
            gdk::EventType::FocusChange
                if event
                    .downcast_ref::<gdk::EventFocus>()
                    .is_some_and(|f| f.is_in()) =>
            {
                "focused"
            }
            _ => return,
        };
        self.restart_all(why);
    }
}

impl Drop for Board {
    fn drop(&mut self) {
        for member in self.members.borrow().values() {
            member.forget();
        }
        self.frame.tear_down(self.view.widget());
    }
}

impl GuardedWindow for Board {
    fn window(&self) -> &gtk::Window {
        self.frame.toplevel()
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

    /// The window manager's close button closes every instance, as the user's close.
    fn on_close_requested(&self) {
        self.window().hide();
        self.mapped.set(false);
        for member in self.all() {
            member.end(ComponentAction::Close);
        }
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

/// Whether `event` is one of the Enter keys.
fn is_enter(event: &gdk::EventKey) -> bool {
    use gdk::keys::constants as key;
    [key::Return, key::KP_Enter, key::ISO_Enter].contains(&event.keyval())
}

/// Reports a failure when the box is never built.
fn watch_render(member: &Rc<Member>) {
    let weak = Rc::downgrade(member);
    glib::timeout_add_local_once(RENDER_TIMEOUT, move || {
        if let Some(member) = weak.upgrade() {
            if !member.is_shown() && !member.is_ended() {
                tracing::error!("a component's box was not built; it fails");
                member.end(ComponentAction::Failed);
            }
        }
    });
}
