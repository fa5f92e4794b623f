//! The per-platform Surface webview behind the neutral [`SurfaceView`](crate::SurfaceView), and
//! the built-in consent prompt's window behind [`PromptQueue`](crate::PromptQueue), and the real
//! desktop of the built-in capabilities behind [`SystemDesktop`](crate::SystemDesktop).

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
pub(crate) use linux::desktop;
#[cfg(target_os = "linux")]
pub(crate) use linux::{
    apply_theme, check_display, check_web_processes_sandboxed, desktop_high_contrast,
    web_processes, PlatformNotice, PlatformPrompt, PlatformStandby, PlatformView,
};

#[cfg(not(target_os = "linux"))]
mod unsupported;
#[cfg(not(target_os = "linux"))]
pub(crate) use unsupported::desktop;
#[cfg(not(target_os = "linux"))]
pub(crate) use unsupported::{
    apply_theme, check_display, check_web_processes_sandboxed, desktop_high_contrast,
    web_processes, PlatformNotice, PlatformPrompt, PlatformStandby, PlatformView,
};
