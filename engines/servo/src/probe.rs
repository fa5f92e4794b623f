//! The Servo engine's fail-closed probe (R-SEC-8): before any Surface is served, a probe
//! document loaded through the same path every Surface takes must show an opaque origin, a
//! blocked `eval` and unavailable storage, and the engine must read back the options and
//! preferences it was given. Until then [`ServoEngine::open`](crate::ServoEngine::open) refuses.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use lineup_webview_shell::ViewEvent;

use crate::surface::ServoSurface;

/// How long the probe may take before it fails.
pub(crate) const PROBE_TIMEOUT: Duration = Duration::from_secs(30);

/// The probe page's checks, run by its own script as a guest's would be, and reported on the
/// bridge.
pub(crate) const PROBE_JS: &str = "(function () {\
  var r = [self.origin];\
  try { (0, eval)('1'); r.push('eval ran'); } catch (e) { r.push('eval blocked'); }\
  try { localStorage.length; r.push('storage open'); } catch (e) { r.push('storage blocked'); }\
  try { indexedDB.open('x'); r.push('indexeddb open'); } catch (e) { r.push('indexeddb blocked'); }\
  LineUpSurface.event('probe', {report: r.join(',')});\
})();";

/// What the probe's page must report.
const EXPECTED: &str = "null,eval blocked,storage blocked,indexeddb blocked";

/// Where the probe stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProbeStatus {
    /// Still waiting for the probe page.
    Pending,
    /// Every check passed; Surfaces are served.
    Passed,
    /// A check failed or the probe timed out; no Surface will be served.
    Failed(String),
}

/// The running probe: its view, what its page reported and its deadline.
pub(crate) struct Probe {
    pub(crate) view: Option<ServoSurface>,
    pub(crate) report: Rc<RefCell<Option<String>>>,
    pub(crate) deadline: Instant,
    pub(crate) status: ProbeStatus,
}

impl Probe {
    /// Moves the probe on: judges once the page reported.
    pub(crate) fn advance(&mut self) {
        if self.status != ProbeStatus::Pending {
            return;
        }
        if Instant::now() > self.deadline {
            return self.fail("the probe timed out".to_owned());
        }
        let Some(report) = self.report.borrow_mut().take() else {
            return;
        };
        if report != EXPECTED {
            return self.fail(format!(
                "the probe page reported {report:?}, not {EXPECTED:?}"
            ));
        }
        match engine_read_back() {
            Ok(()) => {
                self.status = ProbeStatus::Passed;
                self.view = None;
                tracing::info!("the Servo isolation probe passed");
            }
            Err(why) => self.fail(why),
        }
    }

    fn fail(&mut self, why: String) {
        tracing::error!("the Servo isolation probe failed: {why}; no Surface will be served");
        self.status = ProbeStatus::Failed(why);
        self.view = None;
    }

    /// The probe view's event sink: the page's report, from its bridge message.
    pub(crate) fn sink(report: &Rc<RefCell<Option<String>>>) -> impl Fn(ViewEvent) + 'static {
        let report = Rc::clone(report);
        move |event| {
            if let ViewEvent::Ipc(message) = event {
                let value: serde_json::Value = serde_json::from_str(&message).unwrap_or_default();
                if value["event"] == "probe" {
                    if let Some(text) = value["data"]["report"].as_str() {
                        *report.borrow_mut() = Some(text.to_owned());
                    }
                }
            }
        }
    }
}

/// The engine's own account of what it runs with: no devtools server, no JIT, a page's panic
/// reported rather than ending the process, nothing written to disk.
fn engine_read_back() -> Result<(), String> {
    let opts = servo::opts::get();
    if opts.hard_fail || !opts.temporary_storage || opts.config_dir.is_some() {
        return Err("Servo's options are not the host's (hard_fail, storage)".to_owned());
    }
    let prefs = servo::prefs::get();
    if prefs.devtools_server_enabled || !prefs.js_disable_jit {
        return Err("Servo's preferences are not the host's (devtools, JIT)".to_owned());
    }
    Ok(())
}
