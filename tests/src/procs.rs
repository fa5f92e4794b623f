//! The processes of this test process (WebKit's web and network processes, the sandbox's helpers),
//! found through `/proc`, and how to end one.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

/// The WebKit web processes (`WebKitWebProcess`) descended from this process.
pub fn web_processes() -> HashSet<u32> {
    web_processes_of(std::process::id())
}

/// The WebKit web processes (`WebKitWebProcess`) descended from process `root`.
pub fn web_processes_of(root: u32) -> HashSet<u32> {
    let mut parent: HashMap<u32, u32> = HashMap::new();
    let mut web = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // `pid (comm) state ppid …`; comm may itself contain spaces and parentheses.
        let Some((head, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let Some(ppid) = rest.split_whitespace().nth(1).and_then(|s| s.parse().ok()) else {
            continue;
        };
        parent.insert(pid, ppid);
        // comm is cut to 15 bytes.
        if head.contains("(WebKitWebProces") {
            web.push(pid);
        }
    }
    let me = root;
    web.into_iter()
        .filter(|pid| {
            let mut p = *pid;
            for _ in 0..64 {
                match parent.get(&p) {
                    Some(&pp) if pp == me => return true,
                    Some(&pp) if pp > 1 => p = pp,
                    _ => return false,
                }
            }
            false
        })
        .collect()
}

/// Every process descended from this one, by pid, with its name (`comm`, cut to 15 bytes by the
/// kernel: `WebKitWebProces`, `WebKitNetworkPr`, `bwrap`, `xdg-dbus-proxy`). Zombies not yet
/// reaped count: they are still entries in the process table.
pub fn descendants() -> HashMap<u32, String> {
    let mut parent: HashMap<u32, u32> = HashMap::new();
    let mut names: HashMap<u32, String> = HashMap::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let (Some((head, rest)), Some(open)) = (stat.rsplit_once(')'), stat.find('(')) else {
            continue;
        };
        let Some(ppid) = rest.split_whitespace().nth(1).and_then(|s| s.parse().ok()) else {
            continue;
        };
        parent.insert(pid, ppid);
        names.insert(pid, head[open + 1..].to_owned());
    }
    let me = std::process::id();
    names
        .into_iter()
        .filter(|(pid, _)| {
            let mut p = *pid;
            for _ in 0..64 {
                match parent.get(&p) {
                    Some(&pp) if pp == me => return true,
                    Some(&pp) if pp > 1 => p = pp,
                    _ => return false,
                }
            }
            false
        })
        .collect()
}

/// Sends SIGKILL to `pid`.
pub fn kill(pid: u32) -> Result<(), String> {
    let status = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .map_err(|e| format!("cannot run kill: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("kill -9 {pid} failed: {status}"))
    }
}

/// The mount namespace of process `pid` (`"self"` for this one).
pub fn mount_namespace(pid: &str) -> Result<PathBuf, String> {
    std::fs::read_link(format!("/proc/{pid}/ns/mnt")).map_err(|e| format!("ns of {pid}: {e}"))
}
