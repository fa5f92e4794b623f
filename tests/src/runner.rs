//! The scenario runner of the `harness = false` real-webview binaries: one line per scenario,
//! a summary line, and a non-zero exit status when anything failed or when a filter of the
//! command line matched no scenario (so `cargo test --test <binary> -- <typo>` cannot pass
//! having checked nothing). Name the binary when filtering: every other binary would fail on
//! the filter it does not know.

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

/// The outcomes of the scenarios run so far, and which of the command line's filters selected
/// any scenario.
#[derive(Debug, Default)]
pub struct Runner {
    results: Vec<(String, Outcome)>,
    /// The substrings the command line names, each with whether it selected a scenario yet.
    filters: Vec<(String, bool)>,
    /// The values of `--skip`: scenarios whose names contain one do not run.
    skips: Vec<String>,
}

/// The options of libtest's command line that take a value, so that the value is not taken for
/// a filter (`--test-threads 1`, `--skip name`, …).
const OPTIONS_WITH_VALUES: &[&str] = &[
    "--skip",
    "--test-threads",
    "--logfile",
    "--format",
    "--color",
    "-Z",
];

/// The filters and the `--skip` values of command line `args` (without the program name): a
/// filter is every argument that is neither an option nor an option's value.
pub fn filters_of(args: impl IntoIterator<Item = String>) -> (Vec<String>, Vec<String>) {
    let (mut filters, mut skips) = (Vec::new(), Vec::new());
    let mut option: Option<String> = None;
    for arg in args {
        if let Some(option) = option.take() {
            if option == "--skip" {
                skips.push(arg);
            }
            continue;
        }
        if let Some(skip) = arg.strip_prefix("--skip=") {
            skips.push(skip.to_owned());
        } else if arg.starts_with('-') {
            option = OPTIONS_WITH_VALUES.contains(&arg.as_str()).then_some(arg);
        } else {
            filters.push(arg);
        }
    }
    (filters, skips)
}

impl Runner {
    /// A runner with no results yet, filtered by this process's command line (as
    /// `cargo test --test <binary> -- <substring>…` passes it).
    pub fn new() -> Self {
        let (filters, skips) = filters_of(std::env::args().skip(1));
        Self::with_filters(filters).skipping(skips)
    }

    /// A runner with no results yet that runs the scenarios whose names contain one of
    /// `filters`, or every scenario when there are none.
    pub fn with_filters(filters: Vec<String>) -> Self {
        Self {
            results: Vec::new(),
            filters: filters.into_iter().map(|f| (f, false)).collect(),
            skips: Vec::new(),
        }
    }

    /// This runner, also skipping the scenarios whose names contain one of `skips`.
    pub fn skipping(mut self, skips: Vec<String>) -> Self {
        self.skips = skips;
        self
    }

    /// Whether scenario `name` is to run: every scenario, unless there are filters, then those
    /// whose names contain one of them; never one whose name contains a `--skip` value. Notes
    /// which filters selected it.
    pub fn select(&mut self, name: &str) -> bool {
        if self.skips.iter().any(|skip| name.contains(skip.as_str())) {
            return false;
        }
        if self.filters.is_empty() {
            return true;
        }
        let mut selected = false;
        for (filter, matched) in &mut self.filters {
            if name.contains(filter.as_str()) {
                *matched = true;
                selected = true;
            }
        }
        selected
    }

    /// The filters that selected no scenario so far: at the end of a run, filters that would
    /// make the binary check nothing (or less than was asked for).
    pub fn unmatched_filters(&self) -> Vec<&str> {
        self.filters
            .iter()
            .filter(|(_, matched)| !matched)
            .map(|(filter, _)| filter.as_str())
            .collect()
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

    /// The summary line and whether the run passed: no scenario failed, and every filter of the
    /// command line selected at least one scenario (a filter that matches nothing checks
    /// nothing, and must not pass).
    pub fn verdict(&self) -> (String, bool) {
        let failed = self.failures();
        let mut summary = format!("{} passed, {} failed", self.results.len() - failed, failed);
        let unmatched = self.unmatched_filters();
        if !unmatched.is_empty() {
            summary.push_str(&format!(
                "; no scenario matches the filter {}",
                unmatched
                    .iter()
                    .map(|f| format!("`{f}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        (summary, failed == 0 && unmatched.is_empty())
    }

    /// Prints the summary ([`Runner::verdict`]) and exits, non-zero unless the run passed.
    #[allow(clippy::print_stdout)]
    pub fn finish(self) -> ! {
        let (summary, passed) = self.verdict();
        println!("{summary}");
        std::process::exit(i32::from(!passed));
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

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn a_filter_that_matches_no_scenario_fails_the_run_and_is_named() {
        let mut runner = Runner::with_filters(args(&["no_such_scenario"]));
        assert!(!runner.select("r_ui_1_opens"));
        let (summary, passed) = runner.verdict();
        assert!(!passed, "a filter that matched nothing passed: {summary}");
        assert!(summary.contains("`no_such_scenario`"), "{summary}");
    }

    #[test]
    fn every_filter_must_match_something() {
        let mut runner = Runner::with_filters(args(&["opens", "typo"]));
        assert!(runner.select("r_ui_1_opens"));
        runner.record("r_ui_1_opens", Ok(()));
        let (summary, passed) = runner.verdict();
        assert!(!passed, "a filter that matched nothing passed: {summary}");
        assert_eq!(runner.unmatched_filters(), ["typo"]);
    }

    #[test]
    fn matched_filters_and_no_filters_pass() {
        let mut runner = Runner::with_filters(args(&["opens"]));
        assert!(runner.select("r_ui_1_opens"));
        assert!(!runner.select("r_ui_2_closes"));
        runner.record("r_ui_1_opens", Ok(()));
        assert_eq!(runner.verdict(), ("1 passed, 0 failed".to_owned(), true));

        let mut all = Runner::with_filters(Vec::new());
        assert!(all.select("anything"));
        all.record("anything", Ok(()));
        assert!(all.verdict().1);
    }

    #[test]
    fn a_failed_scenario_fails_the_run() {
        let mut runner = Runner::with_filters(Vec::new());
        runner.record("r_ui_1_opens", Err("no".to_owned()));
        assert_eq!(runner.verdict(), ("0 passed, 1 failed".to_owned(), false));
    }

    #[test]
    fn options_and_their_values_are_not_filters() {
        let filters = filters_of(args(&[
            "--nocapture",
            "--test-threads",
            "1",
            "--skip",
            "slow",
            "opens",
            "--skip=flaky",
            "--exact",
        ]));
        assert_eq!(filters, (args(&["opens"]), args(&["slow", "flaky"])));
        let mut runner = Runner::with_filters(filters.0).skipping(filters.1);
        assert!(runner.select("r_ui_1_opens"));
        assert!(!runner.select("r_ui_1_opens_slow"));
    }
}
