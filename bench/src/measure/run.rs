//! One run: what the bench measures, in which order, with one lab (a host and the raw views)
//! and then fresh child processes.

use std::time::Instant;

use lineup_host::{ComponentOptions, HostBuilder};
use serde_json::{json, Value};

use super::components::component_opens;
use super::events::event_samples;
use super::floods::{event_flood, patch_flood};
use super::many;
use super::memory;
use super::opens::{open_samples, warm_samples};
use super::patches::{max_state_pad, patch_samples};
use super::plan::Plan;
use super::progress;
use super::stdio::stdio_samples;
use crate::app::{app_json, document_bytes, SMALL};
use crate::child;
use crate::lab::Lab;
use crate::phases;
use crate::raw::Kind;
use crate::report::ms;
use crate::report::{self, round, Figure};

/// The figures of a run and the details beside them.
pub(super) type Measured = (Vec<Figure>, Value);

/// Measures everything `plan` asks for, in order.
pub(super) fn run(plan: Plan) -> Result<Measured, String> {
    let started = Instant::now();
    let mut figures = Vec::new();
    let mut details = serde_json::Map::new();
    let mut lab = Lab::new()?;
    progress("starting the host and its isolation probe");
    // The built-in renderer is on for the standard components' figures; it changes nothing of
    // a Surface's path.
    lab.start_host(HostBuilder::new().builtin_components(Some(ComponentOptions::default())))?;
    let probe_start = Instant::now();
    lab.wait_probe()?;
    details.insert(
        "probe_ms_in_running_host".to_owned(),
        json!(round(ms(probe_start.elapsed()))),
    );

    // Open → ready, cold, one Surface at a time.
    progress("open → ready, cold");
    let small = document_bytes(SMALL)?;
    let app = app_json(SMALL);
    let (ours, plain, hardened) = open_samples(&mut lab, plan.opens, &app, &small)?;
    figures.push(Figure::samples(
        "open → ready, cold",
        &["p50", "p95"],
        &ours,
        Some(&plain),
        Some(&hardened),
    ));

    // Standard components beside those Surfaces (R-STD-13).
    progress("standard component open → first paint");
    figures.extend(component_opens(&mut lab, plan.opens, &ours)?);

    let cold_samples = (ours.clone(), plain.clone(), hardened.clone());
    let cold_baselines = (plain.clone(), hardened.clone());
    let cold_profile = std::mem::take(&mut lab.profile);

    // Patch → onState → event back, in process, by state size.
    let max_state = max_state_pad(&mut lab);
    for (label, pad) in [
        ("1 KiB", 1024),
        ("16 KiB", 16 * 1024),
        ("256 KiB", 256 * 1024),
        ("max", max_state),
    ] {
        progress(&format!("patch → onState → event, {label}"));
        let n = if pad > 100_000 {
            plan.patches / 4
        } else {
            plan.patches
        }
        .max(3);
        let ((ours, plain, hardened), profile) = patch_samples(&mut lab, n, pad, &small, &app)?;
        let key = match label {
            "1 KiB" => "patch_profile_1kib",
            "16 KiB" => "patch_profile_16kib",
            "256 KiB" => "patch_profile_256kib",
            _ => "patch_profile_max",
        };
        details.insert(key.to_owned(), profile);
        let name = format!("patch → onState → event back, {label} state");
        let figure = Figure::samples(&name, &["p50", "p99"], &ours, Some(&plain), Some(&hardened));
        figures.push(if label == "max" {
            figure.with_note(format!(
                "state padded to {pad} bytes: the largest that fits the default 1 MiB envelope"
            ))
        } else {
            figure
        });
    }

    // Page event → outbound envelope.
    progress("page event → outbound");
    let ((ours, plain, hardened), in_host) = event_samples(&mut lab, plan.pings, &small, &app)?;
    figures.push(
        Figure::samples(
            "page event → agent, in the host (IPC handler → outbound callback)",
            &["p50", "p99"],
            &in_host,
            None,
            None,
        )
        .with_note(
            "the part of the figure below spent in the host: from the bridge message reaching \
             the IPC handler to the outbound envelope, on the host's monotonic clock",
        ),
    );
    figures.push(
        Figure::samples(
            "page event → agent",
            &["p50", "p99"],
            &ours,
            Some(&plain),
            Some(&hardened),
        )
        .with_note(
            "the page's performance.timeOrigin + now() against the host's wall clock at the \
             outbound callback (raw: at the IPC handler); WebKit coarsens the page's clock",
        ),
    );

    // Open latency by bundle size; the cold opens above are of the 1 KiB bundle already.
    for (label, size) in [
        ("1 KiB", SMALL),
        ("40 KiB", 40 * 1024),
        ("160 KiB", 160 * 1024 - 64),
    ] {
        let (ours, plain, hardened) = if size == SMALL {
            cold_samples.clone()
        } else {
            progress(&format!("open → ready, {label} bundle"));
            let bytes = document_bytes(size)?;
            let app = app_json(size);
            open_samples(&mut lab, plan.sized_opens, &app, &bytes)?
        };
        let figure = Figure::samples(
            &format!("open → ready, {label} bundle"),
            &["p50"],
            &ours,
            Some(&plain),
            Some(&hardened),
        );
        figures.push(if size == SMALL {
            figure.with_note("the cold opens above: their bundle is this size")
        } else {
            figure
        });
    }

    // Floods.
    progress("flood: agent patches faster than the page renders");
    let (flood, flood_details) = patch_flood(&mut lab, plan.patch_flood, &small, &app)?;
    figures.push(flood);
    details.insert("patch_flood".to_owned(), flood_details);
    progress("flood: page posts events as fast as it can");
    let (flood, flood_details) = event_flood(&mut lab, plan.event_flood_ms, &small, &app)?;
    figures.extend(flood);
    details.insert("event_flood".to_owned(), flood_details);

    // Through `lineup host --stdio`.
    progress("patch → onState → event back through lineup host --stdio");
    match stdio_samples(plan.patches) {
        Ok(Some(samples)) => {
            let in_process = figures
                .iter()
                .find(|f| f.name.starts_with("patch → onState → event back, 1 KiB"))
                .map(|f| f.hardened.clone());
            let mut figure = Figure::samples(
                "patch → onState → event back, lineup host --stdio, 1 KiB",
                &["p50", "p99"],
                &samples,
                None,
                None,
            );
            figure.hardened = in_process.flatten();
            figures.push(figure.with_note(
                "through pipes and a separate process; baseline: raw hardened in process",
            ));
        }
        Ok(None) => {
            details.insert(
                "stdio".to_owned(),
                json!("not measured: no `lineup` binary next to lineup-bench"),
            );
        }
        Err(e) => {
            details.insert("stdio".to_owned(), json!(format!("failed: {e}")));
        }
    }
    // Open → ready from the warm pool: a host with one pool view, refilled between opens.
    progress("open → ready, warm (pool)");
    let warm = warm_samples(&mut lab, plan.opens, &app)?;
    figures.insert(
        1,
        Figure::samples(
            "open → ready, warm pool",
            &["p50", "p95"],
            &warm,
            Some(&cold_baselines.0),
            Some(&cold_baselines.1),
        )
        .with_note("baselines: raw cold opens (raw wry has no pool)"),
    );
    // The raw form of a pool view: a hardened view started with its document request held,
    // released at the open; and the same with the host's bridge script added.
    progress("open → ready, pre-started raw views");
    let bytes = document_bytes(SMALL)?;
    let mut held = Vec::new();
    for _ in 0..plan.opens {
        held.push(ms(lab.open_raw_held(Kind::Hardened, &bytes)?.0));
    }
    let mut held_bridge = Vec::new();
    let mut bridge_script = Vec::new();
    for _ in 0..plan.sized_opens {
        let (elapsed, script) = lab.open_raw_held(Kind::HardenedWithBridge, &bytes)?;
        held_bridge.push(ms(elapsed));
        bridge_script.extend(script);
    }
    figures.insert(
        2,
        Figure::samples(
            "open → ready, warm pool against a pre-started raw view",
            &["p50", "p95"],
            &warm,
            None,
            Some(&held),
        )
        .with_note(
            "baseline: a raw hardened view started with its document request held, released \
             at the open (what a pool view is, without the host)",
        ),
    );
    details.insert(
        "pre_started_hardened_with_bridge_ready_ms".to_owned(),
        json!({
            "p50": report::percentile(&held_bridge, 50.0),
            "p95": report::percentile(&held_bridge, 95.0),
            "samples": held_bridge.len(),
            "bridge_script_p50": report::percentile(&bridge_script, 50.0),
        }),
    );
    let warm_profile = std::mem::take(&mut lab.warm_profile);
    drop(lab);

    // Fresh processes: first Surface after start, and memory.
    progress("first Surface after process start");
    let mut firsts: [Vec<f64>; 4] = Default::default();
    let mut phases = Vec::new();
    for _ in 0..plan.firsts {
        for (i, variant) in ["ours", "plain", "hardened", "hardened-pair"]
            .iter()
            .enumerate()
        {
            let (elapsed, child) = child::first_after_start(variant)?;
            firsts[i].push(elapsed);
            if *variant == "ours" {
                phases.push(child);
            }
        }
    }
    // The probe runs in a sandboxed web process of its own beside the first Surface's: two
    // raw hardened views started together are what that costs without any host code.
    details.insert(
        "first_two_hardened_views_ready_ms".to_owned(),
        json!({
            "p50": report::percentile(&firsts[3], 50.0),
            "p95": report::percentile(&firsts[3], 95.0),
            "samples": firsts[3].len(),
        }),
    );
    figures.push(
        Figure::samples(
            "first Surface after process start",
            &["p50", "p95"],
            &firsts[0],
            Some(&firsts[1]),
            Some(&firsts[2]),
        )
        .with_note("spawn of a fresh bench process → its first Surface's ready"),
    );
    details.insert("first_surface_phases".to_owned(), json!(phases));

    memory::measure(plan, &mut figures, &mut details)?;
    let (many, many_details) = many::measure(plan, &cold_samples.0, &figures)?;
    figures.extend(many);
    details.insert("many_surfaces".to_owned(), many_details);
    details.insert(
        "open_profile_cold".to_owned(),
        phases::profile_summary(&cold_profile),
    );
    details.insert(
        "open_profile_warm".to_owned(),
        phases::profile_summary(&warm_profile),
    );
    details.insert(
        "total_seconds".to_owned(),
        json!(round(started.elapsed().as_secs_f64())),
    );
    Ok((figures, Value::Object(details)))
}
