//! A DNS stub that records every name it is asked for, and the private mount namespace in which
//! `/etc/resolv.conf` names it: the resolver canary of the network-isolation tests (R-SEC-3).
//!
//! A test binary calls [`private_resolver`] first thing in `main`. Outside a private mount
//! namespace it runs itself again under `unshare -m` (`unshare -rm` when not root) and exits with
//! that run's status; inside, it starts the stub on a loopback address of its own and bind-mounts
//! a `resolv.conf` naming it over `/etc/resolv.conf`, for this process and every process it starts
//! (WebKit's network processes among them), and for no other process on the machine.

use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// Set in the environment of the run inside the private mount namespace.
const IN_NAMESPACE: &str = "LINEUP_TEST_PRIVATE_MOUNT_NS";

/// A UDP DNS server on `<address>:53` that answers every query `NXDOMAIN` and records its name.
#[derive(Debug)]
pub struct DnsStub {
    address: Ipv4Addr,
    names: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl DnsStub {
    /// Starts answering on `address:53`.
    pub fn start(address: Ipv4Addr) -> std::io::Result<Self> {
        let socket = UdpSocket::bind(SocketAddrV4::new(address, 53))?;
        socket.set_read_timeout(Some(Duration::from_millis(100)))?;
        let names = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let names = Arc::clone(&names);
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                let mut buf = [0u8; 1500];
                while !stop.load(Ordering::SeqCst) {
                    let Ok((len, from)) = socket.recv_from(&mut buf) else {
                        continue;
                    };
                    let query = &buf[..len];
                    if let Some(name) = question_name(query) {
                        if let Ok(mut names) = names.lock() {
                            names.push(name);
                        }
                    }
                    if let Some(reply) = nxdomain(query) {
                        let _ = socket.send_to(&reply, from);
                    }
                }
            })
        };
        Ok(Self {
            address,
            names,
            stop,
            thread: Some(thread),
        })
    }

    /// The address the stub answers on.
    pub fn address(&self) -> Ipv4Addr {
        self.address
    }

    /// Every name asked so far, lowercase, in order.
    pub fn names(&self) -> Vec<String> {
        self.names.lock().map(|n| n.clone()).unwrap_or_default()
    }

    /// The names asked so far that contain `needle`.
    pub fn asked_for(&self, needle: &str) -> Vec<String> {
        self.names()
            .into_iter()
            .filter(|n| n.contains(needle))
            .collect()
    }
}

impl Drop for DnsStub {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The name of the first question of a DNS query, lowercase and dot-separated.
fn question_name(query: &[u8]) -> Option<String> {
    let mut at = 12;
    let mut labels = Vec::new();
    loop {
        let len = usize::from(*query.get(at)?);
        if len == 0 {
            break;
        }
        if len > 63 {
            return None;
        }
        let label = query.get(at + 1..at + 1 + len)?;
        labels.push(String::from_utf8_lossy(label).to_ascii_lowercase());
        at += 1 + len;
    }
    Some(labels.join("."))
}

/// The `NXDOMAIN` answer to `query`: its header with QR and RCODE 3, and its question.
fn nxdomain(query: &[u8]) -> Option<Vec<u8>> {
    if query.len() < 12 {
        return None;
    }
    let mut reply = query.to_vec();
    reply[2] = 0x80 | (query[2] & 0x01); // QR, and RD as asked
    reply[3] = 0x80 | 0x03; // RA, NXDOMAIN
    reply[6..12].fill(0); // no answer, authority or additional records
                          // Keep the header and the question only.
    let mut at = 12;
    while at < reply.len() && reply[at] != 0 {
        at += 1 + usize::from(reply[at]);
    }
    reply.truncate((at + 5).min(reply.len()));
    Some(reply)
}

/// Gives this test process a private mount namespace in which `/etc/resolv.conf` names a
/// [`DnsStub`] of its own, and returns the stub. Call first thing in `main`, before any thread
/// starts: outside such a namespace this runs the binary again inside one and exits with its
/// status.
#[allow(clippy::print_stdout)]
pub fn private_resolver(work: &Path) -> Result<DnsStub, String> {
    if std::env::var_os(IN_NAMESPACE).is_none() {
        let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
        let root = is_root();
        // Root (CI) needs only a mount namespace; anyone else maps themselves to root in a user
        // namespace first.
        let flags = if root { "-m" } else { "-rm" };
        let status = Command::new("unshare")
            .args([flags, "--propagation", "private"])
            .arg(exe)
            .args(std::env::args_os().skip(1))
            .env(IN_NAMESPACE, "1")
            .status()
            .map_err(|e| format!("cannot run unshare (util-linux): {e}"))?;
        std::process::exit(status.code().unwrap_or(1));
    }
    // A loopback address of this process's own, so parallel runs do not meet.
    let pid = std::process::id();
    let address = Ipv4Addr::new(
        127,
        53,
        ((pid >> 8) & 0xff) as u8,
        (pid & 0xff).max(1) as u8,
    );
    let stub = DnsStub::start(address).map_err(|e| {
        format!("cannot start the DNS stub on {address}:53 (binding port 53 needs root): {e}")
    })?;
    let conf = work.join("resolv.conf");
    std::fs::write(
        &conf,
        format!("nameserver {address}\noptions timeout:1 attempts:1\n"),
    )
    .map_err(|e| format!("cannot write {}: {e}", conf.display()))?;
    let status = Command::new("mount")
        .arg("--bind")
        .arg(&conf)
        .arg("/etc/resolv.conf")
        .status()
        .map_err(|e| format!("cannot run mount: {e}"))?;
    if !status.success() {
        return Err(format!(
            "mount --bind {} /etc/resolv.conf failed: {status}",
            conf.display()
        ));
    }
    let seen = std::fs::read_to_string("/etc/resolv.conf").unwrap_or_default();
    if !seen.contains(&address.to_string()) {
        return Err(format!("/etc/resolv.conf does not name the stub: {seen}"));
    }
    Ok(stub)
}

/// Whether this process runs as root, read from `/proc/self/status` (no libc call needed).
fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|e| e == "0"))
        })
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn question_name_and_nxdomain_of_a_query() {
        // id 0x1234, RD, one question: a.example A IN
        let mut q = vec![0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0];
        q.extend_from_slice(b"\x01A\x07example\x00\x00\x01\x00\x01");
        assert_eq!(question_name(&q).as_deref(), Some("a.example"));
        let r = nxdomain(&q).unwrap();
        assert_eq!(&r[..4], &[0x12, 0x34, 0x81, 0x83]);
        assert_eq!(r.len(), q.len());
    }
}
