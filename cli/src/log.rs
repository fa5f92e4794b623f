//! Logging to stderr: the tracing subscriber, and a host delegate that reports every refusal with
//! the line it came from and the rule it broke.

use lineup_host::{HostDelegate, Refusal};
use lineup_host_core::{
    display_title, CloseReason, Diagnostic, DiagnosticLevel, Fingerprint, InlineApp, ProtocolError,
    SurfaceKey,
};

/// Logs to stderr; `RUST_LOG` filters (default `info`).
pub(crate) fn init() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    // tungstenite logs the client handshake's whole request, the agent's `Authorization:
    // Bearer` token included, at trace level (through `log`, which this subscriber forwards):
    // never, whatever `RUST_LOG` asks (link/token.rs).
    let filter = match "tungstenite::handshake::client=info".parse() {
        Ok(directive) => filter.add_directive(directive),
        Err(_) => filter,
    };
    // The MCP SDK of `lineup mcp` reports each session's start and end at info level: only its
    // warnings, unless `RUST_LOG` names it.
    let names_rmcp = std::env::var("RUST_LOG").is_ok_and(|filter| filter.contains("rmcp"));
    let filter = match "rmcp=warn".parse() {
        Ok(directive) if !names_rmcp => filter.add_directive(directive),
        _ => filter,
    };
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false)
        .init();
}

/// Reports the host's notifications on stderr; [`StderrDelegate::telling_ready`] also tells a
/// callback each view's ready (`lineup mcp --check`).
pub(crate) struct StderrDelegate {
    on_ready: Box<dyn FnMut(&SurfaceKey)>,
}

impl Default for StderrDelegate {
    fn default() -> Self {
        Self::telling_ready(|_| {})
    }
}

impl StderrDelegate {
    /// Reports on stderr, and tells `on_ready` the key of each Surface or view that is ready.
    pub(crate) fn telling_ready(on_ready: impl FnMut(&SurfaceKey) + 'static) -> Self {
        Self {
            on_ready: Box::new(on_ready),
        }
    }
}

impl HostDelegate for StderrDelegate {
    fn notify_rejected(&mut self, error: &ProtocolError, line: Option<u64>) {
        let at = line.map(|n| format!("line {n}: ")).unwrap_or_default();
        let field = error
            .field
            .as_deref()
            .map(|f| format!(" [field {f}]"))
            .unwrap_or_default();
        tracing::warn!(
            "{at}refused ({}, {}): {}{field}",
            error.code,
            error.rule,
            error.message
        );
    }

    fn notify_dropped(&mut self, key: &SurfaceKey, error: &ProtocolError) {
        tracing::warn!(
            "surface {key}: dropped a bridge message ({}): {}",
            error.rule,
            error.message
        );
    }

    fn notify_refused(&mut self, key: &SurfaceKey, refusal: &Refusal) {
        tracing::warn!("{}", refusal_line(key, refusal));
    }

    fn notify_opened(&mut self, key: &SurfaceKey, app: &InlineApp) {
        let title = display_title(app.name.as_deref(), app.id.as_str());
        tracing::info!("surface {key}: opened {} {} ({title})", app.id, app.version);
    }

    fn notify_ready(&mut self, key: &SurfaceKey) {
        tracing::info!("surface {key}: ready");
        (self.on_ready)(key);
    }

    fn notify_closed(&mut self, key: &SurfaceKey, reason: &CloseReason) {
        tracing::info!("surface {key}: {}", closed_words(reason));
    }

    /// R-DIAG-1: on stderr, never stdout; "page says" marks it page-supplied (a page can forge
    /// any of it), and its text is escaped onto one line.
    fn notify_diagnostic(&mut self, key: &SurfaceKey, diagnostic: &Diagnostic) {
        let says = if diagnostic.page_supplied() {
            "page says"
        } else {
            "host"
        };
        match diagnostic.level {
            DiagnosticLevel::Error => tracing::error!("surface {key}: {says} {diagnostic}"),
            DiagnosticLevel::Warn => tracing::warn!("surface {key}: {says} {diagnostic}"),
            _ => tracing::info!("surface {key}: {says} {diagnostic}"),
        }
    }

    fn notify_resize(&mut self, key: &SurfaceKey, height: u32) {
        tracing::info!("surface {key}: resized to {height} px");
    }

    fn notify_crashed(&mut self, key: &SurfaceKey) {
        tracing::error!("surface {key}: its web process ended");
    }

    fn notify_unresponsive(&mut self, key: &SurfaceKey) {
        tracing::error!("surface {key}: its page stopped answering; its web process is ended");
    }
}

/// The log line of a refusal: a URL the page chose appears only as its length and digest,
/// since this log reaches journald under systemd and the URL may carry agent state or event
/// data; the rest in words.
fn refusal_line(key: &dyn std::fmt::Display, refusal: &Refusal) -> String {
    let url = |what: &str, url: &str| {
        let f = Fingerprint::of(url);
        format!(
            "{what} a URL of {} bytes (sha256 {}…)",
            f.len(),
            f.sha256_prefix()
        )
    };
    let words = match refusal {
        Refusal::Navigation(u) => url("a navigation to", u),
        Refusal::NewWindow(u) => url("a new window for", u),
        Refusal::Download(u) => url("a download of", u),
        other => other.to_string(),
    };
    format!("surface {key}: refused {words}")
}

/// Why a Surface closed, in words. The agent's own reason is agent-supplied text: only its
/// length and digest.
pub(crate) fn closed_words(reason: &CloseReason) -> String {
    match reason {
        CloseReason::Agent(None) => "closed by the agent".to_owned(),
        CloseReason::Agent(Some(why)) => {
            let f = Fingerprint::of(why);
            format!(
                "closed by the agent (its reason: {} bytes, sha256 {}…)",
                f.len(),
                f.sha256_prefix()
            )
        }
        CloseReason::User => "closed by the user".to_owned(),
        CloseReason::Gone(why) => format!("closed: gone ({why})"),
        CloseReason::Failed => "closed: its view could not be created".to_owned(),
        CloseReason::SessionEnded => "closed: its session ended".to_owned(),
        CloseReason::Replaced => "closed: replaced by a new open of its instance".to_owned(),
        CloseReason::Reopened(why) => format!("closed: reopened in place after {why}"),
        _ => "closed".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 30 item 5: log lines say why in words, never a type's `Debug` form, and the
    /// agent's reason only as a fingerprint.
    #[test]
    fn close_reasons_are_logged_in_words() {
        let agent = closed_words(&CloseReason::Agent(Some("s3cr3t".to_owned())));
        assert!(
            agent.starts_with("closed by the agent (its reason: 6 bytes"),
            "{agent}"
        );
        assert!(!agent.contains("s3cr3t"), "{agent}");
        let gone = closed_words(&CloseReason::Gone(lineup_host_core::GoneReason::AgentGone));
        assert_eq!(gone, "closed: gone (agent_gone)");
        for reason in [
            CloseReason::Agent(None),
            CloseReason::User,
            CloseReason::SessionEnded,
            CloseReason::Reopened(lineup_host_core::GoneReason::Crashed),
        ] {
            let words = closed_words(&reason);
            assert!(
                !words.contains("Agent(")
                    && !words.contains("Session")
                    && !words.contains("Crashed"),
                "{words}"
            );
        }
    }

    #[test]
    fn a_refused_url_is_logged_as_a_fingerprint_never_as_text() {
        let secret = "https://leak.example/?state=s3cr3t-agent-state";
        let line = refusal_line(&"w1", &Refusal::Navigation(secret.to_owned()));
        assert!(
            line.contains("w1") && line.contains("a navigation to"),
            "{line}"
        );
        for part in ["s3cr3t", "leak.example", "state="] {
            assert!(!line.contains(part), "{part} logged: {line}");
        }
        // Positive control: the Display form, for authors, does write it out.
        assert!(Refusal::Navigation(secret.to_owned())
            .to_string()
            .contains("s3cr3t"));
    }
}
