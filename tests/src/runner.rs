//! The scenario runner of the `harness = false` real-webview binaries: one line per scenario,
//! a summary line, and a non-zero exit status when anything failed.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Duration;

/// What a scenario returns: `Err` says what went wrong.
pub type Outcome = Result<(), String>;

/// Returns early from a scenario with a formatted message when `cond` is false.
#[macro_export]
macro_rules! ensure {
    ($cond:expr, $($msg:tt)+) => {
        if !$cond {
            return Err(format!($($msg)+));
        }
    };
}

/// How long a scenario waits, by default, for something a page or the host should do.
pub const WAIT: Duration = Duration::from_secs(10);

/// Runs `scenario`; a panic counts as a failure.
pub fn catch(scenario: impl FnOnce() -> Outcome) -> Outcome {
    catch_unwind(AssertUnwindSafe(scenario)).unwrap_or_else(|payload| {
        let why = payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_default();
        Err(format!("panicked: {why}"))
    })
}

/// The outcomes of the scenarios run so far.
#[derive(Debug, Default)]
pub struct Runner {
    results: Vec<(String, Outcome)>,
}

impl Runner {
    /// A runner with no results yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether scenario `name` is to run: every scenario, unless the command line names
    /// substrings (as `cargo test --test <binary> -- <substring>…` does), then those that contain
    /// one of them.
    pub fn selected(name: &str) -> bool {
        let filters: Vec<String> = std::env::args()
            .skip(1)
            .filter(|a| !a.starts_with('-'))
            .collect();
        filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str()))
    }

    /// Records the outcome of scenario `name` and prints `ok name` or `FAILED name: why`.
    #[allow(clippy::print_stdout)]
    pub fn record(&mut self, name: &str, outcome: Outcome) {
        match &outcome {
            Ok(()) => println!("ok {name}"),
            Err(why) => println!("FAILED {name}: {}", why.replace('\n', " ")),
        }
        self.results.push((name.to_owned(), outcome));
    }

    /// How many scenarios failed so far.
    pub fn failures(&self) -> usize {
        self.results.iter().filter(|(_, o)| o.is_err()).count()
    }

    /// Prints `N passed, M failed` and exits, non-zero if a scenario failed.
    #[allow(clippy::print_stdout)]
    pub fn finish(self) -> ! {
        let failed = self.failures();
        println!("{} passed, {} failed", self.results.len() - failed, failed);
        std::process::exit(i32::from(failed > 0));
    }
}

/// Exits with a message unless a display (`DISPLAY` or `WAYLAND_DISPLAY`) is set: these tests
/// drive real webviews.
#[allow(clippy::print_stdout)]
pub fn require_display() {
    if std::env::var_os("DISPLAY").is_none() && std::env::var_os("WAYLAND_DISPLAY").is_none() {
        println!(
            "these tests drive real webviews and need a display: run them under `xvfb-run -a`"
        );
        std::process::exit(1);
    }
}
