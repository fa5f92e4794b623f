//! The real-webview scenarios, in one test binary (`harness = false`) so that the WebKitGTK stack
//! is linked once: `xvfb-run -a cargo test -p lineup-tests --test scenarios [-- <filter>…]`.
//!
//! Each module is a group of scenarios on one event loop (tao allows one per process), some with
//! a private HOME or a private mount namespace, so each group runs in a process of its own: run
//! without [`GROUP_VAR`], the binary runs itself again once per group, a few groups at a time,
//! each on an X server of its own, with the same command line and [`GROUP_VAR`] naming the group.
//! A group's output is printed whole when it ends; a filter must select a scenario in some group,
//! and the run fails if any group failed. `LINEUP_SCENARIO_GROUP=pool cargo test -p lineup-tests
//! --test scenarios` runs one group in this process.
#![allow(clippy::print_stdout, clippy::unwrap_used, missing_docs)]

mod app_call;
mod authors;
mod bridge;
mod builtins;
mod components;
mod consent;
mod embedder_components;
mod first_surface;
mod hibernation;
mod host_e2e;
mod input;
mod isolation;
mod leaks;
mod libraries;
mod mcp_host;
mod mcp_view;
mod pool;
mod probe;
mod recovery;

use std::collections::VecDeque;
use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::Instant;

use lineup_tests::runner::{
    filters_of, merged_verdict, require_display, GroupEnd, GroupReport, GROUP_VAR, REPORT_VAR,
};
use lineup_tests::xvfb::Xvfb;

/// The number of groups run at a time (default 3). Most of a group's time is spent waiting (for
/// a page, a guard, an expiry), so three share two cores with room to spare.
const JOBS_VAR: &str = "LINEUP_SCENARIO_JOBS";

/// Every group, in the order they start: the longest first (as measured in a fresh clone's run),
/// so that the short ones fill in beside them at the end.
const GROUPS: &[(&str, fn())] = &[
    ("host_e2e", host_e2e::run),
    ("components", components::run),
    ("hibernation", hibernation::run),
    ("leaks", leaks::run),
    ("recovery", recovery::run),
    ("libraries", libraries::run),
    ("embedder_components", embedder_components::run),
    ("consent", consent::run),
    ("isolation", isolation::run),
    ("probe", probe::run),
    ("mcp_view", mcp_view::run),
    ("mcp_host", mcp_host::run),
    ("bridge", bridge::run),
    ("authors", authors::run),
    ("pool", pool::run),
    ("input", input::run),
    ("first_surface", first_surface::run),
    ("app_call", app_call::run),
    ("builtins", builtins::run),
];

fn main() {
    match std::env::var(GROUP_VAR) {
        Ok(group) => run_group(&group),
        Err(_) => run_all(),
    }
}

/// Runs the scenarios of `group` in this process; exits.
fn run_group(group: &str) {
    require_display();
    let Some((_, run)) = GROUPS.iter().find(|(name, _)| *name == group) else {
        let names: Vec<&str> = GROUPS.iter().map(|(name, _)| *name).collect();
        println!(
            "{GROUP_VAR}={group} names no group; the groups: {}",
            names.join(", ")
        );
        std::process::exit(2);
    };
    run();
    // Every group ends in its runner's `finish`, which exits.
    std::process::exit(0);
}

/// Runs every group in a process of its own, [`JOBS_VAR`] of them at a time (default 3), each on
/// an X server of its own ([`Xvfb`]) so that no group's windows or XTEST input reach another's;
/// a group's output is printed whole when it ends. Exits non-zero if a group failed or a filter
/// selected no scenario in any group.
fn run_all() {
    let (filters, _) = filters_of(std::env::args().skip(1));
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => {
            println!("cannot find this binary to run its groups: {e}");
            std::process::exit(1);
        }
    };
    let jobs = match std::env::var(JOBS_VAR).map(|v| v.parse::<usize>()) {
        Err(_) => 3,
        Ok(Ok(jobs)) if (1..=GROUPS.len()).contains(&jobs) => jobs,
        Ok(_) => {
            println!("{JOBS_VAR} must be a number from 1 to {}", GROUPS.len());
            std::process::exit(2);
        }
    };
    let queue = Mutex::new(
        GROUPS
            .iter()
            .map(|(name, _)| *name)
            .collect::<VecDeque<_>>(),
    );
    let ends = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| {
                while let Some(group) = queue.lock().ok().and_then(|mut q| q.pop_front()) {
                    let end = run_group_process(&exe, group);
                    if let Ok(mut ends) = ends.lock() {
                        ends.push(end);
                    }
                }
            });
        }
    });
    let mut ends = ends.into_inner().unwrap_or_default();
    ends.sort_by_key(|end| GROUPS.iter().position(|(name, _)| *name == end.group));
    let (summary, passed) = merged_verdict(&filters, &ends);
    println!("---- all groups: {summary}");
    std::process::exit(i32::from(!passed));
}

/// Runs `group` in a child process of `exe` with this command line, on a new X server, its
/// output (stdout and stderr in order) into a file that is printed when it ends.
fn run_group_process(exe: &Path, group: &str) -> GroupEnd {
    let started = Instant::now();
    let tag = format!("lineup-scenarios-{}-{group}", std::process::id());
    let report_path = std::env::temp_dir().join(format!("{tag}.json"));
    let log_path = std::env::temp_dir().join(format!("{tag}.log"));
    let _ = std::fs::remove_file(&report_path);
    println!("---- group {group} started ({GROUP_VAR}={group})");
    let _ = std::io::stdout().flush();
    let status = Xvfb::start().and_then(|x| {
        let log = File::create(&log_path).map_err(|e| format!("{}: {e}", log_path.display()))?;
        let err = log.try_clone().map_err(|e| e.to_string())?;
        Command::new(exe)
            .args(std::env::args_os().skip(1))
            .env(GROUP_VAR, group)
            .env(REPORT_VAR, &report_path)
            .env("DISPLAY", x.display())
            .env_remove("WAYLAND_DISPLAY")
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(err)
            .status()
            .map_err(|e| format!("cannot run group {group}: {e}"))
    });
    let output = std::fs::read_to_string(&log_path).unwrap_or_default();
    let _ = std::fs::remove_file(&log_path);
    let report = std::fs::read(&report_path)
        .ok()
        .and_then(|bytes| GroupReport::from_json(&bytes));
    let _ = std::fs::remove_file(&report_path);
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "---- group {group} ({GROUP_VAR}={group}), {:.0} s:",
        started.elapsed().as_secs_f64()
    );
    let _ = out.write_all(output.as_bytes());
    match (&status, &report) {
        (Err(e), _) => {
            let _ = writeln!(out, "group {group}: {e}");
        }
        (Ok(status), None) => {
            let _ = writeln!(out, "group {group} ended without a report ({status})");
        }
        _ => {}
    }
    let _ = out.flush();
    GroupEnd {
        group: group.to_owned(),
        success: status.is_ok_and(|s| s.success()),
        report,
    }
}
