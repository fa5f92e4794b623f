//! The Surface webview on Linux: wry over WebKitGTK, with the hardening wry does not expose done
//! through the `webkit2gtk` crate wry itself is built on.
//!
//! Each view gets its own ephemeral `WebKitWebContext`, created here so that the web-process
//! sandbox can be switched on before that context starts any process (R-SEC-8). wry cannot be
//! handed such a context, so the wry view is built as a *related view* of a blank seed view of
//! that context, which puts it in the same context; the custom scheme and the download refusal are
//! registered on the context directly.

use std::cell::RefCell;

use std::rc::Rc;

use gtk::glib::{self, prelude::*};
use gtk::prelude::*;
use lineup_surface_runtime::{DeliveryKey, SurfaceDocument, SurfaceServer};

use crate::delivery::{DeliveryQueue, DeliveryStats};
use crate::windows::WindowMaker;
use tao::dpi::{LogicalPosition, LogicalSize};
use tao::event::WindowEvent;
use tao::platform::unix::WindowExtUnix;
use tao::window::{Window, WindowBuilder, WindowId};
use webkit2gtk::{
    SettingsExt, UserContentManagerExt, WebContextExt, WebViewExt, WebsiteDataManagerExt,
};
use wry::{WebViewBuilder, WebViewBuilderExtUnix, WebViewExtUnix};

mod board;
mod board_frame;
mod board_member;
mod clipboard;
mod components;
mod context;
pub(crate) mod desktop;
mod events;
mod features;
#[cfg(feature = "test-controls")]
mod forged;
mod frames;
mod guard;
mod handlers;
mod harden;
mod layers;
mod mcp_relay;
mod network;
mod notice;
mod placeholder;
#[cfg(feature = "test-controls")]
mod pointer;
mod processes;
mod prompt;
mod shared_trusted;
mod snapshot;
mod standby;
mod theme;
mod trusted;
mod wake_timer;
mod watchdog;
mod window_pixels;

pub(crate) use board::{PlatformBoard, PlatformBoardPlace};
pub(crate) use components::PlatformComponent;
pub(crate) use layers::{container_size, watch_container, PlatformContainer};
pub(crate) use notice::PlatformNotice;
pub(crate) use placeholder::PlatformPlaceholder;
pub(crate) use processes::{check_web_processes_sandboxed, web_processes};
pub(crate) use prompt::{PlatformPrompt, PromptParent};
pub(crate) use shared_trusted::SharedTrusted as PlatformComponentProcess;
pub(crate) use standby::PlatformStandby;
pub use theme::{apply_theme, desktop_high_contrast, theme_is_dark};
pub(crate) use wake_timer::PlatformWakeTimer;
pub use window_pixels::{screen_pixels_of, window_pixels};

use clipboard::CLIPBOARD_FEATURES;
use context::{finish_request, memory_pressure, surface_context};
use events::{push, EventQueue};
use features::feature_enabled;
use handlers::disconnect_all_handlers;
use harden::{harden, termination_words};
use layers::child_container;
pub(crate) use network::refuse_all_network;

use crate::config::{Placement, Rect, ViewConfig};
use crate::error::ShellError;
use crate::event::ViewEvent;
use crate::gate::Gate;
use crate::hardening::Hardening;
use crate::view_start::ViewStart;

/// Where the view sits: a window it owns, or a `gtk::Fixed` inside the embedder's window.
enum Container {
    Window(Box<Window>),
    Child(gtk::Fixed),
}

/// How the page talks to the host: a Surface's bridge, or an MCP App view's relay.
enum Channel {
    /// The `LineUpSurface` bridge, a user script of the top frame with the secret of this
    /// view's state entry point, which only the bridge and this view know (R-UI-6); wry's `ipc`
    /// handler in the page world.
    Bridge(DeliveryKey),
    /// The relay of a script world of the host's own; no page-world handler (R-MCP-7).
    McpRelay,
}

/// One hardened Surface webview.
pub(crate) struct PlatformView {
    // Field order is drop order: the wry view is destroyed first, the context last.
    webview: wry::WebView,
    engine_view: webkit2gtk::WebView,
    /// Blank, never loads anything; it only lent its context to `webview`.
    _seed: webkit2gtk::WebView,
    container: Container,
    context: webkit2gtk::WebContext,
    queue: Rc<EventQueue>,
    url: String,
    /// States waiting for the one in flight to finish (R-UI-3).
    deliveries: Rc<std::cell::RefCell<DeliveryQueue>>,
    /// The bridge with its delivery key, or the MCP relay.
    channel: Channel,
    /// What the Surface scheme answers; shared with the context's scheme handler so that an
    /// embedder's reload can swap the document under the same token.
    server: Rc<RefCell<SurfaceServer>>,
    /// How many presses (buttons, keys, touches) reached the view so far.
    presses: Rc<std::cell::Cell<u64>>,
}

impl PlatformView {
    /// Creates the view, hardens it and starts loading `server`'s document.
    pub(crate) fn new(
        target: &dyn WindowMaker,
        server: SurfaceServer,
        config: &ViewConfig,
        placement: Placement<'_>,
        start: ViewStart,
        sink: Box<dyn Fn(ViewEvent)>,
        gate: Rc<Gate>,
    ) -> Result<Self, ShellError> {
        let visible = start.visible();
        let queue = EventQueue::new(sink);
        let url = server.url();
        // The phases of an open, for `lineup-bench`'s profile (#12); off unless a subscriber
        // asks for the `lineup_phase` target.
        tracing::debug!(target: "lineup_phase", phase = "view_start", %url);
        let server = Rc::new(RefCell::new(server));
        let channel = if start.is_mcp_app() {
            Channel::McpRelay
        } else {
            let mut key = [0u8; 16];
            getrandom::fill(&mut key)
                .map_err(|e| ShellError::Platform(format!("no random source: {e}")))?;
            Channel::Bridge(DeliveryKey::from_random_bytes(key))
        };
        let bridge = match &channel {
            Channel::Bridge(key) => Some(key),
            Channel::McpRelay => None,
        };

        let context = surface_context(config, Rc::clone(&server), &queue, gate)?;
        tracing::debug!(target: "lineup_phase", phase = "context_created", %url);
        // A blank view of the new context; the wry view is created as its related view, which
        // puts it in this context and nowhere else.
        let seed = webkit2gtk::WebView::with_context(&context);

        let (container, webview) = match placement {
            Placement::Window {
                title,
                width,
                height,
            } => {
                let window = target
                    .build_window(
                        WindowBuilder::new()
                            .with_title(title)
                            .with_inner_size(LogicalSize::new(width, height))
                            .with_visible(visible),
                    )
                    .map_err(|e| ShellError::Platform(format!("cannot create a window: {e}")))?;
                let vbox = window.default_vbox().ok_or(ShellError::NoContainer)?;
                let webview = wry_builder(config, &seed, &queue, bridge, visible)
                    .build_gtk(vbox)
                    .map_err(wry_error)?;
                (Container::Window(Box::new(window)), webview)
            }
            Placement::Child { parent, bounds } => {
                let fixed = child_container(parent)?;
                let webview = wry_builder(config, &seed, &queue, bridge, visible)
                    .with_bounds(wry_rect(bounds))
                    .build_gtk(&fixed)
                    .map_err(wry_error)?;
                (Container::Child(fixed), webview)
            }
        };

        let engine_view = webview.webview();
        // Fail closed if the view did not end up in the context prepared above.
        if engine_view.context().as_ref() != Some(&context) {
            return Err(ShellError::Platform(
                "the webview was not created in its own web context".to_owned(),
            ));
        }
        harden(&engine_view, config, &url, &queue);
        if matches!(channel, Channel::McpRelay) {
            mcp_relay::install(&engine_view, config.max_mcp_message_bytes(), &queue)?;
        }
        let presses = Rc::new(std::cell::Cell::new(0u64));
        for signal in ["button-press-event", "key-press-event", "touch-event"] {
            let counted = Rc::clone(&presses);
            engine_view.connect_local(signal, false, move |_| {
                counted.set(counted.get() + 1);
                Some(false.to_value())
            });
        }

        // Loaded only now that every policy handler is connected.
        webview.load_url(&url).map_err(wry_error)?;
        tracing::debug!(target: "lineup_phase", phase = "load_started", %url);

        Ok(Self {
            webview,
            engine_view,
            _seed: seed,
            container,
            context,
            queue,
            url,
            deliveries: Rc::default(),
            channel,
            server,
            presses,
        })
    }

    /// How many presses (buttons, keys, touches) reached the view so far.
    pub(crate) fn presses(&self) -> u64 {
        self.presses.get()
    }

    /// Gives a pool view (started hidden, its document request held at its gate) to a Surface:
    /// `server` (under the token the view was started with) answers its scheme from now on, and
    /// the window gets the Surface's title and size and is shown. The caller opens the gate.
    pub(crate) fn bind(
        &self,
        server: SurfaceServer,
        title: &str,
        width: u32,
        height: u32,
    ) -> Result<(), ShellError> {
        if server.url() != self.url {
            return Err(ShellError::Platform(
                "a pool view can only serve the token it was started with".to_owned(),
            ));
        }
        *self.server.borrow_mut() = server;
        if let Container::Window(window) = &self.container {
            window.set_title(title);
            window.set_inner_size(LogicalSize::new(width, height));
            window.set_visible(true);
        }
        self.webview.set_visible(true).map_err(wry_error)?;
        self.webview.focus().map_err(wry_error)?;
        Ok(())
    }

    /// Gives a pool view started as a hidden child view to a Surface: `server` answers its
    /// scheme from now on, and the view is placed at `bounds` and shown, as a cold child view
    /// opens. The caller opens the gate.
    pub(crate) fn bind_child(&self, server: SurfaceServer, bounds: Rect) -> Result<(), ShellError> {
        if server.url() != self.url {
            return Err(ShellError::Platform(
                "a pool view can only serve the token it was started with".to_owned(),
            ));
        }
        *self.server.borrow_mut() = server;
        self.set_bounds(bounds)?;
        self.webview.set_visible(true).map_err(wry_error)?;
        self.webview.focus().map_err(wry_error)?;
        Ok(())
    }

    /// Whether the view is a child view of an embedder's window.
    pub(crate) fn is_child(&self) -> bool {
        matches!(self.container, Container::Child(_))
    }

    /// The document's URL.
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// Hands the state, one JSON object as compact text, to the bridge of the main frame's
    /// document through its keyed entry point (R-UI-3, R-UI-6).
    ///
    /// One delivery is in flight at a time: a newer state waits for it, replacing any older one
    /// that waited, and goes when the web process reports the one in flight done.
    pub(crate) fn deliver_state(&self, state_json: &str) -> Result<(), ShellError> {
        let Channel::Bridge(delivery) = &self.channel else {
            return Err(ShellError::WrongViewKind {
                call: "SurfaceView::deliver_state",
                needs: "a Surface's view",
                is: "an MCP App view, which has no LineUpSurface bridge",
            });
        };
        let now = self.deliveries.borrow_mut().offer(state_json.to_owned());
        if let Some(state) = now {
            evaluate_deliveries(
                &self.engine_view,
                Rc::new(delivery.state_function_body()),
                Rc::clone(&self.deliveries),
                state,
            );
        }
        Ok(())
    }

    /// Posts `json`, one JSON object as text, to an MCP App view's frame from its relay's
    /// world, so that the view sees `event.source === window.parent` (R-MCP-7).
    pub(crate) fn post_to_mcp_view(&self, json: &str) -> Result<(), ShellError> {
        match self.channel {
            Channel::McpRelay => {
                mcp_relay::post(&self.engine_view, json);
                Ok(())
            }
            Channel::Bridge(_) => Err(ShellError::WrongViewKind {
                call: "SurfaceView::post_to_mcp_view",
                needs: "an MCP App view",
                is: "a Surface's view",
            }),
        }
    }

    /// How this view's state deliveries went.
    pub(crate) fn delivery_stats(&self) -> DeliveryStats {
        self.deliveries.borrow().stats()
    }

    /// Loads the Surface's own document again in the main frame.
    pub(crate) fn restore_document(&self) -> Result<(), ShellError> {
        self.webview.load_url(&self.url).map_err(wry_error)
    }

    /// Serves `document` from now on, under the same token and URL, and loads it in the main
    /// frame (an embedder's reload, such as a preview's).
    pub(crate) fn replace_document(&self, document: SurfaceDocument) -> Result<(), ShellError> {
        let token = self.server.borrow().token().clone();
        *self.server.borrow_mut() = SurfaceServer::new(token, document);
        self.webview.load_url(&self.url).map_err(wry_error)
    }

    /// What the view shows on screen now: its own window's content area, or its area of the
    /// embedder's window.
    pub(crate) fn screen_pixels(&self) -> Result<crate::WindowPixels, ShellError> {
        match &self.container {
            Container::Window(window) => window_pixels::window_pixels(window),
            Container::Child(_) => window_pixels::read_widget(&self.engine_view),
        }
    }

    /// WebKit's snapshot of the whole document as PNG bytes, once two animation frames have
    /// passed after everything sent to the page before it; `done` gets it on this thread.
    pub(crate) fn snapshot_png(&self, done: Box<dyn FnOnce(Result<Vec<u8>, ShellError>)>) {
        snapshot::full_document_png(&self.engine_view, done);
    }

    /// Runs `done` once what the page drew so far is on the window: two animation frames,
    /// then the widget's next draw.
    pub(crate) fn when_drawn(&self, done: Box<dyn FnOnce()>) {
        frames::when_drawn(&self.engine_view, done);
    }

    /// Evaluates the hang watchdog's no-op in a script world of the host's own; `done` runs
    /// when the web process answered.
    pub(crate) fn ping(&self, done: Box<dyn FnOnce()>) {
        watchdog::ping(&self.engine_view, done);
    }

    /// WebKit's `is-web-process-responsive`.
    pub(crate) fn web_process_responsive(&self) -> bool {
        watchdog::responsive(&self.engine_view)
    }

    /// Ends the view's web process (`webkit_web_view_terminate_web_process`); the view then
    /// reports [`ViewEvent::Unresponsive`].
    pub(crate) fn terminate_web_process(&self) {
        watchdog::terminate(&self.engine_view);
    }

    /// Where the view's own window is and its inner size, in logical pixels; `None` for a child
    /// view, which its owner lays out.
    pub(crate) fn window_bounds(&self) -> Option<Rect> {
        let Container::Window(window) = &self.container else {
            return None;
        };
        Some(crate::engine_view::window_bounds(window))
    }

    /// Moves and resizes the view: the child view inside its parent, or the window.
    pub(crate) fn set_bounds(&self, bounds: Rect) -> Result<(), ShellError> {
        match &self.container {
            Container::Child(fixed) => {
                fixed.move_(&self.engine_view, bounds.x, bounds.y);
                self.engine_view
                    .set_size_request(clamp_i32(bounds.width), clamp_i32(bounds.height));
            }
            Container::Window(window) => {
                window.set_outer_position(LogicalPosition::new(bounds.x, bounds.y));
                window.set_inner_size(LogicalSize::new(bounds.width, bounds.height));
            }
        }
        Ok(())
    }

    /// Shows or hides the child view, or the view's own window.
    pub(crate) fn set_visible(&self, visible: bool) {
        match &self.container {
            Container::Child(_) => self.engine_view.set_visible(visible),
            Container::Window(window) => window.set_visible(visible),
        }
    }

    /// The window the view owns, in window placement.
    pub(crate) fn window(&self) -> Option<&Window> {
        match &self.container {
            Container::Window(window) => Some(window),
            Container::Child(_) => None,
        }
    }

    /// Reports a close request for the view's own window as `UserCloseRequested`.
    pub(crate) fn handle_window_event(&self, window_id: WindowId, event: &WindowEvent<'_>) -> bool {
        match (self.window(), event) {
            (Some(window), WindowEvent::CloseRequested) if window.id() == window_id => {
                self.queue.push(ViewEvent::UserCloseRequested);
                true
            }
            _ => false,
        }
    }

    /// The hardening as the engine reports it, read back rather than remembered.
    pub(crate) fn hardening(&self) -> Hardening {
        let own_context = self.engine_view.context().as_ref() == Some(&self.context);
        let settings = WebViewExt::settings(&self.engine_view);
        let data_ephemeral = self
            .context
            .website_data_manager()
            .is_some_and(|manager| manager.is_ephemeral());
        Hardening {
            own_context,
            ephemeral: own_context && data_ephemeral && self.engine_view.is_ephemeral(),
            web_sandbox: own_context && self.context.is_sandbox_enabled(),
            devtools: settings
                .as_ref()
                .is_none_or(|s| s.enables_developer_extras()),
            popups_without_gesture: settings
                .as_ref()
                .is_none_or(|s| s.is_javascript_can_open_windows_automatically()),
            media_requires_gesture: settings
                .as_ref()
                .is_some_and(|s| s.is_media_playback_requires_user_gesture()),
            // A feature this WebKit lacks counts as on: fail closed.
            clipboard_access: settings.as_ref().is_none_or(|s| {
                s.is_javascript_can_access_clipboard()
                    || CLIPBOARD_FEATURES
                        .iter()
                        .any(|f| feature_enabled(s, f).unwrap_or(true))
            }),
            console_to_stdout: settings
                .as_ref()
                .is_none_or(|s| s.enables_write_console_messages_to_stdout()),
        }
    }

    /// Stops event delivery, then destroys the view, its window or place and its context.
    pub(crate) fn close(self) {
        self.queue.close();
        drop(self);
    }
}

impl Drop for PlatformView {
    fn drop(&mut self) {
        self.queue.close();
        release_engine_view(&self.engine_view);
        if let (Channel::McpRelay, Some(manager)) =
            (&self.channel, self.engine_view.user_content_manager())
        {
            mcp_relay::release(&manager);
        }
    }
}

/// Breaks the reference cycle wry leaves behind, so that closing a view ends its processes.
///
/// wry's IPC closure is connected to the view's user content manager and holds a strong
/// reference to the view, which owns that manager: destroyed or not, the view is never
/// finalized, so it keeps its `WebKitWebContext` alive, and with it the context's network
/// process (one leaked `WebKitNetworkProcess` per closed Surface). Disconnecting the closure drops
/// that reference; once the view's last one goes, the context is finalized and WebKit ends its
/// web and network processes.
fn release_engine_view(view: &webkit2gtk::WebView) {
    if let Some(manager) = view.user_content_manager() {
        manager.unregister_script_message_handler("ipc");
        let removed = disconnect_all_handlers(&manager, "script-message-received");
        tracing::debug!(removed, "ipc handlers released");
    }
}

/// The wry side of the view: for a Surface (`bridge`), the bridge as a user script of the top
/// frame and IPC into this view's queue; for an MCP App view neither, so wry registers no
/// page-world handler and defines no `window.ipc` (R-MCP-7). New windows refused, devtools as
/// configured, autoplay off.
fn wry_builder<'a>(
    config: &ViewConfig,
    seed: &webkit2gtk::WebView,
    queue: &Rc<EventQueue>,
    bridge: Option<&DeliveryKey>,
    visible: bool,
) -> WebViewBuilder<'a> {
    let windows = Rc::downgrade(queue);
    let builder = WebViewBuilder::new()
        .with_related_view(seed.clone())
        // Not used while the view is related to the seed; ephemeral should that ever change.
        .with_incognito(true)
        .with_devtools(config.devtools())
        .with_autoplay(false)
        .with_clipboard(false)
        .with_hotkeys_zoom(false)
        .with_back_forward_navigation_gestures(false)
        .with_visible(visible)
        .with_focused(visible)
        .with_download_started_handler(|_, _| false)
        .with_new_window_req_handler(move |url, _| {
            tracing::debug!(%url, "new window refused (R-SEC-2)");
            push(&windows, ViewEvent::NewWindowRefused(url));
            wry::NewWindowResponse::Deny
        });
    let Some(delivery) = bridge else {
        return builder;
    };
    let ipc = Rc::downgrade(queue);
    let max_ipc = config.max_ipc_bytes();
    builder
        // R-UI-6, R-UI-6a: runs at the start of every top-level document, before any guest
        // code; a user script is not in the document, so the page cannot read its key.
        .with_initialization_script_for_main_only(delivery.bridge_script(), true)
        // R-SEC-4: this closure belongs to this view alone; whatever frame posted, the message
        // is this view's.
        .with_ipc_handler(move |request| {
            let body = request.into_body();
            if body.len() > max_ipc {
                tracing::debug!(
                    len = body.len(),
                    max = max_ipc,
                    "oversized ipc message dropped"
                );
                push(&ipc, ViewEvent::IpcTooLarge { len: body.len() });
            } else {
                // When a bridge message reached the host, for `lineup-bench`'s event profile.
                tracing::debug!(target: "lineup_phase", phase = "bridge_message");
                push(&ipc, ViewEvent::Ipc(body));
            }
        })
}

fn wry_rect(bounds: Rect) -> wry::Rect {
    wry::Rect {
        position: LogicalPosition::new(bounds.x, bounds.y).into(),
        size: LogicalSize::new(bounds.width, bounds.height).into(),
    }
}

fn clamp_i32(value: u32) -> i32 {
    i32::try_from(value).unwrap_or(i32::MAX)
}

fn wry_error(error: wry::Error) -> ShellError {
    ShellError::Platform(format!("webview: {error}"))
}

/// Evaluates `script` in the page's world, then whatever state waited meanwhile, one after the
/// other; the chain ends when nothing waits (R-UI-3).
fn evaluate_deliveries(
    view: &webkit2gtk::WebView,
    body: Rc<String>,
    queue: Rc<std::cell::RefCell<DeliveryQueue>>,
    state: String,
) {
    let next_view = view.clone();
    // For `lineup-bench`'s patch profile: the state goes to the page.
    tracing::debug!(target: "lineup_phase", phase = "state_evaluated");
    // The JSON text travels as the function's argument: a string value in the page, never
    // lexed as script (R-UI-3); the bridge parses it.
    let arguments = glib::VariantDict::new(None);
    arguments.insert_value("state", &state.to_variant());
    let arguments = arguments.end();
    let next_body = Rc::clone(&body);
    view.call_async_javascript_function(
        &body,
        Some(&arguments),
        None,
        None,
        None::<&gtk::gio::Cancellable>,
        move |_| {
            let next = queue.borrow_mut().finished();
            if let Some(next) = next {
                evaluate_deliveries(&next_view, next_body, queue, next);
            }
        },
    );
}

/// GTK aborts the process when it cannot open a display; say so as an error instead.
pub fn check_display() -> Result<(), ShellError> {
    let has = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
    if has("DISPLAY") || has("WAYLAND_DISPLAY") {
        Ok(())
    } else {
        Err(ShellError::Platform(
            "no display: set DISPLAY or WAYLAND_DISPLAY, or run under `xvfb-run -a`".to_owned(),
        ))
    }
}

/// [`check_display`], then opens it for the toolkit on this thread, which becomes the GUI
/// thread: a display that does not answer yet (a display server still starting, or one busy
/// accepting other clients) is tried again, five times over about three seconds, and a display
/// that never opens is a typed error instead of the toolkit's panic in the event loop.
pub fn open_display() -> Result<(), ShellError> {
    check_display()?;
    let mut last = String::new();
    for attempt in 0..5u64 {
        match gtk::init() {
            Ok(()) => return Ok(()),
            Err(e) => last = e.to_string(),
        }
        std::thread::sleep(std::time::Duration::from_millis(200 * (attempt + 1)));
    }
    let display = std::env::var("DISPLAY")
        .or_else(|_| std::env::var("WAYLAND_DISPLAY"))
        .unwrap_or_default();
    Err(ShellError::Platform(format!(
        "cannot open the display {display:?} after 5 attempts: {last}"
    )))
}
