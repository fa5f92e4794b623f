//! The outbound policy both agent links drain (R-ENV-4): one FIFO of protocol lines in which
//! answers are never dropped, page events give way beyond a bound and are counted per Surface,
//! and too many waiting answers engage back-pressure with hysteresis.
//!
//! [`OutboundQueue`] is sans-IO: it never writes, locks, waits or logs. [`crate::LineWriter`]
//! drains it from its writer thread onto the standard output; [`crate::link::Outbound`] drains
//! it onto the WebSocket and adds what a link that comes and goes needs (answers kept while the
//! agent is away, the inventory first on each connection).

use std::collections::{BTreeMap, VecDeque};

use lineup_host_core::{InstanceId, Message};

/// How much may wait in an [`OutboundQueue`] for a slow (or absent) reader.
///
/// | bound | default |
/// | --- | --- |
/// | `max_waiting_events`: page events waiting; one more is dropped and counted | 4096 |
/// | `answers_high_water`: answers waiting when [`OutboundQueue::backpressure`] engages | 1024 |
/// | `answers_low_water`: answers waiting below which it releases | 512 |
///
/// Answers are never dropped, so their queue has no hard cap: the high-water mark asks whoever
/// feeds the host (the stdin reader of `lineup host --stdio`, the WebSocket link's reader) to
/// stop reading input until the agent has caught up below the low-water mark (R-ENV-4). Answers
/// made without input (a user close) are bounded by the number of Surfaces and may pass the mark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct OutboundLimits {
    /// How many page events may wait to be sent; the newest beyond it is dropped.
    pub max_waiting_events: usize,
    /// How many answers may wait before back-pressure engages.
    pub answers_high_water: usize,
    /// How few answers must wait before it releases again (kept below the high-water mark).
    pub answers_low_water: usize,
}

impl Default for OutboundLimits {
    fn default() -> Self {
        Self {
            max_waiting_events: 4096,
            answers_high_water: 1024,
            answers_low_water: 512,
        }
    }
}

impl OutboundLimits {
    /// The high-water mark at least 1, the low-water mark at least 1 and at most the high.
    fn normalized(self) -> Self {
        let high = self.answers_high_water.max(1);
        Self {
            max_waiting_events: self.max_waiting_events,
            answers_high_water: high,
            answers_low_water: self.answers_low_water.clamp(1, high),
        }
    }
}

/// What an outbound line is to the policy: whether it may give way to a slow reader.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LineKind {
    /// Never dropped: every `client.error`, `app.result`, `client.inventory`, `app.list`, and the
    /// user's `ui.event` `close` (R-ENV-5, R-UI-5).
    Answer,
    /// A page's `ui.event` other than `close`: dropped when `max_waiting_events` page events are
    /// waiting, and counted per Surface.
    PageEvent(InstanceId),
    /// A `client.inventory` or `app.list` on a link that reconnects: queued and counted like an
    /// answer, but discarded by [`OutboundQueue::clear_keeping_answers`], since the next
    /// connection gets a fresh one and an older one after it would leave the agent on a stale
    /// revision (R-INV-1). Only [`LineKind::of_reconnecting`] gives it.
    Inventory,
}

impl LineKind {
    /// The kind of `message` on a stream that lasts as long as the host (the standard output).
    /// A page cannot send an event named `close` (the host drops it, R-UI-5), so a `ui.event`
    /// `close` is always the user's and is an answer. Every type is named, with no fallback: a
    /// new one gets its kind by decision, not by default.
    pub fn of(message: &Message) -> Self {
        match message {
            Message::UiEvent(env) if env.payload.event.as_str() != "close" => {
                Self::PageEvent(env.payload.instance_id.clone())
            }
            // The user's close (R-UI-5).
            Message::UiEvent(_) => Self::Answer,
            // What the agent may use: one it lost would leave it on a stale revision (R-INV-1,
            // R-INV-2, R-CAP-1).
            Message::ClientInventory(_) | Message::AppList(_) => Self::Answer,
            // Answers to the agent's envelopes (R-ENV-5, R-CAP-4).
            Message::AppResult(_) | Message::ClientError(_) => Self::Answer,
            // An MCP App view's request waits for its answer; the router caps those in flight
            // and times them out (R-MCP-6).
            Message::McpRequest(_) => Self::Answer,
            // A view's notifications are bounded by nothing but size: they give way like a
            // page's events, counted for the view's instance (R-MCP-6).
            Message::McpNotify(env) => Self::PageEvent(env.payload.instance_id.clone()),
            // Agent → client types: the host never sends them, and would not drop one if it did.
            Message::UiOpen(_)
            | Message::ComponentOpen(_)
            | Message::McpAppOpen(_)
            | Message::UiPatch(_)
            | Message::UiClose(_)
            | Message::AppCall(_)
            | Message::McpResource(_)
            | Message::McpTool(_)
            | Message::McpAnswer(_)
            | Message::McpProgress(_) => Self::Answer,
        }
    }

    /// The kind of `message` on a link that reconnects (the WebSocket): as [`LineKind::of`],
    /// but `client.inventory` and `app.list` are [`LineKind::Inventory`].
    pub fn of_reconnecting(message: &Message) -> Self {
        match message {
            Message::ClientInventory(_) | Message::AppList(_) => Self::Inventory,
            _ => Self::of(message),
        }
    }
}

/// A page event [`OutboundQueue::offer`] did not queue because `capacity` page events were
/// waiting; it was counted for its Surface's next report.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{capacity} page events are waiting; an event of surface {instance} was dropped")]
#[non_exhaustive]
pub struct Dropped {
    /// The Surface whose event was dropped.
    pub instance: InstanceId,
    /// [`OutboundLimits::max_waiting_events`].
    pub capacity: usize,
}

/// Page events of one Surface dropped and not reported yet, by why.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DropCounts {
    /// Dropped by [`OutboundQueue::offer`]: the reader was there but too many were waiting.
    pub behind: u64,
    /// Dropped while no reader was there ([`OutboundQueue::drop_away`],
    /// [`OutboundQueue::clear_keeping_answers`]).
    pub away: u64,
}

impl DropCounts {
    /// Both counts together: what the agent's `events_dropped` report says.
    pub fn total(self) -> u64 {
        self.behind.saturating_add(self.away)
    }
}

/// One Surface's dropped page events, handed over by [`OutboundQueue::take_drop_reports`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DropReport {
    /// The Surface that lost page events.
    pub instance: InstanceId,
    /// How many, and why.
    pub counts: DropCounts,
}

/// The outbound queue of one agent link: a FIFO of `(line, kind)` that keeps every answer,
/// bounds the page events, counts what it drops per Surface and says when to stop reading input.
///
/// The link sends [`OutboundQueue::front`] and removes it with [`OutboundQueue::pop_sent`] only
/// once it went out, so a line being sent still counts as waiting. Once nothing waits,
/// [`OutboundQueue::take_drop_reports`] hands over the drop counts for the agent's
/// `events_dropped` reports (R-ENV-5).
#[derive(Debug)]
pub struct OutboundQueue {
    limits: OutboundLimits,
    /// Everything kept, in the order it was offered.
    lines: VecDeque<(String, LineKind)>,
    /// Page events in `lines`.
    events_waiting: usize,
    /// Answers and inventories in `lines`.
    answers_waiting: usize,
    /// Whether back-pressure is engaged (between the high- and the low-water marks).
    throttled: bool,
    /// Page events dropped since the last report, per Surface.
    dropped: BTreeMap<InstanceId, DropCounts>,
    /// Page events dropped since the queue was made.
    dropped_total: u64,
}

impl OutboundQueue {
    /// An empty queue with `limits` (the high-water mark raised to at least 1, the low-water
    /// mark kept between 1 and the high).
    pub fn new(limits: OutboundLimits) -> Self {
        Self {
            limits: limits.normalized(),
            lines: VecDeque::new(),
            events_waiting: 0,
            answers_waiting: 0,
            throttled: false,
            dropped: BTreeMap::new(),
            dropped_total: 0,
        }
    }

    /// The bounds in force, after normalizing.
    pub fn limits(&self) -> OutboundLimits {
        self.limits
    }

    /// Queues `line` of kind `kind` at the back. An answer (or an inventory) is always queued and
    /// may engage back-pressure; a page event is dropped and counted when
    /// [`OutboundLimits::max_waiting_events`] page events are waiting.
    ///
    /// # Errors
    /// [`Dropped`] for a page event beyond the bound; nothing else fails.
    pub fn offer(&mut self, line: String, kind: LineKind) -> Result<(), Dropped> {
        match &kind {
            LineKind::PageEvent(instance) => {
                if self.events_waiting >= self.limits.max_waiting_events {
                    self.count_drop(instance.clone(), |c| &mut c.behind);
                    return Err(Dropped {
                        instance: instance.clone(),
                        capacity: self.limits.max_waiting_events,
                    });
                }
                self.events_waiting += 1;
            }
            LineKind::Answer | LineKind::Inventory => {
                self.answers_waiting += 1;
                if self.answers_waiting >= self.limits.answers_high_water {
                    self.throttled = true;
                }
            }
        }
        self.lines.push_back((line, kind));
        Ok(())
    }

    /// Counts a page event of `instance` that was dropped because no reader was there to take
    /// it (the WebSocket agent is away).
    pub fn drop_away(&mut self, instance: InstanceId) {
        self.count_drop(instance, |c| &mut c.away);
    }

    fn count_drop(&mut self, instance: InstanceId, which: fn(&mut DropCounts) -> &mut u64) {
        let counts = self.dropped.entry(instance).or_default();
        *which(counts) = which(counts).saturating_add(1);
        self.dropped_total = self.dropped_total.saturating_add(1);
    }

    /// The line to send next; it stays queued until [`OutboundQueue::pop_sent`].
    pub fn front(&self) -> Option<&str> {
        self.lines.front().map(|(line, _)| line.as_str())
    }

    /// The front line went out: removes it and returns its kind. Back-pressure releases once
    /// fewer than [`OutboundLimits::answers_low_water`] answers wait.
    pub fn pop_sent(&mut self) -> Option<LineKind> {
        let (_, kind) = self.lines.pop_front()?;
        match &kind {
            LineKind::PageEvent(_) => self.events_waiting = self.events_waiting.saturating_sub(1),
            LineKind::Answer | LineKind::Inventory => {
                self.answers_waiting = self.answers_waiting.saturating_sub(1);
                self.release_if_caught_up();
            }
        }
        Some(kind)
    }

    fn release_if_caught_up(&mut self) {
        if self.throttled && self.answers_waiting < self.limits.answers_low_water {
            self.throttled = false;
        }
    }

    /// Whether whoever feeds the host should stop reading input: engaged once
    /// [`OutboundLimits::answers_high_water`] answers wait, released once fewer than
    /// [`OutboundLimits::answers_low_water`] do (R-ENV-4).
    pub fn backpressure(&self) -> bool {
        self.throttled
    }

    /// The drop counts, one per Surface that lost page events, emptied; nothing while any line
    /// waits, so the agent hears of the loss once it has caught up.
    pub fn take_drop_reports(&mut self) -> Vec<DropReport> {
        if !self.lines.is_empty() {
            return Vec::new();
        }
        std::mem::take(&mut self.dropped)
            .into_iter()
            .map(|(instance, counts)| DropReport { instance, counts })
            .collect()
    }

    /// The drop counts not reported yet, per Surface, without taking them.
    pub fn pending_drops(&self) -> impl Iterator<Item = (&InstanceId, DropCounts)> {
        self.dropped
            .iter()
            .map(|(instance, counts)| (instance, *counts))
    }

    /// The reader went away: answers stay, in order (the one being sent too), page events are
    /// dropped and counted as dropped while away, inventories are discarded. Returns how many
    /// page events were dropped.
    pub fn clear_keeping_answers(&mut self) -> u64 {
        let mut dropped = 0;
        for (line, kind) in std::mem::take(&mut self.lines) {
            match kind {
                LineKind::Answer => self.lines.push_back((line, kind)),
                LineKind::PageEvent(instance) => {
                    self.drop_away(instance);
                    dropped += 1;
                }
                LineKind::Inventory => {}
            }
        }
        self.events_waiting = 0;
        self.answers_waiting = self.lines.len();
        self.release_if_caught_up();
        dropped
    }

    /// Discards everything waiting: the stream closed for good, nothing more will be sent.
    /// Back-pressure releases; what was discarded is not counted as dropped.
    pub fn clear(&mut self) {
        self.lines.clear();
        self.events_waiting = 0;
        self.answers_waiting = 0;
        self.throttled = false;
    }

    /// How many lines wait, the one being sent included.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// Whether nothing waits (nothing queued and nothing being sent).
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Answers (and inventories) waiting, the one being sent included.
    pub fn answers_waiting(&self) -> usize {
        self.answers_waiting
    }

    /// Page events waiting, the one being sent included.
    pub fn events_waiting(&self) -> usize {
        self.events_waiting
    }

    /// Page events dropped since the queue was made, over every Surface and cause.
    pub fn dropped_total(&self) -> u64 {
        self.dropped_total
    }
}

#[cfg(test)]
mod tests;
