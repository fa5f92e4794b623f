//! Two conversations on one host, and a display that does not open.

use super::*;

/// A Surface that says `hello` with its state's `who` on every state it gets.
fn hello_open(conversation: &str, instance: &str) -> String {
    envelope_in(
        conversation,
        &format!("open_{conversation}_{instance}"),
        "ui.open",
        json!({
            "instance_id": instance,
            "app": {
                "id": "com.lineup.hello",
                "name": format!("{conversation} {instance}"),
                "version": "1.0.0",
                "html": "<main>hello</main>",
                "css": "",
                "js": "LineUpSurface.onState(function (s) { LineUpSurface.event('hello', {who: s.who}); });",
            },
            "state": {"who": format!("{conversation}/{instance}")},
        }),
    )
}

/// The records of `lineup audit export --data-dir data`, one JSON object each.
fn audit_export(data: &str) -> Vec<Value> {
    let export = Command::new(env!("CARGO_BIN_EXE_lineup"))
        .args(["audit", "export", "--data-dir", data])
        .output()
        .unwrap();
    assert!(
        export.status.success(),
        "lineup audit export: {}",
        String::from_utf8_lossy(&export.stderr)
    );
    String::from_utf8(export.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn is_in(conversation: &'static str, kind: &'static str) -> impl Fn(&Value) -> bool {
    move |m| m["conversation_id"] == conversation && m["type"] == format!("lineup.v1.{kind}")
}

/// R-SES-1, R-INV-1, R-CAP-2, R-CAP-6 over `lineup host --stdio`: two conversations on one host,
/// with no vouched agent. Each gets its own `client.inventory` first (`--conversation` at start,
/// the other before the answer to the envelope that established it); both open `w1` and each
/// sees only its own Surface's events; a patch naming the other conversation's instance is
/// `unknown_instance`; the same `call_id` in both runs once per conversation and each gets only
/// its own `app.result`. Grants: prompts are answered "allow always" (`--dangerous-auto-consent
/// allow-always`); conv_a's first `test.confirm` is decided by the prompt, its second by the
/// remembered grant (the positive control), and conv_b's is decided by a prompt of its own,
/// never by conv_a's grant, as the audit export says; no grant is stored for an identity.
#[test]
fn two_conversations_over_stdio_never_see_each_others_surfaces_grants_or_results() {
    require_display();
    let _screen = screen();
    let data_dir = std::env::temp_dir().join(format!(
        "lineup-two-conversations-data-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&data_dir);
    let data = data_dir.to_string_lossy().into_owned();
    let (mut agent, dir, count) = spawn_counting_as(
        "two-conversations",
        None,
        &[
            "--conversation",
            "conv_a",
            "--data-dir",
            data.as_str(),
            "--dangerous-auto-consent",
            "allow-always",
        ],
    );
    // --conversation: its inventory is written at start, before any input.
    agent.expect("conv_a's app.list at start", is_in("conv_a", "app.list"));
    assert_eq!(agent.received[0]["type"], "lineup.v1.client.inventory");
    assert_eq!(agent.received[0]["conversation_id"], "conv_a");

    agent.send(&hello_open("conv_a", "w1"));
    agent.send(&hello_open("conv_a", "only_a"));
    agent.send(&hello_open("conv_b", "w1"));
    for (conversation, instance) in [("conv_a", "w1"), ("conv_a", "only_a"), ("conv_b", "w1")] {
        let who = format!("{conversation}/{instance}");
        agent.expect_seen(&format!("hello from {who}"), move |m| {
            m["type"] == "lineup.v1.ui.event"
                && m["conversation_id"] == conversation
                && m["payload"]["instance_id"] == instance
                && m["payload"]["data"]["who"] == who.as_str()
        });
    }
    // conv_b's inventory came before anything else of conv_b.
    let of_b: Vec<&Value> = agent
        .received
        .iter()
        .filter(|m| m["conversation_id"] == "conv_b")
        .collect();
    assert_eq!(of_b[0]["type"], "lineup.v1.client.inventory", "{of_b:?}");
    assert_eq!(of_b[1]["type"], "lineup.v1.app.list", "{of_b:?}");
    let inventories: Vec<&Value> = agent
        .received
        .iter()
        .filter(|m| m["type"] == "lineup.v1.client.inventory")
        .collect();
    assert_eq!(inventories.len(), 2, "one inventory per conversation");
    assert_ne!(
        inventories[0]["payload"]["revision"], inventories[1]["payload"]["revision"],
        "each session has its own revision"
    );

    // The other conversation's instance is unknown here.
    agent.send(&envelope_in(
        "conv_b",
        "patch_b_only_a",
        "ui.patch",
        json!({"instance_id": "only_a", "state": {"who": "forged"}}),
    ));
    let refused = agent.expect(
        "the patch of another conversation's instance refused",
        is_error_for(json!("patch_b_only_a")),
    );
    assert_eq!(refused["payload"]["code"], "unknown_instance", "{refused}");
    assert_eq!(refused["conversation_id"], "conv_b");

    // The same call_id in both conversations: two runs, each result to its own conversation.
    agent.send(&count_call_in("conv_a", "call_1", "from_a"));
    agent.send(&count_call_in("conv_b", "call_1", "from_b"));
    for (conversation, tag) in [("conv_a", "from_a"), ("conv_b", "from_b")] {
        let result = agent.expect_seen(&format!("{conversation}'s app.result"), move |m| {
            is_in(conversation, "app.result")(m) && m["payload"]["call_id"] == "call_1"
        });
        assert_eq!(result["payload"]["status"], "completed", "{result}");
        assert_eq!(result["payload"]["result"], json!({"tag": tag}), "{result}");
    }
    // A repeat in conv_a gets conv_a's stored result and runs nothing.
    agent.send(&count_call_in("conv_a", "call_1", "from_a"));
    agent.expect("conv_a's repeated call_1", |m| {
        is_in("conv_a", "app.result")(m)
            && m["payload"]["call_id"] == "call_1"
            && m["payload"]["result"]["tag"] == "from_a"
    });
    let runs = std::fs::read_to_string(&count).unwrap_or_default();
    let mut lines: Vec<&str> = runs.lines().collect();
    lines.sort_unstable();
    assert_eq!(lines, ["from_a", "from_b"], "test.count ran {runs:?}");

    // Grants: conv_a's "always" (there is no vouched identity) lasts conv_a only. One call at a
    // time, so that the second starts after the first's grant was remembered.
    for (conversation, call_id, tag) in [
        ("conv_a", "confirm_1", "from_a"),
        ("conv_a", "confirm_2", "from_a"),
        ("conv_b", "confirm_1", "from_b"),
    ] {
        agent.send(&test_call_in(conversation, "test.confirm", call_id, tag));
        let result = agent.expect(&format!("{conversation}'s {call_id}"), move |m| {
            is_in(conversation, "app.result")(m) && m["payload"]["call_id"] == call_id
        });
        assert_eq!(result["payload"]["status"], "completed", "{result}");
        assert_eq!(result["payload"]["result"], json!({"tag": tag}), "{result}");
    }

    // Nothing of one conversation reached the other.
    for m in &agent.received {
        let conversation = m["conversation_id"].as_str().unwrap_or_default();
        if m["type"] == "lineup.v1.ui.event" {
            let who = m["payload"]["data"]["who"].as_str().unwrap_or_default();
            assert!(who.starts_with(&format!("{conversation}/")), "{m}");
        }
        if m["type"] == "lineup.v1.app.result" {
            let tag = m["payload"]["result"]["tag"].as_str().unwrap_or_default();
            assert_eq!(tag, conversation.replace("conv_", "from_"), "{m}");
        }
    }
    let results_a = agent
        .received
        .iter()
        .filter(|m| is_in("conv_a", "app.result")(m))
        .count();
    let results_b = agent
        .received
        .iter()
        .filter(|m| is_in("conv_b", "app.result")(m))
        .count();
    assert_eq!((results_a, results_b), (4, 2));

    agent.close_stdin();
    let status = agent.wait_exit();
    assert!(status.success(), "the host exited with {status}");
    let runs = std::fs::read_to_string(&count).unwrap_or_default();
    let mut lines: Vec<&str> = runs.lines().collect();
    lines.sort_unstable();
    assert_eq!(
        lines,
        ["from_a", "from_a", "from_a", "from_b", "from_b"],
        "the test capabilities ran {runs:?}"
    );

    // Where each test.confirm decision came from, as the audit log records it.
    let audit = audit_export(&data);
    let sources = |conversation: &str, call_id: &str| -> Vec<(String, String)> {
        audit
            .iter()
            .filter(|r| {
                r["conversation_id"] == conversation
                    && r["call_id"] == call_id
                    && r["capability"] == "test.confirm"
                    && r["decision"] != "none"
            })
            .map(|r| {
                (
                    r["decision"].as_str().unwrap_or_default().to_owned(),
                    r["decision_source"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect()
    };
    let decided_by = |conversation: &str, call_id: &str, source: &str| {
        sources(conversation, call_id)
            .iter()
            .any(|(_, s)| s == source)
    };
    let a1 = sources("conv_a", "confirm_1");
    assert!(
        a1.contains(&("allowed_always".to_owned(), "prompt".to_owned())),
        "conv_a's first call was not allowed always at a prompt: {a1:?}\n{audit:#?}"
    );
    // The positive control: conv_a's second call runs on conv_a's remembered grant.
    assert!(
        decided_by("conv_a", "confirm_2", "remembered_grant")
            && !decided_by("conv_a", "confirm_2", "prompt"),
        "conv_a's second call did not run on the remembered grant: {:?}\n{audit:#?}",
        sources("conv_a", "confirm_2")
    );
    // conv_b's call never used conv_a's grant: it was asked for at a prompt of its own.
    assert!(
        decided_by("conv_b", "confirm_1", "prompt")
            && !decided_by("conv_b", "confirm_1", "remembered_grant"),
        "conv_b's call used another conversation's grant: {:?}\n{audit:#?}",
        sources("conv_b", "confirm_1")
    );
    // Without a vouched identity nothing is stored for one.
    let grants = Command::new(env!("CARGO_BIN_EXE_lineup"))
        .args(["grants", "list", "--json", "--data-dir", data.as_str()])
        .output()
        .unwrap();
    assert!(grants.status.success());
    let grants: Value = serde_json::from_slice(&grants.stdout).unwrap();
    assert_eq!(grants, json!([]), "stored grants: {grants}");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&data_dir);
}

/// A display that does not open (nothing listens at `:987`) is one typed error line and exit
/// status 1 after a few attempts, never the toolkit's panic.
#[test]
fn a_display_that_does_not_open_is_a_typed_error_not_a_panic() {
    let out = Command::new(env!("CARGO_BIN_EXE_lineup"))
        .args(["host", "--stdio"])
        .env("DISPLAY", ":987")
        .env_remove("WAYLAND_DISPLAY")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("cannot open the display \":987\" after 5 attempts"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}
