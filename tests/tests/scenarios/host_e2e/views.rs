//! Two Surfaces share nothing; child views, a crashed web process, a flooding page, two conversations (R-SEC-2, R-ENV-4, R-SES-1).

use super::*;

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

pub(super) fn no_sharing(h: &mut HostHarness) -> Outcome {
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
pub(super) fn child_views(h: &mut HostHarness, x: &X11) -> Outcome {
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
/// No standard components: every web process new since the baseline is killed, and the warm
/// component board's must not be among them (see `recovery.rs`'s `surfaces_only`).
pub(super) fn crash(h: &mut HostHarness) -> Outcome {
    let mut t = h.host(
        HostBuilder::new()
            .reopen_lost_surfaces(false)
            .builtin_components(None),
    )?;
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
pub(super) fn flood(h: &mut HostHarness) -> Outcome {
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
pub(super) fn two_conversations(h: &mut HostHarness) -> Outcome {
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
