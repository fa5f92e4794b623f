//! The host's WebKit web processes, found in `/proc`, and the check that each runs in WebKit's
//! bubblewrap sandbox (R-SEC-8).

use std::collections::{HashMap, HashSet};
use std::fs;

use crate::probe::SandboxCheck;

/// The WebKit web processes descended from this process, by pid.
pub(crate) fn web_processes() -> HashSet<u32> {
    let mut parents: HashMap<u32, u32> = HashMap::new();
    let mut names: HashMap<u32, String> = HashMap::new();
    let Ok(entries) = fs::read_dir("/proc") else {
        return HashSet::new();
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // `pid (comm) state ppid …`; comm may itself contain spaces and parentheses.
        let Some((head, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let Some(ppid) = rest.split_whitespace().nth(1).and_then(|s| s.parse().ok()) else {
            continue;
        };
        let comm = head
            .split_once('(')
            .map(|(_, c)| c.to_owned())
            .unwrap_or_default();
        parents.insert(pid, ppid);
        names.insert(pid, comm);
    }
    let me = std::process::id();
    let descends = |mut pid: u32| {
        for _ in 0..64 {
            match parents.get(&pid) {
                Some(&ppid) if ppid == me => return true,
                Some(&ppid) if ppid > 1 => pid = ppid,
                _ => return false,
            }
        }
        false
    };
    names
        .iter()
        // The kernel cuts names to 15 bytes: "WebKitWebProces".
        .filter(|(_, name)| name.starts_with("WebKitWebProces"))
        .map(|(pid, _)| *pid)
        .filter(|pid| descends(*pid))
        .collect()
}

/// Checks that each of `pids` runs in a mount namespace of its own, as WebKit's bubblewrap
/// sandbox puts it (R-SEC-8). A process found in the host's namespace, or one whose namespace
/// cannot be read while it lives, fails the check ([`SandboxCheck::Failed`]). A process that ended
/// between the listing and the read (its `/proc` entry gone, or a zombie, whose namespace links
/// are gone) tells nothing either way; when every one ended so, or none was found, the check
/// learned nothing ([`SandboxCheck::Vanished`]), and the probe may try again.
pub(crate) fn check_web_processes_sandboxed(pids: &HashSet<u32>) -> SandboxCheck {
    let own = match fs::read_link("/proc/self/ns/mnt") {
        Ok(own) => own,
        Err(e) => {
            return SandboxCheck::Failed(format!("cannot read this process's mount namespace: {e}"))
        }
    };
    let mut isolated = 0;
    let mut vanished = Vec::new();
    let mut sorted: Vec<u32> = pids.iter().copied().collect();
    sorted.sort_unstable();
    for pid in sorted {
        match fs::read_link(format!("/proc/{pid}/ns/mnt")) {
            Ok(theirs) if theirs == own => {
                return SandboxCheck::Failed(format!(
                    "web process {pid} shares the host's mount namespace, so WebKit's bubblewrap \
                     sandbox is not in effect; install bubblewrap (bwrap) and xdg-dbus-proxy"
                ));
            }
            Ok(_) => isolated += 1,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound || !alive(pid) => vanished.push(pid),
            Err(e) => {
                return SandboxCheck::Failed(format!(
                    "cannot read the mount namespace of web process {pid}, which is running: {e}"
                ))
            }
        }
    }
    if isolated == 0 {
        return SandboxCheck::Vanished(vanished);
    }
    SandboxCheck::Isolated { isolated, vanished }
}

/// Whether `pid` is still a running process (not gone, not a zombie).
fn alive(pid: u32) -> bool {
    fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let (_, rest) = stat.rsplit_once(')')?;
            rest.split_whitespace()
                .next()
                .map(|state| state != "Z" && state != "X")
        })
        .unwrap_or(false)
}
