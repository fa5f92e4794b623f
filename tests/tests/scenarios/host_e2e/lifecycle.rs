//! Open, state, a click, patch, replace and both kinds of close (R-UI-1, R-UI-3..R-UI-7).

use super::*;

use lineup_host::HostError;

pub(super) fn open_ready_state(h: &mut HostHarness) -> Outcome {
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

pub(super) fn weather_click(h: &mut HostHarness, x: &X11) -> Outcome {
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

pub(super) fn patch(h: &mut HostHarness) -> Outcome {
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

/// The old bundle, told to by its state, posts events in bursts until its webview goes (at most
/// 20,000), so that some of them are still on their way when the replacement is handled, however
/// late a loaded machine handles it; and one more a second later.
const OLD_GENERATION: &str = "
post('gen', { g: 'old' });
var n = 0;
LineUpSurface.onState(function (s) {
  if (!s.flood) { return; }
  (function burst() {
    for (var i = 0; i < 20; i += 1) { post('tick', { g: 'old', n: n }); n += 1; }
    if (n < 20000) { setTimeout(burst, 0); }
  })();
  setTimeout(function () { post('late', { g: 'old' }); }, 1000);
});
";

const NEW_GENERATION: &str = "
post('gen', { g: 'new' });
LineUpSurface.onState(function (s) { post('state', s); });
";

pub(super) fn replace(h: &mut HostHarness) -> Outcome {
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

pub(super) fn agent_close(h: &mut HostHarness, x: &X11) -> Outcome {
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
    let png = h.snapshot(&mut t, &key, Duration::from_secs(10))?;
    ensure!(
        png.as_ref().is_ok_and(|png| png.starts_with(b"\x89PNG")),
        "control: an open Surface's snapshot gave {png:?}"
    );
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
    // The embedding API names its own misuse: a read-back of a closed Surface is `NotOpen`,
    // not the platform's error.
    match h.snapshot(&mut t, &key, Duration::from_secs(10))? {
        Err(HostError::NotOpen { instance }) if instance == key.instance => {}
        other => return Err(format!("a closed Surface's snapshot gave {other:?}")),
    }
    h.shut_down(t)
}

pub(super) fn user_close(h: &mut HostHarness, x: &X11) -> Outcome {
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
