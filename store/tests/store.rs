//! The store through its public API, against real database files: pragmas, revisions, call
//! records, grants, the audit chain and several connections at once.

// Helpers outside `#[test]` functions unwrap too.
#![allow(clippy::unwrap_used)]

use std::collections::HashSet;
use std::path::Path;
use std::sync::{Arc, Barrier};
use std::thread;

use lineup_store::{
    AuditEntry, CallKey, CallOutcome, CallState, ChainVerifier, GrantKey, Inserted, NewCall,
    RevokeScope, Sha256Hex, Store, StoreError, StoreOptions, CONTENDED_WAIT, DB_FILE,
};

fn entry(call_id: &str) -> AuditEntry {
    AuditEntry {
        conversation_id: "conv-1".into(),
        call_id: call_id.into(),
        agent: Some("agent-1".into()),
        capability: "clipboard.write".into(),
        version: "1".into(),
        risk: "user_confirmation".into(),
        args_digest: Sha256Hex::of(call_id.as_bytes()),
        decision: "allowed".into(),
        decision_source: "prompt".into(),
        status: "completed".into(),
        detail: Default::default(),
    }
}

fn new_call(call_id: &str) -> NewCall {
    NewCall {
        key: CallKey::new("conv-1", call_id),
        capability: "clipboard.write".into(),
        version: "1".into(),
        args_digest: Sha256Hex::of(b"{\"text\":\"hi\"}"),
    }
}

fn completed() -> CallOutcome {
    CallOutcome {
        status: "completed".into(),
        result: Some(r#"{"ok":true}"#.into()),
        message: None,
        error: None,
    }
}

/// Changes the file behind the store's back, as someone with write access could: the
/// append-only triggers go first.
fn tamper(dir: &Path, sql: &str) {
    let conn = rusqlite::Connection::open(dir.join(DB_FILE)).unwrap();
    conn.execute_batch(
        "DROP TRIGGER IF EXISTS audit_no_update; DROP TRIGGER IF EXISTS audit_no_delete;",
    )
    .unwrap();
    conn.execute_batch(sql).unwrap();
}

fn store_with_audit(records: usize) -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    for i in 1..=records {
        store.audit().append(&entry(&format!("k{i}"))).unwrap();
    }
    (dir, store)
}

#[test]
fn pragmas_read_back_wal_synchronous_full_and_busy_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    assert_eq!(store.pragma("journal_mode").unwrap(), "wal");
    // 2 is FULL.
    assert_eq!(store.pragma("synchronous").unwrap(), "2");
    assert_eq!(store.pragma("busy_timeout").unwrap(), "10000");
    assert_eq!(store.pragma("integrity_check").unwrap(), "ok");
    assert!(store.pragma("writable_schema").is_err());
    // WAL is a property of the file: a plain connection sees it too.
    let conn = rusqlite::Connection::open(dir.path().join(DB_FILE)).unwrap();
    let mode: String = conn
        .pragma_query_value(None, "journal_mode", |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
}

#[test]
fn the_data_directory_is_created_on_first_run_and_open_existing_does_not_create() {
    let dir = tempfile::tempdir().unwrap();
    let nested = dir.path().join("a/b/lineup");
    let err = Store::open_existing(&nested).unwrap_err();
    assert!(matches!(err, StoreError::NotFound { .. }), "{err}");
    assert!(err.to_string().contains("a/b/lineup"), "{err}");
    assert!(!nested.exists());
    drop(Store::open(&nested).unwrap());
    assert!(nested.join(DB_FILE).is_file());
    Store::open_existing(&nested).unwrap();
}

#[test]
fn revision_is_monotonic_across_reopen_and_two_connections() {
    let dir = tempfile::tempdir().unwrap();
    let mut seen = HashSet::new();
    let mut last = 0;
    for _ in 0..3 {
        let a = Store::open(dir.path()).unwrap();
        let b = Store::open(dir.path()).unwrap();
        for i in 0..10 {
            let r = if i % 2 == 0 { &a } else { &b }.revisions().next().unwrap();
            assert!(r.number() > last, "{r} after {last}");
            last = r.number();
            assert!(seen.insert(r.as_str().to_owned()), "{r} returned twice");
        }
    }
    assert_eq!(last, 30);
}

#[test]
fn a_new_database_starts_a_new_revision_series() {
    let one = tempfile::tempdir().unwrap();
    let two = tempfile::tempdir().unwrap();
    let a = Store::open(one.path()).unwrap().revisions().next().unwrap();
    let b = Store::open(two.path()).unwrap().revisions().next().unwrap();
    assert_eq!((a.number(), b.number()), (1, 1));
    assert_ne!(a, b, "the epoch tells them apart");
    assert_eq!(a.epoch().len(), 16);
}

#[test]
fn insert_if_absent_gives_exactly_one_new_record_to_racing_connections() {
    let dir = tempfile::tempdir().unwrap();
    drop(Store::open(dir.path()).unwrap());
    let barrier = Arc::new(Barrier::new(4));
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let path = dir.path().to_owned();
            let barrier = barrier.clone();
            thread::spawn(move || {
                let store = Store::open(&path).unwrap();
                barrier.wait();
                store.calls().insert(&new_call("same")).unwrap()
            })
        })
        .collect();
    let results: Vec<Inserted> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    let new = results
        .iter()
        .filter(|r| matches!(r, Inserted::New(_)))
        .count();
    assert_eq!(new, 1, "{results:?}");
    for r in &results {
        assert_eq!(r.record().state, CallState::Received);
    }
}

#[test]
fn a_repeated_key_returns_the_stored_record_with_its_own_capability_and_digest() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    store.calls().insert(&new_call("k")).unwrap();
    let mut other = new_call("k");
    other.capability = "app.open_url".into();
    other.args_digest = Sha256Hex::of(b"other");
    let Inserted::Existing(record) = store.calls().insert(&other).unwrap() else {
        panic!("expected the existing record");
    };
    // The caller compares these to refuse a reused call_id.
    assert_eq!(record.capability, "clipboard.write");
    assert_eq!(record.args_digest, new_call("k").args_digest);
}

#[test]
fn only_one_connection_may_mark_a_call_running() {
    let dir = tempfile::tempdir().unwrap();
    let a = Store::open(dir.path()).unwrap();
    let b = Store::open(dir.path()).unwrap();
    let key = new_call("k").key;
    a.calls().insert(&new_call("k")).unwrap();
    a.calls().advance(&key, CallState::AwaitingConsent).unwrap();
    let running = a.calls().advance(&key, CallState::Running).unwrap();
    assert_eq!(running.state, CallState::Running);
    let err = b.calls().advance(&key, CallState::Running).unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::InvalidTransition {
                from: CallState::Running,
                to: CallState::Running,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("call 'k'"), "{err}");
    // Backwards and to finished are refused too.
    assert!(a.calls().advance(&key, CallState::AwaitingConsent).is_err());
    assert!(a.calls().advance(&key, CallState::Finished).is_err());
    let missing = CallKey::new("conv-1", "nope");
    assert!(matches!(
        a.calls().advance(&missing, CallState::Running),
        Err(StoreError::CallNotFound { .. })
    ));
}

#[test]
fn a_finished_call_keeps_its_result_and_cannot_finish_twice() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let key = new_call("k").key;
    store.calls().insert(&new_call("k")).unwrap();
    store.calls().advance(&key, CallState::Running).unwrap();
    let finished = store.calls().finish(&key, &completed()).unwrap();
    assert_eq!(finished.state, CallState::Finished);
    assert_eq!(finished.outcome, Some(completed()));
    drop(store);
    let store = Store::open(dir.path()).unwrap();
    let Inserted::Existing(again) = store.calls().insert(&new_call("k")).unwrap() else {
        panic!("expected the stored record");
    };
    assert_eq!(again.outcome, Some(completed()));
    assert!(matches!(
        store.calls().finish(&key, &completed()),
        Err(StoreError::InvalidTransition { .. })
    ));
}

#[test]
fn a_result_that_is_not_json_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let key = new_call("k").key;
    store.calls().insert(&new_call("k")).unwrap();
    let mut bad = completed();
    bad.result = Some("{not json".into());
    let err = store.calls().finish(&key, &bad).unwrap_err();
    // Named by its length and digest, never quoted: it is the capability's result (#7 item 7).
    assert!(
        err.to_string().contains("result JSON '9 bytes, sha256 "),
        "{err}"
    );
    assert!(!format!("{err} {err:?}").contains("not json"), "{err:?}");
    bad.result = None;
    bad.error = Some("nope".into());
    assert!(store.calls().finish(&key, &bad).is_err());
    assert_eq!(
        store.calls().get(&key).unwrap().unwrap().state,
        CallState::Received
    );
}

#[test]
fn unfinished_lists_received_waiting_and_running_calls_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = Store::open(dir.path()).unwrap();
        for id in ["received", "waiting", "running", "done"] {
            store.calls().insert(&new_call(id)).unwrap();
        }
        store
            .calls()
            .advance(
                &CallKey::new("conv-1", "waiting"),
                CallState::AwaitingConsent,
            )
            .unwrap();
        store
            .calls()
            .advance(&CallKey::new("conv-1", "running"), CallState::Running)
            .unwrap();
        // Finished straight from received: a refusal.
        let refused = CallOutcome {
            status: "rejected".into(),
            result: None,
            message: Some("the user said no".into()),
            error: None,
        };
        store
            .calls()
            .finish(&CallKey::new("conv-1", "done"), &refused)
            .unwrap();
    }
    let store = Store::open(dir.path()).unwrap();
    let unfinished: Vec<_> = store
        .calls()
        .unfinished()
        .unwrap()
        .into_iter()
        .map(|r| (r.key.call_id, r.state))
        .collect();
    assert_eq!(
        unfinished,
        [
            ("received".to_owned(), CallState::Received),
            ("waiting".to_owned(), CallState::AwaitingConsent),
            ("running".to_owned(), CallState::Running),
        ]
    );
}

#[test]
fn a_revoke_in_another_connection_counts_at_the_next_is_granted() {
    let dir = tempfile::tempdir().unwrap();
    let host = Store::open(dir.path()).unwrap();
    let cli = Store::open(dir.path()).unwrap();
    let key = GrantKey::new("agent-1", "clipboard.write", "1");
    assert!(host.grants().insert(&key).unwrap());
    assert!(!host.grants().insert(&key).unwrap(), "already there");
    assert!(host.grants().contains(&key).unwrap());
    let before = host.data_version().unwrap();
    assert_eq!(
        cli.grants()
            .revoke(&RevokeScope::Exact(key.clone()))
            .unwrap(),
        1
    );
    assert_ne!(
        host.data_version().unwrap(),
        before,
        "another connection wrote"
    );
    assert!(!host.grants().contains(&key).unwrap());
}

#[test]
fn data_version_ignores_the_connections_own_writes() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let before = store.data_version().unwrap();
    store.revisions().next().unwrap();
    store
        .grants()
        .insert(&GrantKey::new("agent-1", "clipboard.write", "1"))
        .unwrap();
    assert_eq!(store.data_version().unwrap(), before);
}

#[test]
fn grants_are_listed_by_agent_and_revoked_by_scope() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    for (agent, capability, version) in [
        ("a", "clipboard.write", "1"),
        ("a", "clipboard.write", "2"),
        ("a", "app.open_url", "1"),
        ("b", "clipboard.write", "1"),
    ] {
        store
            .grants()
            .insert(&GrantKey::new(agent, capability, version))
            .unwrap();
    }
    let listed = |agent| -> Vec<String> {
        store
            .grants()
            .list(agent)
            .unwrap()
            .into_iter()
            .map(|g| format!("{} {} {}", g.key.agent, g.key.capability, g.key.version))
            .collect()
    };
    assert_eq!(
        listed(None),
        [
            "a app.open_url 1",
            "a clipboard.write 1",
            "a clipboard.write 2",
            "b clipboard.write 1"
        ]
    );
    assert_eq!(listed(Some("b")), ["b clipboard.write 1"]);
    let capability = RevokeScope::Capability {
        agent: "a".into(),
        capability: "clipboard.write".into(),
    };
    assert_eq!(store.grants().revoke(&capability).unwrap(), 2);
    assert_eq!(listed(Some("a")), ["a app.open_url 1"]);
    assert_eq!(
        store
            .grants()
            .revoke(&RevokeScope::Agent("a".into()))
            .unwrap(),
        1
    );
    assert_eq!(
        store
            .grants()
            .revoke(&RevokeScope::Agent("a".into()))
            .unwrap(),
        0
    );
    assert_eq!(listed(None), ["b clipboard.write 1"]);
}

#[test]
fn audit_records_chain_from_64_zeros() {
    let (_dir, store) = store_with_audit(3);
    let head = store.audit().verify().unwrap();
    assert_eq!(head.count, 3);
    let mut lines = Vec::new();
    store.audit().export(&mut lines).unwrap();
    let records: Vec<lineup_store::AuditRecord> = String::from_utf8(lines)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records[0].prev, Sha256Hex::zero());
    assert_eq!(records[1].prev, records[0].digest);
    assert_eq!(records[2].digest, head.head);
    assert!(records[0].time.ends_with('Z'), "{}", records[0].time);
}

#[test]
fn the_audit_table_refuses_updates_and_deletes() {
    let (dir, _store) = store_with_audit(2);
    let conn = rusqlite::Connection::open(dir.path().join(DB_FILE)).unwrap();
    let err = conn
        .execute("UPDATE audit SET status = 'x' WHERE seq = 1", [])
        .unwrap_err();
    assert!(err.to_string().contains("append-only"), "{err}");
    assert!(conn.execute("DELETE FROM audit WHERE seq = 2", []).is_err());
}

#[test]
fn verify_names_an_edited_record() {
    let (dir, store) = store_with_audit(5);
    tamper(
        dir.path(),
        "UPDATE audit SET decision = 'denied' WHERE seq = 3",
    );
    let err = store.audit().verify().unwrap_err();
    assert!(
        matches!(err, StoreError::AuditRecordAltered { seq: 3 }),
        "{err}"
    );
    assert_eq!(err.audit_seq(), Some(3));
}

#[test]
fn verify_names_an_edited_agent_set_to_null() {
    let (dir, store) = store_with_audit(2);
    tamper(dir.path(), "UPDATE audit SET agent = NULL WHERE seq = 1");
    assert_eq!(store.audit().verify().unwrap_err().audit_seq(), Some(1));
}

#[test]
fn verify_names_a_deleted_middle_record() {
    let (dir, store) = store_with_audit(5);
    tamper(dir.path(), "DELETE FROM audit WHERE seq = 3");
    let err = store.audit().verify().unwrap_err();
    assert!(
        matches!(err, StoreError::AuditRecordMissing { seq: 3, found: 4 }),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        "audit: record 3 is missing (the chain jumps to 4)"
    );
}

#[test]
fn verify_names_a_deleted_first_record() {
    let (dir, store) = store_with_audit(3);
    tamper(dir.path(), "DELETE FROM audit WHERE seq = 1");
    assert_eq!(store.audit().verify().unwrap_err().audit_seq(), Some(1));
}

#[test]
fn verify_names_a_broken_prev_link_even_with_a_recomputed_digest() {
    let (dir, store) = store_with_audit(4);
    // Someone edits record 2 and recomputes its own digest: its content is consistent again,
    // but record 3 no longer links to it.
    let mut lines = Vec::new();
    store.audit().export(&mut lines).unwrap();
    let mut second: lineup_store::AuditRecord =
        serde_json::from_str(String::from_utf8(lines).unwrap().lines().nth(1).unwrap()).unwrap();
    second.entry.status = "failed".into();
    let digest = second.compute_digest();
    tamper(
        dir.path(),
        &format!("UPDATE audit SET status = 'failed', digest = '{digest}' WHERE seq = 2"),
    );
    let err = store.audit().verify().unwrap_err();
    assert!(
        matches!(err, StoreError::AuditLinkBroken { seq: 3 }),
        "{err}"
    );
    // And a prev that is simply wrong.
    tamper(
        dir.path(),
        &format!(
            "UPDATE audit SET prev = '{}' WHERE seq = 2",
            Sha256Hex::of(b"x")
        ),
    );
    assert_eq!(store.audit().verify().unwrap_err().audit_seq(), Some(2));
}

#[test]
fn verify_names_a_digest_that_is_not_hex() {
    let (dir, store) = store_with_audit(2);
    tamper(dir.path(), "UPDATE audit SET digest = 'zz' WHERE seq = 2");
    assert!(matches!(
        store.audit().verify(),
        Err(StoreError::AuditRecordAltered { seq: 2 })
    ));
}

#[test]
fn a_cut_tail_verifies_and_only_the_kept_head_shows_it() {
    let (dir, store) = store_with_audit(4);
    let head = store.audit().verify().unwrap();
    tamper(dir.path(), "DELETE FROM audit WHERE seq = 4");
    let cut = store.audit().verify().unwrap();
    assert_eq!(cut.count, 3);
    assert_ne!(
        cut.head, head.head,
        "the head kept elsewhere no longer matches"
    );
}

#[test]
fn export_round_trips_through_json_lines_and_verifies_outside_the_store() {
    let (_dir, store) = store_with_audit(20);
    let mut odd = entry("odd");
    odd.agent = None;
    odd.conversation_id = "quote \" backslash \\ newline \n bidi \u{202e} émoji 😀".into();
    store.audit().append(&odd).unwrap();
    let head = store.audit().verify().unwrap();
    let mut out = Vec::new();
    assert_eq!(store.audit().export(&mut out).unwrap(), 21);
    let text = String::from_utf8(out).unwrap();
    assert_eq!(text.lines().count(), 21);
    let mut verifier = ChainVerifier::new();
    let mut last = None;
    for line in text.lines() {
        let record: lineup_store::AuditRecord = serde_json::from_str(line).unwrap();
        verifier.push(&record).unwrap();
        // Writing the parsed record again gives the same line.
        assert_eq!(record.line(), line);
        last = Some(record);
    }
    assert_eq!(verifier.finish(), head);
    assert_eq!(last.unwrap().entry, odd);
}

#[test]
fn two_connections_writing_at_once_never_see_database_is_locked() {
    let dir = tempfile::tempdir().unwrap();
    const WRITERS: usize = 3;
    const EACH: usize = 100;
    let barrier = Arc::new(Barrier::new(WRITERS));
    let threads: Vec<_> = (0..WRITERS)
        .map(|w| {
            let path = dir.path().to_owned();
            let barrier = barrier.clone();
            thread::spawn(move || {
                // Opening a new directory at once is part of the race: one migrates.
                barrier.wait();
                let store = Store::open(&path).unwrap();
                let mut revisions = Vec::new();
                for i in 0..EACH {
                    let id = format!("w{w}-{i}");
                    store.audit().append(&entry(&id)).unwrap();
                    store.calls().insert(&new_call(&id)).unwrap();
                    revisions.push(store.revisions().next().unwrap().number());
                    store
                        .grants()
                        .insert(&GrantKey::new(format!("agent-{w}"), &id, "1"))
                        .unwrap();
                }
                revisions
            })
        })
        .collect();
    let mut all = HashSet::new();
    for t in threads {
        let revisions = t.join().unwrap();
        assert!(revisions.windows(2).all(|w| w[0] < w[1]));
        all.extend(revisions);
    }
    assert_eq!(all.len(), WRITERS * EACH, "no revision returned twice");
    let store = Store::open(dir.path()).unwrap();
    assert_eq!(
        store.audit().verify().unwrap().count,
        (WRITERS * EACH) as u64
    );
    assert_eq!(store.grants().list(None).unwrap().len(), WRITERS * EACH);
    assert_eq!(store.pragma("integrity_check").unwrap(), "ok");
}

/// A process that keeps the write lock costs a host the busy timeout once, not at every write:
/// after a write gave up on the lock, the next ones wait only `CONTENDED_WAIT` and fail with the
/// same `database is locked`, changing nothing; once the lock is free a write succeeds and the
/// full timeout is back.
#[test]
fn after_a_write_gave_up_on_a_held_lock_the_next_ones_fail_fast_until_one_succeeds() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = StoreOptions::default();
    options.busy_timeout = std::time::Duration::from_secs(2);
    let store = Store::open_with(dir.path(), &options).unwrap();
    store.audit().append(&entry("before")).unwrap();
    assert_eq!(store.write_wait(), options.busy_timeout);

    // Another process's connection holds the lock.
    let other = rusqlite::Connection::open(dir.path().join(DB_FILE)).unwrap();
    other.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let started = std::time::Instant::now();
    let first = store.audit().append(&entry("first")).unwrap_err();
    let first_took = started.elapsed();
    assert!(first.to_string().contains("database is locked"), "{first}");
    assert!(first_took >= options.busy_timeout, "{first_took:?}");
    assert_eq!(store.write_wait(), CONTENDED_WAIT);
    for id in ["second", "third"] {
        let started = std::time::Instant::now();
        let error = store.calls().insert(&new_call(id)).unwrap_err();
        let took = started.elapsed();
        assert!(error.to_string().contains("database is locked"), "{error}");
        // Positive control for the bound: the first write waited the whole timeout.
        assert!(took < options.busy_timeout, "{id} waited {took:?}");
    }
    assert_eq!(store.write_wait(), CONTENDED_WAIT);

    // Released: the next write gets the lock and the full timeout is back.
    other.execute_batch("COMMIT").unwrap();
    store.audit().append(&entry("after")).unwrap();
    assert_eq!(store.write_wait(), options.busy_timeout);
    let verified = store.audit().verify().unwrap();
    assert_eq!(
        verified.count, 2,
        "only the writes that got the lock are kept"
    );
}

#[test]
fn a_store_can_move_to_another_thread() {
    fn send<T: Send>() {}
    send::<Store>();
    send::<StoreError>();
}

/// Logs reach journald (#7 item 7): `Debug` of a call's outcome, and of the record that holds
/// it, shows the result (a picked file's content, say) and the message as a length and a
/// digest, never in any form (raw, escaped, as a byte list, hex, base64).
#[test]
fn debug_of_a_call_outcome_never_prints_its_result_or_message() {
    const SECRET: &str = "zQ7\"secret-result-Ω";
    let result = serde_json::json!({ "name": "notes.txt", "content": SECRET }).to_string();
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let key = new_call("k").key;
    store.calls().insert(&new_call("k")).unwrap();
    store.calls().advance(&key, CallState::Running).unwrap();
    let outcome = CallOutcome {
        status: "completed".into(),
        result: Some(result.clone()),
        message: Some(format!("the value {SECRET:?} is too long")),
        error: None,
    };
    let record = store.calls().finish(&key, &outcome).unwrap();
    // Positive control: the record holds them.
    assert_eq!(record.outcome.as_ref(), Some(&outcome));
    let shown = [
        format!("{outcome:?}"),
        format!("{outcome:#?}"),
        format!("{record:?}"),
        format!("{record:#?}"),
    ];
    for text in &shown {
        assert!(text.contains("bytes: "), "a length is shown: {text}");
        for secret in [SECRET, result.as_str()] {
            assert_eq!(
                lineup_host_core::leaked_form(text, secret),
                None,
                "Debug printed the call's result: {text}"
            );
        }
        assert!(
            text.contains("completed"),
            "the status stays readable: {text}"
        );
    }
}
