//! Every question a Servo webview asks its embedder, answered explicitly for a Surface: several
//! of Servo's requests allow when dropped (a navigation, an unload), so none is left to a drop.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use lineup_surface_runtime::{CONSOLE_MARKER, SCHEME};
use lineup_webview_shell::{navigation_allowed, ViewEvent};
use servo::{
    AllowOrDenyRequest, AuthenticationRequest, ConsoleLogLevel, CreateNewWebViewRequest,
    EmbedderControl, LoadStatus, NavigationRequest, PermissionRequest, WebResourceLoad, WebView,
    WebViewDelegate,
};

/// What a view saw, waiting to be handed to its owner once Servo's callback has returned.
pub(crate) type EventQueue = RefCell<VecDeque<ViewEvent>>;

/// What the engine needs of a live view to hand it its events.
pub(crate) struct ViewLink {
    pub(crate) events: Rc<EventQueue>,
    pub(crate) on_event: Box<dyn Fn(ViewEvent)>,
}

/// One Surface's delegate: it knows the document the view may show and where its events go.
pub(crate) struct SurfaceDelegate {
    /// `lineup-surface://<token>/`.
    pub(crate) document: String,
    pub(crate) events: Rc<EventQueue>,
    /// The most bytes one bridge message may have; longer ones are dropped and reported.
    pub(crate) max_ipc_bytes: usize,
    /// Set when a frame is ready to be read back (a screenshot, a window to repaint).
    pub(crate) frame_ready: std::cell::Cell<bool>,
}

impl SurfaceDelegate {
    fn push(&self, event: ViewEvent) {
        self.events.borrow_mut().push_back(event);
    }
}

impl WebViewDelegate for SurfaceDelegate {
    fn notify_load_status_changed(&self, _webview: WebView, status: LoadStatus) {
        match status {
            LoadStatus::HeadParsed => self.push(ViewEvent::DocumentCommitted),
            LoadStatus::Complete => self.push(ViewEvent::LoadFinished),
            _ => {}
        }
    }

    fn notify_new_frame_ready(&self, webview: WebView) {
        webview.paint();
        self.frame_ready.set(true);
    }

    fn notify_crashed(&self, _webview: WebView, reason: String, _backtrace: Option<String>) {
        tracing::warn!(len = reason.len(), "a Surface's script thread crashed");
        self.push(ViewEvent::Crashed);
    }

    /// Servo closes a view without asking when its page closes it (a top-level page with one
    /// history entry may: R-UI-5 is kept by the bridge's own `window.close`, but another
    /// window's `close` called on this one still works): the Surface is lost, reported as a
    /// crash so that its owner reopens or closes it.
    fn notify_closed(&self, _webview: WebView) {
        tracing::warn!("a Surface's page closed its own view");
        self.push(ViewEvent::Crashed);
    }

    /// R-SEC-2, R-SEC-2a: the Surface's own document and srcdoc subframes; nothing else.
    fn request_navigation(&self, _webview: WebView, request: NavigationRequest) {
        let url = request.url.to_string();
        if navigation_allowed(&self.document, &url) {
            request.allow();
        } else {
            request.deny();
            self.push(ViewEvent::NavigationRefused(url));
        }
    }

    /// R-UI-5: a page cannot leave (or close itself) through an unload prompt.
    fn request_unload(&self, _webview: WebView, request: AllowOrDenyRequest) {
        request.deny();
        self.push(ViewEvent::PageCloseAttempt);
    }

    /// R-SEC-2: no new window. Dropping the request is Servo's way to create none.
    fn request_create_new(&self, _parent: WebView, request: CreateNewWebViewRequest) {
        drop(request);
        self.push(ViewEvent::NewWindowRefused(String::new()));
    }

    fn request_permission(&self, _webview: WebView, request: PermissionRequest) {
        request.deny();
        self.push(ViewEvent::PermissionDenied);
    }

    fn request_protocol_handler(
        &self,
        _webview: WebView,
        _registration: servo::protocol_handler::ProtocolHandlerRegistration,
        request: AllowOrDenyRequest,
    ) {
        request.deny();
        self.push(ViewEvent::PermissionDenied);
    }

    fn request_authentication(&self, _webview: WebView, request: AuthenticationRequest) {
        // No credentials: dropping the request answers with none.
        drop(request);
        self.push(ViewEvent::PermissionDenied);
    }

    fn request_resize_to(&self, _webview: WebView, _size: servo::DeviceIntSize) {}

    fn request_move_to(&self, _webview: WebView, _point: servo::DeviceIntPoint) {}

    /// R-SEC-3: a Surface loads nothing over the network. Servo asks here about every load of
    /// the view, its own document included: the Surface scheme (whose handler serves a token
    /// to its own webview only), `data:`, `blob:` and `about:` go on (dropping the request is
    /// Servo's "go on"; the CSP still governs them); every other load is cancelled, a wall
    /// behind the CSP.
    fn load_web_resource(&self, _webview: WebView, load: WebResourceLoad) {
        let url = load.request().url.clone();
        if matches!(url.scheme(), SCHEME | "data" | "blob" | "about") {
            drop(load);
            return;
        }
        let len = url.as_str().len();
        load.intercept(servo::WebResourceResponse::new(url))
            .cancel();
        tracing::debug!(len, "a Surface's network load was cancelled");
    }

    fn show_embedder_control(&self, _webview: WebView, control: EmbedderControl) {
        match control {
            EmbedderControl::SimpleDialog(dialog) => {
                dialog.dismiss();
                self.push(ViewEvent::DialogSuppressed);
            }
            EmbedderControl::FilePicker(picker) => {
                picker.dismiss();
                self.push(ViewEvent::FileChooserRefused);
            }
            EmbedderControl::ContextMenu(menu) => menu.dismiss(),
            // The page's own choice stands: submitted unchanged.
            EmbedderControl::SelectElement(select) => select.submit(),
            EmbedderControl::ColorPicker(picker) => picker.submit(),
            // Keys still reach the page; no input method window is shown.
            EmbedderControl::InputMethod(_) => {}
        }
    }

    /// The bridge's console channel: a line behind [`CONSOLE_MARKER`] is a message for the host,
    /// from this view (R-SEC-4); any other line is the page's own console output.
    fn show_console_message(&self, _webview: WebView, _level: ConsoleLogLevel, message: String) {
        let Some(text) = message.strip_prefix(CONSOLE_MARKER) else {
            tracing::trace!(len = message.len(), "a Surface's console line");
            return;
        };
        if text.len() > self.max_ipc_bytes {
            self.push(ViewEvent::IpcTooLarge { len: text.len() });
        } else {
            self.push(ViewEvent::Ipc(text.to_owned()));
        }
    }
}
