//! #28: `--engine servo` of `lineup preview` and `lineup host` runs `lineup-servo`, a binary of
//! its own; without it the refusal says how to get it, and flags it lacks are refused by name,
//! never ignored.

use std::path::Path;
use std::process::Command;

/// #28: `--engine servo` runs `lineup-servo`; without it the refusal says how to get it, and
/// flags the Servo preview lacks are refused by name, never ignored.
#[test]
fn engine_servo_is_refused_with_the_way_to_build_it_and_names_what_it_lacks() {
    let chart = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/surfaces/chart");
    let run = |extra: &[&str], servo: &str| {
        Command::new(env!("CARGO_BIN_EXE_lineup"))
            .arg("preview")
            .args(extra)
            .arg(&chart)
            .env("LINEUP_SERVO", servo)
            .env("PATH", "/nonexistent")
            .output()
            .unwrap()
    };
    let missing = run(&["--engine", "servo"], "");
    let text = String::from_utf8_lossy(&missing.stdout);
    assert_eq!(missing.status.code(), Some(1), "{text}");
    assert!(text.contains("scripts/servo.sh"), "{text}");
    let flag = run(&["--engine", "servo", "--check"], "");
    let text = String::from_utf8_lossy(&flag.stdout);
    assert_eq!(flag.status.code(), Some(2), "{text}");
    assert!(
        text.contains("--check is not available with --engine servo"),
        "{text}"
    );
    // Positive control: a `lineup-servo` that exists is run, its status passed through.
    let ran = run(&["--engine", "servo"], "/bin/true");
    assert_eq!(ran.status.code(), Some(0));
}

/// `lineup host --engine servo` starts only with `--dangerous-weaker-isolation`, refuses what
/// `lineup-servo host` cannot do (App Capabilities, `--connect`, the look flags) by name before
/// anything runs, and hands `lineup-servo host --stdio` exactly the flags it takes, its exit
/// status passed through.
#[test]
fn host_engine_servo_needs_the_dangerous_flag_and_forwards_only_what_it_takes() {
    let dir = tempfile::tempdir().unwrap();
    let seen = dir.path().join("args");
    let fake = dir.path().join("lineup-servo");
    std::fs::write(
        &fake,
        format!("#!/bin/sh\necho \"$@\" > '{}'\nexit 7\n", seen.display()),
    )
    .unwrap();
    let mut permissions = std::fs::metadata(&fake).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&fake, permissions).unwrap();
    let run = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_lineup"))
            .args(["host", "--stdio", "--engine", "servo"])
            .args(extra)
            .env("LINEUP_SERVO", &fake)
            .output()
            .unwrap()
    };
    let refusals: [(&[&str], &str); 4] = [
        (&[], "--dangerous-weaker-isolation"),
        (
            &[
                "--dangerous-weaker-isolation",
                "--enable",
                "clipboard.write",
            ],
            "the App Capability flags",
        ),
        (
            &["--dangerous-weaker-isolation", "--theme", "dark"],
            "the look flags",
        ),
        (
            &["--dangerous-weaker-isolation", "--warm-pool", "2"],
            "--warm-pool",
        ),
    ];
    for (extra, named) in refusals {
        let out = run(extra);
        let text = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {text}");
        assert!(text.contains(named), "{extra:?}: {text}");
        assert!(!seen.exists(), "{extra:?} ran lineup-servo");
    }
    // Positive control: accepted flags reach lineup-servo, and its status comes back.
    let out = run(&[
        "--dangerous-weaker-isolation",
        "--client-id",
        "chat-app",
        "--max-live-surfaces",
        "4",
        "--until-closed",
    ]);
    assert_eq!(out.status.code(), Some(7));
    let args = std::fs::read_to_string(&seen).unwrap();
    // The standard components are on by default, as on WebKit (#48).
    assert_eq!(
        args.trim(),
        "host --stdio --dangerous-weaker-isolation --client-id chat-app --max-surfaces 256 \
         --max-live-surfaces 4 --max-sessions 64 --session-idle-secs 3600 --until-closed \
         --builtin-components"
    );
    std::fs::remove_file(&seen).unwrap();
    let out = run(&["--dangerous-weaker-isolation", "--no-builtin-components"]);
    assert_eq!(out.status.code(), Some(7));
    let args = std::fs::read_to_string(&seen).unwrap();
    assert!(!args.contains("--builtin-components"), "{args}");
}
