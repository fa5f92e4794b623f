//! The effects waiting for the one interpreter.

use std::collections::VecDeque;

use lineup_host_core::{Effect, SessionId};

/// One effect to carry out: the session it came from (a capability answer goes back there),
/// the effect, and the inbound line it answers, if any.
pub(super) type Job = (SessionId, Effect, Option<u64>);

/// The effects waiting for [`Engine::interpret`](super::engine::Engine::interpret), in order,
/// and whether a drain runs further up the stack.
///
/// Invariants: while a drain runs ([`Work::start`] returned `true` and [`Work::finish`] was
/// not called yet) nothing else starts one, so an effect that arises while another is carried
/// out waits here instead of recursing; a batch pushed in front keeps its own order.
#[derive(Default)]
pub(super) struct Work {
    queue: VecDeque<Job>,
    draining: bool,
}

impl Work {
    /// Puts `effects` of `session` before everything waiting, in their order: they arose while
    /// an effect was carried out, and go first, as a nested call would take them.
    pub(super) fn push_front(
        &mut self,
        session: SessionId,
        effects: Vec<Effect>,
        line: Option<u64>,
    ) {
        for effect in effects.into_iter().rev() {
            self.queue.push_front((session, effect, line));
        }
    }

    /// Starts a drain; `false` when one already runs (the caller then leaves the queue to it).
    pub(super) fn start(&mut self) -> bool {
        !std::mem::replace(&mut self.draining, true)
    }

    /// The next effect of the running drain.
    pub(super) fn next(&mut self) -> Option<Job> {
        self.queue.pop_front()
    }

    /// Ends the running drain.
    pub(super) fn finish(&mut self) {
        self.draining = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An effect numbered `n` (by the line it answers).
    fn job(n: u64) -> Job {
        let refused = lineup_host_core::decode(b"{", &lineup_host_core::Limits::default())
            .expect_err("not JSON");
        (SessionId::STANDALONE, Effect::Rejected(refused), Some(n))
    }

    fn order(work: &mut Work) -> Vec<u64> {
        std::iter::from_fn(|| work.next())
            .filter_map(|(_, _, line)| line)
            .collect()
    }

    fn batch(work: &mut Work, numbers: [u64; 2]) {
        for n in numbers.into_iter().rev() {
            let (session, effect, line) = job(n);
            work.push_front(session, vec![effect], line);
        }
    }

    #[test]
    fn a_nested_batch_goes_first_in_its_own_order_and_one_drain_runs_at_a_time() {
        let mut work = Work::default();
        batch(&mut work, [3, 4]);
        assert!(work.start());
        assert!(!work.start(), "a second drain started while one runs");
        batch(&mut work, [1, 2]);
        assert_eq!(order(&mut work), [1, 2, 3, 4]);
        work.finish();
        assert!(work.start(), "no drain starts after one finished");
    }
}
