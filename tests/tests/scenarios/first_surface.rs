//! The first Surface after start (#12) through the host, in a real WebKitGTK webview: its view
//! is created while the isolation probe runs instead of after it, yet fail-closed holds
//! (R-SEC-8): when the probe fails, the Surface opened meanwhile never runs its page, is closed,
//! and the agent hears that the open failed.
#![allow(clippy::print_stdout, clippy::unwrap_used, missing_docs)]

use std::time::{Duration, Instant};

use lineup_host::{HostBuilder, ProbeStatus};
use lineup_tests::ensure;
use lineup_tests::home::private_home;
use lineup_tests::host_harness::{test_app, HostHarness, Note};
use lineup_tests::procs::web_processes;
use lineup_tests::runner::Outcome;

pub(crate) fn run() {
    private_home("first_surface");
    let mut h = HostHarness::start();
    h.run(
        "r_sec_8_open_sent_at_start_is_ready_only_after_the_probe_passed",
        open_at_start,
    );
    h.run(
        "r_sec_8_probe_failure_fails_the_surface_opened_while_it_ran",
        probe_failure,
    );
    h.finish();
}

fn open_at_start(h: &mut HostHarness) -> Outcome {
    // Without the standard components: their warm board is a web process of its own that starts
    // at the first `ready`, and this test counts web processes to see the probe's end.
    let mut t = h.host_unprobed(HostBuilder::new().builtin_components(None))?;
    ensure!(
        t.host.probe_status() == ProbeStatus::Pending,
        "the probe should still run right after build"
    );
    let start = Instant::now();
    t.send(
        t.agent
            .open("w1", test_app("first", "<p>first</p>", ""), None),
    )?;
    // `ready` must never be seen while the probe is still pending.
    let mut early = false;
    let ready = h.wait_until(&mut t, start + Duration::from_secs(30), |host, rec| {
        let ready = rec.notes().iter().any(|n| matches!(n, Note::Ready(_)));
        if ready && host.probe_status() != ProbeStatus::Passed {
            early = true;
        }
        ready
    });
    ensure!(!early, "a Surface was ready before the probe passed");
    ensure!(
        ready,
        "the first Surface never became ready: {:?}",
        t.rec.notes()
    );
    println!(
        "    first Surface ready {:.0} ms after the open",
        start.elapsed().as_secs_f64() * 1000.0
    );
    // The probe's view is kept while the first Surface commits its document, then closed: its
    // web process ends, and the Surface's is the only one left.
    let mut probe_gone = false;
    let alone = h.wait_until(&mut t, Instant::now() + Duration::from_secs(10), |_, _| {
        probe_gone = web_processes().len() == 1;
        probe_gone
    });
    ensure!(
        alone && probe_gone,
        "the probe's web process outlived the first Surface's ready: {} web processes",
        web_processes().len()
    );
    h.shut_down(t)
}

fn probe_failure(h: &mut HostHarness) -> Outcome {
    // The probe is held undecided until the open was handled, then failed: the open arrives
    // before the verdict however slow the machine.
    let mut t = h.host_unprobed(HostBuilder::new())?;
    t.host.force_probe_for_test(None);
    let app = test_app("early", "<p>early</p>", "post('ran', {});");
    t.send(t.agent.open("w1", app, None))?;
    let opened = h.wait(&mut t, |_, rec| {
        rec.notes().iter().any(|n| matches!(n, Note::Opened(_)))
    });
    ensure!(
        opened,
        "the view should have been created while the probe ran: {:?}",
        t.rec.notes()
    );
    t.host
        .force_probe_for_test(Some("failed by the test".to_owned()));
    let failed = h.wait(&mut t, |host, rec| {
        rec.notes()
            .iter()
            .any(|n| matches!(n, Note::ProbeFailed(_)))
            && host.surfaces().is_empty()
    });
    ensure!(failed, "the probe did not fail: {:?}", t.rec.notes());
    // Long enough for a served page to load, run and post.
    h.settle(&mut t, Duration::from_secs(3));
    let notes = t.rec.notes();
    ensure!(
        !notes.iter().any(|n| matches!(n, Note::Ready(_))),
        "the Surface became ready although the probe failed: {notes:?}"
    );
    ensure!(
        t.rec.ui_events().is_empty(),
        "the page posted although the probe failed: {:?}",
        t.rec.ui_events()
    );
    let failures: Vec<_> = t
        .rec
        .sent()
        .into_iter()
        .filter(|m| {
            m["type"] == "lineup.v1.client.error" && m["payload"]["code"] == "surface_failed"
        })
        .collect();
    ensure!(
        failures.len() == 1,
        "the agent must hear once that the open failed: {:?}",
        t.rec.sent()
    );
    ensure!(
        t.host.surfaces().is_empty(),
        "no Surface may stay open after the probe failed"
    );
    h.shut_down(t)
}
