//! What a [`Session`](crate::Session) asks of the platform and the embedder ([`Effect`]), why
//! Surfaces close, and the session's counters.

use std::fmt;

use crate::apps::Assets;
use crate::capability::CapabilityEffect;
use crate::component::ComponentEffect;
use crate::diagnostic::Diagnostic;
use crate::error::ProtocolError;
use crate::json::JsonObject;
pub use crate::keys::{Generation, SurfaceKey};
use crate::mcp_effect::McpEffect;
use crate::message::{InlineApp, Message};
use crate::redact::Fingerprint;
use crate::source::SourceFiles;

/// What the platform needs to create a Surface.
#[derive(Debug, Clone, PartialEq)]
pub struct SurfaceOpen {
    /// The webview's identity.
    pub key: SurfaceKey,
    /// The app, its code and its untrusted display name.
    pub app: InlineApp,
    /// An installed app's assets, to serve from the Surface's own scheme host (R-SEC-3a);
    /// empty for an inline bundle.
    pub assets: Assets,
    /// The names of the bundle's parts, for positions in diagnostics (R-DIAG-1): the
    /// manifest's files for an installed app, the bundle folder's for an inline bundle.
    pub sources: SourceFiles,
}

/// Why a Surface closes. `Debug` shows the agent's reason as a [`Fingerprint`] (logs reach
/// journald).
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CloseReason {
    /// The agent sent `ui.close` (with its reason).
    Agent(Option<String>),
    /// The user closed it; a `ui.event close` went upstream (R-UI-5).
    User,
    /// It went away on its own (R-UI-12); the agent got `ui.event` `close` with `data.reason`.
    Gone(GoneReason),
    /// The platform could not create it.
    Failed,
    /// The session ended (for example the agent's stream closed).
    SessionEnded,
    /// A `ui.open` with the same instance id replaced it (R-UI-1); reported by the platform layer
    /// to the embedder, never sent upstream.
    Replaced,
    /// Its web process died or stopped answering, and the Surface was reopened in place under a
    /// new generation with its last state ([`Effect::Reopen`]); reported by the platform layer to
    /// the embedder, never sent upstream (R-UI-12).
    Reopened(GoneReason),
}

impl fmt::Debug for CloseReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Agent(reason) => f
                .debug_tuple("Agent")
                .field(&reason.as_ref().map(Fingerprint::of))
                .finish(),
            Self::User => f.write_str("User"),
            Self::Gone(why) => f.debug_tuple("Gone").field(why).finish(),
            Self::Failed => f.write_str("Failed"),
            Self::SessionEnded => f.write_str("SessionEnded"),
            Self::Replaced => f.write_str("Replaced"),
            Self::Reopened(why) => f.debug_tuple("Reopened").field(why).finish(),
        }
    }
}

/// Why a Surface went away without the agent's `ui.close`, a replacing `ui.open` or the user
/// (R-UI-12). The agent hears it as `ui.event` `close` with `data: {"reason": <as_str>}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum GoneReason {
    /// Its web process died (crashed, killed) and was not restored: it was lost more often than
    /// `Limits::max_reopens_per_window` allows, or the embedder does not reopen Surfaces.
    Crashed,
    /// It stopped answering, its web process was ended by the host's watchdog, and it was not
    /// restored (as for [`GoneReason::Crashed`]).
    Unresponsive,
    /// It passed its memory ceiling and its web process was ended; never reopened.
    Memory,
    /// Its main frame committed more documents than `Limits::max_documents_per_window` allows.
    ReloadLoop,
    /// Its installed app was disabled in the app center (R-UI-9).
    AppDisabled,
    /// Its installed app was removed, or its bytes failed verification (R-UI-9).
    AppRemoved,
    /// Its installed app was upgraded or rolled back to another version (R-UI-9).
    AppUpgraded,
    /// The agent's connection stayed away longer than the embedder's grace (`lineup host
    /// --connect`'s `--grace-secs`): the Surface stayed on screen and patchable until then
    /// (R-UI-12). Never reopened: only the agent could bring it back.
    AgentGone,
}

impl GoneReason {
    /// The `data.reason` sent upstream, in snake case.
    pub fn as_str(self) -> &'static str {
        match self {
            GoneReason::Crashed => "crashed",
            GoneReason::Unresponsive => "unresponsive",
            GoneReason::Memory => "memory",
            GoneReason::ReloadLoop => "reload_loop",
            GoneReason::AppDisabled => "app_disabled",
            GoneReason::AppRemoved => "app_removed",
            GoneReason::AppUpgraded => "app_upgraded",
            GoneReason::AgentGone => "agent_gone",
        }
    }
}

impl fmt::Display for GoneReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the kernel asks the platform and the embedder to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Create a Surface.
    Open(SurfaceOpen),
    /// A Surface restored from its record after a restart (#29): open again, hibernated. A host
    /// that hibernates creates no webview until the embedder shows it (then as a wake); one
    /// that does not creates it at once, as for [`Effect::Open`].
    OpenHibernated(SurfaceOpen),
    /// Destroy `old` and create `open` in its place (R-UI-1); nothing goes upstream.
    Replace {
        /// The webview to destroy.
        old: SurfaceKey,
        /// The Surface to create.
        open: SurfaceOpen,
    },
    /// The web process of `old` died or stopped answering (`reason`); destroy `old` and create
    /// `open` in its place (same instance, new generation, the same bundle). Its last state is
    /// delivered after the new page's `ready`, as after an open; nothing goes upstream
    /// (R-UI-12). Put it where `old` was.
    Reopen {
        /// The webview to destroy.
        old: SurfaceKey,
        /// The Surface to create.
        open: SurfaceOpen,
        /// What happened to `old`.
        reason: GoneReason,
    },
    /// The Surface's page ran its script and is ready (lifecycle notification).
    Ready(SurfaceKey),
    /// The Surface's main frame committed a new document (the page reloaded itself, R-UI-10); it
    /// gets the current state again after its `ready` (lifecycle notification).
    Reloaded(SurfaceKey),
    /// The page said `ready` again without its main frame committing a document: it replaced its
    /// document in place (a `javascript:` URL, which never reaches the navigation policy) or
    /// forged the message. Load the Surface's own document again (R-SEC-2a); the commit that
    /// follows counts toward the reload-loop bound (R-UI-10).
    RestoreDocument(SurfaceKey),
    /// Push this state to the page through the bridge (R-UI-3).
    DeliverState {
        /// The webview.
        key: SurfaceKey,
        /// The whole state.
        state: JsonObject,
    },
    /// The page asked for a height, in CSS pixels; the platform clamps it.
    Resize {
        /// The webview.
        key: SurfaceKey,
        /// The requested height.
        height: f64,
    },
    /// Destroy the Surface.
    Close {
        /// The webview.
        key: SurfaceKey,
        /// Why.
        reason: CloseReason,
    },
    /// Send this message to the agent.
    Send(Message),
    /// Diagnostic: an inbound envelope was refused (its answer, if any, is a separate `Send`).
    Rejected(ProtocolError),
    /// A console message, page error or CSP violation of the Surface's page, within its
    /// diagnostic budget: for the embedder and the Surface's author, never for the agent
    /// (R-DIAG-1). Page-supplied, except the host's own `suppressed` notes.
    Diagnostic {
        /// The webview whose page reported it.
        key: SurfaceKey,
        /// What it reported.
        diagnostic: Diagnostic,
    },
    /// Diagnostic: a bridge message was dropped and counted, never forwarded (R-UI-7).
    Dropped {
        /// The webview that posted it.
        key: SurfaceKey,
        /// Why it was dropped.
        error: ProtocolError,
    },
    /// Store, prompt, hook, run or audit work of the App Capability kernel; only after
    /// [`Session::enable_capabilities`](crate::Session::enable_capabilities). Some carry a
    /// [`Ticket`](crate::Ticket) to answer through
    /// [`Session::answered`](crate::Session::answered).
    Capability(CapabilityEffect),
    /// Show, update, lock or hide a standard component (R-STD-1 … R-STD-7).
    Component(ComponentEffect),
    /// Create an MCP App view, post JSON-RPC to one, or take a message of one that the host
    /// answers itself (R-MCP-3 … R-MCP-8); only in a session whose
    /// [`SessionConfig::mcp_apps`](crate::SessionConfig::mcp_apps) is set.
    Mcp(McpEffect),
}

/// Counters of what the session accepted and dropped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Inbound envelopes accepted.
    pub envelopes_accepted: u64,
    /// Inbound envelopes refused.
    pub envelopes_refused: u64,
    /// Bridge events forwarded upstream as `ui.event`.
    pub events_forwarded: u64,
    /// Bridge messages dropped as invalid (R-UI-7).
    pub bridge_invalid: u64,
    /// Bridge messages dropped because their webview was replaced or closed (R-UI-6).
    pub bridge_stale: u64,
    /// Bridge messages the platform dropped because the page posted faster than they could be
    /// handled.
    pub bridge_flooded: u64,
    /// Bridge events named `close` dropped: a page cannot forge a user close (R-UI-5).
    pub forged_close: u64,
    /// Repeated `ready` messages of one document, dropped (R-UI-10).
    pub duplicate_ready: u64,
    /// `ready` messages from a document that replaced a Surface's in place without a
    /// navigation; each had the Surface's own document loaded again (R-SEC-2a).
    pub replaced_documents: u64,
    /// New main-frame documents after the first, in any Surface (R-UI-10).
    pub reloads: u64,
    /// Page diagnostics handed to the embedder (R-DIAG-1).
    pub diagnostics: u64,
    /// Page diagnostics dropped beyond a Surface's diagnostic budget (R-DIAG-1).
    pub diagnostics_suppressed: u64,
    /// Events of an installed app's Surface that its manifest does not declare (R-UI-9).
    pub undeclared_events: u64,
    /// Surfaces reopened after their web process died or stopped answering (R-UI-12).
    pub reopened: u64,
    /// Hibernated Surfaces given a new webview when shown again ([`Session::wake`](crate::Session::wake)).
    pub woken: u64,
    /// `window.close()` calls by pages, reported by the bridge and never obeyed (R-UI-5).
    pub close_attempts: u64,
    /// User answers to standard components dropped: stale, locked, invalid or too large
    /// (R-STD-6, R-STD-7).
    pub answers_dropped: u64,
    /// Messages of MCP App views refused with a JSON-RPC error, or unknown notifications of
    /// theirs dropped (R-MCP-6).
    pub mcp_refused: u64,
    /// `ui/notifications/sandbox-*` messages of MCP App views, dropped (R-MCP-8).
    pub mcp_sandbox_dropped: u64,
    /// The agent's answers and progress for a view's request that no longer waits (answered,
    /// timed out, cancelled, or its view closed), dropped, never relayed (R-MCP-6).
    pub mcp_late: u64,
    /// Messages posted to an MCP App view's host document that its relay dropped unread: not
    /// the view's own, or not JSON-RPC (R-MCP-7).
    pub mcp_relay_dropped: u64,
    /// The `script-src` `eval` report every SDK 2.0.x view makes at load, counted and not sent
    /// (R-MCP-10): one per load of a view.
    pub mcp_eval_reports: u64,
    /// Blocked loads of an MCP App view past the reports one view may send the agent
    /// (R-MCP-10), counted.
    pub mcp_blocked_suppressed: u64,
}

impl std::ops::AddAssign<&Stats> for Stats {
    /// Adds `more`'s counters, every one (the destructuring names each field, so a new counter
    /// cannot be left out of a table's totals).
    fn add_assign(&mut self, more: &Stats) {
        let Stats {
            envelopes_accepted,
            envelopes_refused,
            events_forwarded,
            bridge_invalid,
            bridge_stale,
            bridge_flooded,
            forged_close,
            duplicate_ready,
            replaced_documents,
            reloads,
            diagnostics,
            diagnostics_suppressed,
            undeclared_events,
            reopened,
            woken,
            close_attempts,
            answers_dropped,
            mcp_refused,
            mcp_sandbox_dropped,
            mcp_late,
            mcp_relay_dropped,
            mcp_eval_reports,
            mcp_blocked_suppressed,
        } = more;
        self.envelopes_accepted += envelopes_accepted;
        self.envelopes_refused += envelopes_refused;
        self.events_forwarded += events_forwarded;
        self.bridge_invalid += bridge_invalid;
        self.bridge_stale += bridge_stale;
        self.bridge_flooded += bridge_flooded;
        self.forged_close += forged_close;
        self.duplicate_ready += duplicate_ready;
        self.replaced_documents += replaced_documents;
        self.reloads += reloads;
        self.diagnostics += diagnostics;
        self.diagnostics_suppressed += diagnostics_suppressed;
        self.undeclared_events += undeclared_events;
        self.reopened += reopened;
        self.woken += woken;
        self.close_attempts += close_attempts;
        self.answers_dropped += answers_dropped;
        self.mcp_refused += mcp_refused;
        self.mcp_sandbox_dropped += mcp_sandbox_dropped;
        self.mcp_late += mcp_late;
        self.mcp_relay_dropped += mcp_relay_dropped;
        self.mcp_eval_reports += mcp_eval_reports;
        self.mcp_blocked_suppressed += mcp_blocked_suppressed;
    }
}
