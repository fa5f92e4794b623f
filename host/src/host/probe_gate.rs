//! The isolation probe's gate on the host's side (R-SEC-8): a Surface opened while the probe
//! runs gets its view at once, its document held until the verdict; the verdict is taken once,
//! and when it failed, the Surfaces held are to close unserved.

use lineup_host_core::SurfaceKey;
use lineup_webview_shell::ProbeStatus;

/// What the isolation probe's verdict means for the views, once.
pub(super) enum ProbeNews {
    /// Still running, or reported already.
    None,
    /// Passed: the held documents are served.
    Passed,
    /// Failed: these views' documents were never served; they are to close.
    Failed {
        /// The check that failed.
        reason: String,
        /// The Surfaces opened while the probe ran.
        held: Vec<SurfaceKey>,
    },
}

/// The Surfaces whose views were created while the probe ran, their documents held, and
/// whether the probe's verdict was taken.
///
/// Invariants: the verdict is taken once (news of it comes once); from then on no Surface is
/// held; a held Surface was opened while the probe ran and has not closed since.
#[derive(Default)]
pub(super) struct ProbeGate {
    held: Vec<SurfaceKey>,
    reported: bool,
}

impl ProbeGate {
    /// Whether the probe's verdict has been taken.
    pub(super) fn reported(&self) -> bool {
        self.reported
    }

    /// Surface `key` opens: while the probe runs, its document waits for the verdict.
    pub(super) fn hold(&mut self, key: &SurfaceKey) {
        if !self.reported {
            self.held.push(key.clone());
        }
    }

    /// Surface `key` closed: nothing of it waits for the verdict.
    pub(super) fn forget(&mut self, key: &SurfaceKey) {
        self.held.retain(|k| k != key);
    }

    /// Takes the probe's verdict once it is there, reading it with `status` only until then.
    pub(super) fn poll(&mut self, status: impl FnOnce() -> ProbeStatus) -> ProbeNews {
        if self.reported {
            return ProbeNews::None;
        }
        match status() {
            ProbeStatus::Pending => ProbeNews::None,
            ProbeStatus::Passed => {
                self.reported = true;
                self.held.clear();
                ProbeNews::Passed
            }
            ProbeStatus::Failed(reason) => {
                self.reported = true;
                ProbeNews::Failed {
                    reason,
                    held: std::mem::take(&mut self.held),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::rig_tests::{Rig, Setup};

    /// What `news` says, as words a table can compare.
    fn words(news: ProbeNews) -> String {
        match news {
            ProbeNews::None => "none".into(),
            ProbeNews::Passed => "passed".into(),
            ProbeNews::Failed { reason, held } => {
                let held: Vec<&str> = held.iter().map(|k| k.instance.as_str()).collect();
                format!("failed {reason} {}", held.join(","))
            }
        }
    }

    #[test]
    fn the_verdict_is_taken_once_with_the_surfaces_held_while_the_probe_ran_and_still_open() {
        let mut rig = Rig::new(Setup::default());
        let [a, b, c] = ["a", "b", "c"].map(|instance| {
            rig.open(instance);
            rig.key(instance)
        });
        let failed = || ProbeStatus::Failed("no sandbox".into());
        // (the verdict at each poll, what each poll says)
        let table: [(&[ProbeStatus], &[&str]); 3] = [
            (
                &[ProbeStatus::Pending, ProbeStatus::Passed, failed()],
                &["none", "passed", "none"],
            ),
            (
                &[failed(), ProbeStatus::Passed],
                &["failed no sandbox a,c", "none"],
            ),
            (
                &[ProbeStatus::Pending, failed()],
                &["none", "failed no sandbox a,c"],
            ),
        ];
        for (verdicts, said) in table {
            let mut gate = ProbeGate::default();
            gate.hold(&a);
            gate.hold(&b);
            gate.forget(&b);
            gate.hold(&c);
            let heard: Vec<String> = verdicts
                .iter()
                .map(|verdict| words(gate.poll(|| verdict.clone())))
                .collect();
            assert_eq!(heard, said, "{verdicts:?}");
            assert!(gate.reported());
            gate.hold(&b);
            assert!(
                gate.held.is_empty(),
                "nothing is held once the verdict is in"
            );
        }
    }
}
