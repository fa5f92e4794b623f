//! The outbound policy on its own: offer, send, back-pressure and drop counts, step by step and
//! at the boundaries of each bound.
#![allow(clippy::unwrap_used, clippy::panic)]

use super::*;
use lineup_host_core::decode;
use serde_json::{json, Value};

fn limits(events: usize, high: usize, low: usize) -> OutboundLimits {
    OutboundLimits {
        max_waiting_events: events,
        answers_high_water: high,
        answers_low_water: low,
    }
}

fn instance(id: &str) -> InstanceId {
    InstanceId::try_from(id).unwrap()
}

fn event(id: &str) -> LineKind {
    LineKind::PageEvent(instance(id))
}

/// One step of a script against a queue.
#[derive(Debug)]
enum Step {
    /// Offers a line of this kind; `true` when it must be queued, `false` when dropped.
    Offer(LineKind, bool),
    /// Sends the front line, which must be of this kind.
    Pop(LineKind),
    /// The reader went away; this many page events must be dropped.
    Away(u64),
}

/// What the queue must say after a step: `(events waiting, answers waiting, back-pressure)`.
type After = (usize, usize, bool);

fn run(limits: OutboundLimits, script: &[(Step, After)]) -> OutboundQueue {
    let mut q = OutboundQueue::new(limits);
    for (i, (step, after)) in script.iter().enumerate() {
        match step {
            Step::Offer(kind, kept) => {
                let got = q.offer(format!("line {i}"), kind.clone());
                assert_eq!(got.is_ok(), *kept, "step {i}: {step:?} gave {got:?}");
            }
            Step::Pop(kind) => assert_eq!(q.pop_sent().as_ref(), Some(kind), "step {i}"),
            Step::Away(n) => assert_eq!(q.clear_keeping_answers(), *n, "step {i}"),
        }
        let state = (q.events_waiting(), q.answers_waiting(), q.backpressure());
        assert_eq!(state, *after, "after step {i}: {step:?}");
    }
    q
}

#[test]
fn r_env_4_page_events_give_way_at_the_bound_and_answers_engage_backpressure_with_hysteresis() {
    use LineKind::Answer;
    let q = run(
        limits(2, 3, 2),
        &[
            (Step::Offer(event("a"), true), (1, 0, false)),
            (Step::Offer(event("b"), true), (2, 0, false)),
            // The bound: the third page event is dropped; answers never are.
            (Step::Offer(event("a"), false), (2, 0, false)),
            (Step::Offer(Answer, true), (2, 1, false)),
            (Step::Offer(Answer, true), (2, 2, false)),
            // The high-water mark engages it...
            (Step::Offer(Answer, true), (2, 3, true)),
            (Step::Offer(Answer, true), (2, 4, true)),
            (Step::Offer(event("b"), false), (2, 4, true)),
            // ...sending page events does not release it...
            (Step::Pop(event("a")), (1, 4, true)),
            (Step::Offer(event("a"), true), (2, 4, true)),
            (Step::Pop(event("b")), (1, 4, true)),
            (Step::Pop(Answer), (1, 3, true)),
            // ...nor does reaching the low-water mark; going below it does.
            (Step::Pop(Answer), (1, 2, true)),
            (Step::Pop(Answer), (1, 1, false)),
            (Step::Offer(Answer, true), (1, 2, false)),
            (Step::Pop(Answer), (1, 1, false)),
            (Step::Pop(event("a")), (0, 1, false)),
            (Step::Pop(Answer), (0, 0, false)),
        ],
    );
    assert!(q.is_empty());
    assert_eq!(q.dropped_total(), 2);
}

#[test]
fn r_env_5_a_reader_going_away_keeps_answers_drops_page_events_and_discards_inventories() {
    use LineKind::{Answer, Inventory};
    let mut q = run(
        limits(4, 3, 1),
        &[
            (Step::Offer(Inventory, true), (0, 1, false)),
            (Step::Offer(Answer, true), (0, 2, false)),
            (Step::Offer(event("a"), true), (1, 2, false)),
            (Step::Offer(Answer, true), (1, 3, true)),
            (Step::Offer(event("b"), true), (2, 3, true)),
            // Two answers stay: still at or above the low-water mark, still engaged.
            (Step::Away(2), (0, 2, true)),
            (Step::Offer(Answer, true), (0, 3, true)),
        ],
    );
    let mut sent = Vec::new();
    while let Some(line) = q.front().map(str::to_owned) {
        q.pop_sent();
        sent.push(line);
    }
    assert_eq!(sent, ["line 1", "line 3", "line 6"], "answers in order");
    assert!(!q.backpressure());
    let away: Vec<_> = q.pending_drops().collect();
    let one_away = DropCounts { behind: 0, away: 1 };
    assert_eq!(
        away,
        [(&instance("a"), one_away), (&instance("b"), one_away)]
    );
}

#[test]
fn r_env_4_the_page_event_bound_holds_exactly_at_its_value() {
    for cap in [0, 1, 2, 7] {
        let mut q = OutboundQueue::new(limits(cap, 1000, 500));
        for i in 0..cap {
            assert_eq!(q.offer(format!("{i}"), event("a")), Ok(()), "cap {cap}");
        }
        assert_eq!(
            q.offer("over".into(), event("a")),
            Err(Dropped {
                instance: instance("a"),
                capacity: cap
            })
        );
        assert_eq!(q.events_waiting(), cap);
        // One sent makes room for exactly one more.
        if cap > 0 {
            q.pop_sent();
            assert_eq!(q.offer("room".into(), event("b")), Ok(()));
            assert!(q.offer("full".into(), event("b")).is_err());
        }
    }
}

#[test]
fn r_env_4_backpressure_engages_exactly_at_the_high_mark_and_releases_below_the_low_mark() {
    for (high, low) in [(1, 1), (2, 1), (4, 2), (5, 5)] {
        let mut q = OutboundQueue::new(limits(0, high, low));
        for _ in 0..high - 1 {
            q.offer("a".into(), LineKind::Answer).unwrap();
        }
        assert!(!q.backpressure(), "{high}/{low}: engaged below the mark");
        q.offer("a".into(), LineKind::Answer).unwrap();
        assert!(q.backpressure(), "{high}/{low}: not engaged at the mark");
        while q.answers_waiting() >= low {
            assert!(
                q.backpressure(),
                "{high}/{low}: released at {}",
                q.answers_waiting()
            );
            q.pop_sent();
        }
        assert!(!q.backpressure(), "{high}/{low}: held below the low mark");
    }
}

#[test]
fn limits_keep_both_marks_at_least_one_and_the_low_at_most_the_high() {
    assert_eq!(OutboundLimits::default(), limits(4096, 1024, 512));
    assert_eq!(
        OutboundQueue::new(limits(3, 0, 0)).limits(),
        limits(3, 1, 1)
    );
    assert_eq!(
        OutboundQueue::new(limits(3, 4, 9)).limits(),
        limits(3, 4, 4)
    );
    // A zero high-water mark cannot mean "never engage": the first answer engages it.
    let mut q = OutboundQueue::new(limits(3, 0, 0));
    q.offer("a".into(), LineKind::Answer).unwrap();
    assert!(q.backpressure());
}

#[test]
fn r_env_4_drop_counts_are_handed_over_per_surface_only_once_nothing_waits() {
    let mut q = OutboundQueue::new(limits(1, 10, 5));
    q.offer("kept".into(), event("a")).unwrap();
    for _ in 0..3 {
        assert!(q.offer("lost".into(), event("a")).is_err());
    }
    assert!(q.offer("lost".into(), event("b")).is_err());
    q.drop_away(instance("b"));
    assert!(q.take_drop_reports().is_empty(), "a line still waits");
    q.pop_sent();
    let reports = q.take_drop_reports();
    assert_eq!(
        reports,
        [
            DropReport {
                instance: instance("a"),
                counts: DropCounts { behind: 3, away: 0 }
            },
            DropReport {
                instance: instance("b"),
                counts: DropCounts { behind: 1, away: 1 }
            },
        ]
    );
    assert_eq!(reports[1].counts.total(), 2);
    assert!(
        q.take_drop_reports().is_empty(),
        "a report empties the counts"
    );
    assert_eq!(q.dropped_total(), 5, "the total is kept");
}

#[test]
fn a_closed_stream_discards_everything_releases_backpressure_and_keeps_drop_counts() {
    let mut q = OutboundQueue::new(limits(1, 1, 1));
    q.offer("a".into(), LineKind::Answer).unwrap();
    q.offer("e".into(), event("a")).unwrap();
    assert!(q.offer("e".into(), event("a")).is_err());
    q.clear();
    assert!(q.is_empty() && !q.backpressure());
    assert_eq!((q.events_waiting(), q.answers_waiting()), (0, 0));
    assert_eq!(q.pending_drops().count(), 1, "discarded is not dropped");
    assert_eq!(q.pop_sent(), None);
}

fn message(kind: &str, payload: Value) -> Message {
    let bytes = serde_json::to_vec(&json!({
        "v": 1, "id": "m1", "type": format!("lineup.v1.{kind}"),
        "conversation_id": "c1", "sender": {"kind": "client", "id": "lineup-host"},
        "payload": payload
    }))
    .unwrap();
    decode(&bytes, &lineup_host_core::Limits::default()).unwrap()
}

#[test]
fn r_inv_1_a_reconnecting_link_supersedes_inventories_and_sorts_the_rest_as_the_stdout_does() {
    let inventory = message(
        "client.inventory",
        json!({"revision": "rev-1-1", "standard_components": [], "applications": [], "capabilities": []}),
    );
    let list = message("app.list", json!({"capabilities": []}));
    let clicked = message(
        "ui.event",
        json!({"instance_id": "w1", "event": "clicked", "data": {}}),
    );
    let close = message(
        "ui.event",
        json!({"instance_id": "w1", "event": "close", "data": {"reason": "agent_gone"}}),
    );
    let cases = [
        (&inventory, LineKind::Answer, LineKind::Inventory),
        (&list, LineKind::Answer, LineKind::Inventory),
        (&clicked, event("w1"), event("w1")),
        (&close, LineKind::Answer, LineKind::Answer),
    ];
    for (message, stdout, reconnecting) in cases {
        assert_eq!(LineKind::of(message), stdout, "{}", message.to_json());
        assert_eq!(
            LineKind::of_reconnecting(message),
            reconnecting,
            "{}",
            message.to_json()
        );
    }
}

#[test]
fn r_mcp_6_a_views_request_never_gives_way_and_its_notifications_do_like_page_events() {
    let view = json!({"instance_id": "v1", "generation": 2, "server": "s"});
    let with = |more: Value| {
        let mut payload = view.clone();
        payload
            .as_object_mut()
            .unwrap()
            .extend(more.as_object().unwrap().clone());
        payload
    };
    let request = message(
        "mcp.request",
        with(json!({"request_id": 1, "method": "tools/call", "params": {}})),
    );
    let notify = message(
        "mcp.notify",
        with(json!({"method": "notifications/message", "params": {}})),
    );
    for (message, kind) in [(&request, LineKind::Answer), (&notify, event("v1"))] {
        assert_eq!(LineKind::of(message), kind, "{}", message.to_json());
        assert_eq!(LineKind::of_reconnecting(message), kind);
    }
}
