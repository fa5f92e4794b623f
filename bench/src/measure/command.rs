//! The command line: arguments, the child modes, re-rendering Markdown from JSON, and writing
//! (and reading back) a run's JSON and Markdown.

use std::process::ExitCode;

use serde_json::{json, Value};

use super::machine::machine;
use super::plan::{FULL, QUICK};
use super::run::run;
use crate::child;
use crate::markdown;
use crate::report::{self, Figure};

pub(crate) fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--child") {
        return match child::run(&args[1..]) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("lineup-bench child: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let mut out = None;
    let mut md = None;
    let mut from: Option<String> = None;
    let mut plan = FULL;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--quick" => plan = QUICK,
            "--out" => out = it.next().cloned(),
            "--md" => md = it.next().cloned(),
            "--from-json" => from = it.next().cloned(),
            "--help" | "-h" => {
                println!(
                    "lineup-bench [--quick] [--out BENCHMARKS.json] [--md BENCHMARKS.md]\n\
                     Run under a display (xvfb-run -a); see scripts/bench.sh."
                );
                return ExitCode::SUCCESS;
            }
            other => {
                eprintln!("lineup-bench: unknown argument {other}");
                return ExitCode::FAILURE;
            }
        }
    }
    // Re-renders BENCHMARKS.md from a run's JSON, measuring nothing.
    if let Some(from) = from {
        let rendered = std::fs::read_to_string(&from)
            .map_err(|e| e.to_string())
            .and_then(|t| serde_json::from_str::<Value>(&t).map_err(|e| e.to_string()))
            .map(|document| markdown::render_markdown(&document));
        return match (rendered, md) {
            (Ok(text), Some(path)) => match std::fs::write(&path, markdown::keep_tail(&path, text))
            {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("lineup-bench: cannot write {path}: {e}");
                    ExitCode::FAILURE
                }
            },
            (Ok(text), None) => {
                println!("{text}");
                ExitCode::SUCCESS
            }
            (Err(e), _) => {
                eprintln!("lineup-bench: {from}: {e}");
                ExitCode::FAILURE
            }
        };
    }
    match run(plan) {
        Ok((figures, extra)) => {
            let text = report::table(&figures);
            println!("{text}");
            let document = json!({
                "bench": "lineup-bench",
                "mode": if plan.quick { "quick" } else { "full" },
                "machine": machine(),
                "figures": figures.iter().map(Figure::to_json).collect::<Vec<_>>(),
                "details": extra,
            });
            if let Some(path) = out {
                let pretty = serde_json::to_string_pretty(&document).unwrap_or_default();
                if let Err(e) = std::fs::write(&path, pretty + "\n") {
                    eprintln!("lineup-bench: cannot write {path}: {e}");
                    return ExitCode::FAILURE;
                }
                if let Err(e) = check_written(&path, figures.len()) {
                    eprintln!("lineup-bench: {path}: {e}");
                    return ExitCode::FAILURE;
                }
            }
            if let Some(path) = md {
                let text = markdown::keep_tail(&path, markdown::render_markdown(&document));
                if let Err(e) = std::fs::write(&path, text) {
                    eprintln!("lineup-bench: cannot write {path}: {e}");
                    return ExitCode::FAILURE;
                }
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("lineup-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Reads the written JSON back: it must parse and hold `count` figures, each with ours.
fn check_written(path: &str, count: usize) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let value: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let figures = value["figures"].as_array().ok_or("no figures")?;
    if figures.len() != count || count == 0 || figures.iter().any(|f| f["ours"].is_null()) {
        return Err(format!(
            "{} figures written, {count} measured",
            figures.len()
        ));
    }
    Ok(())
}
