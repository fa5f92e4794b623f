//! Memory: the PSS of fresh bench processes' trees (host + descendants) by number of Surfaces,
//! per Surface and per kind of process, and the idle cost of a pool view.

use serde_json::{json, Value};

use super::components::component_memory;
use super::plan::Plan;
use super::progress;
use crate::child;
use crate::report::{round, Figure};

/// Measures memory in child processes: adds its figures and `details["memory"]` and the slopes
/// by process.
pub(super) fn measure(
    plan: Plan,
    figures: &mut Vec<Figure>,
    details: &mut serde_json::Map<String, Value>,
) -> Result<(), String> {
    progress("memory (PSS of the process tree)");
    let mut memory = serde_json::Map::new();
    let mut per: Vec<(usize, [f64; 3])> =
        plan.memory_counts.iter().map(|&n| (n, [0.0; 3])).collect();
    for (i, variant) in ["ours", "plain", "hardened"].iter().enumerate() {
        let results = child::memory_child(variant, plan.memory_counts)?;
        for ((count, row), result) in per.iter_mut().zip(results) {
            row[i] = result["pss_kib"].as_f64().unwrap_or(0.0) / 1024.0;
            memory.insert(format!("{variant}_{count}"), result);
        }
    }
    for (count, row) in &per {
        figures.push(Figure::values(
            &format!("PSS, host + descendants, {count} Surfaces"),
            "MiB",
            row[0],
            Some(row[1]),
            Some(row[2]),
        ));
    }
    // Standard components: one conversation's, at the same counts.
    let components = child::memory_child("components", plan.memory_counts)?;
    let surfaces: Vec<f64> = per.iter().map(|(_, row)| row[0]).collect();
    figures.extend(component_memory(plan.memory_counts, &components, &surfaces));
    for (count, result) in plan.memory_counts.iter().zip(components) {
        memory.insert(format!("components_{count}"), result);
    }
    if let (Some((lo, a)), Some((hi, b))) = (per.first(), per.last()) {
        if hi > lo {
            let each = |i: usize| (b[i] - a[i]) / (*hi - *lo) as f64;
            figures.push(
                Figure::values(
                    "memory per Surface (PSS slope)",
                    "MiB",
                    each(0),
                    Some(each(1)),
                    Some(each(2)),
                )
                .with_note(format!("(PSS at {hi} − PSS at {lo}) / {}", hi - lo)),
            );
        }
    }
    if let (Some((lo, _)), Some((hi, _))) = (per.first(), per.last()) {
        if hi > lo {
            details.insert(
                "memory_per_surface_by_process".to_owned(),
                slopes_by_process(&memory, *lo, *hi),
            );
            // What the bridge's user script alone costs: raw hardened with it added.
            let mut total = [0.0; 2];
            let results = child::memory_child("hardened-bridge", &[*lo, *hi])?;
            for ((slot, count), result) in [(0, *lo), (1, *hi)].into_iter().zip(results) {
                total[slot] = result["pss_kib"].as_f64().unwrap_or(0.0) / 1024.0;
                memory.insert(format!("hardened-bridge_{count}"), result);
            }
            details.insert(
                "memory_per_surface_hardened_with_bridge_mib".to_owned(),
                json!(round((total[1] - total[0]) / (*hi - *lo) as f64)),
            );
        }
    }
    // What one idle pool view costs: the same single Surface with and without warm_pool(1).
    let pooled = child::memory_child("ours-pool", &[1])?.remove(0);
    let pooled_mib = pooled["pss_kib"].as_f64().unwrap_or(0.0) / 1024.0;
    if let Some((_, row)) = per.first() {
        figures.push(
            Figure::values(
                "warm pool: idle cost of one pool view",
                "MiB",
                pooled_mib - row[0],
                None,
                None,
            )
            .with_note("PSS with warm_pool(1) − PSS without, one Surface open in both"),
        );
    }
    memory.insert("ours-pool_1".to_owned(), pooled);
    details.insert("memory".to_owned(), Value::Object(memory));
    Ok(())
}

/// Per Surface, the PSS slope of each kind of process (the bench process itself, web, network,
/// bwrap, D-Bus proxy) for ours and raw hardened, MiB: where a Surface's memory goes and where
/// ours differs.
fn slopes_by_process(memory: &serde_json::Map<String, Value>, lo: usize, hi: usize) -> Value {
    let kib = |variant: &str, count: usize, name: &str| {
        memory
            .get(&format!("{variant}_{count}"))
            .and_then(|r| r["pss_kib_by_process"][name].as_f64())
            .unwrap_or(0.0)
    };
    let mut names: Vec<String> = Vec::new();
    for variant in ["ours", "hardened"] {
        for count in [lo, hi] {
            if let Some(map) = memory
                .get(&format!("{variant}_{count}"))
                .and_then(|r| r["pss_kib_by_process"].as_object())
            {
                for name in map.keys() {
                    if !names.contains(name) {
                        names.push(name.clone());
                    }
                }
            }
        }
    }
    names.sort();
    let slope = |variant: &str, name: &str| {
        round((kib(variant, hi, name) - kib(variant, lo, name)) / 1024.0 / (hi - lo) as f64)
    };
    let part = |variant: &str, count: usize, name: &str, i: usize| {
        memory
            .get(&format!("{variant}_{count}"))
            .and_then(|r| r["pss_anon_file_shmem_kib_by_process"][name][i].as_f64())
            .unwrap_or(0.0)
    };
    // Ours minus hardened, per Surface, of the anonymous, file-backed and shared parts.
    let part_difference = |name: &str| {
        [0, 1, 2].map(|i| {
            let each = |variant: &str| part(variant, hi, name, i) - part(variant, lo, name, i);
            round((each("ours") - each("hardened")) / 1024.0 / (hi - lo) as f64)
        })
    };
    Value::Array(
        names
            .iter()
            .map(|name| {
                json!({
                    "process": name,
                    "ours_mib": slope("ours", name),
                    "hardened_mib": slope("hardened", name),
                    "difference_anon_file_shmem_mib": part_difference(name),
                })
            })
            .collect(),
    )
}
