//! The deployment files: `systemd-analyze verify` accepts the kiosk's unit with no warning
//! (installed by `scripts/setup.sh`; it needs no running systemd), and the unit keeps the
//! hardening docs/kiosk.md promises while leaving off what breaks WebKit.
#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]

use std::path::{Path, PathBuf};
use std::process::Command;

fn unit() -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/lineup-kiosk.service"),
    )
    .unwrap()
}

/// Runs `systemd-analyze verify` on `text`, with `ExecStart` pointed at the built binary (verify
/// checks that it exists); returns the exit success and what it printed.
fn verify(text: &str) -> (bool, String) {
    let dir = tempfile::tempdir().unwrap();
    let lineup = PathBuf::from(env!("CARGO_BIN_EXE_lineup"));
    let text = text.replace("/usr/local/bin/lineup", &lineup.display().to_string());
    let path = dir.path().join("lineup-kiosk.service");
    std::fs::write(&path, text).unwrap();
    let out = Command::new("systemd-analyze")
        .args(["verify", "--man=no"])
        .arg(&path)
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run systemd-analyze ({e}): scripts/setup.sh installs systemd")
        });
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), printed)
}

/// The lines that set something, without comments.
fn settings(text: &str) -> Vec<&str> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect()
}

#[test]
fn systemd_analyze_verify_accepts_the_kiosk_unit_without_a_warning() {
    let (ok, printed) = verify(&unit());
    let ours: Vec<&str> = printed
        .lines()
        .filter(|l| l.contains("lineup-kiosk.service"))
        .collect();
    assert!(ok && ours.is_empty(), "{printed}");
    // Positive controls: a misspelt key is reported, and a missing binary fails.
    let (_, printed) = verify(&unit().replace("ProtectSystem=strict", "ProtectSytem=strict"));
    assert!(printed.contains("Unknown key"), "{printed}");
    let (ok, printed) = verify(&unit().replace(
        "ExecStart=/usr/local/bin/lineup",
        "ExecStart=/nonexistent/lineup",
    ));
    assert!(!ok, "a missing binary passed: {printed}");
}

#[test]
fn the_unit_is_hardened_but_leaves_webkit_its_jit_and_sandbox() {
    let text = unit();
    let set = settings(&text);
    for wanted in [
        "ProtectSystem=strict",
        "PrivateTmp=yes",
        "NoNewPrivileges=yes",
        "Restart=always",
        "User=lineup-kiosk",
        "LoadCredential=lineup-agent-token:/etc/lineup/agent-token",
        "StateDirectory=lineup",
        "ProtectProc=invisible",
        "SystemCallFilter=@system-service @mount",
        "SystemCallErrorNumber=EPERM",
    ] {
        assert!(set.contains(&wanted), "{wanted} is missing");
    }
    for breaks_webkit in [
        "MemoryDenyWriteExecute",
        "RestrictNamespaces",
        "PrivateUsers",
    ] {
        assert!(
            !set.iter().any(|l| l.starts_with(breaks_webkit)),
            "{breaks_webkit} breaks WebKit"
        );
        assert!(
            text.contains(&format!("# - {breaks_webkit}=yes:")),
            "the unit says why {breaks_webkit} is left off"
        );
    }
}

/// Issue 30 item 6: kiosk.toml's `data_dir` is the unit's `StateDirectory=`, and
/// `Documentation=` names the file docs/kiosk.md installs, not a placeholder.
#[test]
fn the_example_configuration_and_the_unit_agree() {
    let text = unit();
    let set = settings(&text);
    let state = set
        .iter()
        .find_map(|l| l.strip_prefix("StateDirectory="))
        .expect("StateDirectory=");
    let toml =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/kiosk.toml"))
            .unwrap();
    let data_dir = toml
        .lines()
        .find_map(|l| l.trim().strip_prefix("data_dir = "))
        .expect("deploy/kiosk.toml sets [host] data_dir");
    assert_eq!(data_dir, format!("\"/var/lib/{state}\""));

    let documentation = set
        .iter()
        .find_map(|l| l.strip_prefix("Documentation="))
        .expect("Documentation=");
    assert!(
        !documentation.contains("example.invalid"),
        "{documentation}"
    );
    let installed = documentation
        .strip_prefix("file:")
        .expect("a file: URL of the installed guide");
    let guide =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/kiosk.md"))
            .unwrap();
    assert!(
        guide.contains(&format!("docs/kiosk.md {installed}")),
        "docs/kiosk.md does not install itself to {installed}"
    );
}
