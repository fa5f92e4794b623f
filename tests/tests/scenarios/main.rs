//! The real-webview scenarios, in one test binary (`harness = false`) so that the WebKitGTK stack
//! is linked once: `xvfb-run -a cargo test -p lineup-tests --test scenarios [-- <filter>…]`.
//!
//! Each module is a group of scenarios on one event loop (tao allows one per process), some with
//! a private HOME or a private mount namespace, so each group runs in a process of its own: run
//! without [`GROUP_VAR`], the binary runs itself again once per group, one group after another
//! (they share one X display), with the same command line and [`GROUP_VAR`] naming the group.
//! The groups' output goes straight through; a filter must select a scenario in some group, and
//! the run fails if any group failed. `LINEUP_SCENARIO_GROUP=pool cargo test -p lineup-tests
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
mod pool;
mod probe;
mod recovery;

use std::io::Write;
use std::process::Command;

use lineup_tests::runner::{
    filters_of, merged_verdict, require_display, GroupEnd, GroupReport, GROUP_VAR, REPORT_VAR,
};

/// Every group, in the order they run, with the function that runs its scenarios and exits.
const GROUPS: &[(&str, fn())] = &[
    ("app_call", app_call::run),
    ("authors", authors::run),
    ("bridge", bridge::run),
    ("builtins", builtins::run),
    ("components", components::run),
    ("consent", consent::run),
    ("embedder_components", embedder_components::run),
    ("first_surface", first_surface::run),
    ("hibernation", hibernation::run),
    ("host_e2e", host_e2e::run),
    ("input", input::run),
    ("isolation", isolation::run),
    ("leaks", leaks::run),
    ("libraries", libraries::run),
    ("pool", pool::run),
    ("probe", probe::run),
    ("recovery", recovery::run),
];

fn main() {
    match std::env::var(GROUP_VAR) {
        Ok(group) => run_group(&group),
        Err(_) => run_all(),
    }
}

/// Runs the scenarios of `group` in this process; exits.
fn run_group(group: &str) {
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

/// Runs every group in a process of its own, one after another; exits non-zero if a group
/// failed or a filter selected no scenario in any group.
fn run_all() {
    require_display();
    let (filters, _) = filters_of(std::env::args().skip(1));
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => {
            println!("cannot find this binary to run its groups: {e}");
            std::process::exit(1);
        }
    };
    let mut ends = Vec::new();
    for (group, _) in GROUPS {
        let report_path = std::env::temp_dir().join(format!(
            "lineup-scenarios-{}-{group}.json",
            std::process::id()
        ));
        let _ = std::fs::remove_file(&report_path);
        println!("---- group {group} ({GROUP_VAR}={group})");
        let _ = std::io::stdout().flush();
        let status = Command::new(&exe)
            .args(std::env::args_os().skip(1))
            .env(GROUP_VAR, group)
            .env(REPORT_VAR, &report_path)
            .status();
        let success = match &status {
            Ok(status) => status.success(),
            Err(e) => {
                println!("cannot run group {group}: {e}");
                false
            }
        };
        let report = std::fs::read(&report_path)
            .ok()
            .and_then(|bytes| GroupReport::from_json(&bytes));
        let _ = std::fs::remove_file(&report_path);
        if let (Ok(status), None) = (&status, &report) {
            println!("group {group} ended without a report ({status})");
        }
        ends.push(GroupEnd {
            group: (*group).to_owned(),
            success,
            report,
        });
    }
    let (summary, passed) = merged_verdict(&filters, &ends);
    println!("---- all groups: {summary}");
    std::process::exit(i32::from(!passed));
}
