//! The machine the numbers were taken on: CPU, cores, memory, kernel, WebKitGTK, build.

use std::process::Command;

use serde_json::{json, Value};

/// The machine the numbers were taken on.
pub(super) fn machine() -> Value {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .and_then(|l| l.split(':').nth(1))
        .map(|s| s.trim().to_owned())
        .unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let memory = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .map(|s| s.trim().to_owned())
        .unwrap_or_default();
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    json!({
        "cpu": model,
        "cores": cores,
        "memory": memory,
        "kernel": kernel.trim(),
        "webkitgtk": webkitgtk_version(),
        "build": if cfg!(debug_assertions) { "debug" } else { "release" },
    })
}

/// The WebKitGTK version, as pkg-config knows it.
fn webkitgtk_version() -> String {
    Command::new("pkg-config")
        .args(["--modversion", "webkit2gtk-4.1"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_else(|| "?".to_owned())
}
