//! §4 of standard-components.md, "one warm view": a host with the built-in renderer starts its
//! component board at an idle turn (a web process of its own, before any component), and a
//! conversation's first component is a box of that board: it starts no web process. The
//! positive control: the warm board's process is seen to start.

use std::time::Duration;

use lineup_host::{ComponentOptions, HostBuilder};
use lineup_tests::ensure;
use lineup_tests::host_harness::HostHarness;
use lineup_tests::runner::Outcome;
use serde_json::json;

pub(super) fn first_component_takes_the_warm_board(h: &mut HostHarness) -> Outcome {
    let before = lineup_tests::procs::web_processes();
    let mut t = h.host(HostBuilder::new().builtin_components(Some(ComponentOptions::default())))?;
    // Idle for longer than the host waits before warming when no Surface said `ready`.
    let mut warmed = false;
    for _ in 0..50 {
        h.settle(&mut t, Duration::from_millis(100));
        if lineup_tests::procs::web_processes()
            .difference(&before)
            .count()
            >= 1
        {
            warmed = true;
            break;
        }
    }
    ensure!(warmed, "control: no warm board's web process started");
    // Its document loads; then the first component.
    h.settle(&mut t, Duration::from_millis(1500));
    let warm = lineup_tests::procs::web_processes();
    t.send(t.agent.envelope(
        "lineup.v1.ui.open",
        json!({"instance_id": "k1", "component": {"id": "confirm", "version": "1",
               "props": {"title": "Warm?"}}}),
    ))?;
    ensure!(
        h.wait(&mut t, |host, _| host
            .shown_components()
            .iter()
            .any(|k| k.instance.as_str() == "k1")),
        "the confirm was never shown: {:?}",
        t.rec.sent()
    );
    let started: Vec<u32> = lineup_tests::procs::web_processes()
        .difference(&warm)
        .copied()
        .collect();
    ensure!(
        started.is_empty(),
        "the first component started web processes {started:?}"
    );
    h.shut_down(t)
}
