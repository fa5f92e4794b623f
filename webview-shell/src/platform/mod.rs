//! The per-platform Surface webview behind the neutral [`SurfaceView`](crate::SurfaceView), and
//! the built-in consent prompt's window behind [`PromptQueue`](crate::PromptQueue), and the real
//! desktop of the built-in capabilities behind [`SystemDesktop`](crate::SystemDesktop).

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
pub(crate) use linux::desktop;
#[cfg(target_os = "linux")]
pub use linux::{
    apply_theme, check_display, desktop_high_contrast, open_display, screen_pixels_of,
    theme_is_dark, window_pixels,
};
#[cfg(target_os = "linux")]
pub(crate) use linux::{
    check_web_processes_sandboxed, container_size, watch_container, web_processes, PlatformBoard,
    PlatformBoardPlace, PlatformComponent, PlatformComponentProcess, PlatformContainer,
    PlatformNotice, PlatformPlaceholder, PlatformPrompt, PlatformStandby, PlatformView,
    PlatformWakeTimer, PromptParent,
};

#[cfg(not(target_os = "linux"))]
mod unsupported;
#[cfg(not(target_os = "linux"))]
pub(crate) use unsupported::desktop;
#[cfg(not(target_os = "linux"))]
pub use unsupported::{
    apply_theme, check_display, desktop_high_contrast, open_display, screen_pixels_of,
    theme_is_dark, window_pixels,
};
#[cfg(not(target_os = "linux"))]
pub(crate) use unsupported::{
    check_web_processes_sandboxed, container_size, watch_container, web_processes, PlatformBoard,
    PlatformBoardPlace, PlatformComponent, PlatformComponentProcess, PlatformContainer,
    PlatformNotice, PlatformPlaceholder, PlatformPrompt, PlatformStandby, PlatformView,
    PlatformWakeTimer, PromptParent,
};
