//! Memory of a process tree from `/proc`: the PSS of a process and every descendant (web,
//! network, bwrap, D-Bus proxy processes), from `/proc/PID/smaps_rollup`.

use std::collections::{BTreeMap, HashMap};

/// The parent of every process, from `/proc/*/stat`.
fn parents() -> HashMap<u32, (u32, String)> {
    let mut map = HashMap::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return map;
    };
    for entry in dir.flatten() {
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
        // `pid (comm) state ppid ...`; comm may hold spaces and parentheses.
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let comm = stat[open + 1..close].to_owned();
        let ppid = stat[close + 1..]
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        map.insert(pid, (ppid, comm));
    }
    map
}

/// `root` and all its descendants, with their command names.
pub(crate) fn tree(root: u32) -> Vec<(u32, String)> {
    let all = parents();
    let mut out = Vec::new();
    let mut frontier = vec![root];
    while let Some(pid) = frontier.pop() {
        let comm = all.get(&pid).map(|(_, c)| c.clone()).unwrap_or_default();
        out.push((pid, comm));
        for (child, (ppid, _)) in &all {
            if *ppid == pid {
                frontier.push(*child);
            }
        }
    }
    out
}

/// A `kB` field of a `/proc` file.
fn field_kib(text: &str, name: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix(name))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

/// The PSS of one process and its anonymous, file-backed and shared parts (`Pss`, `Pss_Anon`,
/// `Pss_File`, `Pss_Shmem` of `/proc/PID/smaps_rollup`), KiB.
fn pss_parts_kib(pid: u32) -> [u64; 4] {
    let text = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).unwrap_or_default();
    ["Pss:", "Pss_Anon:", "Pss_File:", "Pss_Shmem:"].map(|name| field_kib(&text, name).unwrap_or(0))
}

/// The RSS of this process, KiB.
pub(crate) fn own_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|t| field_kib(&t, "VmRSS:"))
        .unwrap_or(0)
}

/// The memory of `root`'s whole tree: its total PSS, how many processes of each name it has,
/// and by name the summed PSS and its anonymous, file-backed and shared parts, KiB.
pub(crate) struct TreeMemory {
    pub(crate) pss_kib: u64,
    pub(crate) counts: HashMap<String, u64>,
    pub(crate) by_name: BTreeMap<String, [u64; 4]>,
}

/// Reads [`TreeMemory`] of `root` and its descendants, once each.
pub(crate) fn tree_memory(root: u32) -> TreeMemory {
    let mut memory = TreeMemory {
        pss_kib: 0,
        counts: HashMap::new(),
        by_name: BTreeMap::new(),
    };
    for (pid, comm) in tree(root) {
        let parts = pss_parts_kib(pid);
        memory.pss_kib += parts[0];
        *memory.counts.entry(comm.clone()).or_insert(0) += 1;
        let sum = memory.by_name.entry(comm).or_insert([0; 4]);
        for (total, part) in sum.iter_mut().zip(parts) {
            *total += part;
        }
    }
    memory
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }
}
