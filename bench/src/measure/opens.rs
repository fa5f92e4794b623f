//! Open → ready: cold opens of ours and the raw views, and opens from the warm pool.

use std::rc::Rc;
use std::time::{Duration, Instant};

use lineup_host::HostBuilder;
use serde_json::Value;

use super::Triple;
use crate::lab::Lab;
use crate::phases;
use crate::raw::Kind;
use crate::report::ms;

/// Cold opens of ours, plain and hardened, one at a time, each closed before the next.
pub(super) fn open_samples(
    lab: &mut Lab,
    n: usize,
    app: &Value,
    bytes: &Rc<Vec<u8>>,
) -> Result<Triple, String> {
    let (mut ours, mut plain, mut hardened) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..n {
        let instance = format!("open{i}");
        lab.phases.take();
        let start = Instant::now();
        ours.push(ms(lab.open_ours(&instance, app, None)?));
        lab.profile.push(open_profile(lab, start, &instance, true));
        lab.close_ours(&instance)?;
        lab.settle(Duration::from_millis(150));
        for (kind, out) in [(Kind::Plain, &mut plain), (Kind::Hardened, &mut hardened)] {
            let (view, took) = lab.open_raw(kind, bytes)?;
            out.push(ms(took));
            drop(view);
            lab.settle(Duration::from_millis(150));
        }
    }
    Ok((ours, plain, hardened))
}

/// Opens from the warm pool of a host of its own (`warm_pool(1)`), each once the pool view has
/// been started and has settled, each closed before the next.
pub(super) fn warm_samples(lab: &mut Lab, n: usize, app: &Value) -> Result<Vec<f64>, String> {
    // The pool-less host goes; its Surfaces are all closed by now.
    lab.host = None;
    lab.settle(Duration::from_millis(300));
    lab.start_host(HostBuilder::new().warm_pool(1))?;
    lab.wait_probe()?;
    let mut out = Vec::new();
    for i in 0..n {
        let refilled = lab.pump(Duration::from_secs(30), |h, _, _| {
            h.is_some_and(|h| h.pooled_views() >= 1)
        });
        if !refilled {
            return Err("the warm pool was not refilled".to_owned());
        }
        lab.settle(Duration::from_millis(400));
        let instance = format!("warm{i}");
        lab.phases.take();
        let start = Instant::now();
        out.push(ms(lab.open_ours(&instance, app, None)?));
        lab.warm_profile
            .push(open_profile(lab, start, &instance, false));
        lab.close_ours(&instance)?;
    }
    Ok(out)
}

/// The phases of the open of `instance` that started at `start`, from the marks the lab took
/// ([`phases::phase_offsets`]).
fn open_profile(lab: &Lab, start: Instant, instance: &str, unlabelled: bool) -> Vec<(String, f64)> {
    let url = lab
        .rec
        .keys
        .borrow()
        .get(instance)
        .and_then(|k| lab.host.as_ref().and_then(|h| h.view(k)))
        .map(|v| v.url().to_owned());
    let ready = lab.rec.ready.borrow().get(instance).copied();
    phases::phase_offsets(lab.phases.take(), url.as_deref(), ready, start, unlabelled)
}
