//! `app.call` over stdio: once per `call_id`, across a killed host.

use super::*;

fn count_call(call_id: &str, tag: &str) -> String {
    count_call_in("conv_01", call_id, tag)
}

/// `lineup host --stdio` vouching for `agent_hermes_main`, with `test.count` counting its runs
/// into a file of a fresh directory, and `extra` arguments; returns the agent, the directory and
/// the count file.
fn spawn_counting(name: &str, extra: &[&str]) -> (Agent, PathBuf, PathBuf) {
    spawn_counting_as(name, Some("agent_hermes_main"), extra)
}

fn is_result_for(call_id: &'static str) -> impl Fn(&Value) -> bool {
    move |m| m["type"] == "lineup.v1.app.result" && m["payload"]["call_id"] == call_id
}

/// R-INV-1, R-CAP-5, R-SES-1 over `lineup host --stdio`: the first answer is preceded by
/// `client.inventory` and `app.list`; a call runs once and its repeat gets the stored result
/// without running again; with a vouched agent, an envelope from another `sender.id` is refused.
#[test]
fn app_call_over_stdio_inventory_first_runs_once_and_refuses_another_sender() {
    require_display();
    let _screen = screen();
    let (mut agent, _dir, count) = spawn_counting("app-call", &[]);
    agent.send(&count_call("call_1", "first"));
    let result = agent.expect("app.result of call_1", is_result_for("call_1"));
    assert_eq!(result["payload"]["status"], "completed", "{result}");
    assert_eq!(result["payload"]["result"], json!({"tag": "first"}));
    let types: Vec<&str> = agent
        .received
        .iter()
        .filter_map(|m| m["type"].as_str())
        .collect();
    assert_eq!(
        &types[..2],
        &["lineup.v1.client.inventory", "lineup.v1.app.list"],
        "the inventory comes first: {types:?}"
    );
    let inventory = &agent.received[0]["payload"];
    assert!(
        inventory["capabilities"]
            .as_array()
            .is_some_and(|c| c.iter().any(|c| c["name"] == "test.count")),
        "{inventory}"
    );

    // The same call_id again: the stored result, no second run.
    agent.send(&count_call("call_1", "first"));
    let again = agent.expect("the repeated call_1's result", |m| {
        is_result_for("call_1")(m)
    });
    let results: Vec<&Value> = agent
        .received
        .iter()
        .filter(|m| is_result_for("call_1")(m))
        .collect();
    assert_eq!(results.len(), 2, "{results:?}");
    assert_eq!(again["payload"]["result"], result["payload"]["result"]);
    let runs = std::fs::read_to_string(&count).unwrap_or_default();
    assert_eq!(runs.lines().count(), 1, "test.count ran {runs:?}");

    // R-SES-1: another sender.id is refused, and the call never runs.
    let mut forged: Value = serde_json::from_str(&count_call("call_2", "forged")).unwrap();
    forged["sender"]["id"] = json!("someone_else");
    agent.send(&forged.to_string());
    let refused = agent.expect("the forged call's answer", is_result_for("call_2"));
    assert_eq!(refused["payload"]["status"], "failed", "{refused}");
    assert_eq!(
        refused["payload"]["error"]["code"], "wrong_sender",
        "{refused}"
    );
    let runs = std::fs::read_to_string(&count).unwrap_or_default();
    assert_eq!(runs.lines().count(), 1, "test.count ran {runs:?}");

    agent.close_stdin();
    let status = agent.wait_exit();
    assert!(status.success(), "the host exited with {status}");
}

/// Item 10: `--enable` turns on exactly the named built-ins: the inventory lists them and no
/// other, a call to one runs (here after automatic consent; the real clipboard under Xvfb), a
/// call to one that is off is `unsupported`; an unknown name is refused with the known ones.
#[test]
fn builtins_enabled_by_flag_over_stdio_are_listed_and_run_and_others_are_unsupported() {
    require_display();
    let _screen = screen();
    let mut agent = Agent::spawn_with(
        "builtins",
        &[
            "--enable",
            "clipboard.write",
            "--dangerous-auto-consent",
            "allow",
        ],
    );
    let call = |call_id: &str, capability: &str, arguments: Value| {
        envelope(
            &format!("msg_{call_id}"),
            "app.call",
            json!({
                "call_id": call_id,
                "capability": capability,
                "reason": "the user asked",
                "expires_at": soon(),
                "arguments": arguments,
            }),
        )
    };
    agent.send(&call("b1", "clipboard.write", json!({"text": "hello"})));
    let copied = agent.expect("clipboard.write's result", is_result_for("b1"));
    assert_eq!(copied["payload"]["status"], "completed", "{copied}");
    assert_eq!(
        copied["payload"]["result"],
        json!({"copied": true, "chars": 5})
    );
    let names: Vec<&str> = agent.received[0]["payload"]["capabilities"]
        .as_array()
        .map(|c| c.iter().filter_map(|c| c["name"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(names, ["clipboard.write"], "{}", agent.received[0]);

    agent.send(&call(
        "b2",
        "app.open_url",
        json!({"url": "https://example.com/"}),
    ));
    let off = agent.expect("app.open_url's result", is_result_for("b2"));
    assert_eq!(off["payload"]["status"], "unsupported", "{off}");
    agent.close_stdin();
    let status = agent.wait_exit();
    assert!(status.success(), "the host exited with {status}");

    let refused = Command::new(env!("CARGO_BIN_EXE_lineup"))
        .args(["host", "--stdio", "--enable", "app.open_url,shell.exec"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("'shell.exec' is not a built-in capability; the built-ins are app.open_url, clipboard.write, device.pick_file, artifact.save"),
        "{stderr}"
    );
}

fn count_call_slow(call_id: &str, tag: &str, sleep_ms: u64) -> String {
    envelope(
        &format!("msg_{call_id}"),
        "app.call",
        json!({
            "call_id": call_id,
            "capability": "test.count",
            "reason": "counting runs",
            "expires_at": soon(),
            "arguments": {"tag": tag, "sleep_ms": sleep_ms},
        }),
    )
}

/// The epoch of an inventory revision `rev-<epoch>-<n>`.
fn revision_epoch(inventory: &Value) -> u64 {
    let revision = inventory["payload"]["revision"]
        .as_str()
        .unwrap_or_default();
    revision
        .split('-')
        .nth(1)
        .and_then(|e| e.parse().ok())
        .unwrap_or_else(|| panic!("unexpected revision {revision:?}"))
}

/// R-CAP-5, R-CAP-6, R-INV-2: `lineup host --stdio` is killed with SIGKILL in the middle of a
/// stream of calls and started again on the same data dir; every `call_id` is sent again. The
/// kill lands while one call (`call_05`, sleeping 10 s in its handler) is certainly running: its
/// handler's line is in the count file and its result has not come. Each call ran at most once
/// (counted by the test capability outside the data dir), a call that had finished gets its
/// stored result, the one running is answered `failed` with `outcome_unknown` and not run
/// again, the inventory revision moved forward, and the database and its audit chain are intact.
#[test]
fn a_killed_host_restarted_on_its_data_dir_runs_each_call_at_most_once() {
    require_display();
    let _screen = screen();
    let dir = std::env::temp_dir().join(format!("lineup-restart-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let data = dir.join("data");
    std::fs::create_dir_all(&data).unwrap();
    let count = dir.join("runs.txt");
    let (data_arg, count_arg) = (
        data.to_string_lossy().into_owned(),
        count.to_string_lossy().into_owned(),
    );
    let args = [
        "--agent-id",
        "agent_hermes_main",
        "--data-dir",
        data_arg.as_str(),
        "--dangerous-test-capability",
        count_arg.as_str(),
    ];
    const CALLS: usize = 12;
    /// The call whose handler is running when the host is killed: it sleeps 10 s.
    const UNFINISHED: &str = "call_05";
    let ids: Vec<String> = (0..CALLS).map(|i| format!("call_{i:02}")).collect();
    let sleep_of = |id: &str| if id == UNFINISHED { 10_000 } else { 150 };

    let mut first = Agent::spawn_with("restart-1", &args);
    // Half the stream reaches the first host; the rest only the second.
    for id in &ids[..CALLS / 2] {
        first.send(&count_call_slow(id, id, sleep_of(id)));
    }
    // Kill it once some calls finished and UNFINISHED's handler has started: it writes its
    // line (synced) before its 10 s sleep, so the kill lands while it runs.
    first.expect("a few results", |m| m["type"] == "lineup.v1.app.result");
    first.expect("a third result", |m| {
        m["type"] == "lineup.v1.app.result" && m["payload"]["call_id"] == "call_02"
    });
    let deadline = Instant::now() + STEP;
    while !std::fs::read_to_string(&count)
        .unwrap_or_default()
        .lines()
        .any(|l| l == UNFINISHED)
    {
        assert!(
            Instant::now() < deadline,
            "{UNFINISHED}'s handler never started"
        );
        first.wait_until(Instant::now() + Duration::from_millis(20), |_| false);
    }
    first.kill();
    let before: Vec<Value> = first
        .received
        .iter()
        .filter(|m| m["type"] == "lineup.v1.app.result")
        .cloned()
        .collect();
    assert!(
        !before.iter().any(|m| m["payload"]["call_id"] == UNFINISHED),
        "{UNFINISHED} finished before the kill: {before:?}"
    );
    let epoch_before = revision_epoch(&first.received[0]);
    drop(first);

    let mut second = Agent::spawn_with("restart-2", &args);
    for id in &ids {
        second.send(&count_call_slow(id, id, sleep_of(id)));
    }
    for id in &ids {
        let id = id.clone();
        // Handlers run on threads of their own: results come in any order.
        second.expect_seen("every call answered after the restart", move |m| {
            m["type"] == "lineup.v1.app.result" && m["payload"]["call_id"] == id.as_str()
        });
    }
    let epoch_after = revision_epoch(&second.received[0]);
    assert!(
        epoch_after > epoch_before,
        "the revision did not move forward: {epoch_before} then {epoch_after}"
    );
    let runs = std::fs::read_to_string(&count).unwrap_or_default();
    for id in &ids {
        let n = runs.lines().filter(|l| *l == id).count();
        assert!(n <= 1, "{id} ran {n} times: {runs:?}");
    }
    let after: Vec<&Value> = second
        .received
        .iter()
        .filter(|m| m["type"] == "lineup.v1.app.result")
        .collect();
    for earlier in &before {
        let id = &earlier["payload"]["call_id"];
        let later = after
            .iter()
            .find(|m| m["payload"]["call_id"] == *id)
            .expect("answered again");
        assert_eq!(
            later["payload"]["status"], earlier["payload"]["status"],
            "{id}: the stored result was not given again: {later} (before: {earlier})"
        );
    }
    let statuses: Vec<&str> = after
        .iter()
        .filter_map(|m| m["payload"]["status"].as_str())
        .collect();
    eprintln!(
        "before the kill: {} results; after the restart: {statuses:?}",
        before.len()
    );
    for m in &after {
        let status = m["payload"]["status"].as_str().unwrap_or_default();
        let ran = runs
            .lines()
            .any(|l| Some(l) == m["payload"]["call_id"].as_str());
        match status {
            "completed" => assert!(ran, "{m}: completed without running"),
            "cancelled" => assert!(!ran, "{m}: cancelled but it ran"),
            "failed" => assert_eq!(m["payload"]["error"]["code"], "outcome_unknown", "{m}"),
            other => panic!("unexpected status {other}: {m}"),
        }
    }
    // The call running at the kill: outcome unknown, run once (before the kill), never again.
    let unfinished = after
        .iter()
        .find(|m| m["payload"]["call_id"] == UNFINISHED)
        .expect("the unfinished call answered after the restart");
    assert_eq!(unfinished["payload"]["status"], "failed", "{unfinished}");
    assert_eq!(
        unfinished["payload"]["error"]["code"], "outcome_unknown",
        "{unfinished}"
    );
    assert_eq!(
        runs.lines().filter(|l| *l == UNFINISHED).count(),
        1,
        "{runs:?}"
    );
    second.close_stdin();
    assert!(second.wait_exit().success());

    let db = rusqlite::Connection::open(data.join("lineup.sqlite3")).unwrap();
    let check: String = db
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    let verify = Command::new(env!("CARGO_BIN_EXE_lineup"))
        .args(["audit", "verify", "--data-dir", data_arg.as_str()])
        .output()
        .unwrap();
    assert!(
        verify.status.success(),
        "lineup audit verify: {}",
        String::from_utf8_lossy(&verify.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
