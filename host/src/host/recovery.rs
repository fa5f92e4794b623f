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

use std::time::Instant;

use lineup_host_core::{CloseReason, GoneReason, InlineBundle, PageInput, SurfaceKey, SurfaceOpen};
use lineup_webview_shell::tao::event_loop::EventLoopWindowTarget;

use super::{slot, Host, HostEvent};
use crate::watchdog::Verdict;
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

impl Host {
    /// The web process of `key` died (`Crashed`) or was terminated as hung (`Unresponsive`): its
    /// session reopens the Surface within its budget, or closes it and tells the agent; with
    /// [`HostBuilder::reopen_lost_surfaces`](super::HostBuilder::reopen_lost_surfaces) off it is
    /// closed at once. Nothing for a stale key.
    pub(super) fn lost(
        &mut self,
        key: SurfaceKey,
        reason: GoneReason,
        target: &EventLoopWindowTarget<HostEvent>,
    ) {
        let reopen = self.reopen;
        let input = if reopen {
            PageInput::Lost(reason)
        } else {
            PageInput::Gone(reason)
        };
        let effects = self.sessions.handle_page(&key, input);
        self.apply(effects, None, target);
    }

    /// Carries out [`Effect::Reopen`](lineup_host_core::Effect::Reopen): the webview of `old`
    /// goes, and `open` (same instance, new generation) is created where it was, with the
    /// embedder's reloaded bundle if there was one. Its state follows its page's `ready`.
    pub(super) fn reopen(
        &mut self,
        old: SurfaceKey,
        mut open: SurfaceOpen,
        reason: GoneReason,
        target: &EventLoopWindowTarget<HostEvent>,
    ) {
        let kept = self
            .views
            .get(&slot(&old))
            .filter(|live| live.key == old)
            .map(|live| Kept {
                window: live.view.window_bounds(),
                requested_height: live.requested_height,
                reloaded: live.reloaded.clone(),
                lost: Some(reason),
            })
            .unwrap_or(Kept {
                lost: Some(reason),
                ..Kept::default()
            });
        if let Some(bundle) = &kept.reloaded {
            open.app.bundle = bundle.clone();
        }
        tracing::warn!(
            "surface {old}: web process lost ({reason}); reopened as {} (R-UI-12)",
            open.key
        );
        self.destroy(&old);
        self.delegate
            .notify_closed(&old, &CloseReason::Reopened(reason));
        self.create(open, kept, target);
    }

    /// Runs the hang watchdog over every open view: pings those that are due, terminates the
    /// web process of those past their deadline (the crash path follows when the engine reports
    /// it, as `unresponsive`), and ends a Surface whose termination the engine never reported.
    /// Returns when to check again.
    pub(super) fn poll_watchdog(
        &mut self,
        target: &EventLoopWindowTarget<HostEvent>,
    ) -> Option<Instant> {
        let views = &self.views;
        let (verdicts, next) = self.watchdog.check(|key| {
            views
                .get(&slot(key))
                .filter(|live| live.key == *key)
                .map(|live| &live.view)
        });
        for (key, verdict) in verdicts {
            match verdict {
                Verdict::Terminate => {
                    tracing::warn!(
                        "surface {key}: its page stopped answering; its web process is terminated (R-UI-12)"
                    );
                    self.delegate.notify_unresponsive(&key);
                    if let Some(view) = self.view(&key) {
                        view.terminate_web_process();
                    }
                }
                Verdict::TerminationLost => {
                    tracing::warn!(
                        "surface {key}: the engine did not report the termination of its web process; ended anyway"
                    );
                    self.lost(key, GoneReason::Unresponsive, target);
                }
                Verdict::Wait | Verdict::Ping => {}
            }
        }
        next
    }
}
