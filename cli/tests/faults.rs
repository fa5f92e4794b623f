//! Fault injection (#27 item 3), through real `lineup host --stdio` processes:
//!
//! - the host SIGKILLed at random points of a stream of `app.call`s and started again on the same
//!   data directory, every unanswered call sent again with some answered ones: no call runs
//!   twice, every answer the agent got is the answer to every repeat of its `call_id`, and after
//!   each kill `PRAGMA integrity_check` is `ok` and `lineup audit verify` passes with the head of
//!   the kill before (`LINEUP_FAULT_KILLS`, 20 by default; `bash scripts/faults.sh 200` for the
//!   figures of `docs/faults.md`);
//! - the data directory's disk full (a private tmpfs) and the database locked by another
//!   process: `failed` with `error.code` `not_recorded`, nothing run, nothing answered before
//!   lost, and calls run again once the space or the lock is back (a `not_recorded` call left
//!   no record: after a restart its `call_id` is a new call);
//! - a Surface's web process SIGKILLed or SIGSTOPped while its page is handling a patch: the
//!   Surface comes back in a new web process with that last state.
//!
//! The empty audit log's head is taken by `--expect-head` (it was refused before).
//!
//! Run with `xvfb-run -a cargo test -p lineup-cli --test faults`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr,
    missing_docs
)]

#[path = "support/fault_host.rs"]
mod fault_host;
#[path = "faults/kills.rs"]
mod kills;
#[path = "faults/storage.rs"]
mod storage;
#[path = "faults/web_process.rs"]
mod web_process;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use fault_host::{
    audit_verify, count_call, counts, envelope, integrity, is, result_of, signal, wait_gone,
    FaultHost, LINEUP,
};
use lineup_tests::procs::{web_processes_of, ProcessTable};
use serde_json::{json, Value};

/// How long any one expected envelope may take.
const STEP: Duration = Duration::from_secs(60);

fn require_display() {
    assert!(
        std::env::var_os("DISPLAY").is_some_and(|d| !d.is_empty()),
        "DISPLAY is not set: run under `xvfb-run -a`"
    );
}

/// xorshift64*: the kill points, delays and sleeps, from a seed printed for a rerun
/// (`LINEUP_FAULT_SEED`).
struct Rng(u64);

impl Rng {
    fn seeded() -> (Self, u64) {
        let seed = std::env::var("LINEUP_FAULT_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                let nanos = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos() as u64);
                nanos ^ (u64::from(std::process::id()) << 32)
            });
        (Self(seed | 1), seed)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// 0..n.
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// The host flags of every capability test: records in `data`, the counting capability on
/// `count`, the vouched agent `a1`, conversation `c1`.
fn host_args<'a>(data: &'a str, count: &'a str) -> [&'a str; 8] {
    [
        "--conversation",
        "c1",
        "--data-dir",
        data,
        "--agent-id",
        "a1",
        "--dangerous-test-capability",
        count,
    ]
}

/// Whether `head` is the empty audit log's (all zeros).
fn is_empty_head(head: &str) -> bool {
    head.bytes().all(|b| b == b'0')
}

/// How many records the audit log holds.
fn audit_count(data: &Path) -> u64 {
    let out = Command::new(LINEUP)
        .args(["audit", "verify", "--data-dir"])
        .arg(data)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("audit chain ok: "))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}
