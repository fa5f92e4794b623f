//! The scenario runner of the real-webview binary `scenarios` (`harness = false`): one line per
//! scenario, a summary line, and a non-zero exit status when anything failed or when a filter of
//! the command line matched no scenario (so `cargo test --test scenarios -- <typo>` cannot pass
//! having checked nothing).
//!
//! The binary runs each group of scenarios (one former test binary, one event loop) in a process
//! of its own: it runs itself again once per group with [`GROUP_VAR`] naming the group and
//! [`REPORT_VAR`] naming a file in which the group's [`Runner`] reports, at its end, which filters
//! selected a scenario and how many passed and failed. A filter then fails the run only when it
//! matched nothing in any group ([`merged_verdict`]).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Value};

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

/// The environment variable that names the one group of scenarios a process of the `scenarios`
/// binary runs (`LINEUP_SCENARIO_GROUP=pool`); without it the binary runs every group, each in a
/// process of its own.
pub const GROUP_VAR: &str = "LINEUP_SCENARIO_GROUP";

/// The environment variable that names the file in which a group's [`Runner`] reports to the
/// process that started it ([`GroupReport`]). When it is set, a filter that matches none of the
/// group's scenarios does not fail the group: the starting process judges the filters over all
/// groups.
pub const REPORT_VAR: &str = "LINEUP_SCENARIO_REPORT";

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
    /// Where to report at the end ([`REPORT_VAR`]), leaving the unmatched filters to the caller.
    report: Option<PathBuf>,
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
        let mut runner = Self::with_filters(filters).skipping(skips);
        runner.report = std::env::var_os(REPORT_VAR).map(PathBuf::from);
        runner
    }

    /// A runner with no results yet that runs the scenarios whose names contain one of
    /// `filters`, or every scenario when there are none.
    pub fn with_filters(filters: Vec<String>) -> Self {
        Self {
            results: Vec::new(),
            filters: filters.into_iter().map(|f| (f, false)).collect(),
            skips: Vec::new(),
            report: None,
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
    /// nothing, and must not pass). A runner that reports to a file ([`REPORT_VAR`]) leaves the
    /// filters to the process it reports to.
    pub fn verdict(&self) -> (String, bool) {
        let failed = self.failures();
        let mut summary = format!("{} passed, {} failed", self.results.len() - failed, failed);
        let unmatched = if self.report.is_some() {
            Vec::new()
        } else {
            self.unmatched_filters()
        };
        if !unmatched.is_empty() {
            summary.push_str(&format!("; {}", no_match(&unmatched)));
        }
        (summary, failed == 0 && unmatched.is_empty())
    }

    /// What this runner reports to the process that started it: the filters that selected a
    /// scenario, and how many scenarios passed and failed.
    pub fn report(&self) -> GroupReport {
        let failed = self.failures();
        GroupReport {
            matched: self
                .filters
                .iter()
                .filter(|(_, matched)| *matched)
                .map(|(filter, _)| filter.clone())
                .collect(),
            passed: self.results.len() - failed,
            failed,
        }
    }

    /// Prints the summary ([`Runner::verdict`]), writes the report when asked to
    /// ([`REPORT_VAR`]), and exits, non-zero unless the run passed.
    #[allow(clippy::print_stdout)]
    pub fn finish(self) -> ! {
        let (summary, mut passed) = self.verdict();
        println!("{summary}");
        if let Some(path) = &self.report {
            if let Err(e) = std::fs::write(path, self.report().to_json().to_string()) {
                println!("cannot write the report {}: {e}", path.display());
                passed = false;
            }
        }
        std::process::exit(i32::from(!passed));
    }
}

/// "no scenario matches the filter `a`, `b`".
fn no_match(unmatched: &[&str]) -> String {
    format!(
        "no scenario matches the filter {}",
        unmatched
            .iter()
            .map(|f| format!("`{f}`"))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// What one group's process reports at its end ([`REPORT_VAR`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GroupReport {
    /// The filters of the command line that selected at least one of the group's scenarios.
    pub matched: Vec<String>,
    /// How many of the group's scenarios passed.
    pub passed: usize,
    /// How many failed.
    pub failed: usize,
}

impl GroupReport {
    /// The report as JSON: `{"matched": [...], "passed": n, "failed": n}`.
    pub fn to_json(&self) -> Value {
        json!({ "matched": self.matched, "passed": self.passed, "failed": self.failed })
    }

    /// The report read back from [`GroupReport::to_json`]'s bytes.
    pub fn from_json(bytes: &[u8]) -> Option<Self> {
        let value: Value = serde_json::from_slice(bytes).ok()?;
        let count = |key: &str| value[key].as_u64().and_then(|n| usize::try_from(n).ok());
        Some(Self {
            matched: value["matched"]
                .as_array()?
                .iter()
                .map(|f| f.as_str().map(str::to_owned))
                .collect::<Option<_>>()?,
            passed: count("passed")?,
            failed: count("failed")?,
        })
    }
}

/// How one group's process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupEnd {
    /// The group's name.
    pub group: String,
    /// Whether the process exited with status 0.
    pub success: bool,
    /// Its report, or `None` when it ended without one (it exited early or crashed).
    pub report: Option<GroupReport>,
}

/// The summary line over every group and whether the whole run passed: every group's process
/// exited with status 0 and reported, and every one of `filters` selected a scenario in some
/// group. A filter is only said to match nothing when every group reported: a group that ended
/// early may have had scenarios it selects.
pub fn merged_verdict(filters: &[String], ends: &[GroupEnd]) -> (String, bool) {
    let reports: Vec<&GroupReport> = ends.iter().filter_map(|e| e.report.as_ref()).collect();
    let passed: usize = reports.iter().map(|r| r.passed).sum();
    let failed: usize = reports.iter().map(|r| r.failed).sum();
    let mut summary = format!("{passed} passed, {failed} failed in {} groups", ends.len());
    let failed_groups: Vec<&str> = ends
        .iter()
        .filter(|e| !e.success)
        .map(|e| e.group.as_str())
        .collect();
    if !failed_groups.is_empty() {
        summary.push_str(&format!("; failed groups: {}", failed_groups.join(", ")));
    }
    let silent: Vec<&str> = ends
        .iter()
        .filter(|e| e.report.is_none())
        .map(|e| e.group.as_str())
        .collect();
    if !silent.is_empty() {
        summary.push_str(&format!("; ended without a report: {}", silent.join(", ")));
    }
    let unmatched: Vec<&str> = filters
        .iter()
        .filter(|f| !reports.iter().any(|r| r.matched.contains(f)))
        .map(String::as_str)
        .collect();
    if !unmatched.is_empty() && silent.is_empty() {
        summary.push_str(&format!("; {}", no_match(&unmatched)));
    }
    let passed = failed_groups.is_empty() && silent.is_empty() && unmatched.is_empty();
    (summary, passed)
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

    fn end(group: &str, success: bool, matched: &[&str], passed: usize) -> GroupEnd {
        GroupEnd {
            group: group.to_owned(),
            success,
            report: Some(GroupReport {
                matched: args(matched),
                passed,
                failed: usize::from(!success),
            }),
        }
    }

    #[test]
    fn a_reporting_runner_leaves_unmatched_filters_to_its_caller_and_reports_matches() {
        let mut runner = Runner::with_filters(args(&["opens", "typo"]));
        runner.report = Some(PathBuf::from("unused"));
        assert!(runner.select("r_ui_1_opens"));
        runner.record("r_ui_1_opens", Ok(()));
        assert_eq!(runner.verdict(), ("1 passed, 0 failed".to_owned(), true));
        let report = runner.report();
        assert_eq!(report.matched, ["opens"]);
        assert_eq!(
            GroupReport::from_json(report.to_json().to_string().as_bytes()),
            Some(report)
        );
    }

    #[test]
    fn across_groups_a_filter_needs_a_match_in_one_group_only() {
        let filters = args(&["opens", "closes"]);
        let ends = [
            end("a", true, &["opens"], 1),
            end("b", true, &["closes"], 2),
            end("c", true, &[], 0),
        ];
        assert_eq!(
            merged_verdict(&filters, &ends),
            ("3 passed, 0 failed in 3 groups".to_owned(), true)
        );
    }

    #[test]
    fn across_groups_a_filter_that_matches_nothing_fails_and_is_named() {
        let filters = args(&["opens", "no_such_scenario"]);
        let ends = [end("a", true, &["opens"], 1), end("b", true, &[], 0)];
        let (summary, passed) = merged_verdict(&filters, &ends);
        assert!(!passed, "{summary}");
        assert!(
            summary.contains("no scenario matches the filter `no_such_scenario`"),
            "{summary}"
        );
        assert!(!summary.contains("`opens`"), "{summary}");
    }

    #[test]
    fn across_groups_a_failed_or_silent_group_fails_the_run() {
        let (summary, passed) =
            merged_verdict(&[], &[end("a", true, &[], 1), end("b", false, &[], 0)]);
        assert!(!passed && summary.contains("failed groups: b"), "{summary}");

        let silent = GroupEnd {
            group: "c".to_owned(),
            success: false,
            report: None,
        };
        let (summary, passed) = merged_verdict(&args(&["typo"]), &[end("a", true, &[], 1), silent]);
        assert!(!passed, "{summary}");
        assert!(summary.contains("ended without a report: c"), "{summary}");
        // c might have had a scenario called `typo`: the run fails, but not for the filter.
        assert!(!summary.contains("no scenario matches"), "{summary}");
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
