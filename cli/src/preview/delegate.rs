//! What `lineup preview` prints of the host's notifications, and how they move `--check` and
//! `--screenshot` along.

use std::sync::Arc;

use lineup_host::{HostDelegate, Refusal};
use lineup_host_core::{
    CloseReason, Diagnostic, DiagnosticKind, InlineApp, ProtocolError, SurfaceKey,
};

use super::Context;

/// Prints what the host reports, and moves `--check`/`--screenshot` along.
pub(super) struct Delegate(pub(super) Arc<Context>);

impl HostDelegate for Delegate {
    fn notify_opened(&mut self, key: &SurfaceKey, app: &InlineApp) {
        self.0.out.line(format_args!(
            "opened {key}: {} {} in the production sandbox",
            app.id, app.version
        ));
        self.0.status().open = Some(key.clone());
    }

    fn notify_ready(&mut self, key: &SurfaceKey) {
        self.0
            .out
            .line(format_args!("ready {key}: its state follows"));
        self.0.status().ready = true;
        if self.0.wait_event.is_none() {
            // The state is handed to the page right after this, before the snapshot's scripts.
            self.0.trigger();
        }
    }

    fn notify_reloaded(&mut self, key: &SurfaceKey) {
        self.0.out.line(format_args!(
            "reloaded {key}: new document; the current state follows its ready"
        ));
    }

    fn notify_closed(&mut self, key: &SurfaceKey, reason: &CloseReason) {
        self.0.out.line(format_args!(
            "surface {key}: {}",
            crate::log::closed_words(reason)
        ));
        let mut status = self.0.status();
        if status.open.as_ref() == Some(key) {
            status.open = None;
        }
        let quit = match reason {
            CloseReason::User | CloseReason::SessionEnded => true,
            CloseReason::Replaced => false,
            _ => !self.0.interactive,
        };
        if !matches!(
            reason,
            CloseReason::User | CloseReason::SessionEnded | CloseReason::Replaced
        ) && !status.triggered
        {
            status.failure = Some(crate::log::closed_words(reason));
        }
        drop(status);
        if quit {
            self.0.shutdown();
        }
    }

    fn notify_crashed(&mut self, key: &SurfaceKey) {
        self.0
            .out
            .line(format_args!("crashed {key}: its web process ended"));
        self.0.status().failure = Some("crashed".to_owned());
    }

    fn notify_rejected(&mut self, error: &ProtocolError, _line: Option<u64>) {
        self.0.out.line(format_args!(
            "refused ({}, {}): {}",
            error.code, error.rule, error.message
        ));
        let mut status = self.0.status();
        if status.open.is_none() {
            status.failure = Some(error.message.clone());
            drop(status);
            if !self.0.interactive {
                self.0.shutdown();
            }
        }
    }

    fn notify_dropped(&mut self, key: &SurfaceKey, error: &ProtocolError) {
        self.0.out.line(format_args!(
            "dropped a message of {key} ({}): {}",
            error.rule, error.message
        ));
    }

    fn notify_refused(&mut self, key: &SurfaceKey, refusal: &Refusal) {
        self.0
            .out
            .line(format_args!("sandbox refused {key}: {refusal}"));
    }

    /// R-DIAG-1: page-supplied, so marked "page says"; counted for `--check`.
    fn notify_diagnostic(&mut self, key: &SurfaceKey, diagnostic: &Diagnostic) {
        let says = if diagnostic.page_supplied() {
            "page says"
        } else {
            "host"
        };
        self.0.out.line(format_args!(
            "{} {key}: {says} {diagnostic}",
            diagnostic.level
        ));
        let mut status = self.0.status();
        match diagnostic.kind {
            DiagnosticKind::Error | DiagnosticKind::Rejection => status.page_errors += 1,
            DiagnosticKind::Csp => status.csp_violations += 1,
            _ => {}
        }
    }

    fn notify_resize_request(&mut self, key: &SurfaceKey, height: u32, clamped: bool) {
        // `(clamped)` only when the resize bounds changed the page's request (issue 30 item 11).
        let note = if clamped { " (clamped)" } else { "" };
        self.0
            .out
            .line(format_args!("resize {key}: {height} px{note}"));
    }

    fn notify_probe_failed(&mut self, reason: &str) {
        self.0
            .out
            .line(format_args!("isolation probe failed (R-SEC-8): {reason}"));
        self.0.status().failure = Some(reason.to_owned());
    }
}
