//! Shared helpers of the integration tests, including the real-webview end-to-end tests.
//!
//! [`x11`] drives an X server (Xvfb in CI) the way a user and a window manager would: it finds
//! windows, clicks with XTEST and asks windows to close with `WM_DELETE_WINDOW`.

#[cfg(target_os = "linux")]
pub mod x11;
