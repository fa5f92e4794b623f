//! `lineup-conformance`: runs the conformance cases under `conformance/cases/` against a host
//! command that speaks `lineup.v1` over stdin/stdout.
//!
//! `lineup-conformance [--cases DIR] [--filter G] [--jobs N] [--json REPORT] [--engine E] [--fresh-hosts] -- <host command…>`
//!
//! `--engine servo` says the host shows Surfaces with Servo: a case's `{{raw_post}}` is then the
//! console channel instead of WebKit's message handler, and its `xfail_servo` applies in place
//! of `xfail`.
//!
//! When a selected case needs the DNS canary, the runner runs itself again in a private mount
//! namespace whose `/etc/resolv.conf` names its DNS stub (see `dns`); without one, those cases
//! are skipped with the reason.

mod canary;
mod case;
mod dns;
mod host;
mod lint;
mod runner;
mod shared;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use serde_json::json;

use crate::runner::Outcome;

struct Args {
    cases: PathBuf,
    filter: Option<String>,
    json: Option<PathBuf>,
    jobs: usize,
    engine: case::Engine,
    /// Whether every case starts a host of its own (`--fresh-hosts`).
    fresh_hosts: bool,
    command: Vec<String>,
}

fn parse(mut argv: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut args = Args {
        cases: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("cases"),
        filter: None,
        json: None,
        jobs: 1,
        engine: case::Engine::Webkit,
        fresh_hosts: false,
        command: Vec::new(),
    };
    while let Some(arg) = argv.next() {
        match arg.as_str() {
            "--cases" => args.cases = argv.next().ok_or("--cases needs a folder")?.into(),
            "--filter" => args.filter = Some(argv.next().ok_or("--filter needs a group")?),
            "--json" => args.json = Some(argv.next().ok_or("--json needs a path")?.into()),
            "--jobs" => {
                args.jobs = argv
                    .next()
                    .and_then(|n| n.parse().ok())
                    .filter(|n| (1..=64).contains(n))
                    .ok_or("--jobs needs a number from 1 to 64")?;
            }
            "--engine" => {
                args.engine = match argv.next().as_deref() {
                    Some("webkit") => case::Engine::Webkit,
                    Some("servo") => case::Engine::Servo,
                    _ => return Err("--engine needs webkit or servo".into()),
                }
            }
            "--fresh-hosts" => args.fresh_hosts = true,
            "--" => {
                args.command = argv.collect();
                break;
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    if args.command.is_empty() {
        return Err("usage: lineup-conformance [--cases DIR] [--filter G] [--jobs N] [--json REPORT] [--engine webkit|servo] [--fresh-hosts] -- <host command…>".into());
    }
    Ok(args)
}

#[allow(clippy::print_stdout, clippy::print_stderr)]
fn main() -> ExitCode {
    let args = match parse(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let cases = match lint::load(&args.cases) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let selected: Vec<&case::Case> = cases
        .iter()
        .filter(|c| {
            args.filter
                .as_ref()
                .is_none_or(|f| &c.group == f || c.id.starts_with(f.as_str()))
        })
        .collect();
    // Before any case runs: this may run the kit again inside the namespace, and not return.
    let resolver = if selected.iter().any(|c| c.uses_dns()) {
        dns::private_resolver()
    } else {
        Err("no selected case needs it".to_owned())
    };
    if let Err(why) = &resolver {
        if selected.iter().any(|c| c.uses_dns()) {
            eprintln!("no DNS canary, its cases are skipped: {why}");
        }
    }
    let started = Instant::now();
    let outcomes = run_all(&selected, &args, resolver.as_ref(), |case, outcome, ms| {
        let (word, detail) = words(outcome);
        println!(
            "{word:7} {}/{} [{}] {ms} ms {detail}",
            case.group,
            case.id,
            case.rules.join(",")
        );
    });
    let (mut passed, mut failed, mut skipped, mut xfailed) = (0, 0, 0, 0);
    let mut report = Vec::new();
    for (case, (outcome, ms)) in selected.iter().zip(&outcomes) {
        match outcome {
            Outcome::Pass => passed += 1,
            Outcome::Fail(_) | Outcome::UnexpectedPass => failed += 1,
            Outcome::ExpectedFail(_) => xfailed += 1,
            Outcome::Skip(_) => skipped += 1,
        }
        let (word, detail) = words(outcome);
        report.push(json!({
            "id": case.id, "group": case.group, "rules": case.rules, "result": word,
            "unexpected": outcome.is_unexpected(), "detail": detail, "ms": ms,
        }));
    }
    let mut closing = format!("{passed} passed, {failed} failed");
    if skipped > 0 {
        closing.push_str(&format!(", {skipped} skipped"));
    }
    if xfailed > 0 {
        closing.push_str(&format!(", {xfailed} expected failures"));
    }
    println!("{closing}");
    if let Some(path) = &args.json {
        // Every name the DNS stub was asked in this run (each case's own name among them only
        // when something looked it up), or why there was no stub.
        let dns_canary = match &resolver {
            Ok(stub) => json!({"stub": stub.address().to_string(), "names": stub.names()}),
            Err(why) => json!({"unavailable": why}),
        };
        let doc = json!({
            "passed": passed, "failed": failed, "skipped": skipped, "expected_failures": xfailed,
            "seconds": started.elapsed().as_secs_f64(), "command": args.command,
            "engine": format!("{:?}", args.engine).to_lowercase(), "dns_canary": dns_canary,
            "cases": report,
        });
        if let Err(e) = std::fs::write(path, format!("{doc:#}\n")) {
            eprintln!("{}: {e}", path.display());
            return ExitCode::FAILURE;
        }
    }
    if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// The result word and detail of an outcome, as printed and reported.
fn words(outcome: &Outcome) -> (&'static str, String) {
    match outcome {
        Outcome::Pass => ("ok", String::new()),
        Outcome::Fail(why) => ("FAILED", why.clone()),
        Outcome::ExpectedFail(why) => ("xfail", why.clone()),
        Outcome::UnexpectedPass => ("XPASS", "passed though marked xfail".into()),
        Outcome::Skip(why) => ("skipped", why.clone()),
    }
}

/// Runs `cases` on `jobs` threads, each with its worker's host (which the cases that allow it
/// share, see `shared.rs`; each case has its own canary, and its own name at the DNS stub), calls
/// `done` as each one ends, and returns each case's outcome and milliseconds in the order of
/// `cases`.
fn run_all(
    cases: &[&case::Case],
    args: &Args,
    dns: Result<&dns::DnsStub, &String>,
    done: impl Fn(&case::Case, &Outcome, u128) + Sync,
) -> Vec<(Outcome, u128)> {
    run_each(
        cases,
        args.jobs,
        || shared::Worker::new(&args.command, !args.fresh_hosts),
        |worker, case| {
            let t = Instant::now();
            let outcome = runner::run_case(case, worker, args.engine, dns.map_err(String::as_str));
            let ms = t.elapsed().as_millis();
            done(case, &outcome, ms);
            (outcome, ms)
        },
    )
}

/// Calls `work` once for each item on up to `jobs` threads, each with a state of its own made by
/// `init`; the results keep the items' order.
fn run_each<T: Sync, S, R: Send>(
    items: &[T],
    jobs: usize,
    init: impl Fn() -> S + Sync,
    work: impl Fn(&mut S, &T) -> R + Sync,
) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new(items.iter().map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, items.len().max(1)) {
            scope.spawn(|| {
                let mut state = init();
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(item) = items.get(i) else { break };
                    let r = work(&mut state, item);
                    if let Ok(mut all) = results.lock() {
                        all[i] = Some(r);
                    }
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .flatten()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_are_parsed_and_bounded() {
        let args = |v: &[&str]| parse(v.iter().map(|s| (*s).to_owned()));
        assert_eq!(args(&["--jobs", "3", "--", "h"]).map(|a| a.jobs), Ok(3));
        assert_eq!(args(&["--", "h"]).map(|a| a.jobs), Ok(1));
        assert!(args(&["--jobs", "0", "--", "h"]).is_err());
        assert!(args(&["--jobs", "x", "--", "h"]).is_err());
    }

    #[test]
    fn run_each_runs_every_item_once_and_keeps_their_order() {
        let items: Vec<u32> = (0..50).collect();
        let calls = AtomicUsize::new(0);
        let states = AtomicUsize::new(0);
        let out = run_each(
            &items,
            4,
            || states.fetch_add(1, Ordering::SeqCst),
            |_, n| {
                calls.fetch_add(1, Ordering::SeqCst);
                std::thread::sleep(std::time::Duration::from_millis(u64::from(n % 3)));
                n * 2
            },
        );
        assert_eq!(calls.load(Ordering::SeqCst), 50);
        assert!(states.load(Ordering::SeqCst) <= 4, "one state per thread");
        assert_eq!(out, items.iter().map(|n| n * 2).collect::<Vec<_>>());
    }
}
