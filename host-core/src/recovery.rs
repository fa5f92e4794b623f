//! Recovery of a Surface whose web process died or stopped answering (R-UI-12): reopen it with
//! its last state, or give up and close it, by a per-Surface budget over a sliding window.
//!
//! The decision is sans-IO: the caller passes the time of the loss, read from its
//! [`Clock`](crate::Clock).

use std::collections::VecDeque;
use std::time::Duration;

use crate::effect::GoneReason;
use crate::limits::Limits;

/// What becomes of a Surface whose web process was lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Reopen it in place under a new generation, with its last state; nothing goes upstream.
    Reopen,
    /// Close it; the agent gets `ui.event` `close` with the reason (R-UI-12).
    GiveUp,
}

/// The reopens of one Surface within the last `Limits::reopen_window`.
///
/// A Surface that a `ui.open` replaced starts with a new budget: it is another app.
#[derive(Debug, Default, Clone)]
pub(crate) struct ReopenBudget {
    /// When the Surface was reopened, oldest first, within the window.
    reopens: VecDeque<Duration>,
}

impl ReopenBudget {
    /// Decides about a loss for `reason` at `now`, and counts the reopen when it is one.
    ///
    /// Only a crash (a web process that died: crashed, killed by the system or a signal) and a
    /// hang (ended by the host's watchdog) are reopened; a Surface that passed its memory
    /// ceiling would only fill it again, and a reload loop is the page's own doing. Within the
    /// window at most `Limits::max_reopens_per_window` reopens happen; the loss after them gives
    /// up.
    pub(crate) fn decide(
        &mut self,
        reason: GoneReason,
        now: Duration,
        limits: &Limits,
    ) -> Decision {
        if !reopens(reason) {
            return Decision::GiveUp;
        }
        while self
            .reopens
            .front()
            .is_some_and(|t| now.saturating_sub(*t) >= limits.reopen_window)
        {
            self.reopens.pop_front();
        }
        if self.reopens.len() >= limits.max_reopens_per_window {
            return Decision::GiveUp;
        }
        self.reopens.push_back(now);
        Decision::Reopen
    }
}

/// Whether a Surface lost for `reason` may be reopened at all.
fn reopens(reason: GoneReason) -> bool {
    match reason {
        GoneReason::Crashed | GoneReason::Unresponsive => true,
        // Memory, reload loops, and an app center change: reopening would only repeat them; an
        // agent gone for good is nobody's to reopen for.
        GoneReason::Memory
        | GoneReason::ReloadLoop
        | GoneReason::AppDisabled
        | GoneReason::AppRemoved
        | GoneReason::AppUpgraded
        | GoneReason::AgentGone => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: u64) -> Duration {
        Duration::from_secs(seconds)
    }

    fn limits() -> Limits {
        Limits::default()
    }

    #[test]
    fn r_ui_12_three_reopens_per_sixty_seconds_then_it_gives_up() {
        let mut budget = ReopenBudget::default();
        let l = limits();
        assert_eq!((l.max_reopens_per_window, l.reopen_window), (3, at(60)));
        assert_eq!(
            budget.decide(GoneReason::Crashed, at(0), &l),
            Decision::Reopen
        );
        assert_eq!(
            budget.decide(GoneReason::Crashed, at(1), &l),
            Decision::Reopen
        );
        assert_eq!(
            budget.decide(GoneReason::Unresponsive, at(2), &l),
            Decision::Reopen
        );
        assert_eq!(
            budget.decide(GoneReason::Crashed, at(3), &l),
            Decision::GiveUp
        );
        // Giving up counts nothing: the next loss within the window gives up too.
        assert_eq!(
            budget.decide(GoneReason::Crashed, at(59), &l),
            Decision::GiveUp
        );
    }

    #[test]
    fn r_ui_12_the_window_slides_one_reopen_at_a_time() {
        let mut budget = ReopenBudget::default();
        let l = limits();
        for t in [0, 10, 20] {
            assert_eq!(
                budget.decide(GoneReason::Crashed, at(t), &l),
                Decision::Reopen
            );
        }
        // One side of the bound: the first reopen is still inside the window.
        let just_inside = at(60) - Duration::from_millis(1);
        assert_eq!(
            budget.decide(GoneReason::Crashed, just_inside, &l),
            Decision::GiveUp
        );
        // The other: 60 s after the first reopen it has left the window, and one more fits.
        assert_eq!(
            budget.decide(GoneReason::Crashed, at(60), &l),
            Decision::Reopen
        );
        assert_eq!(
            budget.decide(GoneReason::Crashed, at(61), &l),
            Decision::GiveUp
        );
        // 10 s later the second has left too.
        assert_eq!(
            budget.decide(GoneReason::Crashed, at(70), &l),
            Decision::Reopen
        );
    }

    #[test]
    fn r_ui_12_memory_and_reload_loops_are_never_reopened() {
        let mut budget = ReopenBudget::default();
        let l = limits();
        assert_eq!(
            budget.decide(GoneReason::Memory, at(0), &l),
            Decision::GiveUp
        );
        assert_eq!(
            budget.decide(GoneReason::ReloadLoop, at(0), &l),
            Decision::GiveUp
        );
        // Neither used the budget.
        for t in 1..=3 {
            assert_eq!(
                budget.decide(GoneReason::Crashed, at(t), &l),
                Decision::Reopen
            );
        }
    }

    #[test]
    fn r_ui_12_agent_gone_is_never_reopened_and_spends_no_budget() {
        let mut budget = ReopenBudget::default();
        let l = limits();
        assert_eq!(
            budget.decide(GoneReason::AgentGone, at(0), &l),
            Decision::GiveUp
        );
        for t in 1..=3 {
            assert_eq!(
                budget.decide(GoneReason::Crashed, at(t), &l),
                Decision::Reopen
            );
        }
    }

    #[test]
    fn r_ui_12_gone_reasons_are_the_specs_snake_case_words() {
        let all = [
            (GoneReason::Crashed, "crashed"),
            (GoneReason::Unresponsive, "unresponsive"),
            (GoneReason::Memory, "memory"),
            (GoneReason::ReloadLoop, "reload_loop"),
            (GoneReason::AppDisabled, "app_disabled"),
            (GoneReason::AppRemoved, "app_removed"),
            (GoneReason::AppUpgraded, "app_upgraded"),
            (GoneReason::AgentGone, "agent_gone"),
        ];
        for (reason, word) in all {
            assert_eq!(reason.as_str(), word);
            assert_eq!(reason.to_string(), word);
        }
    }

    #[test]
    fn a_budget_of_zero_never_reopens() {
        let mut budget = ReopenBudget::default();
        let mut l = limits();
        l.max_reopens_per_window = 0;
        assert_eq!(
            budget.decide(GoneReason::Crashed, at(0), &l),
            Decision::GiveUp
        );
        assert_eq!(
            budget.decide(GoneReason::Unresponsive, at(0), &l),
            Decision::GiveUp
        );
    }
}
