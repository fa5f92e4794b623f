//! The Servo engine backend of lineup-host (#28): Surfaces rendered by Servo 0.7, a web engine
//! in Rust that needs no system WebKit.
//!
//! [`ServoEngine::start`] makes the process's one Servo with hardened preferences and the
//! `lineup-surface` scheme; [`ServoEngine::open`] shows a Surface's document, served from its
//! [`SurfaceServer`](lineup_surface_runtime::SurfaceServer) to that one webview only, with the
//! `LineUpSurface` bridge run before the guest's scripts. The page talks to the host on the
//! bridge's console channel ([`CONSOLE_MARKER`](lineup_surface_runtime::CONSOLE_MARKER)), and
//! what a view reports reaches the closure it was opened with (R-SEC-4): the sender is the view,
//! never a field of the message. Every question Servo asks (navigation, new window, unload,
//! permission, dialog, file picker, network load) is answered explicitly.
//!
//! [`ServoHostEngine`] is the same Servo behind the host's engine seam: a `lineup_host::Host`
//! built with `HostBuilder::dangerous().engine(..)` runs its sessions on it
//! (`lineup-servo host --stdio`, which `lineup host --engine servo` runs).
//!
//! What Servo 0.7 cannot give a Surface (no per-webview storage partition, no working process
//! sandbox on Linux, one instance per process) is in `FEATURES.md`'s Servo column.
//!
//! ## Platform-specific
//! Linux, drawn in software (`SoftwareRenderingContext`); built by `scripts/servo.sh`.

#![warn(missing_docs)]

mod clipboard;
mod delegate;
mod engine;
mod host_engine;
mod preferences;
mod probe;
mod protocol;
mod surface;
mod window;

pub use engine::{EngineConfig, ServoEngine};
pub use host_engine::ServoHostEngine;
pub use lineup_webview_shell::ViewEvent;
pub use probe::ProbeStatus;
pub use servo::JSValue;
pub use surface::ServoSurface;
pub use window::SurfaceWindow;

/// Why the Servo backend could not do something.
#[derive(Debug, thiserror::Error)]
pub enum ServoError {
    /// Servo allows one instance per process, and it was made already.
    #[error("Servo was started in this process already (one instance per process)")]
    AlreadyStarted,
    /// The state to deliver was not one JSON object (R-UI-3).
    #[error("invalid state: {0}")]
    InvalidState(String),
    /// The isolation probe has not passed yet: spin the engine and try again (R-SEC-8).
    #[error("the isolation probe has not passed yet")]
    ProbePending,
    /// The isolation probe failed: no Surface is served by this engine (R-SEC-8).
    #[error("the isolation probe failed: {0}")]
    ProbeFailed(String),
    /// Servo or the rendering context refused.
    #[error("Servo: {0}")]
    Engine(String),
}
