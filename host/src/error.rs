//! The host's own error: what the embedding API refuses, told apart from what the platform
//! under it refused.

use lineup_host_core::InstanceId;
use lineup_webview_shell::ShellError;

/// What [`HostBuilder::build`](crate::HostBuilder::build), [`Host::run`](crate::Host::run),
/// [`event_loop`](crate::event_loop) and the read-backs of a
/// [`HostHandle`](crate::HostHandle) refuse.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HostError {
    /// The platform refused: no display, a window or view that could not be made, the
    /// isolation probe failed (R-SEC-8), the store could not be opened, a setting this engine
    /// cannot honour. The [`ShellError`] says which.
    #[error(transparent)]
    Platform(#[from] ShellError),
    /// No Surface of this instance is open with a view to read (it never opened, it closed,
    /// or it is hibernated).
    #[error("surface {instance} is not open")]
    NotOpen {
        /// The instance asked for.
        instance: InstanceId,
    },
}
