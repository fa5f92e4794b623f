//! An MCP App view on WebKitGTK (R-MCP-7, R-MCP-10): the host's fixed top document with the view
//! as its `about:srcdoc` child, under a Surface's strict policy, and the relay of a script world
//! of the host's own. Each negative check has a positive control: the view's own post arrives
//! beside the nested frame's that does not, the same handler probe sees `ipc` in an ordinary
//! Surface, a message just under the bound passes beside the one over it, and the loopback server
//! the view cannot reach answers the test itself.
#![allow(clippy::print_stdout, clippy::unwrap_used, missing_docs)]

mod sdk;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use lineup_host::platform::{McpDrop, ViewEvent};
use lineup_host::{ShellError, ViewConfig};
use lineup_tests::canary::Canary;
use lineup_tests::ensure;
use lineup_tests::runner::Outcome;
use lineup_tests::view_harness::{Harness, Log, Page};
use serde_json::{json, Value};

/// The bound on one message from a view in this group's shell: small enough that a message over
/// it is cheap to make, large enough that the exact UTF-8 count is exercised.
const LIMIT: usize = 64 * 1024;

pub(crate) fn run() {
    let mut h = Harness::start(ViewConfig::default().with_max_mcp_message_bytes(LIMIT));
    h.run(
        "r_mcp_7_view_message_reaches_the_host_and_the_host_answer_reaches_the_view",
        round_trip,
    );
    h.run(
        "r_mcp_7_nested_frame_posts_to_the_host_document_are_not_relayed",
        nested_frame,
    );
    h.run(
        "r_mcp_7_view_has_no_native_handler_no_bridge_and_an_opaque_origin",
        no_handler,
    );
    h.run(
        "r_mcp_7_non_json_rpc_and_oversized_messages_dropped_with_their_reason",
        dropped,
    );
    h.run(
        "r_mcp_10_view_network_blocked_and_each_blocked_load_reported",
        network,
    );
    h.run(
        "r_mcp_4_an_8_mib_view_dense_with_characters_to_escape_loads_and_posts",
        eight_mib,
    );
    h.run(
        "r_mcp_7_the_unmodified_sdk_app_initializes_and_gets_a_tool_result",
        sdk::app_initializes,
    );
    h.finish();
}

/// A view: `body` markup, then `script` after the helpers `send(message)` (to
/// `window.parent`, target `"*"`, as the SDK posts) and `note(method, params)` (a notification).
pub(crate) fn view(body: &str, script: &str) -> String {
    format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"></head><body>{body}<script>\
         function send(m) {{ window.parent.postMessage(m, '*'); }}\n\
         function note(method, params) {{ send({{ jsonrpc: '2.0', method: method, \
         params: params || {{}} }}); }}\n{script}</script></body></html>"
    )
}

/// Pumps until the view's relay passed a message with `method`; its first one.
pub(crate) fn relayed(h: &mut Harness, log: &Log, method: &str) -> Result<Value, String> {
    let arrived = h.wait(&[], || !log.mcp_method(method).is_empty());
    let first = log.mcp_method(method).into_iter().next();
    match first {
        Some(message) if arrived => Ok(message),
        _ => Err(format!(
            "no {method} from the view; events: {:?}",
            log.events()
        )),
    }
}

/// No `Ipc` at all: the view has no bridge and no page-world handler.
fn no_ipc(log: &Log) -> Outcome {
    ensure!(
        !log.has(|e| matches!(e, ViewEvent::Ipc(_) | ViewEvent::IpcTooLarge { .. })),
        "an MCP App view reached the page-world ipc handler: {:?}",
        log.events()
    );
    Ok(())
}

fn round_trip(h: &mut Harness) -> Outcome {
    let script = "window.addEventListener('message', function (e) {
           note('test/echo', { sourceIsParent: e.source === window.parent,
                               origin: e.origin, got: e.data });
         });
         send({ jsonrpc: '2.0', id: 1, method: 'ui/initialize',
                params: { appInfo: { name: 't', version: '1' }, appCapabilities: {},
                          protocolVersion: '2026-01-26' } });";
    let (view, log) = h.open_mcp(&view("<p>mcp view</p>", script))?;
    let initialize = relayed(h, &log, "ui/initialize")?;
    ensure!(
        initialize["id"] == 1 && initialize["params"]["appInfo"]["name"] == "t",
        "ui/initialize as posted: {initialize}"
    );
    // Text that would end a script or a string if it were ever lexed as script.
    let answer = json!({"jsonrpc": "2.0", "id": 1, "result": {
        "protocolVersion": "2026-01-26", "x": "上海 \"q\" '</script>' \\ \u{2028}"}});
    view.post_to_mcp_view(&answer.to_string())
        .map_err(|e| e.to_string())?;
    let echo = relayed(h, &log, "test/echo")?;
    ensure!(
        echo["params"]["sourceIsParent"] == true,
        "in the view, event.source must be window.parent: {echo}"
    );
    ensure!(
        echo["params"]["got"] == answer,
        "the view got another message: {echo}"
    );
    ensure!(
        echo["params"]["origin"] == "null",
        "the host document's origin is opaque: {echo}"
    );
    // Refusals change nothing: a non-object, and a Surface's call on an MCP App view.
    let refused = view.post_to_mcp_view("[1]");
    ensure!(
        matches!(refused, Err(ShellError::InvalidMcpMessage { .. })),
        "a non-object message must be refused: {refused:?}"
    );
    let refused = view.deliver_state("{}");
    ensure!(
        matches!(refused, Err(ShellError::WrongViewKind { .. })),
        "a state for an MCP App view must be refused: {refused:?}"
    );
    h.settle(Duration::from_millis(200));
    ensure!(
        log.mcp_method("test/echo").len() == 1,
        "a refused message reached the view: {:?}",
        log.mcp_messages()
    );
    ensure!(
        log.mcp_dropped().is_empty(),
        "dropped: {:?}",
        log.mcp_dropped()
    );
    no_ipc(&log)?;
    view.close();
    Ok(())
}

fn nested_frame(h: &mut Harness) -> Outcome {
    let script = r#"
        window.addEventListener('message', function (e) {
          if (e.data === 'nested-done') { note('view/own', {}); }
        });
        var f = document.createElement('iframe');
        f.srcdoc = '<script>' +
          'window.top.postMessage({jsonrpc: "2.0", method: "nested/top"}, "*");' +
          'window.parent.parent.postMessage({jsonrpc: "2.0", method: "nested/parent-parent"}, "*");' +
          'window.parent.postMessage("nested-done", "*");<\/script>';
        document.body.appendChild(f);"#;
    let (view, log) = h.open_mcp(&view("<p>nested</p>", script))?;
    // Positive control: the view's own post, made after the nested frame posted both of its.
    relayed(h, &log, "view/own")?;
    h.settle(Duration::from_millis(200));
    let nested: Vec<Value> = log
        .mcp_messages()
        .into_iter()
        .filter(|m| {
            m["method"]
                .as_str()
                .is_some_and(|n| n.starts_with("nested/"))
        })
        .collect();
    ensure!(
        nested.is_empty(),
        "a nested frame's post was relayed: {nested:?}"
    );
    ensure!(
        log.mcp_dropped() == [McpDrop::WrongSource, McpDrop::WrongSource],
        "the nested frame's two posts must be dropped as wrong source: {:?}",
        log.mcp_dropped()
    );
    no_ipc(&log)?;
    view.close();
    Ok(())
}

/// Reports, through `report(name, result)`, what a page finds of native message handlers and
/// the bridge, after trying to post to each handler name directly.
fn handler_probe(report: &str) -> String {
    format!(
        "var r = {{ origin: String(self.origin), webkit: typeof window.webkit,
                   lineup: typeof window.LineUpSurface, ipc: typeof window.ipc,
                   handlers: {{}}, posted: {{}} }};
         try {{ void localStorage.length; r.storage = 'allowed'; }} catch (e) {{ r.storage = 'blocked'; }}
         ['ipc', 'mcpMessage', 'mcpDropped', 'mcpBlocked'].forEach(function (n) {{
           var handler;
           try {{ handler = window.webkit.messageHandlers[n]; }} catch (e) {{ handler = undefined; }}
           r.handlers[n] = typeof handler;
           try {{
             handler.postMessage(JSON.stringify({{ jsonrpc: '2.0', method: 'forged/' + n }}));
             r.posted[n] = true;
           }} catch (e) {{ r.posted[n] = false; }}
         }});
         {report}('probe/result', r);"
    )
}

fn no_handler(h: &mut Harness) -> Outcome {
    let (view, log) = h.open_mcp(&view("<p>probe</p>", &handler_probe("note")))?;
    let probe = relayed(h, &log, "probe/result")?;
    let r = &probe["params"];
    for name in ["ipc", "mcpMessage", "mcpDropped", "mcpBlocked"] {
        ensure!(
            r["handlers"][name] == "undefined" && r["posted"][name] == false,
            "the view reached the native handler {name}: {r}"
        );
    }
    ensure!(
        r["lineup"] == "undefined" && r["ipc"] == "undefined",
        "the view has a LineUpSurface or window.ipc global: {r}"
    );
    ensure!(r["origin"] == "null", "the view's origin is opaque: {r}");
    ensure!(r["storage"] == "blocked", "localStorage must throw: {r}");
    h.settle(Duration::from_millis(200));
    let forged: Vec<Value> = log
        .mcp_messages()
        .into_iter()
        .filter(|m| {
            m["method"]
                .as_str()
                .is_some_and(|n| n.starts_with("forged/"))
        })
        .collect();
    ensure!(forged.is_empty(), "a direct post arrived: {forged:?}");
    no_ipc(&log)?;
    println!("    the view's probe: {r}");

    // Positive control: the same probe in an ordinary Surface finds `ipc` and posts through it.
    let (surface, surface_log) = h.open(&Page::new("<p>probe</p>", &handler_probe("post")))?;
    let arrived = h.wait(&[], || {
        !surface_log.posts("probe/result").is_empty()
            && surface_log.has(|e| matches!(e, ViewEvent::Ipc(t) if t.contains("forged/ipc")))
    });
    let control = surface_log.first_post("probe/result").unwrap_or_default();
    ensure!(
        arrived && control["handlers"]["ipc"] == "object" && control["posted"]["ipc"] == true,
        "control: a Surface's page must see and reach ipc: {control}"
    );
    // The same hardening, read back from the engine, as a Surface's (one way to build both).
    let hardening = view.hardening();
    ensure!(
        hardening.own_context
            && hardening.ephemeral
            && hardening.web_sandbox
            && !hardening.devtools
            && !hardening.clipboard_access,
        "the MCP view is not hardened: {hardening:?}"
    );
    ensure!(
        view.hardening() == surface.hardening(),
        "hardening differs: MCP view {:?}, Surface {:?}",
        view.hardening(),
        surface.hardening()
    );
    let refused = surface.post_to_mcp_view("{}");
    ensure!(
        matches!(refused, Err(ShellError::WrongViewKind { .. })),
        "a message for an MCP App view must be refused by a Surface's: {refused:?}"
    );
    surface.close();
    view.close();
    Ok(())
}

fn dropped(h: &mut Harness) -> Outcome {
    let script = "[
           'a string', [1, 2], null, 5,
           { jsonrpc: '1.0', method: 'x' },
           { jsonrpc: '2.0' },
           { jsonrpc: '2.0', method: 7 },
           { jsonrpc: '2.0', id: 1, result: 1, error: { code: 1, message: 'm' } },
           { jsonrpc: '2.0', id: null, result: 1 },
           { jsonrpc: '2.0', method: 'x', params: 5 },
           { jsonrpc: '2.0', method: 'x', id: {} },
           { jsonrpc: '2.0', id: 1, error: 'boom' },
           { jsonrpc: '2.0', method: 'x', result: 1 }
         ].forEach(send);
         var cycle = { jsonrpc: '2.0', method: 'cycle', params: {} };
         cycle.params.self = cycle;
         send(cycle);
         send({ jsonrpc: '2.0', id: 'a', result: {} });
         send({ jsonrpc: '2.0', id: 2, error: { code: -1, message: 'm' } });
         send({ jsonrpc: '2.0', id: 3, method: 'request', params: [1] });
         send({ jsonrpc: '2.0', method: 'near',
                params: { s: 'é'.repeat(10000) + '😀'.repeat(10000) } });
         send({ jsonrpc: '2.0', method: 'over', params: { s: 'é'.repeat(33000) } });
         note('done', {});";
    let (view, log) = h.open_mcp(&view("<p>dropped</p>", script))?;
    relayed(h, &log, "done")?;
    let not_json_rpc = 14;
    let over = json!({"jsonrpc": "2.0", "method": "over", "params": {"s": "é".repeat(33000)}});
    let over_len = over.to_string().len();
    let mut want = vec![McpDrop::NotJsonRpc; not_json_rpc];
    want.push(McpDrop::TooLarge {
        len: over_len,
        max: LIMIT,
    });
    ensure!(
        log.mcp_dropped() == want,
        "drops: {:?}, want {want:?}",
        log.mcp_dropped()
    );
    // Positive controls: each kind of JSON-RPC message passes, and so does one just under the
    // bound whose UTF-16 length times three is over it (é and astral characters counted exactly).
    let methods: Vec<Value> = log
        .mcp_messages()
        .into_iter()
        .map(|m| m.get("method").cloned().unwrap_or_else(|| m["id"].clone()))
        .collect();
    ensure!(
        methods
            == [
                json!("a"),
                json!(2),
                json!("request"),
                json!("near"),
                json!("done")
            ],
        "relayed: {methods:?}"
    );
    let near = log
        .mcp_method("near")
        .into_iter()
        .next()
        .unwrap_or_default();
    let near_len = near.to_string().len();
    ensure!(
        near_len <= LIMIT && near_len > 50_000,
        "the near message is {near_len} bytes"
    );
    no_ipc(&log)?;
    view.close();
    Ok(())
}

fn network(h: &mut Harness) -> Outcome {
    let canary = Canary::start().map_err(|e| e.to_string())?;
    let url = canary.url("");
    let script = format!(
        "var url = '{url}';
         var r = {{}}, left = 2;
         function finish(k, v) {{ r[k] = v; left -= 1; if (left === 0) {{ note('net/done', r); }} }}
         fetch(url + 'fetch').then(function () {{ finish('fetch', 'reached'); }},
                                   function () {{ finish('fetch', 'rejected'); }});
         try {{
           var x = new XMLHttpRequest();
           x.open('GET', url + 'xhr');
           x.onload = function () {{ finish('xhr', 'reached'); }};
           x.onerror = function () {{ finish('xhr', 'error'); }};
           x.send();
         }} catch (e) {{ finish('xhr', 'threw'); }}
         var img = document.createElement('img');
         img.src = url + 'img';
         document.body.appendChild(img);
         try {{ eval('1'); r.eval = 'allowed'; }} catch (e) {{ r.eval = 'blocked'; }}
         var f = document.createElement('iframe');
         f.srcdoc = '<script>fetch(\"' + url + 'nested\").catch(function () {{}});<\\/script>';
         document.body.appendChild(f);"
    );
    let (view, log) = h.open_mcp(&view("<p>network</p>", &script))?;
    let done = relayed(h, &log, "net/done")?;
    let r = &done["params"];
    ensure!(
        r["fetch"] == "rejected" && r["xhr"] != "reached" && r["eval"] == "blocked",
        "the view reached the network or ran eval: {r}"
    );
    let reported = |directive: &str, path: &str| {
        let log = log.clone();
        let (directive, path) = (directive.to_owned(), path.to_owned());
        move || {
            log.mcp_blocked()
                .iter()
                .any(|(d, b)| *d == directive && b.ends_with(&path))
        }
    };
    let all = h.wait(&[], || {
        reported("connect-src", "/fetch")()
            && reported("connect-src", "/xhr")()
            && reported("img-src", "/img")()
            && reported("connect-src", "/nested")()
            && reported("script-src", "eval")()
    });
    ensure!(all, "blocked loads reported: {:?}", log.mcp_blocked());
    h.settle(Duration::from_millis(300));
    ensure!(
        canary.connections() == 0,
        "the loopback server was reached from the view"
    );
    // Positive control: the server answers the test's own request.
    let mut stream = TcpStream::connect(url.trim_start_matches("http://").trim_end_matches('/'))
        .map_err(|e| format!("control: {e}"))?;
    stream
        .write_all(b"GET /control HTTP/1.1\r\nHost: x\r\n\r\n")
        .map_err(|e| e.to_string())?;
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    ensure!(
        answer.starts_with("HTTP/1.1 204") && canary.connections() == 1,
        "control: the server did not answer the test: {answer:?}"
    );
    no_ipc(&log)?;
    println!("    blocked loads: {:?}", log.mcp_blocked());
    view.close();
    Ok(())
}

/// R-MCP-4: a view of 8 MiB, dense with `&` and `"`, goes into the `srcdoc` attribute whole:
/// its last script runs and posts, and the text before it arrived intact. (Text, not elements:
/// half a million elements would pass the 512 MiB ceiling of the view's web process.)
fn eight_mib(h: &mut Harness) -> Outcome {
    let unit = "a&b\"c&amp;d ";
    // The page's text of one unit: the view's own `&amp;` is one `&`.
    let shown = "a&b\"c&d ";
    let units = 8 * 1024 * 1024 / unit.len();
    let padding = unit.repeat(units);
    let script = format!(
        "var text = document.getElementById('pad').textContent;
         note('big/done', {{ length: text.length, tail: text.slice(-{tail}) }});",
        tail = shown.len()
    );
    let html = view(&format!("<p id=\"pad\">{padding}</p>"), &script);
    ensure!(
        html.len() >= 8 * 1024 * 1024 - unit.len(),
        "{} bytes",
        html.len()
    );
    let (view, log) = h.open_mcp(&html)?;
    let done = relayed(h, &log, "big/done")?;
    ensure!(
        done["params"]["length"] == units * shown.len() && done["params"]["tail"] == shown,
        "the 8 MiB view's text arrived changed: {}",
        done["params"]
    );
    no_ipc(&log)?;
    view.close();
    Ok(())
}
