//! Every envelope the agent side builds is one the host takes: valid against `schemas/` (as any
//! agent's must be, R-MCP-3 … R-MCP-6) and, fed to a real `Session` of host-core with MCP App
//! views on, opening the view with the very bytes read from the server, inline or through its
//! digest chunks (R-MCP-4).
#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]

use std::path::Path;
use std::time::Duration;

use jsonschema::{Draft, Registry, Validator};
use lineup_host_core::mcp::{McpLimits, RpcError, RpcId, INVALID_PARAMS};
use lineup_host_core::{
    Clock, ConversationId, Effect, InstanceId, McpAnswer, McpEffect, PartyId, Session,
    SessionConfig,
};
use lineup_mcp_agent::rmcp::model::{CallToolResult, ContentBlock, ResourceContents, Tool};
use lineup_mcp_agent::{
    answer_envelope, McpError, Outbox, Outgoing, ShownView, UiTool, ViewResource,
};
use serde_json::{json, Value};

const BASE: &str = "https://lineup.invalid/schemas/lineup.v1/";

/// The schemas of `schemas/`, every file registered under its `$id`; the validator of
/// `message.json` (any envelope, by `type`).
fn message_schema() -> Validator {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas");
    let documents: Vec<(String, Value)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(&path).unwrap();
            (name, serde_json::from_str(&text).unwrap())
        })
        .collect();
    assert!(
        documents.iter().any(|(n, _)| n == "mcp.tool.json"),
        "{dir:?}"
    );
    let registry = Registry::new()
        .extend(
            documents
                .iter()
                .map(|(name, doc)| (format!("{BASE}{name}"), doc.clone())),
        )
        .unwrap()
        .prepare()
        .unwrap();
    let message = &documents
        .iter()
        .find(|(n, _)| n == "message.json")
        .unwrap()
        .1;
    jsonschema::options()
        .with_draft(Draft::Draft202012)
        .should_validate_formats(true)
        .offline()
        .with_registry(&registry)
        .build(message)
        .unwrap()
}

/// Panics naming the schema's errors unless `out` is a valid envelope.
fn assert_valid(schema: &Validator, out: &Outgoing) {
    let value: Value = serde_json::from_slice(out.bytes()).unwrap();
    let errors: Vec<String> = schema
        .iter_errors(&value)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{}: {errors:?}", out.kind());
    assert_eq!(value["type"], out.kind());
    assert_eq!(value["id"], out.id().as_str());
}

struct Fixed;
impl Clock for Fixed {
    fn monotonic(&self) -> Duration {
        Duration::ZERO
    }
}

/// A session of conversation `c1` that shows MCP App views.
fn host() -> Session {
    let mut config = SessionConfig::new(PartyId::try_from("desktop").unwrap(), "out");
    config.mcp_apps = Some(McpLimits::default());
    Session::new(config, Box::new(Fixed)).unwrap()
}

/// The host's refusals among `effects`.
fn refusals(effects: &[Effect]) -> Vec<String> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Send(message) if message.to_json().contains("client.error") => {
                Some(message.to_json())
            }
            _ => None,
        })
        .collect()
}

fn outbox() -> Outbox {
    Outbox::new(
        ConversationId::try_from("c1").unwrap(),
        PartyId::try_from("agent").unwrap(),
    )
}

/// The tool `get-time` of a server, naming `ui://get-time/view`, as `tools/list` gives it.
fn listed() -> Vec<UiTool> {
    let tool: Tool = serde_json::from_value(json!({
        "name": "get-time", "inputSchema": {"type": "object", "properties": {}},
        "_meta": {"ui": {"resourceUri": "ui://get-time/view", "visibility": ["model", "app"]}}
    }))
    .unwrap();
    vec![UiTool::read(&tool)]
}

/// The view read from the server: `body` as `text` (UTF-8) or as a base64 `blob`.
fn view(body: &[u8]) -> ViewResource {
    let item = match std::str::from_utf8(body) {
        Ok(text) => json!({"uri": "ui://get-time/view", "mimeType": "text/html;profile=mcp-app",
            "text": text, "_meta": {"ui": {"prefersBorder": true,
            "csp": {"connectDomains": ["https://api.example"]}}}}),
        Err(_) => {
            use base64::Engine as _;
            let blob = base64::engine::general_purpose::STANDARD.encode(body);
            json!({"uri": "ui://get-time/view", "mimeType": "text/html;profile=mcp-app",
                "blob": blob})
        }
    };
    let contents: Vec<ResourceContents> = serde_json::from_value(json!([item])).unwrap();
    ViewResource::read("ui://get-time/view", contents).unwrap()
}

/// The envelopes that open `view`, the view of the listed `get-time`, as `v1` for call
/// `call_id`.
fn opening(
    outbox: &mut Outbox,
    call_id: RpcId,
    view: &ViewResource,
) -> Result<(ShownView, Vec<Outgoing>), McpError> {
    let tools = listed();
    let tool = UiTool::pick(&tools, None).unwrap();
    let instance = InstanceId::try_from("v1").unwrap();
    ShownView::open(
        outbox,
        instance,
        "time-server".to_owned().try_into().unwrap(),
        tool,
        call_id,
        view,
    )
}

/// Opens `body` through the agent side into a real session: the envelopes sent and what the
/// session made of them.
fn open(body: &[u8]) -> (Vec<Outgoing>, Vec<Effect>, ShownView, Outbox) {
    let mut outbox = outbox();
    let (shown, sent) = opening(&mut outbox, RpcId::Number(2), &view(body)).unwrap();
    let mut session = host();
    let effects: Vec<Effect> = sent
        .iter()
        .flat_map(|out| session.handle_inbound(out.bytes()))
        .collect();
    (sent, effects, shown, outbox)
}

/// The HTML the session opened.
fn opened_html(effects: &[Effect]) -> Vec<u8> {
    let open = effects.iter().find_map(|e| match e {
        Effect::Mcp(McpEffect::Open(open)) => Some(open),
        _ => None,
    });
    let open = open.unwrap_or_else(|| panic!("no view opened: {effects:?}"));
    assert_eq!(open.tool.name.as_str(), "get-time");
    assert_eq!(open.tool.call_id, RpcId::Number(2));
    assert_eq!(open.uri, "ui://get-time/view");
    open.html.to_vec()
}

#[test]
fn r_mcp_3_a_small_view_opens_inline_valid_and_taken_by_the_host() {
    let schema = message_schema();
    let html = "<!doctype html><p>時刻 \"quoted\" &amp;</p>";
    let (sent, effects, _, _) = open(html.as_bytes());
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].kind(), "lineup.v1.ui.open");
    assert_valid(&schema, &sent[0]);
    let wire: Value = serde_json::from_slice(sent[0].bytes()).unwrap();
    let app = &wire["payload"]["mcp_app"];
    assert_eq!(app["server"], "time-server");
    assert_eq!(app["resource"]["text"], html);
    assert_eq!(app["resource"]["ui"]["prefersBorder"], true);
    assert_eq!(
        app["resource"]["ui"]["csp"]["connectDomains"],
        json!(["https://api.example"])
    );
    assert_eq!(app["tool"]["input_schema"]["type"], "object");
    assert!(refusals(&effects).is_empty(), "{effects:?}");
    assert_eq!(opened_html(&effects), html.as_bytes());
}

#[test]
fn r_mcp_3_a_view_that_is_not_utf8_goes_as_a_blob() {
    let schema = message_schema();
    let body = b"<p>\xff\xfe</p>";
    let (sent, effects, _, _) = open(body);
    assert_eq!(sent.len(), 1);
    assert_valid(&schema, &sent[0]);
    let wire: Value = serde_json::from_slice(sent[0].bytes()).unwrap();
    assert!(wire["payload"]["mcp_app"]["resource"]["blob"].is_string());
    assert_eq!(opened_html(&effects), body);
}

/// threejs's view is about 1.12 MiB: over R-ENV-4's 1 MiB, so only chunks bring it.
#[test]
fn r_mcp_4_a_view_over_the_envelope_bound_goes_in_chunks_then_by_digest() {
    let schema = message_schema();
    let body: Vec<u8> = (0..1_180_000u32)
        .map(|i| b"<p>three \"js\"</p>\n"[i as usize % 18])
        .collect();
    let (sent, effects, _, _) = open(&body);
    let kinds: Vec<&str> = sent.iter().map(Outgoing::kind).collect();
    assert_eq!(
        kinds,
        [
            "lineup.v1.mcp.resource",
            "lineup.v1.mcp.resource",
            "lineup.v1.mcp.resource",
            "lineup.v1.mcp.resource",
            "lineup.v1.ui.open"
        ]
    );
    for out in &sent {
        assert_valid(&schema, out);
        assert!(out.bytes().len() <= 1024 * 1024, "{}", out.bytes().len());
    }
    let wire: Value = serde_json::from_slice(sent[4].bytes()).unwrap();
    let digest = wire["payload"]["mcp_app"]["resource"]["digest"].as_str();
    assert!(digest.is_some_and(|d| d.starts_with("sha256:")), "{wire}");
    assert!(refusals(&effects).is_empty(), "{:?}", refusals(&effects));
    assert_eq!(opened_html(&effects), body);
    // Positive control: the same view forced inline is over the bound the host reads.
    let inline = json!({"text": String::from_utf8(body).unwrap()}).to_string();
    assert!(inline.len() > 1024 * 1024);
}

#[test]
fn r_mcp_5_the_calls_input_result_and_cancel_are_valid_news_the_host_takes_in_order() {
    let schema = message_schema();
    let mut outbox = outbox();
    let call = RpcId::Text("call-1".into());
    let (shown, mut sent) = opening(&mut outbox, call, &view(b"<p>t</p>")).unwrap();
    let arguments = json!({"zone": "UTC"}).as_object().unwrap().clone();
    sent.push(shown.input(&mut outbox, arguments).unwrap());
    let result = CallToolResult::success(vec![ContentBlock::text("12:00")]);
    sent.push(shown.result(&mut outbox, &result).unwrap());
    let mut session = host();
    for out in &sent {
        assert_valid(&schema, out);
        let effects = session.handle_inbound(out.bytes());
        assert!(refusals(&effects).is_empty(), "{}: {effects:?}", out.kind());
    }
    let wire: Value = serde_json::from_slice(sent[2].bytes()).unwrap();
    assert_eq!(wire["payload"]["news"], "tool-result");
    assert_eq!(wire["payload"]["result"]["content"][0]["text"], "12:00");
    // After a result, a cancel is out of order: the host refuses it (positive control that
    // the session judges the news).
    let cancel = shown.cancelled(&mut outbox, "the user stopped it").unwrap();
    assert_valid(&schema, &cancel);
    assert!(!refusals(&session.handle_inbound(cancel.bytes())).is_empty());
    let close = shown.close(&mut outbox).unwrap();
    assert_valid(&schema, &close);
    assert!(refusals(&session.handle_inbound(close.bytes())).is_empty());
    // Every id differs.
    let ids: std::collections::BTreeSet<&str> = sent.iter().map(|o| o.id().as_str()).collect();
    assert_eq!(ids.len(), 3);
}

#[test]
fn r_mcp_6_answers_are_valid_and_one_over_the_bound_becomes_an_error_naming_it() {
    let schema = message_schema();
    let mut outbox = outbox();
    let answer = |outcome| McpAnswer {
        instance_id: InstanceId::try_from("v1").unwrap(),
        generation: 1,
        request_id: 4,
        outcome,
    };
    let ok = answer_envelope(
        &mut outbox,
        answer(Ok(json!({"content": []})
            .as_object()
            .unwrap()
            .clone()
            .into())),
    )
    .unwrap();
    assert_valid(&schema, &ok);
    let refused = answer_envelope(
        &mut outbox,
        answer(Err(RpcError::new(INVALID_PARAMS, "no tool \"x\""))),
    )
    .unwrap();
    assert_valid(&schema, &refused);
    let huge = json!({"contents": [{"uri": "ui://x", "text": "x".repeat(1024 * 1024)}]});
    let over = answer_envelope(
        &mut outbox,
        answer(Ok(huge.as_object().unwrap().clone().into())),
    )
    .unwrap();
    assert_valid(&schema, &over);
    let wire: Value = serde_json::from_slice(over.bytes()).unwrap();
    let message = wire["payload"]["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("over the host's limit of 1048576 bytes"),
        "{message}"
    );
    assert_eq!(wire["payload"]["request_id"], 4);
}

#[test]
fn a_tool_result_over_the_envelope_bound_is_refused_naming_the_limit() {
    let mut outbox = outbox().with_max_envelope_bytes(4096);
    let (shown, _) = opening(&mut outbox, RpcId::Number(2), &view(b"<p>t</p>")).unwrap();
    let small = CallToolResult::success(vec![ContentBlock::text("x".repeat(100))]);
    assert!(shown.result(&mut outbox, &small).is_ok());
    let big = CallToolResult::success(vec![ContentBlock::text("x".repeat(5000))]);
    match shown.result(&mut outbox, &big) {
        Err(McpError::EnvelopeTooLarge { limit, size, .. }) => {
            assert_eq!(limit, 4096);
            assert!(size > 5000, "{size}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn r_mcp_3_a_ui_meta_of_the_wrong_shape_is_refused_naming_the_member() {
    let contents: Vec<ResourceContents> = serde_json::from_value(json!([{
        "uri": "ui://get-time/view", "mimeType": "text/html;profile=mcp-app", "text": "<p/>",
        "_meta": {"ui": {"prefersBorder": "yes"}}
    }]))
    .unwrap();
    let odd = ViewResource::read("ui://get-time/view", contents).unwrap();
    let refused = opening(&mut outbox(), RpcId::Number(2), &odd);
    let Err(e) = refused else { panic!("taken") };
    assert!(
        e.to_string()
            .starts_with("mcp_app.resource.ui cannot be sent"),
        "{e}"
    );
}
