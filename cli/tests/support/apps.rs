//! Installing an app package in a data directory through `lineup apps`, as an operator would.
//! Shared by the CLI tests through `#[path]`, not a test itself.
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

use serde_json::Value;

const LINEUP: &str = env!("CARGO_BIN_EXE_lineup");

/// `lineup apps verify --json` of a package: its report, the digest included.
pub(crate) fn verify(pkg: &Path) -> Value {
    let run = Command::new(LINEUP)
        .args(["apps", "verify", pkg.to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    serde_json::from_slice(&run.stdout).unwrap()
}

/// Installs `pkg` in `data` by the digest `lineup apps verify` gives; returns that report.
pub(crate) fn install(data: &Path, pkg: &Path) -> Value {
    let report = verify(pkg);
    let run = Command::new(LINEUP)
        .args(["apps", "--data-dir"])
        .arg(data)
        .args(["install", pkg.to_str().unwrap(), "--digest"])
        .arg(report["digest"].as_str().unwrap())
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    report
}
