//! The outbound side of the agent link: what the host produces, queued for the WebSocket in
//! order, one envelope per text frame, and what happens to it while the agent is away.
//!
//! [`Outbound::send`] is the host's outbound callback: it runs on the event-loop thread and
//! never blocks. The link's writer takes frames with [`Outbound::next`] and removes each with
//! [`Outbound::sent`] only once the WebSocket took it. The bounds, the counts, the back-pressure
//! and the drop reports are the [`OutboundQueue`]'s that `--stdio` drains too; this module adds
//! the phases below and the connection's greeting frames, sent ahead of that queue.
//!
//! | phase | answers (`client.error`, `app.result`, the user's or `agent_gone` `close`, …) | page events (`ui.event` but `close`) | `client.inventory` / `app.list` |
//! | --- | --- | --- | --- |
//! | away | kept, in order, never dropped | dropped and counted per Surface | discarded: the next connection gets a fresh one |
//! | greeting (connected, inventory asked for) | kept | dropped and counted | the first inventory and its `app.list` go first, then the kept answers |
//! | live | queued | queued; beyond `max_waiting_events` waiting, dropped and counted | queued |
//!
//! So each connection's first frame is `client.inventory` (when the host has one, that is with
//! App Capabilities on; without, the kept answers come first), then `app.list`, then the answers
//! kept while away, then live traffic, even when something is produced between the connect and
//! the inventory (R-INV-1). A frame being written when the connection failed is kept (an answer)
//! and sent again on the next connection: the agent may see an answer twice, never lose one.
//! Dropped page events are reported, once the queue is empty on a live connection, through
//! `HostHandle::report_events_dropped`, so the session builds the `client.error`
//! `events_dropped` (R-ENV-5), as for `--stdio`.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::outbound::{LineKind, OutboundLimits, OutboundQueue};
use lineup_host::HostHandle;
use lineup_host_core::{InstanceId, Message};
use tokio::sync::Notify;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Away,
    Greeting,
    /// The greeting's inventory is queued; its `app.list` comes next.
    AwaitList,
    Live,
}

struct State {
    phase: Phase,
    /// This connection's inventory and its `app.list`, sent before `queue`.
    greeting_frames: VecDeque<String>,
    /// The outbound policy: answers kept while away or greeting, then live frames, in order.
    queue: OutboundQueue,
    /// Page events dropped since the connection was lost (for the log).
    dropped_away: u64,
    reporter: Option<HostHandle>,
    /// The number of the latest greeting.
    greeting: u64,
}

impl State {
    /// The next frame to send on a live connection: the greeting's, then the queue's.
    fn front(&self) -> Option<&str> {
        match self.greeting_frames.front() {
            Some(line) => Some(line),
            None => self.queue.front(),
        }
    }

    /// Counts a page event made while no connection takes it.
    fn drop_away(&mut self, instance: InstanceId) {
        self.queue.drop_away(instance);
        self.dropped_away += 1;
    }

    /// The greeting is over: the kept answers, already queued, follow the greeting's frames.
    fn go_live(&mut self) {
        if self.dropped_away > 0 {
            tracing::warn!(
                "{} page events were dropped while the agent was away; it gets one events_dropped report per surface",
                self.dropped_away
            );
            self.dropped_away = 0;
        }
        self.phase = Phase::Live;
    }

    /// Queues a frame behind those waiting; a page event beyond the bound is counted by the
    /// queue and reported once it has drained.
    fn enqueue(&mut self, line: String, kind: LineKind) {
        let _ = self.queue.offer(line, kind);
    }
}

struct Shared {
    state: Mutex<State>,
    /// Wakes the writer: a frame may be ready.
    ready: Notify,
}

/// The outbound queue of the agent link, an [`OutboundQueue`] with the link's phases on top;
/// cloning shares it.
#[derive(Clone)]
pub struct Outbound {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Outbound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.lock();
        f.debug_struct("Outbound")
            .field("phase", &s.phase)
            .field("greeting_frames", &s.greeting_frames.len())
            .field("queued", &s.queue.len())
            .finish_non_exhaustive()
    }
}

impl Outbound {
    /// An empty queue, away (nothing is connected yet).
    pub fn new(limits: OutboundLimits) -> Self {
        Self {
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    phase: Phase::Away,
                    greeting_frames: VecDeque::new(),
                    queue: OutboundQueue::new(limits),
                    dropped_away: 0,
                    reporter: None,
                    greeting: 0,
                }),
                ready: Notify::new(),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing panics while holding the lock; a poisoned one still holds consistent counts.
        self.shared.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Where dropped page events are reported (the host this queue serves).
    pub fn report_drops_to(&self, handle: HostHandle) {
        self.lock().reporter = Some(handle);
    }

    /// Takes one envelope from the host (its outbound callback); never blocks.
    pub fn send(&self, message: &Message) {
        let kind = LineKind::of_reconnecting(message);
        let is_list = matches!(message, Message::AppList(_));
        let line = message.to_json();
        let mut s = self.lock();
        match (s.phase, kind) {
            (Phase::Away | Phase::Greeting, LineKind::PageEvent(instance)) => {
                s.drop_away(instance);
            }
            (Phase::Away, LineKind::Inventory) => {
                tracing::debug!("an inventory made while the agent is away is superseded by the one it gets when it connects");
            }
            (Phase::Greeting, LineKind::Inventory) if !is_list => {
                s.greeting_frames.push_back(line);
                s.phase = Phase::AwaitList;
            }
            (Phase::Greeting, LineKind::Inventory) => {
                tracing::debug!("an app.list before the connection's inventory is superseded");
            }
            // Kept, in order, behind the answers kept before it.
            (Phase::Away | Phase::Greeting, LineKind::Answer) => s.enqueue(line, LineKind::Answer),
            (Phase::AwaitList, LineKind::Inventory) if is_list => {
                s.greeting_frames.push_back(line);
                s.go_live();
            }
            (Phase::AwaitList, kind) => {
                s.go_live();
                s.enqueue(line, kind);
            }
            (Phase::Live, kind) => s.enqueue(line, kind),
        }
        drop(s);
        self.shared.ready.notify_one();
    }

    /// A connection is up and the host is asked for its inventory: answers keep waiting until
    /// it arrives (or [`Outbound::greeting_done`] says none will). Returns the greeting's number,
    /// for [`Outbound::greeting_done`].
    pub fn begin_greeting(&self) -> u64 {
        let mut s = self.lock();
        s.phase = Phase::Greeting;
        s.greeting += 1;
        s.greeting
    }

    /// The host carried out the inventory request of greeting `greeting`; when no inventory
    /// came (App Capabilities off), the kept answers go now. A late answer to an earlier
    /// connection's request changes nothing.
    pub fn greeting_done(&self, greeting: u64) {
        let mut s = self.lock();
        if s.greeting == greeting && matches!(s.phase, Phase::Greeting | Phase::AwaitList) {
            s.go_live();
        }
        drop(s);
        self.shared.ready.notify_one();
    }

    /// The connection is gone: answers not yet sent are kept, in order, for the next one;
    /// page events are dropped and counted; inventories are discarded.
    pub fn set_away(&self) {
        let mut s = self.lock();
        s.phase = Phase::Away;
        s.greeting_frames.clear();
        s.dropped_away = s.queue.clear_keeping_answers();
    }

    /// The next frame to send on a live connection, once there is one; it stays queued until
    /// [`Outbound::sent`]. Reports dropped page events when the queue is empty.
    pub async fn next(&self) -> String {
        loop {
            let report = {
                let mut s = self.lock();
                if s.phase != Phase::Live {
                    None
                } else if let Some(line) = s.front() {
                    return line.to_owned();
                } else if s.reporter.is_some() && s.queue.pending_drops().next().is_some() {
                    s.reporter
                        .clone()
                        .map(|reporter| (reporter, s.queue.take_drop_reports()))
                } else {
                    None
                }
            };
            if let Some((reporter, reports)) = report {
                for dropped in reports {
                    let counts = dropped.counts;
                    tracing::warn!(
                        "surface {}: {}; the agent gets an events_dropped report",
                        dropped.instance,
                        dropped_words(counts.away, counts.behind)
                    );
                    let _ = reporter.report_events_dropped(dropped.instance, counts.total());
                }
                continue;
            }
            self.shared.ready.notified().await;
        }
    }

    /// The frame [`Outbound::next`] returned was taken by the WebSocket.
    pub fn sent(&self) {
        let mut s = self.lock();
        if s.greeting_frames.pop_front().is_none() {
            s.queue.pop_sent();
        }
    }

    /// Whether the link should stop reading inbound frames: past `answers_high_water` answers
    /// wait, until fewer than `answers_low_water` do (R-ENV-4).
    pub fn backpressure(&self) -> bool {
        self.lock().queue.backpressure()
    }

    /// Answers waiting (queued or kept).
    pub fn answers_waiting(&self) -> usize {
        self.lock().queue.answers_waiting()
    }
}

/// How many page events of one Surface were dropped, and why, in words.
fn dropped_words(away: u64, behind: u64) -> String {
    match (away, behind) {
        (away, 0) => format!("{away} page events dropped while the agent was away"),
        (0, behind) => format!(
            "{behind} page events dropped because too many were waiting for the agent"
        ),
        (away, behind) => format!(
            "{} page events dropped ({away} while the agent was away, {behind} because too many were waiting for it)",
            away + behind
        ),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    /// Issue 30 item 5: the log says the agent was away only when it was.
    #[test]
    fn the_dropped_events_message_says_why_they_were_dropped() {
        let s = Outbound::new(OutboundLimits {
            max_waiting_events: 1,
            answers_high_water: 10,
            answers_low_water: 5,
        });
        let w1 = InstanceId::try_from("w1").unwrap();
        {
            let mut state = s.lock();
            state.phase = Phase::Live;
            state.enqueue("kept".into(), LineKind::PageEvent(w1.clone()));
            state.enqueue("dropped".into(), LineKind::PageEvent(w1.clone()));
            assert_eq!(state.dropped_away, 0, "dropped while live is not away");
            let behind = DropCounts { behind: 1, away: 0 };
            assert_eq!(state.queue.pending_drops().next(), Some((&w1, behind)));
            state.drop_away(w1.clone());
            let both = DropCounts { behind: 1, away: 1 };
            assert_eq!(state.queue.pending_drops().next(), Some((&w1, both)));
        }
        assert_eq!(
            dropped_words(0, 3),
            "3 page events dropped because too many were waiting for the agent"
        );
        assert_eq!(
            dropped_words(2, 0),
            "2 page events dropped while the agent was away"
        );
        assert!(dropped_words(2, 1)
            .starts_with("3 page events dropped (2 while the agent was away, 1 because"));
    }
    use super::*;
    use crate::outbound::DropCounts;
    use lineup_host_core::decode;
    use serde_json::{json, Value};

    fn message(kind: &str, payload: Value) -> Message {
        let bytes = serde_json::to_vec(&json!({
            "v": 1, "id": format!("m-{kind}"), "type": format!("lineup.v1.{kind}"),
            "conversation_id": "c1", "sender": {"kind": "client", "id": "lineup-host"},
            "payload": payload
        }))
        .unwrap();
        decode(&bytes, &lineup_host_core::Limits::default()).unwrap()
    }

    fn inventory() -> Message {
        message(
            "client.inventory",
            json!({"revision": "rev-1-1", "standard_components": [], "applications": [], "capabilities": []}),
        )
    }

    fn list() -> Message {
        message("app.list", json!({"capabilities": []}))
    }

    fn page(instance: &str) -> Message {
        message(
            "ui.event",
            json!({"instance_id": instance, "event": "clicked", "data": {}}),
        )
    }

    fn close(instance: &str) -> Message {
        message(
            "ui.event",
            json!({"instance_id": instance, "event": "close", "data": {"reason": "agent_gone"}}),
        )
    }

    fn outbound() -> Outbound {
        Outbound::new(OutboundLimits {
            max_waiting_events: 2,
            answers_high_water: 3,
            answers_low_water: 1,
        })
    }

    /// Everything sendable now, in order, by type (and event name).
    fn drain(o: &Outbound) -> Vec<String> {
        let mut out = Vec::new();
        loop {
            let front = {
                let s = o.lock();
                if s.phase != Phase::Live {
                    break;
                }
                s.front().map(str::to_owned)
            };
            let Some(line) = front else { break };
            o.sent();
            let v: Value = serde_json::from_str(&line).unwrap();
            let t = v["type"].as_str().unwrap().trim_start_matches("lineup.v1.");
            out.push(match v["payload"]["event"].as_str() {
                Some(e) => format!("{t}:{e}"),
                None => t.to_owned(),
            });
        }
        out
    }

    /// Page events dropped and not reported yet, of `instance` or of every Surface.
    fn dropped(o: &Outbound, instance: Option<&str>) -> u64 {
        o.lock()
            .queue
            .pending_drops()
            .filter(|(i, _)| instance.is_none_or(|id| i.as_str() == id))
            .map(|(_, counts)| counts.total())
            .sum()
    }

    #[test]
    fn r_inv_1_the_inventory_goes_first_then_answers_kept_while_away_then_live_traffic() {
        let o = outbound();
        o.send(&close("w1")); // away: kept
        o.send(&page("w1")); // away: dropped
        o.send(&inventory()); // away: superseded
        o.begin_greeting();
        o.send(&close("w2")); // produced between the connect and the inventory: kept
        o.send(&page("w2")); // dropped
        assert!(drain(&o).is_empty(), "nothing before the inventory");
        o.send(&inventory());
        o.send(&list());
        o.send(&page("w3"));
        o.greeting_done(1);
        assert_eq!(
            drain(&o),
            vec![
                "client.inventory",
                "app.list",
                "ui.event:close",
                "ui.event:close",
                "ui.event:clicked"
            ]
        );
        assert_eq!(dropped(&o, None), 2);
        assert_eq!(o.answers_waiting(), 0);
    }

    #[test]
    fn without_an_inventory_the_kept_answers_go_when_the_greeting_is_done() {
        let o = outbound();
        o.send(&close("w1"));
        let first = o.begin_greeting();
        o.set_away();
        let second = o.begin_greeting();
        // The first connection's late answer does not end the second one's greeting.
        o.greeting_done(first);
        assert!(drain(&o).is_empty());
        o.greeting_done(second);
        assert_eq!(drain(&o), vec!["ui.event:close"]);
    }

    #[test]
    fn a_lost_connection_keeps_unsent_answers_in_order_and_drops_page_events() {
        let o = outbound();
        o.begin_greeting();
        o.send(&inventory());
        o.send(&list());
        o.send(&close("w1"));
        o.send(&page("w1"));
        o.send(&close("w2"));
        o.set_away();
        o.begin_greeting();
        o.send(&inventory());
        o.send(&list());
        assert_eq!(
            drain(&o),
            vec![
                "client.inventory",
                "app.list",
                "ui.event:close",
                "ui.event:close"
            ]
        );
        assert_eq!(dropped(&o, Some("w1")), 1);
    }

    #[test]
    fn r_env_4_live_page_events_beyond_the_bound_are_dropped_and_answers_engage_backpressure() {
        let o = outbound();
        let g = o.begin_greeting();
        o.greeting_done(g);
        for _ in 0..5 {
            o.send(&page("w1"));
        }
        assert_eq!(o.lock().queue.len(), 2);
        assert_eq!(dropped(&o, None), 3);
        for i in 0..3 {
            o.send(&close(&format!("x{i}")));
        }
        assert!(o.backpressure());
        assert_eq!(o.answers_waiting(), 3);
        drain(&o);
        assert!(!o.backpressure());
    }
}
