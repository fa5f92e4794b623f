//! Configurable bounds on everything the agent and the pages send (R-ENV-4, R-UI-2, R-UI-7).

use std::time::Duration;

use crate::error::UsageError;

/// Bounds applied before and during decoding, and to the Surface registry.
///
/// Defaults:
///
/// | field | default | rule |
/// |---|---|---|
/// | `max_envelope_bytes` | 1 MiB | R-ENV-4 |
/// | `max_depth` | 32 | R-ENV-4 |
/// | `max_bundle_bytes` | 160 KiB | R-UI-2 |
/// | `max_event_data_bytes` | 16 KiB (data must be smaller) | R-UI-7 |
/// | `max_bridge_message_bytes` | 20 KiB | R-UI-7 |
/// | `max_pending_bridge_messages` | 256 per Surface | R-ENV-4 (host choice) |
/// | `max_surfaces` | 256 open Surfaces, per session and over every session of a host | R-SES-1 (host choice: hidden ones may hibernate) |
/// | `max_live_surfaces` | 16 Surfaces with a web process at once, over every session of a host; past it the least recently shown hidden one hibernates, and an open that finds none is refused `too_many_live_surfaces` | host choice: each live Surface is a web process |
/// | `hibernate_hidden_after` | none: a hidden Surface hibernates only when an open needs its web process; `Some(d)`: also once it has been hidden for `d` | host choice |
/// | `max_hibernated_bytes` | 64 MiB: the pictures hibernated Surfaces keep, over every session of a host; past it the longest-hidden one's goes (it wakes without one) | host choice |
/// | `max_sessions` | 64 sessions (conversations) served at once by one host | R-SES-1 (host choice) |
/// | `max_opens_per_window` | 30 | host choice |
/// | `open_window` | 10 s | host choice |
/// | `max_documents_per_window` | 5 | R-UI-10 (host choice) |
/// | `document_window` | 10 s | R-UI-10 (host choice) |
/// | `surface_memory_limit_mib` | 512 MiB per Surface web process | host choice |
/// | `max_diagnostics_per_window` | 100 per Surface | R-DIAG-1 (host choice) |
/// | `max_diagnostic_bytes_per_window` | 64 KiB per Surface | R-DIAG-1 (host choice) |
/// | `diagnostic_window` | 10 s | R-DIAG-1 (host choice) |
/// | `max_diagnostic_text_bytes` | 2 KiB (longer messages are cut) | R-DIAG-1 (host choice) |
/// | `max_pending_diagnostics` | 64 per Surface | R-DIAG-1 (host choice) |
/// | `max_reopens_per_window` | 3 per Surface; 0 never reopens | R-UI-12 (host choice) |
/// | `reopen_window` | 60 s | R-UI-12 (host choice) |
/// | `max_components` | 64 open standard component instances per session, counted apart from Surfaces | R-STD-17 |
/// | `max_link_url_bytes` | 8 KiB per link ([`check_link`](crate::check_link)) | R-CAP-4 (host choice) |
/// | `max_call_lifetime` | 10 min: an `app.call`'s `expires_at` later than this after receipt is brought forward to it, so no prompt or dialog is held longer | R-CAP-4 (host choice) |
/// | `max_mcp_resource_bytes` | 8 MiB: an MCP App view's HTML, counted after base64 decoding, inline or by digest | R-MCP-4 |
/// | `mcp_teardown_timeout` | 3 s: how long an initialized MCP App view's answer to `ui/resource-teardown` is awaited before it closes anyway | R-MCP-8 (host choice) |
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// The largest inbound envelope, in bytes, checked before parsing. It must fit a maximal
    /// bundle after JSON escaping.
    pub max_envelope_bytes: usize,
    /// The deepest nesting of arrays and objects in an envelope or a bridge message.
    pub max_depth: usize,
    /// The largest inline bundle: UTF-8 bytes of `html` + `css` + `js`.
    pub max_bundle_bytes: usize,
    /// Event `data` must be smaller than this many bytes of JSON, as received.
    pub max_event_data_bytes: usize,
    /// The largest raw bridge message a page may post.
    pub max_bridge_message_bytes: usize,
    /// How many messages one Surface's page may have waiting to be handled; the platform drops
    /// and counts what a page posts beyond that, so a flooding page cannot starve the agent.
    pub max_pending_bridge_messages: usize,
    /// How many Surfaces may be open at once in a session, and in all the sessions of a host
    /// together (R-SES-1); a hibernated Surface is open.
    pub max_surfaces: usize,
    /// How many Surfaces may have a web process at once, over every session of a host: past
    /// it the host hibernates the least recently shown hidden one, and an open that finds none
    /// to hibernate is refused `too_many_live_surfaces`, naming this limit.
    pub max_live_surfaces: usize,
    /// How many bytes the pictures of hibernated Surfaces may hold, over every session of a
    /// host; past it the picture of the one hidden longest is dropped, and it wakes without.
    pub max_hibernated_bytes: usize,
    /// When a hidden Surface (a child view, with no presses since its state was last set)
    /// hibernates by itself: `None`, only when an open needs its web process; `Some(d)`, also
    /// once it has been hidden for `d`.
    pub hibernate_hidden_after: Option<Duration>,
    /// How many sessions (conversations) one host serves at once; an envelope naming one more
    /// is refused `too_many_sessions` (R-SES-1).
    pub max_sessions: usize,
    /// How many opens (new or replacing) are accepted within `open_window`.
    pub max_opens_per_window: usize,
    /// The sliding window of `max_opens_per_window`.
    pub open_window: Duration,
    /// How many documents one Surface's main frame may commit within `document_window` (its
    /// first load included); one more closes it as a reload loop (R-UI-10, R-UI-12).
    pub max_documents_per_window: usize,
    /// The sliding window of `max_documents_per_window`.
    pub document_window: Duration,
    /// The memory ceiling of one Surface's web process, in MiB; a process that passes it is
    /// ended and its Surface closed with reason `memory` (R-UI-12).
    pub surface_memory_limit_mib: u32,
    /// How many diagnostics (console messages, errors, CSP violations) one Surface may report
    /// within `diagnostic_window`; the rest are dropped and counted, and the embedder hears one
    /// `suppressed` note (R-DIAG-1). A budget of its own: diagnostics never count against
    /// `max_pending_bridge_messages`, so a chatty console cannot cost a page its events.
    pub max_diagnostics_per_window: usize,
    /// How many bytes of diagnostic text one Surface may report within `diagnostic_window`.
    pub max_diagnostic_bytes_per_window: usize,
    /// The window of the two diagnostic budgets.
    pub diagnostic_window: Duration,
    /// The longest diagnostic message, in bytes of UTF-8; the rest is cut off (R-DIAG-1).
    pub max_diagnostic_text_bytes: usize,
    /// How many diagnostics of one Surface may wait to be handled; the platform drops and counts
    /// the rest, apart from `max_pending_bridge_messages`.
    pub max_pending_diagnostics: usize,
    /// How many times one Surface whose web process died (crashed, killed) or stopped answering
    /// is reopened in place with its last state within `reopen_window`; the next such loss
    /// closes it, and the agent gets `ui.event` `close` with `data.reason` `crashed` or
    /// `unresponsive` (R-UI-12). A Surface ended at its memory ceiling is never reopened. `0`
    /// never reopens. A reopen is the host's own doing: it does not count toward
    /// `max_opens_per_window`.
    pub max_reopens_per_window: usize,
    /// The sliding window of `max_reopens_per_window`.
    pub reopen_window: Duration,
    /// How many standard component instances may be open at once in a session, counted apart
    /// from Surfaces; one more is refused `too_many_components` (R-STD-17).
    pub max_components: usize,
    /// The longest link the link rule accepts, in bytes ([`check_link`](crate::check_link),
    /// `app.open_url`'s `url`).
    pub max_link_url_bytes: usize,
    /// The longest an `app.call` may wait for its decision (consent, a permission check, a
    /// file dialog), counted from its receipt: an `expires_at` later than that is brought
    /// forward to it, and an answer `expired` by it names this limit (R-CAP-4).
    pub max_call_lifetime: Duration,
    /// The largest MCP App view, in bytes after base64 decoding, whether it comes inline in
    /// its `ui.open` or by digest in `mcp.resource` chunks (R-MCP-4).
    pub max_mcp_resource_bytes: usize,
    /// How long an initialized MCP App view's answer to `ui/resource-teardown` is awaited
    /// before it is closed, replaced or hibernated anyway (R-MCP-8).
    pub mcp_teardown_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_envelope_bytes: 1024 * 1024,
            max_depth: 32,
            max_bundle_bytes: 160 * 1024,
            max_event_data_bytes: 16 * 1024,
            max_bridge_message_bytes: 20 * 1024,
            max_pending_bridge_messages: 256,
            max_surfaces: 256,
            max_live_surfaces: 16,
            max_hibernated_bytes: 64 * 1024 * 1024,
            hibernate_hidden_after: None,
            max_sessions: 64,
            max_opens_per_window: 30,
            open_window: Duration::from_secs(10),
            max_documents_per_window: 5,
            document_window: Duration::from_secs(10),
            surface_memory_limit_mib: 512,
            max_diagnostics_per_window: 100,
            max_diagnostic_bytes_per_window: 64 * 1024,
            diagnostic_window: Duration::from_secs(10),
            max_diagnostic_text_bytes: 2 * 1024,
            max_pending_diagnostics: 64,
            max_reopens_per_window: 3,
            reopen_window: Duration::from_secs(60),
            max_components: 64,
            max_link_url_bytes: 8 * 1024,
            max_call_lifetime: Duration::from_secs(10 * 60),
            max_mcp_resource_bytes: 8 * 1024 * 1024,
            mcp_teardown_timeout: Duration::from_secs(3),
        }
    }
}

impl Limits {
    /// Checks that every limit is usable.
    pub fn validate(&self) -> Result<(), UsageError> {
        let positive = [
            ("max_envelope_bytes", self.max_envelope_bytes),
            ("max_depth", self.max_depth),
            ("max_bundle_bytes", self.max_bundle_bytes),
            ("max_event_data_bytes", self.max_event_data_bytes),
            ("max_bridge_message_bytes", self.max_bridge_message_bytes),
            (
                "max_pending_bridge_messages",
                self.max_pending_bridge_messages,
            ),
            ("max_surfaces", self.max_surfaces),
            ("max_live_surfaces", self.max_live_surfaces),
            ("max_sessions", self.max_sessions),
            ("max_link_url_bytes", self.max_link_url_bytes),
            ("max_components", self.max_components),
            ("max_opens_per_window", self.max_opens_per_window),
            ("max_documents_per_window", self.max_documents_per_window),
            (
                "surface_memory_limit_mib",
                self.surface_memory_limit_mib as usize,
            ),
            (
                "max_diagnostics_per_window",
                self.max_diagnostics_per_window,
            ),
            (
                "max_diagnostic_bytes_per_window",
                self.max_diagnostic_bytes_per_window,
            ),
            ("max_diagnostic_text_bytes", self.max_diagnostic_text_bytes),
            ("max_pending_diagnostics", self.max_pending_diagnostics),
            ("max_mcp_resource_bytes", self.max_mcp_resource_bytes),
        ];
        for (name, value) in positive {
            if value == 0 {
                return Err(UsageError::InvalidLimit {
                    name,
                    value: 0,
                    reason: "must be at least 1",
                });
            }
        }
        // A window of zero would forget every reopen at once: a page that crashes its web
        // process would be reopened forever (R-UI-12).
        if self.reopen_window.is_zero() {
            return Err(UsageError::InvalidLimit {
                name: "reopen_window",
                value: 0,
                reason: "must be longer than zero; use max_reopens_per_window = 0 to never reopen",
            });
        }
        if self.max_call_lifetime < Duration::from_secs(1) {
            return Err(UsageError::InvalidLimit {
                name: "max_call_lifetime",
                value: self.max_call_lifetime.as_secs(),
                reason: "must be at least 1 s, or no call could wait for consent",
            });
        }
        if self.max_depth < 4 {
            return Err(UsageError::InvalidLimit {
                name: "max_depth",
                value: self.max_depth as u64,
                reason: "an envelope nests at least 4 levels; use 4 or more",
            });
        }
        Ok(())
    }
}
