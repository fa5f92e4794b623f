//! The whole path in a real WebKitGTK webview under Xvfb: an agent's lineup.v1 envelope goes
//! through a [`Host`](lineup_host::Host) into an isolated webview, the page or the user
//! acts, the bridge posts, Rust validates, and the agent gets `ui.event` (or nothing). Every
//! scenario builds its own host on the one event loop of the process. Every negative security
//! check has a positive control: a message that does arrive, or the same bundle under a host
//! whose isolation was explicitly weakened.
#![allow(clippy::print_stdout, clippy::unwrap_used, missing_docs)]

use std::path::Path;
use std::rc::Rc;
use std::time::Duration;

use gtk::prelude::*;
use lineup_host::{HostBuilder, Refusal};
use lineup_host_core::{CloseReason, GoneReason};
use lineup_surface_runtime::DocumentOptions;
use lineup_tests::canary::Canary;
use lineup_tests::ensure;
use lineup_tests::home::{files_containing, private_home};
use lineup_tests::host_harness::{
    open_network, test_app, ui_events_in, weather_app, Agent, HostHarness, Note, Recorder,
    TestHost, BRIDGE_NAMESPACE,
};
use lineup_tests::procs::{kill, web_processes};
use lineup_tests::runner::Outcome;
use lineup_tests::x11::{xid_of, X11};
use serde_json::{json, Value};
use tao::dpi::LogicalSize;
use tao::window::WindowBuilder;

pub(crate) fn run() {
    let home = private_home("host_e2e");
    let mut h = HostHarness::start();
    let x = match X11::connect() {
        Ok(x) => x,
        Err(e) => {
            println!("no X display for the input scenarios: {e}");
            std::process::exit(1);
        }
    };
    h.run(
        "r_ui_3_open_ready_initial_state_reaches_on_state",
        open_ready_state,
    );
    h.run(
        "r_ui_6_r_ui_7_xtest_click_gives_exactly_the_weather_refresh_event",
        |h| weather_click(h, &x),
    );
    h.run("r_ui_3_r_ui_4_patch_replaces_the_whole_state", patch);
    h.run(
        "r_ui_1_r_ui_6_replace_sends_nothing_upstream_and_drops_the_old_pages_late_messages",
        replace,
    );
    h.run(
        "r_ui_5_agent_close_closes_the_view_and_sends_nothing",
        |h| agent_close(h, &x),
    );
    h.run(
        "r_ui_5_wm_delete_window_gives_exactly_one_close_event",
        |h| user_close(h, &x),
    );
    h.run(
        "r_ui_7_r_sec_4_bad_bridge_messages_dropped_and_a_valid_one_after_them_arrives",
        bad_messages,
    );
    h.run(
        "r_sec_4_r_sec_2a_srcdoc_subframe_post_is_its_own_surfaces_and_a_forged_instance_id_changes_nothing",
        subframe,
    );
    h.run(
        "r_sec_2_r_sec_3_csp_header_applied_on_the_load_and_origin_null",
        csp_applied,
    );
    h.run(
        "r_sec_3_loopback_fetch_rejected_and_unseen_unless_the_csp_is_removed",
        loopback_fetch,
    );
    h.run(
        "r_sec_2_r_ui_5_page_close_popup_download_permission_navigation_refused",
        |h| refusals(h, &x, &home),
    );
    h.run("r_sec_2_devtools_off_in_debug_profile", devtools);
    h.run(
        "r_sec_2_r_sec_4_two_surfaces_share_no_storage_or_channel",
        no_sharing,
    );
    h.run(
        "child_views_lay_out_two_surfaces_in_one_window_and_relayout_on_resize",
        |h| child_views(h, &x),
    );
    h.run(
        "r_sec_2_killed_web_process_reported_crashed_and_the_other_surface_keeps_working",
        crash,
    );
    h.run("r_env_4_a_flooding_page_cannot_starve_the_agent", flood);
    h.run(
        "r_ses_1_two_conversations_both_open_w1_and_each_sees_only_its_own_surface",
        two_conversations,
    );
    h.finish();
}

/// Reports every state the page receives as a `state` event.
const ECHO_STATE: &str = "LineUpSurface.onState(function (s) { post('state', s); });";

fn new_host(h: &mut HostHarness) -> Result<TestHost, String> {
    h.host(HostBuilder::new())
}

fn no_csp_host(h: &mut HostHarness) -> Result<TestHost, String> {
    h.host(HostBuilder::new().dangerous().without_csp())
}

/// The outbound messages noted after `mark`.
fn outbound_since(rec: &Recorder, mark: usize) -> Vec<Value> {
    rec.notes_since(mark)
        .into_iter()
        .filter_map(|n| match n {
            Note::Outbound(v) => Some(v),
            _ => None,
        })
        .collect()
}

fn open_ready_state(h: &mut HostHarness) -> Outcome {
    let mut t = new_host(h)?;
    let state = json!({ "city": "北京", "temperature": 22, "tags": ["晴", 1, null] });
    let key = h.open(
        &mut t,
        "s1",
        test_app("state", "<p>state</p>", ECHO_STATE),
        Some(state.clone()),
    )?;
    ensure!(
        h.wait(&mut t, |_, rec| !rec.data("s1", "state").is_empty()),
        "the initial state never reached onState: {:?}",
        t.rec.notes()
    );
    ensure!(
        t.rec.data("s1", "state") == vec![state.clone()],
        "onState got {:?}, not {state}",
        t.rec.data("s1", "state")
    );
    let notes = t.rec.notes();
    let opened = notes.iter().position(|n| *n == Note::Opened(key.clone()));
    let ready = notes.iter().position(|n| *n == Note::Ready(key.clone()));
    ensure!(
        matches!((opened, ready), (Some(o), Some(r)) if o < r),
        "expected opened, then ready: {notes:?}"
    );
    let sent = t.rec.sent();
    let envelope = sent
        .iter()
        .find(|m| m["type"] == "lineup.v1.ui.event")
        .cloned()
        .unwrap_or_default();
    ensure!(
        envelope["v"] == 1
            && envelope["conversation_id"] == "c1"
            && envelope["sender"]["kind"] == "client"
            && envelope["payload"]
                == json!({ "instance_id": "s1", "event": "state", "data": state }),
        "unexpected ui.event envelope: {envelope}"
    );

    // R-UI-3: an open without state starts from {}.
    h.open(
        &mut t,
        "s2",
        test_app("state", "<p>state</p>", ECHO_STATE),
        None,
    )?;
    ensure!(
        h.wait(&mut t, |_, rec| !rec.data("s2", "state").is_empty()),
        "the empty state never reached onState"
    );
    ensure!(
        t.rec.data("s2", "state") == vec![json!({})],
        "an open without state gave {:?}",
        t.rec.data("s2", "state")
    );
    h.shut_down(t)
}

fn weather_click(h: &mut HostHarness, x: &X11) -> Outcome {
    let mut t = new_host(h)?;
    let instance = "weather.dashboard.01";
    let open = t.agent.open(
        instance,
        weather_app(),
        Some(json!({ "city": "北京", "temperature": 22 })),
    );
    // The handle is Send: the envelope comes from another thread, as an agent connection would.
    let handle = t.handle.clone();
    std::thread::spawn(move || handle.send_inbound(open))
        .join()
        .map_err(|_| "the sending thread panicked".to_owned())?
        .map_err(|e| e.to_string())?;
    ensure!(
        h.wait(&mut t, |_, rec| rec
            .key(instance)
            .is_some_and(|k| rec.is_ready(&k))),
        "the weather Surface did not become ready: {:?}",
        t.rec.notes()
    );
    // Mapped, laid out and painted before any input goes to it.
    h.settle(&mut t, Duration::from_millis(400));
    let key = t.key(instance).ok_or("the weather Surface is not open")?;
    let xid = x
        .find_window_by_title("天气面板 — LineUp Surface")
        .ok_or("no window titled 天气面板")?;
    let own = xid_of(
        t.host
            .view(&key)
            .and_then(|v| v.window())
            .ok_or("the weather Surface has no window")?,
    )?;
    ensure!(
        xid == own,
        "the window titled 天气面板 ({xid:#x}) is not the Surface's ({own:#x})"
    );

    // A click beside the button is no user action.
    x.click_in(xid, 300, 250)?;
    h.settle(&mut t, Duration::from_millis(300));
    ensure!(
        t.rec.ui_events().is_empty(),
        "a click beside the button sent {:?}",
        t.rec.ui_events()
    );
    // body margin 8 + main padding 16: the button starts at (24, 24).
    x.click_in(xid, 34, 34)?;
    ensure!(
        h.wait(&mut t, |_, rec| !rec.ui_events().is_empty()),
        "the click on the button sent nothing: {:?}",
        t.rec.notes()
    );
    h.settle(&mut t, Duration::from_millis(300));
    ensure!(
        t.rec.ui_events()
            == vec![
                json!({ "instance_id": instance, "event": "refresh", "data": { "unit": "c" } })
            ],
        "expected exactly one refresh event, got {:?}",
        t.rec.ui_events()
    );
    h.shut_down(t)
}

fn patch(h: &mut HostHarness) -> Outcome {
    let mut t = new_host(h)?;
    h.open(
        &mut t,
        "p1",
        test_app("patch", "<p>patch</p>", ECHO_STATE),
        Some(json!({ "city": "北京", "temperature": 22 })),
    )?;
    ensure!(
        h.wait(&mut t, |_, rec| rec.data("p1", "state").len() == 1),
        "no initial state"
    );
    t.send(t.agent.patch("p1", json!({ "city": "上海" })))?;
    ensure!(
        h.wait(&mut t, |_, rec| rec.data("p1", "state").len() == 2),
        "the patched state never reached onState: {:?}",
        t.rec.notes()
    );
    ensure!(
        t.rec.data("p1", "state")[1] == json!({ "city": "上海" }),
        "the patch was not delivered whole and alone: {:?}",
        t.rec.data("p1", "state")
    );
    // R-UI-3: a patch whose state is not an object is refused with client.error; R-UI-4: so is a
    // patch that carries code. Neither reaches the page.
    let mark = t.rec.mark();
    t.send(t.agent.patch("p1", json!([1, 2])))?;
    t.send(t.agent.envelope(
        "lineup.v1.ui.patch",
        json!({ "instance_id": "p1", "state": { "a": 1 }, "js": "post('state', {injected: true})" }),
    ))?;
    let errors = |rec: &Recorder| -> Vec<Value> {
        outbound_since(rec, mark)
            .into_iter()
            .filter(|m| m["type"] == "lineup.v1.client.error")
            .map(|m| m["payload"].clone())
            .collect()
    };
    ensure!(
        h.wait(&mut t, |_, rec| errors(rec).len() == 2),
        "the refused patches did not both get client.error: {:?}",
        t.rec.notes_since(mark)
    );
    let replied: Vec<Value> = errors(&t.rec)
        .iter()
        .map(|e| e["in_reply_to"].clone())
        .collect();
    ensure!(
        replied.iter().all(Value::is_string) && replied[0] != replied[1],
        "each refusal must name its patch: {:?}",
        errors(&t.rec)
    );
    // Control: the next valid patch is delivered, and only the valid ones ever were.
    t.send(t.agent.patch("p1", json!({ "city": "广州", "n": 3 })))?;
    ensure!(
        h.wait(&mut t, |_, rec| rec.count("p1", "state") == 3),
        "the patch after the refused ones never arrived: {:?}",
        t.rec.data("p1", "state")
    );
    h.settle(&mut t, Duration::from_millis(200));
    let states = t.rec.data("p1", "state");
    ensure!(
        states
            == vec![
                json!({ "city": "北京", "temperature": 22 }),
                json!({ "city": "上海" }),
                json!({ "city": "广州", "n": 3 }),
            ],
        "onState got {states:?}"
    );
    h.shut_down(t)
}

/// The old bundle, told to by its state, posts 1000 events in bursts, so that some of them are
/// still on their way when the replacement is handled; and one more a second later.
const OLD_GENERATION: &str = "
post('gen', { g: 'old' });
var n = 0;
LineUpSurface.onState(function (s) {
  if (!s.flood) { return; }
  (function burst() {
    for (var i = 0; i < 20; i += 1) { post('tick', { g: 'old', n: n }); n += 1; }
    if (n < 1000) { setTimeout(burst, 0); }
  })();
  setTimeout(function () { post('late', { g: 'old' }); }, 1000);
});
";

const NEW_GENERATION: &str = "
post('gen', { g: 'new' });
LineUpSurface.onState(function (s) { post('state', s); });
";

fn replace(h: &mut HostHarness) -> Outcome {
    let mut t = new_host(h)?;
    let old = h.open(
        &mut t,
        "r1",
        test_app("old", "<p>old</p>", OLD_GENERATION),
        None,
    )?;
    t.send(t.agent.patch("r1", json!({ "flood": true })))?;
    let replacement = t.agent.open(
        "r1",
        test_app("new", "<p>new</p>", NEW_GENERATION),
        Some(json!({ "generation": 2 })),
    );
    let mark = t.rec.mark();
    // The replacement goes in from inside the loop while the old page is mid-flood.
    let handle = t.handle.clone();
    let mut replacement = Some(replacement);
    let arrived = h.wait(&mut t, |_, rec| {
        if replacement.is_some() && rec.count("r1", "tick") >= 50 {
            if let Some(envelope) = replacement.take() {
                let _ = handle.send_inbound(envelope);
            }
        }
        rec.data("r1", "gen").contains(&json!({ "g": "new" }))
            && rec.data("r1", "state") == vec![json!({ "generation": 2 })]
    });
    ensure!(
        replacement.is_none(),
        "control: the old page's messages did not arrive: {} ticks",
        t.rec.count("r1", "tick")
    );
    ensure!(
        arrived,
        "the new page's events did not arrive: gen {:?}, state {:?}",
        t.rec.data("r1", "gen"),
        t.rec.data("r1", "state")
    );
    // The old page's timer would have fired by now, had its webview survived.
    h.settle(&mut t, Duration::from_millis(1200));
    let new = t.key("r1").ok_or("the replacement is not open")?;
    ensure!(
        new.generation > old.generation,
        "the replacement kept the old generation"
    );
    ensure!(
        t.rec.closed(&old) == vec![CloseReason::Replaced],
        "the embedder was not told the old key closed as replaced: {:?}",
        t.rec.closed(&old)
    );
    // While it was current, the bursting old page may also overrun the waiting-message cap
    // (R-ENV-4 drops); only the drops after the replace are stale ones.
    let dropped: Vec<_> = t
        .rec
        .dropped(&old)
        .into_iter()
        .filter(|e| e.rule != "R-ENV-4")
        .collect();
    let stale = t.host.stats().bridge_stale;
    ensure!(
        !dropped.is_empty()
            && dropped.iter().all(|e| e.rule == "R-UI-6")
            && u64::try_from(dropped.len()).is_ok_and(|n| n == stale),
        "no late message of the old page was dropped as stale (R-UI-6): {} dropped, bridge_stale {stale}",
        dropped.len()
    );
    let notes = t.rec.notes_since(mark);
    let opened = notes
        .iter()
        .position(|n| *n == Note::Opened(new.clone()))
        .ok_or("the replacement was never reported opened")?;
    let after = ui_events_in(&outbound_since(&t.rec, mark + opened));
    let old_after: Vec<&Value> = after.iter().filter(|p| p["data"]["g"] == "old").collect();
    ensure!(
        old_after.is_empty(),
        "{} messages of the old page went upstream after the replace, first {:?}",
        old_after.len(),
        old_after.first()
    );
    let others: Vec<Value> = outbound_since(&t.rec, mark)
        .into_iter()
        .filter(|m| m["type"] != "lineup.v1.ui.event")
        .collect();
    ensure!(
        others.is_empty() && t.rec.events_named("close").is_empty(),
        "the replace sent something upstream: {others:?}"
    );
    ensure!(
        t.rec.data("r1", "late").is_empty(),
        "the old page's late message was forwarded"
    );
    ensure!(
        t.rec.dropped(&new).is_empty(),
        "a message of the new page was dropped: {:?}",
        t.rec.dropped(&new)
    );
    h.shut_down(t)
}

fn agent_close(h: &mut HostHarness, x: &X11) -> Outcome {
    let mut t = new_host(h)?;
    let js = "setInterval(function () { post('tick', {}); }, 5);";
    let key = h.open(&mut t, "a1", test_app("closing", "<p>a</p>", js), None)?;
    ensure!(
        h.wait(&mut t, |_, rec| rec.data("a1", "tick").len() >= 3),
        "control: the page's ticks do not arrive"
    );
    let xid = xid_of(
        t.host
            .view(&key)
            .and_then(|v| v.window())
            .ok_or("no window")?,
    )?;
    ensure!(x.window_exists(xid), "control: the window is not there");
    let mark = t.rec.mark();
    t.send(t.agent.close("a1", "completed"))?;
    ensure!(
        h.wait(&mut t, |_, rec| !rec.closed(&key).is_empty()),
        "no notify_closed: {:?}",
        t.rec.notes_since(mark)
    );
    h.settle(&mut t, Duration::from_millis(300));
    ensure!(
        t.rec.closed(&key) == vec![CloseReason::Agent(Some("completed".to_owned()))],
        "closed as {:?}",
        t.rec.closed(&key)
    );
    ensure!(t.host.view(&key).is_none(), "the view is still open");
    ensure!(
        h.wait(&mut t, |_, _| !x.window_exists(xid)),
        "the window is still there"
    );
    // Ticks sent before the close was handled went upstream legitimately; nothing after it.
    let closed_at = t
        .rec
        .notes()
        .iter()
        .position(|n| matches!(n, Note::Closed(k, _) if *k == key))
        .ok_or("no notify_closed")?;
    let sent = outbound_since(&t.rec, closed_at);
    ensure!(
        sent.is_empty(),
        "the agent's close sent something upstream: {sent:?}"
    );
    ensure!(
        t.rec.events_named("close").is_empty(),
        "the agent's close sent a close event"
    );
    h.shut_down(t)
}

fn user_close(h: &mut HostHarness, x: &X11) -> Outcome {
    let mut t = new_host(h)?;
    let key = h.open(
        &mut t,
        "u1",
        test_app("userclose", "<p>close me</p>", ECHO_STATE),
        None,
    )?;
    h.settle(&mut t, Duration::from_millis(200));
    let xid = x
        .find_window_by_title("userclose — LineUp Surface")
        .ok_or("no window titled userclose")?;
    ensure!(x.is_viewable(xid), "control: the window is not shown");
    // Two close requests in a row, as an impatient user gives: still one close event.
    x.request_close(xid)?;
    x.request_close(xid)?;
    ensure!(
        h.wait(&mut t, |_, rec| !rec.closed(&key).is_empty()),
        "WM_DELETE_WINDOW closed nothing: {:?}",
        t.rec.notes()
    );
    h.settle(&mut t, Duration::from_millis(400));
    ensure!(
        t.rec.events_named("close")
            == vec![json!({ "instance_id": "u1", "event": "close", "data": {} })],
        "expected exactly one close event: {:?}",
        t.rec.ui_events()
    );
    ensure!(
        t.rec.closed(&key) == vec![CloseReason::User],
        "closed as {:?}",
        t.rec.closed(&key)
    );
    ensure!(t.host.view(&key).is_none(), "the view is still open");
    ensure!(
        h.wait(&mut t, |_, _| !x.window_exists(xid)),
        "the window is still there"
    );
    h.shut_down(t)
}

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

fn bad_messages(h: &mut HostHarness) -> Outcome {
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

fn subframe(h: &mut HostHarness) -> Outcome {
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

fn csp_applied(h: &mut HostHarness) -> Outcome {
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

fn loopback_fetch(h: &mut HostHarness) -> Outcome {
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

fn refusals(h: &mut HostHarness, x: &X11, home: &Path) -> Outcome {
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

fn devtools(h: &mut HostHarness) -> Outcome {
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

/// Probes what could carry data between two Surfaces, each with its own control: localStorage
/// and IndexedDB (what was there before the page wrote, and its own write read back) and a
/// BroadcastChannel (a second channel object in the same document must hear the page's post).
fn sharing_js(me: &str) -> String {
    format!(
        r#"
var me = '{me}';
try {{
  var before = localStorage.getItem('lineup-marker');
  localStorage.setItem('lineup-marker', me);
  post('local', {{ before: before, own: localStorage.getItem('lineup-marker') }});
}} catch (e) {{ post('local', {{ error: String(e.name) }}); }}
try {{
  var req = indexedDB.open('lineup-shared', 1);
  req.onupgradeneeded = function () {{ req.result.createObjectStore('kv'); }};
  req.onerror = function () {{ post('idb', {{ error: String(req.error && req.error.name) }}); }};
  req.onsuccess = function () {{
    var db = req.result;
    var read = db.transaction('kv').objectStore('kv').get('marker');
    read.onsuccess = function () {{
      var before = read.result === undefined ? null : read.result;
      var tx = db.transaction('kv', 'readwrite');
      tx.objectStore('kv').put(me, 'marker');
      tx.oncomplete = function () {{
        var again = db.transaction('kv').objectStore('kv').get('marker');
        again.onsuccess = function () {{ post('idb', {{ before: before, own: again.result }}); }};
      }};
    }};
  }};
}} catch (e) {{ post('idb', {{ error: String(e.name) }}); }}
var bc = new BroadcastChannel('lineup-shared');
var mine = new BroadcastChannel('lineup-shared');
var heard = [];
var selfHeard = false;
bc.onmessage = function (e) {{ heard.push(String(e.data)); }};
mine.onmessage = function (e) {{ if (e.data === 'self-' + me) {{ selfHeard = true; }} }};
LineUpSurface.onState(function (s) {{
  if (s.write) {{
    bc.postMessage('self-' + me);
    bc.postMessage('hello-from-' + me);
  }}
  if (s.report) {{ post('heard', {{ heard: heard, self: selfHeard }}); }}
}});
"#
    )
}

/// Opens `one`, then `two`, each running [`sharing_js`], and checks their storage reports with
/// `storage(who)`, then that neither hears the other on a BroadcastChannel while each hears its
/// own post.
fn sharing_round(h: &mut HostHarness, mut t: TestHost, storage: impl Fn(&str) -> Value) -> Outcome {
    for who in ["one", "two"] {
        h.open(
            &mut t,
            who,
            test_app(who, "<p>probe</p>", &sharing_js(who)),
            None,
        )?;
        ensure!(
            h.wait(&mut t, |_, rec| rec.count(who, "local") == 1
                && rec.count(who, "idb") == 1),
            "{who} did not report its storage: {:?}",
            t.rec.ui_events()
        );
        for kind in ["local", "idb"] {
            let got = t.rec.data(who, kind)[0].clone();
            ensure!(got == storage(who), "{who} {kind}: {got}");
        }
    }
    t.send(t.agent.patch("one", json!({ "write": true })))?;
    t.send(t.agent.patch("two", json!({ "write": true })))?;
    h.settle(&mut t, Duration::from_millis(300));
    t.send(t.agent.patch("one", json!({ "report": true })))?;
    t.send(t.agent.patch("two", json!({ "report": true })))?;
    ensure!(
        h.wait(&mut t, |_, rec| rec.count("one", "heard") == 1
            && rec.count("two", "heard") == 1),
        "no channel reports"
    );
    for (who, other) in [("one", "two"), ("two", "one")] {
        let heard = t.rec.data(who, "heard")[0].clone();
        ensure!(
            heard["self"] == true,
            "control: {who} did not hear its own channel message: {heard}"
        );
        ensure!(
            heard["heard"] == json!([]),
            "{who} heard {other} on a BroadcastChannel: {heard}"
        );
    }
    h.shut_down(t)
}

fn no_sharing(h: &mut HostHarness) -> Outcome {
    // Under the CSP sandbox an opaque origin has no storage at all.
    let t = new_host(h)?;
    sharing_round(h, t, |_| json!({ "error": "SecurityError" }))?;
    // Positive control for the storage probes: without the CSP each page has storage, reads
    // back its own write, and the second page finds nothing of the first's.
    let c = no_csp_host(h)?;
    sharing_round(h, c, |who| json!({ "before": null, "own": who }))
}

const SIZE_JS: &str = "
function size() { post('size', { w: innerWidth, h: innerHeight }); }
size();
addEventListener('resize', size);
";

fn last_size(rec: &Recorder, instance: &str) -> Option<Value> {
    rec.data(instance, "size").into_iter().last()
}

/// Two child views share the parent in columns and follow its resize; `Host::set_surface_visible`
/// hides one (the other takes the window, which keeps its size) and shows it again, telling the
/// agent nothing; closing the parent closes both, one `close` each.
fn child_views(h: &mut HostHarness, x: &X11) -> Outcome {
    let parent = Rc::new(
        WindowBuilder::new()
            .with_title("lineup embedder")
            .with_inner_size(LogicalSize::new(600, 320))
            .build(&h.event_loop)
            .map_err(|e| e.to_string())?,
    );
    let mut t = h.host(HostBuilder::new().child_views_in(Rc::clone(&parent)))?;
    let left = h.open(&mut t, "left", test_app("left", "<p>l</p>", SIZE_JS), None)?;
    let right = h.open(
        &mut t,
        "right",
        test_app("right", "<p>r</p>", SIZE_JS),
        None,
    )?;
    let halves = |w: u64, h: u64| {
        move |_: &lineup_host::Host, rec: &Recorder| {
            last_size(rec, "left") == Some(json!({ "w": w, "h": h }))
                && last_size(rec, "right") == Some(json!({ "w": w, "h": h }))
        }
    };
    ensure!(
        h.wait(&mut t, halves(300, 320)),
        "not two columns of 300 x 320: left {:?} right {:?}",
        t.rec.data("left", "size"),
        t.rec.data("right", "size")
    );
    ensure!(
        t.host.view(&left).is_some_and(|v| v.window().is_none())
            && t.host.view(&right).is_some_and(|v| v.window().is_none()),
        "a child view has a window of its own"
    );
    parent.set_inner_size(LogicalSize::new(800, 400));
    ensure!(
        h.wait(&mut t, halves(400, 400)),
        "no re-layout after the parent grew to 800 x 400: left {:?} right {:?}",
        t.rec.data("left", "size"),
        t.rec.data("right", "size")
    );
    // Switching away: `left` is hidden, `right` takes the whole window, which keeps its size;
    // shown again, the two share it as before. The agent hears nothing of it.
    let sent = t.rec.sent_count();
    ensure!(t.host.set_surface_visible(&left, false), "left is not open");
    let right_alone = |_: &lineup_host::Host, rec: &Recorder| {
        last_size(rec, "right") == Some(json!({ "w": 800, "h": 400 }))
    };
    ensure!(
        h.wait(&mut t, right_alone),
        "right did not take the window with left hidden: {:?}",
        t.rec.data("right", "size")
    );
    let size = parent.inner_size().to_logical::<f64>(parent.scale_factor());
    ensure!(
        (size.width.round(), size.height.round()) == (800.0, 400.0),
        "the window changed size: {size:?}"
    );
    ensure!(t.host.set_surface_visible(&left, true), "left is gone");
    ensure!(
        h.wait(&mut t, halves(400, 400)),
        "left did not come back: left {:?} right {:?}",
        t.rec.data("left", "size"),
        t.rec.data("right", "size")
    );
    // Only the pages' own `size` events went upstream: no close, no lifecycle event.
    let other: Vec<Value> = t.rec.sent()[sent..]
        .iter()
        .filter(|m| !(m["type"] == "lineup.v1.ui.event" && m["payload"]["event"] == "size"))
        .cloned()
        .collect();
    ensure!(
        other.is_empty(),
        "hiding or showing a Surface sent {other:?}"
    );
    // The user closes the window that holds both: each Surface sends one close.
    x.request_close(xid_of(&parent)?)?;
    ensure!(
        h.wait(&mut t, |_, rec| rec.events_named("close").len() == 2),
        "closing the parent did not close both Surfaces: {:?}",
        t.rec.ui_events()
    );
    h.settle(&mut t, Duration::from_millis(200));
    let closes: Vec<Value> = t
        .rec
        .events_named("close")
        .iter()
        .map(|p| p["instance_id"].clone())
        .collect();
    ensure!(
        closes == vec![json!("left"), json!("right")] && t.host.surfaces().is_empty(),
        "expected one close each: {closes:?}"
    );
    let result = h.shut_down(t);
    drop(parent);
    result
}

/// With recovery off (`reopen_lost_surfaces(false)`), a killed web process closes its Surface
/// at once and the agent is told `crashed`; recovery itself is `tests/recovery.rs`'s (R-UI-12).
fn crash(h: &mut HostHarness) -> Outcome {
    let mut t = h.host(HostBuilder::new().reopen_lost_surfaces(false))?;
    let survivor = h.open(
        &mut t,
        "survivor",
        test_app("survivor", "<p>s</p>", ECHO_STATE),
        None,
    )?;
    let before = web_processes();
    let victim = h.open(
        &mut t,
        "victim",
        test_app("victim", "<p>v</p>", ECHO_STATE),
        None,
    )?;
    let pids: Vec<u32> = web_processes().difference(&before).copied().collect();
    ensure!(!pids.is_empty(), "no web process found for the victim");
    for pid in &pids {
        kill(*pid)?;
    }
    let closed = h.wait(&mut t, |_, rec| !rec.closed(&victim).is_empty());
    ensure!(
        closed,
        "killing {pids:?} was not reported: {:?}",
        t.rec.notes()
    );
    let notes = t.rec.notes();
    let crashed = notes
        .iter()
        .position(|n| *n == Note::Crashed(victim.clone()));
    let closed = notes
        .iter()
        .position(|n| *n == Note::Closed(victim.clone(), CloseReason::Gone(GoneReason::Crashed)));
    ensure!(
        matches!((crashed, closed), (Some(a), Some(b)) if a < b),
        "expected notify_crashed, then notify_closed(Gone(Crashed)): {notes:?}"
    );
    // R-UI-12: the agent is told, never silently.
    let closes: Vec<Value> = ui_events_in(&outbound_since(&t.rec, 0))
        .into_iter()
        .filter(|e| e["event"] == "close")
        .collect();
    ensure!(
        closes.len() == 1
            && closes[0]["instance_id"] == victim.instance.as_str()
            && closes[0]["data"] == json!({"reason": "crashed"}),
        "expected one close with reason crashed upstream: {closes:?}"
    );
    ensure!(
        t.host.view(&victim).is_none(),
        "the crashed view is still open"
    );
    ensure!(
        t.rec.crashed(&survivor) == 0 && t.rec.closed(&survivor).is_empty(),
        "the other Surface was reported crashed or closed"
    );
    t.send(t.agent.patch("survivor", json!({ "alive": true })))?;
    ensure!(
        h.wait(&mut t, |_, rec| rec
            .data("survivor", "state")
            .contains(&json!({ "alive": true }))),
        "the other Surface stopped working: {:?}",
        t.rec.data("survivor", "state")
    );
    h.shut_down(t)
}

/// A page that posts as fast as it can is cut off at `max_pending_bridge_messages`: the agent's
/// patch to another Surface and its close of the flooding one still take effect, and the drops
/// are counted (the count is the control that the flood really overran the limit).
fn flood(h: &mut HostHarness) -> Outcome {
    let mut t = new_host(h)?;
    h.open(
        &mut t,
        "quiet",
        test_app("quiet", "<p>q</p>", ECHO_STATE),
        None,
    )?;
    let js = "setInterval(function () { for (var i = 0; i < 500; i += 1) { post('spam', { i: i }); } }, 1);";
    let loud = h.open(&mut t, "loud", test_app("loud", "<p>l</p>", js), None)?;
    let flooded = h.wait(&mut t, |host, _| host.stats().bridge_flooded > 0);
    ensure!(
        flooded,
        "control: the page never overran the limit; stats {:?}",
        t.host.stats()
    );
    t.send(t.agent.patch("quiet", json!({ "ping": 1 })))?;
    let patched = h.wait(&mut t, |_, rec| {
        rec.data("quiet", "state").iter().any(|d| d["ping"] == 1)
    });
    ensure!(
        patched,
        "the patch to the quiet surface never arrived during the flood"
    );
    t.send(t.agent.close("loud", "enough"))?;
    let closed = h.wait(&mut t, |_, rec| !rec.closed(&loud).is_empty());
    ensure!(
        closed,
        "the agent's close of the flooding surface never took effect"
    );
    ensure!(
        t.rec
            .dropped(&loud)
            .iter()
            .any(|e| e.rule == "R-ENV-4" && e.limit == Some(256)),
        "the drops were not reported with their limit"
    );
    h.shut_down(t)
}

/// Every `ui.event` sent so far: (conversation, instance, event, data).
fn events_by_conversation(rec: &Recorder) -> Vec<(String, String, String, Value)> {
    rec.sent()
        .into_iter()
        .filter(|m| m["type"] == "lineup.v1.ui.event")
        .map(|m| {
            let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
            (
                text(&m["conversation_id"]),
                text(&m["payload"]["instance_id"]),
                text(&m["payload"]["event"]),
                m["payload"]["data"].clone(),
            )
        })
        .collect()
}

/// R-SES-1: one host, two conversations, both open `w1`: two webviews with keys of their own
/// sessions; each page gets its own conversation's state, each event goes to its own
/// conversation only, a patch reaches only its conversation's page, and closing one leaves the
/// other open.
fn two_conversations(h: &mut HostHarness) -> Outcome {
    let mut t = new_host(h)?;
    let (a, b) = (Agent::new("conv_a"), Agent::new("conv_b"));
    let app = test_app("hello", "<main>hello</main>", ECHO_STATE);
    t.send(a.open("w1", app.clone(), Some(json!({ "who": "a" }))))?;
    t.send(b.open("w1", app, Some(json!({ "who": "b" }))))?;
    let both = h.wait(&mut t, |_, rec| {
        let events = events_by_conversation(rec);
        ["a", "b"].iter().all(|who| {
            events.iter().any(|(c, i, e, d)| {
                *c == format!("conv_{who}") && i == "w1" && e == "state" && d["who"] == *who
            })
        })
    });
    ensure!(both, "both pages reported their state: {:?}", t.rec.sent());
    let keys = t.host.surfaces();
    ensure!(keys.len() == 2, "two webviews: {keys:?}");
    ensure!(
        keys.iter().all(|k| k.instance.as_str() == "w1") && keys[0].session != keys[1].session,
        "one w1 per session: {keys:?}"
    );
    ensure!(t.host.sessions().len() == 2, "{:?}", t.host.sessions());

    // A patch of conv_a reaches conv_a's page only.
    t.send(a.patch("w1", json!({ "who": "a", "n": 2 })))?;
    let patched = h.wait(&mut t, |_, rec| {
        events_by_conversation(rec)
            .iter()
            .any(|(c, _, _, d)| c == "conv_a" && d["n"] == 2)
    });
    ensure!(patched, "conv_a's page got its patch: {:?}", t.rec.sent());
    h.settle(&mut t, Duration::from_millis(300));
    for (conversation, instance, event, data) in events_by_conversation(&t.rec) {
        let who = data["who"].as_str().unwrap_or_default();
        ensure!(
            conversation == format!("conv_{who}"),
            "{conversation} got {event} of {instance} with {data}"
        );
    }
    let of_b = events_by_conversation(&t.rec)
        .into_iter()
        .filter(|(c, ..)| c == "conv_b")
        .count();
    ensure!(
        of_b == 1,
        "conv_b heard only its own page's first state: {of_b}"
    );

    // Closing conv_a's w1 leaves conv_b's open.
    let mark = t.rec.mark();
    t.send(a.close("w1", "done"))?;
    let closed = h.wait(&mut t, |host, _| host.surfaces().len() == 1);
    ensure!(closed, "conv_a's w1 closed: {:?}", t.rec.notes_since(mark));
    let left = t.host.surfaces();
    let conv_b = lineup_host_core::ConversationId::try_from("conv_b").unwrap();
    ensure!(
        t.host.sessions().id_of(&conv_b) == left.first().map(|k| k.session),
        "conv_b's w1 is the one left: {left:?}"
    );
    h.shut_down(t)
}
