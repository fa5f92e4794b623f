//! A Surface view's own web context and its custom scheme: an ephemeral data manager whose
//! network goes to a refusing proxy, the web process's memory ceiling and sandbox, and the
//! `lineup-surface` scheme answered by the Surface's server alone (R-SEC-2, R-SEC-3, R-SEC-8).

use std::cell::RefCell;
use std::rc::Rc;

use gtk::glib;
use lineup_surface_runtime::{SurfaceServer, SCHEME};
use webkit2gtk::{
    CacheModel, DownloadExt, SecurityManagerExt, URIRequestExt, URISchemeRequest,
    URISchemeRequestExt, URISchemeResponse, URISchemeResponseExt, WebContextExt,
    WebsiteDataManagerExt,
};

use super::events::{push, EventQueue};
use super::refuse_all_network;
use crate::config::ViewConfig;
use crate::error::ShellError;
use crate::event::ViewEvent;
use crate::gate::Gate;

/// The view's own ephemeral context: every network request sent to a proxy that refuses it, a
/// memory ceiling for its web process, sandbox set before any process starts, the custom scheme
/// answered by this Surface's server alone, downloads refused.
pub(super) fn surface_context(
    config: &ViewConfig,
    server: Rc<RefCell<SurfaceServer>>,
    queue: &Rc<EventQueue>,
    gate: Rc<Gate>,
) -> Result<webkit2gtk::WebContext, ShellError> {
    let manager = webkit2gtk::WebsiteDataManager::builder()
        .is_ephemeral(true)
        .build();
    if !manager.is_ephemeral() {
        return Err(ShellError::Platform(
            "the website data manager is not ephemeral".to_owned(),
        ));
    }
    // R-SEC-3: set before the context exists, so the network session starts with it.
    if config.proxy_applied() {
        refuse_all_network(&manager, config.probe_proxy())?;
    }
    // The memory ceiling is construct-only: it goes to the builder or nowhere.
    let context = webkit2gtk::WebContext::builder()
        .website_data_manager(&manager)
        .memory_pressure_settings(&memory_pressure(config.memory_limit_mib()))
        .build();
    // R-SEC-8: must happen before the context's first web process, which the seed view starts.
    context.set_sandbox_enabled(config.web_sandbox());
    if context.is_sandbox_enabled() != config.web_sandbox() {
        return Err(ShellError::Platform(
            "the web-process sandbox setting did not take effect".to_owned(),
        ));
    }
    // R-UI-11: navigator.language(s) and Intl's default locale, before the first load.
    let language = config.effective_language();
    context.set_preferred_languages(&[language.as_str()]);
    context.connect_initialize_web_extensions(|_| {
        tracing::debug!(target: "lineup_phase", phase = "web_process_spawn");
    });
    context.set_cache_model(CacheModel::DocumentViewer);
    context.set_automation_allowed(false);
    context.set_spell_checking_enabled(false);

    // R-SEC-2: the document comes from the Surface's own server and nowhere else. Every host of
    // the scheme reaches this handler; the server answers only its own token.
    // R-SEC-8: a view opened while the isolation probe runs has its requests held at the gate
    // until the verdict: served once it passed, refused if it failed.
    context.register_uri_scheme(SCHEME, move |request| {
        let server = Rc::clone(&server);
        let request = request.clone();
        gate.admit(Box::new(move |open| {
            if open {
                serve(&server.borrow(), &request);
            } else {
                request.finish_error(&mut glib::Error::new(
                    glib::UriError::Failed,
                    "the isolation probe failed (R-SEC-8)",
                ));
            }
        }));
    });
    // As wry does for its custom protocols: the document is a secure context (its origin is
    // still opaque under the CSP sandbox).
    let security = context.security_manager().ok_or_else(|| {
        ShellError::Platform("the web context has no security manager".to_owned())
    })?;
    security.register_uri_scheme_as_secure(SCHEME);
    // R-SEC-3a: fonts load in CORS mode; the scheme's asset responses carry the matching
    // `Access-Control-Allow-Origin`.
    security.register_uri_scheme_as_cors_enabled(SCHEME);

    let downloads = Rc::downgrade(queue);
    context.connect_download_started(move |_, download| {
        let uri = download
            .request()
            .and_then(|r| r.uri())
            .map(|u| u.to_string())
            .unwrap_or_default();
        download.cancel();
        tracing::debug!(%uri, "download refused (R-SEC-2)");
        push(&downloads, ViewEvent::DownloadRefused(uri));
    });
    Ok(context)
}

/// WebKit's memory-pressure settings for a ceiling of `limit_mib`: ended at the ceiling (kill
/// threshold 1.0; WebKit's default never ends a process), checked twice a second.
pub(super) fn memory_pressure(limit_mib: u32) -> webkit2gtk::MemoryPressureSettings {
    let mut settings = webkit2gtk::MemoryPressureSettings::new();
    settings.set_memory_limit(limit_mib.max(1));
    settings.set_conservative_threshold(0.33);
    settings.set_strict_threshold(0.5);
    settings.set_kill_threshold(1.0);
    settings.set_poll_interval(0.5);
    settings
}

/// Answers one request of the Surface scheme from the Surface's server.
fn serve(server: &SurfaceServer, request: &URISchemeRequest) {
    let Some(uri) = request.uri() else {
        request.finish_error(&mut glib::Error::new(
            glib::UriError::Failed,
            "request without a uri",
        ));
        return;
    };
    let method = request
        .http_method()
        .map(|m| m.to_string())
        .unwrap_or_else(|| "GET".to_owned());
    tracing::debug!(target: "lineup_phase", phase = "request_served", %uri);
    let response = server.respond(&method, &uri);
    if response.status != 200 {
        tracing::debug!(%uri, status = response.status, "surface scheme request refused");
    }
    finish_request(request, response.status, &response.headers, response.body);
}

/// Answers a custom-scheme `request` with `status`, `headers` (in order) and `body`.
pub(super) fn finish_request(
    request: &URISchemeRequest,
    status: u16,
    headers: &[(impl AsRef<str>, impl AsRef<str>)],
    body: Vec<u8>,
) {
    let length = i64::try_from(body.len()).unwrap_or(i64::MAX);
    let body = glib::Bytes::from_owned(body);
    let stream = gtk::gio::MemoryInputStream::from_bytes(&body);
    let reply = URISchemeResponse::new(&stream, length);
    reply.set_status(u32::from(status), None);
    let soup_headers = soup::MessageHeaders::new(soup::MessageHeadersType::Response);
    for (name, value) in headers {
        let (name, value) = (name.as_ref(), value.as_ref());
        if name.eq_ignore_ascii_case("Content-Type") {
            reply.set_content_type(value);
        }
        soup_headers.append(name, value);
    }
    reply.set_http_headers(soup_headers);
    request.finish_with_response(&reply);
}
