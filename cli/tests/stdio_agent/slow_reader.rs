//! A slow reader loses page events, never an answer or a close.

use super::*;

/// A Surface that, once it has its state, posts `tick` events as fast as its page can, numbered
/// from 0, until it is closed.
fn flood_open(id: &str, instance: &str, name: &str) -> String {
    let js = "var n = 0, started = false; \
              function burst() { \
                for (var i = 0; i < 20; i++) { LineUpSurface.event('tick', {n: n++}); } \
                setTimeout(burst, 0); \
              } \
              LineUpSurface.onState(function () { if (!started) { started = true; burst(); } });";
    envelope(
        id,
        "ui.open",
        json!({
            "instance_id": instance,
            "app": {
                "id": "com.lineup.flood",
                "name": name,
                "version": "1.0.0",
                "html": "<main>flood</main>",
                "css": "",
                "js": js,
            },
        }),
    )
}

/// What the agent expects in answer to one line: `err:<id>` for a `client.error` in reply to
/// `<id>`, `res:<call id>` for an `app.result`.
fn answer_key(m: &Value) -> Option<String> {
    match m["type"].as_str()? {
        "lineup.v1.client.error" => Some(format!("err:{}", m["payload"]["in_reply_to"].as_str()?)),
        "lineup.v1.app.result" => Some(format!("res:{}", m["payload"]["call_id"].as_str()?)),
        _ => None,
    }
}

fn is_tick_from(instance: &'static str) -> impl Fn(&Value) -> bool {
    move |m| {
        m["type"] == "lineup.v1.ui.event"
            && m["payload"]["instance_id"] == instance
            && m["payload"]["event"] == "tick"
    }
}

fn is_events_dropped(m: &Value) -> bool {
    m["type"] == "lineup.v1.client.error" && m["payload"]["code"] == "events_dropped"
}

/// Fails unless every `tick` of `instance` in `received` comes before position `at`.
fn assert_no_tick_after(received: &[Value], instance: &'static str, at: usize, after: &str) {
    let last = received.iter().rposition(is_tick_from(instance));
    assert!(
        last.is_some_and(|last| last < at),
        "{instance}: events at {last:?}, after {after} at {at}"
    );
}

const FLOOD_A: &str = "flood.a";
const FLOOD_B: &str = "flood.b";
const FLOOD_B_TITLE: &str = "Flood B";
/// How many answered lines the agent sends while it is not reading: more than the host's
/// default high-water mark of waiting answers (1024), so that the host has to stop reading stdin.
const ANSWERED_LINES: usize = 2100;

/// R-ENV-5, R-UI-5, R-ENV-4: while the agent does not read stdout, two pages flood events, the
/// agent keeps sending lines that each get an answer, closes one flooding Surface itself, and
/// the user closes the other. Once the agent reads again, every answer arrives, in the order of
/// the requests; the user's close arrives; neither Surface's events go on after its close; page
/// events (only they) were dropped, and the agent is told how many per Surface with a
/// `client.error` `events_dropped`; the host stopped reading stdin instead of queueing without
/// bound.
#[test]
fn a_slow_reader_loses_page_events_but_never_an_answer_or_a_close() {
    require_display();
    let _screen = screen();
    // A small queue of page events makes the flood overrun it quickly.
    let mut agent = Agent::spawn_with("slow-reader", &["--outbound-queue", "64"]);
    let x = X11::connect().unwrap_or_else(|e| {
        panic!("cannot connect to the X server at $DISPLAY ({e}); run under `xvfb-run -a`")
    });

    agent.send(&flood_open("msg_open_a", FLOOD_A, "Flood A"));
    agent.send(&flood_open("msg_open_b", FLOOD_B, FLOOD_B_TITLE));
    agent.expect("a tick from flood.a", is_tick_from(FLOOD_A));
    agent.expect("a tick from flood.b", is_tick_from(FLOOD_B));
    // R-SEC-5: the host-owned marker follows the name.
    let window_b = agent.shown_window(&x, &format!("{FLOOD_B_TITLE} — LineUp Surface"));

    // The agent stops reading: the floods fill the pipe, then the host's queue.
    agent.pause_stdout();
    let mut lines = Vec::new();
    let mut expected = Vec::new();
    let mut close_a_at = None;
    for i in 0..ANSWERED_LINES {
        if i == ANSWERED_LINES / 2 {
            // The agent closes flood.a itself: nothing is answered (R-UI-5), but the answer to
            // the next line tells where the close took effect.
            close_a_at = Some(expected.len());
            lines.push(envelope(
                "msg_close_a",
                "ui.close",
                json!({"instance_id": FLOOD_A, "reason": "enough"}),
            ));
        }
        match i % 3 {
            0 => {
                let id = format!("msg_ghost_{i}");
                lines.push(envelope(
                    &id,
                    "ui.patch",
                    json!({"instance_id": format!("ghost.{i}"), "state": {"i": i}}),
                ));
                expected.push(format!("err:{id}"));
            }
            1 => {
                let call = format!("call_{i}");
                lines.push(envelope(
                    &format!("msg_call_{i}"),
                    "app.call",
                    json!({"call_id": call, "capability": "app.open_url", "reason": "r",
                           "expires_at": "2026-08-02T12:10:00Z", "arguments": {}}),
                ));
                expected.push(format!("res:{call}"));
            }
            _ => {
                let id = format!("msg_v2_{i}");
                lines.push(
                    envelope(
                        &id,
                        "ui.patch",
                        json!({"instance_id": FLOOD_A, "state": {}}),
                    )
                    .replacen("\"v\":1", "\"v\":2", 1),
                );
                expected.push(format!("err:{id}"));
            }
        }
    }
    // The last line is refused, so the host's log names its line once it was handled.
    let last_id = "msg_ghost_last";
    lines.push(envelope(
        last_id,
        "ui.patch",
        json!({"instance_id": "ghost.last", "state": {}}),
    ));
    expected.push(format!("err:{last_id}"));
    let close_a_at = close_a_at.unwrap();
    let (numbers, writer) = agent.send_in_background(lines);
    let last_line = *numbers.last().unwrap();

    // Meanwhile the user closes flood.b.
    x.request_close(window_b)
        .unwrap_or_else(|e| panic!("WM_DELETE_WINDOW to {window_b:#x} failed: {e}"));
    agent.expect_stderr("flood.b closed by the user", |l| {
        l.contains(FLOOD_B) && l.contains("closed by the user")
    });
    // Wait until the host either stopped reading stdin (R-ENV-4) or handled every line.
    let stopped = agent.expect_stderr("the host stop reading stdin or handle the last line", |l| {
        l.contains("stopped reading stdin") || l.contains(&format!("line {last_line}:"))
    });
    agent.note(format!("agent: saw {stopped:?}; reads again"));
    agent.resume_stdout();
    agent.join_background(writer);

    // Read until every answer, the user's close and flood.a's drop report arrived.
    let deadline = Instant::now() + STEP;
    loop {
        agent.wait_until(Instant::now() + Duration::from_millis(200), |_| false);
        let answered = agent
            .received
            .iter()
            .filter_map(answer_key)
            .filter(|k| expected.contains(k))
            .count();
        let closed_b = agent.events(FLOOD_B, "close").len();
        let reported_a = agent
            .received
            .iter()
            .any(|m| is_events_dropped(m) && m["payload"]["instance_id"] == FLOOD_A);
        if answered >= expected.len() && closed_b > 0 && reported_a {
            break;
        }
        if Instant::now() > deadline || agent.stdout_closed {
            let got: Vec<String> = agent.received.iter().filter_map(answer_key).collect();
            let missing: Vec<&String> = expected.iter().filter(|k| !got.contains(k)).collect();
            panic!(
                "after {STEP:?}: {answered} of {} answers (first missing: {:?}), {closed_b} \
                 close(s) of flood.b, events_dropped for flood.a: {reported_a}",
                expected.len(),
                missing.iter().take(5).collect::<Vec<_>>()
            );
        }
    }
    agent.close_stdin();
    let status = agent.wait_exit();
    assert!(status.success(), "the host exited with {status}");

    // Every answer arrived, once, in the order of the requests (R-ENV-5).
    let answers: Vec<String> = agent.received.iter().filter_map(answer_key).collect();
    assert_eq!(
        answers.len(),
        expected.len(),
        "answers: one per answered line"
    );
    assert!(answers == expected, "answers arrived out of order");
    // The user's close arrived exactly once, and flood.b said nothing after it (R-UI-5).
    let position = |want: &dyn Fn(&Value) -> bool| agent.received.iter().position(want);
    let closes_b = agent.events(FLOOD_B, "close");
    assert_eq!(
        closes_b,
        [json!({"instance_id": FLOOD_B, "event": "close", "data": {}})]
    );
    let close_b =
        position(&|m| m["payload"]["instance_id"] == FLOOD_B && m["payload"]["event"] == "close")
            .unwrap();
    assert_no_tick_after(&agent.received, FLOOD_B, close_b, "the user closed it");
    // flood.a said nothing after the answer to the line after the agent's close.
    let after_close_a = &expected[close_a_at];
    let answer_after_close_a =
        position(&|m| answer_key(m).as_ref() == Some(after_close_a)).unwrap();
    assert_no_tick_after(
        &agent.received,
        FLOOD_A,
        answer_after_close_a,
        "the agent closed it",
    );
    // Kept events of each Surface are in the order the page sent them.
    for instance in [FLOOD_A, FLOOD_B] {
        let numbers: Vec<u64> = agent
            .events(instance, "tick")
            .iter()
            .map(|p| p["data"]["n"].as_u64().unwrap())
            .collect();
        assert!(
            numbers.windows(2).all(|w| w[0] < w[1]),
            "{instance}: events out of order"
        );
    }
    // Events were dropped, and the agent was told how many per Surface, never as a ui.event.
    let mut reported = std::collections::BTreeMap::<String, u64>::new();
    for m in agent.received.iter().filter(|m| is_events_dropped(m)) {
        assert_eq!(m["payload"]["in_reply_to"], Value::Null, "{m}");
        let instance = m["payload"]["instance_id"].as_str().unwrap();
        assert!([FLOOD_A, FLOOD_B].contains(&instance), "{m}");
        let count = m["payload"]["count"].as_u64().unwrap();
        assert!(count > 0, "{m}");
        *reported.entry(instance.to_owned()).or_default() += count;
    }
    assert!(
        reported.get(FLOOD_A).is_some_and(|&n| n > 0),
        "{reported:?}"
    );
    // The host stopped reading stdin rather than queue answers without bound (R-ENV-4).
    let stderr = agent.stderr();
    let stopped: Vec<&String> = stderr
        .iter()
        .filter(|l| l.contains("stopped reading stdin"))
        .collect();
    assert!(!stopped.is_empty(), "the host never stopped reading stdin");
    // ...and read it again once the agent caught up.
    assert!(
        stderr.iter().any(|l| l.contains("reading stdin again")),
        "the host never read stdin again"
    );
    eprintln!(
        "slow reader: {} answers delivered in order; ticks kept: flood.a {}, flood.b {}; \
         dropped and reported: {reported:?}; stdin stopped {} time(s), first: {:?}",
        answers.len(),
        agent.events(FLOOD_A, "tick").len(),
        agent.events(FLOOD_B, "tick").len(),
        stopped.len(),
        stopped[0],
    );
}
