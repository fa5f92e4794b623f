//! The numbers one session draws.

use crate::keys::Generation;

/// The numbers a [`Session`](crate::Session) draws, each counting up from 1 and never reused
/// within the session: generations (Surfaces and components share one key space, so a key
/// names one view of one instance), outbound message ids, component answer ids and link call
/// ids.
///
/// Invariant: each counter only grows; every number it gave is below its next one.
#[derive(Debug)]
pub(crate) struct Numbers {
    generation: u64,
    message: u64,
    answer: u64,
    link: u64,
}

impl Default for Numbers {
    fn default() -> Self {
        Self {
            generation: 1,
            message: 1,
            answer: 1,
            link: 1,
        }
    }
}

/// The counter's current value, which it then moves past.
fn draw(counter: &mut u64) -> u64 {
    let n = *counter;
    *counter += 1;
    n
}

impl Numbers {
    /// The generation of the next view of an instance (a Surface's or a component's).
    pub(crate) fn generation(&mut self) -> Generation {
        Generation(draw(&mut self.generation))
    }

    /// The number of the next outbound message id.
    pub(crate) fn message(&mut self) -> u64 {
        draw(&mut self.message)
    }

    /// The number the next component answer id will have; an answer refused before it is
    /// given does not use it ([`Numbers::use_answer`]).
    pub(crate) fn upcoming_answer(&self) -> u64 {
        self.answer
    }

    /// The answer numbered [`Numbers::upcoming_answer`] was given.
    pub(crate) fn use_answer(&mut self) {
        draw(&mut self.answer);
    }

    /// The number of the next link's call id (R-STD-11).
    pub(crate) fn link(&mut self) -> u64 {
        draw(&mut self.link)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_counter_starts_at_one_and_never_repeats_nor_moves_another() {
        let mut n = Numbers::default();
        assert_eq!(n.generation(), Generation(1));
        assert_eq!(n.generation(), Generation(2));
        assert_eq!(n.message(), 1);
        assert_eq!(n.upcoming_answer(), 1);
        assert_eq!(n.upcoming_answer(), 1);
        n.use_answer();
        assert_eq!(n.upcoming_answer(), 2);
        assert_eq!(n.link(), 1);
        assert_eq!(n.link(), 2);
        assert_eq!(n.generation(), Generation(3));
        assert_eq!(n.message(), 2);
    }
}
