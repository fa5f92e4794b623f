//! The phases of an open and the marks of a patch, as the webview shell reports them under the
//! `lineup_phase` tracing target (view creation started, context created, web process spawn,
//! load started, document request served, document committed; an envelope taken, a state
//! evaluated, a bridge message received, delivered and handled), timestamped here, and what the
//! bench makes of them: an open's profile and a patch's legs.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use serde_json::{json, Value};

use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::prelude::*;

use crate::report::{self, ms, round};

/// Every phase seen so far, in order.
#[derive(Clone, Default)]
pub(crate) struct Phases(Arc<Mutex<Vec<Phase>>>);

/// One phase: when, which, and the document URL it is about (if it names one).
pub(crate) type Phase = (Instant, String, Option<String>);

impl Phases {
    /// Installs the recorder as the process's tracing subscriber (only `lineup_phase` events).
    pub(crate) fn install() -> Self {
        let phases = Self::default();
        let layer = Recorder(phases.clone());
        let _ = tracing_subscriber::registry().with(layer).try_init();
        phases
    }

    /// Takes the phases recorded so far.
    pub(crate) fn take(&self) -> Vec<Phase> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

struct Recorder(Phases);

#[derive(Default)]
struct PhaseName {
    name: Option<String>,
    url: Option<String>,
}

impl PhaseName {
    fn set(&mut self, field: &Field, value: String) {
        match field.name() {
            "phase" => self.name = Some(value),
            "url" | "uri" => self.url = Some(value),
            _ => {}
        }
    }
}

impl Visit for PhaseName {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.set(field, value.to_owned());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.set(field, format!("{value:?}").trim_matches('"').to_owned());
    }
}

impl<S: Subscriber> Layer<S> for Recorder {
    fn enabled(&self, metadata: &tracing::Metadata<'_>, _: Context<'_, S>) -> bool {
        metadata.target() == "lineup_phase"
    }

    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        if event.metadata().target() != "lineup_phase" {
            return;
        }
        let mut seen = PhaseName::default();
        event.record(&mut seen);
        if let Some(name) = seen.name {
            (self.0)
                .0
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push((Instant::now(), name, seen.url));
        }
    }
}

/// Each phase of `marks` first seen after `start` and up to the bridge's `ready` (ms), and the
/// `ready`.
///
/// Only the phases of the Surface's own document `url` count, and with `unlabelled` those that
/// name no URL (the web-process spawn); a warm pool refilling meanwhile reports phases of
/// another URL.
pub(crate) fn phase_offsets(
    marks: Vec<Phase>,
    url: Option<&str>,
    ready: Option<Instant>,
    start: Instant,
    unlabelled: bool,
) -> Vec<(String, f64)> {
    let mut out: Vec<(String, f64)> = Vec::new();
    for (at, name, of) in marks {
        let ours = match &of {
            Some(of) => url == Some(of.as_str()),
            None => unlabelled,
        };
        // Up to the `ready`: the first state's delivery after it is not the open's.
        let during = at >= start && ready.is_none_or(|ready| at <= ready);
        if ours && during && !out.iter().any(|(n, _)| *n == name) {
            out.push((name, ms(at.duration_since(start))));
        }
    }
    if let Some(at) = ready {
        out.push(("bridge_ready".to_owned(), ms(at.duration_since(start))));
    }
    out
}

/// The median of each phase over `samples`, in the order phases happen.
pub(crate) fn profile_summary(samples: &[Vec<(String, f64)>]) -> Value {
    let mut names: Vec<String> = Vec::new();
    for sample in samples {
        for (name, _) in sample {
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
    }
    let mut rows: Vec<(String, f64, usize)> = names
        .into_iter()
        .map(|name| {
            let values: Vec<f64> = samples
                .iter()
                .filter_map(|s| s.iter().find(|(n, _)| *n == name).map(|(_, v)| *v))
                .collect();
            let p50 = report::percentile(&values, 50.0);
            (name, p50, values.len())
        })
        .collect();
    rows.sort_by(|a, b| a.1.total_cmp(&b.1));
    Value::Array(
        rows.into_iter()
            .map(|(phase, p50, n)| json!({ "phase": phase, "p50_ms_after_open": round(p50), "n": n }))
            .collect(),
    )
}

/// The marks a patch passes, in order, as the shell reports them under `lineup_phase` (the
/// last is the bench's outbound callback), with what the leg ending at each one is.
const PATCH_LEGS: [(&str, &str); 7] = [
    ("inbound_taken", "handed to the host → its event loop takes the envelope"),
    (
        "inbound_decoded",
        "→ the session has it (decode, validation, the patch applied)",
    ),
    (
        "state_evaluated",
        "→ the state goes to the page (its JSON text, the delivery script)",
    ),
    (
        "bridge_message",
        "→ the page's `ack` reaches the IPC handler (WebKit and the page: the raw baseline's whole path)",
    ),
    (
        "bridge_message_delivered",
        "→ the view's event queue hands it on, after the engine's callback returned",
    ),
    ("bridge_message_handled", "→ the host's event loop takes it"),
    (
        "outbound",
        "→ the outbound callback (validation, session, envelope)",
    ),
];

/// Which of [`PATCH_LEGS`] is the page's (WebKit's `evaluate_script` to the IPC handler); the
/// others are the host's.
const PAGE_LEG: usize = 3;

/// A patch profile's legs' medians split into the host's part (their sum) and the page's leg;
/// `None` unless there is one median per leg.
pub(crate) fn host_and_page(legs: &[f64]) -> Option<(f64, f64)> {
    (legs.len() == PATCH_LEGS.len()).then(|| {
        let host = legs
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != PAGE_LEG)
            .map(|(_, ms)| ms)
            .sum();
        (host, legs[PAGE_LEG])
    })
}

/// One patch's legs (ms): each mark is the first of its name after the one before, from
/// `start` (the envelope handed over) to `outbound` (the `ack` at the outbound callback).
pub(crate) fn patch_legs(phases: &[Phase], start: Instant, outbound: Instant) -> Option<Vec<f64>> {
    let mut at = start;
    let mut legs = Vec::new();
    for (mark, _) in PATCH_LEGS {
        let next = if mark == "outbound" {
            outbound
        } else {
            phases
                .iter()
                .find(|(when, name, _)| name == mark && *when >= at)
                .map(|(when, _, _)| *when)?
        };
        legs.push(ms(next.saturating_duration_since(at)));
        at = next;
    }
    Some(legs)
}

/// The median of each leg over `legs` (one row per patch, as [`patch_legs`] gives), with the
/// round trips' medians, ours and raw hardened.
pub(crate) fn patch_profile(legs: &[Vec<f64>], ours: &[f64], hardened: &[f64]) -> Value {
    let rows: Vec<Value> = PATCH_LEGS
        .iter()
        .enumerate()
        .map(|(i, (_, leg))| {
            let values: Vec<f64> = legs.iter().map(|l| l[i]).collect();
            json!({ "leg": leg, "p50_ms": round(report::percentile(&values, 50.0)) })
        })
        .collect();
    json!({
        "samples": legs.len(),
        "legs": rows,
        "ours_p50_ms": round(report::percentile(ours, 50.0)),
        "raw_hardened_p50_ms": round(report::percentile(hardened, 50.0)),
    })
}
