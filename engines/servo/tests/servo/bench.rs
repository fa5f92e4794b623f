//! `-- bench` of the Servo suite: figures printed, never asserted.

use std::time::{Duration, Instant};

use lineup_servo::EngineConfig;

use super::{ipc, Lab};

/// `-- bench`: the figures of BENCHMARKS.md's Servo section, printed (never asserted): the
/// probe's time from engine start, cold open → `ready`, a patch → `onState` → event back, and
/// the process's PSS per further Surface.
pub(crate) fn bench(started: Instant) {
    let lab = Lab::new(EngineConfig::default());
    println!(
        "bench: engine start → probe passed {} ms",
        started.elapsed().as_millis()
    );
    let mut opens = Vec::new();
    let mut pages = Vec::new();
    let before = pss_kib();
    for _ in 0..8 {
        let at = Instant::now();
        let page = lab.open(
            "<p id=t></p>",
            "LineUpSurface.onState(function (s) { LineUpSurface.event('got', {n: s.n}); });",
        );
        if lab.ready(&page).is_err() {
            println!("bench: an open never said ready");
            return;
        }
        opens.push(at.elapsed().as_secs_f64() * 1000.0);
        pages.push(page);
    }
    lab.spin_for(Duration::from_millis(500));
    let after = pss_kib();
    let page = &pages[0];
    let mut trips = Vec::new();
    for n in 0..30 {
        let at = Instant::now();
        let _ = page.surface.deliver_state(&format!(r#"{{"n":{n}}}"#));
        let want = format!(r#""data":{{"n":{n}}}"#);
        if !lab.spin_until(|| ipc(&page.events).iter().any(|m| m.contains(&want))) {
            println!("bench: a round trip never came back");
            return;
        }
        trips.push(at.elapsed().as_secs_f64() * 1000.0);
    }
    let p50 = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    println!("bench: first open → ready {:.1} ms", opens[0]);
    println!(
        "bench: cold open → ready p50 {:.1} ms (8 opens)",
        p50(&mut opens)
    );
    println!(
        "bench: patch → onState → event p50 {:.2} ms (30)",
        p50(&mut trips)
    );
    println!(
        "bench: PSS {} MiB before, {} MiB with 8 more Surfaces: {:.1} MiB per Surface",
        before / 1024,
        after / 1024,
        (after.saturating_sub(before)) as f64 / 1024.0 / 8.0
    );
}

/// The process's proportional set size, KiB.
fn pss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/smaps_rollup")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("Pss:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}
