//! A view's traffic through the session: the tool call's news (R-MCP-5), its requests going up
//! and the agent's answers and progress coming back (R-MCP-6), what the host answers itself
//! (R-MCP-8), and the bounds, each refusal a JSON-RPC error to the view.

use lineup_host_core::mcp::{RpcError, RpcId, REFUSED, TIMED_OUT};
use lineup_host_core::{SessionFactory, Sessions, Timestamp};

use super::*;

/// The method of each message, in order.
fn methods(messages: &[Value]) -> Vec<&str> {
    messages
        .iter()
        .map(|m| m["method"].as_str().unwrap_or("(answer)"))
        .collect()
}

/// The `mcp.request`s of `fx`: (request_id, method, generation).
fn requests(fx: &[Effect]) -> Vec<(u64, String, u64)> {
    sent_of(fx, "mcp.request")
        .iter()
        .map(|m| {
            let p = &m["payload"];
            (
                p["request_id"].as_u64().unwrap(),
                p["method"].as_str().unwrap().to_owned(),
                p["generation"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn news(instance: &str, kind: &str, body: Value) -> Value {
    let mut payload = json!({"instance_id": instance, "news": kind});
    payload
        .as_object_mut()
        .unwrap()
        .extend(body.as_object().unwrap().clone());
    payload
}

#[test]
fn r_mcp_5_the_tool_calls_news_waits_for_initialized_and_goes_in_order() {
    let mut rig = Rig::new();
    let key = rig.open("v1");
    let script = [
        ("tool-input-partial", json!({"arguments": {"zone": "Eu"}})),
        ("tool-input", json!({"arguments": {"zone": "Europe/Paris"}})),
        ("tool-result", json!({"result": {"content": []}})),
    ];
    for (kind, body) in &script {
        let fx = rig.agent("mcp.tool", news("v1", kind, body.clone()));
        // Accepted, and held: nothing reaches the view before its `initialized`.
        assert!(sent(&fx).is_empty(), "{kind}: {fx:?}");
        assert!(posted(&fx, &key).is_empty(), "{kind}: {fx:?}");
    }
    let fx = rig.initialize(&key);
    assert_eq!(
        methods(&posted(&fx, &key)),
        [
            "ui/notifications/tool-input-partial",
            "ui/notifications/tool-input",
            "ui/notifications/tool-result"
        ]
    );
    assert_eq!(
        posted(&fx, &key)[1]["params"]["arguments"]["zone"],
        "Europe/Paris"
    );
}

#[test]
fn r_mcp_5_news_out_of_order_or_for_no_view_is_refused_with_a_definite_code() {
    let mut rig = Rig::new();
    let key = rig.open("v1");
    let fx = rig.agent("mcp.tool", news("v1", "tool-result", json!({"result": {}})));
    assert_eq!(
        refusal(&fx),
        ("out_of_order".into(), Some("payload.news".into()), None)
    );
    // The refusal changed nothing: input then result still go, in order.
    rig.agent(
        "mcp.tool",
        news("v1", "tool-input", json!({"arguments": {}})),
    );
    let fx = rig.agent("mcp.tool", news("v1", "tool-result", json!({"result": {}})));
    assert!(sent(&fx).is_empty(), "{fx:?}");
    let fx = rig.agent("mcp.tool", news("v1", "tool-cancelled", json!({})));
    assert_eq!(refusal(&fx).0, "out_of_order");
    assert_eq!(methods(&posted(&rig.initialize(&key), &key)).len(), 2);
    let fx = rig.agent(
        "mcp.tool",
        news("nobody", "tool-input", json!({"arguments": {}})),
    );
    assert_eq!(refusal(&fx).0, "unknown_instance");
}

#[test]
fn r_mcp_6_a_views_tools_call_goes_up_as_one_mcp_request_and_the_answer_comes_back() {
    let mut rig = Rig::new();
    let key = rig.open("v1");
    rig.initialize(&key);
    let fx = rig.view(
        &key,
        rpc(
            5,
            "tools/call",
            json!({"name": "get-time", "arguments": {}}),
        ),
    );
    let up = sent_of(&fx, "mcp.request");
    let [request] = up.as_slice() else {
        panic!("{fx:?}")
    };
    let p = &request["payload"];
    assert_eq!(p["instance_id"], "v1");
    assert_eq!(p["generation"], key.generation.get());
    assert_eq!(p["server"], "basic-server");
    assert_eq!(p["method"], "tools/call");
    assert_eq!(p["params"]["name"], "get-time");
    assert!(posted(&fx, &key).is_empty(), "{fx:?}");
    let answer = json!({"instance_id": "v1", "generation": key.generation.get(),
        "request_id": p["request_id"], "result": {"content": [{"type": "text", "text": "10:00"}]}});
    let fx = rig.agent("mcp.answer", answer);
    let back = posted(&fx, &key);
    assert_eq!(back.len(), 1, "{fx:?}");
    assert_eq!(back[0]["id"], 5);
    assert_eq!(back[0]["result"]["content"][0]["text"], "10:00");
    // An error answer goes back as a JSON-RPC error under the view's id.
    let fx = rig.view(&key, rpc(6, "resources/read", json!({"uri": "ui://x"})));
    let (id, _, generation) = requests(&fx)[0].clone();
    let fx = rig.agent(
        "mcp.answer",
        json!({"instance_id": "v1", "generation": generation, "request_id": id,
            "error": {"code": -32602, "message": "no such resource"}}),
    );
    assert_eq!(error_code(&posted(&fx, &key)[0]), -32602);
}

#[test]
fn r_mcp_6_answers_and_progress_for_no_waiting_request_are_dropped_and_counted() {
    let mut rig = Rig::new();
    let key = rig.open("v1");
    rig.initialize(&key);
    let call = json!({"name": "get-time", "_meta": {"progressToken": "tok"}});
    let fx = rig.view(&key, rpc(5, "tools/call", call));
    let (id, _, generation) = requests(&fx)[0].clone();
    let progress = |request_id: u64, generation: u64| {
        json!({"instance_id": "v1", "generation": generation, "request_id": request_id,
            "progress": 1, "total": 2})
    };
    // Positive control: while the request waits, progress reaches the view under its token.
    let fx = rig.agent("mcp.progress", progress(id, generation));
    let relayed = posted(&fx, &key);
    assert_eq!(relayed[0]["method"], "notifications/progress");
    assert_eq!(relayed[0]["params"]["progressToken"], "tok");
    let answer = |request_id: u64, generation: u64| {
        json!({"instance_id": "v1", "generation": generation, "request_id": request_id,
            "result": {}})
    };
    assert_eq!(
        posted(&rig.agent("mcp.answer", answer(id, generation)), &key).len(),
        1
    );
    let before = rig.session.stats().mcp_late;
    let late: Vec<(&str, &str, Value)> = vec![
        ("a second answer", "mcp.answer", answer(id, generation)),
        (
            "progress after the answer",
            "mcp.progress",
            progress(id, generation),
        ),
        (
            "an answer to a request never forwarded",
            "mcp.answer",
            answer(99, generation),
        ),
        (
            "an answer for another generation",
            "mcp.answer",
            answer(id, generation + 7),
        ),
        (
            "an answer for no view",
            "mcp.answer",
            json!({"instance_id": "gone", "generation": 1, "request_id": 1, "result": {}}),
        ),
    ];
    for (n, (what, kind, payload)) in late.into_iter().enumerate() {
        let fx = rig.agent(kind, payload);
        assert!(posted(&fx, &key).is_empty(), "{what}: relayed {fx:?}");
        // Dropped, counted, not refused: a late answer is no agent error.
        assert!(sent(&fx).is_empty(), "{what}: {fx:?}");
        assert_eq!(
            rig.session.stats().mcp_late,
            before + n as u64 + 1,
            "{what}"
        );
    }
}

#[test]
fn r_mcp_6_the_view_cannot_call_the_tool_it_shows_when_it_is_not_visible_to_the_app() {
    let mut rig = Rig::new();
    let key = rig.open_with("v1", "<p/>", json!({"ui": {"visibility": ["model"]}}));
    rig.initialize(&key);
    let fx = rig.view(&key, rpc(2, "tools/call", json!({"name": "get-time"})));
    assert!(sent(&fx).is_empty(), "{fx:?}");
    let answer = &posted(&fx, &key)[0];
    assert_eq!(error_code(answer), REFUSED);
    assert!(answer["error"]["message"]
        .as_str()
        .unwrap()
        .contains("visibility"));
    // Positive control: another tool of the same server goes up; the agent checks that one.
    let fx = rig.view(&key, rpc(3, "tools/call", json!({"name": "poll-stats"})));
    assert_eq!(requests(&fx).len(), 1, "{fx:?}");
}

#[test]
fn r_mcp_6_cap_rate_and_size_refusals_are_json_rpc_errors_to_the_view() {
    let mut limits = McpLimits::default();
    limits.max_in_flight = 2;
    limits.max_message_bytes = 3 * 1024 * 1024;
    let mut rig = Rig::with(Limits::default(), Some(limits));
    let key = rig.open("v1");
    rig.initialize(&key);
    let list = |id| rpc(id, "resources/list", json!({}));
    assert_eq!(requests(&rig.view(&key, list(10))).len(), 1);
    assert_eq!(requests(&rig.view(&key, list(11))).len(), 1);
    // A third in flight: refused, naming the limit.
    let fx = rig.view(&key, list(12));
    assert!(requests(&fx).is_empty());
    let refused = &posted(&fx, &key)[0];
    assert_eq!(
        (refused["id"].clone(), error_code(refused)),
        (json!(12), REFUSED)
    );
    assert!(refused["error"]["message"]
        .as_str()
        .unwrap()
        .contains("the limit is 2"));

    // The rate: a burst of three tools/call, then one every 2 s.
    let mut rig = Rig::new();
    let key = rig.open("v1");
    rig.initialize(&key);
    let call = |id| rpc(id, "tools/call", json!({"name": "t"}));
    for id in 1..=3 {
        assert_eq!(requests(&rig.view(&key, call(id))).len(), 1, "call {id}");
    }
    let fx = rig.view(&key, call(4));
    assert_eq!(error_code(&posted(&fx, &key)[0]), REFUSED);
    rig.clock.0.set(Duration::from_secs(2));
    assert_eq!(requests(&rig.view(&key, call(5))).len(), 1, "after 2 s");

    // The view's own size bound, and R-ENV-4's bound on the envelope that would carry it.
    let text = "x".repeat(1024 * 1024 + 10);
    let fx = rig.view(&key, rpc(6, "resources/read", json!({ "uri": text })));
    assert!(requests(&fx).is_empty(), "an envelope over 1 MiB went up");
    let refused = &posted(&fx, &key)[0];
    assert_eq!(
        (refused["id"].clone(), error_code(refused)),
        (json!(6), REFUSED)
    );
    assert!(refused["error"]["message"]
        .as_str()
        .unwrap()
        .contains("R-ENV-4"));
    let fx = rig.session.handle_page(
        &key,
        PageInput::Oversized {
            len: 5 * 1024 * 1024,
        },
    );
    let refused = &posted(&fx, &key)[0];
    assert_eq!(refused["id"], Value::Null);
    assert!(refused["error"]["message"]
        .as_str()
        .unwrap()
        .contains("5242880 bytes"));
    assert!(rig.session.stats().mcp_refused >= 3);
}

#[test]
fn r_mcp_6_a_request_past_its_deadline_is_answered_and_cancelled_upstream() {
    let mut rig = Rig::new();
    let key = rig.open("v1");
    rig.initialize(&key);
    assert_eq!(rig.session.next_mcp_wakeup(), None);
    let fx = rig.view(&key, rpc(8, "ui/message", json!({"role": "user"})));
    let (id, method, _) = requests(&fx)[0].clone();
    assert_eq!(method, "ui/message");
    assert_eq!(
        rig.session.next_mcp_wakeup(),
        Some(Duration::from_secs(120))
    );
    assert!(posted(&rig.at(Duration::from_secs(119)), &key).is_empty());
    let fx = rig.at(Duration::from_secs(120));
    let answer = &posted(&fx, &key)[0];
    assert_eq!(
        (answer["id"].clone(), error_code(answer)),
        (json!(8), TIMED_OUT)
    );
    let cancelled = sent_of(&fx, "mcp.notify");
    assert_eq!(cancelled[0]["payload"]["method"], "notifications/cancelled");
    assert_eq!(cancelled[0]["payload"]["params"]["requestId"], id);
    assert_eq!(rig.session.next_mcp_wakeup(), None);
}

/// A factory of sessions that show MCP App views, on one clock.
struct Views(Hands);

impl SessionFactory for Views {
    fn clock(&mut self) -> Box<dyn Clock> {
        Box::new(self.0.clone())
    }
    fn capabilities(
        &mut self,
        _: Option<&lineup_host_core::AgentIdentity>,
    ) -> Result<Option<lineup_host_core::CapabilitySetup>, String> {
        Ok(None)
    }
}

#[test]
fn r_mcp_6_the_tables_one_clock_includes_the_views_deadlines() {
    let clock = Hands::default();
    let mut template = SessionConfig::new(PartyId::try_from("desktop").unwrap(), "out");
    template.mcp_apps = Some(McpLimits::default());
    let mut table = Sessions::new(template, Box::new(Views(clock.clone()))).unwrap();
    let wall = Timestamp::from_unix_seconds(1_769_421_600).unwrap();
    let open = serde_json::to_vec(&json!({"v": 1, "id": "m1", "type": "lineup.v1.ui.open",
        "conversation_id": "c1", "sender": {"kind": "agent", "id": "a1"},
        "payload": open_payload("v1", json!({"text": "<p/>"}), json!({}))}))
    .unwrap();
    let key = opened(&table.handle_inbound(&open).effects).key.clone();
    let say = |table: &mut Sessions, message: Value| {
        let text = message.to_string();
        table
            .handle_page(&key, PageInput::McpFromView(&text))
            .effects
    };
    say(&mut table, rpc(1, "ui/initialize", json!({})));
    say(
        &mut table,
        json!({"jsonrpc": "2.0", "method": "ui/notifications/initialized"}),
    );
    assert_eq!(table.poll_timeout(wall, None), None);
    say(&mut table, rpc(2, "tools/call", json!({"name": "t"})));
    assert_eq!(
        table.poll_timeout(wall, None),
        Some(Duration::from_secs(120))
    );
    clock.0.set(Duration::from_secs(120));
    assert_eq!(table.poll_timeout(wall, None), Some(Duration::ZERO));
    let due: Vec<Effect> = table
        .handle_timeout(wall, None)
        .into_iter()
        .flat_map(|batch| batch.effects)
        .collect();
    assert_eq!(error_code(&posted(&due, &key)[0]), TIMED_OUT);
    assert_eq!(table.poll_timeout(wall, None), None);
}

#[test]
fn r_mcp_6_the_views_notifications_go_up_and_only_the_last_model_context() {
    let mut rig = Rig::new();
    let key = rig.open("v1");
    rig.initialize(&key);
    let fx = rig.view(
        &key,
        json!({"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": "info", "data": "clicked"}}),
    );
    let up = sent_of(&fx, "mcp.notify");
    assert_eq!(up[0]["payload"]["method"], "notifications/message");
    assert_eq!(up[0]["payload"]["server"], "basic-server");
    for (id, n) in [(20, 1), (21, 2)] {
        let fx = rig.view(&key, rpc(id, "ui/update-model-context", json!({ "n": n })));
        // Answered at once; nothing up yet.
        assert_eq!(posted(&fx, &key)[0]["id"], id);
        assert!(sent(&fx).is_empty());
    }
    let fx = rig.at(Duration::from_millis(250));
    let up = sent_of(&fx, "mcp.notify");
    assert_eq!(up.len(), 1, "{fx:?}");
    assert_eq!(up[0]["payload"]["method"], "ui/update-model-context");
    assert_eq!(up[0]["payload"]["params"]["n"], 2);
}

#[test]
fn r_mcp_8_what_the_host_answers_goes_to_the_driver_and_its_answer_to_the_view() {
    let mut rig = Rig::new();
    let key = rig.open("v1");
    let fx = rig.view(
        &key,
        rpc(1, "ui/initialize", json!({"protocolVersion": "2026-01-26"})),
    );
    let [Effect::Mcp(McpEffect::HostOwned { key: k, message })] = fx.as_slice() else {
        panic!("{fx:?}")
    };
    assert_eq!((k, message.method.as_str()), (&key, "ui/initialize"));
    assert_eq!(message.id, Some(RpcId::Number(1)));
    let fx = rig.session.mcp_host_answer(
        &key,
        &RpcId::Number(1),
        Ok(json!({"protocolVersion": "2026-01-26"})),
    );
    let answer = &posted(&fx, &key)[0];
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["result"]["protocolVersion"], "2026-01-26");
    let refused = rig.session.mcp_host_answer(
        &key,
        &RpcId::Text("p".into()),
        Err(RpcError::new(REFUSED, "no link without a click")),
    );
    assert_eq!(error_code(&posted(&refused, &key)[0]), REFUSED);
    // Sandbox-proxy messages a web host would use are dropped and counted.
    let fx = rig.view(
        &key,
        json!({"jsonrpc": "2.0", "method": "ui/notifications/sandbox-proxy-ready"}),
    );
    assert!(fx.is_empty(), "{fx:?}");
    assert_eq!(rig.session.stats().mcp_sandbox_dropped, 1);
}

#[test]
fn r_mcp_7_a_second_initialize_is_a_reload_the_agent_hears_and_the_news_goes_again() {
    let mut rig = Rig::new();
    let key = rig.open("v1");
    rig.agent(
        "mcp.tool",
        news("v1", "tool-input", json!({"arguments": {"a": 1}})),
    );
    rig.initialize(&key);
    let fx = rig.view(&key, rpc(2, "ui/initialize", json!({})));
    let events = sent_of(&fx, "ui.event");
    assert_eq!(events[0]["payload"]["event"], "reloaded");
    assert_eq!(events[0]["payload"]["instance_id"], "v1");
    let fx = rig.view(
        &key,
        json!({"jsonrpc": "2.0", "method": "ui/notifications/initialized"}),
    );
    assert_eq!(methods(&posted(&fx, &key)), ["ui/notifications/tool-input"]);
}

#[test]
fn r_mcp_6_a_views_notifications_dropped_on_the_way_out_are_told_to_its_own_session() {
    let mut template = SessionConfig::new(PartyId::try_from("desktop").unwrap(), "out");
    template.mcp_apps = Some(McpLimits::default());
    let mut table = Sessions::new(template, Box::new(Views(Hands::default()))).unwrap();
    let envelope = |conversation: &str, payload: Value| {
        serde_json::to_vec(&json!({"v": 1, "id": "m1", "type": "lineup.v1.ui.open",
            "conversation_id": conversation, "sender": {"kind": "agent", "id": "a1"},
            "payload": payload}))
        .unwrap()
    };
    let view = opened(
        &table
            .handle_inbound(&envelope(
                "c1",
                open_payload("v1", json!({"text": ""}), json!({})),
            ))
            .effects,
    )
    .key
    .clone();
    let surface = json!({"instance_id": "w", "app": {"id": "com.example.w", "version": "1.0.0",
        "html": "", "css": "", "js": ""}});
    table.handle_inbound(&envelope("c2", surface));
    let told = table.events_dropped(&view.instance, 3);
    let [batch] = told.as_slice() else {
        panic!("{told:?}")
    };
    assert_eq!(batch.session, view.session);
    let errors = sent_of(&batch.effects, "client.error");
    assert_eq!(errors[0]["payload"]["code"], "events_dropped");
    assert_eq!(errors[0]["payload"]["instance_id"], "v1");
    assert_eq!(errors[0]["conversation_id"], "c1");
}
