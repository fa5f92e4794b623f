//! The one error type of the platform layer.

/// Why the platform layer refused or failed to do something.
///
/// Variants keep apart what the embedder got wrong ([`ShellError::Usage`],
/// [`ShellError::InvalidState`], [`ShellError::InvalidMcpMessage`],
/// [`ShellError::WrongViewKind`], [`ShellError::NoContainer`]), what the store could not do
/// ([`ShellError::Store`]), what the isolation gate decided ([`ShellError::ProbePending`],
/// [`ShellError::ProbeFailed`], [`ShellError::TooManySurfaces`]) and what the platform could not
/// do ([`ShellError::Platform`], [`ShellError::Unsupported`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ShellError {
    /// The isolation probe (R-SEC-8) has not finished yet; no Surface is served before it passes.
    #[error(
        "the isolation probe has not finished yet; surfaces are served once it passes (R-SEC-8)"
    )]
    ProbePending,

    /// The isolation probe (R-SEC-8) failed, so this shell refuses to serve Surfaces (fail
    /// closed). `reason` names the check that failed.
    #[error("the isolation probe failed, so no surface is served (R-SEC-8): {reason}")]
    ProbeFailed {
        /// The check that failed and what was seen instead.
        reason: String,
    },

    /// As many Surfaces as the configured limit are open; each one is a web process.
    #[error("{limit} surfaces are already open, the configured maximum; close one first")]
    TooManySurfaces {
        /// The configured maximum.
        limit: usize,
    },

    /// The state handed to the page was not a JSON object (R-UI-3).
    #[error("state must be a JSON object: {reason}")]
    InvalidState {
        /// What was wrong with it.
        reason: String,
    },

    /// The message for an MCP App view was not one JSON object (R-MCP-7); nothing was posted.
    #[error("a message for an MCP App view must be one JSON object: {reason}")]
    InvalidMcpMessage {
        /// What was wrong with it.
        reason: String,
    },

    /// The call needs another kind of view: a state for a Surface's bridge sent to an MCP App
    /// view, which has none, or a message for an MCP App view sent to a Surface's (R-MCP-7).
    /// Nothing was done.
    #[error("{call} needs {needs}; this view is {is}")]
    WrongViewKind {
        /// The call, as `SurfaceView::deliver_state`.
        call: &'static str,
        /// The kind of view it needs.
        needs: &'static str,
        /// The kind this view is.
        is: &'static str,
    },

    /// A child view was asked for inside a window that has no container to hold it.
    #[error(
        "the parent window has no container for child views; build it with tao's default vbox"
    )]
    NoContainer,

    /// The embedder used the kernel wrongly (a limit that cannot work, a capability registered
    /// twice, a schema that does not compile): fix the call.
    #[error(transparent)]
    Usage(#[from] lineup_host_core::UsageError),

    /// The capability store could not be read or written (R-CAP-5, R-CAP-6); nothing was run.
    /// The store's own error is the source.
    #[error("the capability store failed: {0}")]
    Store(#[source] Box<dyn std::error::Error + Send + Sync>),

    /// The window system or the web engine failed.
    #[error("platform error: {0}")]
    Platform(String),

    /// This platform lacks the feature; nothing was done.
    #[error("unsupported on this platform: {0}")]
    Unsupported(&'static str),
}

#[cfg(test)]
mod tests {
    use super::ShellError;

    /// A store failure keeps its source for the embedder's error chain, not only its words.
    #[test]
    fn a_store_failure_keeps_its_source() {
        let io = std::io::Error::new(std::io::ErrorKind::PermissionDenied, "calls.db: read-only");
        let error = ShellError::Store(Box::new(io));
        let source = std::error::Error::source(&error).map(ToString::to_string);
        assert_eq!(source.as_deref(), Some("calls.db: read-only"));
        assert_eq!(
            error.to_string(),
            "the capability store failed: calls.db: read-only"
        );
    }
}
