//! Entry points shared by the fuzz targets in `fuzz/` and the property tests that run them on
//! the stable toolchain: each feeds arbitrary bytes through a decoder and a [`Session`] and checks
//! the invariants that must hold for any input.

use std::time::Duration;

use serde_json::Value;

use crate::decode::decode;
use crate::ids::PartyId;
use crate::limits::Limits;
use crate::mcp::McpLimits;
use crate::mcp_effect::McpEffect;
use crate::page_input::PageInput;
use crate::session::{Clock, Effect, Session, SessionConfig};
use crate::BridgeMessage;

struct Zero;

impl Clock for Zero {
    fn monotonic(&self) -> Duration {
        Duration::ZERO
    }
}

/// A fresh session with the default configuration. Its construction failing is a failure of
/// the target, not an input to skip: a target that skipped it would check nothing at all.
fn session() -> Session {
    let config = SessionConfig::new(PartyId::known("fuzz"), "out");
    match Session::new(config, Box::new(Zero)) {
        Ok(session) => session,
        Err(e) => panic!("the default session configuration was refused: {e}"),
    }
}

/// A valid `ui.open` of Surface `w`, from agent `a`.
const OPEN: &[u8] = br#"{"v":1,"id":"m","type":"lineup.v1.ui.open","conversation_id":"c","sender":{"kind":"agent","id":"a"},"payload":{"instance_id":"w","app":{"id":"com.example.w","version":"1.0.0","html":"","css":"","js":""}}}"#;

/// Decodes `data` as an inbound envelope, feeds it to a fresh session, and checks that a
/// decoded message re-encodes to JSON that decodes to the same message, and that every refusal
/// leaves the session without Surfaces.
pub fn envelope_decode(data: &[u8]) {
    let limits = Limits::default();
    if let Ok(message) = decode(data, &limits) {
        let again = decode(message.to_json().as_bytes(), &limits);
        assert_eq!(
            again.as_ref().ok(),
            Some(&message),
            "re-encoding changed the message"
        );
    }
    let mut session = session();
    let effects = session.handle_inbound(data);
    if effects.iter().any(|e| matches!(e, Effect::Rejected(_))) {
        assert_eq!(session.surfaces().count(), 0, "a refusal opened a surface");
    }
}

/// Decodes `data` (lossily as UTF-8) as a bridge message, and posts it to an open Surface: it is
/// either forwarded, dropped and counted, or a state request; never a panic. The Surface is
/// opened by a fixed, valid `ui.open`, which must yield [`Effect::Open`] first (R-UI-1).
pub fn bridge_decode(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let _ = BridgeMessage::decode(&text, &Limits::default());
    let mut session = session();
    // The Surface the message is posted to; without it the target would check nothing.
    let opened = session.handle_inbound(OPEN);
    let Some(Effect::Open(surface)) = opened.first() else {
        panic!("a valid ui.open did not open its Surface first: {opened:?}");
    };
    let surface = surface.clone();
    let before = session.stats().clone();
    let effects = session.handle_bridge(&surface.key, &text);
    let after = session.stats();
    let counted = after != &before;
    let acted = effects.iter().any(|e| {
        matches!(
            e,
            Effect::Send(_) | Effect::Resize { .. } | Effect::DeliverState { .. }
        )
    });
    assert!(
        counted || acted,
        "a bridge message was neither handled nor counted"
    );
}

/// A valid `ui.open` of MCP App view `v`, from agent `a`, and its tool's input.
const OPEN_VIEW: &[u8] = br#"{"v":1,"id":"m","type":"lineup.v1.ui.open","conversation_id":"c","sender":{"kind":"agent","id":"a"},"payload":{"instance_id":"v","mcp_app":{"server":"s","resource":{"uri":"ui://s/v","mime_type":"text/html;profile=mcp-app","text":""},"tool":{"name":"t","meta":{"ui":{"resourceUri":"ui://s/v"}},"call_id":1}}}}"#;
const INPUT: &[u8] = br#"{"v":1,"id":"n","type":"lineup.v1.mcp.tool","conversation_id":"c","sender":{"kind":"agent","id":"a"},"payload":{"instance_id":"v","news":"tool-input","arguments":{}}}"#;

/// Posts `data` (lossily as UTF-8) as a JSON-RPC message of an initialized MCP App view
/// (R-MCP-6): a request with an id gets exactly one of an answer posted to the view under that
/// id, an `mcp.request` to the agent, or a host-owned request for the driver; whatever else
/// is refused is counted; never a panic. (Fuzzed inputs stay far below the view's size bound.)
pub fn mcp_from_view(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut config = SessionConfig::new(PartyId::known("fuzz"), "out");
    config.mcp_apps = Some(McpLimits::default());
    let mut session = match Session::new(config, Box::new(Zero)) {
        Ok(session) => session,
        Err(e) => panic!("the session configuration was refused: {e}"),
    };
    let opened = session.handle_inbound(OPEN_VIEW);
    let Some(Effect::Mcp(McpEffect::Open(view))) = opened.first() else {
        panic!("a valid mcp_app open did not open its view first: {opened:?}");
    };
    let key = view.key.clone();
    session.handle_inbound(INPUT);
    for init in [
        r#"{"jsonrpc":"2.0","id":0,"method":"ui/initialize","params":{}}"#,
        r#"{"jsonrpc":"2.0","method":"ui/notifications/initialized"}"#,
    ] {
        session.handle_page(&key, PageInput::McpFromView(init));
    }
    let before = session.stats().clone();
    let effects = session.handle_page(&key, PageInput::McpFromView(&text));
    let request_id = serde_json::from_str::<Value>(&text).ok().and_then(|v| {
        let is_request = v.get("jsonrpc") == Some(&Value::from("2.0"))
            && v.get("method").is_some_and(Value::is_string)
            && v.get("id").is_some_and(|id| id.is_string() || id.is_i64());
        is_request.then(|| v["id"].clone())
    });
    let answers = effects
        .iter()
        .filter(|e| match e {
            Effect::Mcp(McpEffect::Post { message, .. }) => {
                let posted = serde_json::from_str::<Value>(message).unwrap_or(Value::Null);
                posted.get("method").is_none() && Some(&posted["id"]) == request_id.as_ref()
            }
            Effect::Mcp(McpEffect::HostOwned { .. }) => true,
            Effect::Send(message) => message.message_type() == "lineup.v1.mcp.request",
            _ => false,
        })
        .count();
    if request_id.is_some() {
        assert_eq!(
            answers, 1,
            "a request was not answered exactly once: {effects:?}"
        );
    } else if answers > 0 {
        // An answer under no request's id is a refusal: counted.
        assert!(session.stats() != &before, "a refusal was not counted");
    }
}

/// The byte cap of the largest Markdown sink (`markdown.text`, R-STD-10).
const MARKDOWN_SINK_CAP: usize = 32 * 1024;

/// Parses Markdown made from `data` and checks that the tree is bounded where it is built
/// (R-STD-10): no node deeper than [`crate::MAX_MARKDOWN_DEPTH`], at most
/// [`crate::MAX_MARKDOWN_NODES`] nodes (and the truncated root's), and that serializing,
/// cloning and dropping it run on a 256 KiB stack. The first byte is a repeat count: the rest
/// is repeated up to that many times within the largest sink's 32 KiB, so that a short input
/// reaches deep nesting (`>`, list markers, emphasis, brackets) as a whole sink would.
pub fn markdown_nesting(data: &[u8]) {
    let Some((&repeat, unit)) = data.split_first() else {
        return;
    };
    let unit = String::from_utf8_lossy(unit);
    let mut text = String::new();
    for _ in 0..=usize::from(repeat).pow(2) {
        if text.len() + unit.len() > MARKDOWN_SINK_CAP {
            break;
        }
        text.push_str(&unit);
    }
    let doc = crate::parse_markdown(&text, crate::LinkPolicy::Confirm);
    // Depth and count, walked without recursion.
    let mut stack: Vec<(&crate::MarkdownNode, usize)> = doc.blocks.iter().map(|n| (n, 1)).collect();
    let mut nodes = 0usize;
    while let Some((node, depth)) = stack.pop() {
        nodes += 1;
        assert!(
            depth <= crate::MAX_MARKDOWN_DEPTH,
            "a node nested {depth} deep"
        );
        for child in node.children() {
            stack.push((child, depth + 1));
        }
    }
    assert!(
        nodes <= crate::MAX_MARKDOWN_NODES + crate::MAX_MARKDOWN_DEPTH,
        "{nodes} nodes kept"
    );
    let walked = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || {
            let json = serde_json::to_string(&doc).unwrap_or_default();
            let copy = doc.clone();
            let mut visited = 0usize;
            copy.visit(&mut |_| visited += 1);
            drop(copy);
            drop(doc);
            (json.len(), visited)
        })
        .map(std::thread::JoinHandle::join);
    match walked {
        Ok(Ok((_, visited))) => assert_eq!(visited, nodes, "visit and the walk disagree"),
        Ok(Err(_)) => panic!("a walk of the tree panicked"),
        // No thread to be had is the fuzzing machine's limit, not a finding.
        Err(_) => {}
    }
}
