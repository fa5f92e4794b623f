//! lineup-host: native apps show LineUp UI Surfaces, each in its own isolated webview, and
//! broker App Capabilities under policy and the user's consent.
//!
//! A [`Host`] joins the protocol kernel's session table (`lineup-host-core`, one session per
//! conversation, R-SES-1) to the platform layer's webviews (`lineup-webview-shell`) and the
//! embedder's callbacks ([`HostDelegate`]), on the event-loop thread; a [`HostHandle`] feeds it
//! agent bytes from any thread. [`HostBuilder`] takes the configuration, with a default for
//! everything; capabilities are closures with a JSON Schema ([`CapabilityHandler`], [`typed`]),
//! the built-in ones ([`Builtin`]) are enabled one by one.
//!
//! This crate re-exports what an embedder needs of the layers under it (the platform layer's
//! configuration, consent prompt, kiosk helpers and `tao`, and the built-ins), so one dependency
//! is enough for the common case.
//!
//! ```no_run
//! use lineup_host::{event_loop, HostBuilder};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let event_loop = event_loop()?;
//! let host = HostBuilder::new()
//!     .on_outbound(|message| println!("{}", message.to_json()))
//!     .build(&event_loop)?;
//! let handle = host.handle();
//! std::thread::spawn(move || {
//!     let open = br#"{"v":1,"id":"m1","type":"lineup.v1.ui.open","conversation_id":"c1",
//!       "sender":{"kind":"agent","id":"a1"},"payload":{"instance_id":"w1","app":{
//!       "id":"com.example.w","name":"W","version":"1.0.0","html":"<p>hi</p>","css":"","js":""}}}"#;
//!     let _ = handle.send_inbound(open.to_vec());
//! });
//! host.run(event_loop)?;
//! # Ok(())
//! # }
//! ```
#![forbid(unsafe_code)]

mod capabilities;
mod clock;
#[cfg(test)]
mod debug_tests;
mod delegate;
mod envelopes;
mod error;
mod held_prompts;
mod host;
mod port;
mod standby_rule;
mod watchdog;

#[cfg(feature = "tokio")]
pub use capabilities::tokio_handler;
pub use capabilities::{typed, CapabilityHandler, PermissionHook};
pub use clock::TimestampExt;
pub use delegate::{
    ChildSlot, ComponentSlot, HostDelegate, NoDelegate, Refusal, COMPONENT_COLUMN_WIDTH,
    COMPONENT_GAP,
};
pub use envelopes::AgentEnvelopes;
pub use error::HostError;
pub use held_prompts::HiddenConversationPrompts;
pub use host::{
    event_loop, event_loop_with, ComponentRenderer, ComponentReply, ConversationItem,
    DangerousHostBuilder, Declined, Host, HostBuilder, HostClosed, HostEvent, HostEventLoop,
    HostHandle, HostUserEvent,
};
pub use lineup_builtins::{
    sanitize_file_name, Builtin, BuiltinConfig, Builtins, DesktopCall, RecordingDesktop,
    UnknownBuiltin, MAX_ARTIFACT_BYTES, MAX_CHOOSER_OPEN, MAX_CLIPBOARD_CHARS,
    MAX_FILE_NAME_GRAPHEMES, MAX_PICKED_FILE_BYTES,
};
/// The platform the host's views are made of, for an embedder that lays them out in its own
/// window: the host's container ([`HostContainer`](platform::HostContainer)) to pack where the
/// app's layout wants the host's area, the size placement is measured in
/// ([`child_area_size`](platform::child_area_size)), the windowing library (`tao`) and the
/// native toolkit (`native`, GTK 3 on Linux).
///
/// Below the embedding API, for tools, tests and engines that work with the parts the host is
/// made of: the view shell ([`Shell`](platform::Shell), [`SurfaceView`](platform::SurfaceView)
/// and its [`ViewEvent`](platform::ViewEvent)s), the standard components' boards and windows,
/// the consent prompt's parts, and the words, titles and
/// limits of the host's own windows.
pub mod platform {
    pub use lineup_webview_shell::{
        child_area_size, component_window_title, imitates_consent_prompt,
        language_from_environment, native, risk_in_words, skip_absent_a11y_bus,
        surface_window_title, tao, ArgumentLine, AskingConversation, ComponentAction,
        ComponentBoard, ComponentContent, ComponentProcess, ComponentWindow, ConsentHandle,
        ConversationName, CursorHider, DeliveryStats, Hardening, HostContainer, McpDrop, Placement,
        PromptSnapshot, ProtocolStdout, RememberNotPermitted, Shell, SnapshotElement, SurfaceView,
        SystemWallClock, ViewEvent, COMPONENT_STACK_TITLE, CONSENT_PROMPT_TITLE,
        MAX_AGENT_GRAPHEMES, MAX_ARGUMENTS_SHOWN, MAX_ARGUMENT_KEY_GRAPHEMES,
        MAX_ARGUMENT_VALUE_GRAPHEMES, MAX_HEADLINE_GRAPHEMES, MAX_REASON_GRAPHEMES,
        MAX_STANDBY_STATUS_CHARS, MIN_GUARD_DELAY, NOTICE_DURATION, NOTICE_TITLE,
        PATCH_GUARD_INTERVAL, SURFACE_TITLE_MARKER,
    };
}
/// The protocol kernel this host runs (`lineup-host-core`): the `lineup.v1` message types,
/// identities, limits, capabilities and standard components an embedder names, so that
/// `lineup-host` is the one dependency an embedding needs.
pub use lineup_host_core as protocol;
// What an embedder names beside the builder: windows and the screen, the look, the consent
// prompt, the desktop the built-ins act on (`HostBuilder::desktop`), the views' configuration
// and the platform's error.
pub use lineup_webview_shell::{
    apply_theme, desktop_high_contrast, kiosk_window, monitors, native, on_terminate,
    screen_pixels_of, tao, window_pixels, ChooseFile, ComponentOptions, ComponentSnapshot,
    ConsentAnswer, ConsentPrompt, Contrast, CursorPolicy, DangerousViewConfig, Deadline, Desktop,
    DesktopError, MonitorChoice, MonitorInfo, PendingConsent, PickedFile, ProbeStatus,
    PromptContent, PromptOptions, PromptQueue, Rect, SaveFile, SaveLocation, SavedFile, ShellError,
    StandbyColor, StandbyScreen, SystemDesktop, Theme, ViewConfig, WindowMaker, WindowPixels,
};
