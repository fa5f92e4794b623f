//! The agent's side of the harness: envelopes of one conversation, and the apps tests open.

use std::cell::Cell;

use lineup_host::HostBuilder;
use serde_json::{json, Value};

use super::PRELUDE;

/// Writes agent → client lineup.v1 envelopes of one conversation, numbering their ids.
#[derive(Debug)]
pub struct Agent {
    conversation: String,
    next: Cell<u64>,
}

impl Default for Agent {
    fn default() -> Self {
        Self::new("c1")
    }
}

impl Agent {
    /// An agent `a1` in `conversation`.
    pub fn new(conversation: &str) -> Self {
        Self {
            conversation: conversation.to_owned(),
            next: Cell::new(1),
        }
    }

    /// A full envelope of `kind` (e.g. `lineup.v1.ui.open`) around `payload`.
    pub fn envelope(&self, kind: &str, payload: Value) -> Vec<u8> {
        let n = self.next.get();
        self.next.set(n + 1);
        json!({
            "v": 1,
            "id": format!("m{n}"),
            "type": kind,
            "conversation_id": self.conversation,
            "sender": { "kind": "agent", "id": "a1" },
            "payload": payload,
        })
        .to_string()
        .into_bytes()
    }

    /// `ui.open` of `app` as `instance`, with `state` if given.
    pub fn open(&self, instance: &str, app: Value, state: Option<Value>) -> Vec<u8> {
        let mut payload = json!({ "instance_id": instance, "app": app });
        if let Some(state) = state {
            payload["state"] = state;
        }
        self.envelope("lineup.v1.ui.open", payload)
    }

    /// `ui.patch` of `instance` with `state`.
    pub fn patch(&self, instance: &str, state: Value) -> Vec<u8> {
        self.envelope(
            "lineup.v1.ui.patch",
            json!({ "instance_id": instance, "state": state }),
        )
    }

    /// `ui.close` of `instance` with `reason`.
    pub fn close(&self, instance: &str, reason: &str) -> Vec<u8> {
        self.envelope(
            "lineup.v1.ui.close",
            json!({ "instance_id": instance, "reason": reason }),
        )
    }
}

/// An inline app `com.lineup.test.<name>` named `name`, version 1.0.0, without `integrity`
/// (the default policy accepts it, R-SEC-7), whose script starts with [`PRELUDE`].
pub fn test_app(name: &str, html: &str, js: &str) -> Value {
    json!({
        "id": format!("com.lineup.test.{name}"),
        "name": name,
        "version": "1.0.0",
        "html": html,
        "css": "html, body { margin: 0; padding: 0; }",
        "js": format!("{PRELUDE}{js}"),
    })
}

/// A host builder with neither the CSP nor the refusing network proxy (R-SEC-3): the positive
/// control of a network test, where a page's traffic does reach a loopback canary.
pub fn open_network() -> HostBuilder {
    HostBuilder::new()
        .dangerous()
        .without_csp()
        .dangerous()
        .without_network_proxy()
}

/// The weather example app of the spec (§4.1), without its placeholder `integrity`.
pub fn weather_app() -> Value {
    json!({
        "id": "com.lineup.weather.dashboard",
        "name": "天气面板",
        "version": "1.0.0",
        "html": "<main><button id='refresh'>刷新</button></main>",
        "css": "main { padding: 16px }",
        "js": "document.querySelector('#refresh').onclick=()=>LineUpSurface.event('refresh',{unit:'c'})",
    })
}
