//! Page event → agent: the page stamps each event; the time until it leaves the host (or, raw,
//! reaches the IPC handler), and the part of it spent in the host.

use std::rc::Rc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::Triple;
use crate::lab::Lab;
use crate::raw::Kind;
use crate::report::ms;

/// Page event → outbound: the page stamps each event; the host's wall clock at arrival.
pub(super) fn event_samples(
    lab: &mut Lab,
    n: usize,
    bytes: &Rc<Vec<u8>>,
    app: &Value,
) -> Result<(Triple, Vec<f64>), String> {
    lab.open_ours("ping", app, None)?;
    lab.rec.events.borrow_mut().clear();
    lab.phases.take();
    let ping = lab.envelope(
        "lineup.v1.ui.patch",
        json!({ "instance_id": "ping", "state": { "seq": 1, "ping": n } }),
    );
    lab.send(ping)?;
    let count = |seen: &[crate::lab::Seen]| seen.iter().filter(|s| s.event == "t").count();
    lab.pump(Duration::from_secs(30), |_, rec, _| {
        count(&rec.events.borrow()) >= n
    });
    let ours: Vec<f64> = lab
        .rec
        .events
        .borrow()
        .iter()
        .filter(|s| s.event == "t")
        .filter_map(|s| s.data["t"].as_f64().map(|t| s.epoch_ms - t))
        .collect();
    // The page posts only to this Surface meanwhile, in order: its `ack`, then the `t` events,
    // so the last bridge messages are the `t` events' arrivals at the IPC handler.
    let arrivals: Vec<Instant> = lab
        .phases
        .take()
        .into_iter()
        .filter(|(_, name, _)| name == "bridge_message")
        .map(|(at, _, _)| at)
        .collect();
    let outbound: Vec<Instant> = lab
        .rec
        .events
        .borrow()
        .iter()
        .filter(|s| s.event == "t")
        .map(|s| s.at)
        .collect();
    let skip = arrivals.len().saturating_sub(outbound.len());
    let in_host: Vec<f64> = arrivals[skip..]
        .iter()
        .zip(&outbound)
        .map(|(arrived, sent)| ms(sent.saturating_duration_since(*arrived)))
        .collect();
    lab.close_ours("ping")?;
    let mut raws = Vec::new();
    for kind in [Kind::Plain, Kind::Hardened] {
        let (view, _) = lab.open_raw(kind, bytes)?;
        lab.inbox.messages.borrow_mut().clear();
        view.deliver(&json!({ "seq": 1, "ping": n }).to_string())?;
        let id = view.id;
        let is_t = |b: &str| b.starts_with(r#"{"type":"event","event":"t""#);
        lab.pump(Duration::from_secs(30), |_, _, inbox| {
            inbox
                .messages
                .borrow()
                .iter()
                .filter(|m| m.view == id && is_t(&m.body))
                .count()
                >= n
        });
        let samples: Vec<f64> = lab
            .inbox
            .messages
            .borrow()
            .iter()
            .filter(|m| m.view == id && is_t(&m.body))
            .filter_map(|m| {
                let v: Value = serde_json::from_str(&m.body).ok()?;
                Some(m.epoch_ms - v["data"]["t"].as_f64()?)
            })
            .collect();
        raws.push(samples);
        drop(view);
        lab.settle(Duration::from_millis(100));
    }
    let hardened = raws.pop().unwrap_or_default();
    let plain = raws.pop().unwrap_or_default();
    Ok(((ours, plain, hardened), in_host))
}
