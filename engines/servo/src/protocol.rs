//! The `lineup-surface` scheme in Servo: each Surface's document served from its
//! [`SurfaceServer`], to its own webview only (R-SEC-2).

use std::collections::HashMap;
use std::sync::{Arc, PoisonError, RwLock};

use http::{HeaderName, HeaderValue};
use lineup_surface_runtime::{SurfaceServer, SCHEME};
use servo::protocol_handler::{
    DoneChannel, FetchContext, HttpStatus, ProtocolHandler, Request, ResourceFetchTiming, Response,
    ResponseBody,
};
use servo::WebViewId;

/// Who may load what: a Surface token's server and the one webview it was opened in.
///
/// Shared between the GUI thread (which adds and removes Surfaces) and Servo's network threads
/// (which ask it for responses).
#[derive(Clone, Default)]
pub(crate) struct Routes(Arc<RwLock<HashMap<String, Route>>>);

struct Route {
    server: SurfaceServer,
    /// Set once the webview exists; until then no request for the token is served.
    webview: Option<WebViewId>,
}

impl Routes {
    /// Serves `server` from now on, to no webview yet.
    pub(crate) fn add(&self, server: SurfaceServer) {
        let token = server.token().as_str().to_owned();
        self.write().insert(
            token,
            Route {
                server,
                webview: None,
            },
        );
    }

    /// Binds the token to the webview that shows it: requests from any other are refused.
    pub(crate) fn bind(&self, token: &str, webview: WebViewId) {
        if let Some(route) = self.write().get_mut(token) {
            route.webview = Some(webview);
        }
    }

    /// Serves `server` instead, under the same token and webview (a replaced document).
    pub(crate) fn replace(&self, server: SurfaceServer) {
        if let Some(route) = self.write().get_mut(server.token().as_str()) {
            route.server = server;
        }
    }

    /// Stops serving the token.
    pub(crate) fn remove(&self, token: &str) {
        self.write().remove(token);
    }

    /// The status, headers and body for a request, `None` for a 404 with no route.
    fn respond(
        &self,
        method: &str,
        url: &url::Url,
        from: Option<WebViewId>,
    ) -> Option<lineup_surface_runtime::Response> {
        let token = url.host_str()?;
        let routes = self.0.read().unwrap_or_else(PoisonError::into_inner);
        let route = routes.get(token)?;
        // A request that no webview of this Surface made (another Surface's page naming this
        // token, a worker, a request Servo made on no webview's behalf) is not served.
        if route.webview.is_none() || route.webview != from {
            return None;
        }
        Some(route.server.respond(method, url.as_str()))
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, HashMap<String, Route>> {
        self.0.write().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Servo's handler for [`SCHEME`]. It never reads files and grants no privileged path
/// (`navigator.servo` stays out of every Surface), is not fetchable and not a secure context.
pub(crate) struct SurfaceProtocol {
    pub(crate) routes: Routes,
}

impl SurfaceProtocol {
    /// The scheme it serves.
    pub(crate) const SCHEME: &'static str = SCHEME;
}

impl ProtocolHandler for SurfaceProtocol {
    fn load<'a>(
        &'a self,
        request: &'a mut Request,
        _done_chan: &mut DoneChannel,
        _context: &FetchContext,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Response> + Send + 'a>> {
        let url = request.current_url();
        let answer = self
            .routes
            .respond(
                request.method.as_str(),
                url.as_url(),
                request.target_webview_id,
            )
            .unwrap_or_else(lineup_surface_runtime::Response::not_found);
        let mut response = Response::new(url, ResourceFetchTiming::new(request.timing_type()));
        response.status = HttpStatus::new_raw(answer.status, Vec::new());
        for (name, value) in &answer.headers {
            if let (Ok(name), Ok(value)) = (
                HeaderName::from_bytes(name.as_bytes()),
                HeaderValue::from_str(value),
            ) {
                response.headers.append(name, value);
            }
        }
        *response.body.lock() = ResponseBody::Done(answer.body);
        Box::pin(std::future::ready(response))
    }

    fn privileged_paths(&self) -> &'static [&'static str] {
        &[]
    }

    fn is_fetchable(&self) -> bool {
        false
    }

    fn is_secure(&self) -> bool {
        false
    }
}
