//! The built-in renderer's window for one standard component instance (R-STD-8, R-STD-9):
//! what the host shows a [`ShownComponent`](lineup_host_core::ShownComponent) in when no
//! embedder renders it.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::{Duration, Instant};

use crate::windows::WindowMaker;
use lineup_host_core::{JsonObject, SafeMarkdown};
use tao::window::Window;

use crate::component_snapshot::ComponentSnapshot;
use crate::components::{ComponentAction, ComponentContent, ComponentOptions};
use crate::config::Rect;
use crate::error::ShellError;
use crate::platform::{
    check_display, PlatformBoard, PlatformBoardPlace, PlatformComponent, PlatformComponentProcess,
};

/// One standard component shown by the host itself: a box in a [`ComponentBoard`], trusted,
/// host-owned, apart from every Surface.
///
/// - The board shows one host-written document for every component id; the component's
///   cleaned props and state and its Markdown tree reach it as inert JSON, and its script
///   builds the box with `createElement` and `textContent` only. Links are host controls.
/// - Input is taken only after the guard delay ([`ComponentOptions`]) since the board's window
///   was mapped, focused, moved or raised, the board shown again, or this box moved; each answer
///   needs a real input event in this box within the last second, used once (R-STD-8); Enter
///   never reaches a confirm or a choice; Escape is [`ComponentAction::Cancel`].
/// - Dropping it takes its box out of the board.
///
/// ## Platform-specific
/// Linux: a box in a WebKitGTK view with an ephemeral context (sandboxed, all network refused)
/// under a nonce CSP. Elsewhere [`ComponentWindow::new`] fails with [`ShellError::Unsupported`].
pub struct ComponentWindow {
    platform: PlatformComponent,
    /// A board of its own, made by [`ComponentWindow::new`].
    _own: Option<ComponentBoard>,
    /// What the box shows now: the last state and Markdown given to it.
    shown: RefCell<(JsonObject, Option<SafeMarkdown>)>,
    /// When a patch last restarted the guard delay.
    patch_restart: Cell<Option<Instant>>,
}

/// Patches restart the guard delay at most this often, so that an agent cannot keep a question
/// unanswerable by patching it (R-STD-8 (b)).
pub const PATCH_GUARD_INTERVAL: Duration = Duration::from_secs(2);

impl ComponentWindow {
    /// Shows `content` in a window of its own (a board holding only it, titled
    /// [`component_window_title`](crate::component_window_title)), shown once its box was built.
    /// `on_action` hears, on the event-loop thread from the main loop (never from inside a
    /// method of this window), what the user did; `target` proves that this is that thread.
    pub fn new(
        target: &dyn WindowMaker,
        content: &ComponentContent,
        options: &ComponentOptions,
        on_action: impl Fn(ComponentAction) + 'static,
    ) -> Result<Self, ShellError> {
        let board = ComponentBoard::create(
            target,
            PlatformBoardPlace::Window {
                title: &crate::component_window_title(content.kind, &options.language()),
            },
            None,
            options,
        )?;
        let mut window = Self::in_board(target, &board, content, options, on_action)?;
        window._own = Some(board);
        Ok(window)
    }

    /// Shows `content` as a box at the bottom of `board`, built with `options`' guard delay;
    /// dropping it takes the box out (a window board hides once it holds none).
    pub fn in_board(
        target: &dyn WindowMaker,
        board: &ComponentBoard,
        content: &ComponentContent,
        options: &ComponentOptions,
        on_action: impl Fn(ComponentAction) + 'static,
    ) -> Result<Self, ShellError> {
        let _ = target;
        check_display()?;
        let platform =
            PlatformComponent::new(&board.platform, content, options, Rc::new(on_action));
        let state = JsonObject::try_from(serde_json::Value::Object(content.state.clone()))
            .unwrap_or_default();
        Ok(Self {
            platform,
            _own: None,
            shown: RefCell::new((state, content.markdown.clone())),
            patch_restart: Cell::new(None),
        })
    }

    /// Shows `state` (and its Markdown) in place of the old; `reopened` unlocks the page for a
    /// new round. A change the user sees starts the guard delay again, at most once per
    /// [`PATCH_GUARD_INTERVAL`]; a patch that changes nothing shown (and reopens nothing) does
    /// not touch the page or the guard (R-STD-8 (b)).
    pub fn update(&self, state: &JsonObject, markdown: Option<&SafeMarkdown>, reopened: bool) {
        let next = (state.clone(), markdown.cloned());
        if !reopened && *self.shown.borrow() == next {
            return;
        }
        self.platform.update(state, markdown, reopened);
        *self.shown.borrow_mut() = next;
        let due = self
            .patch_restart
            .get()
            .is_none_or(|at| at.elapsed() >= PATCH_GUARD_INTERVAL);
        if due {
            self.patch_restart.set(Some(Instant::now()));
            self.platform.restart_guard("updated");
        }
    }

    /// Locks the page: the round was answered (R-STD-7).
    pub fn lock(&self) {
        self.platform.lock();
    }

    /// Whether the window is shown and its guard delay has passed.
    pub fn accepts_input(&self) -> bool {
        self.platform.accepts_input()
    }

    /// Whether the window is on screen: its document rendered and it was mapped.
    pub fn is_shown(&self) -> bool {
        self.platform.is_shown()
    }

    /// A control for activation tests: the page itself posts `message` (a JSON object) to the
    /// host as this box's script would (with its slot, and its board's token), with no input
    /// event behind it (R-STD-8 must drop an answer so made).
    #[cfg(feature = "test-controls")]
    pub fn post_from_page_for_test(&self, message: &str) {
        let literal = serde_json::Value::String(message.to_owned()).to_string();
        let slot = serde_json::Value::String(self.platform.slot().to_owned()).to_string();
        self.platform.run(format!(
            "(function () {{ var m = JSON.parse({literal}); m.slot = {slot}; \
             var d = JSON.parse(document.getElementById('data').textContent); \
             if (d.token) {{ m.token = d.token; }} \
             window.webkit.messageHandlers.lineupHost.postMessage(JSON.stringify(m)); }})(); 'ok'"
        ));
    }

    /// A control for activation tests: a press and a release of the key `keyval` (a GDK
    /// keysym), each flagged `send_event` as a key another program forged would be, fed to
    /// this window through the toolkit's main dispatch (R-STD-8 must drop an answer it makes).
    #[cfg(feature = "test-controls")]
    pub fn forge_key_for_test(&self, keyval: u32) {
        self.platform.forge_key(keyval);
    }

    /// A control for checks: a real left click through the X server's XTEST extension at the
    /// middle of the element `id` of this box (`confirm`, say), where it shows now, so the page
    /// sees trusted input as from a person's mouse; `done` hears on the event-loop thread
    /// whether the click was sent.
    #[cfg(feature = "test-controls")]
    pub fn click_for_test(&self, id: &str, done: impl FnOnce(Result<(), ShellError>) + 'static) {
        self.platform.click_for_test(id, Box::new(done));
    }

    /// WebKit's own snapshot of the window's whole document as PNG bytes, taken after two
    /// animation frames (`lineup preview --screenshot` of a component); `done` hears it on the
    /// event-loop thread.
    pub fn snapshot_png(&self, done: impl FnOnce(Result<Vec<u8>, ShellError>) + 'static) {
        self.platform.snapshot_png(Box::new(done));
    }

    /// Reads back what the window's page shows; `done` hears it on the event-loop thread
    /// (`None` when the page could not be read).
    pub fn snapshot(&self, done: impl FnOnce(Option<ComponentSnapshot>) + 'static) {
        self.platform.snapshot(Box::new(done));
    }
}

/// A web process that every component board of a host shares (§4 of standard-components.md):
/// each board's view is a related view of the others', in one sandboxed, ephemeral context with
/// all network refused, so a board costs a view, not a process. Boards are told apart by a random
/// token in each host-written document; no agent code runs in any of them. Dropping it lets the
/// process end with its last board.
///
/// ## Platform-specific
/// Linux only; elsewhere [`ComponentProcess::new`] fails with [`ShellError::Unsupported`].
#[derive(Clone)]
pub struct ComponentProcess {
    platform: PlatformComponentProcess,
}

impl ComponentProcess {
    /// A new shared context; its web process starts with the first board.
    pub fn new() -> Result<Self, ShellError> {
        Ok(Self {
            platform: PlatformComponentProcess::new()?,
        })
    }
}

/// One trusted view for every standard component of one placement target (R-STD-13, §4 of
/// standard-components.md): a conversation's window of its own, or a region of an embedder's
/// (or the kiosk's) window. Each [`ComponentWindow`] in it is a box, in open order; a further
/// component adds a box, not a view or a process. The board hands each box the input meant for
/// it (R-STD-8 per instance): a pointer or touch event to the box under it in the layout last
/// drawn, a key to the box holding the focus.
///
/// ## Platform-specific
/// Linux only; elsewhere its constructors fail with [`ShellError::Unsupported`].
#[derive(Clone)]
pub struct ComponentBoard {
    platform: PlatformBoard,
}

impl ComponentBoard {
    /// A conversation's window of its own, titled [`COMPONENT_STACK_TITLE`](crate::COMPONENT_STACK_TITLE) in `options`'
    /// language ([`component_board_title`](crate::component_board_title)), in `process` when
    /// given: mapped with its first shown box, as tall as its boxes up to 720 px (then it
    /// scrolls), hidden when it holds none (R-STD-13). `options` gives its look.
    pub fn window(
        target: &dyn WindowMaker,
        process: Option<&ComponentProcess>,
        options: &ComponentOptions,
    ) -> Result<Self, ShellError> {
        let title = crate::component_board_title(&options.language());
        let place = PlatformBoardPlace::Window { title: &title };
        Self::create(target, place, process, options)
    }

    /// A board in `parent` (an embedder's window, or the kiosk's) in `area`, logical pixels of
    /// its content area: in a layer over the Surfaces' child views, so a component is never
    /// under a Surface's pixels (R-STD-13); as tall as its boxes, at most `area`, then it
    /// scrolls. It does not take the keyboard when shown.
    pub fn in_parent(
        target: &dyn WindowMaker,
        parent: &Window,
        area: Rect,
        process: Option<&ComponentProcess>,
        options: &ComponentOptions,
    ) -> Result<Self, ShellError> {
        Self::create(
            target,
            PlatformBoardPlace::Child { parent, area },
            process,
            options,
        )
    }

    fn create(
        target: &dyn WindowMaker,
        place: PlatformBoardPlace<'_>,
        process: Option<&ComponentProcess>,
        options: &ComponentOptions,
    ) -> Result<Self, ShellError> {
        let _ = target;
        check_display()?;
        let process = process.map(|p| &p.platform);
        Ok(Self {
            platform: PlatformBoard::new(place, process, options)?,
        })
    }

    /// Moves a board made by [`ComponentBoard::in_parent`] to `area` (every box's guard delay
    /// restarts: what is under the pointer changed); nothing for a window.
    pub fn set_area(&self, area: Rect) {
        self.platform.set_area(area);
    }

    /// Hides or shows the board (its conversation is hidden or shown): a hidden board's boxes
    /// take no input, and showing it again restarts every box's guard delay (R-STD-8 (a), (b)).
    pub fn set_visible(&self, visible: bool) {
        self.platform.set_visible(visible);
    }

    /// Whether it holds no box.
    pub fn is_empty(&self) -> bool {
        self.platform.is_empty()
    }

    /// Whether it was made by [`ComponentBoard::in_parent`].
    pub fn is_in_parent(&self) -> bool {
        self.platform.is_in_parent()
    }
}
