//! `lineup-bench`: measures the host's Surface paths (open → `ready`, patch → `onState` → event
//! back, page event → outbound envelope, memory, floods) side by side with two raw wry baselines
//! that load the same document bytes through a bare custom protocol and talk over bare IPC
//! (issue #12). Prints a table, writes JSON (`--out`) and, with `--md`, BENCHMARKS.md.
//!
//! `bash scripts/bench.sh` runs the full measurement under Xvfb in release mode; `--quick` (what
//! `scripts/test.sh` runs once) takes few samples and only has to complete.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a command-line bench: its table goes to stdout, its progress to stderr"
)]

#[cfg(target_os = "linux")]
mod app;
#[cfg(target_os = "linux")]
mod child;
#[cfg(target_os = "linux")]
mod lab;
#[cfg(target_os = "linux")]
mod markdown;
#[cfg(target_os = "linux")]
mod measure;
#[cfg(target_os = "linux")]
mod phases;
#[cfg(target_os = "linux")]
mod raw;
mod report;
#[cfg(target_os = "linux")]
mod scale;

/// The `/proc` walker shared with the tests: memory of the process tree.
use lineup_procs as procs;

#[cfg(target_os = "linux")]
fn main() -> std::process::ExitCode {
    measure::main()
}

#[cfg(not(target_os = "linux"))]
fn main() -> std::process::ExitCode {
    eprintln!("lineup-bench measures the Linux (WebKitGTK) host only");
    std::process::ExitCode::FAILURE
}
