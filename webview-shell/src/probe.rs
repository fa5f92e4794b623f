//! The fail-closed isolation probe of R-SEC-8: before the first Surface, a probe document goes
//! through the very path a Surface takes (document assembly, CSP header, custom scheme, hardened
//! view, bridge, IPC) and reports what its script could do. With the refusing network proxy on
//! (R-SEC-3), the probe page also preconnects to a loopback listener the probe owns, which must
//! see no connection; the probe view's proxy is a second listener, where it must arrive.

use std::net::SocketAddr;

use lineup_host_core::InlineBundle;
use lineup_surface_runtime::{DocumentOptions, SurfaceDocument, SurfaceServer, SurfaceToken};
use serde::Deserialize;

use crate::config::ViewConfig;
use crate::error::ShellError;
use crate::hardening::Hardening;

/// The event name the probe script reports under.
const PROBE_EVENT: &str = "lineup-probe";

/// The probe's script: what an opaque-origin, eval-less, storage-less page would see.
const PROBE_JS: &str = r#"(function () {
  var report = { origin: String(self.origin), eval: 'allowed', storage: 'allowed' };
  try { (0, eval)('1'); } catch (e) { report.eval = 'blocked'; }
  try { void window.localStorage.length; } catch (e) { report.storage = 'blocked'; }
  LineUpSurface.event('lineup-probe', report);
})();"#;

/// The probe document's server, under a fresh random token, with the default (strict) document
/// options every Surface gets; with `canary`, the page preconnects to it (no CSP directive covers
/// a preconnect, so only the network layer can stop it).
pub(crate) fn probe_server(canary: Option<SocketAddr>) -> Result<SurfaceServer, ShellError> {
    let html = match canary {
        Some(addr) => format!(
            "<link rel=\"preconnect\" href=\"http://{addr}/\"><p>lineup isolation probe</p>"
        ),
        None => "<p>lineup isolation probe</p>".to_owned(),
    };
    let bundle = InlineBundle::new(html, "", PROBE_JS).map_err(|e| ShellError::ProbeFailed {
        reason: format!("the probe bundle was refused: {e}"),
    })?;
    let document = SurfaceDocument::assemble(&bundle, &DocumentOptions::default());
    let mut token = [0u8; 16];
    getrandom::fill(&mut token).map_err(|e| ShellError::ProbeFailed {
        reason: format!("no random source for the probe's token: {e}"),
    })?;
    Ok(SurfaceServer::new(
        SurfaceToken::from_random_bytes(token),
        document,
    ))
}

/// What the probe script saw.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub(crate) struct ProbeReport {
    origin: String,
    eval: String,
    storage: String,
}

/// The bridge message the probe's report arrives in.
#[derive(Deserialize)]
struct ProbeMessage {
    namespace: String,
    #[serde(rename = "type")]
    kind: String,
    event: Option<String>,
    data: Option<ProbeReport>,
}

impl ProbeReport {
    /// The report in an IPC message, if the message is the probe's report.
    pub(crate) fn from_ipc(body: &str) -> Option<Self> {
        let message: ProbeMessage = serde_json::from_str(body).ok()?;
        (message.namespace == "lineup.surface.v1"
            && message.kind == "event"
            && message.event.as_deref() == Some(PROBE_EVENT))
        .then_some(message.data)
        .flatten()
    }
}

/// What the check of the probe's web processes' sandbox found (R-SEC-8).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum SandboxCheck {
    /// At least one process was read, and each one read runs in a namespace of its own; the
    /// others (`vanished`) ended before they could be read.
    Isolated {
        /// How many were read and found isolated.
        isolated: usize,
        /// The processes that ended before the read.
        vanished: Vec<u32>,
    },
    /// No process could be read: none was found, or each ended before the read. Nothing was
    /// learned; the probe tries again, within its bound.
    Vanished(Vec<u32>),
    /// A process runs in the host's namespace, or a live one's namespace cannot be read: the
    /// sandbox is not in effect, and the probe fails.
    Failed(String),
}

/// Whether the probe passed: the page's policy applied (opaque origin, `eval` blocked, storage
/// unavailable) and the engine reports the view hardened as configured.
pub(crate) fn verdict(
    report: &ProbeReport,
    hardening: &Hardening,
    config: &ViewConfig,
) -> Result<(), String> {
    if report.origin != "null" {
        return Err(format!(
            "the probe page's origin is '{}', not 'null': the CSP sandbox was not applied",
            report.origin
        ));
    }
    if report.eval != "blocked" {
        return Err("eval ran in the probe page: the CSP script-src was not applied".to_owned());
    }
    if report.storage != "blocked" {
        return Err("the probe page could use localStorage".to_owned());
    }
    if !hardening.own_context || !hardening.ephemeral {
        return Err("the probe view's web context is shared or not ephemeral".to_owned());
    }
    if hardening.devtools != config.devtools() {
        return Err(format!(
            "the web inspector is {} although the configuration says {}",
            on_off(hardening.devtools),
            on_off(config.devtools())
        ));
    }
    if config.web_sandbox() && !hardening.web_sandbox {
        return Err(
            "the web-process sandbox is off although the configuration asks for it".to_owned(),
        );
    }
    if hardening.popups_without_gesture || hardening.clipboard_access {
        return Err("the probe view allows popups or clipboard access".to_owned());
    }
    if hardening.console_to_stdout {
        return Err(
            "the engine writes page console messages to standard output (R-DIAG-1)".to_owned(),
        );
    }
    Ok(())
}

/// Whether the probe page's network attempts stayed in the host (R-SEC-3): `connections` is how
/// many reached the loopback listener it preconnected to.
pub(crate) fn network_verdict(connections: usize) -> Result<(), String> {
    if connections > 0 {
        return Err(format!(
            "the probe page's preconnect reached a loopback listener ({connections} connections): \
             network traffic does not go to the refusing proxy (R-SEC-3)"
        ));
    }
    Ok(())
}

fn on_off(on: bool) -> &'static str {
    if on {
        "on"
    } else {
        "off"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hardened() -> Hardening {
        Hardening {
            own_context: true,
            ephemeral: true,
            web_sandbox: true,
            devtools: false,
            popups_without_gesture: false,
            media_requires_gesture: true,
            clipboard_access: false,
            console_to_stdout: false,
        }
    }

    fn report(origin: &str, eval: &str, storage: &str) -> ProbeReport {
        ProbeReport {
            origin: origin.to_owned(),
            eval: eval.to_owned(),
            storage: storage.to_owned(),
        }
    }

    #[test]
    fn r_sec_8_probe_passes_only_with_opaque_origin_and_eval_and_storage_blocked() {
        let config = ViewConfig::default();
        let good = report("null", "blocked", "blocked");
        assert_eq!(verdict(&good, &hardened(), &config), Ok(()));
        for bad in [
            report("lineup-surface://00/", "blocked", "blocked"),
            report("null", "allowed", "blocked"),
            report("null", "blocked", "allowed"),
        ] {
            assert!(verdict(&bad, &hardened(), &config).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn r_sec_8_probe_fails_when_the_engine_is_not_hardened_as_configured() {
        let config = ViewConfig::default();
        let good = report("null", "blocked", "blocked");
        let cases = [
            Hardening {
                web_sandbox: false,
                ..hardened()
            },
            Hardening {
                devtools: true,
                ..hardened()
            },
            // R-DIAG-1: page console output on stdout would corrupt the protocol stream.
            Hardening {
                console_to_stdout: true,
                ..hardened()
            },
            Hardening {
                ephemeral: false,
                ..hardened()
            },
            Hardening {
                own_context: false,
                ..hardened()
            },
            Hardening {
                popups_without_gesture: true,
                ..hardened()
            },
        ];
        for hardening in cases {
            assert!(
                verdict(&good, &hardening, &config).is_err(),
                "{hardening:?}"
            );
        }
        let unsandboxed = ViewConfig::default().dangerous().without_web_sandbox();
        let no_sandbox = Hardening {
            web_sandbox: false,
            ..hardened()
        };
        assert_eq!(verdict(&good, &no_sandbox, &unsandboxed), Ok(()));
    }

    #[test]
    fn probe_report_is_read_from_the_bridge_event_only() {
        let body = r#"{"namespace":"lineup.surface.v1","type":"event","event":"lineup-probe","data":{"origin":"null","eval":"blocked","storage":"blocked"}}"#;
        assert_eq!(
            ProbeReport::from_ipc(body),
            Some(report("null", "blocked", "blocked"))
        );
        for other in [
            r#"{"namespace":"lineup.surface.v1","type":"ready"}"#,
            r#"{"namespace":"other","type":"event","event":"lineup-probe","data":{"origin":"null","eval":"blocked","storage":"blocked"}}"#,
            r#"{"namespace":"lineup.surface.v1","type":"event","event":"x","data":{"origin":"null","eval":"blocked","storage":"blocked"}}"#,
            "not json",
        ] {
            assert_eq!(ProbeReport::from_ipc(other), None, "{other}");
        }
    }

    #[test]
    fn probe_script_reports_under_the_probe_event_name() {
        assert!(PROBE_JS.contains(&format!("'{PROBE_EVENT}'")));
        assert!(probe_server(None).is_ok());
        assert!(probe_server(Some(SocketAddr::from(([127, 0, 0, 1], 9)))).is_ok());
    }

    #[test]
    fn r_sec_3_probe_fails_when_its_preconnect_reached_the_listener() {
        assert_eq!(network_verdict(0), Ok(()));
        assert!(network_verdict(1).is_err());
    }
}
