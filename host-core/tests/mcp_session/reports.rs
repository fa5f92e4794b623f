//! What a view's relay and its policy report (R-MCP-7, R-MCP-10): a blocked load goes to the
//! opener as `ui.event` `blocked`, except the SDK's one `script-src` `eval` report per load
//! (counted), and at most 32 per view; what the relay dropped unread is counted; a closing
//! view's reports go nowhere. And the inventory lists `mcp_apps` exactly when views are shown
//! (R-MCP-13).

use lineup_host_core::{
    CapabilitySetup, ConversationId, McpRelayDrop, RevisionEpoch, Timestamp, WallClock,
};

use super::*;

/// A `blocked` report of `directive` for `what`, from view `key`.
fn blocked(rig: &mut Rig, key: &SurfaceKey, directive: &str, what: &str) -> Vec<Effect> {
    let input = PageInput::McpBlocked {
        directive,
        blocked: what,
    };
    rig.session.handle_page(key, input)
}

/// The `data` of the `ui.event` `blocked` envelopes of `fx`.
fn blocked_events(fx: &[Effect]) -> Vec<Value> {
    sent_of(fx, "ui.event")
        .into_iter()
        .filter(|m| m["payload"]["event"] == "blocked")
        .map(|m| m["payload"]["data"].clone())
        .collect()
}

#[test]
fn r_mcp_10_the_sdks_eval_report_is_counted_once_per_load_and_every_other_block_is_told() {
    let mut rig = Rig::new();
    let key = rig.open("v1");
    let fx = blocked(&mut rig, &key, "script-src", "eval");
    assert!(blocked_events(&fx).is_empty(), "{fx:?}");
    assert_eq!(rig.session.stats().mcp_eval_reports, 1);
    // A second eval in the same load is the view's own.
    let fx = blocked(&mut rig, &key, "script-src", "eval");
    assert_eq!(
        blocked_events(&fx),
        [json!({"directive": "script-src", "blocked": "eval"})]
    );
    let fx = blocked(&mut rig, &key, "img-src", "https://tracker.example/p.gif");
    assert_eq!(
        blocked_events(&fx),
        [json!({"directive": "img-src", "blocked": "https://tracker.example/p.gif"})]
    );
    assert_eq!(sent_of(&fx, "ui.event")[0]["payload"]["instance_id"], "v1");
    // A reload (a second `ui/initialize`) is a new load: its eval report is the SDK's again.
    rig.initialize(&key);
    rig.view(&key, rpc(2, "ui/initialize", json!({})));
    let fx = blocked(&mut rig, &key, "script-src", "eval");
    assert!(blocked_events(&fx).is_empty(), "{fx:?}");
    assert_eq!(rig.session.stats().mcp_eval_reports, 2);
}

#[test]
fn r_mcp_10_a_view_reports_at_most_32_blocked_loads_then_they_are_counted() {
    let mut rig = Rig::new();
    let key = rig.open("v1");
    let mut told = 0;
    for n in 0..40 {
        let url = format!("https://example.com/{n}");
        told += blocked_events(&blocked(&mut rig, &key, "connect-src", &url)).len();
    }
    assert_eq!(told, 32);
    assert_eq!(rig.session.stats().mcp_blocked_suppressed, 8);
    // Another view has its own 32.
    let other = rig.open("v2");
    let fx = blocked(&mut rig, &other, "connect-src", "https://example.com/x");
    assert_eq!(blocked_events(&fx).len(), 1);
}

#[test]
fn r_mcp_10_a_closing_views_blocked_loads_go_nowhere() {
    let mut rig = Rig::new();
    let key = rig.open("v1");
    rig.initialize(&key);
    // The agent closes it: it waits for its teardown answer.
    let fx = rig.agent("ui.close", json!({"instance_id": "v1"}));
    assert!(
        !closes(&fx, &key),
        "an initialized view closes after its teardown"
    );
    let fx = blocked(&mut rig, &key, "connect-src", "https://example.com/");
    assert!(blocked_events(&fx).is_empty(), "{fx:?}");
    assert_eq!(rig.session.stats().mcp_blocked_suppressed, 1);
    // Positive control: an open view's block is told.
    let open = rig.open("v2");
    let fx = blocked(&mut rig, &open, "connect-src", "https://example.com/");
    assert_eq!(blocked_events(&fx).len(), 1);
}

#[test]
fn r_mcp_7_what_the_relay_dropped_is_counted_and_answered_by_nothing() {
    let mut rig = Rig::new();
    let key = rig.open("v1");
    for why in [McpRelayDrop::WrongSource, McpRelayDrop::NotJsonRpc] {
        let fx = rig
            .session
            .handle_page(&key, PageInput::McpRelayDropped(why));
        assert!(fx.is_empty(), "{why:?}: {fx:?}");
    }
    assert_eq!(rig.session.stats().mcp_relay_dropped, 2);
    // One over the bound, dropped where it arrived: the view hears an error naming it.
    let fx = rig
        .session
        .handle_page(&key, PageInput::Oversized { len: 9_000_000 });
    let errors = posted(&fx, &key);
    assert!(
        errors.len() == 1 && errors[0]["id"].is_null() && error_code(&errors[0]) < 0,
        "{errors:?}"
    );
}

/// A wall clock at the epoch: nothing here reads the date.
struct Epoch;

impl WallClock for Epoch {
    fn now(&self) -> Timestamp {
        Timestamp::from_unix_millis(0).unwrap()
    }
}

#[test]
fn r_mcp_13_the_inventory_lists_mcp_apps_exactly_when_views_are_shown() {
    for shown in [true, false] {
        let mut config = SessionConfig::new(PartyId::try_from("desktop").unwrap(), "out");
        config.conversation_id = Some(ConversationId::try_from("c1").unwrap());
        config.mcp_apps = shown.then(McpLimits::default);
        let mut session = Session::new(config, Box::new(Hands::default())).unwrap();
        let fx = session
            .enable_capabilities(CapabilitySetup::new(RevisionEpoch(1), Box::new(Epoch)))
            .unwrap();
        let inventory = sent_of(&fx, "client.inventory");
        let listed = &inventory[0]["payload"]["mcp_apps"];
        assert_eq!(!listed.is_null(), shown, "{inventory:?}");
        if shown {
            assert_eq!(listed["network"], "none");
            assert_eq!(listed["display_modes"], json!(["inline"]));
            assert_eq!(listed["protocol_versions"][0], "2026-01-26");
        }
    }
}
