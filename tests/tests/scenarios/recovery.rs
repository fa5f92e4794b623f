//! Recovery of lost Surfaces in real WebKitGTK webviews under Xvfb (R-UI-12): a Surface whose
//! web process is killed, or whose page spins so that the hang watchdog terminates its web
//! process, comes back in place with its last state and nothing sent upstream, up to three
//! times per minute; the next loss closes it and the agent gets `close` with the reason. Two
//! Surfaces are open in every scenario: the other one answering patches throughout is the proof
//! that the host's loop and the other web process never stalled.
#![allow(clippy::print_stdout, clippy::unwrap_used, missing_docs)]

use std::collections::HashSet;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use lineup_host::HostBuilder;
use lineup_host_core::{CloseReason, GoneReason, SurfaceKey};
use lineup_tests::ensure;
use lineup_tests::home::private_home;
use lineup_tests::host_harness::{test_app, HostHarness, Note, TestHost};
use lineup_tests::procs::{kill, web_processes};
use lineup_tests::runner::Outcome;
use serde_json::{json, Value};
use tao::dpi::{LogicalPosition, LogicalSize};
use tao::window::WindowBuilder;

pub(crate) fn run() {
    let _home = private_home("recovery");
    let mut h = HostHarness::start();
    h.run(
        "r_ui_12_a_sigkilled_surface_comes_back_in_place_with_its_last_state_and_nothing_upstream",
        sigkill,
    );
    h.run(
        "r_ui_12_a_spinning_page_is_terminated_within_the_hang_deadline_and_reopened_while_the_other_answers",
        spin,
    );
    h.run(
        "r_ui_12_a_fourth_crash_within_the_window_closes_the_surface_with_crashed_upstream_and_tells_the_delegate",
        repeated_crashes,
    );
    h.run(
        "r_ui_12_a_page_that_never_says_ready_is_terminated_at_the_first_ready_deadline_and_closed_unresponsive",
        never_ready,
    );
    h.run(
        "r_ui_12_a_reopened_child_view_is_laid_out_again_with_the_height_its_page_asked_for",
        child_view,
    );
    h.finish();
}

/// Reports every state it receives, with an id of its document, so a reopened page is told
/// apart from its predecessor. `busy_ms` keeps the page busy that long (less than the hang
/// deadline: not a hang); `spin_until` (wall-clock milliseconds) makes a page that receives it
/// before then spin forever, so the state survives a reopen without spinning again.
const PAGE: &str = r#"
    var doc = Math.random().toString(36).slice(2);
    LineUpSurface.onState(function (s) {
      post('state', { doc: doc, state: s });
      if (typeof s.busy_ms === 'number') {
        var end = Date.now() + s.busy_ms;
        while (Date.now() < end) {}
        post('busy_done', { doc: doc });
      }
      if (typeof s.spin_until === 'number' && Date.now() < s.spin_until) {
        post('spinning', { doc: doc });
        setTimeout(function () { for (;;) {} }, 0);
      }
    });
"#;

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// The `(doc, state)` pairs `instance`'s pages reported, in order.
fn states(t: &TestHost, instance: &str) -> Vec<(String, Value)> {
    t.rec
        .data(instance, "state")
        .into_iter()
        .map(|d| {
            (
                d["doc"].as_str().unwrap_or("").to_owned(),
                d["state"].clone(),
            )
        })
        .collect()
}

/// The documents of `instance` that reported a state so far.
fn docs(t: &TestHost, instance: &str) -> HashSet<String> {
    states(t, instance)
        .into_iter()
        .map(|(doc, _)| doc)
        .collect()
}

/// Waits until a page of `instance` whose document is not among `old_docs` reports `state`;
/// returns that document's id.
fn wait_state_from_new_doc(
    h: &mut HostHarness,
    t: &mut TestHost,
    instance: &str,
    state: &Value,
    old_docs: &HashSet<String>,
) -> Result<String, String> {
    let found = |t: &TestHost| {
        states(t, instance)
            .into_iter()
            .rev()
            .find(|(doc, s)| s == state && !old_docs.contains(doc))
            .map(|(doc, _)| doc)
    };
    h.wait(t, |_, rec| {
        rec.data(instance, "state")
            .iter()
            .any(|d| d["state"] == *state && !old_docs.contains(d["doc"].as_str().unwrap_or("")))
    });
    found(t).ok_or_else(|| {
        format!(
            "no new page of {instance} reported {state}: {:?}",
            states(t, instance)
        )
    })
}

/// Patches `instance` with `state` and waits until one of its pages reports it; returns that
/// page's document id.
fn patch_seen(
    h: &mut HostHarness,
    t: &mut TestHost,
    instance: &str,
    state: Value,
) -> Result<String, String> {
    let before = docs_reporting(t, instance, &state);
    t.send(t.agent.patch(instance, state.clone()))?;
    wait_state_from_new_doc(h, t, instance, &state, &before)
}

/// The documents of `instance` that already reported `state`.
fn docs_reporting(t: &TestHost, instance: &str, state: &Value) -> HashSet<String> {
    states(t, instance)
        .into_iter()
        .filter(|(_, s)| s == state)
        .map(|(doc, _)| doc)
        .collect()
}

/// The web processes started since `baseline` (the Surfaces opened after it).
/// A host that renders no standard components: the scenarios that kill every web process started
/// after a baseline must not catch the warm component board's, which the host starts at an idle
/// turn (killing a web process before it has told WebKit its pid aborts the whole UI process).
fn surfaces_only() -> HostBuilder {
    HostBuilder::new().builtin_components(None)
}

fn new_web_processes(baseline: &HashSet<u32>) -> Vec<u32> {
    web_processes().difference(baseline).copied().collect()
}

/// SIGKILLs each of `pids`; a pid already gone is no error, but one must have been killed.
fn kill_each(pids: &[u32]) -> Outcome {
    let killed = pids.iter().filter(|pid| kill(**pid).is_ok()).count();
    ensure!(killed > 0, "none of {pids:?} could be killed");
    Ok(())
}

/// Waits until `old` was closed as reopened for `reason` and its next generation is ready;
/// returns the new key.
fn wait_reopened(
    h: &mut HostHarness,
    t: &mut TestHost,
    old: &SurfaceKey,
    reason: GoneReason,
    within: Duration,
) -> Result<SurfaceKey, String> {
    let instance = old.instance.as_str().to_owned();
    let back = h.wait_until(t, Instant::now() + within, |_, rec| {
        rec.closed(old) == vec![CloseReason::Reopened(reason)]
            && rec
                .generations(&instance)
                .last()
                .is_some_and(|k| k.generation > old.generation && rec.is_ready(k))
    });
    ensure!(
        back,
        "{old} did not come back after {reason}: {:?}",
        t.rec
            .notes()
            .iter()
            .filter(|n| !matches!(n, Note::Outbound(_)))
            .collect::<Vec<_>>()
    );
    let new = t
        .rec
        .generations(&instance)
        .last()
        .cloned()
        .ok_or("no new key")?;
    ensure!(
        t.key(&instance) == Some(new.clone()) && t.host.view(old).is_none(),
        "the host does not show {new} in place of {old}: {:?}",
        t.host.surfaces()
    );
    Ok(new)
}

/// Nothing went upstream about `instance` among the outbound messages after `mark` except what
/// its pages posted themselves: no `close`, no `client.error`.
fn nothing_upstream(t: &TestHost, instance: &str, mark: usize) -> Outcome {
    let page_events = ["state", "busy_done", "spinning"];
    for message in t.rec.sent().iter().skip(mark) {
        let payload = &message["payload"];
        let about = payload["instance_id"] == instance;
        let page_event = message["type"] == "lineup.v1.ui.event"
            && page_events.contains(&payload["event"].as_str().unwrap_or(""));
        ensure!(
            !about || page_event,
            "the agent was told about {instance}: {message}"
        );
        ensure!(
            message["type"] != "lineup.v1.client.error",
            "the agent got an error: {message}"
        );
    }
    Ok(())
}

/// The other Surface answers a patch: the loop runs and its web process is untouched.
fn other_answers(h: &mut HostHarness, t: &mut TestHost, n: u64) -> Outcome {
    patch_seen(h, t, "other", json!({ "n": n })).map(|_| ())
}

fn open_other(h: &mut HostHarness, t: &mut TestHost) -> Result<SurfaceKey, String> {
    h.open(
        t,
        "other",
        test_app("other", "<p>other</p>", PAGE),
        Some(json!({ "n": 0 })),
    )
}

fn other_untouched(t: &TestHost, other: &SurfaceKey) -> Outcome {
    ensure!(
        t.key("other") == Some(other.clone())
            && t.rec.closed(other).is_empty()
            && t.rec.crashed(other) == 0
            && t.rec.unresponsive(other) == 0,
        "the other Surface was touched: {:?}",
        t.rec.notes()
    );
    Ok(())
}

/// The window of `key`: its outer position and inner size, in logical pixels.
fn window_place(t: &TestHost, key: &SurfaceKey) -> Result<(i32, i32, u32, u32), String> {
    let window = t
        .host
        .view(key)
        .and_then(|v| v.window())
        .ok_or_else(|| format!("{key} has no window"))?;
    let scale = window.scale_factor();
    let position = window
        .outer_position()
        .map_err(|e| e.to_string())?
        .to_logical::<f64>(scale);
    let size = window.inner_size().to_logical::<f64>(scale);
    Ok((
        position.x.round() as i32,
        position.y.round() as i32,
        size.width.round() as u32,
        size.height.round() as u32,
    ))
}

/// SIGKILL of a Surface's web process: it is reopened under a new generation in a new web
/// process, in the same window place, and its new page gets the last state; the agent hears
/// nothing; the other Surface answers a patch meanwhile and is untouched.
fn sigkill(h: &mut HostHarness) -> Outcome {
    let mut t = h.host(surfaces_only())?;
    let other = open_other(h, &mut t)?;
    let baseline = web_processes();
    let victim = h.open(
        &mut t,
        "victim",
        test_app("victim", "<p>victim</p>", PAGE),
        Some(json!({ "n": 1 })),
    )?;
    let first_doc = patch_seen(h, &mut t, "victim", json!({ "n": 2 }))?;
    // A place of its own, to come back to.
    {
        let window = t
            .host
            .view(&victim)
            .and_then(|v| v.window())
            .ok_or("the victim has no window")?;
        window.set_outer_position(LogicalPosition::new(160, 120));
        window.set_inner_size(LogicalSize::new(420.0, 300.0));
    }
    h.settle(&mut t, Duration::from_millis(300));
    let place = window_place(&t, &victim)?;
    ensure!(
        place == (160, 120, 420, 300),
        "the victim's window did not move: {place:?}"
    );
    let pids = new_web_processes(&baseline);
    ensure!(!pids.is_empty(), "no web process found for the victim");
    let mark = t.rec.sent_count();
    kill_each(&pids)?;
    // The other Surface answers while the victim is down and coming back.
    other_answers(h, &mut t, 1)?;
    let new = wait_reopened(
        h,
        &mut t,
        &victim,
        GoneReason::Crashed,
        Duration::from_secs(15),
    )?;
    ensure!(
        t.rec.crashed(&victim) == 1,
        "notify_crashed: {:?}",
        t.rec.notes()
    );
    // Its last state reaches its new page, in a new web process.
    let old_docs = docs(&t, "victim");
    wait_state_from_new_doc(h, &mut t, "victim", &json!({ "n": 2 }), &old_docs)?;
    let now_running: HashSet<u32> = new_web_processes(&baseline).into_iter().collect();
    ensure!(
        !now_running.is_empty() && pids.iter().all(|p| !now_running.contains(p)),
        "expected a new web process for the victim: killed {pids:?}, now {now_running:?}"
    );
    h.settle(&mut t, Duration::from_millis(300));
    let new_place = window_place(&t, &new)?;
    ensure!(
        new_place == place,
        "the reopened window is at {new_place:?}, the old one was at {place:?}"
    );
    // Still the agent's Surface: a patch reaches the new page.
    let doc = patch_seen(h, &mut t, "victim", json!({ "n": 3 }))?;
    ensure!(doc != first_doc, "the patch was answered by the old page");
    // Positive control of the silence: the victim's page events did go upstream.
    ensure!(
        t.rec
            .sent()
            .iter()
            .skip(mark)
            .any(|m| m["payload"]["instance_id"] == "victim"),
        "nothing at all came from the victim after the kill"
    );
    nothing_upstream(&t, "victim", mark)?;
    other_untouched(&t, &other)?;
    ensure!(
        t.host.stats().reopened == 1,
        "reopened: {}",
        t.host.stats().reopened
    );
    h.shut_down(t)
}

/// `for (;;) {}` after `ready`: the watchdog (deadline 2 s) finds the page without a sign of
/// life, terminates its web process within the deadline and a little, and the Surface is
/// reopened with its last state; being busy for half the deadline is not a hang; the other
/// Surface answers while the victim spins.
fn spin(h: &mut HostHarness) -> Outcome {
    let deadline = Duration::from_secs(2);
    let mut t = h.host(HostBuilder::new().hang_deadline(deadline))?;
    let other = open_other(h, &mut t)?;
    let victim = h.open(
        &mut t,
        "victim",
        test_app("victim", "<p>victim</p>", PAGE),
        Some(json!({ "n": 1 })),
    )?;
    // Control: busy for 1 s, half the deadline, is no hang.
    patch_seen(h, &mut t, "victim", json!({ "n": 2, "busy_ms": 1000 }))?;
    ensure!(
        h.wait(&mut t, |_, rec| rec.count("victim", "busy_done") == 1),
        "the busy page never finished"
    );
    h.settle(&mut t, Duration::from_millis(2500));
    ensure!(
        t.rec.unresponsive(&victim) == 0 && t.key("victim") == Some(victim.clone()),
        "a page busy for half the deadline was taken for hung: {:?}",
        t.rec.notes()
    );
    let first_doc = patch_seen(h, &mut t, "victim", json!({ "n": 3 }))?;

    let mark = t.rec.sent_count();
    let spin_state = json!({ "n": 4, "spin_until": now_ms() + 1500 });
    t.send(t.agent.patch("victim", spin_state.clone()))?;
    ensure!(
        h.wait(&mut t, |_, rec| rec.count("victim", "spinning") == 1),
        "the victim did not start spinning: {:?}",
        states(&t, "victim")
    );
    let spinning = Instant::now();
    // While it spins, the other Surface answers, before the victim is terminated.
    other_answers(h, &mut t, 1)?;
    ensure!(
        t.rec.unresponsive(&victim) == 0,
        "the victim was terminated before the other Surface answered (after {:?})",
        spinning.elapsed()
    );
    let terminated = h.wait_until(
        &mut t,
        spinning + deadline + Duration::from_secs(3),
        |_, rec| rec.unresponsive(&victim) == 1,
    );
    let took = spinning.elapsed();
    ensure!(
        terminated,
        "the spinning page was not terminated in {took:?}"
    );
    println!("  spinning page terminated {took:?} after its last event (deadline {deadline:?})");
    ensure!(
        took >= Duration::from_millis(1500),
        "terminated after {took:?}, well before the deadline of {deadline:?}"
    );
    ensure!(
        took <= deadline + Duration::from_secs(1),
        "terminated after {took:?}, later than the deadline of {deadline:?}"
    );
    let new = wait_reopened(
        h,
        &mut t,
        &victim,
        GoneReason::Unresponsive,
        Duration::from_secs(15),
    )?;
    ensure!(
        t.rec.crashed(&victim) == 0,
        "the termination was reported as a crash"
    );
    // Its last state reaches its new page, which does not spin again: `spin_until` is past.
    let old_docs = docs(&t, "victim");
    wait_state_from_new_doc(h, &mut t, "victim", &spin_state, &old_docs)?;
    let doc = patch_seen(h, &mut t, "victim", json!({ "n": 5 }))?;
    ensure!(doc != first_doc, "the patch was answered by the old page");
    ensure!(
        t.rec.count("victim", "spinning") == 1 && t.rec.unresponsive(&new) == 0,
        "the reopened page spun or was taken for hung"
    );
    nothing_upstream(&t, "victim", mark)?;
    other_untouched(&t, &other)?;
    h.shut_down(t)
}

/// Three SIGKILLs are recovered; the fourth within the minute closes the Surface: one `close`
/// with `{reason: "crashed"}` upstream, `notify_crashed` and `notify_closed` with
/// `Gone(Crashed)` to the delegate, and it is not reopened again.
fn repeated_crashes(h: &mut HostHarness) -> Outcome {
    let mut t = h.host(surfaces_only())?;
    let other = open_other(h, &mut t)?;
    let baseline = web_processes();
    let mut key = h.open(
        &mut t,
        "victim",
        test_app("victim", "<p>victim</p>", PAGE),
        Some(json!({ "n": 1 })),
    )?;
    wait_state_from_new_doc(h, &mut t, "victim", &json!({ "n": 1 }), &HashSet::new())?;
    let started = Instant::now();
    let mut old_docs = docs(&t, "victim");
    for round in 1..=4 {
        let pids = new_web_processes(&baseline);
        ensure!(
            !pids.is_empty(),
            "round {round}: no web process of the victim"
        );
        kill_each(&pids)?;
        if round < 4 {
            key = wait_reopened(
                h,
                &mut t,
                &key,
                GoneReason::Crashed,
                Duration::from_secs(15),
            )?;
            // The reopened page gets its state before the next kill.
            wait_state_from_new_doc(h, &mut t, "victim", &json!({ "n": 1 }), &old_docs)?;
            old_docs = docs(&t, "victim");
            other_answers(h, &mut t, round)?;
        }
    }
    let last = key.clone();
    let closed = h.wait_until(
        &mut t,
        Instant::now() + Duration::from_secs(15),
        |_, rec| !rec.closed(&last).is_empty(),
    );
    ensure!(closed, "the fourth crash did not close the Surface");
    ensure!(
        started.elapsed() < Duration::from_secs(60),
        "the four crashes took {:?}, longer than the window",
        started.elapsed()
    );
    ensure!(
        t.rec.closed(&last) == vec![CloseReason::Gone(GoneReason::Crashed)],
        "the last generation closed as {:?}",
        t.rec.closed(&last)
    );
    let generations = t.rec.generations("victim");
    ensure!(generations.len() == 4, "generations: {generations:?}");
    for (i, k) in generations.iter().enumerate() {
        ensure!(
            t.rec.crashed(k) == 1,
            "notify_crashed for {k}: {}",
            t.rec.crashed(k)
        );
        if i < 3 {
            ensure!(
                t.rec.closed(k) == vec![CloseReason::Reopened(GoneReason::Crashed)],
                "{k} closed as {:?}",
                t.rec.closed(k)
            );
        }
    }
    let closes = t.rec.data("victim", "close");
    ensure!(
        closes == vec![json!({ "reason": "crashed" })],
        "upstream closes of the victim: {closes:?}"
    );
    h.settle(&mut t, Duration::from_millis(1500));
    ensure!(
        t.key("victim").is_none() && t.rec.generations("victim").len() == 4,
        "the victim was reopened after it was given up"
    );
    other_answers(h, &mut t, 9)?;
    other_untouched(&t, &other)?;
    h.shut_down(t)
}

/// A page that spins in its top-level script never says `ready`: at the first-ready deadline
/// its web process is terminated and it is reopened, three times; then it is closed and the
/// agent gets `close` with `{reason: "unresponsive"}`.
fn never_ready(h: &mut HostHarness) -> Outcome {
    let mut t = h.host(HostBuilder::new().first_ready_deadline(Duration::from_secs(3)))?;
    let other = open_other(h, &mut t)?;
    t.send(t.agent.open(
        "spinner",
        test_app("spinner", "<p>spinner</p>", "for (;;) {}"),
        Some(json!({ "n": 1 })),
    ))?;
    let done = h.wait_until(
        &mut t,
        Instant::now() + Duration::from_secs(60),
        |_, rec| {
            rec.generations("spinner").iter().any(|k| {
                rec.closed(k)
                    .contains(&CloseReason::Gone(GoneReason::Unresponsive))
            })
        },
    );
    let generations = t.rec.generations("spinner");
    ensure!(
        done,
        "the spinner was not closed unresponsive: {generations:?}, {:?}",
        t.rec
            .notes()
            .iter()
            .filter(|n| !matches!(n, Note::Outbound(_)))
            .collect::<Vec<_>>()
    );
    ensure!(generations.len() == 4, "generations: {generations:?}");
    for (i, k) in generations.iter().enumerate() {
        let expected = if i < 3 {
            CloseReason::Reopened(GoneReason::Unresponsive)
        } else {
            CloseReason::Gone(GoneReason::Unresponsive)
        };
        ensure!(
            t.rec.closed(k) == vec![expected.clone()] && t.rec.unresponsive(k) == 1,
            "{k}: closed {:?}, unresponsive {} (expected {expected:?})",
            t.rec.closed(k),
            t.rec.unresponsive(k)
        );
        ensure!(!t.rec.is_ready(k), "{k} said ready");
    }
    let closes = t.rec.data("spinner", "close");
    ensure!(
        closes == vec![json!({ "reason": "unresponsive" })],
        "upstream closes of the spinner: {closes:?}"
    );
    other_answers(h, &mut t, 1)?;
    other_untouched(&t, &other)?;
    h.shut_down(t)
}

/// Reports its document and its size on load and on every resize; asks for `state.height`.
const SIZED_PAGE: &str = r#"
    var doc = Math.random().toString(36).slice(2);
    function size() { post('size', { doc: doc, w: innerWidth, h: innerHeight }); }
    size();
    addEventListener('resize', size);
    LineUpSurface.onState(function (s) {
      post('state', { doc: doc, state: s });
      if (s.height) { LineUpSurface.resize(s.height); }
    });
"#;

/// Child views: the reopened view of the left of two columns is laid out again as a column, with
/// the height its predecessor's page asked for, although its own page never asks (its last
/// state no longer says so).
fn child_view(h: &mut HostHarness) -> Outcome {
    let parent = std::rc::Rc::new(
        WindowBuilder::new()
            .with_title("lineup embedder")
            .with_inner_size(LogicalSize::new(600, 320))
            .build(&h.event_loop)
            .map_err(|e| e.to_string())?,
    );
    let result = child_view_in(h, &parent);
    drop(parent);
    result
}

fn child_view_in(h: &mut HostHarness, parent: &std::rc::Rc<tao::window::Window>) -> Outcome {
    let mut t = h.host(surfaces_only().child_views_in(std::rc::Rc::clone(parent)))?;
    let sized = |w: u64, hh: u64| json!({ "w": w, "h": hh });
    let last_size = |t: &TestHost, instance: &str| {
        t.rec.data(instance, "size").last().map(|d| {
            (
                d["doc"].as_str().unwrap_or("").to_owned(),
                json!({ "w": d["w"], "h": d["h"] }),
            )
        })
    };
    let baseline = web_processes();
    let left = h.open(
        &mut t,
        "a-left",
        test_app("left", "<p>l</p>", SIZED_PAGE),
        Some(json!({ "height": 200 })),
    )?;
    let pids = new_web_processes(&baseline);
    h.open(
        &mut t,
        "b-right",
        test_app("right", "<p>r</p>", SIZED_PAGE),
        Some(json!({ "n": 0 })),
    )?;
    let laid_out = h.wait(&mut t, |_, rec| {
        let last = |i: &str| {
            rec.data(i, "size")
                .last()
                .map(|d| json!({ "w": d["w"], "h": d["h"] }))
        };
        last("a-left") == Some(sized(300, 200)) && last("b-right") == Some(sized(300, 320))
    });
    ensure!(
        laid_out,
        "not laid out as 300 x 200 and 300 x 320: {:?} {:?}",
        last_size(&t, "a-left"),
        last_size(&t, "b-right")
    );
    let (first_doc, _) = last_size(&t, "a-left").ok_or("no size")?;
    // Its last state no longer asks for a height.
    patch_seen(h, &mut t, "a-left", json!({ "n": 1 }))?;
    ensure!(!pids.is_empty(), "no web process found for the left view");
    kill_each(&pids)?;
    let new = wait_reopened(
        h,
        &mut t,
        &left,
        GoneReason::Crashed,
        Duration::from_secs(15),
    )?;
    let back = h.wait(&mut t, |_, rec| {
        rec.data("a-left", "size").last().is_some_and(|d| {
            d["doc"] != first_doc.as_str() && json!({ "w": d["w"], "h": d["h"] }) == sized(300, 200)
        })
    });
    ensure!(
        back,
        "the reopened left view is not 300 x 200: {:?}",
        t.rec.data("a-left", "size")
    );
    ensure!(
        t.host.view(&new).is_some_and(|v| v.window().is_none()),
        "the reopened Surface is not a child view"
    );
    ensure!(
        last_size(&t, "b-right").map(|(_, s)| s) == Some(sized(300, 320)),
        "the right view moved: {:?}",
        t.rec.data("b-right", "size")
    );
    patch_seen(h, &mut t, "b-right", json!({ "n": 1 }))?;
    h.shut_down(t)
}
