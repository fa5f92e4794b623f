//! Disk full and a locked database: `not_recorded`, nothing run, nothing answered lost.

use super::*;

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

    // Locked past the store's busy timeout (10 s) until the call is answered: its records
    // cannot be written, so it is answered `not_recorded` and does not run. Meanwhile an
    // envelope that needs no store waits too: the host's loop waits on the first write for the
    // whole timeout, on the ones after it only `CONTENDED_WAIT` each.
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
