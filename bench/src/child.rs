//! The bench's fresh-process figures: this binary re-run in a child mode per sample (the first
//! Surface after process start, memory with N Surfaces open), and the parent's side that spawns
//! it and reads the `RESULT` line it prints.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use lineup_host::{ComponentOptions, HostBuilder};
use serde_json::{json, Value};

use crate::app::{app_json, document_bytes, SMALL};
use crate::lab::Lab;
use crate::procs;
use crate::raw::Kind;
use crate::report::ms;

/// Spawns this binary in a child mode; returns each line it printed after `RESULT `, with how
/// long after the spawn it printed it, once it has printed `expected` of them (or ended).
pub(crate) fn spawn_child(args: &[&str], expected: usize) -> Result<Vec<(f64, Value)>, String> {
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
    let mut found = Vec::new();
    for line in BufReader::new(stdout).lines() {
        let Ok(line) = line else { break };
        if let Some(rest) = line.strip_prefix("RESULT ") {
            found.push((
                ms(start.elapsed()),
                serde_json::from_str(rest).unwrap_or(Value::Null),
            ));
            if found.len() == expected {
                break;
            }
        }
    }
    let _ = child.wait();
    if found.len() < expected {
        return Err(format!(
            "child {args:?} gave {} of {expected} results",
            found.len()
        ));
    }
    Ok(found)
}

/// The time from spawn to the first Surface's `ready` in a fresh process, and what that process
/// reported of its phases.
pub(crate) fn first_after_start(variant: &str) -> Result<(f64, Value), String> {
    let mut results = spawn_child(&["first", variant], 1)?;
    Ok(results.remove(0))
}

/// The memory of one fresh process tree at each of `counts` (ascending) views of `variant`
/// open: the views are opened in turn, and measured each time their number reaches a count.
pub(crate) fn memory_child(variant: &str, counts: &[usize]) -> Result<Vec<Value>, String> {
    let list: Vec<String> = counts.iter().map(ToString::to_string).collect();
    let results = spawn_child(&["memory", variant, &list.join(",")], counts.len())?;
    Ok(results.into_iter().map(|(_, value)| value).collect())
}

/// The child modes: `first VARIANT` (open one Surface as soon as the process starts, report
/// `RESULT` at its ready; `first hardened-pair` creates two raw hardened views together and
/// reports once both are ready), `memory VARIANT N1,N2,…` (open Surfaces, or with
/// `components` standard components of one conversation, one after another; at each count,
/// settle and report the PSS of the process tree) and `scale N LIVE` ([`crate::scale`]).
pub(crate) fn run(args: &[String]) -> Result<(), String> {
    let start = Instant::now();
    let mode = args.first().map(String::as_str).unwrap_or_default();
    let variant = args.get(1).map(String::as_str).unwrap_or_default();
    if mode == "scale" {
        let number = |i: usize| {
            args.get(i)
                .and_then(|n| n.parse().ok())
                .ok_or("scale N LIVE")
        };
        return crate::scale::run(number(1)?, number(2)?);
    }
    let mut lab = Lab::new()?;
    let bytes = document_bytes(SMALL)?;
    let app = app_json(SMALL);
    let kind = match variant {
        "plain" => Some(Kind::Plain),
        "hardened" => Some(Kind::Hardened),
        "hardened-bridge" => Some(Kind::HardenedWithBridge),
        "ours" | "ours-pool" | "hardened-pair" | "components" => None,
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
            phases.insert("event_loop_ms".to_owned(), json!(ms(start.elapsed())));
            let mut views = Vec::new();
            if let Some(kind) = kind {
                views.push(lab.open_raw(kind, &bytes)?.0);
            } else {
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
                        && h.is_some_and(|h| h.probe_status() == lineup_host::ProbeStatus::Passed)
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
            if variant == "hardened-pair" {
                return Err("hardened-pair is a variant of the first-Surface mode only".to_owned());
            }
            let counts: Vec<usize> = args
                .get(2)
                .map(|list| list.split(',').filter_map(|n| n.parse().ok()).collect())
                .unwrap_or_default();
            if counts.is_empty() || counts.windows(2).any(|w| w[0] > w[1]) {
                return Err("memory needs ascending counts, as 1,10,16".to_owned());
            }
            let pool = usize::from(variant == "ours-pool");
            let components = variant == "components";
            if kind.is_none() {
                let builder = HostBuilder::new().warm_pool(pool);
                lab.start_host(if components {
                    builder.builtin_components(Some(ComponentOptions::default()))
                } else {
                    builder
                })?;
                lab.wait_probe()?;
            }
            let mut views = Vec::new();
            let mut opened = 0;
            for count in counts {
                while opened < count {
                    match kind {
                        Some(kind) => views.push(lab.open_raw(kind, &bytes)?.0),
                        None if components => {
                            let (component, state) = crate::app::component_json();
                            lab.open_component(&format!("m{opened}"), &component, Some(&state))?;
                        }
                        None => {
                            lab.open_ours(&format!("m{opened}"), &app, None)?;
                        }
                    }
                    opened += 1;
                }
                if kind.is_none() {
                    lab.pump(Duration::from_secs(10), |h, _, _| {
                        h.is_some_and(|h| h.pooled_views() >= pool)
                    });
                }
                lab.settle(Duration::from_secs(2));
                println!("RESULT {}", memory_result(count));
            }
            drop(views);
            Ok(())
        }
        other => Err(format!("unknown child mode {other}")),
    }
}

/// The PSS of this process's tree with `count` views open, in total and by process name.
fn memory_result(count: usize) -> Value {
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
    json!({
        "surfaces": count,
        "pss_kib": memory.pss_kib,
        "processes": memory.counts,
        "pss_kib_by_process": pss_by_name,
        "pss_anon_file_shmem_kib_by_process": parts_by_name,
    })
}
