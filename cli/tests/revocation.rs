//! Revocation and the inventory through `lineup host --stdio` and `lineup apps` (R-UI-9 as
//! amended, R-INV-1, R-INV-3, R-INV-4, R-SES-1): an app id the app center holds or has held is
//! reserved ignoring ASCII case, so its bytes never open inline, whether it is enabled,
//! disabled, upgraded, rolled back or removed, also after a restart; its Surfaces close when it
//! is revoked, busy page or not; every session gets the inventory first, in every mode.
//!
//! Run with `xvfb-run -a cargo test -p lineup-cli --test revocation`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr,
    missing_docs
)]

#[path = "support/stdio_host.rs"]
mod stdio_host;

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use stdio_host::{envelope, error_for, is, lineup, lineup_status, StdioHost};

const ID: &str = "com.example.rev";

fn require_display() {
    assert!(
        std::env::var_os("DISPLAY").is_some_and(|d| !d.is_empty()),
        "run under `xvfb-run -a`"
    );
}

/// A package of app `ID` at `version` whose page reports `shown` with its version once it has
/// its state, then (with `busy`) spins forever.
fn package(dir: &Path, version: &str, busy: bool) -> (String, String) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("manifest.json"),
        format!(
            r#"{{"id": "{ID}", "name": "Rev", "version": "{version}",
                "surfaces": {{"main": {{"html": "index.html", "js": "app.js", "events": ["shown"]}}}}}}"#
        ),
    )
    .unwrap();
    let html = format!("<p>rev {version}</p>");
    let spin = if busy {
        "setTimeout(function () { for (;;) {} }, 20);"
    } else {
        ""
    };
    let js = format!(
        "LineUpSurface.onState(function () {{ LineUpSurface.event('shown', {{version: '{version}'}}); {spin} }});\n"
    );
    std::fs::write(dir.join("index.html"), &html).unwrap();
    std::fs::write(dir.join("app.js"), &js).unwrap();
    (html, js)
}

/// `lineup apps install|upgrade DIR --digest …` in `home`'s default data directory.
fn install(home: &Path, verb: &str, dir: &Path) {
    let report: Value = serde_json::from_str(&lineup(
        home,
        &["apps", "verify", dir.to_str().unwrap(), "--json"],
    ))
    .unwrap();
    lineup(
        home,
        &[
            "apps",
            verb,
            dir.to_str().unwrap(),
            "--digest",
            report["digest"].as_str().unwrap(),
        ],
    );
}

/// `ui.open` of the given bytes inline under `id`.
fn inline(msg: &str, id: &str, instance: &str, bytes: &(String, String)) -> String {
    envelope(
        msg,
        "ui.open",
        json!({"instance_id": instance, "app": {"id": id, "name": "Rev", "version": "1.0.0",
               "html": bytes.0, "css": "", "js": bytes.1}, "state": {}}),
    )
}

/// `ui.open` of Surface `main` of app `ID` by id.
fn by_id(msg: &str, instance: &str) -> String {
    envelope(
        msg,
        "ui.open",
        json!({"instance_id": instance, "app": {"id": ID, "surface": "main"}, "state": {}}),
    )
}

/// Sends `line` and returns the `client.error` code it is refused with; panics if a Surface of
/// it reported anything.
fn refused(host: &mut StdioHost, msg: &str, line: &str) -> (String, String) {
    host.send(line);
    let error = host.expect(&format!("the refusal of {msg}"), error_for(msg));
    (
        error["payload"]["code"].as_str().unwrap().to_owned(),
        error["payload"]["field"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    )
}

fn shown(instance: &str) -> impl Fn(&Value) -> bool + '_ {
    move |v| {
        is("ui.event")(v)
            && v["payload"]["instance_id"] == instance
            && v["payload"]["event"] == "shown"
    }
}

fn closed(instance: &str) -> impl Fn(&Value) -> bool + '_ {
    move |v| {
        is("ui.event")(v)
            && v["payload"]["instance_id"] == instance
            && v["payload"]["event"] == "close"
    }
}

#[test]
fn r_ui_9_a_revoked_app_never_opens_inline_by_id_or_in_another_case_also_after_a_restart() {
    require_display();
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let v1 = package(&home.join("v1"), "1.0.0", false);
    let v2 = package(&home.join("v2"), "1.1.0", false);
    install(home, "install", &home.join("v1"));
    let mut host = StdioHost::start(home, &["--conversation", "c1"]);
    host.expect("the inventory", is("client.inventory"));

    // Enabled: its own exact bytes, and any bytes in another case, are refused inline.
    let policy = ("policy_violation".to_owned(), "payload.app.id".to_owned());
    assert_eq!(
        refused(&mut host, "i1", &inline("i1", ID, "x", &v1)),
        policy
    );
    let upper = "com.example.REV";
    assert_eq!(
        refused(&mut host, "i2", &inline("i2", upper, "x", &v1)),
        policy
    );
    // Positive control: by id it opens, and runs.
    host.send(&by_id("o1", "s1"));
    host.expect("the app's page by id", shown("s1"));

    // Disabled: its open Surface closes; inline and by id are `revoked`.
    lineup(home, &["apps", "disable", ID]);
    host.expect("the Surface closed as app_disabled", |v| {
        closed("s1")(v) && v["payload"]["data"]["reason"] == "app_disabled"
    });
    let revoked = ("revoked".to_owned(), "payload.app.id".to_owned());
    assert_eq!(
        refused(&mut host, "i3", &inline("i3", ID, "x", &v1)),
        revoked
    );
    assert_eq!(
        refused(&mut host, "i4", &inline("i4", "COM.EXAMPLE.REV", "x", &v1)),
        revoked
    );
    assert_eq!(refused(&mut host, "o2", &by_id("o2", "s2")), revoked);

    // Enabled again, upgraded, rolled back: the current bytes (and the old ones) never inline.
    lineup(home, &["apps", "enable", ID]);
    assert_eq!(
        refused(&mut host, "i5", &inline("i5", ID, "x", &v1)),
        policy
    );
    install(home, "upgrade", &home.join("v2"));
    assert_eq!(
        refused(&mut host, "i6", &inline("i6", ID, "x", &v2)),
        policy
    );
    assert_eq!(
        refused(&mut host, "i7", &inline("i7", ID, "x", &v1)),
        policy
    );
    lineup(home, &["apps", "rollback", ID]);
    assert_eq!(
        refused(&mut host, "i8", &inline("i8", ID, "x", &v1)),
        policy
    );

    // Removed: anything under the id, in any case, is `revoked`.
    lineup(home, &["apps", "remove", ID]);
    let other = ("<p>other</p>".to_owned(), String::new());
    assert_eq!(
        refused(&mut host, "i9", &inline("i9", ID, "x", &other)),
        revoked
    );
    assert_eq!(
        refused(
            &mut host,
            "i10",
            &inline("i10", "Com.Example.Rev", "x", &v1)
        ),
        revoked
    );
    assert_eq!(refused(&mut host, "o3", &by_id("o3", "s3")), revoked);
    assert!(
        !host.seen.iter().any(|(_, v)| shown("x")(v)),
        "an inline bundle under a reserved id ran"
    );
    host.stop();

    // A restart between the revocation and the use changes nothing.
    let mut host = StdioHost::start(home, &["--conversation", "c1"]);
    host.expect("the inventory", is("client.inventory"));
    assert_eq!(
        refused(&mut host, "r1", &inline("r1", ID, "x", &v1)),
        revoked
    );
    assert_eq!(
        refused(&mut host, "r2", &inline("r2", "COM.example.rev", "x", &v1)),
        revoked
    );
    // Positive control: an id never held opens inline.
    host.send(&inline("r3", "com.example.fresh", "fresh", &v1));
    host.expect("a fresh id's page", shown("fresh"));
    host.stop();

    // The id cannot be installed again, in any case, until it is forgotten; forgetting is
    // audited, and the audit chain still verifies.
    let (ok, _, err) = lineup_status(
        home,
        &[
            "apps",
            "install",
            home.join("v1").to_str().unwrap(),
            "--digest",
            "sha256-x",
        ],
    );
    assert!(!ok, "{err}");
    let (ok, _, err) = lineup_status(home, &["apps", "forget", "COM.EXAMPLE.REV"]);
    assert!(!ok && err.contains("spelled com.example.rev"), "{err}");
    lineup(home, &["apps", "forget", ID]);
    let export = lineup(home, &["audit", "export"]);
    assert!(
        export
            .lines()
            .any(|l| l.contains("operator") && l.contains(ID)),
        "{export}"
    );
    lineup(home, &["audit", "verify"]);
    install(home, "install", &home.join("v1"));
}

#[test]
fn r_ui_12_a_revoked_apps_surface_closes_within_2_s_even_when_its_page_is_busy_also_on_rollback() {
    require_display();
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    package(&home.join("busy-0"), "1.0.0", true);
    install(home, "install", &home.join("busy-0"));
    let mut host = StdioHost::start(home, &["--conversation", "c1"]);
    host.expect("the inventory", is("client.inventory"));
    let mut took = Vec::new();
    // 20 runs, each revoking the app one way: disabled, upgraded, removed.
    for run in 1..=20 {
        let instance = format!("busy{run}");
        host.send(&by_id(&format!("o{run}"), &instance));
        host.expect("the busy page's first event", shown(&instance));
        // Let the page start spinning.
        std::thread::sleep(Duration::from_millis(100));
        let next = home.join(format!("busy-{run}"));
        package(&next, &format!("1.0.{run}"), true);
        let reason = match run % 3 {
            0 => {
                lineup(home, &["apps", "disable", ID]);
                "app_disabled"
            }
            1 => {
                install(home, "upgrade", &next);
                "app_upgraded"
            }
            _ => {
                lineup(home, &["apps", "remove", ID]);
                "app_removed"
            }
        };
        // From the moment the change is committed (the command has returned).
        let start = Instant::now();
        let Some((at, event)) = host.wait_for(Duration::from_secs(30), closed(&instance)) else {
            panic!(
                "run {run}: no close; stderr:\n{}",
                host.stderr.lock().unwrap()
            );
        };
        assert_eq!(
            event["payload"]["data"]["reason"], reason,
            "run {run}: {event}"
        );
        took.push(at.duration_since(start));
        match run % 3 {
            0 => {
                lineup(home, &["apps", "enable", ID]);
            }
            1 => {}
            _ => {
                lineup(home, &["apps", "forget", ID]);
                install(home, "install", &next);
            }
        }
    }
    // A rollback: the newer version goes, and its Surface with it (reason `app_upgraded`).
    let newer = home.join("busy-21");
    package(&newer, "1.0.21", true);
    install(home, "upgrade", &newer);
    host.send(&by_id("o-rollback", "busy-rollback"));
    host.expect("the busy page's first event", shown("busy-rollback"));
    std::thread::sleep(Duration::from_millis(100));
    lineup(home, &["apps", "rollback", ID]);
    let start = Instant::now();
    let Some((at, event)) = host.wait_for(Duration::from_secs(30), closed("busy-rollback")) else {
        panic!(
            "rollback: no close; stderr:\n{}",
            host.stderr.lock().unwrap()
        );
    };
    assert_eq!(
        event["payload"]["data"]["reason"], "app_upgraded",
        "{event}"
    );
    took.push(at.duration_since(start));
    let ms: Vec<u128> = took.iter().map(Duration::as_millis).collect();
    eprintln!("revoked Surface closed after (ms): {ms:?}");
    let late = took.iter().filter(|d| **d > Duration::from_secs(2)).count();
    assert_eq!(late, 0, "{late} of 21 closed later than 2 s: {ms:?}");
}

#[test]
fn r_inv_1_a_plain_host_sends_the_inventory_first_and_uses_an_existing_default_data_dir() {
    require_display();
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    // No data directory: the inventory still comes first, lists nothing, and none is created.
    let mut host = StdioHost::start(home, &["--conversation", "c1"]);
    host.expect("the inventory", is("client.inventory"));
    host.expect("app.list", is("app.list"));
    let types: Vec<Value> = host.seen.iter().map(|(_, v)| v["type"].clone()).collect();
    assert_eq!(types, ["lineup.v1.client.inventory", "lineup.v1.app.list"]);
    assert_eq!(host.seen[0].1["payload"]["applications"], json!([]));
    assert_eq!(host.seen[0].1["payload"]["capabilities"], json!([]));
    // An app.call is answered `unsupported` with capabilities off.
    host.send(&envelope(
        "c1",
        "app.call",
        json!({"call_id": "k1", "capability": "clipboard.write", "reason": "r",
               "expires_at": "2099-01-01T00:00:00Z", "arguments": {}}),
    ));
    let result = host.expect("the call's result", is("app.result"));
    assert_eq!(result["payload"]["status"], "unsupported", "{result}");
    host.stop();
    assert!(
        !home.join("data/lineup").exists(),
        "a plain host created a data directory"
    );

    // The default data directory exists (an app installed there): a plain host lists the app
    // and opens it by id.
    package(&home.join("v1"), "1.0.0", false);
    install(home, "install", &home.join("v1"));
    let mut host = StdioHost::start(home, &[]);
    host.send(&by_id("o1", "s1"));
    let first = host.expect("the inventory", |_| true);
    assert_eq!(first["type"], "lineup.v1.client.inventory", "{first}");
    assert_eq!(first["payload"]["applications"][0]["id"], ID, "{first}");
    host.expect("the app's page", shown("s1"));
}

/// `app.call` of `capability` with `tag`, as call `call_id`.
fn call(msg: &str, call_id: &str, capability: &str) -> String {
    envelope(
        msg,
        "app.call",
        json!({"call_id": call_id, "capability": capability, "reason": "test",
               "expires_at": "2099-01-01T00:00:00Z", "arguments": {"tag": call_id}}),
    )
}

fn result_of(call_id: &str) -> impl Fn(&Value) -> bool + '_ {
    move |v| is("app.result")(v) && v["payload"]["call_id"] == call_id
}

/// The audit records of `call_id` with a decision, as (decision, decision_source).
fn decisions(home: &Path, data: &str, call_id: &str) -> Vec<(String, String)> {
    lineup(home, &["audit", "export", "--data-dir", data])
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["call_id"] == call_id && r["decision"] != "none")
        .map(|r| {
            (
                r["decision"].as_str().unwrap_or_default().to_owned(),
                r["decision_source"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

#[test]
fn r_ses_1_an_unvouched_always_is_listed_revocable_by_another_process_and_gone_at_exit() {
    require_display();
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let data = home.join("store");
    let data = data.to_str().unwrap();
    let count = home.join("count");
    let start = |home: &Path| {
        StdioHost::start(
            home,
            &[
                "--conversation",
                "c1",
                "--data-dir",
                data,
                "--dangerous-auto-consent",
                "allow-always",
                "--dangerous-test-capability",
                count.to_str().unwrap(),
            ],
        )
    };
    let mut host = start(home);
    host.send(&call("m1", "k1", "test.confirm"));
    assert_eq!(
        host.expect("k1", result_of("k1"))["payload"]["status"],
        "completed"
    );
    // The "always" given without --agent-id is listed, under this process's unvouched identity.
    let grants: Value = serde_json::from_str(&lineup(
        home,
        &["grants", "list", "--json", "--data-dir", data],
    ))
    .unwrap();
    let agent = grants[0]["agent"].as_str().unwrap().to_owned();
    assert!(
        agent.starts_with("~unvouched/") && agent.ends_with("/c1"),
        "{grants}"
    );
    assert_eq!(grants[0]["capability"], "test.confirm");
    // It decides the next call (no prompt)…
    host.send(&call("m2", "k2", "test.confirm"));
    host.expect("k2", result_of("k2"));
    assert_eq!(
        decisions(home, data, "k2"),
        [("allowed".to_owned(), "remembered_grant".to_owned())]
    );
    // …until another process revokes it: the next call asks again.
    lineup(
        home,
        &["grants", "revoke", "--agent", &agent, "--data-dir", data],
    );
    host.send(&call("m3", "k3", "test.confirm"));
    host.expect("k3", result_of("k3"));
    let k3 = decisions(home, data, "k3");
    assert!(k3.iter().any(|(_, source)| source == "prompt"), "{k3:?}");
    // At exit its grants go.
    host.stop();
    let left = lineup(home, &["grants", "list", "--json", "--data-dir", data]);
    assert_eq!(left.trim(), "[]", "{left}");

    // A host that is killed leaves them; the next host deletes them (their lease is free).
    let mut host = start(home);
    host.send(&call("m4", "k4", "test.confirm"));
    host.expect("k4", result_of("k4"));
    let before = lineup(home, &["grants", "list", "--json", "--data-dir", data]);
    assert_ne!(before.trim(), "[]");
    drop(host);
    let next = start(home);
    std::thread::sleep(Duration::from_secs(1));
    let after = lineup(home, &["grants", "list", "--json", "--data-dir", data]);
    // Only the new host's (none yet) remain.
    assert_eq!(after.trim(), "[]", "{after}");
    drop(next);
}

#[test]
fn r_inv_4_a_capability_offered_before_a_restart_and_gone_after_is_revoked_for_that_agent_only() {
    require_display();
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let data = home.join("store");
    let data = data.to_str().unwrap();
    let count = home.join("count");
    let as_agent = |agent: &str, offer: bool| {
        let mut args = vec![
            "--conversation",
            "c1",
            "--data-dir",
            data,
            "--agent-id",
            agent,
        ];
        if offer {
            args.extend(["--dangerous-test-capability", count.to_str().unwrap()]);
        }
        StdioHost::start(home, &args)
    };
    // Offered to alice in a first process.
    let mut host = as_agent("a1", true);
    let inventory = host.expect("the inventory", is("client.inventory"));
    assert!(inventory.to_string().contains("test.count"), "{inventory}");
    host.stop();
    // Restarted without it: alice's call is `revoked`…
    let mut host = as_agent("a1", false);
    host.send(&call("m1", "k1", "test.count"));
    let result = host.expect("k1", result_of("k1"));
    assert_eq!(result["payload"]["status"], "unsupported", "{result}");
    assert_eq!(result["payload"]["error"]["code"], "revoked", "{result}");
    // …and a capability never offered is plain `unsupported`.
    host.send(&call("m2", "k2", "test.never"));
    let never = host.expect("k2", result_of("k2"));
    assert_eq!(never["payload"]["status"], "unsupported", "{never}");
    assert!(never["payload"]["error"].is_null(), "{never}");
    host.stop();
    // To another agent, withdrawn stays identical to unknown (R-ENV-5).
    let mut host = StdioHost::start(
        home,
        &[
            "--conversation",
            "c1",
            "--data-dir",
            data,
            "--agent-id",
            "b2",
        ],
    );
    let line = envelope(
        "m3",
        "app.call",
        json!({"call_id": "k3", "capability": "test.count", "reason": "test",
               "expires_at": "2099-01-01T00:00:00Z", "arguments": {"tag": "k3"}}),
    )
    .replace(r#""id":"a1""#, r#""id":"b2""#);
    host.send(&line);
    let other = host.expect("k3", result_of("k3"));
    assert_eq!(other["payload"]["status"], "unsupported", "{other}");
    assert!(other["payload"]["error"].is_null(), "{other}");
}

/// The capability names of an inventory.
fn listed(inventory: &Value) -> Vec<String> {
    inventory["payload"]["capabilities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn r_inv_4_lineup_capabilities_hide_and_withdraw_reach_a_running_host_with_a_new_inventory() {
    require_display();
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let data = home.join("store");
    let data = data.to_str().unwrap();
    let count = home.join("count");
    let start = || {
        StdioHost::start(
            home,
            &[
                "--conversation",
                "c1",
                "--data-dir",
                data,
                "--agent-id",
                "a1",
                "--dangerous-test-capability",
                count.to_str().unwrap(),
            ],
        )
    };
    let mut host = start();
    let first = host.expect("the inventory", is("client.inventory"));
    assert_eq!(listed(&first), ["test.confirm", "test.count"]);
    let revision = |v: &Value| v["payload"]["revision"].as_str().unwrap().to_owned();
    let mut seen = vec![revision(&first)];
    let mut next_inventory = |host: &mut StdioHost, what: &str| {
        let inventory = host.expect(what, is("client.inventory"));
        let r = revision(&inventory);
        assert!(!seen.contains(&r), "revision {r} reused");
        seen.push(r);
        inventory
    };

    // Hidden from a1: a new inventory without it, and a call is `revoked`.
    lineup(
        home,
        &[
            "capabilities",
            "hide",
            "--agent",
            "a1",
            "test.count",
            "--data-dir",
            data,
        ],
    );
    let hidden = next_inventory(&mut host, "the inventory after hide");
    assert_eq!(listed(&hidden), ["test.confirm"]);
    host.send(&call("m1", "k1", "test.count"));
    let result = host.expect("k1", result_of("k1"));
    assert_eq!(result["payload"]["error"]["code"], "revoked", "{result}");
    // Shown again: listed, and it runs.
    lineup(
        home,
        &[
            "capabilities",
            "show",
            "--agent",
            "a1",
            "test.count",
            "--data-dir",
            data,
        ],
    );
    let shown_again = next_inventory(&mut host, "the inventory after show");
    assert_eq!(listed(&shown_again), ["test.confirm", "test.count"]);
    host.send(&call("m2", "k2", "test.count"));
    let ran = host.expect("k2", result_of("k2"));
    assert_eq!(ran["payload"]["status"], "completed", "{ran}");

    // Withdrawn from everyone: gone from the inventory, `revoked`, and never offered by a host
    // started later.
    lineup(
        home,
        &[
            "capabilities",
            "withdraw",
            "test.confirm",
            "--data-dir",
            data,
        ],
    );
    let withdrawn = next_inventory(&mut host, "the inventory after withdraw");
    assert_eq!(listed(&withdrawn), ["test.count"]);
    host.send(&call("m3", "k3", "test.confirm"));
    let result = host.expect("k3", result_of("k3"));
    assert_eq!(result["payload"]["error"]["code"], "revoked", "{result}");
    host.stop();
    let mut host = start();
    let restarted = host.expect("the inventory after a restart", is("client.inventory"));
    assert_eq!(listed(&restarted), ["test.count"]);
    host.stop();
    let policy = lineup(
        home,
        &["capabilities", "list", "--json", "--data-dir", data],
    );
    assert!(
        policy.contains(r#""agent":null,"capability":"test.confirm""#),
        "{policy}"
    );
    // Restored: a host started from then on offers it again.
    lineup(
        home,
        &[
            "capabilities",
            "restore",
            "test.confirm",
            "--data-dir",
            data,
        ],
    );
    let mut host = start();
    let restored = host.expect("the inventory after restore", is("client.inventory"));
    assert_eq!(listed(&restored), ["test.confirm", "test.count"]);
}

#[test]
fn r_inv_3_the_inventory_lists_only_apps_the_bundle_policy_opens() {
    require_display();
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    package(&home.join("v1"), "1.0.0", false);
    install(home, "install", &home.join("v1"));
    for (policy, listed) in [
        ("allow", true),
        ("require-integrity", true),
        ("app-center-only", true),
        ("signed-only", false),
    ] {
        let mut host = StdioHost::start(home, &["--conversation", "c1", "--bundle-policy", policy]);
        let inventory = host.expect("the inventory", is("client.inventory"));
        let apps = inventory["payload"]["applications"]
            .as_array()
            .unwrap()
            .len();
        assert_eq!(apps == 1, listed, "{policy}: {inventory}");
        // What is listed opens; what is not listed is refused.
        host.send(&by_id("o1", "s1"));
        let answer = host.expect("the open's outcome", |v| {
            shown("s1")(v) || error_for("o1")(v)
        });
        assert_eq!(shown("s1")(&answer), listed, "{policy}: {answer}");
        host.stop();
    }
}
