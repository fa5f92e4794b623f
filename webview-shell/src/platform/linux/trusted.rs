//! The trusted host view on Linux: a WebKitGTK view that shows one host-written document, in an
//! ephemeral context of its own (never a Surface's), with no Surface bridge; the document's own
//! script reports to the host through one message handler that only this view has.

use std::cell::Cell;
use std::rc::Rc;

use gtk::prelude::*;
use javascriptcore::ValueExt;
use webkit2gtk::{
    CacheModel, FileChooserRequestExt, NavigationPolicyDecision, NavigationPolicyDecisionExt,
    PermissionRequestExt, PolicyDecisionExt, PolicyDecisionType, ResponsePolicyDecision,
    ResponsePolicyDecisionExt, SecurityManagerExt, URIRequestExt, URISchemeRequestExt,
    UserContentManagerExt, WebContextExt, WebViewExt, WebsiteDataManagerExt,
};

use super::{finish_request, memory_pressure, refuse_all_network};
use crate::error::ShellError;
use crate::trusted::{TrustedDocument, TRUSTED_SCHEME, TRUSTED_URL};

/// The name of the one message handler of a trusted view.
pub(super) const HANDLER: &str = "lineupHost";
/// The memory ceiling of a trusted view's web process, in MiB.
const MEMORY_LIMIT_MIB: u32 = 256;

/// What a trusted view reports to its owner.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum TrustedEvent {
    /// The document's script posted this short string.
    Message(String),
    /// The web process ended.
    Crashed,
}

/// A view of one host-written document.
pub(crate) struct TrustedView {
    view: webkit2gtk::WebView,
    owner: Owner,
    other_requests: Rc<Cell<usize>>,
}

/// Whose context a trusted view is in.
enum Owner {
    /// Its own, with its own message handler.
    Own {
        manager: webkit2gtk::UserContentManager,
        _context: webkit2gtk::WebContext,
    },
    /// A context shared with other views (`shared_trusted.rs`): `_release` forgets this
    /// view's document and message route there when the view is dropped.
    Shared { _release: Release },
}

impl TrustedView {
    /// Creates the view and starts loading `document`; `on_event` hears the document's messages
    /// of at most `max_message_bytes` (longer ones are dropped).
    pub(crate) fn new(
        document: TrustedDocument,
        max_message_bytes: usize,
        on_event: Rc<dyn Fn(TrustedEvent)>,
    ) -> Result<Self, ShellError> {
        let context = trusted_context(MEMORY_LIMIT_MIB)?;

        // The document at its one URL, and nothing else, from this context's own scheme.
        let other_requests = Rc::new(Cell::new(0usize));
        let counted = Rc::clone(&other_requests);
        let html = document.html().as_bytes().to_vec();
        let headers = document.headers();
        context.register_uri_scheme(TRUSTED_SCHEME, move |request| {
            let uri = request.uri().map(|u| u.to_string()).unwrap_or_default();
            if uri == TRUSTED_URL {
                finish_request(request, 200, &headers, html.clone());
            } else {
                counted.set(counted.get() + 1);
                tracing::debug!(%uri, "trusted view request refused");
                finish_request(request, 404, &headers[..1], Vec::new());
            }
        });

        let manager = webkit2gtk::UserContentManager::new();
        if !manager.register_script_message_handler(HANDLER) {
            return Err(ShellError::Platform(
                "cannot register the trusted view's message handler".to_owned(),
            ));
        }
        let events = Rc::clone(&on_event);
        manager.connect_script_message_received(Some(HANDLER), move |_, result| {
            let Some(text) = result.js_value().map(|v| v.to_str().to_string()) else {
                return;
            };
            if text.len() <= max_message_bytes {
                events(TrustedEvent::Message(text));
            }
        });

        let view = webkit2gtk::WebView::builder()
            .web_context(&context)
            .user_content_manager(&manager)
            .is_ephemeral(true)
            .build();
        if view.context().as_ref() != Some(&context) {
            return Err(ShellError::Platform(
                "the trusted view was not created in its own context".to_owned(),
            ));
        }
        harden(&view, TRUSTED_URL.to_owned(), on_event);
        view.load_uri(TRUSTED_URL);
        Ok(Self {
            view,
            owner: Owner::Own {
                manager,
                _context: context,
            },
            other_requests,
        })
    }

    /// A view in a context shared with other views; `release` runs when it is dropped.
    pub(super) fn member(
        view: webkit2gtk::WebView,
        release: Release,
        other_requests: Rc<Cell<usize>>,
    ) -> Self {
        Self {
            view,
            owner: Owner::Shared { _release: release },
            other_requests,
        }
    }

    /// The view's widget.
    pub(crate) fn widget(&self) -> &webkit2gtk::WebView {
        &self.view
    }

    /// How many requests other than for the document the page made (all refused).
    pub(crate) fn other_requests(&self) -> usize {
        self.other_requests.get()
    }

    /// Runs the host's own `script` in the page; `done` gets its result as a string.
    pub(crate) fn evaluate(&self, script: &str, done: Box<dyn FnOnce(Option<String>)>) {
        #[allow(deprecated)]
        self.view
            .run_javascript(script, None::<&gtk::gio::Cancellable>, move |result| {
                done(
                    result
                        .ok()
                        .and_then(|r| r.js_value())
                        .map(|v| v.to_str().to_string()),
                );
            });
    }
}

impl Drop for TrustedView {
    fn drop(&mut self) {
        match &self.owner {
            Owner::Own { manager, .. } => manager.unregister_script_message_handler(HANDLER),
            // The membership forgets its route when dropped with the view.
            Owner::Shared { .. } => {}
        }
        self.view.stop_loading();
    }
}

/// Runs its closure once, when dropped.
pub(super) struct Release(Option<Box<dyn FnOnce()>>);

impl Release {
    /// Runs `f` when dropped.
    pub(super) fn new(f: impl FnOnce() + 'static) -> Self {
        Self(Some(Box::new(f)))
    }
}

impl Drop for Release {
    fn drop(&mut self) {
        if let Some(f) = self.0.take() {
            f();
        }
    }
}

/// An ephemeral, sandboxed context of trusted views whose web process may use `limit_mib`,
/// every network request refused, with the trusted scheme marked secure (its documents are
/// registered by the caller).
pub(super) fn trusted_context(limit_mib: u32) -> Result<webkit2gtk::WebContext, ShellError> {
    let data = webkit2gtk::WebsiteDataManager::builder()
        .is_ephemeral(true)
        .build();
    if !data.is_ephemeral() {
        return Err(ShellError::Platform(
            "the trusted view's data manager is not ephemeral".to_owned(),
        ));
    }
    refuse_all_network(&data, None)?;
    let context = webkit2gtk::WebContext::builder()
        .website_data_manager(&data)
        .memory_pressure_settings(&memory_pressure(limit_mib))
        .build();
    context.set_sandbox_enabled(true);
    if !context.is_sandbox_enabled() {
        return Err(ShellError::Platform(
            "the trusted view's web-process sandbox did not take effect".to_owned(),
        ));
    }
    context.set_cache_model(CacheModel::DocumentViewer);
    context.set_automation_allowed(false);
    context.set_spell_checking_enabled(false);
    let security = context.security_manager().ok_or_else(|| {
        ShellError::Platform("the trusted context has no security manager".to_owned())
    })?;
    security.register_uri_scheme_as_secure(TRUSTED_SCHEME);
    Ok(context)
}

/// No navigation but to the document at `allowed_url`, no new windows, permissions, dialogs,
/// menus, drops, downloads, devtools or clipboard script access.
pub(super) fn harden(
    view: &webkit2gtk::WebView,
    allowed_url: String,
    on_event: Rc<dyn Fn(TrustedEvent)>,
) {
    // The same settings as a Surface's view, without devtools.
    if let Some(settings) = WebViewExt::settings(view) {
        super::harden::lock_down(&settings, false);
    }
    view.connect_decide_policy(move |_, decision, kind| {
        let allowed = match kind {
            PolicyDecisionType::NavigationAction => decision
                .downcast_ref::<NavigationPolicyDecision>()
                .and_then(|d| d.navigation_action())
                .and_then(|a| a.request())
                .and_then(|r| r.uri())
                .is_some_and(|uri| uri == allowed_url),
            PolicyDecisionType::Response => decision
                .downcast_ref::<ResponsePolicyDecision>()
                .is_some_and(|r| r.is_mime_type_supported()),
            _ => false,
        };
        if allowed {
            decision.use_();
        } else {
            decision.ignore();
        }
        true
    });
    view.connect_permission_request(|_, request| {
        request.deny();
        true
    });
    view.connect_script_dialog(|_, _| true);
    super::harden::refuse_chrome(view);
    view.connect_run_file_chooser(|_, request| {
        request.cancel();
        true
    });
    view.connect_drag_motion(|_, drag, _, _, time| {
        drag.drag_status(gtk::gdk::DragAction::empty(), time);
        true
    });
    view.connect_drag_drop(|_, drag, _, _, time| {
        drag.drop_finish(false, time);
        true
    });
    view.connect_web_process_terminated(move |_, reason| {
        tracing::warn!(
            "trusted view's web process ended: {}",
            super::termination_words(reason)
        );
        on_event(TrustedEvent::Crashed);
    });
}
