//! The raw wry baselines: the same document bytes loaded through a bare custom protocol, talked to
//! over bare IPC (`window.ipc.postMessage` up, `evaluate_script` down), with none of the host's
//! protocol layer.
//!
//! * *plain*: wry's defaults (a default, non-ephemeral WebKit context per view, no web-process
//!   sandbox): what the stack costs at its least.
//! * *hardened*: what the host's isolation costs without its protocol layer: an ephemeral context
//!   of its own per view with WebKit's bubblewrap sandbox on, the wry view built as a related
//!   view of a blank seed view of that context, the scheme registered on the context, exactly as
//!   `webview-shell/src/platform/linux.rs` does.

use std::borrow::Cow;
use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use gtk::glib;
use lineup_surface_runtime::DeliveryKey;
use tao::dpi::LogicalSize;
use tao::event_loop::EventLoopWindowTarget;
use tao::platform::unix::WindowExtUnix;
use tao::window::{Window, WindowBuilder};
use webkit2gtk::{SecurityManagerExt, URISchemeRequestExt, WebContextExt, WebsiteDataManagerExt};
use wry::{WebViewBuilder, WebViewBuilderExtUnix};

/// Which raw baseline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// wry's defaults.
    Plain,
    /// Ephemeral context of its own and the bubblewrap sandbox, per view.
    Hardened,
    /// Hardened, with the host's bridge added as a user script beside the shim: measured for
    /// memory only, to show what the bridge's script costs a web process.
    HardenedWithBridge,
}

impl Kind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Plain => "plain",
            Kind::Hardened => "hardened",
            Kind::HardenedWithBridge => "hardened-bridge",
        }
    }
}

/// The scheme the raw views load their document from.
const RAW_SCHEME: &str = "benchraw";

/// The raw views' stand-in for the bridge: `LineUpSurface.event` and `onState` over bare IPC, and
/// `ready` at `DOMContentLoaded`, as the bridge sends it (after the guest script ran).
const SHIM_JS: &str = r#"(function () {
  var handler = null;
  window.LineUpSurface = {
    event: function (name, data) {
      window.ipc.postMessage(JSON.stringify({ type: 'event', event: name, data: data }));
    },
    onState: function (f) { handler = f; },
    resize: function () {}
  };
  window.__benchDeliver = function (s) { if (handler) handler(s); };
  document.addEventListener('DOMContentLoaded', function () {
    window.ipc.postMessage('{"type":"ready"}');
  });
})();"#;

/// Around the bridge's script in the *hardened with bridge* views: the page's clock before and
/// after it, posted at `DOMContentLoaded` as `{"type":"bridge","ms":…}` (WebKit's page clock has a
/// resolution of 1 ms).
const BRIDGE_START_JS: &str = "window.__benchBridgeStart = performance.now();";
const BRIDGE_END_JS: &str = r#"(function () {
  var ms = performance.now() - window.__benchBridgeStart;
  document.addEventListener('DOMContentLoaded', function () {
    window.webkit.messageHandlers.ipc.postMessage(JSON.stringify({ type: 'bridge', ms: ms }));
  });
})();"#;

/// One message a raw view posted.
#[derive(Debug, Clone)]
pub(crate) struct RawMessage {
    pub(crate) view: u64,
    pub(crate) at: Instant,
    /// Wall-clock milliseconds at arrival, to compare with a page's own timestamp.
    pub(crate) epoch_ms: f64,
    pub(crate) body: String,
}

/// Everything the raw views posted, in arrival order; flood events (`"f"`) are only counted.
#[derive(Debug, Default)]
pub(crate) struct Inbox {
    pub(crate) messages: RefCell<Vec<RawMessage>>,
    pub(crate) floods: std::cell::Cell<u64>,
}

impl Inbox {
    /// How long the bridge's script ran in `view` (hardened with bridge only), by the page.
    pub(crate) fn bridge_ms(&self, view: u64) -> Option<f64> {
        self.messages
            .borrow()
            .iter()
            .filter(|m| m.view == view)
            .find_map(|m| {
                let v: serde_json::Value = serde_json::from_str(&m.body).ok()?;
                (v["type"] == "bridge").then(|| v["ms"].as_f64()).flatten()
            })
    }

    pub(crate) fn ready_at(&self, view: u64) -> Option<Instant> {
        self.messages
            .borrow()
            .iter()
            .find(|m| m.view == view && m.body == r#"{"type":"ready"}"#)
            .map(|m| m.at)
    }
}

/// A hardened raw view's document request held until [`Hold::release`]: the raw form of a warm
/// pool view, whose context and sandboxed web process are up and whose document request waits.
pub(crate) struct Hold {
    html: Rc<Vec<u8>>,
    released: std::cell::Cell<bool>,
    waiting: RefCell<Vec<webkit2gtk::URISchemeRequest>>,
}

impl Hold {
    pub(crate) fn new(html: Rc<Vec<u8>>) -> Rc<Self> {
        Rc::new(Self {
            html,
            released: std::cell::Cell::new(false),
            waiting: RefCell::new(Vec::new()),
        })
    }

    /// Whether the view has asked for its document.
    pub(crate) fn asked(&self) -> bool {
        !self.waiting.borrow().is_empty()
    }

    /// Serves the held requests, and every later one at once.
    pub(crate) fn release(&self) {
        self.released.set(true);
        for request in self.waiting.borrow_mut().drain(..) {
            finish(&request, &self.html);
        }
    }

    fn admit(&self, request: &webkit2gtk::URISchemeRequest) {
        if self.released.get() {
            finish(request, &self.html);
        } else {
            self.waiting.borrow_mut().push(request.clone());
        }
    }
}

/// One raw webview.
pub(crate) struct RawView {
    // Field order is drop order: the wry view first, the context last.
    webview: wry::WebView,
    _seed: Option<webkit2gtk::WebView>,
    _window: Window,
    _context: Option<webkit2gtk::WebContext>,
    pub(crate) id: u64,
}

impl RawView {
    /// Opens a raw view of `kind` serving `html` (the host's assembled document bytes); with
    /// `hold` (hardened kinds only), its document request waits for the hold's release.
    pub(crate) fn open<T: 'static>(
        target: &EventLoopWindowTarget<T>,
        kind: Kind,
        id: u64,
        html: Rc<Vec<u8>>,
        inbox: &Rc<Inbox>,
        hold: Option<Rc<Hold>>,
    ) -> Result<Self, String> {
        let window = WindowBuilder::new()
            .with_title("lineup-bench raw")
            .with_inner_size(LogicalSize::new(480, 360))
            .build(target)
            .map_err(|e| e.to_string())?;
        let vbox = window.default_vbox().ok_or("no vbox")?;
        let sink = Rc::downgrade(inbox);
        let mut builder = WebViewBuilder::new();
        if kind == Kind::HardenedWithBridge {
            builder = builder
                .with_initialization_script_for_main_only(BRIDGE_START_JS, true)
                .with_initialization_script_for_main_only(
                    DeliveryKey::from_random_bytes([0x5a; 16]).bridge_script(),
                    true,
                )
                .with_initialization_script_for_main_only(BRIDGE_END_JS, true);
        }
        let builder = builder
            .with_initialization_script_for_main_only(SHIM_JS, true)
            .with_ipc_handler(move |request| {
                let Some(inbox) = sink.upgrade() else {
                    return;
                };
                let body = request.into_body();
                if body.starts_with(r#"{"type":"event","event":"f","#) {
                    inbox.floods.set(inbox.floods.get() + 1);
                    return;
                }
                inbox.messages.borrow_mut().push(RawMessage {
                    view: id,
                    at: Instant::now(),
                    epoch_ms: epoch_ms(),
                    body,
                });
            });
        let url = format!("{RAW_SCHEME}://localhost/");
        let (webview, seed, context) = match kind {
            Kind::Plain => {
                let html = std::sync::Arc::new(html.as_ref().clone());
                let webview = builder
                    .with_custom_protocol(RAW_SCHEME.to_owned(), move |_, _| {
                        wry::http::Response::builder()
                            .header("Content-Type", "text/html; charset=utf-8")
                            .body(Cow::Owned(html.as_ref().clone()))
                            .unwrap_or_default()
                    })
                    .with_url(url)
                    .build_gtk(vbox)
                    .map_err(|e| e.to_string())?;
                (webview, None, None)
            }
            Kind::Hardened | Kind::HardenedWithBridge => {
                let hold = hold.unwrap_or_else(|| {
                    let hold = Hold::new(html);
                    hold.release();
                    hold
                });
                let context = hardened_context(hold)?;
                let seed = webkit2gtk::WebView::with_context(&context);
                let webview = builder
                    .with_related_view(seed.clone())
                    .with_url(url)
                    .build_gtk(vbox)
                    .map_err(|e| e.to_string())?;
                (webview, Some(seed), Some(context))
            }
        };
        Ok(Self {
            webview,
            _seed: seed,
            _window: window,
            _context: context,
            id,
        })
    }

    /// Hands `state_json` to the page's `onState`, as the host's delivery does.
    pub(crate) fn deliver(&self, state_json: &str) -> Result<(), String> {
        self.webview
            .evaluate_script(&format!("window.__benchDeliver({state_json})"))
            .map_err(|e| e.to_string())
    }
}

/// An ephemeral context of its own with the web-process sandbox on before its first process,
/// serving the hold's document under the raw scheme once it is released.
fn hardened_context(hold: Rc<Hold>) -> Result<webkit2gtk::WebContext, String> {
    let manager = webkit2gtk::WebsiteDataManager::builder()
        .is_ephemeral(true)
        .build();
    if !manager.is_ephemeral() {
        return Err("the website data manager is not ephemeral".to_owned());
    }
    let context = webkit2gtk::WebContext::builder()
        .website_data_manager(&manager)
        .build();
    context.set_sandbox_enabled(true);
    if !context.is_sandbox_enabled() {
        return Err("the web-process sandbox did not turn on".to_owned());
    }
    context.register_uri_scheme(RAW_SCHEME, move |request| hold.admit(request));
    if let Some(security) = context.security_manager() {
        security.register_uri_scheme_as_secure(RAW_SCHEME);
    }
    Ok(context)
}

/// Answers `request` with `html`.
fn finish(request: &webkit2gtk::URISchemeRequest, html: &[u8]) {
    let bytes = glib::Bytes::from(html);
    let length = i64::try_from(bytes.len()).unwrap_or(i64::MAX);
    let stream = gtk::gio::MemoryInputStream::from_bytes(&bytes);
    request.finish(&stream, length, Some("text/html"));
}

/// Milliseconds since the Unix epoch, as a page's `performance.timeOrigin + performance.now()`.
pub(crate) fn epoch_ms() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}
