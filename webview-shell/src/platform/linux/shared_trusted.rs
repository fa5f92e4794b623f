//! Trusted views that share one web process (§4 of standard-components.md, "process cost"): the
//! component views of one conversation are WebKit *related views* of one another, so they share
//! a sandboxed web process, one ephemeral context and one message handler instead of costing a
//! process each. Views are told apart by a random token the host puts in each document's data:
//! the scheme serves `lineup-host://view/<token>` for that view only, and a message is routed
//! by the token it carries. This deviates from R-SEC-4's one context per view and is sound only
//! because no agent code runs in these documents: every script in them is the host's.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::{Rc, Weak};

use gtk::glib;
use javascriptcore::ValueExt;
use serde_json::Value;
use webkit2gtk::{URISchemeRequestExt, UserContentManagerExt, WebContextExt, WebViewExt};

use super::finish_request;
use super::trusted::{harden, trusted_context, Release, TrustedEvent, TrustedView, HANDLER};
use crate::error::ShellError;
use crate::trusted::{TrustedDocument, TRUSTED_SCHEME, TRUSTED_URL};

/// The memory ceiling of the shared web process, in MiB: a view adds about 20 MiB to it, and a
/// conversation has at most 64 components open (R-STD-17).
const SHARED_MEMORY_LIMIT_MIB: u32 = 1536;

/// One member's document and listener.
struct Route {
    html: Vec<u8>,
    headers: Vec<(&'static str, String)>,
    sink: Rc<dyn Fn(TrustedEvent)>,
    max_message_bytes: usize,
}

struct Inner {
    context: webkit2gtk::WebContext,
    manager: webkit2gtk::UserContentManager,
    routes: RefCell<HashMap<String, Route>>,
    other_requests: Rc<Cell<usize>>,
    /// A live member that new views are related to (they join its web process).
    anchor: RefCell<glib::WeakRef<webkit2gtk::WebView>>,
}

/// A context and a web process that trusted views share.
#[derive(Clone)]
pub(crate) struct SharedTrusted(Rc<Inner>);

impl SharedTrusted {
    /// A new context, sandboxed and ephemeral, with no member yet.
    pub(crate) fn new() -> Result<Self, ShellError> {
        let context = trusted_context(SHARED_MEMORY_LIMIT_MIB)?;
        let manager = webkit2gtk::UserContentManager::new();
        if !manager.register_script_message_handler(HANDLER) {
            return Err(ShellError::Platform(
                "cannot register the shared trusted views' message handler".to_owned(),
            ));
        }
        let inner = Rc::new(Inner {
            context,
            manager,
            routes: RefCell::new(HashMap::new()),
            other_requests: Rc::new(Cell::new(0)),
            anchor: RefCell::new(glib::WeakRef::new()),
        });
        let weak = Rc::downgrade(&inner);
        inner
            .context
            .register_uri_scheme(TRUSTED_SCHEME, move |request| {
                let Some(inner) = weak.upgrade() else { return };
                let uri = request.uri().map(|u| u.to_string()).unwrap_or_default();
                let routes = inner.routes.borrow();
                let route = uri
                    .strip_prefix(TRUSTED_URL)
                    .and_then(|token| routes.get(token));
                match route {
                    Some(route) => finish_request(request, 200, &route.headers, route.html.clone()),
                    None => {
                        inner.other_requests.set(inner.other_requests.get() + 1);
                        tracing::debug!(%uri, "shared trusted view request refused");
                        let plain = [("Content-Type", "text/plain".to_owned())];
                        finish_request(request, 404, &plain, Vec::new());
                    }
                }
            });
        let weak = Rc::downgrade(&inner);
        inner
            .manager
            .connect_script_message_received(Some(HANDLER), move |_, result| {
                let Some(inner) = weak.upgrade() else { return };
                let Some(text) = result.js_value().map(|v| v.to_str().to_string()) else {
                    return;
                };
                inner.route(&text);
            });
        Ok(Self(inner))
    }

    /// A fresh token for a member's document; its URL is [`SharedTrusted::url_of`].
    pub(crate) fn token() -> Result<String, ShellError> {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes)
            .map_err(|e| ShellError::Platform(format!("no random source: {e}")))?;
        Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
    }

    /// The URL a member's document is served at.
    pub(crate) fn url_of(token: &str) -> String {
        format!("{TRUSTED_URL}{token}")
    }

    /// A new member view showing `document` (which carries `token` in its data, for the
    /// messages it sends), in the web process of the live members, if any.
    pub(crate) fn view(
        &self,
        token: String,
        document: TrustedDocument,
        max_message_bytes: usize,
        on_event: Rc<dyn Fn(TrustedEvent)>,
    ) -> Result<TrustedView, ShellError> {
        let inner = &self.0;
        inner.routes.borrow_mut().insert(
            token.clone(),
            Route {
                html: document.html().as_bytes().to_vec(),
                headers: document.headers(),
                sink: Rc::clone(&on_event),
                max_message_bytes,
            },
        );
        let shared: Weak<Inner> = Rc::downgrade(inner);
        let forgotten = token.clone();
        let release = Release::new(move || {
            if let Some(shared) = shared.upgrade() {
                shared.routes.borrow_mut().remove(&forgotten);
            }
        });
        let anchor = inner.anchor.borrow().upgrade();
        let builder = webkit2gtk::WebView::builder().user_content_manager(&inner.manager);
        // A related view takes its context, and so its ephemeral data, from the anchor.
        let view = match &anchor {
            Some(anchor) => builder.related_view(anchor).build(),
            None => builder
                .web_context(&inner.context)
                .is_ephemeral(true)
                .build(),
        };
        if view.context().as_ref() != Some(&inner.context) || !view.is_ephemeral() {
            return Err(ShellError::Platform(
                "the shared trusted view is not in its shared context".to_owned(),
            ));
        }
        if anchor.is_none() {
            inner.anchor.borrow().set(Some(&view));
        }
        let url = Self::url_of(&token);
        harden(&view, url.clone(), on_event);
        view.load_uri(&url);
        Ok(TrustedView::member(
            view,
            release,
            Rc::clone(&inner.other_requests),
        ))
    }
}

impl Inner {
    /// Hands `text` (`{"token": …, …}`) to the member its token names, without the token.
    fn route(&self, text: &str) {
        let Ok(Value::Object(mut message)) = serde_json::from_str::<Value>(text) else {
            return;
        };
        let Some(Value::String(token)) = message.remove("token") else {
            return;
        };
        let routes = self.routes.borrow();
        let Some(route) = routes.get(&token) else {
            return;
        };
        if text.len() <= route.max_message_bytes {
            let sink = Rc::clone(&route.sink);
            drop(routes);
            sink(TrustedEvent::Message(Value::Object(message).to_string()));
        }
    }
}
