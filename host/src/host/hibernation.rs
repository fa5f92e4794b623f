//! Many Surfaces at the memory of the few on screen (#29): a hidden child view may hibernate
//! (its webview and web process released; its key, state, size and the picture of what it last
//! showed kept) and is woken when the embedder shows it again, with the picture standing in
//! until the new page's `ready`. To the agent nothing changes: the Surface stays open, patches
//! sent meanwhile are the kernel's latest state, delivered after the new page's `ready`
//! (R-UI-3), and no reopen budget or reload-loop bound counts the wake. The page learns of it
//! only as a new document that starts visible (`visibilitychange`, R-UI-6).
//!
//! Rules kept here: only hidden child views hibernate, never one with presses since its
//! state was last set (it may hold typed text the agent never saw); past
//! `Limits::max_live_surfaces` live views the least recently shown hidden one hibernates first;
//! the pictures of hibernated Surfaces are bounded in bytes host-wide (the oldest is dropped,
//! and that Surface wakes without one); nothing is written to disk.

use lineup_host_core::{Effect, GoneReason, InstanceId, PageInput, SessionId, SurfaceKey};
use lineup_webview_shell::WindowMaker;
use lineup_webview_shell::{Placeholder, Rect, WindowPixels};

use super::engine::Engine;
use super::handle::{HostEvent, Inner};
use super::views::{Kept, Sleeping, Views};

fn slot(key: &SurfaceKey) -> (SessionId, InstanceId) {
    (key.session, key.instance.clone())
}

impl Views {
    /// How many Surfaces have a webview now.
    pub(super) fn live_count(&self) -> usize {
        self.live_values().count()
    }

    /// Whether `key` is hibernated.
    pub(super) fn is_hibernated(&self, key: &SurfaceKey) -> bool {
        self.sleeping.get(&slot(key)).is_some_and(|s| s.key == *key)
    }

    /// The state of `key` was just set (open or patch): presses until now are the agent's to
    /// have seen.
    pub(super) fn state_set(&mut self, key: &SurfaceKey) {
        if let Some(live) = self.live_mut(key) {
            live.presses_seen = live.view.presses();
        }
    }

    /// The least recently shown Surface that may hibernate now: a hidden child view, not
    /// `except`, with no presses since its state was last set.
    pub(super) fn hibernation_candidate(&self, except: Option<&SurfaceKey>) -> Option<SurfaceKey> {
        if !self.children() {
            return None;
        }
        self.live_values()
            .filter(|l| l.hidden && Some(&l.key) != except)
            .filter(|l| l.view.presses() == l.presses_seen)
            .min_by_key(|l| l.last_shown)
            .map(|l| l.key.clone())
    }

    /// Hibernates `key`: its webview and web process go, what it needs to come back stays.
    /// Returns whether it did (it must be a live, hidden child view).
    pub(super) fn hibernate(&mut self, key: &SurfaceKey, max_picture_bytes: usize) -> bool {
        let child = self.children();
        if !child || !self.live(key).is_some_and(|l| l.hidden) {
            return false;
        }
        let Some(live) = self.take_live(key) else {
            return false;
        };
        let kept = Kept {
            window: None,
            requested_height: live.requested_height,
            reloaded: live.reloaded.clone(),
            lost: None,
            hidden: true,
        };
        tracing::info!("surface {key}: hidden since it was last shown; hibernated (#29)");
        self.sleeping.insert(
            slot(key),
            Sleeping {
                key: key.clone(),
                kept,
                picture: live.picture.clone(),
                last_shown: live.last_shown,
            },
        );
        live.view.close();
        self.watchdog.forget(key);
        self.bound_pictures(max_picture_bytes);
        self.newly_hibernated.push(key.clone());
        true
    }

    /// Registers restored Surface `key` (#29, after a restart) as hibernated and hidden, with
    /// no picture: it wakes when the embedder shows it.
    pub(super) fn sleep_restored(&mut self, key: &SurfaceKey) {
        let kept = Kept {
            hidden: true,
            ..Kept::default()
        };
        self.sleeping.insert(
            slot(key),
            Sleeping {
                key: key.clone(),
                kept,
                picture: None,
                last_shown: std::time::Instant::now(),
            },
        );
    }

    /// Drops the pictures of the longest-hidden hibernated Surfaces until those kept fit in
    /// `max` bytes.
    fn bound_pictures(&mut self, max: usize) {
        loop {
            let total: usize = self
                .sleeping
                .values()
                .filter_map(|s| s.picture.as_ref().map(WindowPixels::byte_len))
                .sum();
            if total <= max {
                return;
            }
            let oldest = self
                .sleeping
                .values_mut()
                .filter(|s| s.picture.is_some())
                .min_by_key(|s| s.last_shown);
            match oldest {
                Some(sleeping) => sleeping.picture = None,
                None => return,
            }
        }
    }

    /// Hibernates the hidden child views hidden for `after` or longer (with no presses since
    /// their state was set); returns when the next one is due.
    pub(super) fn poll_hibernation(
        &mut self,
        after: Option<std::time::Duration>,
        max_picture_bytes: usize,
    ) -> Option<std::time::Instant> {
        let after = after?;
        if !self.children() {
            return None;
        }
        let now = std::time::Instant::now();
        let due: Vec<SurfaceKey> = self
            .live_values()
            .filter(|l| l.hidden && l.view.presses() == l.presses_seen)
            .filter(|l| {
                l.hidden_since
                    .is_some_and(|t| now.duration_since(t) >= after)
            })
            .map(|l| l.key.clone())
            .collect();
        for key in due {
            self.hibernate(&key, max_picture_bytes);
        }
        self.live_values()
            .filter(|l| l.hidden && l.view.presses() == l.presses_seen)
            .filter_map(|l| l.hidden_since.map(|t| t + after))
            .min()
    }

    /// Takes hibernated `key` out of its sleep, for its wake.
    pub(super) fn take_sleeping(&mut self, key: &SurfaceKey) -> Option<Sleeping> {
        if !self.is_hibernated(key) {
            return None;
        }
        self.sleeping.remove(&slot(key))
    }
}

impl Engine {
    /// Tells the kernel of the Surfaces hibernated since it last heard, so that a vouched
    /// session keeps their records (#29). The record is written now; any other effect of it
    /// waits in the engine's queue for the one interpreter's next turn ([`Engine::apply`]).
    pub(super) fn note_hibernated(&mut self) {
        for key in std::mem::take(&mut self.views.newly_hibernated) {
            let Some(effects) = self.sessions.surface_hibernated(&key) else {
                continue;
            };
            for effect in effects.effects {
                let rest = match effect {
                    Effect::Component(effect) => self.records.write(effect).map(Effect::Component),
                    other => Some(other),
                };
                if let Some(rest) = rest {
                    self.work.push_back((effects.session, rest, None));
                }
            }
        }
    }

    /// Restored Surface `open` (#29, after a restart): hibernated until the embedder shows it,
    /// where Surfaces are child views; opened at once where each has its own window.
    pub(super) fn open_hibernated(
        &mut self,
        open: lineup_host_core::SurfaceOpen,
        target: &dyn WindowMaker,
    ) {
        if !self.views.children() {
            return self.open(open, target);
        }
        tracing::info!(
            "surface {}: restored from its record, hibernated until shown (#29)",
            open.key
        );
        self.views.sleep_restored(&open.key);
        self.upstream.delegate().notify_opened(&open.key, &open.app);
    }

    /// Makes room for one more live view under `Limits::max_live_surfaces` by hibernating the
    /// least recently shown hidden Surfaces (never `except`); whether there is room now.
    pub(super) fn make_room(&mut self, except: Option<&SurfaceKey>) -> bool {
        let limits = self.sessions.limits();
        let (max_live, max_bytes) = (limits.max_live_surfaces, limits.max_hibernated_bytes);
        while self.views.live_count() >= max_live {
            match self.views.hibernation_candidate(except) {
                Some(key) => {
                    self.views.hibernate(&key, max_bytes);
                }
                None => {
                    self.note_hibernated();
                    return false;
                }
            }
        }
        self.note_hibernated();
        true
    }

    /// [`Host::set_surface_visible`](crate::Host::set_surface_visible): a hibernated Surface
    /// shown again wakes at the loop's next turn, its picture standing in (#29); a live one is
    /// hidden or shown and the views laid out again. Returns whether `key` is open.
    pub(super) fn set_surface_visible(&mut self, key: &SurfaceKey, visible: bool) -> bool {
        if self.views.is_hibernated(key) {
            if visible && !self.views.wakes.contains(key) {
                self.views.wakes.push(key.clone());
                let _ = self.proxy.send_event(HostEvent(Inner::Wake));
            }
            return true;
        }
        let known = self.views.set_visible(key, visible);
        if known {
            self.relayout();
        }
        known
    }

    /// Wakes the hibernated Surfaces the embedder showed since the last turn.
    pub(super) fn wake_pending(&mut self, target: &dyn WindowMaker) {
        for key in std::mem::take(&mut self.views.wakes) {
            self.wake(&key, target);
        }
    }

    /// Gives hibernated `key` a new webview where it was, shown, with its picture over it
    /// until its page says `ready`; the kernel delivers its latest state after that `ready`.
    /// A wake that cannot make a view closes the Surface `crashed` (R-UI-12).
    fn wake(&mut self, key: &SurfaceKey, target: &dyn WindowMaker) {
        let Some(sleeping) = self.views.take_sleeping(key) else {
            return;
        };
        if !self.make_room(Some(key)) {
            // The user asked to see it: it shows, and the cap is back once one is hidden.
            tracing::info!(
                "surface {key}: shown past max_live_surfaces; nothing hidden can hibernate"
            );
        }
        let Some((open, woke)) = self.sessions.wake_surface(key) else {
            return;
        };
        // Its record, if the store keeps one, is forgotten.
        self.apply(woke, None, target);
        let mut kept = sleeping.kept;
        kept.hidden = false;
        let limits = self.sessions.limits().clone();
        if let Err(e) = self
            .views
            .create(&open, &kept, &limits, &self.proxy, target)
        {
            tracing::warn!("surface {key}: cannot be woken: {e}");
            self.page_input(key, PageInput::Gone(GoneReason::Crashed), target);
            return;
        }
        tracing::info!("surface {key}: shown again; woken (#29)");
        let placeholder = match (&sleeping.picture, self.views.parent()) {
            (Some(picture), Some(parent)) => Placeholder::new(parent, picture, Rect::default())
                .map_err(|e| tracing::warn!("surface {key}: no picture while it wakes: {e}"))
                .ok(),
            _ => None,
        };
        if let Some(live) = self.views.live_mut(key) {
            live.placeholder = placeholder;
        }
        self.views.relayout(self.upstream.delegate());
    }
}
