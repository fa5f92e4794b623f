//! One Surface shown by Servo: a webview with its own bridge key, clipboard and software
//! rendering context.

use std::rc::Rc;

use lineup_surface_runtime::{DeliveryKey, SurfaceDocument};
use servo::{JSValue, SoftwareRenderingContext, UserContentManager, WebView};

use crate::delegate::{SurfaceDelegate, ViewLink};
use crate::protocol::Routes;
use crate::ServoError;

/// A Surface's webview in Servo, made by [`ServoEngine::open`](crate::ServoEngine::open). It
/// stays until [`ServoSurface::close`] or drop; the page cannot close it (R-UI-5).
pub struct ServoSurface {
    pub(crate) webview: WebView,
    pub(crate) token: String,
    pub(crate) key: DeliveryKey,
    pub(crate) url: url::Url,
    pub(crate) delegate: Rc<SurfaceDelegate>,
    pub(crate) context: Rc<SoftwareRenderingContext>,
    /// Holds the view's bridge script for as long as the view lives.
    pub(crate) _contents: Rc<UserContentManager>,
    /// Keeps the view's events flowing from [`ServoEngine::spin`](crate::ServoEngine::spin).
    pub(crate) _link: Rc<ViewLink>,
    pub(crate) routes: Routes,
}

impl ServoSurface {
    /// The document's URL, `lineup-surface://<token>/`.
    pub fn url(&self) -> &str {
        self.url.as_str()
    }

    /// Servo's id of the webview: the identity of everything it reports (R-SEC-4).
    pub fn webview_id(&self) -> servo::WebViewId {
        self.webview.id()
    }

    /// Hands `state_json`, one JSON object, to the bridge's entry point in the page's main
    /// world with this view's delivery key (R-UI-3, R-UI-6).
    pub fn deliver_state(&self, state_json: &str) -> Result<(), ServoError> {
        let value: serde_json::Value = serde_json::from_str(state_json)
            .map_err(|e| ServoError::InvalidState(e.to_string()))?;
        if !value.is_object() {
            return Err(ServoError::InvalidState("not a JSON object".to_owned()));
        }
        self.webview
            .evaluate_javascript(self.key.state_script(state_json.trim()), |result| {
                if let Err(error) = result {
                    tracing::debug!(?error, "a state delivery did not run");
                }
            });
        Ok(())
    }

    /// Evaluates `script` in the page's main world, for the host's own checks (the isolation
    /// probe, tests); `done` gets the result on the engine's thread from
    /// [`ServoEngine::spin`](crate::ServoEngine::spin).
    pub fn evaluate(&self, script: &str, done: impl FnOnce(Result<JSValue, String>) + 'static) {
        self.webview.evaluate_javascript(script, move |result| {
            done(result.map_err(|e| format!("{e:?}")))
        });
    }

    /// Loads the Surface's own document again (R-UI-10).
    pub fn restore_document(&self) {
        self.webview.load(self.url.clone());
    }

    /// Serves `document` from now on under the same token, and loads it.
    pub fn replace_document(&self, document: SurfaceDocument) -> Result<(), ServoError> {
        let token = lineup_surface_runtime::SurfaceToken::try_from(self.token.as_str())
            .map_err(|e| ServoError::Engine(format!("the view's token: {e}")))?;
        self.routes
            .replace(lineup_surface_runtime::SurfaceServer::new(token, document));
        self.restore_document();
        Ok(())
    }

    /// The page as rendered, as PNG bytes, once Servo has everything on screen (loads, fonts,
    /// images); `done` gets it on the engine's thread.
    pub fn screenshot_png(&self, done: impl FnOnce(Result<Vec<u8>, ServoError>) + 'static) {
        self.webview.take_screenshot(None, move |result| {
            done(match result {
                Ok(image) => {
                    let mut png = Vec::new();
                    image
                        .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
                        .map(|()| png)
                        .map_err(|e| ServoError::Engine(format!("PNG: {e}")))
                }
                Err(e) => Err(ServoError::Engine(format!("screenshot: {e:?}"))),
            })
        });
    }

    /// Passes an input event (pointer, key) to the page.
    pub fn notify_input(&self, event: servo::InputEvent) {
        self.webview.notify_input_event(event);
    }

    /// Resizes the page (and its rendering context) to `width` × `height` device pixels.
    pub fn resize(&self, width: u32, height: u32) {
        self.webview
            .resize(dpi::PhysicalSize::new(width.max(1), height.max(1)));
    }

    /// Gives the view keyboard focus or takes it away.
    pub fn set_focused(&self, focused: bool) {
        self.webview.set_focused(focused);
    }

    /// Whether Servo drew a new frame since the last call.
    pub fn take_frame_ready(&self) -> bool {
        self.delegate.frame_ready.replace(false)
    }

    /// The rendering context the view draws into, to read its pixels.
    pub fn rendering_context(&self) -> &SoftwareRenderingContext {
        &self.context
    }

    /// Closes the view: its document is no longer served and no event is delivered after this.
    pub fn close(self) {
        drop(self);
    }
}

impl Drop for ServoSurface {
    fn drop(&mut self) {
        self.routes.remove(&self.token);
    }
}

impl std::fmt::Debug for ServoSurface {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServoSurface")
            .field("url", &self.url.as_str())
            .finish_non_exhaustive()
    }
}
