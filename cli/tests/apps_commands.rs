//! `lineup apps keygen|sign|verify` as a script would run them: the exit codes and output of a
//! valid package, a signed one, a tampered one, a wrong key and an unsafe archive (R-SEC-7).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::Path;
use std::process::{Command, Output};

const LINEUP: &str = env!("CARGO_BIN_EXE_lineup");

fn lineup(args: &[&str]) -> Output {
    Command::new(LINEUP).args(args).output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn package(dir: &Path) {
    std::fs::create_dir_all(dir.join("assets")).unwrap();
    std::fs::write(
        dir.join("manifest.json"),
        r#"{"id": "com.example.dash", "name": "Dash", "version": "1.0.0",
            "surfaces": {"main": {"html": "index.html", "events": ["refresh"]}},
            "assets": ["assets/logo.png"]}"#,
    )
    .unwrap();
    std::fs::write(dir.join("index.html"), "<p>dash</p>").unwrap();
    std::fs::write(dir.join("assets/logo.png"), [0x89, b'P', b'N', b'G']).unwrap();
}

#[test]
fn keygen_sign_and_verify_a_package_and_refuse_the_rest() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = tmp.path().join("dash");
    package(&pkg);
    let p = |path: &Path| path.to_str().unwrap().to_owned();

    // Valid, unsigned.
    let run = lineup(&["apps", "verify", &p(&pkg), "--json"]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    let report: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(report["id"], "com.example.dash");
    assert_eq!(report["assets"][0]["type"], "image/png");
    assert!(report["signed_by"].is_null());
    let digest = report["digest"].as_str().unwrap().to_owned();

    // Keys: the secret is private, never overwritten.
    let key = tmp.path().join("release");
    let run = lineup(&["apps", "keygen", "--out", &p(&key)]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    let public = text(&run.stdout).trim().to_owned();
    assert!(public.starts_with("ed25519:"), "{public}");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&key).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let again = lineup(&["apps", "keygen", "--out", &p(&key)]);
    assert_eq!(again.status.code(), Some(3), "{}", text(&again.stderr));

    // Sign, verify with the right key and digest.
    let sig = tmp.path().join("dash.sig");
    let run = lineup(&[
        "apps",
        "sign",
        &p(&pkg),
        "--key",
        &p(&key),
        "--out",
        &p(&sig),
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    let run = lineup(&[
        "apps",
        "verify",
        &p(&pkg),
        "--digest",
        &digest,
        "--signature",
        &p(&sig),
        "--trusted-key",
        &public,
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    assert!(text(&run.stdout).contains(&format!("signature valid, by trusted key {public}")));
    // A trusted-keys file works the same.
    let run = lineup(&[
        "apps",
        "verify",
        &p(&pkg),
        "--signature",
        &p(&sig),
        "--trusted-key",
        &p(&tmp.path().join("release.pub")),
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));

    // Another trusted key: refused.
    let other = tmp.path().join("other");
    let other_public = text(&lineup(&["apps", "keygen", "--out", &p(&other)]).stdout)
        .trim()
        .to_owned();
    let run = lineup(&[
        "apps",
        "verify",
        &p(&pkg),
        "--signature",
        &p(&sig),
        "--trusted-key",
        &other_public,
    ]);
    assert_eq!(run.status.code(), Some(1));
    assert!(
        text(&run.stderr).contains("is not one of the trusted keys"),
        "{}",
        text(&run.stderr)
    );

    // One flipped byte in an asset: another digest, and the signature no longer verifies.
    std::fs::write(pkg.join("assets/logo.png"), [0x89, b'P', b'N', b'H']).unwrap();
    let run = lineup(&["apps", "verify", &p(&pkg), "--digest", &digest]);
    assert_eq!(run.status.code(), Some(1));
    assert!(
        text(&run.stderr).contains(&format!("not the expected {digest}")),
        "{}",
        text(&run.stderr)
    );
    let run = lineup(&[
        "apps",
        "verify",
        &p(&pkg),
        "--signature",
        &p(&sig),
        "--trusted-key",
        &public,
    ]);
    assert_eq!(run.status.code(), Some(1));
    assert!(
        text(&run.stderr).contains("does not verify"),
        "{}",
        text(&run.stderr)
    );

    // An unsafe folder: a symbolic link.
    std::os::unix::fs::symlink("/etc/passwd", pkg.join("assets/x.png")).unwrap();
    let run = lineup(&["apps", "verify", &p(&pkg)]);
    assert_eq!(run.status.code(), Some(1));
    assert!(
        text(&run.stderr).contains("is a symbolic link"),
        "{}",
        text(&run.stderr)
    );
}

fn json_of(run: &Output) -> serde_json::Value {
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    serde_json::from_slice(&run.stdout).unwrap()
}

#[test]
fn the_registry_from_the_command_line() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let data = data.to_str().unwrap();
    let p = |path: &Path| path.to_str().unwrap().to_owned();
    let v1 = tmp.path().join("v1");
    package(&v1);
    let v2 = tmp.path().join("v2");
    package(&v2);
    let manifest = std::fs::read_to_string(v2.join("manifest.json")).unwrap();
    std::fs::write(v2.join("manifest.json"), manifest.replace("1.0.0", "1.1.0")).unwrap();
    let digest = |dir: &Path| {
        json_of(&lineup(&["apps", "verify", &p(dir), "--json"]))["digest"]
            .as_str()
            .unwrap()
            .to_owned()
    };

    // Neither a digest nor a signature: a usage error, nothing created.
    let run = lineup(&["apps", "--data-dir", data, "install", &p(&v1)]);
    assert_eq!(run.status.code(), Some(2), "{}", text(&run.stderr));
    assert!(!Path::new(data).exists());
    // A wrong digest: refused, nothing installed.
    let run = lineup(&[
        "apps",
        "--data-dir",
        data,
        "install",
        &p(&v1),
        "--digest",
        &digest(&v2),
    ]);
    assert_eq!(run.status.code(), Some(1), "{}", text(&run.stderr));

    let change = json_of(&lineup(&[
        "apps",
        "--data-dir",
        data,
        "install",
        &p(&v1),
        "--digest",
        &digest(&v1),
        "--json",
    ]));
    assert_eq!(change["to"], "1.0.0");
    let first = change["revision"].as_u64().unwrap();

    // Upgrade with a signature by a trusted key.
    let key = tmp.path().join("k");
    let public = text(&lineup(&["apps", "keygen", "--out", &p(&key)]).stdout)
        .trim()
        .to_owned();
    let sig = tmp.path().join("v2.sig");
    assert!(lineup(&[
        "apps",
        "sign",
        &p(&v2),
        "--key",
        &p(&key),
        "--out",
        &p(&sig)
    ])
    .status
    .success());
    let change = json_of(&lineup(&[
        "apps",
        "--data-dir",
        data,
        "upgrade",
        &p(&v2),
        "--signature",
        &p(&sig),
        "--trusted-key",
        &public,
        "--json",
    ]));
    assert_eq!(
        (change["from"].as_str(), change["to"].as_str()),
        (Some("1.0.0"), Some("1.1.0"))
    );
    assert_eq!(change["revision"].as_u64(), Some(first + 1));

    let listed = json_of(&lineup(&["apps", "--data-dir", data, "list", "--json"]));
    assert_eq!(listed[0]["version"], "1.1.0");
    assert_eq!(listed[0]["versions"], serde_json::json!(["1.0.0", "1.1.0"]));
    let listing = listed.to_string();
    assert!(
        !listing.contains(tmp.path().to_str().unwrap()),
        "no path in {listing}"
    );

    let run = lineup(&["apps", "--data-dir", data, "rollback", "com.example.dash"]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    assert!(
        text(&run.stdout).contains("com.example.dash: 1.1.0 -> 1.0.0"),
        "{}",
        text(&run.stdout)
    );
    // Issue 30 item 12, as the README says: a rollback removes the newer version.
    let listed = json_of(&lineup(&["apps", "--data-dir", data, "list", "--json"]));
    assert_eq!(listed[0]["version"], "1.0.0");
    assert_eq!(listed[0]["versions"], serde_json::json!(["1.0.0"]));
    let run = lineup(&["apps", "--data-dir", data, "disable", "com.example.dash"]);
    assert!(
        text(&run.stdout).contains("disabled com.example.dash 1.0.0"),
        "{}",
        text(&run.stdout)
    );
    let run = lineup(&["apps", "--data-dir", data, "list"]);
    assert!(text(&run.stdout).contains(" no "), "{}", text(&run.stdout));

    // The cache is checked by `verify`: intact, then with one byte flipped.
    let run = lineup(&["apps", "--data-dir", data, "verify"]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    let cache = Path::new(data).join("packages");
    for file in std::fs::read_dir(&cache).unwrap() {
        let file = file.unwrap().path();
        let mut bytes = std::fs::read(&file).unwrap();
        let at = bytes.windows(4).position(|w| w == b"dash").unwrap();
        bytes[at] ^= 0x20;
        std::fs::write(&file, bytes).unwrap();
    }
    let run = lineup(&["apps", "--data-dir", data, "verify"]);
    assert_eq!(run.status.code(), Some(1), "{}", text(&run.stdout));
    assert!(
        text(&run.stdout).contains("FAILED com.example.dash 1.0.0"),
        "{}",
        text(&run.stdout)
    );

    let run = lineup(&["apps", "--data-dir", data, "remove", "com.example.dash"]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    let run = lineup(&["apps", "--data-dir", data, "remove", "com.example.dash"]);
    assert_eq!(run.status.code(), Some(1));
    assert!(
        text(&run.stderr).contains("app com.example.dash: not installed"),
        "{}",
        text(&run.stderr)
    );
}

/// Issue 30 item 12: `lineup --help` says what `lineup apps` does, and `lineup apps --help`
/// lists every verb with what it does; rollback's says the newer version is removed and the
/// close reason running Surfaces get.
#[test]
fn apps_help_lists_every_verb() {
    let top = text(&lineup(&["--help"]).stdout);
    let apps = top
        .lines()
        .find(|l| l.trim_start().starts_with("apps "))
        .unwrap_or_else(|| panic!("{top}"));
    for verb in ["install", "upgrade", "rollback", "remove", "list"] {
        assert!(apps.contains(verb), "{verb} in {apps}");
    }
    let help = text(&lineup(&["apps", "--help"]).stdout);
    for verb in [
        "install", "upgrade", "rollback", "enable", "disable", "remove", "forget", "list",
        "keygen", "sign", "verify",
    ] {
        let line = help
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{verb} ")))
            .unwrap_or_else(|| panic!("{verb} missing: {help}"));
        assert!(
            line.len() > verb.len() + 12,
            "{verb} has no description: {line}"
        );
    }
    let rollback = help
        .lines()
        .find(|l| l.trim_start().starts_with("rollback "))
        .unwrap();
    assert!(
        rollback.contains("removed") && rollback.contains("app_upgraded"),
        "{rollback}"
    );
}
