//! MCP App views through a real [`Host`](lineup_host::Host) on WebKitGTK (R-MCP-7, R-MCP-8,
//! R-MCP-13): the agent's `ui.open` with `mcp_app` shows the unmodified SDK's `App`
//! (`@modelcontextprotocol/ext-apps` 2.0.x, from the library cache, as `mcp_view/sdk.rs` builds
//! it), which initializes against the host's own `ui/initialize` answer, draws the agent's tool
//! result and reads it back from its page, and calls a tool that reaches the agent once as
//! `mcp.request` and whose `mcp.answer` reaches the view. With MCP App views off, the same open
//! is refused `unsupported` and the inventory lists none; the host with them on is the positive
//! control.

use std::time::Duration;

use lineup_host::HostBuilder;
use lineup_tests::ensure;
use lineup_tests::host_harness::{HostHarness, Note, Recorder, TestHost};
use lineup_tests::runner::Outcome;
use serde_json::{json, Value};

use crate::libraries::cache::Libraries;
use crate::mcp_view::view;

pub(crate) fn run() {
    let mut h = HostHarness::start();
    h.run(
        "r_mcp_7_r_mcp_8_the_sdk_app_initializes_against_the_host_draws_the_result_and_its_tool_call_reaches_the_agent",
        sdk_app_through_the_host,
    );
    h.run(
        "r_mcp_13_with_mcp_apps_off_an_mcp_app_open_is_unsupported_and_the_inventory_lists_none",
        off_refuses,
    );
    h.finish();
}

/// The view's own script: an `App` that logs what the host told it, draws the tool result,
/// reads it back from its page and logs it, then calls `echo` with it and logs the answer.
const APP: &str = "var app = new McpApps.App({ name: 'lineup-host-test', version: '1.0.0' });
     app.ontoolresult = function (params) {
       var out = document.getElementById('out');
       out.textContent = params.content[0].text;
       var shown = document.getElementById('out').textContent;
       app.sendLog({ level: 'info', data: { shown: shown } });
       app.callServerTool({ name: 'echo', arguments: { text: shown } }).then(
         function (result) { app.sendLog({ level: 'info', data: { answered: result.content[0].text } }); },
         function (e) { app.sendLog({ level: 'error', data: { failed: String(e) } }); });
     };
     app.connect().then(
       function () {
         var context = app.getHostContext() || {};
         app.sendLog({ level: 'info', data: { connected: true,
           host: (app.getHostVersion() || {}).name, theme: context.theme,
           tool: context.toolInfo && context.toolInfo.tool.name,
           call: context.toolInfo && context.toolInfo.id,
           serverTools: !!(app.getHostCapabilities() || {}).serverTools } });
       },
       function (e) { app.sendLog({ level: 'error', data: { connectFailed: String(e) } }); });";

/// The payload of `ui.open` of `instance` with `mcp_app` showing `html` for tool `get-time`,
/// whose `tools/call` id was 7.
fn open_payload(instance: &str, html: &str) -> Value {
    json!({"instance_id": instance, "mcp_app": {
        "server": "basic-server",
        "resource": {"uri": "ui://get-time/mcp-app.html", "mime_type": "text/html;profile=mcp-app",
                     "text": html},
        "tool": {"name": "get-time", "meta": {"ui": {"resourceUri": "ui://get-time/mcp-app.html"}},
                 "input_schema": {"type": "object", "properties": {"zone": {"type": "string"}}},
                 "call_id": 7}}})
}

/// The outbound messages of `type` (`lineup.v1.…`) so far.
fn sent_of(rec: &Recorder, kind: &str) -> Vec<Value> {
    let kind = format!("lineup.v1.{kind}");
    rec.sent()
        .into_iter()
        .filter(|m| m["type"] == kind)
        .collect()
}

/// The `data` of the view's logs (`mcp.notify` `notifications/message`) that carry `key`.
fn logs(rec: &Recorder, key: &str) -> Vec<Value> {
    sent_of(rec, "mcp.notify")
        .into_iter()
        .filter(|m| m["payload"]["method"] == "notifications/message")
        .map(|m| m["payload"]["params"]["data"].clone())
        .filter(|data| !data[key].is_null())
        .collect()
}

/// Waits until the view logged `key`; its first such log.
fn logged(h: &mut HostHarness, t: &mut TestHost, key: &str) -> Result<Value, String> {
    h.wait(t, |_, rec| {
        !logs(rec, key).is_empty() || !logs(rec, "failed").is_empty()
    });
    logs(&t.rec, key).into_iter().next().ok_or_else(|| {
        format!(
            "the view logged no {key}; sent: {:?}; notes: {:?}",
            t.rec.sent(),
            t.rec.notes()
        )
    })
}

fn sdk_app_through_the_host(h: &mut HostHarness) -> Outcome {
    let libraries = Libraries::locate()?;
    let sdk = libraries.text("bundles/ext-apps.iife.min.js")?;
    let html = view(
        &format!("<p id=\"out\">waiting</p><script>{sdk}</script>"),
        APP,
    );
    let mut t = h.host(HostBuilder::new())?;
    t.send(
        t.agent
            .envelope("lineup.v1.ui.open", open_payload("clock", &html)),
    )?;
    // The tool's news, before the view initialized: held until its `initialized` (R-MCP-5).
    let news = |news: &str, member: &str, value: Value| json!({"instance_id": "clock", "news": news, member: value});
    let input = news("tool-input", "arguments", json!({"zone": "Asia/Shanghai"}));
    t.send(t.agent.envelope("lineup.v1.mcp.tool", input))?;
    let text = "21 °C in 上海";
    let result = news(
        "tool-result",
        "result",
        json!({"content": [{"type": "text", "text": text}]}),
    );
    t.send(t.agent.envelope("lineup.v1.mcp.tool", result))?;

    // R-MCP-8: the App took the host's own answer to its ui/initialize.
    let connected = logged(h, &mut t, "connected")?;
    ensure!(
        connected["host"] == "lineup-host"
            && connected["tool"] == "get-time"
            && connected["call"] == 7
            && connected["serverTools"] == true
            && (connected["theme"] == "light" || connected["theme"] == "dark"),
        "what the App read of the host: {connected}"
    );
    let key = t.key("clock").ok_or("the view is not open")?;
    ensure!(
        t.rec.is_ready(&key),
        "the initialize answer is the view's ready: {:?}",
        t.rec.notes()
    );
    let inventory = sent_of(&t.rec, "client.inventory");
    ensure!(
        inventory
            .first()
            .is_some_and(|i| i["payload"]["mcp_apps"]["network"] == "none"),
        "the inventory lists mcp_apps: {inventory:?}"
    );

    // The result was drawn and read back from the page; its tool call reaches the agent once.
    let shown = logged(h, &mut t, "shown")?;
    ensure!(shown["shown"] == text, "the page shows {shown}");
    h.wait(&mut t, |_, rec| !sent_of(rec, "mcp.request").is_empty());
    h.settle(&mut t, Duration::from_millis(300));
    let requests = sent_of(&t.rec, "mcp.request");
    ensure!(
        requests.len() == 1,
        "one mcp.request, not {}: {requests:?}",
        requests.len()
    );
    let request = &requests[0]["payload"];
    ensure!(
        request["method"] == "tools/call"
            && request["params"]["name"] == "echo"
            && request["params"]["arguments"] == json!({"text": text})
            && request["instance_id"] == "clock"
            && request["server"] == "basic-server",
        "the forwarded request: {request}"
    );
    let answer = json!({"instance_id": "clock", "generation": request["generation"],
        "request_id": request["request_id"],
        "result": {"content": [{"type": "text", "text": "echoed 上海"}]}});
    t.send(t.agent.envelope("lineup.v1.mcp.answer", answer))?;
    let answered = logged(h, &mut t, "answered")?;
    ensure!(
        answered["answered"] == "echoed 上海",
        "the App's answer: {answered}"
    );
    // R-MCP-10: the SDK's one eval report at load is counted, not sent; nothing else was
    // blocked, and no request of the view was refused.
    let stats = t.host.stats();
    ensure!(
        stats.mcp_eval_reports == 1 && stats.mcp_refused == 0 && stats.mcp_relay_dropped == 0,
        "{stats:?}"
    );
    let blocked: Vec<Value> = sent_of(&t.rec, "ui.event")
        .into_iter()
        .filter(|m| m["payload"]["event"] == "blocked")
        .collect();
    ensure!(blocked.is_empty(), "blocked loads sent: {blocked:?}");

    // The agent closes it: the initialized view is torn down, then closed (R-MCP-8).
    t.send(t.agent.close("clock", "done"))?;
    let closed = h.wait(&mut t, |_, rec| !rec.closed(&key).is_empty());
    ensure!(closed, "the view did not close: {:?}", t.rec.notes());
    h.shut_down(t)
}

fn off_refuses(h: &mut HostHarness) -> Outcome {
    // Off: refused `unsupported`, no view made, no mcp_apps in the inventory.
    let mut off = h.host(HostBuilder::new().mcp_apps(None))?;
    let page = view("<p>never shown</p>", "");
    off.send(
        off.agent
            .envelope("lineup.v1.ui.open", open_payload("clock", &page)),
    )?;
    h.wait(&mut off, |_, rec| !sent_of(rec, "client.error").is_empty());
    h.settle(&mut off, Duration::from_millis(300));
    let errors = sent_of(&off.rec, "client.error");
    ensure!(
        errors.len() == 1 && errors[0]["payload"]["code"] == "unsupported",
        "the open with MCP App views off: {errors:?}"
    );
    ensure!(off.host.surfaces().is_empty(), "a view was made");
    let inventory = sent_of(&off.rec, "client.inventory");
    ensure!(
        !inventory.is_empty() && inventory.iter().all(|i| i["payload"]["mcp_apps"].is_null()),
        "the inventory with MCP App views off: {inventory:?}"
    );
    h.shut_down(off)?;

    // Positive control: the same open on a host with them on makes the view, refuses nothing.
    let mut on = h.host(HostBuilder::new())?;
    on.send(
        on.agent
            .envelope("lineup.v1.ui.open", open_payload("clock", &page)),
    )?;
    let opened = h.wait(&mut on, |host, _| !host.surfaces().is_empty());
    h.settle(&mut on, Duration::from_millis(300));
    ensure!(
        opened && sent_of(&on.rec, "client.error").is_empty(),
        "the open with MCP App views on: {:?}; notes: {:?}",
        on.rec.sent(),
        on.rec.notes()
    );
    let refused = on
        .rec
        .notes()
        .into_iter()
        .any(|n| matches!(n, Note::Rejected(..)));
    ensure!(!refused, "{:?}", on.rec.notes());
    h.shut_down(on)
}
