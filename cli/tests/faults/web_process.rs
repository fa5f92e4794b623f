//! A web process killed or stopped mid-delivery comes back with the last state.

use super::*;

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
