//! What the host answers itself for an MCP App view (R-MCP-8, R-MCP-9), table-tested on
//! `mcp_host::host_reply` with messages as the view's router hands them over, and every
//! `ui/initialize` answer validated against `McpUiInitializeResultSchema` of the pinned
//! `@modelcontextprotocol/ext-apps` 2.0.4 (its published `dist/src/generated/schema.json`): an
//! answer that fails it leaves the SDK's `App` dead. The schema comes from the library cache that
//! `scripts/libraries.sh` makes; under CI (`CI=true`) a missing cache fails the test.
#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]

use std::time::Duration;

use lineup_host_core::mcp::{HostOwned, McpLimits, McpOut, McpRouter, ShownTool};
use lineup_host_core::mcp_host::{
    host_reply, protocol_version, HostFacts, HostReply, McpAppsInventory, McpTheme,
};
use lineup_host_core::McpAppTool;
use serde_json::{json, Map, Value};

mod support;

/// One way to break a good answer, named.
type Break = (&'static str, fn(&mut Value));

/// The pinned SDK whose schema every answer must pass.
const SDK_VERSION: &str = "2.0.4";
/// Where the library cache holds it.
const PACKAGE: &str = "node_modules/@modelcontextprotocol/ext-apps";

/// The tool of `call_id` with `input_schema`, as the agent's `ui.open` names it.
fn tool(call_id: Value, input_schema: Option<Value>) -> McpAppTool {
    let mut tool = json!({"name": "get-time", "call_id": call_id,
        "meta": {"ui": {"resourceUri": "ui://get-time/app.html", "visibility": ["model", "app"]}}});
    if let Some(schema) = input_schema {
        tool["input_schema"] = schema;
    }
    serde_json::from_value(tool).unwrap()
}

/// `message` as the view's router hands it to the host (a host-owned request or
/// notification); the view initialized first when `message` is not `ui/initialize`.
fn host_owned(message: Value) -> HostOwned {
    let mut router = McpRouter::new(McpLimits::default(), ShownTool::new("get-time", &json!({})));
    let outs = router.from_view(&message.to_string(), Duration::ZERO);
    let owned = outs.into_iter().find_map(|out| match out {
        McpOut::HostOwned(owned) => Some(owned),
        _ => None,
    });
    owned.unwrap_or_else(|| panic!("the router kept {message} from the host"))
}

fn request(id: i64, method: &str, params: Value) -> HostOwned {
    host_owned(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
}

fn notification(method: &str, params: Value) -> HostOwned {
    host_owned(json!({"jsonrpc": "2.0", "method": method, "params": params}))
}

fn facts() -> HostFacts {
    HostFacts::new("lineup-host", "0.1.0")
}

fn params(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}

#[test]
fn r_mcp_8_protocol_version_is_the_views_when_spoken_else_the_newest_never_an_error() {
    let table = [
        (json!({"protocolVersion": "2026-01-26"}), "2026-01-26"),
        (json!({"protocolVersion": "2025-11-21"}), "2025-11-21"),
        (json!({"protocolVersion": "2099-12-31"}), "2026-01-26"),
        (json!({"protocolVersion": "2025-06-18"}), "2026-01-26"),
        (json!({"protocolVersion": 20260126}), "2026-01-26"),
        (json!({}), "2026-01-26"),
    ];
    for (asked, answered) in table {
        assert_eq!(
            protocol_version(&params(asked.clone())),
            answered,
            "{asked}"
        );
        let reply = host_reply(
            &request(1, "ui/initialize", asked.clone()),
            &tool(json!(7), None),
            &facts(),
        );
        let HostReply::Initialize(result) = reply else {
            panic!("{asked}: {reply:?}");
        };
        assert_eq!(result["protocolVersion"], answered, "{asked}");
    }
}

#[test]
fn r_mcp_8_r_mcp_9_each_host_owned_method_gets_its_reply() {
    let tool = tool(json!(7), None);
    let table: [(HostOwned, HostReply); 9] = [
        (
            request(2, "ping", json!({})),
            HostReply::Answer(Ok(json!({}))),
        ),
        (
            request(3, "ui/request-display-mode", json!({"mode": "fullscreen"})),
            HostReply::Answer(Ok(json!({"mode": "inline"}))),
        ),
        (
            request(4, "ui/request-display-mode", json!({"mode": "inline"})),
            HostReply::Answer(Ok(json!({"mode": "inline"}))),
        ),
        (
            notification(
                "ui/notifications/size-changed",
                json!({"width": 300, "height": 240.5}),
            ),
            HostReply::Resize(240.5),
        ),
        (
            notification("ui/notifications/size-changed", json!({"width": 300})),
            HostReply::Nothing,
        ),
        (
            notification("ui/notifications/size-changed", json!({"height": -1})),
            HostReply::Nothing,
        ),
        (
            notification("ui/notifications/size-changed", json!({"height": "tall"})),
            HostReply::Nothing,
        ),
        (
            notification("ui/notifications/request-teardown", json!({})),
            HostReply::Teardown,
        ),
        (
            request(5, "ui/initialize", json!({})),
            HostReply::Initialize(Value::Null),
        ),
    ];
    for (message, expected) in table {
        let reply = host_reply(&message, &tool, &facts());
        match (&reply, &expected) {
            (HostReply::Initialize(_), HostReply::Initialize(_)) => {}
            _ => assert_eq!(reply, expected, "{}", message.method),
        }
    }
    // R-MCP-9: a link or a download is refused with an isError result naming why, never
    // silence and never a JSON-RPC error (the SDK's schema takes a result).
    for method in ["ui/open-link", "ui/download-file"] {
        let reply = host_reply(
            &request(6, method, json!({"url": "https://example.com/"})),
            &tool,
            &facts(),
        );
        let HostReply::Answer(Ok(result)) = reply else {
            panic!("{method}: {reply:?}");
        };
        assert_eq!(result["isError"], true, "{method}");
        let why = result["content"][0]["text"].as_str().unwrap_or_default();
        assert!(why.contains(method) && why.contains("R-MCP-9"), "{why}");
    }
}

/// The answers the schema is checked on: each way the host's facts and the agent's tool vary.
fn answers() -> Vec<(String, Value)> {
    let mut out = Vec::new();
    let tools = [
        ("a numeric call id", tool(json!(7), None)),
        ("a string call id", tool(json!("call-7"), None)),
        (
            "a call id past a safe integer",
            tool(json!(9_007_199_254_740_993_i64), None),
        ),
        (
            "an object input schema",
            tool(
                json!(1),
                Some(
                    json!({"type": "object", "properties": {"city": {"type": "string"}},
                            "required": ["city"], "additionalProperties": false}),
                ),
            ),
        ),
        (
            "an input schema the SDK would refuse",
            tool(json!(1), Some(json!({"type": "array", "required": [3]}))),
        ),
    ];
    for (what, tool) in &tools {
        for (asked, zone, theme, sampling) in [
            ("2026-01-26", Some("Europe/Paris"), McpTheme::Light, false),
            ("2025-11-21", None, McpTheme::Dark, true),
            ("1999-01-01", Some("UTC"), McpTheme::Dark, false),
        ] {
            let mut facts = facts();
            facts.theme = theme;
            facts.time_zone = zone.map(str::to_owned);
            facts.sampling = sampling;
            facts.locale = "zh-Hans-CN".to_owned();
            let message = request(
                1,
                "ui/initialize",
                json!({"protocolVersion": asked,
                "appInfo": {"name": "t", "version": "1"}, "appCapabilities": {}}),
            );
            let HostReply::Initialize(result) = host_reply(&message, tool, &facts) else {
                panic!("no initialize reply");
            };
            out.push((
                format!("{what}, asked {asked}, sampling {sampling}"),
                result,
            ));
        }
    }
    out
}

/// `McpUiInitializeResultSchema` of the pinned SDK, compiled; `None` when the library cache
/// has no SDK, outside CI ([`support::library_cache`]).
fn initialize_result_schema() -> Option<jsonschema::Validator> {
    let package = support::library_cache(PACKAGE)?.join(PACKAGE);
    let read = |file: &str| -> Value {
        let path = package.join(file);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path:?}: {e}"))
    };
    assert_eq!(
        read("package.json")["version"],
        SDK_VERSION,
        "the cache holds another SDK than the pinned one"
    );
    let schema = read("dist/src/generated/schema.json")["$defs"]["McpUiInitializeResult"].clone();
    assert!(
        schema.is_object(),
        "no McpUiInitializeResult in the SDK's schema"
    );
    let validator = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .offline()
        .build(&schema)
        .unwrap_or_else(|e| panic!("McpUiInitializeResultSchema does not compile: {e}"));
    Some(validator)
}

#[test]
fn r_mcp_8_every_initialize_answer_passes_the_pinned_sdks_initialize_result_schema() {
    let Some(schema) = initialize_result_schema() else {
        return;
    };
    // Positive controls: answers the SDK's App would refuse are refused here too.
    let (_, good) = answers().remove(0);
    let broken: [Break; 6] = [
        ("a capability that is not an object", |r| {
            r["hostCapabilities"]["logging"] = json!(true);
        }),
        ("a theme of neither kind", |r| {
            r["hostContext"]["theme"] = json!("blue");
        }),
        ("a tool without an input schema", |r| {
            let tool = r["hostContext"]["toolInfo"]["tool"]
                .as_object_mut()
                .unwrap();
            tool.remove("inputSchema");
        }),
        ("no hostInfo version", |r| {
            r["hostInfo"].as_object_mut().unwrap().remove("version");
        }),
        ("a display mode outside the three", |r| {
            r["hostContext"]["displayMode"] = json!("sidebar");
        }),
        // Why the host sends no containerDimensions: the schema takes none but `{}`.
        ("containerDimensions with a width and a maxHeight", |r| {
            r["hostContext"]["containerDimensions"] = json!({"width": 480, "maxHeight": 2000});
        }),
    ];
    for (what, breaks) in broken {
        let mut answer = good.clone();
        breaks(&mut answer);
        assert!(
            !schema.is_valid(&answer),
            "the schema took {what}: {answer}"
        );
    }
    for (what, answer) in answers() {
        let errors: Vec<String> = schema.iter_errors(&answer).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{what}: {errors:?}\n{answer}");
    }
}

#[test]
fn r_mcp_8_r_mcp_10_the_answer_offers_exactly_what_the_host_routes_and_grants_nothing() {
    for (what, answer) in answers() {
        let capabilities = answer["hostCapabilities"].as_object().unwrap();
        let mut names: Vec<&str> = capabilities.keys().map(String::as_str).collect();
        names.sort_unstable();
        let sampling = what.ends_with("sampling true");
        let mut expected = vec![
            "logging",
            "message",
            "sandbox",
            "serverResources",
            "serverTools",
            "updateModelContext",
        ];
        if sampling {
            expected.push("sampling");
            expected.sort_unstable();
        }
        assert_eq!(names, expected, "{what}");
        assert!(
            capabilities.values().all(Value::is_object),
            "{what}: every capability is an object: {answer}"
        );
        assert_eq!(
            answer["hostCapabilities"]["sandbox"],
            json!({"permissions": {}, "csp": {}}),
            "{what}: no permission and no CSP domain is granted"
        );
        let context = &answer["hostContext"];
        assert_eq!(context["platform"], "desktop");
        assert_eq!(context["displayMode"], "inline");
        assert_eq!(context["availableDisplayModes"], json!(["inline"]));
        assert_eq!(context["locale"], "zh-Hans-CN");
        assert!(
            context["toolInfo"]["tool"]["inputSchema"]["type"] == "object",
            "{what}"
        );
    }
}

#[test]
fn r_mcp_13_the_inventory_lists_sampling_only_when_the_agent_declared_it() {
    let mut limits = McpLimits::default();
    let without = McpAppsInventory::of(&limits);
    limits.sampling = true;
    let with = McpAppsInventory::of(&limits);
    let methods = |listed: &McpAppsInventory| -> Vec<Value> {
        listed
            .forwarded
            .iter()
            .map(|m| serde_json::to_value(m).unwrap())
            .collect()
    };
    assert!(!methods(&without).contains(&json!("sampling/createMessage")));
    assert!(methods(&with).contains(&json!("sampling/createMessage")));
    assert_eq!(
        serde_json::to_value(&without).unwrap()["network"],
        json!("none")
    );
}
