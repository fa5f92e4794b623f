//! `lineup preview --engine servo` and `lineup host --engine servo`: the Servo engine's
//! `lineup-servo preview` and `lineup-servo host --stdio`, a binary of its own (engines/servo,
//! built by `scripts/servo.sh`): the `lineup` binary links the store's SQLite, which cannot
//! share a lock file with Servo's (decision 0029).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The web engine Surfaces are shown with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Engine {
    /// WebKitGTK, this binary's own.
    Webkit,
    /// Servo, through `lineup-servo`.
    Servo,
}

/// Where `lineup-servo` is: `$LINEUP_SERVO`, else beside this binary, else on `PATH`.
fn servo_binary() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("LINEUP_SERVO").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(path));
    }
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join("lineup-servo")))
        .filter(|p| p.is_file());
    beside.or_else(|| {
        std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|dir| dir.join("lineup-servo"))
                .find(|p| p.is_file())
        })
    })
}

/// Runs `lineup-servo preview SOURCE [--screenshot FILE]` and returns its exit status.
pub(crate) fn servo_preview(
    source: &Path,
    screenshot: Option<&Path>,
) -> Result<u8, Box<dyn std::error::Error>> {
    let mut args = vec![OsString::from("preview"), source.into()];
    if let Some(file) = screenshot {
        args.extend([OsString::from("--screenshot"), file.into()]);
    }
    run_servo(args)
}

/// Runs `lineup-servo host --stdio --dangerous-weaker-isolation` with `flags` (the `lineup
/// host` flags it takes, checked by the caller) on this process's standard streams, and returns
/// its exit status.
pub(crate) fn servo_host(flags: Vec<OsString>) -> Result<u8, Box<dyn std::error::Error>> {
    let mut args = vec![
        OsString::from("host"),
        "--stdio".into(),
        "--dangerous-weaker-isolation".into(),
    ];
    args.extend(flags);
    run_servo(args)
}

fn run_servo(args: Vec<OsString>) -> Result<u8, Box<dyn std::error::Error>> {
    let binary = servo_binary().ok_or(
        "--engine servo needs lineup-servo, which this build does not have: build it with \
         `bash scripts/servo.sh build` (1.5 to 2 hours from cold) and put it beside lineup, on \
         PATH, or name it in LINEUP_SERVO",
    )?;
    let status = std::process::Command::new(&binary)
        .args(args)
        .status()
        .map_err(|e| format!("{}: {e}", binary.display()))?;
    Ok(status
        .code()
        .and_then(|c| u8::try_from(c).ok())
        .unwrap_or(1))
}
