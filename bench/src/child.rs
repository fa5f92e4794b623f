//! The bench's fresh-process figures: this binary re-run in a child mode per sample (the first
//! Surface after process start, memory with N Surfaces open), and the parent's side that spawns
//! it and reads the `RESULT` line it prints.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use lineup_webview_shell::HostBuilder;
use serde_json::{json, Value};

use crate::lab::Lab;
use crate::measure::{app_json, document_bytes, ms, SMALL};
use crate::procs;
use crate::raw::Kind;

/// Spawns this binary in a child mode; returns what it printed after `RESULT `, and how long
/// after the spawn it printed it.
fn spawn_child(args: &[&str]) -> Result<(f64, Value), String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let start = Instant::now();
    let mut child = Command::new(exe)
        .arg("--child")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| e.to_string())?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let mut found = None;
    for line in BufReader::new(stdout).lines() {
        let Ok(line) = line else { break };
        if let Some(rest) = line.strip_prefix("RESULT ") {
            found = Some((
                ms(start.elapsed()),
                serde_json::from_str(rest).unwrap_or(Value::Null),
            ));
            break;
        }
    }
    let _ = child.wait();
    found.ok_or_else(|| format!("child {args:?} gave no result"))
}

pub(crate) fn first_after_start(variant: &str) -> Result<(f64, Value), String> {
    spawn_child(&["first", variant])
}

pub(crate) fn memory_child(variant: &str, count: usize) -> Result<Value, String> {
    let (_, value) = spawn_child(&["memory", variant, &count.to_string()])?;
    Ok(value)
}

/// The child modes: `first VARIANT` (open one Surface as soon as the process starts, report
/// `RESULT` at its ready; `first hardened-pair` creates two raw hardened views together and
/// reports once both are ready) and `memory VARIANT N` (open N Surfaces, settle, report the PSS
/// of the process tree).
pub(crate) fn run(args: &[String]) -> Result<(), String> {
    let start = Instant::now();
    let mode = args.first().map(String::as_str).unwrap_or_default();
    let variant = args.get(1).map(String::as_str).unwrap_or_default();
    let mut lab = Lab::new()?;
    let bytes = document_bytes(SMALL)?;
    let app = app_json(SMALL);
    let kind = match variant {
        "plain" => Some(Kind::Plain),
        "hardened" => Some(Kind::Hardened),
        "hardened-bridge" => Some(Kind::HardenedWithBridge),
        "ours" | "ours-pool" | "hardened-pair" => None,
        other => return Err(format!("unknown variant {other}")),
    };
    match mode {
        "first" if variant == "hardened-pair" => {
            let elapsed = ms(start.elapsed());
            let views = lab.open_raw_pair(Kind::Hardened, &bytes)?;
            println!(
                "RESULT {}",
                json!({ "event_loop_ms": elapsed, "main_to_ready_ms": ms(start.elapsed()) })
            );
            drop(views);
            Ok(())
        }
        "first" => {
            let mut phases = serde_json::Map::new();
            let mut views = Vec::new();
            if let Some(kind) = kind {
                phases.insert("event_loop_ms".to_owned(), json!(ms(start.elapsed())));
                views.push(lab.open_raw(kind, &bytes)?.0);
            } else {
                phases.insert("event_loop_ms".to_owned(), json!(ms(start.elapsed())));
                lab.start_host(HostBuilder::new())?;
                phases.insert("host_built_ms".to_owned(), json!(ms(start.elapsed())));
                let bytes = lab.envelope(
                    "lineup.v1.ui.open",
                    json!({ "instance_id": "first", "app": app }),
                );
                lab.send(bytes)?;
                let mut passed = None;
                let ready = lab.pump(Duration::from_secs(30), |h, rec, _| {
                    if passed.is_none()
                        && h.is_some_and(|h| {
                            h.probe_status() == lineup_webview_shell::ProbeStatus::Passed
                        })
                    {
                        passed = Some(start.elapsed());
                    }
                    rec.ready.borrow().contains_key("first")
                });
                if !ready {
                    return Err("the first Surface did not become ready".to_owned());
                }
                phases.insert(
                    "probe_passed_ms".to_owned(),
                    json!(passed.map(ms).unwrap_or_default()),
                );
                // Every shell phase after `main`, in order, the probe's and the Surface's.
                let timeline: Vec<Value> = lab
                    .phases
                    .take()
                    .into_iter()
                    .map(|(at, name, url)| {
                        json!([ms(at.saturating_duration_since(start)), name, url])
                    })
                    .collect();
                phases.insert("timeline".to_owned(), json!(timeline));
            }
            phases.insert("main_to_ready_ms".to_owned(), json!(ms(start.elapsed())));
            println!("RESULT {}", Value::Object(phases));
            drop(views);
            Ok(())
        }
        "memory" => {
            let count: usize = args
                .get(2)
                .and_then(|s| s.parse().ok())
                .ok_or("memory needs a count")?;
            let mut views = Vec::new();
            match kind {
                Some(kind) => {
                    for _ in 0..count {
                        views.push(lab.open_raw(kind, &bytes)?.0);
                    }
                }
                None => {
                    let pool = usize::from(variant == "ours-pool");
                    lab.start_host(HostBuilder::new().warm_pool(pool))?;
                    lab.wait_probe()?;
                    for i in 0..count {
                        lab.open_ours(&format!("m{i}"), &app, None)?;
                    }
                    lab.pump(Duration::from_secs(10), |h, _, _| {
                        h.is_some_and(|h| h.pooled_views() >= pool)
                    });
                }
            }
            lab.settle(Duration::from_secs(2));
            let memory = procs::tree_memory(std::process::id());
            let pss_by_name: BTreeMap<&String, u64> = memory
                .by_name
                .iter()
                .map(|(name, p)| (name, p[0]))
                .collect();
            let parts_by_name: BTreeMap<&String, [u64; 3]> = memory
                .by_name
                .iter()
                .map(|(name, p)| (name, [p[1], p[2], p[3]]))
                .collect();
            println!(
                "RESULT {}",
                json!({
                    "surfaces": count,
                    "pss_kib": memory.pss_kib,
                    "processes": memory.counts,
                    "pss_kib_by_process": pss_by_name,
                    "pss_anon_file_shmem_kib_by_process": parts_by_name,
                })
            );
            drop(views);
            Ok(())
        }
        other => Err(format!("unknown child mode {other}")),
    }
}
