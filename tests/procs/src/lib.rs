//! The one `/proc` walker of lineup-host's tests and bench (Linux): the process table
//! (`/proc/PID/stat`), the descendants of a process, the WebKit web processes under one, and the
//! memory of a process tree (`/proc/PID/smaps_rollup`, `/proc/PID/status`).
//!
//! `lineup-tests` re-exports it as `lineup_tests::procs`; `lineup-bench` measures memory with it.
//! Everything is read once per call, so a result is a snapshot: a process may be gone (or a pid
//! reused) by the time the caller looks at it.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;

/// The kernel's name (`comm`) of a WebKit web process: `WebKitWebProcess`, cut to 15 bytes.
pub const WEB_PROCESS: &str = "WebKitWebProces";

/// A row of the process table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Process {
    /// The parent's pid (0 for the kernel's own).
    pub ppid: u32,
    /// `comm`, cut to 15 bytes by the kernel: `WebKitWebProces`, `WebKitNetworkPr`, `bwrap`,
    /// `xdg-dbus-proxy`.
    pub name: String,
}

/// Every process visible in `/proc`, by pid. Zombies not yet reaped count: they are still
/// entries in the process table.
#[derive(Clone, Debug, Default)]
pub struct ProcessTable {
    processes: HashMap<u32, Process>,
}

impl ProcessTable {
    /// Reads `/proc/*/stat` once; a process that ends meanwhile is left out.
    pub fn read() -> Self {
        let mut processes = HashMap::new();
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
            if let Some(process) = parse_stat(&stat) {
                processes.insert(pid, process);
            }
        }
        Self { processes }
    }

    /// The row of `pid`, if it was there.
    pub fn get(&self, pid: u32) -> Option<&Process> {
        self.processes.get(&pid)
    }

    /// Whether `pid` descends from `root` (a child, a grandchild, …; not `root` itself).
    pub fn descends_from(&self, pid: u32, root: u32) -> bool {
        let mut at = pid;
        // Bounded, in case of a pid reused into a loop between two reads.
        for _ in 0..64 {
            match self.processes.get(&at) {
                Some(p) if p.ppid == root => return true,
                Some(p) if p.ppid > 1 => at = p.ppid,
                _ => return false,
            }
        }
        false
    }

    /// Every process descended from `root` (not `root` itself), by pid, with its name.
    pub fn descendants(&self, root: u32) -> HashMap<u32, String> {
        self.processes
            .iter()
            .filter(|(pid, _)| self.descends_from(**pid, root))
            .map(|(pid, p)| (*pid, p.name.clone()))
            .collect()
    }

    /// `root` (first) and every process descended from it, with their names; `root`'s name is
    /// empty if it was not in the table.
    pub fn tree(&self, root: u32) -> Vec<(u32, String)> {
        let name = self.get(root).map(|p| p.name.clone()).unwrap_or_default();
        let mut tree = vec![(root, name)];
        tree.extend(self.descendants(root));
        tree
    }
}

/// The parent and name of `/proc/PID/stat`'s text: `pid (comm) state ppid …`, where comm may
/// itself hold spaces and parentheses.
fn parse_stat(stat: &str) -> Option<Process> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let ppid = stat
        .get(close + 1..)?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    Some(Process {
        ppid,
        name: stat.get(open + 1..close)?.to_owned(),
    })
}

/// Every process descended from this one, by pid, with its name. Zombies not yet reaped count.
pub fn descendants() -> HashMap<u32, String> {
    ProcessTable::read().descendants(std::process::id())
}

/// `root` (first) and all its descendants, with their names.
pub fn tree(root: u32) -> Vec<(u32, String)> {
    ProcessTable::read().tree(root)
}

/// The WebKit web processes (`WebKitWebProcess`) descended from this process.
pub fn web_processes() -> HashSet<u32> {
    web_processes_of(std::process::id())
}

/// The WebKit web processes (`WebKitWebProcess`) descended from process `root`.
pub fn web_processes_of(root: u32) -> HashSet<u32> {
    ProcessTable::read()
        .descendants(root)
        .into_iter()
        .filter(|(_, name)| name == WEB_PROCESS)
        .map(|(pid, _)| pid)
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

/// A `kB` field (`VmRSS:`, `Pss:`, …) of a `/proc` file's text.
fn field_kib(text: &str, name: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix(name))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

/// The resident set size of process `pid` (`VmRSS` of `/proc/PID/status`), KiB; 0 when it cannot
/// be read (the process is gone).
pub fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|t| field_kib(&t, "VmRSS:"))
        .unwrap_or(0)
}

/// The resident set size of this process, KiB.
pub fn own_rss_kib() -> u64 {
    rss_kib(std::process::id())
}

/// The PSS of one process and its anonymous, file-backed and shared parts (`Pss`, `Pss_Anon`,
/// `Pss_File`, `Pss_Shmem` of `/proc/PID/smaps_rollup`), KiB; zeros when it cannot be read.
pub fn pss_parts_kib(pid: u32) -> [u64; 4] {
    let text = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).unwrap_or_default();
    ["Pss:", "Pss_Anon:", "Pss_File:", "Pss_Shmem:"].map(|name| field_kib(&text, name).unwrap_or(0))
}

/// The memory of a whole process tree.
#[derive(Clone, Debug, Default)]
pub struct TreeMemory {
    /// The PSS of every process of the tree, summed, KiB.
    pub pss_kib: u64,
    /// How many processes of each name the tree has.
    pub counts: HashMap<String, u64>,
    /// By name, the summed PSS and its anonymous, file-backed and shared parts
    /// ([`pss_parts_kib`]), KiB.
    pub by_name: BTreeMap<String, [u64; 4]>,
}

/// Reads [`TreeMemory`] of `root` and its descendants, once each.
pub fn tree_memory(root: u32) -> TreeMemory {
    let mut memory = TreeMemory::default();
    for (pid, name) in tree(root) {
        let parts = pss_parts_kib(pid);
        memory.pss_kib += parts[0];
        *memory.counts.entry(name.clone()).or_insert(0) += 1;
        let sum = memory.by_name.entry(name).or_insert([0; 4]);
        for (total, part) in sum.iter_mut().zip(parts) {
            *total += part;
        }
    }
    memory
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn stat_lines_with_awkward_names_parse() {
        let p = parse_stat("42 (a (b) c) S 7 42 42 0 -1").unwrap();
        assert_eq!(
            p,
            Process {
                ppid: 7,
                name: "a (b) c".to_owned()
            }
        );
        assert_eq!(parse_stat("42 no parentheses"), None);
    }

    #[test]
    fn a_child_is_a_descendant_and_in_the_tree() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let me = std::process::id();
        let table = ProcessTable::read();
        let found = descendants();
        let tree = tree(me);
        let _ = child.kill();
        let _ = child.wait();
        assert!(table.descends_from(child.id(), me));
        assert!(!table.descends_from(me, child.id()));
        assert_eq!(found.get(&child.id()).map(String::as_str), Some("sleep"));
        assert_eq!(tree[0].0, me);
        assert!(tree.iter().any(|(pid, _)| *pid == child.id()));
        assert!(web_processes().is_empty(), "no webview here");
    }

    #[test]
    fn own_tree_has_a_pss() {
        let memory = tree_memory(std::process::id());
        assert!(memory.pss_kib > 0);
        assert!(!memory.counts.is_empty());
        assert!(own_rss_kib() > 0);
        assert!(
            memory.by_name.values().any(|p| p[0] > 0 && p[2] > 0),
            "no file-backed PSS: {:?}",
            memory.by_name
        );
        assert!(mount_namespace("self").is_ok());
    }
}
