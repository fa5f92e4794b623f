//! What the bench measures, in which order, and the child modes that measure a fresh process.
//!
//! - [`command`]: the command line and the files a run writes;
//! - [`plan`]: how many samples of each kind (full or `--quick`);
//! - [`run`]: the order of the measurements;
//! - [`opens`], [`patches`], [`events`], [`floods`], [`stdio`], [`memory`]: one kind of
//!   measurement each, ours beside the raw baselines;
//! - [`components`]: standard components beside Surfaces;
//! - [`machine`]: what the numbers were taken on.

use std::time::Instant;

mod command;
mod components;
mod events;
mod floods;
mod machine;
mod many;
mod memory;
mod opens;
mod patches;
mod plan;
mod run;
mod stdio;

pub(crate) use command::main;

/// Samples of ours, raw plain and raw hardened.
type Triple = (Vec<f64>, Vec<f64>, Vec<f64>);

/// Prints a progress line to stderr, stamped with the seconds since the first one.
fn progress(text: &str) {
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    let start = START.get_or_init(Instant::now);
    eprintln!(
        "[lineup-bench {:6.1}s] {text}",
        start.elapsed().as_secs_f64()
    );
}
