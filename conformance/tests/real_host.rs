//! The kit against the real `lineup host --stdio --builtin-components` with real WebKitGTK webviews
//! (issue 27; the built-in renderer for the `components` group): every
//! case ends as expected (expected failures still failing), the closing line counts them, and the
//! JSON report agrees. Each canary kind's positive control (HTTP, WebSocket, DNS) is among the
//! cases and must pass, and no `dns` case may be skipped: the kit runs itself in a private mount
//! namespace whose `/etc/resolv.conf` names its DNS stub (`unshare -m` as root, as in CI;
//! `unshare -rmn` otherwise), and this test fails when that namespace cannot be made.
//!
//! Needs the `lineup` binary beside this one (`cargo build -p lineup-cli` first, which a
//! workspace build does) and a display: `xvfb-run -a cargo test -p lineup-conformance --test real_host`.
//! Cases run on `LINEUP_CONFORMANCE_JOBS` threads (default 8: a case mostly waits, for a page or
//! for nothing to arrive, so eight share two cores), each with a host process that the
//! cases allowing it share, each in conversations of its own (the kit's `shared.rs`); every case
//! has its own canaries.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::PathBuf;
use std::process::Command;

#[test]
fn the_kit_passes_against_the_real_lineup_host() {
    assert!(
        std::env::var_os("DISPLAY").is_some_and(|d| !d.is_empty()),
        "DISPLAY is not set: run under `xvfb-run -a`"
    );
    let kit = PathBuf::from(env!("CARGO_BIN_EXE_lineup-conformance"));
    let lineup = kit.with_file_name("lineup");
    assert!(
        lineup.exists(),
        "{} is missing: run `cargo build -p lineup-cli` first",
        lineup.display()
    );
    let report =
        std::env::temp_dir().join(format!("lineup-conformance-{}.json", std::process::id()));
    let jobs = std::env::var("LINEUP_CONFORMANCE_JOBS").unwrap_or_else(|_| "8".to_owned());
    let out = Command::new(&kit)
        .args(["--jobs", &jobs])
        .arg("--json")
        .arg(&report)
        .arg("--")
        .arg(&lineup)
        .args(["host", "--stdio", "--builtin-components"])
        .output()
        .expect("the kit runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "the kit failed:\n{stdout}");
    let closing = stdout.lines().last().unwrap_or("");
    assert!(
        closing.starts_with(|c: char| c.is_ascii_digit()) && closing.contains(" passed, 0 failed"),
        "closing line: {closing}"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let _ = std::fs::remove_file(&report);
    let cases = doc["cases"].as_array().unwrap();
    assert!(cases.len() >= 150, "only {} cases", cases.len());
    assert_eq!(doc["failed"], 0);
    for id in [
        "exfil-canary-positive-control",
        "exfil-websocket-canary-positive-control",
        "dns-canary-positive-control",
    ] {
        let control = cases
            .iter()
            .find(|c| c["id"] == id)
            .unwrap_or_else(|| panic!("the positive control {id} did not run"));
        assert_eq!(
            control["result"], "ok",
            "the positive control {id}: {control}"
        );
    }
    let dns: Vec<_> = cases.iter().filter(|c| c["group"] == "dns").collect();
    assert!(dns.len() >= 10, "only {} dns cases", dns.len());
    for case in dns {
        assert!(
            case["result"] == "ok" || case["result"] == "xfail",
            "a dns case did not run in the namespace or failed: {case}\nDNS canary: {}",
            doc["dns_canary"]
        );
    }
    assert!(
        doc["dns_canary"]["stub"].is_string(),
        "no DNS canary: {}",
        doc["dns_canary"]
    );
}
