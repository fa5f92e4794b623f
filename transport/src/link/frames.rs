//! The outbound side of the agent link: what the host produces, queued for the WebSocket in
//! order, one envelope per text frame, and what happens to it while the agent is away.
//!
//! [`Outbound::send`] is the host's outbound callback: it runs on the event-loop thread and
//! never blocks. The link's writer takes frames with [`Outbound::next`] and removes each with
//! [`Outbound::sent`] only once the WebSocket took it.
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

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::stdio::LineKind;
use lineup_host::HostHandle;
use lineup_host_core::{InstanceId, Message};
use tokio::sync::Notify;

/// How much may wait in an [`Outbound`].
#[derive(Debug, Clone, Copy)]
pub struct OutboundLimits {
    /// Page events waiting on a live connection; one more is dropped and counted.
    pub max_waiting_events: usize,
    /// Answers waiting when the link stops reading inbound frames (R-ENV-4).
    pub answers_high_water: usize,
    /// Answers waiting below which it reads again.
    pub answers_low_water: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Away,
    Greeting,
    /// The greeting's inventory is queued; its `app.list` comes next.
    AwaitList,
    Live,
}

/// What is kept of an outbound envelope.
#[derive(Debug)]
enum Kind {
    Answer,
    Page(InstanceId),
    Inventory,
}

struct State {
    phase: Phase,
    /// Frames to send on the live connection, in order.
    queue: VecDeque<(String, Kind)>,
    /// Answers kept while away or greeting, in order.
    kept: VecDeque<String>,
    events_waiting: usize,
    /// Answers in `queue` and `kept`.
    answers_waiting: usize,
    throttled: bool,
    /// Page events dropped and not reported yet, per Surface.
    dropped: BTreeMap<InstanceId, u64>,
    /// Of `dropped`, those dropped on a live connection because too many waited (the agent
    /// was there but behind), so the log says which it was.
    dropped_behind: BTreeMap<InstanceId, u64>,
    /// Page events dropped since the connection was lost (for the log).
    dropped_away: u64,
    reporter: Option<HostHandle>,
    /// The number of the latest greeting.
    greeting: u64,
}

struct Shared {
    limits: OutboundLimits,
    state: Mutex<State>,
    /// Wakes the writer: a frame may be ready.
    ready: Notify,
}

/// The outbound queue of the agent link; cloning shares it.
#[derive(Clone)]
pub struct Outbound {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Outbound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.lock();
        f.debug_struct("Outbound")
            .field("phase", &s.phase)
            .field("queued", &s.queue.len())
            .field("kept", &s.kept.len())
            .finish_non_exhaustive()
    }
}

impl Outbound {
    /// An empty queue, away (nothing is connected yet).
    pub fn new(limits: OutboundLimits) -> Self {
        let limits = OutboundLimits {
            answers_high_water: limits.answers_high_water.max(1),
            answers_low_water: limits
                .answers_low_water
                .clamp(1, limits.answers_high_water.max(1)),
            ..limits
        };
        Self {
            shared: Arc::new(Shared {
                limits,
                state: Mutex::new(State {
                    phase: Phase::Away,
                    queue: VecDeque::new(),
                    kept: VecDeque::new(),
                    events_waiting: 0,
                    answers_waiting: 0,
                    throttled: false,
                    dropped: BTreeMap::new(),
                    dropped_behind: BTreeMap::new(),
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
        let kind = match message {
            Message::ClientInventory(_) | Message::AppList(_) => Kind::Inventory,
            _ => match LineKind::of(message) {
                LineKind::PageEvent(instance) => Kind::Page(instance),
                _ => Kind::Answer,
            },
        };
        let is_list = matches!(message, Message::AppList(_));
        let line = message.to_json();
        let mut s = self.lock();
        match (s.phase, kind) {
            (Phase::Away | Phase::Greeting, Kind::Page(instance)) => {
                drop_event(&mut s, instance, Dropped::Away);
            }
            (Phase::Away | Phase::Greeting, Kind::Answer) => {
                s.kept.push_back(line);
                count_answer(&mut s, self.shared.limits);
            }
            (Phase::Away, Kind::Inventory) => {
                tracing::debug!("an inventory made while the agent is away is superseded by the one it gets when it connects");
            }
            (Phase::Greeting, Kind::Inventory) if !is_list => {
                s.queue.push_back((line, Kind::Inventory));
                s.phase = Phase::AwaitList;
            }
            (Phase::Greeting, Kind::Inventory) => {
                tracing::debug!("an app.list before the connection's inventory is superseded");
            }
            (Phase::AwaitList, kind) => {
                let list = matches!(kind, Kind::Inventory) && is_list;
                if list {
                    s.queue.push_back((line, kind));
                    go_live(&mut s);
                } else {
                    go_live(&mut s);
                    queue_live(&mut s, self.shared.limits, line, kind);
                }
            }
            (Phase::Live, kind) => queue_live(&mut s, self.shared.limits, line, kind),
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
            go_live(&mut s);
        }
        drop(s);
        self.shared.ready.notify_one();
    }

    /// The connection is gone: answers not yet sent are kept, in order, for the next one;
    /// page events are dropped and counted.
    pub fn set_away(&self) {
        let mut s = self.lock();
        s.phase = Phase::Away;
        s.dropped_away = 0;
        let queue = std::mem::take(&mut s.queue);
        let mut kept = VecDeque::new();
        for (line, kind) in queue {
            match kind {
                Kind::Answer => kept.push_back(line),
                Kind::Page(instance) => {
                    s.events_waiting = s.events_waiting.saturating_sub(1);
                    drop_event(&mut s, instance, Dropped::Away);
                }
                Kind::Inventory => {}
            }
        }
        kept.append(&mut s.kept);
        s.kept = kept;
    }

    /// The next frame to send on a live connection, once there is one; it stays queued until
    /// [`Outbound::sent`]. Reports dropped page events when the queue is empty.
    pub async fn next(&self) -> String {
        loop {
            let report = {
                let mut s = self.lock();
                if s.phase == Phase::Live {
                    if let Some((line, _)) = s.queue.front() {
                        return line.clone();
                    }
                    if !s.dropped.is_empty() && s.reporter.is_some() {
                        let counts = std::mem::take(&mut s.dropped);
                        let behind = std::mem::take(&mut s.dropped_behind);
                        s.reporter.clone().map(|r| (r, counts, behind))
                    } else {
                        None
                    }
                } else {
                    None
                }
            };
            if let Some((reporter, counts, behind)) = report {
                for (instance, count) in counts {
                    let behind = behind.get(&instance).copied().unwrap_or(0).min(count);
                    tracing::warn!(
                        "surface {instance}: {}; the agent gets an events_dropped report",
                        dropped_words(count - behind, behind)
                    );
                    let _ = reporter.report_events_dropped(instance, count);
                }
                continue;
            }
            self.shared.ready.notified().await;
        }
    }

    /// The frame [`Outbound::next`] returned was taken by the WebSocket.
    pub fn sent(&self) {
        let limits = self.shared.limits;
        let mut s = self.lock();
        if let Some((_, kind)) = s.queue.pop_front() {
            match kind {
                Kind::Page(_) => s.events_waiting = s.events_waiting.saturating_sub(1),
                Kind::Answer => {
                    s.answers_waiting = s.answers_waiting.saturating_sub(1);
                    if s.answers_waiting < limits.answers_low_water {
                        s.throttled = false;
                    }
                }
                Kind::Inventory => {}
            }
        }
    }

    /// Whether the link should stop reading inbound frames: past `answers_high_water` answers
    /// wait, until fewer than `answers_low_water` do (R-ENV-4).
    pub fn backpressure(&self) -> bool {
        self.lock().throttled
    }

    /// Answers waiting (queued or kept).
    pub fn answers_waiting(&self) -> usize {
        self.lock().answers_waiting
    }
}

fn count_answer(s: &mut State, limits: OutboundLimits) {
    s.answers_waiting += 1;
    if s.answers_waiting >= limits.answers_high_water {
        s.throttled = true;
    }
}

/// Why a page event was dropped.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Dropped {
    /// No live connection.
    Away,
    /// A live connection with too many events waiting.
    Behind,
}

fn drop_event(s: &mut State, instance: InstanceId, why: Dropped) {
    if why == Dropped::Behind {
        *s.dropped_behind.entry(instance.clone()).or_default() += 1;
    } else {
        s.dropped_away += 1;
    }
    *s.dropped.entry(instance).or_default() += 1;
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

fn queue_live(s: &mut State, limits: OutboundLimits, line: String, kind: Kind) {
    match &kind {
        Kind::Page(instance) => {
            if s.events_waiting >= limits.max_waiting_events {
                let instance = instance.clone();
                drop_event(s, instance, Dropped::Behind);
                return;
            }
            s.events_waiting += 1;
        }
        Kind::Answer => count_answer(s, limits),
        Kind::Inventory => {}
    }
    s.queue.push_back((line, kind));
}

/// The greeting is over: the kept answers follow what is queued (the inventory and its list).
fn go_live(s: &mut State) {
    if s.dropped_away > 0 {
        tracing::warn!(
            "{} page events were dropped while the agent was away; it gets one events_dropped report per surface",
            s.dropped_away
        );
        s.dropped_away = 0;
    }
    let kept = std::mem::take(&mut s.kept);
    s.queue
        .extend(kept.into_iter().map(|line| (line, Kind::Answer)));
    s.phase = Phase::Live;
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
            drop_event(&mut state, w1.clone(), Dropped::Behind);
            assert_eq!(state.dropped_away, 0, "dropped while live is not away");
            assert_eq!(state.dropped_behind.get(&w1), Some(&1));
            drop_event(&mut state, w1.clone(), Dropped::Away);
            assert_eq!(state.dropped.get(&w1), Some(&2));
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
                s.queue.front().map(|(l, _)| l.clone())
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
        let s = o.lock();
        assert_eq!(s.dropped.values().sum::<u64>(), 2);
        assert_eq!(s.answers_waiting, 0);
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
        assert_eq!(
            o.lock().dropped.get(&InstanceId::try_from("w1").unwrap()),
            Some(&1)
        );
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
        assert_eq!(o.lock().dropped.values().sum::<u64>(), 3);
        for i in 0..3 {
            o.send(&close(&format!("x{i}")));
        }
        assert!(o.backpressure());
        assert_eq!(o.answers_waiting(), 3);
        drain(&o);
        assert!(!o.backpressure());
    }
}
