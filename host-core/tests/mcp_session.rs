//! MCP App views joined to the session (R-MCP-3 … R-MCP-8, R-MCP-13), table-tested through the
//! session's own entries: the agent's envelopes (`Session::handle_inbound`), the view's JSON-RPC
//! (`PageInput::McpFromView`), the host's answers (`Session::mcp_host_answer`) and the clock
//! (`Session::poll_mcp`, `Sessions::poll_timeout`). Each test is named after the rule it guards.
#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]

#[path = "mcp_session/lifecycle.rs"]
mod lifecycle;
#[path = "mcp_session/open.rs"]
mod open;
#[path = "mcp_session/reports.rs"]
mod reports;
#[path = "mcp_session/traffic.rs"]
mod traffic;

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use lineup_host_core::mcp::McpLimits;
use lineup_host_core::{
    Clock, Effect, Limits, McpEffect, McpViewOpen, Message, PageInput, PartyId, Session,
    SessionConfig, SurfaceKey,
};
use serde_json::{json, Value};

/// A monotonic clock the test moves.
#[derive(Clone, Default)]
struct Hands(Rc<Cell<Duration>>);

impl Clock for Hands {
    fn monotonic(&self) -> Duration {
        self.0.get()
    }
}

/// A session of conversation `c1` and its clock.
struct Rig {
    session: Session,
    clock: Hands,
}

impl Rig {
    /// A session that shows MCP App views within `mcp`, under `limits`.
    fn with(limits: Limits, mcp: Option<McpLimits>) -> Self {
        let mut config = SessionConfig::new(PartyId::try_from("desktop").unwrap(), "out");
        config.limits = limits;
        config.mcp_apps = mcp;
        let clock = Hands::default();
        let session = Session::new(config, Box::new(clock.clone())).unwrap();
        Self { session, clock }
    }

    /// A session with MCP App views on, every bound at its default.
    fn new() -> Self {
        Self::with(Limits::default(), Some(McpLimits::default()))
    }

    /// The agent's envelope of `kind` with `payload`.
    fn agent(&mut self, kind: &str, payload: Value) -> Vec<Effect> {
        let bytes = serde_json::to_vec(&json!({
            "v": 1, "id": format!("m-{kind}"), "type": format!("lineup.v1.{kind}"),
            "conversation_id": "c1", "sender": {"kind": "agent", "id": "a1"}, "payload": payload
        }))
        .unwrap();
        self.session.handle_inbound(&bytes)
    }

    /// The view `key` posts `message`.
    fn view(&mut self, key: &SurfaceKey, message: Value) -> Vec<Effect> {
        let text = message.to_string();
        self.session.handle_page(key, PageInput::McpFromView(&text))
    }

    /// Opens view `instance` of `html` inline as text, showing tool `get-time` with `meta`
    /// added to its `_meta`; the view's key.
    fn open_with(&mut self, instance: &str, html: &str, meta: Value) -> SurfaceKey {
        let fx = self.agent(
            "ui.open",
            open_payload(instance, json!({ "text": html }), meta),
        );
        opened(&fx).key.clone()
    }

    /// Opens view `instance` with a small page.
    fn open(&mut self, instance: &str) -> SurfaceKey {
        self.open_with(instance, "<p>time</p>", json!({}))
    }

    /// The view `key` says `ui/initialize` (id 1) and `initialized`; what came out.
    fn initialize(&mut self, key: &SurfaceKey) -> Vec<Effect> {
        let mut fx = self.view(key, rpc(1, "ui/initialize", json!({})));
        fx.extend(self.view(
            key,
            json!({"jsonrpc": "2.0", "method": "ui/notifications/initialized"}),
        ));
        fx
    }

    /// Moves the clock to `at` and does the views' timed work.
    fn at(&mut self, at: Duration) -> Vec<Effect> {
        self.clock.0.set(at);
        self.session.poll_mcp()
    }
}

/// The tool `get-time` as listed: its `_meta` names the view `ui://get-time/view` and carries
/// `extra`'s members too.
fn tool(extra: Value) -> Value {
    let mut meta = json!({"ui": {"resourceUri": "ui://get-time/view"}});
    for (k, v) in extra.as_object().unwrap() {
        match (k.as_str(), v) {
            ("ui", Value::Object(ui)) => meta["ui"].as_object_mut().unwrap().extend(ui.clone()),
            _ => {
                meta[k] = v.clone();
            }
        }
    }
    json!({"name": "get-time", "meta": meta, "input_schema": {"type": "object"}, "call_id": 7})
}

/// A `ui.open` payload of view `instance` whose HTML is `html` (`{"text": …}`, `{"blob": …}`
/// or `{"digest": …}`).
fn open_payload(instance: &str, html: Value, meta: Value) -> Value {
    let mut resource = json!({"uri": "ui://get-time/view", "mime_type": "text/html;profile=mcp-app",
        "ui": {"prefersBorder": true}});
    resource
        .as_object_mut()
        .unwrap()
        .extend(html.as_object().unwrap().clone());
    json!({"instance_id": instance,
        "mcp_app": {"server": "basic-server", "resource": resource, "tool": tool(meta)}})
}

/// A JSON-RPC request of the view.
fn rpc(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// The view `fx` opened.
fn opened(fx: &[Effect]) -> &McpViewOpen {
    fx.iter()
        .find_map(|e| match e {
            Effect::Mcp(McpEffect::Open(open)) => Some(open),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no view opened: {fx:?}"))
}

/// The JSON-RPC messages posted to view `key`, in order.
fn posted(fx: &[Effect], key: &SurfaceKey) -> Vec<Value> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::Mcp(McpEffect::Post { key: k, message }) if k == key => {
                Some(serde_json::from_str(message).unwrap())
            }
            _ => None,
        })
        .collect()
}

/// The envelopes sent to the agent, as JSON.
fn sent(fx: &[Effect]) -> Vec<Value> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::Send(message) => Some(serde_json::from_str(&message.to_json()).unwrap()),
            _ => None,
        })
        .collect()
}

/// The envelopes of type `lineup.v1.<kind>` sent to the agent.
fn sent_of(fx: &[Effect], kind: &str) -> Vec<Value> {
    let kind = format!("lineup.v1.{kind}");
    sent(fx).into_iter().filter(|m| m["type"] == kind).collect()
}

/// The one `client.error` of `fx`: its code, field and limit.
fn refusal(fx: &[Effect]) -> (String, Option<String>, Option<u64>) {
    let errors = sent_of(fx, "client.error");
    let [error] = errors.as_slice() else {
        panic!("not one client.error: {fx:?}")
    };
    let p = &error["payload"];
    (
        p["code"].as_str().unwrap().to_owned(),
        p["field"].as_str().map(str::to_owned),
        p["limit"].as_u64(),
    )
}

/// Whether `fx` closes `key`.
fn closes(fx: &[Effect], key: &SurfaceKey) -> bool {
    fx.iter()
        .any(|e| matches!(e, Effect::Close { key: k, .. } if k == key))
}

/// The JSON-RPC error code of `message`.
fn error_code(message: &Value) -> i64 {
    message["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error: {message}"))
}

/// Whether any effect of `fx` is a message of this kind.
fn any_message(fx: &[Effect], f: impl Fn(&Message) -> bool) -> bool {
    fx.iter().any(|e| matches!(e, Effect::Send(m) if f(m)))
}
