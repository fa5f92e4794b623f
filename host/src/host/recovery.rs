//! Recovery on the host (R-UI-12): a Surface whose web process died or stopped answering is
//! reopened in place, or closed, as its session decides; the hang watchdog's verdicts are
//! carried out here.
//!
//! The session (host-core) decides between reopening and giving up ([`Session::surface_lost`],
//! a budget per Surface); this module carries out the decision: what a reopened Surface keeps of
//! its predecessor ([`Kept`]), and the termination of a web process the watchdog found hung.
//! Nothing here blocks: a hung web process is only ever asked things asynchronously, so the
//! event loop and every other Surface keep running.
//!
//! [`Session::surface_lost`]: lineup_host_core::Session::surface_lost

use lineup_host_core::{GoneReason, InlineBundle, SurfaceKey};

use super::views::Views;
pub(super) use crate::watchdog::Verdict;
use lineup_webview_shell::Rect;

/// What a reopened Surface keeps of the webview it replaces, so it comes back in the same place
/// showing the same thing; nothing for a Surface opened by the agent.
#[derive(Debug, Default)]
pub(super) struct Kept {
    /// Where its own window was, and its inner size (window placement).
    pub(super) window: Option<Rect>,
    /// The height its page last asked for (child views are laid out with it).
    pub(super) requested_height: Option<u32>,
    /// The bundle the embedder last reloaded it with ([`HostHandle::reload_bundle`]).
    ///
    /// [`HostHandle::reload_bundle`]: super::HostHandle::reload_bundle
    pub(super) reloaded: Option<InlineBundle>,
    /// The loss the reopen answers; should the new webview not be created, the Surface is gone
    /// for this reason.
    pub(super) lost: Option<GoneReason>,
}

impl Views {
    /// What the Surface replacing `old` keeps of its webview, for a reopen after `reason`.
    pub(super) fn kept(&self, old: &SurfaceKey, reason: GoneReason) -> Kept {
        self.live(old)
            .map(|live| Kept {
                window: live.view.window_bounds(),
                requested_height: live.requested_height,
                reloaded: live.reloaded.clone(),
                lost: Some(reason),
            })
            .unwrap_or(Kept {
                lost: Some(reason),
                ..Kept::default()
            })
    }
}
