//! The isolation gate of R-SEC-8 in a real WebKitGTK webview: Surfaces are refused until the
//! probe passes, the web-process sandbox really puts web processes in a namespace of their own, a
//! probe that cannot finish fails closed, and the cap on open Surfaces holds.
#![allow(clippy::print_stdout, clippy::unwrap_used, missing_docs)]

use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::rc::Rc;
use std::time::{Duration, Instant};

use lineup_host::platform::{Placement, Shell, ViewEvent};
use lineup_host::{ProbeStatus, ShellError, ViewConfig};
use lineup_surface_runtime::SurfaceServer;
use lineup_tests::ensure;
use lineup_tests::home::private_home;
use lineup_tests::procs::{kill, mount_namespace, web_processes};
use lineup_tests::runner::{Outcome, WAIT};
use lineup_tests::view_harness::{pump, Harness, Log, Page};
use tao::event_loop::EventLoop;

pub(crate) fn run() {
    private_home("probe");
    let mut harness = Harness::start(ViewConfig::default().with_max_views(2));
    harness.run(
        "r_sec_8_surfaces_refused_until_the_probe_passes",
        refused_until_passed,
    );
    harness.run(
        "r_sec_8_web_process_runs_in_its_own_mount_namespace",
        own_namespace,
    );
    harness.run(
        "r_sec_8_probe_that_cannot_finish_fails_closed",
        fails_closed,
    );
    harness.run(
        "r_sec_3_probe_fails_closed_when_the_engine_ignores_the_network_proxy",
        proxy_ignored_fails_closed,
    );
    harness.run(
        "r_sec_8_gated_view_is_served_only_after_the_probe_passed",
        gated_served_after_pass,
    );
    harness.run(
        "r_sec_8_gated_view_is_never_served_when_the_probe_fails",
        gated_fails_closed,
    );
    harness.run(
        "r_sec_8_probe_tries_again_when_its_web_process_vanished_before_the_check",
        vanished_tried_again,
    );
    harness.run(
        "r_sec_8_probe_whose_web_processes_always_vanish_fails_saying_so",
        always_vanished_fails,
    );
    harness.run(
        "r_sec_8_probe_that_finds_the_host_namespace_still_refuses",
        host_namespace_refused,
    );
    harness.run(
        "max_views_refuses_the_next_surface_until_one_closes",
        max_views,
    );
    harness.finish();
}

fn window() -> Placement<'static> {
    Placement::Window {
        title: "probe test".to_owned(),
        width: 200,
        height: 100,
    }
}

fn refused_until_passed(h: &mut Harness) -> Outcome {
    let shell = Shell::start(&h.event_loop, ViewConfig::default()).map_err(|e| e.to_string())?;
    let page = Page::new("<p>x</p>", "");
    let early = shell.open(&h.event_loop, h.server(&page), window(), |_| {});
    ensure!(
        matches!(early, Err(ShellError::ProbePending)),
        "open before the probe finished must be refused as pending, got {early:?}"
    );
    let started = Instant::now();
    pump(&mut h.event_loop, &[], Duration::from_secs(30), || {
        shell.probe_status() != ProbeStatus::Pending
    });
    let status = shell.probe_status();
    ensure!(
        status == ProbeStatus::Passed,
        "probe did not pass: {status:?}"
    );
    println!(
        "    probe passed in {:.2}s",
        started.elapsed().as_secs_f64()
    );
    let log = Log::default();
    let view = shell.open(&h.event_loop, h.server(&page), window(), log.sink());
    ensure!(view.is_ok(), "open after the probe passed failed: {view:?}");
    let hardening = view
        .as_ref()
        .map(|v| v.hardening())
        .map_err(|e| e.to_string())?;
    ensure!(
        hardening.web_sandbox
            && hardening.ephemeral
            && hardening.own_context
            && !hardening.devtools,
        "view not hardened: {hardening:?}"
    );
    Ok(())
}

/// Opens a page with `shell` and returns the web processes that appeared for it.
fn processes_of_new_view(
    event_loop: &mut EventLoop<()>,
    shell: &Shell,
    server: SurfaceServer,
) -> Result<HashSet<u32>, String> {
    let before = web_processes();
    let log = Log::default();
    let view = shell
        .open(event_loop, server, window(), log.sink())
        .map_err(|e| e.to_string())?;
    let ready = pump(event_loop, &[], WAIT, || log.ready());
    ensure!(ready, "page not ready: {:?}", log.events());
    let new: HashSet<u32> = web_processes().difference(&before).copied().collect();
    view.close();
    ensure!(!new.is_empty(), "no new web process found");
    Ok(new)
}

fn own_namespace(h: &mut Harness) -> Outcome {
    let own = mount_namespace("self")?;
    let page = Page::new("<p>ns</p>", "");
    let server = h.server(&page);
    let sandboxed = processes_of_new_view(&mut h.event_loop, &h.shell, server)?;
    for pid in &sandboxed {
        let ns = mount_namespace(&pid.to_string())?;
        ensure!(
            ns != own,
            "web process {pid} shares the host mount namespace {ns:?}"
        );
    }
    // Positive control: without the sandbox the same check sees the host's namespace.
    let unsandboxed_config = ViewConfig::default().dangerous().without_web_sandbox();
    let shell = Shell::start(&h.event_loop, unsandboxed_config).map_err(|e| e.to_string())?;
    pump(&mut h.event_loop, &[], Duration::from_secs(30), || {
        shell.probe_status() != ProbeStatus::Pending
    });
    ensure!(
        shell.probe_status() == ProbeStatus::Passed,
        "unsandboxed probe: {:?}",
        shell.probe_status()
    );
    let server = h.server(&page);
    let plain = processes_of_new_view(&mut h.event_loop, &shell, server)?;
    let shared = plain
        .iter()
        .filter(|pid| mount_namespace(&pid.to_string()).is_ok_and(|ns| ns == own))
        .count();
    ensure!(
        shared > 0,
        "control: an unsandboxed web process should share the host namespace"
    );
    Ok(())
}

fn fails_closed(h: &mut Harness) -> Outcome {
    let config = ViewConfig::default().with_probe_timeout(Duration::ZERO);
    let shell = Shell::start(&h.event_loop, config).map_err(|e| e.to_string())?;
    let status = shell.probe_status();
    ensure!(
        matches!(&status, ProbeStatus::Failed(reason) if reason.contains("did not report")),
        "a probe past its deadline must fail, got {status:?}"
    );
    // The verdict is final, even once the loop has run long enough for a report to arrive.
    h.settle(Duration::from_secs(2));
    ensure!(
        matches!(shell.probe_status(), ProbeStatus::Failed(_)),
        "a failed probe must stay failed"
    );
    refuses_after_failure(h, &shell)
}

/// R-SEC-3, R-SEC-8: the probe's page preconnects to a loopback listener it owns, and its view's
/// proxy is a second listener. With the proxy settings honoured the connection arrives at the
/// proxy and the probe passes; an engine that ignored them (simulated by giving no context the
/// settings) connects to the listener itself, and the probe fails: no Surface is served, and a
/// view opened meanwhile is never served. The pass of the default configuration in the same run
/// is the positive control.
fn proxy_ignored_fails_closed(h: &mut Harness) -> Outcome {
    let passing = Shell::start(&h.event_loop, ViewConfig::default()).map_err(|e| e.to_string())?;
    let config = ViewConfig::default().dangerous().ignoring_network_proxy();
    let shell = Shell::start(&h.event_loop, config).map_err(|e| e.to_string())?;
    let page = Page::new("<p>held</p>", "");
    let log = Log::default();
    let held = shell
        .open_gated(&h.event_loop, h.server(&page), window(), log.sink())
        .map_err(|e| format!("a gated open while the probe runs must succeed: {e}"))?;
    pump(&mut h.event_loop, &[], Duration::from_secs(30), || {
        passing.probe_status() != ProbeStatus::Pending
            && shell.probe_status() != ProbeStatus::Pending
    });
    ensure!(
        passing.probe_status() == ProbeStatus::Passed,
        "control: the default probe must pass: {:?}",
        passing.probe_status()
    );
    let status = shell.probe_status();
    ensure!(
        matches!(&status, ProbeStatus::Failed(reason) if reason.contains("reached a loopback listener")),
        "a probe whose page connected to its listener must fail, got {status:?}"
    );
    h.settle(Duration::from_millis(500));
    ensure!(
        !log.ready(),
        "a view held while the probe ran was served after it failed: {:?}",
        log.events()
    );
    held.close();
    let refused = shell.open(&h.event_loop, h.server(&page), window(), |_| {});
    ensure!(
        matches!(refused, Err(ShellError::ProbeFailed { .. })),
        "open after a failed probe must be refused, got {refused:?}"
    );
    Ok(())
}

/// The first Surface no longer waits for the probe (#12): `open_gated` creates its view while the
/// probe runs, but the page's document (and so its script) is served only once the probe passed.
fn gated_served_after_pass(h: &mut Harness) -> Outcome {
    let shell = Shell::start(&h.event_loop, ViewConfig::default()).map_err(|e| e.to_string())?;
    let page = Page::new("<p>early</p>", "");
    let log = Log::default();
    let view = shell
        .open_gated(&h.event_loop, h.server(&page), window(), log.sink())
        .map_err(|e| format!("a gated open while the probe runs must succeed: {e}"))?;
    ensure!(
        shell.probe_status() == ProbeStatus::Pending,
        "the view must have been created while the probe was pending"
    );
    // The gate opens inside `probe_status`; a `ready` seen before any call that returned
    // `Passed` would be a document served before the verdict.
    let (mut passed, mut early) = (false, false);
    let ready = pump(&mut h.event_loop, &[], Duration::from_secs(30), || {
        if log.ready() && !passed {
            early = true;
        }
        passed = passed || shell.probe_status() == ProbeStatus::Passed;
        log.ready()
    });
    ensure!(!early, "the page ran before the probe passed");
    ensure!(passed, "probe did not pass: {:?}", shell.probe_status());
    ensure!(
        ready,
        "the held document was not served after the probe passed: {:?}",
        log.events()
    );
    view.close();
    Ok(())
}

/// Fail-closed with the new order: a view opened while the probe runs never gets its document
/// when the probe then fails (here: it cannot report within 50 ms), and nothing of the page runs.
fn gated_fails_closed(h: &mut Harness) -> Outcome {
    let config = ViewConfig::default().with_probe_timeout(Duration::from_millis(50));
    let shell = Shell::start(&h.event_loop, config).map_err(|e| e.to_string())?;
    let page = Page::new("<p>never</p>", "post('ran', {});");
    let log = Log::default();
    let view = shell.open_gated(&h.event_loop, h.server(&page), window(), log.sink());
    ensure!(
        view.is_ok(),
        "a gated open while the probe runs must create the view, got {view:?}"
    );
    pump(&mut h.event_loop, &[], Duration::from_secs(30), || {
        shell.probe_status() != ProbeStatus::Pending
    });
    let status = shell.probe_status();
    ensure!(
        matches!(&status, ProbeStatus::Failed(reason) if reason.contains("did not report")),
        "a probe past its deadline must fail, got {status:?}"
    );
    // Long enough for a served document to load, run its script and post.
    h.settle(Duration::from_secs(3));
    let ipc = log.count(|e| matches!(e, ViewEvent::Ipc(_)));
    ensure!(
        ipc == 0 && !log.ready() && log.posts("ran").is_empty(),
        "the page of a gated view ran although the probe failed: {:?}",
        log.events()
    );
    ensure!(
        !log.has(|e| matches!(e, ViewEvent::DocumentCommitted)),
        "a document was committed although the probe failed: {:?}",
        log.events()
    );
    let later = shell.open_gated(&h.event_loop, h.server(&page), window(), |_| {});
    ensure!(
        matches!(later, Err(ShellError::ProbeFailed { .. })),
        "a gated open after a failed probe must be refused, got {later:?}"
    );
    drop(view);
    Ok(())
}

fn max_views(h: &mut Harness) -> Outcome {
    let page = Page::new("<p>x</p>", "");
    let (first, _) = h.open(&page)?;
    let (second, _) = h.open(&page)?;
    ensure!(h.shell.open_views() == 2, "two views open");
    let third = h
        .shell
        .open(&h.event_loop, h.server(&page), window(), |_| {});
    ensure!(
        matches!(third, Err(ShellError::TooManySurfaces { limit: 2 })),
        "the third view must be refused, got {third:?}"
    );
    first.close();
    ensure!(h.shell.open_views() == 1, "closing frees a slot");
    let (again, _) = h.open(&page)?;
    drop(again);
    drop(second);
    ensure!(h.shell.open_views() == 0, "dropping frees slots");
    Ok(())
}

/// Kills each of `pids` and waits until its mount namespace can no longer be read (the process
/// gone, or a zombie): the state the probe's check met in the race of #49.
fn end_before_the_read(pids: &HashSet<u32>) {
    for pid in pids {
        let _ = kill(*pid);
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while pids
        .iter()
        .any(|pid| mount_namespace(&pid.to_string()).is_ok())
        && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// #49 item 7 (R-SEC-8): the probe's web process ends between the probe's listing of its web
/// processes and the read of their mount namespaces. That attempt learned nothing; the probe
/// loads its page again, checks the new process, passes, and a Surface opens. Before, the probe
/// failed ("cannot read the mount namespace of web process …") and no Surface was ever served.
fn vanished_tried_again(h: &mut Harness) -> Outcome {
    let shell = Shell::start(&h.event_loop, ViewConfig::default()).map_err(|e| e.to_string())?;
    let held = Rc::new(Cell::new(0u32));
    let ended = Rc::new(RefCell::new(HashSet::new()));
    let (count, seen) = (Rc::clone(&held), Rc::clone(&ended));
    shell.hold_probe_check_for_test(move |pids: &mut HashSet<u32>| {
        count.set(count.get() + 1);
        if count.get() == 1 {
            end_before_the_read(pids);
            seen.borrow_mut().extend(pids.iter().copied());
        }
    });
    pump(&mut h.event_loop, &[], Duration::from_secs(60), || {
        shell.probe_status() != ProbeStatus::Pending
    });
    let status = shell.probe_status();
    ensure!(
        status == ProbeStatus::Passed,
        "a probe whose web process vanished must try again and pass, got {status:?}"
    );
    ensure!(
        !ended.borrow().is_empty(),
        "the hold found no web process to end"
    );
    ensure!(
        held.get() == 2,
        "the probe must have checked twice (one retry), checked {} times",
        held.get()
    );
    let page = Page::new("<p>after a retry</p>", "");
    let log = Log::default();
    let view = shell
        .open(&h.event_loop, h.server(&page), window(), log.sink())
        .map_err(|e| format!("the Surface after the retry was refused: {e}"))?;
    ensure!(
        pump(&mut h.event_loop, &[], WAIT, || log.ready()),
        "the Surface after the retry did not get ready: {:?}",
        log.events()
    );
    view.close();
    Ok(())
}

/// The bound of the retry: a probe whose web processes end before every check fails closed after
/// its last attempt, and its reason says that they vanished, not that the sandbox is off.
fn always_vanished_fails(h: &mut Harness) -> Outcome {
    let shell = Shell::start(&h.event_loop, ViewConfig::default()).map_err(|e| e.to_string())?;
    let held = Rc::new(Cell::new(0u32));
    let count = Rc::clone(&held);
    shell.hold_probe_check_for_test(move |pids: &mut HashSet<u32>| {
        count.set(count.get() + 1);
        end_before_the_read(pids);
    });
    pump(&mut h.event_loop, &[], Duration::from_secs(60), || {
        shell.probe_status() != ProbeStatus::Pending
    });
    let status = shell.probe_status();
    ensure!(
        matches!(&status, ProbeStatus::Failed(reason)
            if reason.contains("ended before") && reason.contains("attempt 3 of 3")
                && !reason.contains("shares the host")),
        "a probe whose processes always vanish must fail saying so, got {status:?}"
    );
    ensure!(held.get() == 3, "three checks, saw {}", held.get());
    refuses_after_failure(h, &shell)
}

/// The control of the retry: a live process that is read and found in the host's own mount
/// namespace (a process of the test's, in the host's namespace, added to the probe's list while
/// the check is held) fails the probe at once, with the other message, and is never tried again.
fn host_namespace_refused(h: &mut Harness) -> Outcome {
    let mut sleeper = std::process::Command::new("sleep")
        .arg("60")
        .spawn()
        .map_err(|e| format!("cannot start sleep: {e}"))?;
    let outsider = sleeper.id();
    let shell = Shell::start(&h.event_loop, ViewConfig::default()).map_err(|e| e.to_string())?;
    let held = Rc::new(Cell::new(0u32));
    let count = Rc::clone(&held);
    shell.hold_probe_check_for_test(move |pids: &mut HashSet<u32>| {
        count.set(count.get() + 1);
        pids.insert(outsider);
    });
    pump(&mut h.event_loop, &[], Duration::from_secs(60), || {
        shell.probe_status() != ProbeStatus::Pending
    });
    let status = shell.probe_status();
    let _ = sleeper.kill();
    let _ = sleeper.wait();
    ensure!(
        matches!(&status, ProbeStatus::Failed(reason)
            if reason.contains(&format!("web process {outsider} shares the host's mount namespace"))
                && !reason.contains("ended before")),
        "a probe that reads a process in the host's namespace must refuse, got {status:?}"
    );
    ensure!(
        held.get() == 1,
        "no retry after a refusal, checked {} times",
        held.get()
    );
    Ok(())
}

/// An open after the probe failed is refused with the probe's failure.
fn refuses_after_failure(h: &mut Harness, shell: &Shell) -> Outcome {
    let page = Page::new("<p>x</p>", "");
    let refused = shell.open(&h.event_loop, h.server(&page), window(), |_| {});
    ensure!(
        matches!(refused, Err(ShellError::ProbeFailed { .. })),
        "open after a failed probe must be refused, got {refused:?}"
    );
    Ok(())
}
