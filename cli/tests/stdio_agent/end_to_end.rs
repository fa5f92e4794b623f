//! An agent drives the host end to end, and an oversized line is answered.

use super::*;

#[test]
fn agent_drives_lineup_host_stdio_end_to_end() {
    require_display();
    let _screen = screen();
    let mut agent = Agent::spawn("e2e");
    let x = X11::connect().unwrap_or_else(|e| {
        panic!("cannot connect to the X server at $DISPLAY ({e}); run under `xvfb-run -a`")
    });

    // a) The spec's weather example.
    agent.send(WEATHER_OPEN);

    // b) A real click on its button: find the window by its title, wait until it is shown and
    // its page has run its script, then click until the page answers.
    let window = agent.shown_window(&x, WEATHER_TITLE);
    agent.note(format!(
        "agent: window {window:#x} titled {WEATHER_TITLE:?}"
    ));
    agent.expect_stderr("the weather Surface ready", |l| {
        l.contains("weather.dashboard.01") && l.contains("ready")
    });
    let from_weather = |m: &Value| {
        m["type"] == "lineup.v1.ui.event" && m["payload"]["instance_id"] == "weather.dashboard.01"
    };
    let mut clicks = 0;
    let clicked_by = Instant::now() + STEP;
    loop {
        x.click_in(window, BUTTON_AT.0, BUTTON_AT.1)
            .unwrap_or_else(|e| panic!("XTEST click failed: {e}"));
        clicks += 1;
        agent.note(format!(
            "agent: XTEST click {clicks} at {BUTTON_AT:?} in window {window:#x}"
        ));
        if agent
            .wait_until(Instant::now() + CLICK_RETRY, from_weather)
            .is_some()
        {
            break;
        }
        assert!(
            Instant::now() < clicked_by,
            "{clicks} clicks on the button in 天气面板 produced no ui.event within {STEP:?}"
        );
    }

    // d) A variant that renders state.city and reports what it rendered.
    agent.send(&city_open());
    agent.expect(
        "the variant's first rendered event (北京)",
        is_rendered("北京"),
    );
    agent.send(&city_patch("msg_ui_03", "上海", 28));
    agent.expect("rendered 上海 after the patch", is_rendered("上海"));

    // e) Bad lines change nothing and get their errors; the good line after them works.
    let bad_version = envelope(
        "msg_bad_01",
        "ui.patch",
        json!({"instance_id": CITY_INSTANCE, "state": {"city": "深圳", "temperature": 30}}),
    )
    .replacen("\"v\":1", "\"v\":2", 1);
    assert!(bad_version.contains("\"v\":2"), "{bad_version}");
    let bad_version_line = agent.send(&bad_version);
    let garbage_line = agent.send("this is not an envelope {");
    agent.send(&city_patch("msg_ui_04", "广州", 31));
    let version_error = agent.expect(
        "client.error in reply to msg_bad_01",
        is_error_for(json!("msg_bad_01")),
    );
    let garbage_error = agent.expect(
        "client.error with in_reply_to null for the garbage line",
        is_error_for(Value::Null),
    );
    agent.expect("rendered 广州 after the bad lines", is_rendered("广州"));
    for (error, line) in [
        (&version_error, bad_version_line),
        (&garbage_error, garbage_line),
    ] {
        assert!(
            error["payload"]["code"]
                .as_str()
                .is_some_and(|c| !c.is_empty()),
            "a client.error without a code: {error}"
        );
        assert!(error["payload"]["message"].is_string(), "{error}");
        agent.expect_stderr(&format!("line {line} with a rule id"), |l| {
            l.contains(&format!("line {line}:")) && names_rule(l)
        });
    }

    // f) End of input: every Surface closes silently and the host exits 0.
    agent.close_stdin();
    let status = agent.wait_exit();
    assert!(status.success(), "the host exited with {status}");

    // c) Exactly the one refresh event, with exactly the spec's payload.
    let ui_events: Vec<&Value> = agent
        .received
        .iter()
        .filter(|m| m["type"] == "lineup.v1.ui.event")
        .collect();
    let weather: Vec<&&Value> = ui_events
        .iter()
        .filter(|m| m["payload"]["instance_id"] == "weather.dashboard.01")
        .collect();
    assert_eq!(
        weather.len(),
        1,
        "expected exactly one ui.event from the weather Surface after {clicks} click(s): {weather:?}"
    );
    assert_eq!(
        weather[0]["payload"],
        json!({"instance_id": "weather.dashboard.01", "event": "refresh", "data": {"unit": "c"}})
    );
    // The bad patch never reached the page; the renders came in order.
    let rendered: Vec<Value> = agent
        .events(CITY_INSTANCE, "rendered")
        .into_iter()
        .map(|p| p["data"]["text"].clone())
        .collect();
    assert_eq!(
        rendered,
        [json!("北京"), json!("上海"), json!("广州")],
        "renders of the variant"
    );
    // An agent-side EOF closes silently: no user close went upstream.
    assert!(
        !ui_events.iter().any(|m| m["payload"]["event"] == "close"),
        "a ui.event close was sent for an agent-side EOF: {ui_events:?}"
    );
    // The only errors are the two for the bad lines.
    let errors = agent
        .received
        .iter()
        .filter(|m| m["type"] == "lineup.v1.client.error")
        .count();
    assert_eq!(errors, 2, "client.error count");
    // The host adopted the agent's conversation from its first envelope.
    assert!(
        agent
            .received
            .iter()
            .all(|m| m["conversation_id"] == "conv_01"),
        "every envelope belongs to conv_01"
    );
    // R-INV-1, R-SES-1: a plain host (no capability flag, no data directory) still sends the
    // inventory first, before the answer to the envelope that established the session.
    let types: Vec<&Value> = agent.received.iter().map(|m| &m["type"]).collect();
    assert_eq!(
        types[..2],
        [
            &json!("lineup.v1.client.inventory"),
            &json!("lineup.v1.app.list")
        ],
        "the first two lines"
    );
    assert_eq!(agent.received[0]["payload"]["capabilities"], json!([]));
    assert_eq!(agent.received[0]["payload"]["applications"], json!([]));
    // Everything on stdout was checked to be an envelope as it arrived; nothing else came.
    assert_eq!(
        agent.received.len(),
        ui_events.len() + errors + 2,
        "stdout carried only the inventory, ui.event and client.error envelopes"
    );
}

#[test]
fn an_oversized_line_is_answered_and_the_host_keeps_working() {
    require_display();
    let _screen = screen();
    let mut agent = Agent::spawn("too-large");

    // One byte over the default envelope limit (R-ENV-4: 1 MiB).
    let huge = vec![b'x'; 1024 * 1024 + 1];
    agent.send_bytes(&huge);
    let error = agent.expect("client.error too_large", is_error_for(Value::Null));
    assert_eq!(error["payload"]["code"], "too_large", "{error}");

    let open = envelope(
        "msg_after_huge",
        "ui.open",
        json!({
            "instance_id": "after.huge",
            "app": {
                "id": "com.lineup.after",
                "name": "after",
                "version": "1.0.0",
                "html": "<p>ok</p>",
                "css": "",
                "js": "LineUpSurface.onState(function (s) { LineUpSurface.event('seen', {n: s.n}); });",
            },
            "state": {"n": 1},
        }),
    );
    agent.send(&open);
    let seen = agent.expect("the Surface opened after the oversized line", |m| {
        m["type"] == "lineup.v1.ui.event" && m["payload"]["instance_id"] == "after.huge"
    });
    assert_eq!(
        seen["payload"],
        json!({"instance_id": "after.huge", "event": "seen", "data": {"n": 1}})
    );

    agent.close_stdin();
    let status = agent.wait_exit();
    assert!(status.success(), "the host exited with {status}");
    // The oversized line established nothing; the open did, so its inventory came before it.
    let types: Vec<&Value> = agent.received.iter().map(|m| &m["type"]).collect();
    assert_eq!(
        types,
        [
            "lineup.v1.client.error",
            "lineup.v1.client.inventory",
            "lineup.v1.app.list",
            "lineup.v1.ui.event"
        ],
        "{:?}",
        agent.received
    );
}
