//! `lineup grants` and `lineup audit` run as the real binary against a temporary data directory,
//! the store seeded and tampered with from the test, as a host and an attacker would.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::{Command, Output};

use lineup_store::{AuditEntry, AuditRecord, ChainVerifier, GrantKey, Sha256Hex, Store, DB_FILE};

fn lineup(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lineup"))
        .args(args)
        .arg("--data-dir")
        .arg(dir)
        .output()
        .unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

fn entry(i: usize) -> AuditEntry {
    AuditEntry {
        conversation_id: "conv-1".into(),
        call_id: format!("call-{i}"),
        agent: Some("agent-1".into()),
        capability: "clipboard.write".into(),
        version: "1".into(),
        risk: "user_confirmation".into(),
        args_digest: Sha256Hex::of(format!("{i}").as_bytes()),
        decision: "allowed".into(),
        decision_source: "prompt".into(),
        status: "completed".into(),
        detail: Default::default(),
    }
}

fn seeded_audit(records: usize) -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    for i in 1..=records {
        store.audit().append(&entry(i)).unwrap();
    }
    (dir, store)
}

fn tamper(dir: &Path, sql: &str) {
    let conn = rusqlite::Connection::open(dir.join(DB_FILE)).unwrap();
    conn.execute_batch(
        "DROP TRIGGER IF EXISTS audit_no_update; DROP TRIGGER IF EXISTS audit_no_delete;",
    )
    .unwrap();
    conn.execute_batch(sql).unwrap();
}

#[test]
fn grants_list_shows_a_table_json_and_one_agent() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let empty = lineup(dir.path(), &["grants", "list"]);
    assert!(empty.status.success(), "{}", stderr(&empty));
    assert_eq!(stdout(&empty), "no remembered grants\n");
    for (agent, capability) in [("agent-1", "clipboard.write"), ("agent-2", "app.open_url")] {
        store
            .grants()
            .insert(&GrantKey::new(agent, capability, "1"))
            .unwrap();
    }
    store
        .grants()
        .insert(&GrantKey::new("evil\u{1b}[2J", "clipboard.write", "1"))
        .unwrap();

    let table = stdout(&lineup(dir.path(), &["grants", "list"]));
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 4, "{table}");
    assert!(lines[0].starts_with("AGENT"), "{table}");
    assert!(lines[1].starts_with("agent-1  "), "{table}");
    assert!(lines[1].contains("clipboard.write"), "{table}");
    assert!(
        !table.contains('\u{1b}'),
        "control characters are escaped: {table:?}"
    );
    assert!(table.contains("\"evil\\u{1b}[2J\""), "{table}");

    let json = lineup(
        dir.path(),
        &["grants", "list", "--json", "--agent", "agent-2"],
    );
    let grants: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(grants.as_array().unwrap().len(), 1);
    assert_eq!(grants[0]["agent"], "agent-2");
    assert_eq!(grants[0]["capability"], "app.open_url");
    assert_eq!(grants[0]["version"], "1");
    assert!(grants[0]["granted_at"].as_str().unwrap().ends_with('Z'));

    let none = lineup(dir.path(), &["grants", "list", "--agent", "nobody"]);
    assert_eq!(stdout(&none), "no remembered grants for agent nobody\n");
}

#[test]
fn grants_revoke_counts_at_a_running_hosts_next_decision() {
    let dir = tempfile::tempdir().unwrap();
    // The "host": a connection held open for the whole test.
    let host = Store::open(dir.path()).unwrap();
    let v1 = GrantKey::new("agent-1", "clipboard.write", "1");
    let v2 = GrantKey::new("agent-1", "clipboard.write", "2");
    let url = GrantKey::new("agent-1", "app.open_url", "1");
    let other = GrantKey::new("agent-2", "clipboard.write", "1");
    for key in [&v1, &v2, &url, &other] {
        host.grants().insert(key).unwrap();
    }

    let revoke_v1 = [
        "grants",
        "revoke",
        "--agent",
        "agent-1",
        "--capability",
        "clipboard.write",
        "--version",
        "1",
    ];
    let exact = lineup(dir.path(), &revoke_v1);
    assert!(exact.status.success(), "{}", stderr(&exact));
    assert_eq!(
        stdout(&exact),
        "revoked 1 grant of agent agent-1 capability clipboard.write version 1\n"
    );
    assert!(
        !host.grants().contains(&v1).unwrap(),
        "the host sees the revoke"
    );
    assert!(host.grants().contains(&v2).unwrap());

    let again = lineup(dir.path(), &revoke_v1);
    assert!(again.status.success());
    assert!(
        stdout(&again).starts_with("no grant matched"),
        "{}",
        stdout(&again)
    );

    let all = lineup(dir.path(), &["grants", "revoke", "--agent", "agent-1"]);
    assert_eq!(stdout(&all), "revoked 2 grants of agent agent-1\n");
    assert!(!host.grants().contains(&v2).unwrap());
    assert!(!host.grants().contains(&url).unwrap());
    assert!(
        host.grants().contains(&other).unwrap(),
        "another agent keeps its grants"
    );

    // --version alone would revoke more than asked: refused as a usage error.
    let usage = lineup(
        dir.path(),
        &["grants", "revoke", "--agent", "agent-2", "--version", "1"],
    );
    assert_eq!(usage.status.code(), Some(2));
    assert!(host.grants().contains(&other).unwrap());
}

#[test]
fn audit_verify_prints_count_and_head_and_checks_a_kept_head() {
    let (dir, store) = seeded_audit(5);
    let ok = lineup(dir.path(), &["audit", "verify"]);
    assert!(ok.status.success(), "{}", stderr(&ok));
    let head = store.audit().verify().unwrap().head;
    let text = stdout(&ok);
    assert!(text.contains("audit chain ok: 5 records"), "{text}");
    assert!(text.contains(&format!("head: {head}")), "{text}");

    // More records later: the kept head is still in the chain.
    store.audit().append(&entry(6)).unwrap();
    let kept = lineup(
        dir.path(),
        &["audit", "verify", "--expect-head", head.as_str()],
    );
    assert!(kept.status.success(), "{}", stderr(&kept));
    assert!(stdout(&kept).contains("expected head found at record 5"));

    // The tail cut off: the chain alone still verifies, the kept head does not.
    tamper(dir.path(), "DELETE FROM audit WHERE seq >= 5");
    assert!(lineup(dir.path(), &["audit", "verify"]).status.success());
    let cut = lineup(
        dir.path(),
        &["audit", "verify", "--expect-head", head.as_str()],
    );
    assert_eq!(cut.status.code(), Some(1));
    assert!(
        stderr(&cut).contains("not in the audit chain"),
        "{}",
        stderr(&cut)
    );

    let malformed = lineup(dir.path(), &["audit", "verify", "--expect-head", "xyz"]);
    assert_eq!(malformed.status.code(), Some(2));
}

#[test]
fn audit_verify_fails_naming_an_edited_middle_record() {
    let (dir, _store) = seeded_audit(5);
    tamper(
        dir.path(),
        "UPDATE audit SET decision = 'denied' WHERE seq = 3",
    );
    let bad = lineup(dir.path(), &["audit", "verify"]);
    assert_eq!(bad.status.code(), Some(1));
    let err = stderr(&bad);
    assert!(err.contains("failed at record 3"), "{err}");
    assert!(err.contains("record 3 was altered"), "{err}");
    assert!(err.contains(DB_FILE), "names the file: {err}");
    assert!(stdout(&bad).is_empty());
}

#[test]
fn audit_verify_fails_naming_a_deleted_middle_record() {
    let (dir, _store) = seeded_audit(5);
    tamper(dir.path(), "DELETE FROM audit WHERE seq = 3");
    let bad = lineup(dir.path(), &["audit", "verify"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        stderr(&bad).contains("record 3 is missing"),
        "{}",
        stderr(&bad)
    );
}

#[test]
fn audit_export_writes_json_lines_to_stdout_or_a_file() {
    let (dir, store) = seeded_audit(4);
    let head = store.audit().verify().unwrap();
    let out = lineup(dir.path(), &["audit", "export"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let file = dir.path().join("audit.jsonl");
    let to_file = lineup(
        dir.path(),
        &["audit", "export", "--output", file.to_str().unwrap()],
    );
    assert!(to_file.status.success(), "{}", stderr(&to_file));
    assert!(to_file.stdout.is_empty());
    assert!(stderr(&to_file).contains("exported 4 audit records"));
    let written = std::fs::read_to_string(&file).unwrap();
    assert_eq!(written, stdout(&out));

    let mut verifier = ChainVerifier::new();
    for line in written.lines() {
        let record: AuditRecord = serde_json::from_str(line).unwrap();
        verifier.push(&record).unwrap();
    }
    assert_eq!(verifier.finish(), head);
}

#[test]
fn a_missing_store_is_exit_3_and_not_created() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("typo");
    for args in [
        &["audit", "verify"][..],
        &["audit", "export"],
        &["grants", "list"],
    ] {
        let out = lineup(&missing, args);
        assert_eq!(out.status.code(), Some(3), "{args:?}");
        assert!(
            stderr(&out).contains("no lineup store at"),
            "{}",
            stderr(&out)
        );
    }
    assert!(!missing.exists());
}

#[test]
fn the_default_data_dir_is_under_xdg_data_home() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("lineup")).unwrap();
    store.audit().append(&entry(1)).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_lineup"))
        .args(["audit", "verify"])
        .env("XDG_DATA_HOME", dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("audit chain ok: 1 record\n"));
}
