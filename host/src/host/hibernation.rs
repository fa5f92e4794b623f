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

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use lineup_host_core::{InstanceId, SessionId, SurfaceKey};
use lineup_webview_shell::WindowPixels;

use super::live::{Awake, Kept};

/// Where a hibernated Surface is kept: instance ids are scoped to their session (R-SES-1).
fn slot(key: &SurfaceKey) -> (SessionId, InstanceId) {
    (key.session, key.instance.clone())
}

/// A hibernated Surface: what its new webview is made with when it wakes.
struct Sleeping {
    key: SurfaceKey,
    /// Where it goes and what it was reloaded with; `hidden` is set.
    kept: Kept,
    /// What it showed when it was hidden, if the screen could be read and the byte cap left it.
    picture: Option<WindowPixels>,
    /// When it was last shown, for the byte cap's order.
    last_shown: Instant,
}

/// The open Surfaces without a webview, the wakes the embedder asked for, the news the kernel
/// is to hear, and the choice of the Surface to hibernate ([`Hibernation::candidate`],
/// [`Hibernation::due`]).
///
/// Invariants: one hibernated Surface per session and instance, under its own key; a key waits
/// to wake at most once, and is queued only while it is hibernated; once a Surface hibernated,
/// the pictures kept fit in the byte cap it was given, the longest hidden losing theirs first;
/// each Surface hibernated (not restored asleep) is news for the kernel once.
#[derive(Default)]
pub(super) struct Hibernation {
    sleeping: BTreeMap<(SessionId, InstanceId), Sleeping>,
    /// Hibernated Surfaces the embedder showed, woken at the loop's next turn.
    wakes: Vec<SurfaceKey>,
    /// The Surfaces hibernated since the kernel last heard of it, so that it keeps their
    /// records (#29).
    news: Vec<SurfaceKey>,
}

impl Hibernation {
    /// Whether `key` is hibernated.
    pub(super) fn is_hibernated(&self, key: &SurfaceKey) -> bool {
        self.sleeping.get(&slot(key)).is_some_and(|s| s.key == *key)
    }

    /// The hibernated Surfaces.
    pub(super) fn keys(&self) -> impl Iterator<Item = &SurfaceKey> {
        self.sleeping.values().map(|s| &s.key)
    }

    /// Whether no Surface is hibernated.
    pub(super) fn is_empty(&self) -> bool {
        self.sleeping.is_empty()
    }

    /// Keeps `key`, whose webview went, with what it needs to come back (`kept`, its
    /// `picture`, when it was `last_shown`); the pictures kept are then bounded to
    /// `max_picture_bytes`, and the kernel is to hear of it.
    pub(super) fn keep(
        &mut self,
        key: &SurfaceKey,
        kept: Kept,
        picture: Option<WindowPixels>,
        last_shown: Instant,
        max_picture_bytes: usize,
    ) {
        let sleeping = Sleeping {
            key: key.clone(),
            kept,
            picture,
            last_shown,
        };
        self.sleeping.insert(slot(key), sleeping);
        self.bound_pictures(max_picture_bytes);
        self.news.push(key.clone());
    }

    /// Keeps restored Surface `key` (#29, after a restart) hibernated and hidden, with no
    /// picture: it wakes when the embedder shows it. The kernel knows of it already.
    pub(super) fn keep_restored(&mut self, key: &SurfaceKey) {
        let kept = Kept {
            hidden: true,
            ..Kept::default()
        };
        let sleeping = Sleeping {
            key: key.clone(),
            kept,
            picture: None,
            last_shown: Instant::now(),
        };
        self.sleeping.insert(slot(key), sleeping);
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

    /// Takes hibernated `key` out of its sleep, for its wake: what it kept, and its picture.
    pub(super) fn take(&mut self, key: &SurfaceKey) -> Option<(Kept, Option<WindowPixels>)> {
        if !self.is_hibernated(key) {
            return None;
        }
        let sleeping = self.sleeping.remove(&slot(key))?;
        Some((sleeping.kept, sleeping.picture))
    }

    /// Forgets hibernated `key`: its Surface closed.
    pub(super) fn forget(&mut self, key: &SurfaceKey) {
        if self.is_hibernated(key) {
            self.sleeping.remove(&slot(key));
        }
    }

    /// Queues hibernated `key` to wake at the loop's next turn; whether it was not queued yet
    /// (the loop is then to be woken).
    pub(super) fn queue_wake(&mut self, key: &SurfaceKey) -> bool {
        if !self.is_hibernated(key) || self.wakes.contains(key) {
            return false;
        }
        self.wakes.push(key.clone());
        true
    }

    /// The Surfaces queued to wake, in order; the queue is empty then.
    pub(super) fn take_wakes(&mut self) -> Vec<SurfaceKey> {
        std::mem::take(&mut self.wakes)
    }

    /// The Surfaces hibernated since the kernel last heard, in order; none are then.
    pub(super) fn take_news(&mut self) -> Vec<SurfaceKey> {
        std::mem::take(&mut self.news)
    }

    /// The least recently shown of `awake` that may hibernate now: hidden, not `except`, with no
    /// presses since its state was last set.
    pub(super) fn candidate<'a>(
        awake: impl Iterator<Item = Awake<'a>>,
        except: Option<&SurfaceKey>,
    ) -> Option<SurfaceKey> {
        awake
            .filter(|a| a.hidden && Some(a.key) != except)
            .filter(|a| !a.pressed)
            .min_by_key(|a| a.last_shown)
            .map(|a| a.key.clone())
    }

    /// Those of `awake` that may hibernate and have been hidden for `after` or longer at `now`.
    pub(super) fn due<'a>(
        awake: impl Iterator<Item = Awake<'a>>,
        now: Instant,
        after: Duration,
    ) -> Vec<SurfaceKey> {
        awake
            .filter(|a| a.hidden && !a.pressed)
            .filter(|a| {
                a.hidden_since
                    .is_some_and(|t| now.duration_since(t) >= after)
            })
            .map(|a| a.key.clone())
            .collect()
    }

    /// When the first of `awake` that may hibernate will have been hidden for `after`.
    pub(super) fn next_due<'a>(
        awake: impl Iterator<Item = Awake<'a>>,
        after: Duration,
    ) -> Option<Instant> {
        awake
            .filter(|a| a.hidden && !a.pressed)
            .filter_map(|a| a.hidden_since.map(|t| t + after))
            .min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::rig_tests::{Rig, Setup};

    /// The keys of Surfaces `a`, `b`, `c` and `d`, opened on the fake view port.
    fn keys() -> [SurfaceKey; 4] {
        let mut rig = Rig::new(Setup::default());
        ["a", "b", "c", "d"].map(|instance| {
            rig.open(instance);
            rig.key(instance)
        })
    }

    /// A Surface with a webview: hidden or not, pressed or not, last shown `shown` seconds
    /// and hidden `hidden_for` seconds before `now`.
    fn awake(
        key: &SurfaceKey,
        now: Instant,
        shown: u64,
        hidden_for: Option<u64>,
        pressed: bool,
    ) -> Awake<'_> {
        Awake {
            key,
            hidden: hidden_for.is_some(),
            hidden_since: hidden_for.map(|s| now - Duration::from_secs(s)),
            last_shown: now - Duration::from_secs(shown),
            pressed,
        }
    }

    #[test]
    fn the_least_recently_shown_hidden_unpressed_surface_is_chosen_never_the_one_excepted() {
        let now = Instant::now() + Duration::from_secs(100);
        let [a, b, c, _] = keys();
        // (a: shown, hidden, pressed), (b: …), (c: …), the one excepted, the choice
        let table = [
            (
                (30, true, false),
                (20, true, false),
                (10, true, false),
                None,
                Some("a"),
            ),
            (
                (30, true, true),
                (20, true, false),
                (10, true, false),
                None,
                Some("b"),
            ),
            (
                (30, false, false),
                (20, true, false),
                (10, true, false),
                None,
                Some("b"),
            ),
            (
                (30, true, false),
                (20, true, false),
                (10, true, false),
                Some(&a),
                Some("b"),
            ),
            (
                (30, false, false),
                (20, false, false),
                (10, true, true),
                None,
                None,
            ),
            (
                (30, true, false),
                (20, false, false),
                (10, false, false),
                Some(&a),
                None,
            ),
        ];
        for (sa, sb, sc, except, chosen) in table {
            let views = [(&a, sa), (&b, sb), (&c, sc)].map(|(k, (shown, hidden, pressed))| {
                awake(k, now, shown, hidden.then_some(shown), pressed)
            });
            let got = Hibernation::candidate(views.into_iter(), except);
            let got = got.as_ref().map(|k| k.instance.as_str());
            assert_eq!(got, chosen, "{sa:?} {sb:?} {sc:?} except {except:?}");
        }
    }

    #[test]
    fn a_surface_is_due_once_hidden_for_the_delay_and_the_next_due_is_the_earliest_left() {
        let now = Instant::now() + Duration::from_secs(100);
        let after = Duration::from_secs(10);
        let [a, b, c, d] = keys();
        let views = [
            awake(&a, now, 50, Some(10), false),
            awake(&b, now, 50, Some(4), false),
            awake(&c, now, 50, Some(30), true),
            awake(&d, now, 50, None, false),
        ];
        let due = Hibernation::due(views.into_iter(), now, after);
        assert_eq!(
            due,
            std::slice::from_ref(&a),
            "hidden long enough and not pressed"
        );
        let left = [views[1], views[2], views[3]];
        let next = Hibernation::next_due(left.into_iter(), after);
        assert_eq!(next, Some(now + Duration::from_secs(6)), "b, in 6 s");
    }

    /// A picture of `bytes` bytes.
    fn picture(bytes: usize) -> Option<WindowPixels> {
        let width = u32::try_from(bytes / 3).unwrap();
        WindowPixels::new(width, 1, vec![0; bytes])
    }

    #[test]
    fn pictures_past_the_byte_cap_are_dropped_the_longest_hidden_first() {
        let now = Instant::now() + Duration::from_secs(100);
        let mut sleep = Hibernation::default();
        let [a, b, c, _] = keys();
        for (k, shown) in [(&a, 30), (&b, 20), (&c, 10)] {
            let last_shown = now - Duration::from_secs(shown);
            sleep.keep(k, Kept::default(), picture(48), last_shown, 100);
        }
        assert!(picture(48).is_some(), "a picture of 48 bytes");
        let kept: Vec<bool> = [&a, &b, &c]
            .map(|k| sleep.take(k).is_some_and(|(_, p)| p.is_some()))
            .into();
        assert_eq!(kept, [false, true, true], "a's is dropped: 144 bytes > 100");
        assert_eq!(sleep.take_news(), [a, b, c], "each is news once");
        assert!(sleep.take_news().is_empty());
    }

    #[test]
    fn a_hibernated_surface_is_queued_to_wake_once_and_a_woken_or_closed_one_is_not() {
        let mut sleep = Hibernation::default();
        let [a, b, _, _] = keys();
        sleep.keep_restored(&a);
        sleep.keep_restored(&b);
        assert!(sleep.take_news().is_empty(), "the kernel restored them");
        assert!(sleep.queue_wake(&a));
        assert!(!sleep.queue_wake(&a), "queued already");
        assert_eq!(sleep.take_wakes(), std::slice::from_ref(&a));
        assert!(sleep.take(&a).is_some_and(|(kept, _)| kept.hidden));
        assert!(!sleep.queue_wake(&a), "awake");
        sleep.forget(&b);
        assert!(!sleep.queue_wake(&b), "closed");
        assert!(sleep.is_empty());
    }
}
