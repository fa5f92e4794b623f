//! `lineup-conformance`: runs the conformance cases under `conformance/cases/` against a host
//! command that speaks `lineup.v1` over stdin/stdout.
//!
//! `lineup-conformance [--cases DIR] [--filter G] [--json REPORT] -- <host command…>`

mod canary;
mod case;
mod runner;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use serde_json::json;

use crate::runner::Outcome;

struct Args {
    cases: PathBuf,
    filter: Option<String>,
    json: Option<PathBuf>,
    command: Vec<String>,
}

fn parse(mut argv: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut args = Args {
        cases: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("cases"),
        filter: None,
        json: None,
        command: Vec::new(),
    };
    while let Some(arg) = argv.next() {
        match arg.as_str() {
            "--cases" => args.cases = argv.next().ok_or("--cases needs a folder")?.into(),
            "--filter" => args.filter = Some(argv.next().ok_or("--filter needs a group")?),
            "--json" => args.json = Some(argv.next().ok_or("--json needs a path")?.into()),
            "--" => {
                args.command = argv.collect();
                break;
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    if args.command.is_empty() {
        return Err("usage: lineup-conformance [--cases DIR] [--filter G] [--json REPORT] -- <host command…>".into());
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
    let cases = match case::load_cases(&args.cases) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let canary = match canary::HttpCanary::start() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("cannot start the HTTP canary: {e}");
            return ExitCode::from(2);
        }
    };
    let started = Instant::now();
    let (mut passed, mut failed, mut skipped, mut xfailed) = (0, 0, 0, 0);
    let mut report = Vec::new();
    for case in cases.iter().filter(|c| {
        args.filter
            .as_ref()
            .is_none_or(|f| &c.group == f || c.id.starts_with(f.as_str()))
    }) {
        let t = Instant::now();
        let outcome = runner::run_case(case, &args.command, &canary);
        let (word, detail) = match &outcome {
            Outcome::Pass => ("ok", String::new()),
            Outcome::Fail(why) => ("FAILED", why.clone()),
            Outcome::ExpectedFail(why) => ("xfail", why.clone()),
            Outcome::UnexpectedPass => ("XPASS", "passed though marked xfail".into()),
            Outcome::Skip(why) => ("skipped", why.clone()),
        };
        match &outcome {
            Outcome::Pass => passed += 1,
            Outcome::Fail(_) | Outcome::UnexpectedPass => failed += 1,
            Outcome::ExpectedFail(_) => xfailed += 1,
            Outcome::Skip(_) => skipped += 1,
        }
        let ms = t.elapsed().as_millis();
        println!(
            "{word:7} {}/{} [{}] {ms} ms {detail}",
            case.group,
            case.id,
            case.rules.join(",")
        );
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
        let doc = json!({
            "passed": passed, "failed": failed, "skipped": skipped, "expected_failures": xfailed,
            "seconds": started.elapsed().as_secs_f64(), "command": args.command, "cases": report,
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
