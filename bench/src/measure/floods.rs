//! Floods: the agent patching faster than the page renders, and a page posting events as fast as
//! it can.

use std::rc::Rc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::patches::{acked, raw_acked};
use crate::lab::Lab;
use crate::procs;
use crate::raw::Kind;
use crate::report::ms;
use crate::report::Figure;

/// The agent patches `n` times back to back a page that works 2 ms per state: time until the
/// last state is acknowledged, and the host's delivery coalescing.
pub(super) fn patch_flood(
    lab: &mut Lab,
    n: usize,
    bytes: &Rc<Vec<u8>>,
    app: &Value,
) -> Result<(Figure, Value), String> {
    lab.open_ours("flood", app, None)?;
    lab.rec.events.borrow_mut().clear();
    let last = n as u64 - 1;
    let envelopes: Vec<Vec<u8>> = (0..n as u64)
        .map(|seq| {
            lab.envelope(
                "lineup.v1.ui.patch",
                json!({ "instance_id": "flood", "state": { "seq": seq, "busy": 2 } }),
            )
        })
        .collect();
    let start = Instant::now();
    for bytes in envelopes {
        lab.send(bytes)?;
    }
    lab.pump(Duration::from_secs(60), |_, rec, _| {
        acked(&rec.events.borrow(), "flood", last)
    });
    let ours = start.elapsed();
    let acks = lab
        .rec
        .events
        .borrow()
        .iter()
        .filter(|s| s.event == "ack")
        .count();
    let stats = lab
        .rec
        .keys
        .borrow()
        .get("flood")
        .and_then(|k| lab.host.as_ref().and_then(|h| h.view(k)))
        .map(|v| v.delivery_stats());
    lab.close_ours("flood")?;
    let mut raws = Vec::new();
    for kind in [Kind::Plain, Kind::Hardened] {
        let (view, _) = lab.open_raw(kind, bytes)?;
        lab.inbox.messages.borrow_mut().clear();
        let start = Instant::now();
        for seq in 0..n as u64 {
            view.deliver(&json!({ "seq": seq, "busy": 2 }).to_string())?;
        }
        let id = view.id;
        lab.pump(Duration::from_secs(60), |_, _, inbox| {
            raw_acked(inbox, id, last)
        });
        raws.push(ms(start.elapsed()));
        drop(view);
        lab.settle(Duration::from_millis(100));
    }
    let details = json!({
        "patches": n,
        "page_work_ms_per_state": 2,
        "ours_states_acknowledged": acks,
        "delivered": stats.map(|s| s.delivered),
        "coalesced": stats.map(|s| s.coalesced),
        "high_water": stats.map(|s| s.high_water),
    });
    let figure = Figure::values(
        &format!("patch flood: {n} patches → last state acknowledged"),
        "ms",
        ms(ours),
        raws.first().copied(),
        raws.get(1).copied(),
    )
    .with_note(format!(
        "ours coalesces: {acks} states reached onState, delivery stats {stats:?}; raw delivers all {n}"
    ));
    Ok((figure, details))
}

/// A page posts events as fast as it can for `flood_ms`: events per second reaching the agent,
/// and the host's RSS at the end.
pub(super) fn event_flood(
    lab: &mut Lab,
    flood_ms: u64,
    bytes: &Rc<Vec<u8>>,
    app: &Value,
) -> Result<(Vec<Figure>, Value), String> {
    lab.open_ours("events", app, None)?;
    lab.rec.floods.set(0);
    lab.rec.events.borrow_mut().clear();
    let go = lab.envelope(
        "lineup.v1.ui.patch",
        json!({ "instance_id": "events", "state": { "seq": 1, "flood": flood_ms } }),
    );
    let start = Instant::now();
    lab.send(go)?;
    let timeout = Duration::from_millis(flood_ms + 5000);
    lab.pump(timeout, |_, rec, _| {
        rec.events.borrow().iter().any(|s| s.event == "fdone")
    });
    lab.settle(Duration::from_millis(300));
    let elapsed = start.elapsed().as_secs_f64();
    let ours_count = lab.rec.floods.get();
    let ours_rss = procs::own_rss_kib();
    let posted = lab
        .rec
        .events
        .borrow()
        .iter()
        .find(|s| s.event == "fdone")
        .and_then(|s| s.data["k"].as_u64());
    lab.close_ours("events")?;
    let mut raw_rates = Vec::new();
    let mut raw_rss = Vec::new();
    for kind in [Kind::Plain, Kind::Hardened] {
        let (view, _) = lab.open_raw(kind, bytes)?;
        lab.inbox.floods.set(0);
        lab.inbox.messages.borrow_mut().clear();
        let start = Instant::now();
        view.deliver(&json!({ "seq": 1, "flood": flood_ms }).to_string())?;
        lab.pump(timeout, |_, _, inbox| {
            inbox
                .messages
                .borrow()
                .iter()
                .any(|m| m.body.contains("\"fdone\""))
        });
        lab.settle(Duration::from_millis(300));
        raw_rates.push(lab.inbox.floods.get() as f64 / start.elapsed().as_secs_f64());
        raw_rss.push(procs::own_rss_kib() as f64 / 1024.0);
        drop(view);
        lab.settle(Duration::from_millis(100));
    }
    let rate = ours_count as f64 / elapsed;
    let figures = vec![
        Figure::values(
            "event flood: events/s reaching the agent",
            "1/s",
            rate,
            raw_rates.first().copied(),
            raw_rates.get(1).copied(),
        )
        .with_note(format!(
            "ours: {ours_count} of {} posted reached the agent (the rest cut at the bridge backlog)",
            posted.map_or("?".to_owned(), |p| p.to_string())
        )),
        Figure::values(
            "event flood: host RSS at the end",
            "MiB",
            ours_rss as f64 / 1024.0,
            raw_rss.first().copied(),
            raw_rss.get(1).copied(),
        )
        .with_note("the bench process's own RSS (the host and the raw views share it)"),
    ];
    let details = json!({
        "flood_ms": flood_ms,
        "ours_reached_agent": ours_count,
        "ours_posted_by_page": posted,
        "ours_rss_kib": ours_rss,
    });
    Ok((figures, details))
}
