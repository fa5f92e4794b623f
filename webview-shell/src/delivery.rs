//! State delivery to a page, one at a time: while a delivery is in flight a newer state waits,
//! replacing any older one that waited, so an agent patching faster than the page renders costs
//! one pending script per Surface and `onState` always ends on the latest state (R-UI-3).

use std::fmt;

use lineup_host_core::Fingerprint;

/// One Surface's deliveries: what is in flight and what waits. `Debug` shows the waiting script,
/// which carries the agent's state, as a [`Fingerprint`] (logs reach journald).
#[derive(Default)]
pub(crate) struct DeliveryQueue {
    in_flight: bool,
    pending: Option<String>,
    stats: DeliveryStats,
}

impl fmt::Debug for DeliveryQueue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeliveryQueue")
            .field("in_flight", &self.in_flight)
            .field("pending", &self.pending.as_ref().map(Fingerprint::of))
            .field("stats", &self.stats)
            .finish()
    }
}

/// How a Surface's state deliveries went.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DeliveryStats {
    /// States handed to the page.
    pub delivered: u64,
    /// States replaced by a newer one before the page could take them.
    pub coalesced: u64,
    /// The most states that ever waited at once behind the one in flight (at most 1).
    pub high_water: u64,
}

impl DeliveryQueue {
    /// A new state's script: returned when it is to be evaluated now, kept (replacing any older
    /// one that waited) while a delivery is in flight.
    pub(crate) fn offer(&mut self, script: String) -> Option<String> {
        if self.in_flight {
            if self.pending.replace(script).is_some() {
                self.stats.coalesced += 1;
            }
            self.stats.high_water = self.stats.high_water.max(1);
            return None;
        }
        self.in_flight = true;
        self.stats.delivered += 1;
        Some(script)
    }

    /// The delivery in flight finished (the page ran it, or could not): the next script to
    /// evaluate, if one waited.
    pub(crate) fn finished(&mut self) -> Option<String> {
        let next = self.pending.take();
        self.in_flight = next.is_some();
        if next.is_some() {
            self.stats.delivered += 1;
        }
        next
    }

    /// The counters so far.
    pub(crate) fn stats(&self) -> DeliveryStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r_ui_3_a_newer_state_replaces_the_waiting_one_and_the_latest_always_goes() {
        let mut q = DeliveryQueue::default();
        assert_eq!(q.offer("s1".into()).as_deref(), Some("s1"));
        assert_eq!(q.offer("s2".into()), None);
        assert_eq!(q.offer("s3".into()), None);
        assert_eq!(q.offer("s4".into()), None);
        assert_eq!(q.finished().as_deref(), Some("s4"));
        assert_eq!(q.finished(), None);
        // Idle again: the next state goes at once.
        assert_eq!(q.offer("s5".into()).as_deref(), Some("s5"));
        assert_eq!(q.finished(), None);
        assert_eq!(
            q.stats(),
            DeliveryStats {
                delivered: 3,
                coalesced: 2,
                high_water: 1
            }
        );
    }
}
