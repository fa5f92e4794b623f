//! The phases of an open, as the webview shell reports them under the `lineup_phase` tracing
//! target (view creation started, context created, web process spawn, load started, document
//! request served, document committed), timestamped here.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::prelude::*;

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
