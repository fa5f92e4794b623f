//! The MCP App view's router (R-MCP-5, R-MCP-6, R-MCP-7, R-MCP-8), table-tested on its own:
//! the tool call's news in order and held until `initialized`, forwarded requests within their
//! cap, rate, size and deadline, each refusal a JSON-RPC error to the view.
#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]

use std::time::Duration;

use lineup_host_core::mcp::{
    McpLimits, McpOut, McpRouter, RpcError, RpcId, ShownTool, ToolNews, INVALID_REQUEST,
    METHOD_NOT_FOUND, PARSE_ERROR, REFUSED, TIMED_OUT,
};
use serde_json::{json, Map, Value};

/// The tool the view shows, callable by the app (no visibility given).
fn tool() -> ShownTool {
    ShownTool::new(
        "show_weather",
        &json!({"ui": {"resourceUri": "ui://weather/view"}}),
    )
}

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

fn map(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

fn to_view(out: &[McpOut]) -> Vec<Value> {
    out.iter()
        .filter_map(|o| match o {
            McpOut::ToView(text) => Some(serde_json::from_str(text).unwrap()),
            _ => None,
        })
        .collect()
}

fn upstream(out: &[McpOut]) -> Vec<(u64, String)> {
    out.iter()
        .filter_map(|o| match o {
            McpOut::Upstream(r) => Some((r.id, r.method.clone())),
            _ => None,
        })
        .collect()
}

fn call(id: i64, method: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {"name": "t"}}).to_string()
}

fn initialized(router: &mut McpRouter) -> Vec<McpOut> {
    router.from_view(
        r#"{"jsonrpc":"2.0","method":"ui/notifications/initialized"}"#,
        Duration::ZERO,
    )
}

fn error_code(v: &Value) -> i64 {
    v["error"]["code"].as_i64().unwrap()
}

#[test]
fn r_mcp_5_the_tool_calls_news_goes_in_order_or_is_refused() {
    let partial = || ToolNews::InputPartial(map(json!({"q": "p"})));
    let input = || ToolNews::Input(map(json!({"q": "paris"})));
    let result = || ToolNews::Result(map(json!({"content": []})));
    let cancelled = || ToolNews::Cancelled("stop".to_owned());
    // Each row: the news in order, and which of them are refused.
    let table: Vec<(Vec<ToolNews>, Vec<bool>)> = vec![
        (
            vec![partial(), partial(), input(), result()],
            vec![true, true, true, true],
        ),
        (vec![input(), result()], vec![true, true]),
        (vec![result()], vec![false]),
        (vec![input(), input()], vec![true, false]),
        (vec![input(), partial()], vec![true, false]),
        (vec![input(), result(), result()], vec![true, true, false]),
        (
            vec![input(), result(), cancelled()],
            vec![true, true, false],
        ),
        (
            vec![partial(), cancelled(), input()],
            vec![true, true, false],
        ),
        (vec![cancelled(), cancelled()], vec![true, false]),
    ];
    for (news, allowed) in table {
        let mut router = McpRouter::new(McpLimits::default(), tool());
        let _ = initialized(&mut router);
        let got: Vec<bool> = news.iter().map(|n| router.tool_news(n).is_ok()).collect();
        assert_eq!(got, allowed, "{news:?}");
    }
    let mut router = McpRouter::new(McpLimits::default(), tool());
    let _ = router.tool_news(&input());
    let refused = router.tool_news(&partial()).unwrap_err();
    assert!(
        refused.contains("tool-input-partial is out of order after tool-input"),
        "{refused}"
    );
}

#[test]
fn r_mcp_5_news_waits_for_initialized_and_a_reload_gets_it_again() {
    let mut router = McpRouter::new(McpLimits::default(), tool());
    let init = call(1, "ui/initialize");
    let out = router.from_view(&init, Duration::ZERO);
    assert!(matches!(out.as_slice(), [McpOut::HostOwned(h)] if h.method == "ui/initialize"));
    // Before `initialized`, nothing reaches the view.
    assert!(router
        .tool_news(&ToolNews::Input(map(json!({"q": "a"}))))
        .unwrap()
        .is_empty());
    assert!(router
        .tool_news(&ToolNews::Result(map(
            json!({"content": [{"type": "text", "text": "r"}]})
        )))
        .unwrap()
        .is_empty());
    let sent = to_view(&initialized(&mut router));
    let methods: Vec<&str> = sent.iter().map(|m| m["method"].as_str().unwrap()).collect();
    assert_eq!(
        methods,
        [
            "ui/notifications/tool-input",
            "ui/notifications/tool-result"
        ]
    );
    assert_eq!(sent[0]["params"]["arguments"]["q"], "a");
    assert_eq!(sent[1]["params"]["content"][0]["text"], "r");
    // A second `ui/initialize` is a reload: the agent is told, and after the new
    // `initialized` the input and the result go again (R-MCP-7).
    let out = router.from_view(&call(2, "ui/initialize"), Duration::ZERO);
    assert!(matches!(out.first(), Some(McpOut::Reloaded)), "{out:?}");
    assert_eq!(to_view(&initialized(&mut router)).len(), 2);
}

#[test]
fn r_mcp_6_a_forwarded_request_is_answered_under_the_views_id_and_only_while_it_waits() {
    let mut router = McpRouter::new(McpLimits::default(), tool());
    let request = json!({"jsonrpc": "2.0", "id": "v-7", "method": "tools/call",
                         "params": {"name": "refresh", "_meta": {"progressToken": "tok"}}});
    let out = router.from_view(&request.to_string(), Duration::ZERO);
    let [(id, method)] = upstream(&out).try_into().unwrap();
    assert_eq!(method, "tools/call");
    // Progress goes to the view under its own token.
    let progress = to_view(&router.upstream_progress(id, map(json!({"progress": 1}))));
    assert_eq!(progress[0]["method"], "notifications/progress");
    assert_eq!(progress[0]["params"]["progressToken"], "tok");
    let answer = to_view(&router.upstream_answered(id, Ok(json!({"content": []}))));
    assert_eq!(answer[0]["id"], "v-7");
    assert_eq!(answer[0]["result"], json!({"content": []}));
    // Answered: a second answer and late progress are dropped and counted.
    assert!(router.upstream_answered(id, Ok(json!({}))).is_empty());
    assert!(router.upstream_progress(id, Map::new()).is_empty());
    assert_eq!(router.stats().late, 2);
    // An agent error reaches the view as the agent wrote it.
    let out = router.from_view(&call(8, "resources/read"), Duration::ZERO);
    let (id, _) = upstream(&out)[0].clone();
    let answer =
        to_view(&router.upstream_answered(id, Err(RpcError::new(-32002, "no such resource"))));
    assert_eq!(answer[0]["error"]["message"], "no such resource");
}

#[test]
fn r_mcp_6_every_refusal_is_a_json_rpc_error_naming_its_limit() {
    let mut limits = McpLimits::default();
    limits.max_in_flight = 2;
    limits.max_message_bytes = 512;
    let mut router = McpRouter::new(limits, tool());
    // Each row: what the view sends, the code it gets, and words the message must have.
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ui/message","params":{{"t":"{}"}}}}"#,
        "x".repeat(600)
    );
    let table: Vec<(String, i64, &str)> = vec![
        ("not json".to_owned(), PARSE_ERROR, "not JSON"),
        (
            r#"{"id":1,"method":"ping"}"#.to_owned(),
            INVALID_REQUEST,
            "jsonrpc",
        ),
        (r#"[1,2]"#.to_owned(), INVALID_REQUEST, "object"),
        (call(3, "tools/exec"), METHOD_NOT_FOUND, "tools/exec"),
        (
            call(4, "sampling/createMessage"),
            METHOD_NOT_FOUND,
            "did not declare",
        ),
        (big, INVALID_REQUEST, "the limit is 512"),
    ];
    for (sent, code, words) in table {
        let answer = to_view(&router.from_view(&sent, Duration::ZERO));
        assert_eq!(answer.len(), 1, "{sent}");
        assert_eq!(error_code(&answer[0]), code, "{sent}: {answer:?}");
        let message = answer[0]["error"]["message"].as_str().unwrap();
        assert!(message.contains(words), "{sent}: {message}");
    }
    // In flight: two wait, a third is refused, a repeated id too.
    assert_eq!(
        upstream(&router.from_view(&call(10, "resources/list"), Duration::ZERO)).len(),
        1
    );
    let again = to_view(&router.from_view(&call(10, "resources/list"), Duration::ZERO));
    assert!(again[0]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("already waiting"));
    assert_eq!(
        upstream(&router.from_view(&call(11, "ui/message"), Duration::ZERO)).len(),
        1
    );
    let third = to_view(&router.from_view(&call(12, "resources/list"), Duration::ZERO));
    assert_eq!(error_code(&third[0]), REFUSED);
    assert!(third[0]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("2 requests are in flight; the limit is 2"));
    assert_eq!(third[0]["id"], 12);
    // Declared, sampling is forwarded.
    let mut limits = McpLimits::default();
    limits.sampling = true;
    let mut declared = McpRouter::new(limits, tool());
    let out = declared.from_view(&call(1, "sampling/createMessage"), Duration::ZERO);
    assert_eq!(upstream(&out).len(), 1);
}

#[test]
fn r_mcp_6_tools_call_passes_one_every_two_seconds_sustained() {
    let mut limits = McpLimits::default();
    limits.max_in_flight = 100;
    let mut router = McpRouter::new(limits, tool());
    let passed = |router: &mut McpRouter, id: i64, at: Duration| {
        !upstream(&router.from_view(&call(id, "tools/call"), at)).is_empty()
    };
    // A burst of three at once, then one per two seconds.
    let got: Vec<bool> = (0..4).map(|i| passed(&mut router, i, secs(0))).collect();
    assert_eq!(got, [true, true, true, false]);
    assert!(!passed(&mut router, 10, Duration::from_millis(1999)));
    assert!(passed(&mut router, 11, secs(2)));
    assert!(!passed(&mut router, 12, secs(2)));
    assert!(passed(&mut router, 13, secs(4)));
    // Other methods are not rated.
    assert_eq!(
        upstream(&router.from_view(&call(20, "resources/read"), secs(4))).len(),
        1
    );
    let refused = to_view(&router.from_view(&call(21, "tools/call"), secs(4)));
    assert!(refused[0]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("more than one every 2000 ms"));
}

#[test]
fn r_mcp_6_a_request_past_its_deadline_is_answered_and_dropped_upstream() {
    let limits = McpLimits::default().with_request_timeout(secs(5));
    let mut router = McpRouter::new(limits, tool());
    // Never under the SDK's 60 s.
    let out = router.from_view(&call(1, "tools/call"), secs(0));
    let (id, _) = upstream(&out)[0].clone();
    assert_eq!(router.poll_timeout(), Some(secs(60)));
    assert!(router.handle_timeout(secs(59)).is_empty());
    let out = router.handle_timeout(secs(60));
    let answer = to_view(&out);
    assert_eq!(error_code(&answer[0]), TIMED_OUT);
    assert_eq!(answer[0]["id"], 1);
    assert!(out
        .iter()
        .any(|o| matches!(o, McpOut::UpstreamCancelled { id: i, .. } if *i == id)));
    assert!(router.upstream_answered(id, Ok(json!({}))).is_empty());
    assert_eq!(router.poll_timeout(), None);
}

#[test]
fn r_mcp_6_model_context_is_answered_at_once_and_only_the_last_goes_up() {
    let mut router = McpRouter::new(McpLimits::default(), tool());
    let update = |id: i64, n: i64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "ui/update-model-context",
               "params": {"content": [{"type": "text", "text": n.to_string()}]}})
        .to_string()
    };
    for (id, at) in [(1, 0), (2, 100), (3, 200)] {
        let answer = to_view(&router.from_view(&update(id, id), Duration::from_millis(at)));
        assert_eq!(answer[0]["result"], json!({}), "answered at once");
    }
    assert_eq!(router.poll_timeout(), Some(Duration::from_millis(250)));
    let out = router.handle_timeout(Duration::from_millis(250));
    let sent: Vec<&Map<String, Value>> = out
        .iter()
        .filter_map(|o| match o {
            McpOut::UpstreamNotification { method, params }
                if method == "ui/update-model-context" =>
            {
                Some(params)
            }
            _ => None,
        })
        .collect();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["content"][0]["text"], "3");
}

#[test]
fn r_mcp_8_sandbox_messages_are_dropped_and_host_methods_go_to_the_host() {
    let mut router = McpRouter::new(McpLimits::default(), tool());
    let sandbox = r#"{"jsonrpc":"2.0","method":"ui/notifications/sandbox-proxy-ready"}"#;
    assert!(router.from_view(sandbox, Duration::ZERO).is_empty());
    assert_eq!(router.stats().sandbox_dropped, 1);
    for method in [
        "ui/open-link",
        "ui/request-display-mode",
        "ui/download-file",
        "ping",
    ] {
        let out = router.from_view(&call(5, method), Duration::ZERO);
        let [McpOut::HostOwned(owned)] = out.as_slice() else {
            panic!("{method}: {out:?}")
        };
        assert_eq!(owned.id, Some(RpcId::Number(5)));
        let answer = router.host_answer(&RpcId::Number(5), Ok(json!({})));
        assert_eq!(to_view(&[answer])[0]["id"], 5);
    }
    let size = r#"{"jsonrpc":"2.0","method":"ui/notifications/size-changed","params":{"width":300,"height":200}}"#;
    assert!(matches!(
        router.from_view(size, Duration::ZERO).as_slice(),
        [McpOut::HostOwned(h)] if h.id.is_none() && h.params["height"] == 200
    ));
    let log = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#;
    assert!(matches!(
        router.from_view(log, Duration::ZERO).as_slice(),
        [McpOut::UpstreamNotification { method, .. }] if method == "notifications/message"
    ));
}

#[test]
fn r_mcp_5_the_agent_gone_cancels_the_call_and_errors_every_waiting_request() {
    let mut router = McpRouter::new(McpLimits::default(), tool());
    let _ = initialized(&mut router);
    let _ = router.tool_news(&ToolNews::Input(Map::new()));
    let _ = router.from_view(&call(1, "tools/call"), Duration::ZERO);
    let _ = router.from_view(&call(2, "resources/read"), Duration::ZERO);
    let sent = to_view(&router.agent_gone());
    assert_eq!(sent[0]["method"], "ui/notifications/tool-cancelled");
    let errors: Vec<i64> = sent[1..].iter().map(error_code).collect();
    assert_eq!(errors, [TIMED_OUT, TIMED_OUT]);
    assert_eq!(router.in_flight(), 0);
    // After a result the call is not cancelled, only the requests answered.
    let mut done = McpRouter::new(McpLimits::default(), tool());
    let _ = initialized(&mut done);
    let _ = done.tool_news(&ToolNews::Input(Map::new()));
    let _ = done.tool_news(&ToolNews::Result(Map::new()));
    assert!(to_view(&done.agent_gone()).is_empty());
}

#[test]
fn r_mcp_6_a_request_the_view_cancels_is_dropped_upstream_and_its_answer_too() {
    let mut router = McpRouter::new(McpLimits::default(), tool());
    let (id, _) = upstream(&router.from_view(&call(9, "tools/call"), Duration::ZERO))[0].clone();
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9,"reason":"closed"}}"#;
    let out = router.from_view(cancel, Duration::ZERO);
    assert_eq!(
        out,
        [McpOut::UpstreamCancelled {
            id,
            reason: "closed".to_owned()
        }]
    );
    assert!(router.upstream_answered(id, Ok(json!({}))).is_empty());
}

#[test]
fn r_mcp_8_teardown_waits_for_an_initialized_views_answer() {
    let mut router = McpRouter::new(McpLimits::default(), tool());
    // Never initialized: closed at once.
    assert_eq!(router.teardown("closed"), [McpOut::TornDown]);
    let _ = initialized(&mut router);
    let asked = to_view(&router.teardown("replaced"));
    assert_eq!(asked[0]["method"], "ui/resource-teardown");
    let id = asked[0]["id"].as_i64().unwrap();
    // Another id is not its answer; the right one (even an error) is.
    let other = json!({"jsonrpc": "2.0", "id": id + 1, "result": {}}).to_string();
    assert!(router.from_view(&other, Duration::ZERO).is_empty());
    let answer = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -1, "message": "x"}});
    assert_eq!(
        router.from_view(&answer.to_string(), Duration::ZERO),
        [McpOut::TornDown]
    );
}

#[test]
fn r_mcp_6_a_tool_not_visible_to_the_app_is_refused_at_once() {
    let call_named = |name: &str| {
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": name, "arguments": {}}})
        .to_string()
    };
    // Each row: the shown tool's visibility, the tool the view calls, whether it goes up.
    let table = [
        (
            json!({"ui": {"visibility": ["model"]}}),
            "show_weather",
            false,
        ),
        (json!({"ui": {"visibility": ["model"]}}), "refresh", true),
        (
            json!({"ui": {"visibility": ["model", "app"]}}),
            "show_weather",
            true,
        ),
        (json!({"ui": {"visibility": ["app"]}}), "show_weather", true),
        (json!({}), "show_weather", true),
    ];
    for (meta, called, forwarded) in table {
        let shown = ShownTool::new("show_weather", &meta);
        let mut router = McpRouter::new(McpLimits::default(), shown);
        let out = router.from_view(&call_named(called), Duration::ZERO);
        assert_eq!(
            upstream(&out).len() == 1,
            forwarded,
            "{meta} {called}: {out:?}"
        );
        if !forwarded {
            let answer = to_view(&out);
            assert_eq!(error_code(&answer[0]), REFUSED);
            assert!(answer[0]["error"]["message"]
                .as_str()
                .unwrap()
                .contains("not visible to the app"));
        }
    }
}
