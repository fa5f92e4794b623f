//! Patch → onState → event back, in process, by state size: ours leg by leg, and the raw views.

use std::rc::Rc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::Triple;
use crate::lab::Lab;
use crate::phases;
use crate::raw::{Kind, RawView};
use crate::report::ms;

/// The largest `pad` for which a patch `{seq, pad}` fits the default envelope limit.
pub(super) fn max_state_pad(lab: &mut Lab) -> usize {
    let limit = crate::lab::bench_limits().max_envelope_bytes;
    let probe = lab.envelope(
        "lineup.v1.ui.patch",
        json!({ "instance_id": "patch", "state": { "seq": 999_999, "pad": "" } }),
    );
    limit.saturating_sub(probe.len() + 16)
}

pub(super) fn acked(seen: &[crate::lab::Seen], instance: &str, seq: u64) -> bool {
    seen.iter()
        .any(|s| s.instance == instance && s.event == "ack" && s.data["seq"] == seq)
}

pub(super) fn raw_acked(inbox: &crate::raw::Inbox, view: u64, seq: u64) -> bool {
    let needle = format!("\"event\":\"ack\",\"data\":{{\"seq\":{seq}}}");
    inbox
        .messages
        .borrow()
        .iter()
        .any(|m| m.view == view && m.body.contains(&needle))
}

/// Patch → onState → event back, `n` times with a state of `pad` bytes: ours, plain, hardened,
/// and where the time of ours goes, leg by leg.
pub(super) fn patch_samples(
    lab: &mut Lab,
    n: usize,
    pad: usize,
    bytes: &Rc<Vec<u8>>,
    app: &Value,
) -> Result<(Triple, Value), String> {
    let padding = "p".repeat(pad);
    let warmup = 3;
    lab.open_ours("patch", app, None)?;
    let mut ours = Vec::new();
    let mut legs: Vec<Vec<f64>> = Vec::new();
    for seq in 0..(n + warmup) as u64 {
        let bytes = lab.envelope(
            "lineup.v1.ui.patch",
            json!({ "instance_id": "patch", "state": { "seq": seq, "pad": padding } }),
        );
        lab.rec.events.borrow_mut().clear();
        lab.phases.take();
        let start = Instant::now();
        lab.send(bytes)?;
        if !lab.pump(Duration::from_secs(10), |_, rec, _| {
            acked(&rec.events.borrow(), "patch", seq)
        }) {
            return Err(format!("patch {seq} was not acknowledged"));
        }
        let at = lab
            .rec
            .events
            .borrow()
            .iter()
            .find(|s| s.event == "ack")
            .map(|s| s.at);
        let at = at.unwrap_or_else(Instant::now);
        if seq >= warmup as u64 {
            ours.push(ms(at.duration_since(start)));
            legs.extend(phases::patch_legs(&lab.phases.take(), start, at));
        }
    }
    lab.close_ours("patch")?;
    let mut raws = Vec::new();
    for kind in [Kind::Plain, Kind::Hardened] {
        let (view, _) = lab.open_raw(kind, bytes)?;
        raws.push(raw_patches(lab, &view, n, warmup, &padding)?);
        drop(view);
        lab.settle(Duration::from_millis(100));
    }
    let hardened = raws.pop().unwrap_or_default();
    let plain = raws.pop().unwrap_or_default();
    let profile = phases::patch_profile(&legs, &ours, &hardened);
    Ok(((ours, plain, hardened), profile))
}

/// Patch → onState → event back on raw view `view`, `n` times after `warmup`.
fn raw_patches(
    lab: &mut Lab,
    view: &RawView,
    n: usize,
    warmup: usize,
    padding: &str,
) -> Result<Vec<f64>, String> {
    let mut out = Vec::new();
    let id = view.id;
    for seq in 0..(n + warmup) as u64 {
        let state = json!({ "seq": seq, "pad": padding }).to_string();
        lab.inbox.messages.borrow_mut().clear();
        let start = Instant::now();
        view.deliver(&state)?;
        if !lab.pump(Duration::from_secs(10), |_, _, inbox| {
            raw_acked(inbox, id, seq)
        }) {
            return Err(format!("raw patch {seq} was not acknowledged"));
        }
        let at = lab.inbox.messages.borrow().last().map(|m| m.at);
        if seq >= warmup as u64 {
            out.push(ms(at.unwrap_or_else(Instant::now).duration_since(start)));
        }
    }
    Ok(out)
}
