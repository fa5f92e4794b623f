//! What the page cannot do: bad bridge messages, a subframe, the CSP, a loopback fetch, popups, downloads, navigation, devtools (R-SEC-2..R-SEC-4).

use super::*;

fn bad_messages_js() -> String {
    let pad = |len: usize| "x".repeat(len - r#"{"p":""}"#.len());
    format!(
        r#"
var ipc = window.webkit.messageHandlers.ipc;
var NS = '{BRIDGE_NAMESPACE}';
function raw(m) {{ ipc.postMessage(typeof m === 'string' ? m : JSON.stringify(m)); }}
var once = false;
LineUpSurface.onState(function () {{
  if (once) {{ return; }}
  once = true;
  raw({{ namespace: NS, type: 'event', event: '9bad', data: {{}} }});
  raw('{{"namespace":"' + NS + '","type":"event","event":"big","data":{{"p":"{big}"}}}}');
  raw({{ namespace: NS, type: 'event', event: 'array', data: [1, 2] }});
  raw({{ namespace: NS, type: 'event', event: 'string', data: 's' }});
  raw({{ namespace: 'lineup.surface.v2', type: 'event', event: 'wrongns', data: {{}} }});
  raw({{ namespace: NS, type: 'event', event: 'close', data: {{}} }});
  raw('{{"namespace":"' + NS + '","type":"event","event":"almost","data":{{"p":"{almost}"}}}}');
  window.close();
  window.close();
  raw({{ namespace: NS, type: 'event', event: 'after', data: {{ ok: true }} }});
}});
"#,
        big = pad(16 * 1024),
        almost = pad(16 * 1024 - 1),
    )
}

pub(super) fn bad_messages(h: &mut HostHarness) -> Outcome {
    let mut t = new_host(h)?;
    let key = h.open(
        &mut t,
        "b1",
        test_app("bad", "<p>bad</p>", &bad_messages_js()),
        None,
    )?;
    ensure!(
        h.wait(&mut t, |_, rec| !rec.data("b1", "after").is_empty()),
        "the valid event after the bad ones never arrived: {:?}",
        t.rec.notes()
    );
    h.settle(&mut t, Duration::from_millis(200));
    let names: Vec<Value> = t
        .rec
        .ui_events()
        .iter()
        .map(|p| p["event"].clone())
        .collect();
    ensure!(
        names == vec![json!("almost"), json!("after")],
        "only the 16383-byte and the valid event may go upstream, got {names:?}"
    );
    let almost = t.rec.data("b1", "almost");
    ensure!(
        almost
            .first()
            .is_some_and(|d| d.to_string().len() == 16 * 1024 - 1),
        "the boundary event's data was changed"
    );
    ensure!(
        t.rec.data("b1", "after") == vec![json!({ "ok": true })],
        "wrong data for the valid event"
    );
    let rules: Vec<&str> = t.rec.dropped(&key).iter().map(|e| e.rule).collect();
    ensure!(
        rules == vec!["R-UI-7", "R-UI-7", "R-UI-7", "R-UI-7", "R-SEC-4", "R-UI-5"],
        "dropped with unexpected rules: {rules:?}"
    );
    let stats = t.host.stats();
    ensure!(
        stats.bridge_invalid == 5 && stats.forged_close == 1 && stats.close_attempts == 2,
        "not counted: {stats:?}"
    );
    // Besides the session's inventory, which comes first (R-INV-1), only the page's events.
    let sent = t.rec.sent();
    let types: Vec<&Value> = sent.iter().map(|m| &m["type"]).collect();
    ensure!(
        types.len() >= 2
            && types[0] == "lineup.v1.client.inventory"
            && types[1] == "lineup.v1.app.list"
            && types[2..].iter().all(|t| *t == "lineup.v1.ui.event"),
        "something else went upstream: {types:?}"
    );
    h.shut_down(t)
}

const SUBFRAME_JS: &str = r#"
window.addEventListener('message', function (e) {
  if (e.data === 'subframe-ran') { post('subframe-ran', {}); }
});
var f = document.createElement('iframe');
f.setAttribute('sandbox', 'allow-scripts');
f.srcdoc = '<script>' +
  'var h = window.webkit.messageHandlers.ipc;' +
  'h.postMessage(JSON.stringify({namespace: "lineup.surface.v1", type: "event", event: "from-subframe", data: {origin: String(self.origin)}}));' +
  'h.postMessage(JSON.stringify({namespace: "lineup.surface.v1", type: "event", instance_id: "other", event: "forged", data: {instance_id: "other"}}));' +
  'parent.postMessage("subframe-ran", "*");' +
  '<\/script>';
document.body.appendChild(f);
"#;

pub(super) fn subframe(h: &mut HostHarness) -> Outcome {
    let mut t = new_host(h)?;
    h.open(
        &mut t,
        "other",
        test_app("other", "<p>other</p>", ECHO_STATE),
        None,
    )?;
    let framer = h.open(
        &mut t,
        "framer",
        test_app("framer", "<p>frames</p>", SUBFRAME_JS),
        None,
    )?;
    let arrived = h.wait(&mut t, |_, rec| {
        !rec.data("framer", "from-subframe").is_empty()
            && !rec.data("framer", "subframe-ran").is_empty()
    });
    ensure!(
        arrived,
        "the subframe's post or the control is missing (does a srcdoc frame run under frame-src 'none'?): {:?}",
        t.rec.ui_events()
    );
    h.settle(&mut t, Duration::from_millis(300));
    ensure!(
        t.rec.data("framer", "from-subframe") == vec![json!({ "origin": "null" })],
        "the subframe is not sandboxed: {:?}",
        t.rec.data("framer", "from-subframe")
    );
    let to_other: Vec<Value> = t
        .rec
        .ui_events()
        .into_iter()
        .filter(|p| p["instance_id"] == "other" && p["event"] != "state")
        .collect();
    ensure!(
        to_other.is_empty(),
        "the subframe spoke for the other Surface: {to_other:?}"
    );
    let forged: Vec<Value> = t.rec.events_named("forged");
    // The forged message is the framer's, forwarded as such or dropped, never the other's.
    ensure!(
        forged.iter().all(|p| p["instance_id"] == "framer")
            && forged.len() + t.rec.dropped(&framer).len() == 1,
        "a forged instance_id was believed: {forged:?}, dropped {:?}",
        t.rec.dropped(&framer)
    );
    ensure!(
        t.rec
            .notes()
            .iter()
            .all(|n| !matches!(n, Note::Refused(k, _) if *k == framer)),
        "about:srcdoc must be allowed (R-SEC-2a): {:?}",
        t.rec.refusals(&framer)
    );
    h.shut_down(t)
}

const POLICY_JS: &str = "
document.addEventListener('securitypolicyviolation', function (e) {
  post('violation', { directive: e.effectiveDirective, policy: e.originalPolicy, disposition: e.disposition });
});
var r = { origin: String(self.origin) };
try { eval('1'); r.eval = 'allowed'; } catch (e) { r.eval = 'blocked'; }
try { void localStorage.length; r.storage = 'allowed'; } catch (e) { r.storage = 'blocked'; }
post('policy', r);
";

pub(super) fn csp_applied(h: &mut HostHarness) -> Outcome {
    let header = DocumentOptions::default()
        .csp()
        .map(|c| c.header_value())
        .ok_or("the default document has no CSP")?;
    let mut t = new_host(h)?;
    h.open(
        &mut t,
        "csp",
        test_app("csp", "<p>csp</p>", POLICY_JS),
        None,
    )?;
    let violation = h
        .expect_sandboxed(&mut t, "csp", true)?
        .ok_or("no violation")?;
    ensure!(
        violation
            == json!({ "directive": "script-src", "policy": header, "disposition": "enforce" }),
        "the enforced policy is not the header that was served: {violation}"
    );
    h.shut_down(t)?;

    // Positive control: the same bundle without the header runs under no policy at all.
    let mut c = no_csp_host(h)?;
    h.open(
        &mut c,
        "csp",
        test_app("csp", "<p>csp</p>", POLICY_JS),
        None,
    )?;
    ensure!(
        h.wait(&mut c, |_, rec| !rec.data("csp", "policy").is_empty()),
        "control: no policy report"
    );
    h.settle(&mut c, Duration::from_millis(300));
    let policy = c.rec.data("csp", "policy")[0].clone();
    ensure!(
        policy["origin"] != "null" && policy["eval"] == "allowed",
        "control: still restricted without the header: {policy}"
    );
    ensure!(
        c.rec.data("csp", "violation").is_empty(),
        "control: a violation without a policy"
    );
    h.shut_down(c)
}

fn fetch_js(url: &str) -> String {
    format!(
        "fetch('{url}').then(
           function () {{ post('fetch', {{ rejected: false }}); }},
           function () {{ post('fetch', {{ rejected: true }}); }});"
    )
}

pub(super) fn loopback_fetch(h: &mut HostHarness) -> Outcome {
    let canary = Canary::start().map_err(|e| e.to_string())?;
    let app = test_app("fetch", "<p>fetch</p>", &fetch_js(&canary.url("leak")));
    let mut t = new_host(h)?;
    h.open(&mut t, "f1", app.clone(), None)?;
    ensure!(
        h.wait(&mut t, |_, rec| !rec.data("f1", "fetch").is_empty()),
        "the page never reported its fetch"
    );
    h.settle(&mut t, Duration::from_millis(300));
    ensure!(
        t.rec.data("f1", "fetch") == vec![json!({ "rejected": true })],
        "the fetch was not rejected: {:?}",
        t.rec.data("f1", "fetch")
    );
    ensure!(
        canary.connections() == 0,
        "the loopback listener was reached under the CSP"
    );
    h.shut_down(t)?;

    // Positive control: the same bundle without the CSP, and without the refusing network proxy
    // (R-SEC-3, which refuses it too), reaches the listener.
    let mut c = h.host(open_network())?;
    h.open(&mut c, "f1", app, None)?;
    ensure!(
        h.wait(&mut c, |_, rec| !rec.data("f1", "fetch").is_empty()),
        "control: the page never reported its fetch"
    );
    ensure!(
        c.rec.data("f1", "fetch") == vec![json!({ "rejected": false })] && canary.connections() > 0,
        "control: the listener was not reached without the CSP: {:?}, {} connections",
        c.rec.data("f1", "fetch"),
        canary.connections()
    );
    h.shut_down(c)
}

const ATTEMPTS_HTML: &str = r#"<button id="b" style="position: fixed; left: 0; top: 0; width: 100%; height: 100%">attempts</button>"#;

/// Tries, one after the other: `window.close()`, `window.open` without a gesture, a download
/// link, a geolocation request and a top-level navigation; then reports where it is. A click on
/// the page's button runs `window.open` with a user gesture.
const ATTEMPTS_JS: &str = "
setTimeout(function () { window.close(); }, 50);
var w = null;
setTimeout(function () { w = window.open('https://example.org/'); }, 100);
setTimeout(function () {
  var a = document.createElement('a');
  a.href = 'data:application/octet-stream,lineup-download-payload'; a.download = 'x.bin';
  document.body.appendChild(a); a.click();
}, 150);
setTimeout(function () {
  navigator.geolocation.getCurrentPosition(
    function () { post('geo', { granted: true }); },
    function (e) { post('geo', { granted: false }); });
}, 200);
setTimeout(function () { location.href = 'https://example.com/'; }, 300);
setTimeout(function () { post('after', { href: location.href, opened: w !== null }); }, 900);
document.getElementById('b').onclick = function () {
  var clicked = window.open('https://example.net/');
  post('clicked-open', { opened: clicked !== null });
};
";

/// The visible top-level windows of this process.
fn toplevel_windows() -> usize {
    gtk::Window::list_toplevels()
        .iter()
        .filter(|w| w.is_visible())
        .count()
}

fn is_download(r: &Refusal) -> bool {
    match r {
        Refusal::Download(_) => true,
        Refusal::Navigation(url) => url.starts_with("data:"),
        _ => false,
    }
}

/// Opens the attempts page, waits for its report, then clicks its button (XTEST) for a
/// `window.open` with a user gesture; returns the Surface's refusals.
fn attempts(h: &mut HostHarness, t: &mut TestHost, x: &X11) -> Result<Vec<Refusal>, String> {
    let windows = toplevel_windows();
    let key = h.open(
        t,
        "t1",
        test_app("attempts", ATTEMPTS_HTML, ATTEMPTS_JS),
        None,
    )?;
    ensure!(
        h.wait(t, |_, rec| rec.count("t1", "after") == 1
            && rec.count("t1", "geo") == 1),
        "the page did not survive its attempts: {:?}",
        t.rec.notes()
    );
    let url = t
        .host
        .view(&key)
        .map(|v| v.url().to_owned())
        .unwrap_or_default();
    let after = t.rec.data("t1", "after")[0].clone();
    ensure!(
        after == json!({ "href": url, "opened": false }),
        "the page navigated or opened a window: {after}"
    );
    ensure!(
        t.rec.data("t1", "geo") == vec![json!({ "granted": false })],
        "geolocation: {:?}",
        t.rec.data("t1", "geo")
    );
    let xid = xid_of(
        t.host
            .view(&key)
            .and_then(|v| v.window())
            .ok_or("no window")?,
    )?;
    x.click_in(xid, 240, 180)?;
    ensure!(
        h.wait(t, |_, rec| rec.count("t1", "clicked-open") == 1),
        "the click did not reach the page"
    );
    h.settle(t, Duration::from_millis(300));
    ensure!(
        t.rec.data("t1", "clicked-open") == vec![json!({ "opened": false })],
        "window.open on a click returned a window"
    );
    ensure!(
        toplevel_windows() == windows + 1,
        "a window other than the Surface's appeared: {windows} before, {} now",
        toplevel_windows()
    );
    ensure!(
        t.host.view(&key).is_some() && t.rec.closed(&key).is_empty(),
        "window.close() closed the Surface"
    );
    ensure!(
        t.rec.ui_events().iter().all(|p| p["event"] != "close"),
        "window.close() sent a close event"
    );
    Ok(t.rec.refusals(&key))
}

pub(super) fn refusals(h: &mut HostHarness, x: &X11, home: &Path) -> Outcome {
    let mut t = new_host(h)?;
    let refused = attempts(h, &mut t, x)?;
    ensure!(
        refused.contains(&Refusal::PageClose)
            && refused.contains(&Refusal::Navigation("https://example.com/".to_owned()))
            && refused.iter().any(is_download),
        "window.close(), the navigation and the download must be reported refused: {refused:?}"
    );
    h.shut_down(t)?;

    // Positive control: without the CSP sandbox, what WebKit stopped first above (the popup,
    // the permission request) reaches the webview's own policy, and the host reports it.
    let mut c = no_csp_host(h)?;
    let refused = attempts(h, &mut c, x)?;
    for expected in [
        Refusal::PageClose,
        Refusal::Navigation("https://example.com/".to_owned()),
        Refusal::NewWindow("https://example.net/".to_owned()),
        Refusal::Permission,
    ] {
        ensure!(
            refused.contains(&expected),
            "control: not reported refused: {expected}; refused: {refused:?}"
        );
    }
    ensure!(
        refused.iter().any(is_download),
        "control: the download was not reported refused: {refused:?}"
    );
    h.shut_down(c)?;
    let written = files_containing(home, b"lineup-download-payload");
    ensure!(written.is_empty(), "a download was written: {written:?}");
    Ok(())
}

pub(super) fn devtools(h: &mut HostHarness) -> Outcome {
    ensure!(
        cfg!(debug_assertions),
        "this check is meant for the debug profile"
    );
    let mut t = new_host(h)?;
    let key = h.open(&mut t, "d1", test_app("devtools", "<p>d</p>", ""), None)?;
    let hardening = t.host.view(&key).ok_or("no view")?.hardening();
    ensure!(!hardening.devtools, "devtools on: {hardening:?}");
    h.shut_down(t)?;

    // Positive control: the same read-back sees devtools the embedder asked for.
    let mut c = h.host(HostBuilder::new().dangerous().with_devtools())?;
    let key = h.open(&mut c, "d1", test_app("devtools", "<p>d</p>", ""), None)?;
    let hardening = c.host.view(&key).ok_or("no view")?.hardening();
    ensure!(
        hardening.devtools,
        "control: devtools asked for but off: {hardening:?}"
    );
    h.shut_down(c)
}
