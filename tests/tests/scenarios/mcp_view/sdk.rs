//! The unmodified MCP Apps SDK (`@modelcontextprotocol/ext-apps` 2.0.x, pinned in
//! `tests/libraries/package.json`) in an MCP App view: its `App` class, from the SDK's own browser
//! bundle `dist/src/app-with-deps.js` (wrapped as one IIFE by `scripts/libraries.sh`), connects
//! over its default `PostMessageTransport` to `window.parent`, which only accepts messages whose
//! `event.source` is `window.parent`: it initializes against the test's answer to
//! `ui/initialize`, and gets a tool result and the answer to its own `tools/call` through the
//! relay (R-MCP-7).

use serde_json::json;

use lineup_tests::ensure;
use lineup_tests::runner::Outcome;
use lineup_tests::view_harness::Harness;

use super::{relayed, view};
use crate::libraries::cache::Libraries;

/// The view's own script: an `App` that logs what it got, calls a server tool with it, and
/// logs the tool's answer.
const APP: &str = "var app = new McpApps.App({ name: 'lineup-sdk-test', version: '1.0.0' });
     app.ontoolresult = function (params) {
       var text = params.content[0].text;
       document.getElementById('out').textContent = text;
       app.sendLog({ level: 'info', data: { got: text } });
       app.callServerTool({ name: 'echo', arguments: { text: text } }).then(
         function (result) { app.sendLog({ level: 'info', data: { answered: result.content[0].text } }); },
         function (e) { app.sendLog({ level: 'error', data: { failed: String(e) } }); });
     };
     app.connect().then(
       function () { app.sendLog({ level: 'info', data: { connected: true } }); },
       function (e) { note('test/connect-failed', { error: String(e) }); });";

pub(crate) fn app_initializes(h: &mut Harness) -> Outcome {
    let libraries = Libraries::locate()?;
    let sdk = libraries.text("bundles/ext-apps.iife.min.js")?;
    let version = libraries.version("@modelcontextprotocol/ext-apps");
    ensure!(
        version.starts_with("2.0."),
        "the SDK in the cache is {version}, not 2.0.x"
    );
    let html = view(
        &format!("<p id=\"out\">waiting</p><script>{sdk}</script>"),
        APP,
    );
    println!(
        "    @modelcontextprotocol/ext-apps {version}: a view of {} bytes",
        html.len()
    );
    let (view, log) = h.open_mcp(&html)?;
    let initialize = relayed(h, &log, "ui/initialize")?;
    ensure!(
        initialize["params"]["appInfo"]["name"] == "lineup-sdk-test",
        "ui/initialize as the SDK sent it: {initialize}"
    );
    // The smallest answer McpUiInitializeResultSchema takes; another would leave the App dead.
    let answer = json!({"jsonrpc": "2.0", "id": initialize["id"], "result": {
        "protocolVersion": "2026-01-26",
        "hostInfo": {"name": "lineup-test", "version": "0.0.0"},
        "hostCapabilities": {"serverTools": {}, "logging": {}},
        "hostContext": {}}});
    view.post_to_mcp_view(&answer.to_string())
        .map_err(|e| e.to_string())?;
    relayed(h, &log, "ui/notifications/initialized")?;

    let text = "21 °C in 上海";
    let result = json!({"jsonrpc": "2.0", "method": "ui/notifications/tool-result",
        "params": {"content": [{"type": "text", "text": text}]}});
    view.post_to_mcp_view(&result.to_string())
        .map_err(|e| e.to_string())?;
    let call = relayed(h, &log, "tools/call")?;
    ensure!(
        call["params"]["name"] == "echo" && call["params"]["arguments"] == json!({"text": text}),
        "the App's tools/call: {call}"
    );
    let reply = json!({"jsonrpc": "2.0", "id": call["id"], "result": {
        "content": [{"type": "text", "text": "echoed"}]}});
    view.post_to_mcp_view(&reply.to_string())
        .map_err(|e| e.to_string())?;
    let logs = |key: &str| {
        log.mcp_method("notifications/message")
            .into_iter()
            .find(|m| !m["params"]["data"][key].is_null())
    };
    let answered = h.wait(&[], || logs("answered").is_some());
    let failed = log.mcp_method("test/connect-failed");
    ensure!(
        answered && failed.is_empty(),
        "the App did not get its answer; failed: {failed:?}; messages: {:?}",
        log.mcp_messages()
    );
    ensure!(
        logs("got").is_some_and(|m| m["params"]["data"]["got"] == text)
            && logs("answered").is_some_and(|m| m["params"]["data"]["answered"] == "echoed"),
        "the App's logs: {:?}",
        log.mcp_method("notifications/message")
    );
    // The SDK's one evaluation at load (zod's `new Function` probe) is the only blocked load.
    let blocked = log.mcp_blocked();
    ensure!(
        blocked
            .iter()
            .all(|(directive, what)| directive == "script-src" && what == "eval"),
        "blocked loads of the SDK view: {blocked:?}"
    );
    println!(
        "    blocked loads: {blocked:?}; dropped: {:?}",
        log.mcp_dropped()
    );
    view.close();
    Ok(())
}
