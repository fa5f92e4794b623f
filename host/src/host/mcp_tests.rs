//! The engine's MCP App view arms on the fake view port (`rig_tests.rs`): an `mcp_app` open makes
//! an MCP App view placed as a Surface is, the view's JSON-RPC reaches its session through the
//! view's own closure, the host answers what it owns (R-MCP-8), the view's reports are counted
//! or told to the agent (R-MCP-7, R-MCP-10), and it closes, hides and never hibernates as said.

use serde_json::{json, Value};

use lineup_host_core::Limits;
use lineup_webview_shell::{McpDrop, ViewEvent};

use super::rig_tests::{Rig, Setup};
use crate::port::{Place, ViewKind};

/// A rig whose sessions show MCP App views.
fn rig(children: bool) -> Rig {
    Rig::new(Setup {
        mcp_apps: true,
        children,
        ..Setup::default()
    })
}

/// The agent opens MCP App view `instance` of tool `get-time`, its `tools/call` id 7.
fn open(rig: &mut Rig, instance: &str) {
    rig.agent(
        "ui.open",
        json!({"instance_id": instance, "mcp_app": {
            "server": "basic-server",
            "resource": {"uri": "ui://get-time/app.html", "mime_type": "text/html;profile=mcp-app",
                         "text": "<p>the view</p>"},
            "tool": {"name": "get-time", "meta": {"ui": {"resourceUri": "ui://get-time/app.html"}},
                     "call_id": 7}}}),
    );
}

/// View `index` posts `message` through its relay.
fn post(rig: &mut Rig, index: usize, message: Value) {
    rig.report(index, ViewEvent::McpMessage(message.to_string()));
}

/// What was posted to view `index`, as JSON.
fn posted(rig: &Rig, index: usize) -> Vec<Value> {
    let view = rig.view(index);
    let posted = view.delivered.borrow();
    posted
        .iter()
        .map(|m| serde_json::from_str(m).unwrap())
        .collect()
}

/// View `index` initializes as the SDK does; the host's answer.
fn initialize(rig: &mut Rig, index: usize) -> Value {
    post(
        rig,
        index,
        json!({"jsonrpc": "2.0", "id": 1, "method": "ui/initialize",
               "params": {"protocolVersion": "2099-01-01", "appInfo": {"name": "t", "version": "1"},
                          "appCapabilities": {}}}),
    );
    let answer = posted(rig, index).into_iter().find(|m| m["id"] == 1);
    answer.expect("an answer to ui/initialize")
}

/// View `index` initializes and says `initialized`, as the SDK does.
fn initialized(rig: &mut Rig, index: usize) {
    initialize(rig, index);
    let note = json!({"jsonrpc": "2.0", "method": "ui/notifications/initialized"});
    post(rig, index, note);
}

#[test]
fn an_mcp_app_open_makes_an_mcp_app_view_in_a_window_and_the_host_answers_its_initialize() {
    let mut rig = rig(false);
    open(&mut rig, "v1");
    assert_eq!(rig.views_made(), 1);
    let view = rig.view(0);
    assert_eq!(view.kind, ViewKind::McpApp);
    match &view.place {
        Place::Window { title, .. } => assert!(title.contains("get-time"), "{title}"),
        Place::Child => panic!("a child view without child views"),
    }
    let answer = initialize(&mut rig, 0);
    let result = &answer["result"];
    // R-MCP-8: a version it does not speak gets the newest, never an error.
    assert_eq!(result["protocolVersion"], "2026-01-26", "{answer}");
    assert_eq!(result["hostInfo"]["name"], "lineup-host");
    assert_eq!(result["hostContext"]["toolInfo"]["id"], 7);
    assert_eq!(
        result["hostContext"]["toolInfo"]["tool"]["name"],
        "get-time"
    );
    assert_eq!(
        result["hostContext"]["theme"], "dark",
        "the rig's host is dark"
    );
    assert_eq!(rig.notes(), ["ready v1"], "initialize is the view's ready");

    // ping, a display mode and a link: answered by the host, the link as an isError result.
    post(
        &mut rig,
        0,
        json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}),
    );
    post(
        &mut rig,
        0,
        json!({"jsonrpc": "2.0", "id": 3, "method": "ui/request-display-mode",
               "params": {"mode": "fullscreen"}}),
    );
    post(
        &mut rig,
        0,
        json!({"jsonrpc": "2.0", "id": 4, "method": "ui/open-link",
               "params": {"url": "https://example.com/"}}),
    );
    let answers = posted(&rig, 0);
    let by_id = |id: i64| answers.iter().find(|m| m["id"] == id).cloned();
    assert_eq!(by_id(2).unwrap()["result"], json!({}));
    assert_eq!(by_id(3).unwrap()["result"], json!({"mode": "inline"}));
    assert_eq!(by_id(4).unwrap()["result"]["isError"], true);

    // The agent closes it: torn down first (R-MCP-8), closed on the view's answer.
    rig.agent("ui.close", json!({"instance_id": "v1"}));
    let teardown = posted(&rig, 0)
        .into_iter()
        .find(|m| m["method"] == "ui/resource-teardown");
    assert!(teardown.is_none(), "not initialized yet: closed at once");
    assert!(view.closed.get());
}

#[test]
fn a_views_tools_call_goes_to_the_agent_and_the_answer_comes_back_to_the_view() {
    let mut rig = rig(false);
    open(&mut rig, "v1");
    initialized(&mut rig, 0);
    let before = rig.sent.borrow().len();
    post(
        &mut rig,
        0,
        json!({"jsonrpc": "2.0", "id": "c1", "method": "tools/call",
               "params": {"name": "get-time", "arguments": {}}}),
    );
    let request = rig.sent.borrow()[before..]
        .iter()
        .find(|m| m["type"] == "lineup.v1.mcp.request")
        .cloned()
        .expect("one mcp.request");
    let payload = &request["payload"];
    assert_eq!(payload["method"], "tools/call");
    rig.agent(
        "mcp.answer",
        json!({"instance_id": "v1", "generation": payload["generation"],
               "request_id": payload["request_id"],
               "result": {"content": [{"type": "text", "text": "12:00"}]}}),
    );
    let answer = posted(&rig, 0).into_iter().find(|m| m["id"] == "c1");
    assert_eq!(
        answer.expect("the agent's answer")["result"]["content"][0]["text"],
        "12:00"
    );
}

#[test]
fn blocked_loads_reach_the_agent_but_the_sdks_one_eval_report_is_counted() {
    let mut rig = rig(false);
    open(&mut rig, "v1");
    let before = rig.sent.borrow().len();
    let blocked = |directive: &str, what: &str| ViewEvent::McpBlocked {
        directive: directive.to_owned(),
        blocked: what.to_owned(),
    };
    rig.report(0, blocked("script-src", "eval"));
    rig.report(0, blocked("connect-src", "https://example.com/x"));
    // A second eval in the same load is the view's own: it goes up too.
    rig.report(0, blocked("script-src", "eval"));
    let events: Vec<Value> = rig.sent.borrow()[before..]
        .iter()
        .filter(|m| m["type"] == "lineup.v1.ui.event")
        .map(|m| m["payload"].clone())
        .collect();
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(events[0]["event"], "blocked");
    assert_eq!(
        events[0]["data"],
        json!({"directive": "connect-src", "blocked": "https://example.com/x"})
    );
    assert_eq!(
        events[1]["data"],
        json!({"directive": "script-src", "blocked": "eval"})
    );
    let stats = rig.engine.sessions().stats();
    assert_eq!(stats.mcp_eval_reports, 1);

    // What the relay dropped is counted; one over the bound gets an error to the view.
    rig.report(0, ViewEvent::McpDropped(McpDrop::WrongSource));
    rig.report(0, ViewEvent::McpDropped(McpDrop::NotJsonRpc));
    rig.report(
        0,
        ViewEvent::McpDropped(McpDrop::TooLarge { len: 9, max: 8 }),
    );
    assert_eq!(rig.engine.sessions().stats().mcp_relay_dropped, 2);
    let errors = posted(&rig, 0);
    assert!(
        errors.iter().any(|m| m["error"]["message"]
            .as_str()
            .is_some_and(|t| t.contains("9 bytes"))),
        "{errors:?}"
    );
}

#[test]
fn an_mcp_app_view_is_laid_out_hidden_and_closed_as_a_surface_and_never_hibernates() {
    let mut limits = Limits::default();
    limits.max_live_surfaces = 2;
    let mut rig = Rig::new(Setup {
        mcp_apps: true,
        children: true,
        limits,
        ..Setup::default()
    });
    open(&mut rig, "v1");
    rig.open("w1");
    assert_eq!(rig.view(0).place, Place::Child);
    assert_eq!(rig.heard.borrow().slots.last(), Some(&(1, 2)));
    let v1 = rig.key("v1");
    assert!(rig.engine.set_surface_visible(&v1, false));
    assert!(!rig.view(0).visible.get());
    assert!(
        !rig.engine.hibernate(&v1),
        "an MCP App view never hibernates"
    );
    // The live cap is full, and the only hidden view is the MCP App view: refused.
    rig.open("w2");
    assert_eq!(rig.views_made(), 2);
    assert!(!rig.view(0).closed.get());
    // A size change is a Surface's resize (clamped, through the layout).
    assert!(rig.engine.set_surface_visible(&v1, true));
    post(
        &mut rig,
        0,
        json!({"jsonrpc": "2.0", "method": "ui/notifications/size-changed",
               "params": {"width": 300, "height": 5000}}),
    );
    assert!(rig
        .notes()
        .iter()
        .any(|n| n == "resize v1 2000 clamped=true"));
    // The view asks to be torn down: its opener hears `close`, and it closes.
    let before = rig.sent.borrow().len();
    post(
        &mut rig,
        0,
        json!({"jsonrpc": "2.0", "method": "ui/notifications/request-teardown"}),
    );
    assert!(rig.view(0).closed.get());
    let sent = rig.sent_types(before);
    assert_eq!(sent, ["lineup.v1.ui.event"], "{sent:?}");
}

#[test]
fn a_replaced_view_stays_out_of_the_layout_until_its_teardown_is_answered() {
    let mut rig = rig(true);
    open(&mut rig, "v1");
    initialized(&mut rig, 0);
    // The agent opens v1 again: the old view is asked to tear down, the new one is made.
    open(&mut rig, "v1");
    assert_eq!(rig.views_made(), 2);
    let (old, new) = (rig.view(0), rig.view(1));
    assert_eq!(new.kind, ViewKind::McpApp);
    let teardown = posted(&rig, 0)
        .into_iter()
        .find(|m| m["method"] == "ui/resource-teardown")
        .expect("the old view is asked to tear down");
    assert!(
        !old.closed.get() && !old.visible.get(),
        "kept, hidden, until it answers"
    );
    assert_eq!(
        rig.heard.borrow().slots.last(),
        Some(&(0, 1)),
        "one view laid out"
    );
    post(
        &mut rig,
        0,
        json!({"jsonrpc": "2.0", "id": teardown["id"], "result": {}}),
    );
    assert!(old.closed.get());
    assert!(!new.closed.get() && new.visible.get());
    assert!(rig.notes().iter().any(|n| n == "closed v1 Replaced"));
}

#[test]
fn a_hidden_conversations_view_starts_hidden_and_shows_with_it() {
    let mut rig = rig(true);
    let c1 = lineup_host_core::ConversationId::try_from("c1").unwrap();
    rig.engine.set_conversation_visible(&c1, false);
    open(&mut rig, "v1");
    assert!(!rig.view(0).visible.get());
    rig.engine.set_conversation_visible(&c1, true);
    assert!(rig.view(0).visible.get());
}
