//! The kill loop: the host SIGKILLed at random points of a stream of `app.call`s.

use super::*;

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
