//! Which Surfaces are showing, and so whether the standby screen is wanted: the rule the
//! host's standby screen ([`StandbyScreen`](lineup_webview_shell::StandbyScreen)) follows.

use std::collections::BTreeSet;

use lineup_host_core::SurfaceKey;

/// Which Surfaces are showing, and so whether the standby screen is wanted.
#[derive(Debug)]
pub(crate) struct StandbyRule<K = SurfaceKey> {
    showing: BTreeSet<K>,
}

impl<K> Default for StandbyRule<K> {
    fn default() -> Self {
        Self {
            showing: BTreeSet::new(),
        }
    }
}

/// What the standby screen should do after a change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StandbyChange {
    /// Nothing changes.
    Keep,
    /// Come up now.
    Show,
    /// Step aside once the ready Surface's page is on screen
    /// ([`StandbyWindow::hide_when_drawn`](lineup_webview_shell::StandbyWindow::hide_when_drawn)).
    HideWhenDrawn,
}

impl<K: Ord + Clone> StandbyRule<K> {
    /// A Surface's page is ready: its first frame is about to be drawn.
    pub(crate) fn ready(&mut self, key: &K) -> StandbyChange {
        let first = self.showing.is_empty();
        self.showing.insert(key.clone());
        if first {
            StandbyChange::HideWhenDrawn
        } else {
            StandbyChange::Keep
        }
    }

    /// A Surface's view is about to be destroyed (closed, replaced, or lost and being reopened).
    pub(crate) fn gone(&mut self, key: &K) -> StandbyChange {
        if self.showing.remove(key) && self.showing.is_empty() {
            StandbyChange::Show
        } else {
            StandbyChange::Keep
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_standby_screen_goes_after_the_first_ready_and_comes_back_with_the_last_close() {
        // Keys stand for Surface keys: `a1` and `a2` are two generations of instance `a`.
        let mut rule = StandbyRule::<&str>::default();
        let (a, b) = ("a1", "b1");
        assert_eq!(
            rule.gone(&a),
            StandbyChange::Keep,
            "never shown: nothing to do"
        );
        assert_eq!(rule.ready(&a), StandbyChange::HideWhenDrawn);
        assert_eq!(rule.ready(&b), StandbyChange::Keep);
        assert_eq!(rule.ready(&a), StandbyChange::Keep, "a reload's ready");
        assert_eq!(rule.gone(&a), StandbyChange::Keep, "b still shows");
        assert_eq!(rule.gone(&b), StandbyChange::Show);
        // A reopened Surface is a new generation: the old one's view goes first.
        assert_eq!(rule.ready(&a), StandbyChange::HideWhenDrawn);
        assert_eq!(rule.gone(&a), StandbyChange::Show);
        assert_eq!(rule.ready(&"a2"), StandbyChange::HideWhenDrawn);
    }
}
