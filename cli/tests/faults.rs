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

// ---------------------------------------------------------------------------------------------
// The kill loop.

/// What happened to a call the agent got no answer for before a kill, by its answer after the
/// restart and whether its handler had counted it before that restart.
const CLASSES: [(&str, &str); 5] = [
    (
        "stored_result",
        "completed before the kill, its answer lost with the process: a repeat gets the stored result, not a second run",
    ),
    (
        "run_on_retry",
        "not recorded before the kill (never read, or killed before its first record): run once, on the retry",
    ),
    (
        "outcome_unknown_ran",
        "running at the kill, its handler had counted: `failed` `outcome_unknown`, never run again",
    ),
    (
        "outcome_unknown_not_ran",
        "its `running` record written, killed before its handler counted: `failed` `outcome_unknown`, never run",
    ),
    (
        "cancelled",
        "received but not yet running at the kill: `cancelled`, never run",
    ),
];

/// What an `app.call` envelope is to the agent.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Send {
    /// A `call_id` never sent before.
    New,
    /// A call sent before and not answered yet.
    Again,
    /// A call answered before: the same answer must come back.
    Repeat,
}

/// The agent's side of the kill loop.
#[derive(Default)]
struct Agent {
    /// The first answer to each `call_id`: what every later repeat must get.
    acked: BTreeMap<String, Value>,
    /// Sent and unanswered, with their handler's sleep.
    pending: BTreeMap<String, u64>,
    /// Unanswered at some kill.
    interrupted: HashSet<String>,
    /// Every `call_id` sent, with its handler's sleep (a repeat carries the same arguments).
    sent_ids: HashMap<String, u64>,
    /// How many times each tag was counted when the current host started.
    at_start: HashMap<String, usize>,
    next_id: u64,
    /// Whether the current host's inventory was read.
    inventory: bool,
    envelopes_sent: u64,
    repeats_sent: u64,
    repeats_identical: u64,
    classes: BTreeMap<&'static str, u64>,
}

impl Agent {
    /// Takes one envelope the host wrote; `Err` on anything an exactly-once host never says.
    fn absorb(&mut self, v: &Value) -> Result<(), String> {
        if v.get("not_json").is_some() || is(v, "client.error") {
            return Err(format!("unexpected line from the host: {v}"));
        }
        if is(v, "client.inventory") {
            self.inventory = true;
        }
        if !is(v, "app.result") {
            return Ok(());
        }
        let payload = &v["payload"];
        let id = payload["call_id"].as_str().unwrap_or_default().to_owned();
        if let Some(first) = self.acked.get(&id) {
            if first != payload {
                return Err(format!(
                    "call {id} was answered {first} and now, after a repeat, {payload}"
                ));
            }
            self.repeats_identical += 1;
            return Ok(());
        }
        if self.pending.remove(&id).is_none() {
            return Err(format!("an answer to a call never sent: {v}"));
        }
        let status = payload["status"].as_str().unwrap_or_default();
        let code = payload["error"]["code"].as_str().unwrap_or_default();
        let counted_before = self.at_start.get(&id).copied().unwrap_or(0) > 0;
        let class = match (status, code) {
            ("completed", _) if !self.interrupted.contains(&id) => None,
            ("completed", _) if counted_before => Some("stored_result"),
            ("completed", _) => Some("run_on_retry"),
            ("failed", "outcome_unknown") if self.interrupted.contains(&id) => Some(if counted_before {
                "outcome_unknown_ran"
            } else {
                "outcome_unknown_not_ran"
            }),
            ("cancelled", _) if self.interrupted.contains(&id) && !counted_before => {
                Some("cancelled")
            }
            _ => {
                return Err(format!(
                    "call {id} (interrupted: {}, counted before this host: {counted_before}) was answered {payload}",
                    self.interrupted.contains(&id)
                ))
            }
        };
        if let Some(class) = class {
            *self.classes.entry(class).or_insert(0) += 1;
        }
        self.acked.insert(id, payload.clone());
        Ok(())
    }

    /// A new `call_id`, its handler sleeping now and then so that kills land while it runs.
    fn new_call(&mut self, rng: &mut Rng) -> (String, u64) {
        self.next_id += 1;
        let id = format!("k{:05}", self.next_id);
        let sleep = match rng.below(10) {
            0..=4 => 0,
            5..=7 => rng.below(100),
            _ => 100 + rng.below(300),
        };
        (id, sleep)
    }

    fn send(&mut self, host: &mut FaultHost, id: &str, sleep: u64, kind: Send) -> bool {
        if !host.send(&count_call(id, sleep)) {
            return false;
        }
        self.envelopes_sent += 1;
        match kind {
            Send::New => {
                self.sent_ids.insert(id.to_owned(), sleep);
                self.pending.insert(id.to_owned(), sleep);
            }
            Send::Again => {}
            Send::Repeat => self.repeats_sent += 1,
        }
        true
    }

    /// Reads what the host wrote until `until`, or until `done` holds.
    fn read_until(
        &mut self,
        host: &mut FaultHost,
        until: Instant,
        done: impl Fn(&Self) -> bool,
    ) -> Result<(), String> {
        while let Some(left) = until.checked_duration_since(Instant::now()) {
            if done(self) {
                return Ok(());
            }
            match host.next(left.min(Duration::from_millis(20))) {
                Some(v) => self.absorb(&v)?,
                None if host.exited().is_some() => return Ok(()),
                None => {}
            }
        }
        Ok(())
    }
}

/// The figures of one run of the kill loop.
#[derive(Debug, Default)]
struct Figures {
    seed: u64,
    kills: u64,
    kills_during_start: u64,
    calls_sent: u64,
    envelopes_sent: u64,
    executed: u64,
    executed_twice: u64,
    acknowledged: u64,
    acknowledged_kept: u64,
    repeats_sent: u64,
    repeats_identical: u64,
    interrupted: u64,
    classes: BTreeMap<&'static str, u64>,
    /// Count lines a kill cut (see [`kill_loop_counts`]), and of those the ones that could
    /// not be told to belong to one call.
    torn: u64,
    torn_unattributed: u64,
    /// Kills before the first host had created the database: nothing to check yet.
    before_store: u64,
    integrity_ok: u64,
    audit_ok: u64,
    audit_records: u64,
    processes_left: u64,
    seconds: f64,
}

impl Figures {
    fn print(&self) {
        println!("fault injection: SIGKILL at random points of a stream of app.calls");
        println!("  seed (LINEUP_FAULT_SEED)         {}", self.seed);
        println!(
            "  kills survived                   {} ({} while the host was starting)",
            self.kills, self.kills_during_start
        );
        println!("  calls sent (call_ids)            {}", self.calls_sent);
        println!("  app.call envelopes sent          {}", self.envelopes_sent);
        println!("  calls executed (count file)      {}", self.executed);
        println!("  calls executed twice             {}", self.executed_twice);
        println!(
            "  count lines cut by a kill        {} ({} not told to one call)",
            self.torn, self.torn_unattributed
        );
        println!(
            "  acknowledged results kept        {} of {}",
            self.acknowledged_kept, self.acknowledged
        );
        println!(
            "  repeats of answered call_ids     {} sent, {} answered identically",
            self.repeats_sent, self.repeats_identical
        );
        println!("  calls interrupted by a kill      {}", self.interrupted);
        for (class, meaning) in CLASSES {
            println!(
                "    {:<24} {:>5}  {meaning}",
                class,
                self.classes.get(class).copied().unwrap_or(0)
            );
        }
        let checked = self.kills + 1 - self.before_store;
        println!(
            "  integrity_check ok               {} of {checked} ({} kills before the database existed)",
            self.integrity_ok, self.before_store
        );
        println!(
            "  audit verify ok (--expect-head)  {} of {checked} ({} records at the end)",
            self.audit_ok, self.audit_records
        );
        println!("  processes left after a kill      {}", self.processes_left);
        println!("  wall time                        {:.1} s", self.seconds);
    }

    fn json(&self) -> Value {
        json!({
            "seed": self.seed.to_string(),
            "kills": self.kills,
            "kills_during_start": self.kills_during_start,
            "calls_sent": self.calls_sent,
            "envelopes_sent": self.envelopes_sent,
            "executed": self.executed,
            "executed_twice": self.executed_twice,
            "torn_count_lines": self.torn,
            "torn_count_lines_unattributed": self.torn_unattributed,
            "acknowledged": self.acknowledged,
            "acknowledged_kept": self.acknowledged_kept,
            "repeats_sent": self.repeats_sent,
            "repeats_identical": self.repeats_identical,
            "interrupted": self.interrupted,
            "interrupted_by_outcome": self.classes,
            "before_store": self.before_store,
            "integrity_ok": self.integrity_ok,
            "audit_ok": self.audit_ok,
            "audit_records": self.audit_records,
            "processes_left": self.processes_left,
            "seconds": self.seconds,
        })
    }
}

/// The count file of the kill loop, whose tags are `k` and five digits: how many times each tag
/// is in it, and the torn pieces. The test capability writes `tag\n` in one `write`, but a
/// SIGKILL can cut a write that crosses a page boundary of the file after its first page, so a
/// line may hold the start of a tag, then the next tag written: `k0k00042`. A line is cut at
/// each `k`; a piece shorter than a tag is torn.
fn kill_loop_counts(path: &Path) -> (HashMap<String, usize>, Vec<String>) {
    let mut counts = HashMap::new();
    let mut torn = Vec::new();
    let text = std::fs::read_to_string(path).unwrap_or_default();
    for line in text.lines() {
        let starts: Vec<usize> = line.match_indices('k').map(|(at, _)| at).collect();
        assert!(
            line.is_empty() || starts.first() == Some(&0),
            "a count line that starts with no tag: {line:?}"
        );
        for (i, at) in starts.iter().enumerate() {
            let piece = &line[*at..starts.get(i + 1).copied().unwrap_or(line.len())];
            if piece.len() == 6 {
                *counts.entry(piece.to_owned()).or_insert(0) += 1;
            } else {
                assert!(
                    piece.len() < 6,
                    "a count line with a strange piece: {line:?}"
                );
                torn.push(piece.to_owned());
            }
        }
    }
    (counts, torn)
}

#[test]
fn a_count_line_cut_by_a_kill_is_told_apart() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("count");
    std::fs::write(&path, "k00001\nk0k00002\nk00003k00004\nk").unwrap();
    let (counts, torn) = kill_loop_counts(&path);
    let mut tags: Vec<_> = counts.into_iter().collect();
    tags.sort();
    assert_eq!(
        tags,
        [
            ("k00001".to_owned(), 1),
            ("k00002".to_owned(), 1),
            ("k00003".to_owned(), 1),
            ("k00004".to_owned(), 1)
        ]
    );
    assert_eq!(torn, ["k0", "k"]);
}

/// The checks after each kill (and at the end): no tag counted twice, none of a call never
/// sent, `integrity_check` ok, the audit chain verifying and still holding `head`.
fn check_store(
    data: &Path,
    count: &Path,
    agent: &Agent,
    head: &mut Option<String>,
    figures: &mut Figures,
    when: &str,
) -> HashMap<String, usize> {
    let (mut counted, torn) = kill_loop_counts(count);
    // A torn line is a handler that had started counting when the host was killed: it belongs
    // to the one call unanswered at a kill whose `call_id` it begins, when there is one.
    figures.torn = torn.len() as u64;
    figures.torn_unattributed = 0;
    for fragment in &torn {
        let owners: Vec<&String> = agent
            .interrupted
            .iter()
            .filter(|id| id.starts_with(fragment.as_str()))
            .collect();
        assert!(
            !owners.is_empty(),
            "{when}: a torn count line of no call: {fragment:?}"
        );
        match owners.as_slice() {
            [id] => *counted.entry((*id).clone()).or_insert(0) += 1,
            _ => figures.torn_unattributed += 1,
        }
    }
    let twice: Vec<_> = counted.iter().filter(|(_, n)| **n > 1).collect();
    figures.executed_twice = twice.len() as u64;
    assert!(twice.is_empty(), "{when}: executed twice: {twice:?}");
    let strangers: Vec<_> = counted
        .keys()
        .filter(|t| !agent.sent_ids.contains_key(*t))
        .collect();
    assert!(
        strangers.is_empty(),
        "{when}: counted, never sent: {strangers:?}"
    );
    // A kill before the first host created the database leaves nothing to check; once it
    // exists, it must stay.
    if !data.join(lineup_store::DB_FILE).exists() && figures.integrity_ok == 0 {
        figures.before_store += 1;
        return counted;
    }
    let check = integrity(data);
    assert_eq!(check, "ok", "{when}: integrity_check");
    figures.integrity_ok += 1;
    match audit_verify(data, head.as_deref()) {
        Ok(new) => {
            // Every head is passed back, the empty log's too.
            *head = new.or(head.take());
            figures.audit_ok += 1;
        }
        Err(e) => panic!("{when}: lineup audit verify --expect-head {head:?}: {e}"),
    }
    counted
}

#[test]
fn sigkill_at_random_points_of_a_call_stream_never_runs_a_call_twice_nor_loses_an_answer() {
    require_display();
    let kills: u64 = std::env::var("LINEUP_FAULT_KILLS")
        .ok()
        .and_then(|k| k.parse().ok())
        .unwrap_or(20);
    let (mut rng, seed) = Rng::seeded();
    println!("kill loop: {kills} kills, LINEUP_FAULT_SEED={seed}");
    let started = Instant::now();
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let data = home.join("store");
    let count = home.join("count");
    let (data_s, count_s) = (data.to_str().unwrap(), count.to_str().unwrap());
    let mut agent = Agent::default();
    let mut figures = Figures {
        seed,
        ..Figures::default()
    };
    let mut head: Option<String> = None;

    for round in 1..=kills {
        let mut host = FaultHost::lineup(home, &host_args(data_s, count_s));
        let spawned = Instant::now();
        // Now and then the kill lands while the host starts (and finishes the records of the
        // last kill's calls); otherwise somewhere in the stream.
        let early = rng.chance(15);
        if !early {
            let inventory = host.until(
                STEP,
                |v| agent.absorb(v).unwrap(),
                |v| is(v, "client.inventory"),
            );
            assert!(
                inventory.is_some(),
                "round {round}: no inventory (exit: {:?})\n{}",
                host.exited(),
                host.log()
            );
        }
        let kill_at = if early {
            spawned + Duration::from_millis(rng.below(900))
        } else {
            Instant::now() + Duration::from_millis(rng.below(700))
        };
        // Every unanswered call again and a few answered ones again, in a random order, then
        // new ones.
        let mut stream: Vec<(String, u64, Send)> = agent
            .pending
            .iter()
            .take(24)
            .map(|(id, sleep)| (id.clone(), *sleep, Send::Again))
            .collect();
        let answered: Vec<String> = agent.acked.keys().cloned().collect();
        for _ in 0..3.min(answered.len()) {
            let id = &answered[rng.below(answered.len() as u64) as usize];
            stream.push((id.clone(), agent.sent_ids[id], Send::Repeat));
        }
        for i in (1..stream.len()).rev() {
            stream.swap(i, rng.below(i as u64 + 1) as usize);
        }
        let new = (2 + rng.below(9) as usize).min(28usize.saturating_sub(stream.len()));
        for _ in 0..new {
            let (id, sleep) = agent.new_call(&mut rng);
            stream.push((id, sleep, Send::New));
        }
        for (id, sleep, kind) in &stream {
            if Instant::now() >= kill_at {
                break;
            }
            assert!(
                agent.send(&mut host, id, *sleep, *kind),
                "round {round}: the host's stdin is closed\n{}",
                host.log()
            );
            let gap = Instant::now() + Duration::from_millis(rng.below(30));
            agent
                .read_until(&mut host, gap, |_| false)
                .unwrap_or_else(|e| panic!("round {round}: {e}"));
        }
        agent
            .read_until(&mut host, kill_at, |_| false)
            .unwrap_or_else(|e| panic!("round {round}: {e}"));
        assert!(
            host.exited().is_none(),
            "round {round}: the host ended before its kill: {:?}\n{}",
            host.exited(),
            host.log()
        );
        let family: HashSet<u32> = ProcessTable::read()
            .descendants(host.pid())
            .into_keys()
            .collect();
        for v in host.kill(Duration::from_secs(10)) {
            agent
                .absorb(&v)
                .unwrap_or_else(|e| panic!("round {round}, after the kill: {e}"));
        }
        figures.kills += 1;
        if !agent.inventory {
            figures.kills_during_start += 1;
        }
        agent.inventory = false;
        let left = wait_gone(&family, Duration::from_secs(10));
        figures.processes_left += left.len() as u64;
        assert!(
            left.is_empty(),
            "round {round}: processes of the killed host still alive: {left:?}"
        );
        agent.interrupted.extend(agent.pending.keys().cloned());
        agent.at_start = check_store(
            &data,
            &count,
            &agent,
            &mut head,
            &mut figures,
            &format!("after kill {round}"),
        );
    }

    // A last host: every unanswered call once more, and every answered call_id repeated,
    // answered from the store.
    let mut host = FaultHost::lineup(home, &host_args(data_s, count_s));
    host.until(
        STEP,
        |v| agent.absorb(v).unwrap(),
        |v| is(v, "client.inventory"),
    )
    .unwrap_or_else(|| panic!("the last host: no inventory\n{}", host.log()));
    let pending: Vec<(String, u64)> = agent
        .pending
        .iter()
        .map(|(id, sleep)| (id.clone(), *sleep))
        .collect();
    for batch in pending.chunks(16) {
        for (id, sleep) in batch {
            assert!(agent.send(&mut host, id, *sleep, Send::Again));
        }
        let ids: Vec<String> = batch.iter().map(|(id, _)| id.clone()).collect();
        agent
            .read_until(&mut host, Instant::now() + STEP, |a| {
                ids.iter().all(|id| a.acked.contains_key(id))
            })
            .unwrap_or_else(|e| panic!("the last host: {e}"));
    }
    assert!(
        agent.pending.is_empty(),
        "unanswered at the end: {:?}\n{}",
        agent.pending,
        host.log()
    );
    let answered: Vec<String> = agent.acked.keys().cloned().collect();
    let before = agent.repeats_identical;
    for batch in answered.chunks(16) {
        for id in batch {
            let sleep = agent.sent_ids[id];
            assert!(agent.send(&mut host, id, sleep, Send::Repeat));
        }
        let want = agent.repeats_identical + batch.len() as u64;
        agent
            .read_until(&mut host, Instant::now() + STEP, |a| {
                a.repeats_identical >= want
            })
            .unwrap_or_else(|e| panic!("the last host: {e}"));
        assert_eq!(
            agent.repeats_identical,
            want,
            "repeats unanswered\n{}",
            host.log()
        );
    }
    figures.acknowledged_kept = agent.repeats_identical - before;
    let (rest, clean) = host.close(Duration::from_secs(30));
    for v in rest {
        agent.absorb(&v).unwrap();
    }
    assert!(clean, "the last host did not exit cleanly\n{}", host.log());
    let counted = check_store(&data, &count, &agent, &mut head, &mut figures, "at the end");

    // Each answer agrees with the count file.
    for (id, answer) in &agent.acked {
        let n = counted.get(id).copied().unwrap_or(0);
        match (answer["status"].as_str(), answer["error"]["code"].as_str()) {
            (Some("completed"), _) => assert_eq!(n, 1, "{id} completed, counted {n}"),
            (Some("failed"), Some("outcome_unknown")) => assert!(n <= 1, "{id}: {n}"),
            (Some("cancelled"), _) => assert_eq!(n, 0, "{id} cancelled, counted {n}"),
            _ => panic!("{id}: {answer}"),
        }
    }
    figures.calls_sent = agent.sent_ids.len() as u64;
    figures.envelopes_sent = agent.envelopes_sent;
    figures.executed = counted.values().sum::<usize>() as u64 + figures.torn_unattributed;
    figures.acknowledged = agent.acked.len() as u64;
    figures.repeats_sent = agent.repeats_sent;
    figures.repeats_identical = agent.repeats_identical;
    figures.interrupted = agent.interrupted.len() as u64;
    figures.classes = agent.classes.clone();
    figures.audit_records = audit_count(&data);
    figures.seconds = started.elapsed().as_secs_f64();
    figures.print();
    if let Some(path) = std::env::var_os("LINEUP_FAULT_REPORT") {
        std::fs::write(&path, format!("{:#}\n", figures.json())).unwrap();
    }
    assert_eq!(figures.executed_twice, 0);
    assert_eq!(figures.acknowledged_kept, figures.acknowledged);
    assert_eq!(figures.kills, kills);
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

// ---------------------------------------------------------------------------------------------
// Disk full and a locked database.

/// A small tmpfs of its own, mounted in a private mount namespace that a holder process keeps
/// (`unshare -m`, or `unshare -rm` without root), so that nothing outside sees it and nothing is
/// left mounted however the test ends. Hosts run in it through `nsenter`; the test reaches its
/// files through `/proc/<holder>/root`.
struct Tmpfs {
    holder: Child,
    user_namespace: bool,
}

impl Tmpfs {
    fn mount(at: &Path, size: &str) -> Result<Self, String> {
        let root = std::fs::metadata("/proc/self")
            .map(|m| m.uid() == 0)
            .unwrap_or(false);
        let mut command = Command::new("unshare");
        if !root {
            command.arg("--map-root-user");
        }
        let mut holder = command
            .args(["--mount", "--propagation", "private", "--", "sh", "-c"])
            .arg(r#"mount -t tmpfs -o "size=$2" tmpfs "$1" && echo mounted && exec sleep 3600"#)
            .arg("sh")
            .arg(at)
            .arg(size)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run unshare: {e}"))?;
        let mut line = String::new();
        let read = BufReader::new(holder.stdout.take().unwrap()).read_line(&mut line);
        if read.is_err() || line.trim() != "mounted" {
            let _ = holder.kill();
            let out = holder.wait_with_output().map_err(|e| e.to_string())?;
            return Err(format!(
                "`unshare {}--mount` then `mount -t tmpfs` failed ({}): {}",
                if root { "" } else { "--map-root-user " },
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(Self {
            holder,
            user_namespace: !root,
        })
    }

    /// `program` run inside the namespace (`nsenter` execs it: the child's pid is its own).
    fn command(&self, program: &str) -> Command {
        let mut command = Command::new("nsenter");
        command.args(["-t", &self.holder.id().to_string(), "-m"]);
        if self.user_namespace {
            command.args(["-U", "--preserve-credentials"]);
        }
        command.arg("--").arg(program);
        command
    }

    /// `inside`, an absolute path in the namespace, as the test reaches it.
    fn outside(&self, inside: &Path) -> PathBuf {
        PathBuf::from(format!(
            "/proc/{}/root{}",
            self.holder.id(),
            inside.display()
        ))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = self.holder.kill();
        let _ = self.holder.wait();
    }
}

/// A copy of the store's database (and its write-ahead log) in `data`, made while no host runs,
/// for `integrity_check` and `lineup audit verify`: SQLite resolves the `/proc/<pid>/root` link
/// to `/`, outside the namespace, so it cannot open the files in place.
fn copy_out(data: &Path, to: &Path) -> PathBuf {
    let _ = std::fs::remove_dir_all(to);
    std::fs::create_dir_all(to).unwrap();
    for suffix in ["", "-wal"] {
        let name = format!("{}{suffix}", lineup_store::DB_FILE);
        if data.join(&name).exists() {
            std::fs::copy(data.join(&name), to.join(&name)).unwrap();
        }
    }
    to.to_owned()
}

/// Fills the file system of `dir` with `dir/filler` until writes fail; returns the bytes written.
fn fill(dir: &Path) -> u64 {
    let mut file = std::fs::File::create(dir.join("filler")).unwrap();
    let zeros = vec![0u8; 1 << 20];
    let mut written = 0u64;
    for chunk in [1 << 20, 64 << 10, 4096, 512, 1] {
        while let Ok(n @ 1..) = file.write(&zeros[..chunk]) {
            written += n as u64;
        }
    }
    let _ = file.sync_all();
    written
}

/// Sends `call_id` (with `sleep_ms`) and waits for its answer.
fn call(host: &mut FaultHost, call_id: &str, sleep_ms: u64, within: Duration) -> Value {
    assert!(host.send(&count_call(call_id, sleep_ms)), "stdin closed");
    match host.until(within, |_| {}, |v| result_of(v, call_id).is_some()) {
        Some(v) => v["payload"].clone(),
        None => panic!(
            "no answer to {call_id} within {within:?} (exit: {:?})\n{}",
            host.exited(),
            host.log()
        ),
    }
}

fn not_recorded(answer: &Value) -> bool {
    answer["status"] == "failed" && answer["error"]["code"] == "not_recorded"
}

/// Repeats every call of `acked` on `host`: each must get its first answer again.
fn repeat_all(
    host: &mut FaultHost,
    acked: &BTreeMap<String, Value>,
    sleeps: &HashMap<String, u64>,
) {
    for (id, first) in acked {
        let again = call(host, id, sleeps[id], STEP);
        assert_eq!(&again, first, "the answer to {id} changed");
    }
}

#[test]
fn a_full_disk_is_answered_not_recorded_and_loses_nothing_answered() {
    require_display();
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let mnt = home.join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let fs = Tmpfs::mount(&mnt, "4m").unwrap_or_else(|e| {
        panic!("the disk-full case needs a private tmpfs, and this system gave none: {e}")
    });
    let data_in = mnt.join("data");
    let data = fs.outside(&data_in);
    let full = fs.outside(&mnt);
    let count = home.join("count");
    let args = host_args(data_in.to_str().unwrap(), count.to_str().unwrap());
    let start = || {
        let mut command = fs.command(LINEUP);
        command.args(["host", "--stdio"]).args(args);
        FaultHost::spawn(command, home)
    };
    let mut acked = BTreeMap::new();
    let mut sleeps = HashMap::new();
    let mut host = start();
    for i in 0..3 {
        let id = format!("before-{i}");
        let answer = call(&mut host, &id, 0, STEP);
        assert_eq!(answer["status"], "completed", "{answer}");
        sleeps.insert(id.clone(), 0);
        acked.insert(id, answer);
    }

    // The disk full: each new call is answered at once, `not_recorded` and not run (or, while
    // SQLite still has room in pages it holds, run and kept); the answers before stay.
    let filled = fill(&full);
    let mut refused = Vec::new();
    for i in 0..12 {
        let id = format!("full-{i}");
        let asked = Instant::now();
        let answer = call(&mut host, &id, 0, Duration::from_secs(30));
        let took = asked.elapsed();
        sleeps.insert(id.clone(), 0);
        if not_recorded(&answer) {
            assert!(
                answer["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("full")),
                "{answer}"
            );
            assert!(!counts(&count).contains_key(&id), "{id} ran: {answer}");
            println!("disk full: {id} answered not_recorded in {took:?}");
            refused.push((id.clone(), answer.clone()));
            if refused.len() == 4 {
                break;
            }
        } else {
            assert_eq!(answer["status"], "completed", "{answer}");
            acked.insert(id, answer);
        }
    }
    assert!(
        !refused.is_empty(),
        "the store never noticed the full disk ({filled} bytes of filler)"
    );
    repeat_all(&mut host, &acked, &sleeps);
    assert!(host.exited().is_none(), "the host ended\n{}", host.log());

    // Space again: calls run again.
    std::fs::remove_file(full.join("filler")).unwrap();
    for i in 0..3 {
        let id = format!("after-{i}");
        let answer = call(&mut host, &id, 0, STEP);
        assert_eq!(answer["status"], "completed", "{answer}");
        sleeps.insert(id.clone(), 0);
        acked.insert(id, answer);
    }
    let (_, clean) = host.close(Duration::from_secs(30));
    assert!(clean, "{}", host.log());

    // A restart on the same data directory: every answer is the stored one. A call answered
    // `not_recorded` left no record, so its call_id is a new call there: it runs, once.
    let mut host = start();
    repeat_all(&mut host, &acked, &sleeps);
    for (id, _) in &refused {
        let again = call(&mut host, id, 0, STEP);
        assert_eq!(again["status"], "completed", "{again}");
        assert_eq!(counts(&count).get(id), Some(&1), "{id}");
        acked.insert(id.clone(), again);
    }
    let (_, clean) = host.close(Duration::from_secs(30));
    assert!(clean, "{}", host.log());

    // A host started on a full disk refuses to start, naming the data directory, and changes
    // nothing.
    fill(&full);
    let mut host = start();
    let started = Instant::now();
    while host.exited().is_none() && started.elapsed() < STEP {
        thread::sleep(Duration::from_millis(50));
    }
    let status = host.exited();
    assert!(
        status.is_some_and(|s| !s.success()),
        "a host on a full disk: {status:?}\n{}",
        host.log()
    );
    assert!(
        host.log().contains("cannot open the data dir"),
        "{}",
        host.log()
    );
    std::fs::remove_file(full.join("filler")).unwrap();
    let copy = copy_out(&data, &home.join("copy"));
    assert_eq!(integrity(&copy), "ok");
    audit_verify(&copy, None).unwrap();
    let mut host = start();
    repeat_all(&mut host, &acked, &sleeps);
    let (_, clean) = host.close(Duration::from_secs(30));
    assert!(clean, "{}", host.log());
    let copy = copy_out(&data, &home.join("copy"));
    assert_eq!(integrity(&copy), "ok");
    audit_verify(&copy, None).unwrap();
    assert!(
        counts(&count).values().all(|n| *n == 1),
        "{:?}",
        counts(&count)
    );
}

/// Another process's exclusive lock on the store's database, held on a thread of the test (a
/// process of its own to the host) until released.
struct Lock {
    release: Option<mpsc::Sender<()>>,
    thread: Option<thread::JoinHandle<()>>,
}

impl Lock {
    fn take(data: &Path) -> Self {
        let path = data.join(lineup_store::DB_FILE);
        let (locked_tx, locked) = mpsc::channel();
        let (release, released) = mpsc::channel::<()>();
        let thread = thread::spawn(move || {
            let conn = rusqlite::Connection::open(&path).unwrap();
            conn.busy_timeout(Duration::from_secs(30)).unwrap();
            conn.execute_batch("BEGIN EXCLUSIVE").unwrap();
            locked_tx.send(()).unwrap();
            let _ = released.recv();
            conn.execute_batch("ROLLBACK").unwrap();
        });
        locked.recv_timeout(STEP).expect("no exclusive lock");
        Self {
            release: Some(release),
            thread: Some(thread),
        }
    }

    fn release(mut self) {
        self.release.take();
        if let Some(thread) = self.thread.take() {
            thread.join().unwrap();
        }
    }
}

/// How many of the host's store writes of call records failed on the lock so far (those it
/// logs: the ones no answer waits for).
fn locked_call_writes(host: &FaultHost) -> usize {
    host.log()
        .lines()
        .filter(|l| l.contains("call write") && l.contains("database is locked"))
        .count()
}

#[test]
fn a_database_locked_by_another_process_is_answered_not_recorded_and_loses_nothing_answered() {
    require_display();
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let data = home.join("store");
    let count = home.join("count");
    let args = host_args(data.to_str().unwrap(), count.to_str().unwrap());
    let mut acked = BTreeMap::new();
    let mut sleeps = HashMap::new();
    let mut host = FaultHost::lineup(home, &args);
    for i in 0..3 {
        let id = format!("before-{i}");
        let answer = call(&mut host, &id, 0, STEP);
        assert_eq!(answer["status"], "completed", "{answer}");
        sleeps.insert(id.clone(), 0);
        acked.insert(id, answer);
    }

    // Locked past the store's busy timeout (10 s a write) until the call is answered: its
    // records cannot be written, so it is answered `not_recorded` and does not run. Meanwhile
    // an envelope that needs no store waits too: the host's loop waits on each write.
    let lock = Lock::take(&data);
    let locked_at = Instant::now();
    assert!(host.send(&count_call("locked", 0)));
    thread::sleep(Duration::from_secs(1));
    let pinged = Instant::now();
    assert!(host.send(&envelope("ping", "no.such.type", json!({}))));
    let mut answer = None;
    let mut pong = None;
    while answer.is_none() && locked_at.elapsed() < Duration::from_secs(180) {
        let Some(v) = host.next(Duration::from_millis(100)) else {
            continue;
        };
        if let Some(a) = result_of(&v, "locked") {
            answer = Some((a.clone(), locked_at.elapsed()));
        } else if is(&v, "client.error") && v["payload"]["in_reply_to"] == "ping" {
            pong = Some(pinged.elapsed());
        }
    }
    lock.release();
    let (answer, took) =
        answer.unwrap_or_else(|| panic!("no answer under the lock\n{}", host.log()));
    if pong.is_none() {
        pong = host
            .until(
                STEP,
                |_| {},
                |v| is(v, "client.error") && v["payload"]["in_reply_to"] == "ping",
            )
            .map(|_| pinged.elapsed());
    }
    println!("locked: the call answered after {took:?}: {answer}");
    println!("locked: an envelope sent 1 s later answered after {pong:?}");
    assert!(
        pong.is_some(),
        "the host never answered the ping\n{}",
        host.log()
    );
    assert!(not_recorded(&answer), "{answer}");
    assert!(
        answer["message"]
            .as_str()
            .is_some_and(|m| m.contains("database is locked")),
        "{answer}"
    );
    assert!(!counts(&count).contains_key("locked"), "it ran");
    // In this process a repeat gets the same answer, from memory.
    assert_eq!(call(&mut host, "locked", 0, STEP), answer);

    // The lock gone: calls run again, and nothing answered before changed.
    let answer = call(&mut host, "unlocked", 0, STEP);
    assert_eq!(answer["status"], "completed", "{answer}");
    sleeps.insert("unlocked".to_owned(), 0);
    acked.insert("unlocked".to_owned(), answer);
    repeat_all(&mut host, &acked, &sleeps);
    let (_, clean) = host.close(Duration::from_secs(30));
    assert!(clean, "{}", host.log());

    // After a restart too. The `not_recorded` call left no record (its final write failed on
    // the lock as well), so its call_id is a new call there: it runs, once.
    let mut host = FaultHost::lineup(home, &args);
    repeat_all(&mut host, &acked, &sleeps);
    let again = call(&mut host, "locked", 0, STEP);
    assert_eq!(again["status"], "completed", "{again}");
    let (_, clean) = host.close(Duration::from_secs(30));
    assert!(clean, "{}", host.log());
    assert_eq!(integrity(&data), "ok");
    audit_verify(&data, None).unwrap();
    assert!(
        counts(&count).values().all(|n| *n == 1),
        "{:?}",
        counts(&count)
    );
}

/// A call whose handler ran while its final record cannot be written (another process locks
/// the database past the busy timeout) is answered only once the record is kept, so the answer
/// survives a restart. (Until 37f9fdf the host answered `completed` at once and the record stayed
/// `running`: after a restart a repeat got `failed` `outcome_unknown`.)
#[test]
fn an_answer_waits_for_its_final_record_and_survives_a_restart() {
    require_display();
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let data = home.join("store");
    let count = home.join("count");
    let args = host_args(data.to_str().unwrap(), count.to_str().unwrap());
    let mut host = FaultHost::lineup(home, &args);
    let warm = call(&mut host, "warm", 0, STEP);
    assert_eq!(warm["status"], "completed", "{warm}");
    // The handler counts (so its `running` record is written), then sleeps 3 s; meanwhile
    // another process locks the database until the final write has failed, and 3 s more.
    assert!(host.send(&count_call("victim", 3000)));
    let deadline = Instant::now() + STEP;
    while !counts(&count).contains_key("victim") {
        assert!(Instant::now() < deadline, "the victim never ran");
        thread::sleep(Duration::from_millis(10));
    }
    let lock = Lock::take(&data);
    let deadline = Instant::now() + STEP;
    while locked_call_writes(&host) == 0 {
        assert!(Instant::now() < deadline, "no failed write\n{}", host.log());
        thread::sleep(Duration::from_millis(100));
    }
    // An envelope that needs no store, sent while the record is written again (every 500 ms,
    // each write waiting up to the busy timeout on the host's loop).
    thread::sleep(Duration::from_secs(1));
    let pinged = Instant::now();
    assert!(host.send(&envelope("ping", "no.such.type", json!({}))));
    let mut pong = None;
    let early = host.until(
        Duration::from_secs(3),
        |v| {
            if is(v, "client.error") && v["payload"]["in_reply_to"] == "ping" {
                pong = Some(pinged.elapsed());
            }
        },
        |v| result_of(v, "victim").is_some(),
    );
    assert!(
        early.is_none(),
        "answered before its record was kept: {early:?}"
    );
    let released = Instant::now();
    lock.release();
    let answered = host
        .until(
            STEP,
            |v| {
                if pong.is_none() && is(v, "client.error") && v["payload"]["in_reply_to"] == "ping"
                {
                    pong = Some(pinged.elapsed());
                }
            },
            |v| result_of(v, "victim").is_some(),
        )
        .expect("no answer")["payload"]
        .clone();
    let answered_after = released.elapsed();
    if pong.is_none() {
        pong = host
            .until(
                STEP,
                |_| {},
                |v| is(v, "client.error") && v["payload"]["in_reply_to"] == "ping",
            )
            .map(|_| pinged.elapsed());
    }
    let pong = pong.expect("the envelope sent under the lock was never answered");
    println!(
        "final record refused: answered {answered_after:?} after the lock was released; an \
         envelope sent under the lock answered after {pong:?}, {:?} after the release",
        released.elapsed()
    );
    assert_eq!(answered["status"], "completed", "{answered}");
    assert_eq!(call(&mut host, "victim", 3000, STEP), answered);
    let (_, clean) = host.close(Duration::from_secs(30));
    assert!(clean, "{}", host.log());
    let mut host = FaultHost::lineup(home, &args);
    let again = call(&mut host, "victim", 3000, STEP);
    host.close(Duration::from_secs(30));
    assert_eq!(counts(&count).get("victim"), Some(&1), "never run twice");
    assert_eq!(again, answered, "the answer changed after a restart");
}

/// `lineup audit verify` on an empty audit log prints the head `000…0` and asks to keep it for
/// `--expect-head`, which takes it: on the empty log itself and after records were added (every
/// chain starts there). Until it was fixed it was refused as "not in the audit chain". Positive
/// control: a head no chain holds is still refused.
#[test]
fn the_empty_logs_head_is_taken_by_expect_head() {
    require_display();
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let data = home.join("store");
    let count = home.join("count");
    let args = host_args(data.to_str().unwrap(), count.to_str().unwrap());
    let mut host = FaultHost::lineup(home, &args);
    host.until(STEP, |_| {}, |v| is(v, "client.inventory"))
        .expect("no inventory");
    let (_, clean) = host.close(Duration::from_secs(30));
    assert!(clean, "{}", host.log());
    let empty = audit_verify(&data, None).unwrap().expect("a head");
    assert_eq!(audit_count(&data), 0, "the log is not empty");
    assert!(is_empty_head(&empty), "{empty}");
    let on_empty = audit_verify(&data, Some(&empty));
    assert!(on_empty.is_ok(), "{on_empty:?}");
    let mut host = FaultHost::lineup(home, &args);
    assert_eq!(call(&mut host, "one", 0, STEP)["status"], "completed");
    host.close(Duration::from_secs(30));
    let after = audit_verify(&data, Some(&empty));
    assert!(after.is_ok(), "{after:?}");
    let unknown = "ab".repeat(32);
    let refused = audit_verify(&data, Some(&unknown));
    assert!(
        refused
            .as_ref()
            .is_err_and(|e| e.contains("is not in the audit chain")),
        "{refused:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// A web process killed or stopped mid-delivery.

/// A page that reports each state it gets twice: `got` when its handler starts, `seen` once it
/// has been busy for `state.busy_ms` (from 100 ms later, after `got` has left), each with an id of its document, so that the test can hit the
/// web process while the page is handling a state, and tell a reopened page from the old one.
const PAGE_JS: &str = "var doc = Math.random().toString(36).slice(2); \
    LineUpSurface.onState(function (s) { \
      LineUpSurface.event('got', {doc: doc, n: s.n}); \
      setTimeout(function () { \
        var until = Date.now() + (s.busy_ms || 0); \
        while (Date.now() < until) {} \
        LineUpSurface.event('seen', {doc: doc, n: s.n}); \
      }, 100); \
    });";

const VICTIM: &str = "faults.victim";

/// A page event of the victim: (event, doc, n).
fn page_event(v: &Value) -> Option<(String, String, u64)> {
    (is(v, "ui.event") && v["payload"]["instance_id"] == VICTIM).then(|| {
        let data = &v["payload"]["data"];
        (
            v["payload"]["event"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            data["doc"].as_str().unwrap_or_default().to_owned(),
            data["n"].as_u64().unwrap_or(0),
        )
    })
}

/// Waits for the victim's `event` with state `n`; returns its document. Every envelope read is
/// kept in `seen`.
fn wait_page(
    host: &mut FaultHost,
    seen: &mut Vec<Value>,
    event: &str,
    n: u64,
    within: Duration,
) -> String {
    let found = host.until(
        within,
        |v| seen.push(v.clone()),
        |v| page_event(v).is_some_and(|(e, _, m)| e == event && m == n),
    );
    match found.as_ref().and_then(page_event) {
        Some((_, doc, _)) => doc,
        None => panic!(
            "no {event} n={n} within {within:?}; saw {seen:#?}\n{}",
            host.log()
        ),
    }
}

/// Whether process `pid` is running or waiting for a CPU (`R` in `/proc/PID/stat`).
fn runnable(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let rest = stat.get(stat.rfind(')')? + 1..)?;
            rest.split_whitespace().next().map(|state| state == "R")
        })
        .unwrap_or(false)
}

/// How many of 25 looks over a second found each of the host's web processes runnable.
fn runnable_looks(host: &FaultHost) -> HashMap<u32, u32> {
    let mut looks: HashMap<u32, u32> = HashMap::new();
    for _ in 0..25 {
        for pid in web_processes_of(host.pid()) {
            *looks.entry(pid).or_insert(0) += u32::from(runnable(pid));
        }
        thread::sleep(Duration::from_millis(40));
    }
    looks
}

/// The host's web process that is running the page's busy loop now, told from any other (WebKit
/// keeps a spare one, which may be starting meanwhile): the one found runnable in most looks
/// now and in few while the page was idle (`idle`, from [`runnable_looks`]). Runnable, not CPU
/// time: on a loaded machine the spinning page gets only its share of a core, but it is always
/// ready to run.
fn busy_web_process(host: &FaultHost, idle: &HashMap<u32, u32>) -> u32 {
    let busy = runnable_looks(host);
    let mut scores: Vec<(u32, u32)> = busy
        .iter()
        .map(|(pid, n)| (n.saturating_sub(idle.get(pid).copied().unwrap_or(25)), *pid))
        .collect();
    scores.sort_unstable();
    let best = scores.last().copied().unwrap_or((0, 0));
    let next = scores.iter().rev().nth(1).map_or(0, |(n, _)| *n);
    assert!(
        best.0 >= 12 && best.0 >= 2 * next,
        "no web process is clearly the busy page's: runnable in n of 25 looks while idle \
         {idle:?}, while busy {busy:?}"
    );
    best.1
}

#[test]
fn a_web_process_killed_or_stopped_mid_delivery_comes_back_with_the_last_state() {
    require_display();
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let mut host = FaultHost::lineup(home, &["--conversation", "c1"]);
    let mut seen = Vec::new();
    host.until(
        STEP,
        |v| seen.push(v.clone()),
        |v| is(v, "client.inventory"),
    )
    .unwrap_or_else(|| panic!("no inventory\n{}", host.log()));
    let open = envelope(
        "open",
        "ui.open",
        json!({
            "instance_id": VICTIM,
            "app": {"id": "com.lineup.faults.victim", "name": "victim", "version": "1.0.0",
                    "html": "<p>victim</p>", "css": "", "js": PAGE_JS},
            "state": {"n": 1},
        }),
    );
    assert!(host.send(&open));
    let first = wait_page(&mut host, &mut seen, "seen", 1, STEP);
    let patch = |n: u64, busy_ms: u64| {
        envelope(
            &format!("patch-{n}"),
            "ui.patch",
            json!({"instance_id": VICTIM, "state": {"n": n, "busy_ms": busy_ms}}),
        )
    };

    // SIGKILL while the page is handling state 2 (busy for 5 s after `got`).
    let idle = runnable_looks(&host);
    assert!(host.send(&patch(2, 5000)));
    let got = wait_page(&mut host, &mut seen, "got", 2, STEP);
    assert_eq!(got, first, "state 2 reached the first page");
    let pids = HashSet::from([busy_web_process(&host, &idle)]);
    let hit = Instant::now();
    for pid in &pids {
        assert!(signal(*pid, "KILL"), "kill -KILL {pid}");
    }
    let second = wait_page(&mut host, &mut seen, "got", 2, STEP);
    println!(
        "killed mid-delivery: state 2 in a new page after {:?}",
        hit.elapsed()
    );
    assert_ne!(second, first, "state 2 was finished by the killed page");
    assert_eq!(wait_page(&mut host, &mut seen, "seen", 2, STEP), second);
    assert!(
        wait_gone(&pids, Duration::from_secs(10)).is_empty(),
        "the killed web process is still there"
    );

    // SIGSTOP while the page is handling state 3: the hang watchdog (10 s) ends the stopped web
    // process, and the Surface comes back with state 3.
    let idle = runnable_looks(&host);
    assert!(host.send(&patch(3, 5000)));
    let got = wait_page(&mut host, &mut seen, "got", 3, STEP);
    assert_eq!(
        got, second,
        "state 3 reached another page than the reopened one"
    );
    let pids = HashSet::from([busy_web_process(&host, &idle)]);
    let hit = Instant::now();
    for pid in &pids {
        assert!(signal(*pid, "STOP"), "kill -STOP {pid}");
    }
    let third = wait_page(&mut host, &mut seen, "got", 3, STEP);
    println!(
        "stopped mid-delivery: state 3 in a new page after {:?}",
        hit.elapsed()
    );
    assert_eq!(wait_page(&mut host, &mut seen, "seen", 3, STEP), third);
    let left = wait_gone(&pids, Duration::from_secs(10));
    for pid in &left {
        signal(*pid, "CONT");
    }
    assert!(
        left.is_empty(),
        "the stopped web process was left: {left:?}"
    );
    assert!(
        third != second && third != first,
        "state 3 finished by an old page"
    );

    // Still the agent's Surface: a patch reaches the new page; the agent heard of no close and
    // no error.
    assert!(host.send(&patch(4, 0)));
    let fourth = wait_page(&mut host, &mut seen, "seen", 4, STEP);
    assert_eq!(fourth, third);
    let trouble: Vec<&Value> = seen
        .iter()
        .filter(|v| is(v, "client.error") || page_event(v).is_some_and(|(e, _, _)| e == "close"))
        .collect();
    assert!(trouble.is_empty(), "{trouble:#?}");
    let (_, clean) = host.close(Duration::from_secs(30));
    assert!(clean, "{}", host.log());
}
