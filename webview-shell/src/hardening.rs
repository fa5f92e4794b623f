//! What a Surface view's hardening is, read back from the engine: what the platform reports and
//! what tests and embedders check.

/// The hardening of one view, read back from the engine rather than from the configuration.
///
/// The default is nothing at all (every field `false`): an engine other than the platform's
/// ([`SurfaceEngine`](crate::SurfaceEngine)) starts from it and sets what it really gives.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Hardening {
    /// The view lives in a web context of its own, shared with no other Surface.
    pub own_context: bool,
    /// Its website data (storage, cookies, caches) is ephemeral: kept in memory only.
    pub ephemeral: bool,
    /// Its web processes start in WebKit's bubblewrap sandbox (R-SEC-8).
    pub web_sandbox: bool,
    /// The web inspector is enabled.
    pub devtools: bool,
    /// Scripts may open windows without a user gesture.
    pub popups_without_gesture: bool,
    /// Media needs a user gesture to play.
    pub media_requires_gesture: bool,
    /// Scripts may use the clipboard.
    pub clipboard_access: bool,
    /// The engine writes the page's console messages to the process's standard output, where
    /// they would corrupt the protocol stream (R-DIAG-1); must stay off.
    pub console_to_stdout: bool,
}
