//! How a view ends: torn down before the agent's close, the user's close or a replacement,
//! bounded by `Limits::mcp_teardown_timeout` (R-MCP-8); at once when its process is gone
//! (R-UI-12); the call cancelled and its requests errored when the agent goes (R-MCP-5).

use lineup_host_core::mcp::TIMED_OUT;
use lineup_host_core::{CloseReason, GoneReason};

use super::*;

/// The teardown request posted to `key` in `fx`: its id.
fn teardown_id(fx: &[Effect], key: &SurfaceKey) -> Value {
    let asked = posted(fx, key);
    let request = asked
        .iter()
        .find(|m| m["method"] == "ui/resource-teardown")
        .unwrap_or_else(|| panic!("no teardown asked: {fx:?}"));
    request["id"].clone()
}

/// Why `fx` closes `key`.
fn close_reason(fx: &[Effect], key: &SurfaceKey) -> CloseReason {
    fx.iter()
        .find_map(|e| match e {
            Effect::Close { key: k, reason } if k == key => Some(reason.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("{key} not closed: {fx:?}"))
}

#[test]
fn r_mcp_8_the_agents_close_tears_an_initialized_view_down_first() {
    let mut rig = Rig::new();
    let key = rig.open("v1");
    rig.initialize(&key);
    let fx = rig.agent("ui.close", json!({"instance_id": "v1", "reason": "done"}));
    let id = teardown_id(&fx, &key);
    assert!(!closes(&fx, &key), "closed before its teardown: {fx:?}");
    assert_eq!(
        rig.session.surface_count(),
        0,
        "a closing view is no longer open"
    );
    // While it tears down, what it asks is refused and nothing goes up.
    let fx = rig.view(&key, rpc(9, "tools/call", json!({"name": "t"})));
    assert!(sent(&fx).is_empty(), "{fx:?}");
    assert!(error_code(&posted(&fx, &key)[0]) < 0);
    let fx = rig.view(&key, json!({"jsonrpc": "2.0", "id": id, "result": {}}));
    assert_eq!(
        close_reason(&fx, &key),
        CloseReason::Agent(Some("done".into()))
    );
    assert!(
        sent(&fx).is_empty(),
        "the agent's own close is not reported: {fx:?}"
    );
    // Afterwards the key reaches nobody.
    let before = rig.session.stats().bridge_stale;
    assert!(rig.view(&key, rpc(10, "ping", json!({}))).is_empty());
    assert_eq!(rig.session.stats().bridge_stale, before + 1);
}

#[test]
fn r_mcp_8_a_view_that_never_initialized_closes_at_once_and_one_that_never_answers_at_its_bound() {
    let mut rig = Rig::new();
    let fresh = rig.open("fresh");
    let fx = rig.agent("ui.close", json!({"instance_id": "fresh"}));
    assert!(closes(&fx, &fresh), "{fx:?}");
    assert!(
        posted(&fx, &fresh).is_empty(),
        "no teardown for a view never initialized"
    );

    let silent = rig.open("silent");
    rig.initialize(&silent);
    let fx = rig.agent("ui.close", json!({"instance_id": "silent"}));
    teardown_id(&fx, &silent);
    assert_eq!(rig.session.next_mcp_wakeup(), Some(Duration::from_secs(3)));
    assert!(!closes(&rig.at(Duration::from_millis(2999)), &silent));
    let fx = rig.at(Duration::from_secs(3));
    assert_eq!(close_reason(&fx, &silent), CloseReason::Agent(None));
    assert_eq!(rig.session.next_mcp_wakeup(), None);
    // Its answer after that is stale.
    assert!(rig
        .view(&silent, json!({"jsonrpc": "2.0", "id": 1, "result": {}}))
        .is_empty());
}

#[test]
fn r_mcp_8_a_replaced_view_is_torn_down_and_closed_replaced() {
    let mut rig = Rig::new();
    let old = rig.open("v1");
    rig.initialize(&old);
    let fx = rig.agent(
        "ui.open",
        open_payload("v1", json!({"text": "<p>2</p>"}), json!({})),
    );
    let new = opened(&fx).key.clone();
    assert_ne!(new, old);
    let id = teardown_id(&fx, &old);
    assert!(
        sent(&fx).is_empty(),
        "a replacement tells the agent nothing: {fx:?}"
    );
    let fx = rig.view(
        &old,
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": -1, "message": "x"}}),
    );
    // An error answer counts as done (R-MCP-8).
    assert_eq!(close_reason(&fx, &old), CloseReason::Replaced);
    assert_eq!(rig.session.surface_count(), 1);
}

#[test]
fn r_ui_5_the_users_close_is_told_once_then_the_view_is_torn_down() {
    let mut rig = Rig::new();
    let key = rig.open("v1");
    rig.initialize(&key);
    let fx = rig.session.handle_page(&key, PageInput::UserClosed);
    let events = sent_of(&fx, "ui.event");
    assert_eq!(events.len(), 1, "{fx:?}");
    assert_eq!(events[0]["payload"]["event"], "close");
    assert_eq!(events[0]["payload"]["data"], json!({}));
    let id = teardown_id(&fx, &key);
    let fx = rig.view(&key, json!({"jsonrpc": "2.0", "id": id, "result": {}}));
    assert_eq!(close_reason(&fx, &key), CloseReason::User);
    assert!(sent(&fx).is_empty(), "told twice: {fx:?}");
}

#[test]
fn r_ui_12_a_view_whose_process_is_gone_closes_at_once_and_the_agent_hears_why() {
    for input in [
        PageInput::Gone(GoneReason::Memory),
        PageInput::Lost(GoneReason::Crashed),
    ] {
        let mut rig = Rig::new();
        let key = rig.open("v1");
        rig.initialize(&key);
        let fx = rig.session.handle_page(&key, input);
        assert!(closes(&fx, &key), "{input:?}: {fx:?}");
        assert!(posted(&fx, &key).is_empty(), "no teardown to a dead view");
        let events = sent_of(&fx, "ui.event");
        assert_eq!(events[0]["payload"]["event"], "close");
        assert!(
            events[0]["payload"]["data"]["reason"].is_string(),
            "{input:?}"
        );
    }
}

#[test]
fn r_env_5_a_view_the_platform_could_not_make_is_refused_in_reply_to_its_open() {
    let mut rig = Rig::new();
    let key = rig.open("v1");
    let fx = rig
        .session
        .handle_page(&key, PageInput::OpenFailed("no display"));
    assert_eq!(close_reason(&fx, &key), CloseReason::Failed);
    let errors = sent_of(&fx, "client.error");
    assert_eq!(errors[0]["payload"]["code"], "surface_failed");
    assert_eq!(errors[0]["payload"]["in_reply_to"], "m-ui.open");
    assert_eq!(rig.session.surface_count(), 0);
}

#[test]
fn r_mcp_5_when_the_agent_goes_the_view_hears_the_call_cancelled_and_its_requests_fail() {
    let mut rig = Rig::new();
    let key = rig.open("v1");
    rig.agent("mcp.tool", news_input());
    rig.initialize(&key);
    let fx = rig.view(&key, rpc(4, "tools/call", json!({"name": "t"})));
    assert_eq!(sent_of(&fx, "mcp.request").len(), 1);
    let fx = rig.session.all_gone(GoneReason::AgentGone);
    let to_view = posted(&fx, &key);
    assert_eq!(to_view[0]["method"], "ui/notifications/tool-cancelled");
    assert_eq!(
        (to_view[1]["id"].clone(), error_code(&to_view[1])),
        (json!(4), TIMED_OUT)
    );
    assert_eq!(to_view[2]["method"], "ui/resource-teardown");
    let events = sent_of(&fx, "ui.event");
    assert_eq!(events[0]["payload"]["data"]["reason"], "agent_gone");
    // The agent's answer, should it still come, reaches nobody.
    let fx = rig.agent(
        "mcp.answer",
        json!({"instance_id": "v1", "generation": key.generation.get(), "request_id": 1, "result": {}}),
    );
    assert!(posted(&fx, &key).is_empty(), "{fx:?}");
}

#[test]
fn r_mcp_5_when_the_session_ends_each_view_hears_the_call_cancelled_and_closes() {
    let mut rig = Rig::new();
    let key = rig.open("v1");
    rig.agent("mcp.tool", news_input());
    rig.initialize(&key);
    let fx = rig.session.close_all();
    assert_eq!(
        posted(&fx, &key)[0]["method"],
        "ui/notifications/tool-cancelled"
    );
    assert_eq!(close_reason(&fx, &key), CloseReason::SessionEnded);
    assert!(
        sent(&fx).is_empty(),
        "nothing goes upstream once the session ends: {fx:?}"
    );
    assert!(!any_message(&fx, |_| true));
}

fn news_input() -> Value {
    json!({"instance_id": "v1", "news": "tool-input", "arguments": {}})
}
