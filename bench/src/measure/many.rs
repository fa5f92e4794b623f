//! Many Surfaces (#29): the figures of the `scale` child ([`crate::scale`]) beside the same
//! run's cold opens and its PSS with 16 Surfaces open.

use serde_json::Value;

use super::plan::Plan;
use super::progress;
use crate::report::{percentile, round, Figure};

/// Runs the `scale` child of `plan.many` and gives its figures and details; `cold` are the
/// run's cold open → ready samples, `figures` those measured so far (the PSS of 16 Surfaces
/// among them, when measured).
pub(super) fn measure(
    plan: Plan,
    cold: &[f64],
    figures: &[Figure],
) -> Result<(Vec<Figure>, Value), String> {
    let (n, shown) = plan.many;
    progress(&format!("many Surfaces: {n} opened, at most {shown} shown"));
    let result = scale_child(n, shown)?;
    let samples = |key: &str| -> Vec<f64> {
        result[key]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_f64).collect())
            .unwrap_or_default()
    };
    let mib = |key: &str| result[key].as_f64().unwrap_or(0.0) / 1024.0;
    let sixteen = figures
        .iter()
        .find(|f| f.name == "PSS, host + descendants, 16 Surfaces")
        .and_then(|f| f.ours.get("value").and_then(Value::as_f64));
    let against = match sixteen {
        Some(v) if v > 0.0 => format!(
            "; 16 Surfaces open in this run: {} MiB, peak / that = {}",
            round(v),
            round(mib("pss_kib_peak") / v)
        ),
        _ => String::new(),
    };
    let again = samples("show_again_ms");
    let cold_p50 = percentile(cold, 50.0);
    let ratio = if cold_p50 > 0.0 {
        round(percentile(&again, 50.0) / cold_p50)
    } else {
        0.0
    };
    let hibernated = result["hibernated_at_end_of_opens"].as_u64().unwrap_or(0);
    let figures = vec![
        Figure::values(
            &format!("PSS peak, {n} Surfaces opened, at most {shown} shown"),
            "MiB",
            mib("pss_kib_peak"),
            None,
            None,
        )
        .with_note(format!(
            "one conversation, child views, max_live_surfaces 16, one pool view; {hibernated} \
             hibernated after the opens; at the end {} MiB{against}",
            round(mib("pss_kib_end"))
        )),
        Figure::samples(
            "show again → latest state acknowledged (hibernated Surface)",
            &["p50", "p95"],
            &again,
            None,
            None,
        )
        .with_note(format!(
            "shown newest first at a scrolling pace, each patched while it slept; the run's cold \
             open → ready p50 {} ms, this / that = {ratio}",
            round(cold_p50)
        )),
    ];
    Ok((figures, result))
}

/// Runs the `scale N LIVE` child ([`crate::scale`]) in a fresh process.
fn scale_child(n: usize, live: usize) -> Result<Value, String> {
    let mut results = crate::child::spawn_child(&["scale", &n.to_string(), &live.to_string()], 1)?;
    Ok(results.remove(0).1)
}
