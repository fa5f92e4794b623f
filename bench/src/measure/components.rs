//! Standard components (R-STD-13): the built-in renderer's open → first paint, for the first
//! component of a conversation (its stack window and shared web process start) and for a
//! further one (a view added to them), each beside a Surface's cold open → ready of the same
//! run; and their memory beside Surfaces'.

use std::time::Duration;

use serde_json::Value;

use crate::app::component_json;
use crate::lab::Lab;
use crate::report::{ms, percentile, round, Figure};

/// `ours / baseline` at the median, for the notes.
fn ratio_of_medians(ours: &[f64], baseline: &[f64]) -> f64 {
    let base = percentile(baseline, 50.0);
    if base > 0.0 {
        round(percentile(ours, 50.0) / base)
    } else {
        0.0
    }
}

/// `n` opens of each kind in the lab's host (which has the built-in renderer on), each closed
/// before the next; `surface_cold` are the same run's cold Surface opens.
pub(super) fn component_opens(
    lab: &mut Lab,
    n: usize,
    surface_cold: &[f64],
) -> Result<Vec<Figure>, String> {
    let (component, state) = component_json();
    let mut first = Vec::new();
    for i in 0..n {
        let instance = format!("c-first{i}");
        first.push(ms(lab.open_component(
            &instance,
            &component,
            Some(&state),
        )?));
        lab.close_component(&instance)?;
        lab.settle(Duration::from_millis(300));
    }
    // A further component: one stays open, so the stack window and its web process exist.
    lab.open_component("c-keep", &component, Some(&state))?;
    lab.settle(Duration::from_millis(300));
    let mut further = Vec::new();
    for i in 0..n {
        let instance = format!("c-further{i}");
        further.push(ms(lab.open_component(
            &instance,
            &component,
            Some(&state),
        )?));
        lab.close_component(&instance)?;
        lab.settle(Duration::from_millis(150));
    }
    lab.close_component("c-keep")?;
    let beside = |samples: &[f64]| {
        format!(
            "open → shown (document rendered, view mapped); a Surface's cold open → ready in \
             this run: p50 {} ms, this / that = {}",
            round(percentile(surface_cold, 50.0)),
            ratio_of_medians(samples, surface_cold)
        )
    };
    Ok(vec![
        Figure::samples(
            "standard component open → first paint, first of a conversation",
            &["p50", "p95"],
            &first,
            None,
            None,
        )
        .with_note(beside(&first)),
        Figure::samples(
            "standard component open → first paint, a further one",
            &["p50", "p95"],
            &further,
            None,
            None,
        )
        .with_note(beside(&further)),
    ])
}

/// The memory figures of `components` (the `memory components` child's results, one per count
/// of `counts`) beside the Surfaces' PSS at the same counts (`surfaces`, MiB).
pub(super) fn component_memory(
    counts: &[usize],
    components: &[Value],
    surfaces: &[f64],
) -> Vec<Figure> {
    let mib: Vec<f64> = components
        .iter()
        .map(|r| r["pss_kib"].as_f64().unwrap_or(0.0) / 1024.0)
        .collect();
    let mut figures = Vec::new();
    for ((count, ours), surface) in counts.iter().zip(&mib).zip(surfaces) {
        figures.push(
            Figure::values(
                &format!("PSS, host + descendants, {count} standard components"),
                "MiB",
                *ours,
                None,
                None,
            )
            .with_note(format!(
                "one conversation's components; {count} Surfaces in this run: {} MiB",
                round(*surface)
            )),
        );
    }
    if let (Some(&lo), Some(&hi)) = (counts.first(), counts.last()) {
        if hi > lo && mib.len() == counts.len() && surfaces.len() == counts.len() {
            let span = (hi - lo) as f64;
            let each = (mib[mib.len() - 1] - mib[0]) / span;
            let surface_each = (surfaces[surfaces.len() - 1] - surfaces[0]) / span;
            figures.push(
                Figure::values(
                    "memory per standard component (PSS slope)",
                    "MiB",
                    each,
                    None,
                    None,
                )
                .with_note(format!(
                    "(PSS at {hi} − PSS at {lo}) / {}; per Surface in this run: {} MiB",
                    hi - lo,
                    round(surface_each)
                )),
            );
        }
    }
    figures
}
