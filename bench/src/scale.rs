//! Many Surfaces (#29): a fresh process whose host puts Surfaces as child views in one window,
//! opens `n` of them in one conversation showing at most `live` at a time (the oldest shown is
//! hidden before each open past that, as a conversation scrolling on), then shows hibernated
//! ones again newest first (a user scrolling back). It reports the PSS of its process tree at
//! the end and at its peak, each open → state acknowledged, and each show-again → the woken
//! page acknowledging the last state patched while it slept. The host keeps one pool view, as
//! an embedder of long conversations would; the shows again come at a scrolling pace (400 ms
//! apart, not counted), so the pool refills between them.

use std::rc::Rc;
use std::time::{Duration, Instant};

use lineup_host::tao::dpi::LogicalSize;
use lineup_host::tao::window::WindowBuilder;
use lineup_host::HostBuilder;
use serde_json::json;

use crate::app::{app_json, SMALL};
use crate::lab::Lab;
use crate::procs;
use crate::report::ms;

/// How many hibernated Surfaces are shown again (newest first).
const SHOW_AGAIN: usize = 24;

/// Waits for `instance`'s `ack` of state `seq`; when it came.
fn acked(lab: &mut Lab, instance: &str, seq: u64) -> Result<Instant, String> {
    let name = instance.to_owned();
    let found = |rec: &crate::lab::Recorder| {
        rec.events
            .borrow()
            .iter()
            .rev()
            .find(|e| e.instance == name && e.event == "ack" && e.data["seq"] == seq)
            .map(|e| e.at)
    };
    lab.pump(Duration::from_secs(30), |_, rec, _| found(rec).is_some());
    found(&lab.rec).ok_or_else(|| format!("{instance} never acknowledged state {seq}"))
}

/// Hides the oldest shown Surface once `live` are shown, as a conversation scrolling on.
fn hide_oldest(lab: &mut Lab, shown: &mut Vec<String>, live: usize) {
    if shown.len() < live {
        return;
    }
    let oldest = shown.remove(0);
    let key = lab.rec.keys.borrow().get(&oldest).cloned();
    if let (Some(host), Some(key)) = (lab.host.as_mut(), key) {
        host.set_surface_visible(&key, false);
    }
}

/// The child mode `scale N LIVE`: prints one `RESULT` line.
pub(crate) fn run(n: usize, live: usize) -> Result<(), String> {
    let mut lab = Lab::new()?;
    let parent = Rc::new(
        WindowBuilder::new()
            .with_title("lineup-bench many surfaces")
            .with_inner_size(LogicalSize::new(800u32, 600u32))
            .build(&lab.event_loop)
            .map_err(|e| e.to_string())?,
    );
    // A pool view, as an embedder of a long conversation would keep: a wake takes it.
    lab.start_host(
        HostBuilder::new()
            .child_views_in(Rc::clone(&parent))
            .warm_pool(1),
    )?;
    lab.wait_probe()?;
    let app = app_json(SMALL);
    let (mut peak, mut opens, mut shown) = (0u64, Vec::new(), Vec::<String>::new());
    for i in 0..n {
        hide_oldest(&mut lab, &mut shown, live);
        let instance = format!("s{i}");
        let start = Instant::now();
        lab.open_ours(&instance, &app, Some(json!({ "seq": 0 })))?;
        opens.push(ms(acked(&mut lab, &instance, 0)?.duration_since(start)));
        shown.push(instance);
        if i % 10 == 9 {
            peak = peak.max(procs::tree_memory(std::process::id()).pss_kib);
        }
    }
    lab.settle(Duration::from_secs(2));
    let end = procs::tree_memory(std::process::id()).pss_kib;
    peak = peak.max(end);
    let hibernated = |lab: &Lab, i: usize| {
        let key = lab.rec.keys.borrow().get(&format!("s{i}")).cloned();
        key.zip(lab.host.as_ref())
            .is_some_and(|(k, h)| h.is_hibernated(&k))
    };
    let asleep = (0..n).filter(|i| hibernated(&lab, *i)).count();
    // Scroll back: each hibernated one gets a patch while it sleeps, then is shown (the oldest
    // shown one hidden first) until its woken page acknowledges that patch.
    let mut again = Vec::new();
    let sleeping: Vec<usize> = (0..n).rev().filter(|i| hibernated(&lab, *i)).collect();
    for i in sleeping.into_iter().take(SHOW_AGAIN) {
        let instance = format!("s{i}");
        let patch = lab.envelope(
            "lineup.v1.ui.patch",
            json!({ "instance_id": instance, "state": { "seq": 1 } }),
        );
        lab.send(patch)?;
        // A user's scrolling pace: the pool refills between two shows.
        lab.settle(Duration::from_millis(400));
        hide_oldest(&mut lab, &mut shown, live);
        let key = lab
            .rec
            .keys
            .borrow()
            .get(&instance)
            .cloned()
            .ok_or("no key")?;
        let start = Instant::now();
        if let Some(host) = lab.host.as_mut() {
            host.set_surface_visible(&key, true);
        }
        again.push(ms(acked(&mut lab, &instance, 1)?.duration_since(start)));
        shown.push(instance);
        peak = peak.max(procs::tree_memory(std::process::id()).pss_kib);
    }
    println!(
        "RESULT {}",
        json!({
            "surfaces": n, "live": live, "hibernated_at_end_of_opens": asleep,
            "pss_kib_end": end, "pss_kib_peak": peak,
            "open_ms": opens, "show_again_ms": again,
        })
    );
    drop(parent);
    Ok(())
}
