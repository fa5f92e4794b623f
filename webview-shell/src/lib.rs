//! The platform layer of lineup-host: one isolated, hardened webview per Surface.
//!
//! A [`Shell`] holds the configuration ([`ViewConfig`]) and the fail-closed isolation probe of
//! R-SEC-8; once the probe passed, [`Shell::open`] gives a [`SurfaceView`] for a
//! [`SurfaceServer`](lineup_surface_runtime::SurfaceServer), in a window of its own or as a
//! child view ([`Placement`]). Each view reports to its own closure ([`ViewEvent`]), which is how
//! an IPC message's sender is known (R-SEC-4).
//!
//! ```no_run
//! use lineup_host_core::InlineBundle;
//! use lineup_surface_runtime::{DocumentOptions, SurfaceDocument, SurfaceServer, SurfaceToken};
//! use lineup_webview_shell::{Placement, ProbeStatus, Shell, ViewConfig, ViewEvent};
//! use tao::event::{Event, WindowEvent};
//! use tao::event_loop::{ControlFlow, EventLoop};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let event_loop = EventLoop::new();
//! let shell = Shell::start(&event_loop, ViewConfig::default())?;
//! let bundle = InlineBundle::new(
//!     "<button id='b'>Refresh</button>",
//!     "",
//!     "document.querySelector('#b').onclick = () => LineUpSurface.event('refresh', {unit: 'c'})",
//! )?;
//! let document = SurfaceDocument::assemble(&bundle, &DocumentOptions::default());
//! let mut token = [0u8; 16];
//! getrandom::fill(&mut token).map_err(|e| e.to_string())?;
//! let mut server = Some(SurfaceServer::new(SurfaceToken::from_random_bytes(token), document));
//! let mut view = None;
//!
//! event_loop.run(move |event, target, control_flow| {
//!     *control_flow = ControlFlow::Wait;
//!     if view.is_none() && shell.probe_status() == ProbeStatus::Passed {
//!         if let Some(server) = server.take() {
//!             let placement = Placement::Window { title: "Weather".into(), width: 480, height: 320 };
//!             // The closure is this view's identity: whatever it receives came from this view.
//!             let opened = shell.open(target, server, placement, |event| match event {
//!                 ViewEvent::Ipc(message) => tracing::info!(%message, "from the weather view"),
//!                 other => tracing::debug!(?other, "weather view"),
//!             });
//!             view = opened.ok();
//!         }
//!     }
//!     if let (Some(v), Event::WindowEvent { window_id, event, .. }) = (&view, &event) {
//!         v.handle_window_event(*window_id, event);
//!     }
//!     if let Event::WindowEvent { event: WindowEvent::Destroyed, .. } = event {
//!         *control_flow = ControlFlow::Exit;
//!     }
//! });
//! # }
//! ```
//!
//! An MCP App view (R-MCP-7) opens with [`Shell::open_mcp_app`] for a
//! [`SurfaceDocument::mcp_app`](lineup_surface_runtime::SurfaceDocument::mcp_app): the same
//! hardened view, with no bridge and no page-world message handler; its relay, in a script
//! world of the host's own, reports [`ViewEvent::McpMessage`], and
//! [`SurfaceView::post_to_mcp_view`] answers.
//!
//! App Capability consent (R-CAP-4) goes through [`PendingConsent`], a request object an
//! embedder's [`ConsentPrompt`] answers once (dropping it answers `Dismissed`, which the kernel reports `cancelled`), or through the
//! built-in [`PromptQueue`]: a trusted, host-owned window that shows the agent's strings as text
//! and takes input only after a guard delay.
//!
//! ## Platform-specific
//! Linux (WebKitGTK, X11 or Wayland) only for now; elsewhere [`Shell::start`] fails with
//! [`ShellError::Unsupported`]. See `FEATURES.md` for what is enforced where.

mod clock;
mod component_snapshot;
mod component_window;
mod components;
mod config;
mod consent;
mod container;
#[cfg(test)]
mod debug_tests;
mod delivery;
mod desktop;
mod engine;
mod engine_view;
mod error;
mod event;
mod gate;
mod hardening;
mod kiosk;
mod navigation;
mod notice;
mod notice_window;
mod placeholder;
mod platform;
mod pool;
mod probe;
mod prompt;
mod prompt_queue;
mod running_probe;
mod shell;
mod standby;
mod standby_window;
mod stdout;
mod system_desktop;
mod title;
mod trusted;
mod view;
mod view_start;
mod wake_timer;
mod window_pixels;
mod windows;

pub use clock::SystemWallClock;
pub use component_snapshot::{ComponentSnapshot, SnapshotElement};
pub use component_window::{
    ComponentBoard, ComponentProcess, ComponentWindow, PATCH_GUARD_INTERVAL,
};
pub use components::{
    component_board_title, component_window_title, ComponentAction, ComponentContent,
    ComponentOptions, COMPONENT_STACK_TITLE, COMPONENT_TITLE_MARKER, DANGER_GUARD_DELAY,
    MIN_COMPONENT_GUARD_DELAY,
};
pub use config::{
    language_from_environment, Contrast, DangerousViewConfig, Placement, Rect, Theme, ViewConfig,
};
pub use consent::{
    risk_in_words, ArgumentLine, AskingConversation, ConsentHandle, ConsentPrompt,
    ConversationName, PendingConsent, PromptContent, RememberNotPermitted, MAX_AGENT_GRAPHEMES,
    MAX_ARGUMENTS_SHOWN, MAX_ARGUMENT_KEY_GRAPHEMES, MAX_ARGUMENT_VALUE_GRAPHEMES,
    MAX_CONVERSATION_GRAPHEMES, MAX_HEADLINE_GRAPHEMES, MAX_REASON_GRAPHEMES,
};
pub use container::{child_area_size, on_child_area_resized, HostContainer};
pub use delivery::DeliveryStats;
pub use desktop::{
    read_picked, write_saved, ChooseFile, Deadline, Desktop, DesktopError, PickedFile, SaveFile,
    SaveLocation, SavedFile,
};
pub use engine::{EngineView, SurfaceEngine};
pub use error::ShellError;
pub use event::{page_text, McpDrop, ViewEvent};
pub use hardening::Hardening;
pub use kiosk::{
    kiosk_window, monitors, on_terminate, skip_absent_a11y_bus, CursorHider, CursorPolicy,
    MonitorChoice, MonitorInfo,
};
pub use lineup_host_core::ConsentAnswer;
pub use navigation::{navigation_allowed, same_document};
pub use notice::{ActivityNotice, NOTICE_DURATION, NOTICE_TITLE};
pub use notice_window::NoticeWindow;
pub use placeholder::Placeholder;
pub use platform::{
    apply_theme, check_display, desktop_high_contrast, open_display, screen_pixels_of,
    theme_is_dark, window_pixels,
};
pub use prompt::{PromptOptions, PromptSnapshot, MIN_GUARD_DELAY};
pub use prompt_queue::PromptQueue;
pub use shell::{ProbeStatus, Shell};
pub use standby::{cap_status, StandbyColor, StandbyScreen, MAX_STANDBY_STATUS_CHARS};
pub use standby_window::StandbyWindow;
pub use stdout::ProtocolStdout;
pub use system_desktop::SystemDesktop;
pub use title::{
    imitates_consent_prompt, surface_window_title, CONSENT_PROMPT_TITLE, SURFACE_TITLE_MARKER,
};
pub use view::SurfaceView;
pub use wake_timer::WakeTimer;
pub use window_pixels::WindowPixels;
pub use windows::WindowMaker;

/// The windowing and event-loop library the platform layer is built on (tao 0.37), for
/// embedders that make their own windows and event loop.
pub use tao;

/// The native toolkit the windows and views are made of, for an embedder's own widgets beside
/// them (say, an embedder's renderer of standard components, R-STD-16): on Linux, `native::gtk`
/// is GTK 3 through the `gtk` crate 0.18, the one tao's `default_vbox` and WebKitGTK use.
/// Elsewhere it is empty.
pub mod native {
    #[cfg(target_os = "linux")]
    pub use gtk;
}
