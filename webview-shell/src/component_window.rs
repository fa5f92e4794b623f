//! The built-in renderer's window for one standard component instance (R-STD-8, R-STD-9):
//! what the host shows a [`ShownComponent`](lineup_host_core::ShownComponent) in when no
//! embedder renders it.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::{Duration, Instant};

use lineup_host_core::{JsonObject, SafeMarkdown};
use tao::event_loop::EventLoopWindowTarget;
use tao::window::Window;

use crate::component_snapshot::ComponentSnapshot;
use crate::components::COMPONENT_STACK_TITLE;
use crate::components::{update_script, ComponentAction, ComponentContent, ComponentOptions};
use crate::config::Rect;
use crate::error::ShellError;
use crate::platform::{
    check_display, PlatformComponent, PlatformComponentProcess, PlatformComponentStack,
    PlatformPlace,
};

/// One standard component shown by the host itself: a trusted, host-owned window apart from
/// every Surface, titled [`component_window_title`](crate::component_window_title).
///
/// - The window shows one host-written document for every component id; the component's
///   cleaned props and state and its Markdown tree reach it as inert JSON, and its script
///   builds the page with `createElement` and `textContent` only. Links are inert text.
/// - Input is taken only after the guard delay ([`ComponentOptions`]) since the window was
///   mapped, focused or shown, and each answer needs a real input event in this window within
///   the last second, used once (R-STD-8); Enter never reaches the page; Escape is
///   [`ComponentAction::Cancel`].
/// - Dropping it closes the window.
///
/// ## Platform-specific
/// Linux: a GTK window holding a WebKitGTK view with its own ephemeral context (sandboxed,
/// all network refused) under a nonce CSP. Elsewhere [`ComponentWindow::new`] fails with
/// [`ShellError::Unsupported`].
pub struct ComponentWindow {
    platform: PlatformComponent,
    /// What the page shows now: the last state and Markdown given to it.
    shown: RefCell<(JsonObject, Option<SafeMarkdown>)>,
    /// When a patch last restarted the guard delay.
    patch_restart: Cell<Option<Instant>>,
}

/// Patches restart the guard delay at most this often, so that an agent cannot keep a question
/// unanswerable by patching it (R-STD-8 (b)).
pub const PATCH_GUARD_INTERVAL: Duration = Duration::from_secs(2);

impl ComponentWindow {
    /// Starts rendering `content`; the window is shown once its document has rendered.
    /// `on_action` hears, on the event-loop thread from the main loop (never from inside a
    /// method of this window), what the user did; `target` proves that this is that thread.
    pub fn new<T: 'static>(
        target: &EventLoopWindowTarget<T>,
        content: &ComponentContent,
        options: &ComponentOptions,
        on_action: impl Fn(ComponentAction) + 'static,
    ) -> Result<Self, ShellError> {
        Self::create(
            target,
            None,
            PlatformPlace::Own,
            content,
            options,
            Rc::new(on_action),
        )
    }

    /// [`ComponentWindow::new`], with the view in `process`: the web process this window shares
    /// with the other component windows of the same conversation.
    pub fn in_process<T: 'static>(
        target: &EventLoopWindowTarget<T>,
        process: &ComponentProcess,
        content: &ComponentContent,
        options: &ComponentOptions,
        on_action: impl Fn(ComponentAction) + 'static,
    ) -> Result<Self, ShellError> {
        let place = PlatformPlace::Own;
        Self::create(
            target,
            Some(process),
            place,
            content,
            options,
            Rc::new(on_action),
        )
    }

    /// [`ComponentWindow::new`], with the view stacked at the bottom of `stack`, its
    /// conversation's window, in the web process of the stack (R-STD-13). Dropping it takes
    /// the view out of the stack; the stack's window hides once it holds none.
    pub fn in_stack<T: 'static>(
        target: &EventLoopWindowTarget<T>,
        stack: &ComponentStack,
        content: &ComponentContent,
        options: &ComponentOptions,
        on_action: impl Fn(ComponentAction) + 'static,
    ) -> Result<Self, ShellError> {
        let place = PlatformPlace::Stacked(&stack.platform);
        Self::create(
            target,
            Some(&stack.process),
            place,
            content,
            options,
            Rc::new(on_action),
        )
    }

    /// [`ComponentWindow::new`], with the view in `parent` (an embedder's window, or the
    /// kiosk's) at `bounds`, in logical pixels of its content area: in a layer over the
    /// Surfaces' child views, so a component is never under a Surface's pixels (R-STD-13), in
    /// `process` when given. The view does not take the keyboard when shown; its content's
    /// height comes as [`ComponentAction::Resized`], for [`ComponentWindow::set_bounds`].
    pub fn in_parent<T: 'static>(
        target: &EventLoopWindowTarget<T>,
        parent: &Window,
        bounds: Rect,
        process: Option<&ComponentProcess>,
        content: &ComponentContent,
        options: &ComponentOptions,
        on_action: impl Fn(ComponentAction) + 'static,
    ) -> Result<Self, ShellError> {
        let place = PlatformPlace::Child { parent, bounds };
        Self::create(target, process, place, content, options, Rc::new(on_action))
    }

    /// Moves a view made by [`ComponentWindow::in_parent`] to `bounds` (restarting its guard
    /// delay: what is under the pointer changed); nothing for a window.
    pub fn set_bounds(&self, bounds: Rect) {
        self.platform.set_bounds(bounds);
    }

    fn create<T: 'static>(
        target: &EventLoopWindowTarget<T>,
        process: Option<&ComponentProcess>,
        place: PlatformPlace<'_>,
        content: &ComponentContent,
        options: &ComponentOptions,
        on_action: Rc<dyn Fn(ComponentAction)>,
    ) -> Result<Self, ShellError> {
        let _ = target;
        check_display()?;
        let process = process.map(|p| &p.platform);
        let platform = PlatformComponent::new(content, options, process, place, on_action)?;
        let state = JsonObject::try_from(serde_json::Value::Object(content.state.clone()))
            .unwrap_or_default();
        Ok(Self {
            platform,
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
        self.platform.run(&update_script(state, markdown, reopened));
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
    /// host, as its script would (with its view's token, when its process is shared), with no
    /// input event behind it (R-STD-8 must drop an answer so made).
    #[cfg(feature = "test-controls")]
    pub fn post_from_page_for_test(&self, message: &str) {
        let literal = serde_json::Value::String(message.to_owned()).to_string();
        self.platform.run(&format!(
            "(function () {{ var m = JSON.parse({literal}); \
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

/// A web process that the component windows of one conversation share (§4 of
/// standard-components.md): each window's view is a related view of the others', in one
/// sandboxed, ephemeral context with all network refused, so a component costs a view, not a
/// process. Views are told apart by a random token in each host-written document; no agent code
/// runs in any of them. Dropping it lets the process end with its last window.
///
/// ## Platform-specific
/// Linux only; elsewhere [`ComponentProcess::new`] fails with [`ShellError::Unsupported`].
#[derive(Clone)]
pub struct ComponentProcess {
    platform: PlatformComponentProcess,
}

impl ComponentProcess {
    /// A new shared context; its web process starts with the first window.
    pub fn new() -> Result<Self, ShellError> {
        Ok(Self {
            platform: PlatformComponentProcess::new()?,
        })
    }
}

/// The window a conversation's standard components stack in, in open order (R-STD-13), titled
/// [`COMPONENT_STACK_TITLE`], with the web process they share ([`ComponentProcess`]). The stack
/// hands each component the input meant for it: keys to the one whose view has the focus; a
/// map, a focus or a change of the column's layout restarts every component's guard delay
/// (R-STD-8 (b)); the close button closes each one as the user's close.
///
/// ## Platform-specific
/// Linux only; elsewhere [`ComponentStack::new`] fails with [`ShellError::Unsupported`].
#[derive(Clone)]
pub struct ComponentStack {
    process: ComponentProcess,
    platform: PlatformComponentStack,
}

impl ComponentStack {
    /// A new, empty stack; its window is mapped with its first shown component.
    pub fn new() -> Result<Self, ShellError> {
        check_display()?;
        Ok(Self {
            process: ComponentProcess::new()?,
            platform: PlatformComponentStack::new(COMPONENT_STACK_TITLE),
        })
    }
}
