//! Crash safety: child processes append audit records, call records and revisions in a loop and
//! are killed with SIGKILL at random moments; every record a child reported committed must be
//! there afterwards, the file must pass `integrity_check` and the chain must verify.
//!
//! The child is this test binary run again as `crash_child --exact --ignored` with
//! `LINEUP_STORE_CRASH_CHILD` set; it prints one line after each commit, so a line on the pipe
//! means the commit had returned. `crash_child` is `#[ignore]`d, so that a plain `cargo test`
//! never counts it as a test that passed; run by hand (`--ignored`) without the parent's
//! environment it fails, since on its own it checks nothing.
//!
//! SIGKILL ends the process, not the machine: this shows that no acknowledged record is lost
//! or torn when a host dies at any point. Losing power is what `synchronous=FULL` is for, and
//! is beyond a test.

#![cfg(unix)]
// A child reports its commits on stdout, the parent its numbers on stderr; helpers unwrap.
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::unwrap_used)]

use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::hash::BuildHasher;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use lineup_store::{
    AuditEntry, CallKey, CallOutcome, CallState, NewCall, Sha256Hex, Store, DB_FILE,
};

const CHILD_ENV: &str = "LINEUP_STORE_CRASH_CHILD";
const TAG_ENV: &str = "LINEUP_STORE_CRASH_TAG";
/// The signal `Child::kill` sends on Unix.
const SIGKILL: i32 = 9;

/// The child's loop, run only as a child process of
/// `sigkill_at_random_moments_loses_no_committed_record`: it checks nothing itself.
#[test]
#[ignore = "the child process of sigkill_at_random_moments_loses_no_committed_record, which runs it"]
fn crash_child() {
    let Some(dir) = std::env::var_os(CHILD_ENV) else {
        panic!(
            "crash_child is the child process of sigkill_at_random_moments_loses_no_committed_record \
             and checks nothing on its own: run that test instead"
        );
    };
    let tag = std::env::var(TAG_ENV).unwrap();
    let mut out = std::io::stdout().lock();
    // The harness may have written "test crash_child ... " without a newline.
    writeln!(out).unwrap();
    let store = Store::open(Path::new(&dir)).unwrap();
    let started = Instant::now();
    // Bounded, so that a child whose parent is gone stops by itself.
    for i in 0..50_000u32 {
        if started.elapsed() > Duration::from_secs(60) {
            break;
        }
        let id = format!("{tag}-{i}");
        let record = store.audit().append(&entry(&id)).unwrap();
        writeln!(out, "audit {} {}", record.seq, record.digest).unwrap();
        out.flush().unwrap();

        let key = CallKey::new("crash", &id);
        store
            .calls()
            .insert(&NewCall {
                key: key.clone(),
                capability: "test.count".into(),
                version: "1".into(),
                args_digest: Sha256Hex::of(id.as_bytes()),
            })
            .unwrap();
        store.calls().advance(&key, CallState::Running).unwrap();
        writeln!(out, "running {id}").unwrap();
        out.flush().unwrap();
        store.calls().finish(&key, &outcome(&id)).unwrap();
        writeln!(out, "finished {id}").unwrap();
        out.flush().unwrap();

        let revision = store.revisions().next().unwrap();
        writeln!(out, "revision {}", revision.number()).unwrap();
        out.flush().unwrap();
    }
}

fn entry(id: &str) -> AuditEntry {
    AuditEntry {
        conversation_id: "crash".into(),
        call_id: id.into(),
        agent: Some("agent-crash".into()),
        capability: "test.count".into(),
        version: "1".into(),
        risk: "display_only".into(),
        args_digest: Sha256Hex::of(id.as_bytes()),
        decision: "allowed".into(),
        decision_source: "policy".into(),
        status: "completed".into(),
        detail: Default::default(),
    }
}

fn outcome(id: &str) -> CallOutcome {
    CallOutcome {
        status: "completed".into(),
        result: Some(format!("{{\"id\":\"{id}\"}}")),
        message: None,
        error: None,
    }
}

/// What the children reported committed.
#[derive(Default)]
struct Reported {
    /// Audit sequence number → digest.
    audit: HashMap<u64, String>,
    running: Vec<String>,
    finished: Vec<String>,
    max_revision: u64,
}

fn spawn_child(dir: &Path, tag: &str) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "crash_child",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, dir)
        .env(TAG_ENV, tag)
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(dir.join(format!("{tag}.stderr"))).unwrap())
        .spawn()
        .unwrap()
}

/// Reads a child's lines until its pipe closes; a torn last line (no newline) is not a report.
/// The first complete `audit` line is also announced on `first`, so the parent can wait for
/// the child to be writing.
fn collect(child: &mut Child, first: mpsc::Sender<()>) -> thread::JoinHandle<Vec<String>> {
    let stdout = child.stdout.take().unwrap();
    thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut lines = Vec::new();
        let mut line = String::new();
        while reader.read_line(&mut line).unwrap_or(0) > 0 {
            if line.ends_with('\n') {
                if line.starts_with("audit ") {
                    let _ = first.send(());
                }
                lines.push(line.trim_end().to_owned());
            }
            line.clear();
        }
        lines
    })
}

fn random_below(state: &RandomState, n: u64, salt: u64) -> u64 {
    state.hash_one(salt) % n
}

#[test]
fn sigkill_at_random_moments_loses_no_committed_record() {
    let dir = tempfile::tempdir().unwrap();
    let random = RandomState::new();
    let mut reported = Reported::default();
    const ROUNDS: u64 = 8;
    let mut kills = 0;
    for round in 0..ROUNDS {
        // Two hosts on one data directory, killed at different random moments.
        let mut children: Vec<_> = ["a", "b"]
            .iter()
            .map(|name| {
                let mut child = spawn_child(dir.path(), &format!("r{round}{name}"));
                let (tx, first) = mpsc::channel();
                let lines = collect(&mut child, tx);
                (child, lines, first)
            })
            .collect();
        for (i, (child, _, first)) in children.iter_mut().enumerate() {
            // After round 0, a child is killed only once it is writing, so that every round
            // kills in the middle of the loop however slow the machine is; round 0 kills at any
            // moment, perhaps before the store or its schema exists.
            if round > 0 && first.recv_timeout(Duration::from_secs(60)).is_err() {
                let status = child.wait().unwrap();
                let name = if i == 0 { "a" } else { "b" };
                let stderr =
                    std::fs::read_to_string(dir.path().join(format!("r{round}{name}.stderr")))
                        .unwrap_or_default();
                panic!("child r{round}{name} never committed ({status}):\n{stderr}");
            }
            let wait = random_below(&random, 300, round * 2 + i as u64);
            thread::sleep(Duration::from_millis(wait));
            // `Child::kill` is SIGKILL on Unix.
            child.kill().unwrap();
            let status = child.wait().unwrap();
            // The child died of this kill, in the middle of its loop: it had neither failed
            // (a store error ends it with a panic) nor finished by itself.
            let name = if i == 0 { "a" } else { "b" };
            assert_eq!(
                status.signal(),
                Some(SIGKILL),
                "child r{round}{name} was not killed in its loop ({status}):\n{}",
                std::fs::read_to_string(dir.path().join(format!("r{round}{name}.stderr")))
                    .unwrap_or_default()
            );
            kills += 1;
        }
        for (_, lines, _) in children {
            for line in lines.join().unwrap() {
                let mut words = line.split(' ');
                match (words.next(), words.next(), words.next()) {
                    (Some("audit"), Some(seq), Some(digest)) => {
                        reported
                            .audit
                            .insert(seq.parse().unwrap(), digest.to_owned());
                    }
                    (Some("running"), Some(id), None) => reported.running.push(id.to_owned()),
                    (Some("finished"), Some(id), None) => reported.finished.push(id.to_owned()),
                    (Some("revision"), Some(n), None) => {
                        reported.max_revision = reported.max_revision.max(n.parse().unwrap());
                    }
                    _ => {} // the test harness's own lines
                }
            }
        }
        check(dir.path(), &reported);
    }
    // Every round after the first killed children that had committed at least once.
    assert!(reported.audit.len() as u64 >= 2 * (ROUNDS - 1));
    eprintln!(
        "{kills} kills; found every one of {} audit records and {} finished calls reported committed; highest revision {}",
        reported.audit.len(),
        reported.finished.len(),
        reported.max_revision
    );
}

fn check(dir: &Path, reported: &Reported) {
    if !dir.join(DB_FILE).exists() {
        assert!(reported.audit.is_empty());
        return;
    }
    let store = Store::open(dir).unwrap();
    assert_eq!(store.pragma("integrity_check").unwrap(), "ok");
    let head = store.audit().verify().unwrap();
    let mut lines = Vec::new();
    store.audit().export(&mut lines).unwrap();
    let stored: HashMap<u64, String> = String::from_utf8(lines)
        .unwrap()
        .lines()
        .map(|l| {
            let r: lineup_store::AuditRecord = serde_json::from_str(l).unwrap();
            (r.seq, r.digest.to_string())
        })
        .collect();
    assert_eq!(stored.len() as u64, head.count);
    for (seq, digest) in &reported.audit {
        assert_eq!(
            stored.get(seq),
            Some(digest),
            "audit record {seq} lost or changed"
        );
    }
    for id in &reported.running {
        let record = store
            .calls()
            .get(&CallKey::new("crash", id))
            .unwrap()
            .unwrap();
        assert!(
            matches!(record.state, CallState::Running | CallState::Finished),
            "{id} was reported running but is {}",
            record.state
        );
    }
    for id in &reported.finished {
        let record = store
            .calls()
            .get(&CallKey::new("crash", id))
            .unwrap()
            .unwrap();
        assert_eq!(record.outcome, Some(outcome(id)), "{id} lost its result");
    }
    // The next revision is beyond every one a child saw (the check itself takes one).
    assert!(store.revisions().next().unwrap().number() > reported.max_revision);
}
