//! The host → page path in a real WebKitGTK webview under Xvfb: the state reaches `onState`
//! exactly as the agent sent it (R-UI-3), only the host can deliver it (R-UI-6), a page that
//! reloads itself gets its state again (R-UI-10) and is bounded when it loops (R-UI-12), and the
//! main frame only ever shows the Surface's own document (R-SEC-2, R-SEC-2a). Every negative
//! check has a positive control in the same scenario.
#![allow(clippy::print_stdout, clippy::unwrap_used, missing_docs)]

use std::time::{Duration, Instant};

use lineup_host::{HostBuilder, Refusal};
use lineup_host_core::{CloseReason, GoneReason, Limits};
use lineup_tests::ensure;
use lineup_tests::home::private_home;
use lineup_tests::host_harness::{test_app, HostHarness, Note, TestHost};
use lineup_tests::runner::Outcome;
use serde_json::{json, Map, Value};

pub(crate) fn run() {
    let _home = private_home("bridge");
    let mut h = HostHarness::start();
    h.run(
        "r_ui_3_state_arrives_as_sent_own_keys_order_depth_and_unicode",
        state_as_sent,
    );
    h.run(
        "r_ui_6_page_code_cannot_deliver_a_state_through_the_host_path",
        forged_delivery,
    );
    h.run(
        "r_ui_10_a_reload_gets_the_current_state_exactly_once_and_fragments_are_not_reloads",
        reload,
    );
    h.run(
        "r_ui_10_r_ui_12_a_reload_loop_is_closed_with_reason_reload_loop",
        reload_loop,
    );
    h.run(
        "r_sec_2a_main_frame_navigations_away_and_to_about_blank_are_refused_and_the_page_stays_patchable",
        main_frame_navigation,
    );
    h.run(
        "r_ui_12_a_surface_whose_main_frame_goes_to_about_srcdoc_is_reported_crashed_upstream",
        about_srcdoc,
    );
    h.run(
        "r_ui_3_a_flood_of_patches_coalesces_and_the_page_ends_on_the_latest_state",
        flood_of_patches,
    );
    h.finish();
}

fn new_host(h: &mut HostHarness) -> Result<TestHost, String> {
    h.host(HostBuilder::new())
}

/// `n` nested objects `{"d": {"d": … {}}}`.
fn nested(n: usize) -> Value {
    let mut value = json!({});
    for _ in 1..n {
        value = json!({ "d": value });
    }
    value
}

/// R-UI-3: every key an own data property (`__proto__`, `constructor`, `prototype` included),
/// in the agent's order as far as JavaScript keeps it (integer-like keys first), non-BMP text and
/// U+2028 intact, nesting at the envelope's depth limit.
fn state_as_sent(h: &mut HostHarness) -> Outcome {
    let mut t = new_host(h)?;
    // Envelope (1) → payload (2) → state (3) → deep (4 …): `deep` may hold this many objects.
    let deep_levels = Limits::default().max_depth - 3;
    let mut state = Map::new();
    state.insert("b".into(), json!(1));
    state.insert("__proto__".into(), json!({ "x": 1 }));
    state.insert("constructor".into(), json!({ "y": 2 }));
    state.insert("prototype".into(), json!(3));
    state.insert("10".into(), json!("ten"));
    state.insert("2".into(), json!("two"));
    state.insert("text".into(), json!("𝄞😀\u{2028}北京"));
    state.insert("deep".into(), nested(deep_levels));
    let state = Value::Object(state);
    let js = r#"
        function depth(o) { var n = 0; while (o && typeof o === 'object') { n += 1; o = o.d; } return n; }
        function describe(s) {
          return {
            keys: Object.keys(s),
            own_proto: Object.prototype.hasOwnProperty.call(s, '__proto__'),
            object_prototype: Object.getPrototypeOf(s) === Object.prototype,
            inherited_x: s.x === undefined ? null : s.x,
            proto_member: JSON.stringify(Object.getOwnPropertyDescriptor(s, '__proto__') ? s['__proto__'] : null),
            text: s.text === undefined ? null : s.text,
            depth: depth(s.deep),
            json: JSON.stringify(s)
          };
        }
        // The positive control: an object literal, as the state used to be injected, gives a
        // prototype instead of a key, which the checks below would see.
        var literal = {"__proto__": {"x": 1}, "a": 2};
        post('literal', describe(literal));
        LineUpSurface.onState(function (s) { post('state', describe(s)); });
    "#;
    h.open(
        &mut t,
        "s",
        test_app("fidelity", "<p>fidelity</p>", js),
        Some(state.clone()),
    )?;
    ensure!(
        h.wait(&mut t, |_, rec| rec.count("s", "state") >= 1
            && rec.count("s", "literal") >= 1),
        "no state or control report: {:?}",
        t.rec.notes()
    );
    let control = t.rec.data("s", "literal")[0].clone();
    ensure!(
        control["keys"] == json!(["a"]) && control["inherited_x"] == 1,
        "the positive control should show an object literal losing its __proto__ key: {control}"
    );
    let got = t.rec.data("s", "state")[0].clone();
    let expected_keys = json!([
        "2",
        "10",
        "b",
        "__proto__",
        "constructor",
        "prototype",
        "text",
        "deep"
    ]);
    ensure!(
        got["keys"] == expected_keys,
        "keys {} ≠ {expected_keys}",
        got["keys"]
    );
    ensure!(
        got["own_proto"] == true && got["object_prototype"] == true && got["inherited_x"].is_null(),
        "__proto__ must be an own data property and the prototype untouched: {got}"
    );
    ensure!(
        got["proto_member"] == r#"{"x":1}"#,
        "the __proto__ member is {}",
        got["proto_member"]
    );
    ensure!(
        got["text"] == "𝄞😀\u{2028}北京",
        "text arrived as {}",
        got["text"]
    );
    ensure!(
        got["depth"] == deep_levels,
        "nesting arrived {} deep, sent {deep_levels}",
        got["depth"]
    );
    let reparsed: Value = serde_json::from_str(got["json"].as_str().unwrap_or("null"))
        .map_err(|e| format!("the page's JSON.stringify is not JSON: {e}"))?;
    ensure!(
        reparsed == state,
        "the state re-serialized by the page differs from what was sent: {reparsed}"
    );
    h.shut_down(t)
}

/// R-UI-6: the page tries the entry point with and without guessed keys, looks for the key in
/// `document.scripts`, the document's markup and the bridge functions' `toString()`, and a srcdoc
/// subframe tries too; only the agent's states ever reach `onState`.
fn forged_delivery(h: &mut HostHarness) -> Outcome {
    let mut t = new_host(h)?;
    let js = r#"
        LineUpSurface.onState(function (s) { post('state', s); });
        var forged = '{"forged":1}';
        var attempts = 0;
        function attempt(f) { attempts += 1; try { f(); } catch (ignored) {} }
        var deliver = LineUpSurface.__deliverState;
        attempt(function () { deliver({ forged: 1 }); });
        attempt(function () { deliver(forged); });
        attempt(function () { deliver(null, forged); });
        attempt(function () { deliver('00000000000000000000000000000000', forged); });
        Object.getOwnPropertyNames(window).forEach(function (name) {
          if (/lineup|deliver/i.test(name) && typeof window[name] === 'function') {
            attempt(function () { window[name](forged); });
            attempt(function () { window[name]({ forged: 1 }); });
          }
        });
        var texts = [document.documentElement.outerHTML, String(location.href)];
        for (var i = 0; i < document.scripts.length; i += 1) { texts.push(document.scripts[i].textContent); }
        [deliver, LineUpSurface.event, LineUpSurface.onState, LineUpSurface.resize].forEach(function (f) {
          texts.push(Function.prototype.toString.call(f));
        });
        var candidates = texts.join('\n').match(/[0-9a-fA-F]{32}/g) || [];
        candidates.forEach(function (k) { attempt(function () { deliver(k, forged); }); });
        // The bridge's own text (it defines the entry point) is nowhere in the page.
        var pageText = texts.slice(0, texts.length - 4).join('\n');
        var bridgeText = pageText.indexOf('objectDefine' + 'Property') >= 0 || pageText.indexOf('DELIVERY' + '_KEY') >= 0;
        var globals = Object.getOwnPropertyNames(window).filter(function (n) { return /lineup/i.test(n); });
        post('tried', { attempts: attempts, candidates: candidates.length, bridge_text_visible: bridgeText,
          globals: globals, enumerable: Object.keys(LineUpSurface) });
        var frame = document.createElement('iframe');
        frame.srcdoc = '<script>' +
          'try { parent.LineUpSurface.__deliverState(\'{"forged":1}\'); } catch (e) {}' +
          'try { window.webkit.messageHandlers.ipc.postMessage(JSON.stringify({namespace: "lineup.surface.v1", type: "event", event: "subframe", data: {}})); } catch (e) {}' +
          '<' + '/script>';
        document.body.appendChild(frame);
    "#;
    h.open(
        &mut t,
        "f",
        test_app("forge", "<p>forge</p>", js),
        Some(json!({ "n": 1 })),
    )?;
    ensure!(
        h.wait(&mut t, |_, rec| rec.count("f", "tried") == 1
            && rec.count("f", "subframe") == 1
            && rec.count("f", "state") >= 1),
        "the page's attempts, its subframe or its first state did not report: {:?}",
        t.rec.notes()
    );
    let tried = t.rec.data("f", "tried")[0].clone();
    ensure!(
        tried["attempts"].as_u64().unwrap_or(0) >= 5
            && tried["candidates"].as_u64().unwrap_or(0) >= 1,
        "the page did not really try: {tried}"
    );
    ensure!(
        tried["bridge_text_visible"] == false,
        "the bridge's text is readable by the page: {tried}"
    );
    // R-UI-6: one page global; the entry point is inside it and not enumerable.
    ensure!(
        tried["globals"] == json!(["LineUpSurface"]),
        "the page sees a second bridge global: {tried}"
    );
    ensure!(
        tried["enumerable"] == json!(["event", "onState", "resize"]),
        "the entry point is enumerable: {tried}"
    );
    // The positive control: the agent's patch reaches the very listener the forgeries aimed at.
    t.send(t.agent.patch("f", json!({ "n": 2 })))?;
    ensure!(
        h.wait(&mut t, |_, rec| rec.count("f", "state") >= 2),
        "the agent's patch never arrived"
    );
    h.settle(&mut t, Duration::from_millis(300));
    let states = t.rec.data("f", "state");
    ensure!(
        states == vec![json!({ "n": 1 }), json!({ "n": 2 })],
        "onState saw a state the agent never sent: {states:?}"
    );
    h.shut_down(t)
}

/// The script of a page that reports each state with an id of its document and how it was loaded,
/// and acts on the state's instructions.
const RELOADING_PAGE: &str = r#"
    var doc = Math.random().toString(36).slice(2);
    var entry = performance.getEntriesByType('navigation')[0];
    var kind = entry ? entry.type : 'unknown';
    LineUpSurface.onState(function (s) {
      post('state', { doc: doc, kind: kind, n: s.n });
      if (s.reload && kind === 'navigate') { location.reload(); }
      if (s.hash) { location.hash = 'h' + s.n; }
      if (s.push) { try { history.pushState(null, '', '#p' + s.n); } catch (e) { post('push_failed', { m: String(e) }); } }
      if (s.go) { try { location.href = s.go; } catch (e) { post('go_failed', { m: String(e) }); } }
    });
"#;

/// Opens `other`, a Surface that reports every state, beside the one under test.
fn open_steady(h: &mut HostHarness, t: &mut TestHost) -> Outcome {
    h.open(
        t,
        "other",
        test_app(
            "steady",
            "<p>steady</p>",
            "LineUpSurface.onState(function (s) { post('state', s); });",
        ),
        Some(json!({ "n": 1 })),
    )
    .map(|_| ())
}

/// Checks that `other` still answers a patch with its `onState`.
fn steady_still_answers(h: &mut HostHarness, t: &mut TestHost) -> Outcome {
    t.send(t.agent.patch("other", json!({ "n": 2 })))?;
    ensure!(
        h.wait(t, |_, rec| rec.count("other", "state") == 2),
        "the other Surface stopped answering"
    );
    Ok(())
}

fn reloads(t: &TestHost) -> usize {
    t.rec
        .notes()
        .iter()
        .filter(|n| matches!(n, Note::Reloaded(_)))
        .count()
}

/// R-UI-10: `location.reload()` commits a new document, which gets the current state after its
/// `ready`, exactly once; the embedder hears of it; a fragment change and `pushState` are no
/// reloads (the positive control that the reload detection is not just "any navigation").
fn reload(h: &mut HostHarness) -> Outcome {
    let mut t = new_host(h)?;
    h.open(
        &mut t,
        "r",
        test_app("reload", "<p>reload</p>", RELOADING_PAGE),
        Some(json!({ "n": 1 })),
    )?;
    ensure!(
        h.wait(&mut t, |_, rec| rec.count("r", "state") == 1),
        "no first state"
    );
    let first = t.rec.data("r", "state")[0]["doc"].clone();
    // Same-document navigations, one state at a time: a state sent while another is being
    // delivered may be coalesced away (#12), and each of these must reach the page.
    t.send(t.agent.patch("r", json!({ "n": 2, "hash": true })))?;
    ensure!(
        h.wait(&mut t, |_, rec| rec.count("r", "state") == 2),
        "the fragment patch did not arrive"
    );
    t.send(t.agent.patch("r", json!({ "n": 3, "push": true })))?;
    ensure!(
        h.wait(&mut t, |_, rec| rec.count("r", "state") == 3),
        "the patches before the reload did not arrive: {:?}",
        t.rec.data("r", "state")
    );
    h.settle(&mut t, Duration::from_millis(500));
    ensure!(
        reloads(&t) == 0,
        "a fragment change or pushState was taken for a reload"
    );
    // The reload.
    t.send(t.agent.patch("r", json!({ "n": 4, "reload": true })))?;
    ensure!(
        h.wait(&mut t, |_, rec| rec
            .data("r", "state")
            .iter()
            .any(|s| s["doc"] != first)),
        "the reloaded document never got a state: {:?}",
        t.rec.data("r", "state")
    );
    h.settle(&mut t, Duration::from_millis(800));
    let second: Vec<Value> = t
        .rec
        .data("r", "state")
        .into_iter()
        .filter(|s| s["doc"] != first)
        .collect();
    ensure!(
        second.len() == 1 && second[0]["n"] == 4 && second[0]["kind"] == "reload",
        "the reloaded document should get the current state once: {second:?}"
    );
    ensure!(
        reloads(&t) == 1,
        "the embedder heard {} reloads",
        reloads(&t)
    );
    // Still patchable.
    t.send(t.agent.patch("r", json!({ "n": 5 })))?;
    ensure!(
        h.wait(&mut t, |_, rec| rec
            .data("r", "state")
            .iter()
            .any(|s| s["n"] == 5 && s["doc"] != first)),
        "the reloaded document does not take patches"
    );
    h.shut_down(t)
}

/// R-UI-10, R-UI-12: a page that reloads itself on every state is closed once its main frame
/// has committed more documents than the limit allows, and the agent is told why; a second
/// Surface beside it keeps answering.
fn reload_loop(h: &mut HostHarness) -> Outcome {
    let mut t = new_host(h)?;
    let looping = "LineUpSurface.onState(function () { post('loaded', {}); location.reload(); });";
    open_steady(h, &mut t)?;
    h.open(
        &mut t,
        "loop",
        test_app("loop", "<p>loop</p>", looping),
        None,
    )?;
    let key = t.key("loop").ok_or("no key for the looping Surface")?;
    ensure!(
        h.wait(&mut t, |_, rec| !rec.closed(&key).is_empty()),
        "the reload loop was never closed: {} loads",
        t.rec.count("loop", "loaded")
    );
    ensure!(
        t.rec.closed(&key) == vec![CloseReason::Gone(GoneReason::ReloadLoop)],
        "closed as {:?}",
        t.rec.closed(&key)
    );
    let loads = t.rec.count("loop", "loaded");
    let max = Limits::default().max_documents_per_window;
    ensure!(
        loads >= max - 1 && loads <= max,
        "{loads} documents loaded before the close; the limit is {max} documents"
    );
    let closes = t
        .rec
        .ui_events_where(|p| p["instance_id"] == "loop" && p["event"] == "close");
    ensure!(
        closes.len() == 1 && closes[0]["data"] == json!({ "reason": "reload_loop" }),
        "the agent should hear one close with reason reload_loop: {closes:?}"
    );
    steady_still_answers(h, &mut t)?;
    h.shut_down(t)
}

/// R-SEC-2, R-SEC-2a: the page sends its main frame to the web and to another Surface's host,
/// and replaces its document through a `javascript:` URL; each navigation is refused and
/// reported, the replaced document is loaded again, and the Surface stays alive and answers a
/// patch.
/// Positive controls: a fragment navigation is allowed, and a srcdoc subframe loads and posts.
fn main_frame_navigation(h: &mut HostHarness) -> Outcome {
    let mut t = new_host(h)?;
    let js = format!(
        "{RELOADING_PAGE}
        var post_from = '<script>window.webkit.messageHandlers.ipc.postMessage(JSON.stringify({{namespace: \"lineup.surface.v1\", type: \"event\", event: \"NAME\", data: {{}}}}));<' + '/script>';
        // R-SEC-2a: a srcdoc subframe loads and posts: the positive control.
        var srcdoc = document.createElement('iframe');
        srcdoc.srcdoc = post_from.replace('NAME', 'subframe');
        document.body.appendChild(srcdoc);"
    );
    h.open(
        &mut t,
        "n",
        test_app("navigate", "<p>navigate</p>", &js),
        Some(json!({ "n": 0 })),
    )?;
    let key = t.key("n").ok_or("no key")?;
    ensure!(
        h.wait(&mut t, |_, rec| rec.count("n", "subframe") >= 1
            && rec.count("n", "state") >= 1),
        "the srcdoc subframe (positive control) did not post: {:?}",
        t.rec.notes()
    );
    // A fragment navigation is no refusal (the positive control): the page answers the next patch.
    t.send(t.agent.patch("n", json!({ "n": 10, "go": "#fragment" })))?;
    ensure!(
        h.wait(&mut t, |_, rec| rec
            .data("n", "state")
            .iter()
            .any(|s| s["n"] == 10)),
        "the fragment patch never arrived"
    );
    t.send(t.agent.patch("n", json!({ "n": 11 })))?;
    ensure!(
        h.wait(&mut t, |_, rec| rec
            .data("n", "state")
            .iter()
            .any(|s| s["n"] == 11)),
        "after a fragment navigation the Surface no longer answers a patch"
    );
    ensure!(
        t.rec.refusals(&key).is_empty(),
        "the fragment navigation was refused: {:?}",
        t.rec.refusals(&key)
    );
    // Navigations away: each refused and reported, and the same document answers the next patch.
    // `about:blank` is refused in every frame: a main frame sent there would take its web process
    // down, and a subframe keeps its initial empty document (the srcdoc one above still posts).
    for (i, target) in [
        "https://example.invalid/",
        "lineup-surface://00112233445566778899aabbccddeeff/",
        "about:blank",
    ]
    .iter()
    .enumerate()
    {
        let n = 10 * (i as u64 + 2);
        t.send(t.agent.patch("n", json!({ "n": n, "go": target })))?;
        let refused = h.wait(&mut t, |_, rec| {
            rec.refusals(&key)
                .contains(&Refusal::Navigation((*target).to_owned()))
        });
        ensure!(
            refused,
            "location = {target:?} was not reported refused: {:?}",
            t.rec.refusals(&key)
        );
        t.send(t.agent.patch("n", json!({ "n": n + 1 })))?;
        ensure!(
            h.wait(&mut t, |_, rec| rec
                .data("n", "state")
                .iter()
                .any(|s| s["n"] == n + 1)),
            "after location = {target:?} the Surface no longer answers a patch: {:?}",
            t.rec.notes()
        );
    }
    let states = t.rec.data("n", "state");
    ensure!(
        states.iter().all(|s| s["doc"] == states[0]["doc"]),
        "a refused navigation changed the document: {states:?}"
    );
    // A `javascript:` URL replaces the document in place; the Surface's own document is loaded
    // again and answers the next patch.
    let before = states[0]["doc"].clone();
    t.send(t.agent.patch(
        "n",
        json!({ "n": 60, "go": "javascript:'<p id=replaced>replaced</p>'" }),
    ))?;
    // As soon as the page took it (a state sent while another is in flight may be coalesced
    // away), so that the document loaded again finds a state that does not send it away.
    ensure!(
        h.wait(&mut t, |_, rec| rec
            .data("n", "state")
            .iter()
            .any(|s| s["n"] == 60)),
        "the javascript: state never reached the page: {:?}",
        t.rec.data("n", "state")
    );
    t.send(t.agent.patch("n", json!({ "n": 61 })))?;
    ensure!(
        h.wait(&mut t, |_, rec| rec
            .refusals(&key)
            .contains(&Refusal::DocumentReplaced)),
        "the replaced document was not noticed: {:?}",
        t.rec.notes()
    );
    ensure!(
        h.wait(&mut t, |_, rec| rec
            .data("n", "state")
            .iter()
            .any(|s| s["n"] == 61 && s["doc"] != before)),
        "the Surface's own document was not loaded again after the replacement: {:?}",
        t.rec.data("n", "state")
    );
    ensure!(
        t.rec.crashed(&key) == 0 && t.rec.closed(&key).is_empty(),
        "the Surface crashed or closed: {:?}",
        t.rec.notes()
    );
    h.shut_down(t)
}

/// R-UI-12: WebKitGTK 2.50 does not say which frame a navigation decision is for, so
/// `about:srcdoc` stays allowed for srcdoc subframes (R-SEC-2a), and a main frame sent there takes
/// its web process down. Such a Surface is never lost silently: it is reopened with its last state,
/// which sends it there again, three times; the fourth loss closes it and the agent gets one
/// `close` with reason `crashed`. A Surface beside it keeps answering.
fn about_srcdoc(h: &mut HostHarness) -> Outcome {
    let mut t = new_host(h)?;
    open_steady(h, &mut t)?;
    h.open(
        &mut t,
        "blank",
        test_app("blank", "<p>blank</p>", RELOADING_PAGE),
        Some(json!({ "n": 1 })),
    )?;
    t.send(
        t.agent
            .patch("blank", json!({ "n": 2, "go": "about:srcdoc" })),
    )?;
    let gone = CloseReason::Gone(GoneReason::Crashed);
    ensure!(
        h.wait_until(
            &mut t,
            Instant::now() + Duration::from_secs(45),
            |_, rec| rec
                .generations("blank")
                .iter()
                .any(|k| rec.closed(k).contains(&gone))
        ),
        "the Surface neither stayed nor was reported gone: {:?}",
        t.rec.notes()
    );
    let generations = t.rec.generations("blank");
    let closed: Vec<Vec<CloseReason>> = generations.iter().map(|k| t.rec.closed(k)).collect();
    let reopened = vec![CloseReason::Reopened(GoneReason::Crashed)];
    ensure!(
        closed.len() == 4 && closed[..3].iter().all(|c| *c == reopened) && closed[3] == vec![gone],
        "expected three reopens, then a close: {closed:?}"
    );
    let closes = t
        .rec
        .ui_events_where(|p| p["instance_id"] == "blank" && p["event"] == "close");
    ensure!(
        closes.len() == 1 && closes[0]["data"] == json!({ "reason": "crashed" }),
        "expected one close with reason crashed: {closes:?}"
    );
    steady_still_answers(h, &mut t)?;
    h.shut_down(t)
}

/// Each state costs the page 40 ms of rendering; it reports every state it got.
const SLOW_PAGE: &str = "
LineUpSurface.onState(function (s) {
  var until = Date.now() + 40;
  while (Date.now() < until) {}
  post('state', {n: s.n});
});
";

/// R-UI-3 (#12): an agent patching far faster than the page renders: one delivery is in flight
/// per Surface and a newer state replaces the one waiting, so the page skips states, never goes
/// back to an older one, and ends on the latest.
fn flood_of_patches(h: &mut HostHarness) -> Outcome {
    const PATCHES: u64 = 40;
    let mut t = new_host(h)?;
    h.open(
        &mut t,
        "f",
        test_app("flood", "<p>flood</p>", SLOW_PAGE),
        Some(json!({ "n": 0 })),
    )?;
    ensure!(
        h.wait(&mut t, |_, rec| rec.count("f", "state") == 1),
        "no first state"
    );
    for n in 1..=PATCHES {
        t.send(t.agent.patch("f", json!({ "n": n })))?;
    }
    ensure!(
        h.wait(&mut t, |_, rec| rec
            .data("f", "state")
            .iter()
            .any(|s| s["n"] == PATCHES)),
        "the latest state never arrived: {:?}",
        t.rec.data("f", "state")
    );
    h.settle(&mut t, Duration::from_millis(300));
    let seen: Vec<u64> = t
        .rec
        .data("f", "state")
        .iter()
        .filter_map(|s| s["n"].as_u64())
        .collect();
    ensure!(
        seen.windows(2).all(|w| w[0] < w[1]),
        "a state older than one already shown came later: {seen:?}"
    );
    ensure!(
        seen.last() == Some(&PATCHES),
        "the page did not end on the latest state: {seen:?}"
    );
    // 40 states at 40 ms each would take 1.6 s; coalesced, far fewer reach the page.
    ensure!(
        (seen.len() as u64) < PATCHES / 2,
        "{} of {PATCHES} states were rendered one by one: {seen:?}",
        seen.len()
    );
    let key = t.key("f").ok_or("the surface is gone")?;
    let stats = t
        .host
        .view(&key)
        .map(|v| v.delivery_stats())
        .ok_or("no view")?;
    println!(
        "    {} states shown of {}; {stats:?}",
        seen.len(),
        PATCHES + 1
    );
    ensure!(
        stats.coalesced > 0 && stats.high_water == 1,
        "the host reports no coalescing: {stats:?}"
    );
    h.shut_down(t)
}
