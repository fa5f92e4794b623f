//! The DNS canary: a stub resolver that answers every query `NXDOMAIN` and records the name asked,
//! and the private mount namespace in which `/etc/resolv.conf` names it, for the runner and every
//! host process it starts (the web engine's network processes among them) and for no other
//! process on the machine.
//!
//! The runner calls [`private_resolver`] before it runs a case that needs the DNS canary. Outside
//! the namespace it runs itself again under `unshare` and does not return: as root (CI) in a new
//! mount namespace (`unshare -m`); otherwise in a new user, mount and network namespace
//! (`unshare -rmn`), because binding port 53 needs `CAP_NET_BIND_SERVICE` over the network
//! namespace, which a user namespace's root has only over a network namespace of its own; the
//! loopback interface of that namespace is brought up with `ip`. Inside, it starts the stub on a
//! loopback address of its own and bind-mounts a `resolv.conf` naming it over `/etc/resolv.conf`.
//! When the namespace cannot be made, it says why, and the runner skips the cases that need it.
//!
//! The DNS parsing is the same as `lineup-tests`' stub (`tests/src/dns.rs`), kept here so that the
//! kit links no lineup crate.

use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// Set in the environment of the run inside the private namespace: the mount namespace of the run
/// that made it (`mnt:[…]`), then what was unshared (`mount` or `user,mount,net`).
pub(crate) const IN_NAMESPACE: &str = "LINEUP_CONFORMANCE_RESOLVER_NS";

/// The domain under which each case gets a name of its own (`<case id>.canary.lineup.test`).
const DOMAIN: &str = "canary.lineup.test";

/// A UDP DNS server on `<address>:53` that answers every query `NXDOMAIN` and records its name.
#[derive(Debug)]
pub(crate) struct DnsStub {
    at: SocketAddrV4,
    names: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl DnsStub {
    /// Starts answering on `address:53`.
    pub(crate) fn start(address: Ipv4Addr) -> std::io::Result<Self> {
        Self::start_on(SocketAddrV4::new(address, 53))
    }

    fn start_on(at: SocketAddrV4) -> std::io::Result<Self> {
        let socket = UdpSocket::bind(at)?;
        socket.set_read_timeout(Some(Duration::from_millis(100)))?;
        let at = match socket.local_addr()? {
            std::net::SocketAddr::V4(at) => at,
            std::net::SocketAddr::V6(_) => at,
        };
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
                    // Recorded before the answer, so a lookup that has returned is seen.
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
            at,
            names,
            stop,
            thread: Some(thread),
        })
    }

    /// The address the stub answers on.
    pub(crate) fn address(&self) -> Ipv4Addr {
        *self.at.ip()
    }

    /// Every name asked so far, lowercase, in order.
    pub(crate) fn names(&self) -> Vec<String> {
        self.names.lock().map(|n| n.clone()).unwrap_or_default()
    }

    /// The names asked so far that are `name`, under it, or it with a search domain appended.
    pub(crate) fn asked_for(&self, name: &str) -> Vec<String> {
        self.names()
            .into_iter()
            .filter(|n| is_or_holds(n, name))
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

/// The host name of a case's DNS canary: its id (cut into labels of at most 63 bytes) under
/// `canary.lineup.test`.
pub(crate) fn name_for(case_id: &str) -> String {
    let id = case_id.to_ascii_lowercase();
    let labels: Vec<&str> = id
        .as_bytes()
        .chunks(63)
        .filter_map(|c| std::str::from_utf8(c).ok())
        .collect();
    format!("{}.{DOMAIN}", labels.join("."))
}

/// Whether the asked name `asked` is `name`, a name under it, or `name` with a search domain
/// appended: label boundaries on both sides, so `dns-fetch` does not match `x-dns-fetch`.
fn is_or_holds(asked: &str, name: &str) -> bool {
    let asked = asked.trim_end_matches('.');
    asked == name
        || asked.ends_with(&format!(".{name}"))
        || asked.starts_with(&format!("{name}."))
        || asked.contains(&format!(".{name}."))
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
    let mut at = 12;
    while at < reply.len() && reply[at] != 0 {
        at += 1 + usize::from(reply[at]);
    }
    // Keep the header and the question only.
    reply.truncate((at + 5).min(reply.len()));
    Some(reply)
}

/// The runner's DNS canary: outside the private namespace, runs this program again inside one
/// (and does not return unless that cannot be done); inside, starts the stub and names it in
/// `/etc/resolv.conf`. `Err` says why there is no DNS canary in this run.
pub(crate) fn private_resolver() -> Result<DnsStub, String> {
    match std::env::var(IN_NAMESPACE) {
        Ok(marker) => inside(&marker),
        Err(_) => Err(enter()),
    }
}

/// Runs this program again in a private namespace, with the same arguments; returns only when
/// that cannot be done, with why.
fn enter() -> String {
    use std::os::unix::process::CommandExt as _;
    let outer = match mount_namespace("self") {
        Ok(ns) => ns,
        Err(e) => return e,
    };
    let root = is_root();
    let (flags, unshared): (&[&str], &str) = if root {
        (&["--mount"], "mount")
    } else {
        (&["--map-root-user", "--mount", "--net"], "user,mount,net")
    };
    // Ask first, so that a refusal is told apart from the kit's own exit status.
    match Command::new("unshare")
        .args(flags)
        .args(["--propagation", "private", "true"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .output()
    {
        Err(e) => return format!("cannot run unshare (util-linux): {e}"),
        Ok(out) if !out.status.success() => {
            return format!(
                "unshare {} cannot make a private namespace here: {}",
                flags.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            )
        }
        Ok(_) => {}
    }
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => return format!("current_exe: {e}"),
    };
    let err = Command::new("unshare")
        .args(flags)
        .args(["--propagation", "private"])
        .arg(exe)
        .args(std::env::args_os().skip(1))
        .env(IN_NAMESPACE, format!("{outer} {unshared}"))
        .exec();
    format!("cannot run unshare (util-linux): {err}")
}

/// Inside the private namespace: the loopback interface up when the network namespace is new,
/// the stub on an address of its own, and `/etc/resolv.conf` naming it.
fn inside(marker: &str) -> Result<DnsStub, String> {
    let (outer, unshared) = marker.split_once(' ').unwrap_or((marker, ""));
    let own = mount_namespace("self")?;
    // Never bind over the machine's own resolv.conf: the mount namespace must be another one
    // than the run that made it (and than init's, where that can be read).
    if !outer.starts_with("mnt:[")
        || own == outer
        || mount_namespace("1").is_ok_and(|init| init == own)
    {
        return Err(format!(
            "{IN_NAMESPACE} is set ({marker:?}) but this run's mount namespace {own} is not a \
             private one: /etc/resolv.conf is left alone"
        ));
    }
    if unshared.split(',').any(|n| n == "net") {
        let up = Command::new("ip")
            .args(["link", "set", "lo", "up"])
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run ip (iproute2) to bring up the loopback: {e}"))?;
        if !up.status.success() {
            return Err(format!(
                "ip link set lo up failed in the private network namespace: {}",
                String::from_utf8_lossy(&up.stderr).trim()
            ));
        }
    }
    // A loopback address of this process's own, so parallel runs do not meet.
    let pid = std::process::id();
    let address = Ipv4Addr::new(
        127,
        53,
        ((pid >> 8) & 0xff) as u8,
        (pid & 0xff).max(1) as u8,
    );
    let stub = DnsStub::start(address)
        .map_err(|e| format!("cannot start the DNS stub on {address}:53: {e}"))?;
    let conf = std::env::temp_dir().join(format!("lineup-conformance-resolv-{pid}.conf"));
    std::fs::write(
        &conf,
        format!("nameserver {address}\noptions timeout:1 attempts:1\n"),
    )
    .map_err(|e| format!("cannot write {}: {e}", conf.display()))?;
    let mounted = Command::new("mount")
        .arg("--bind")
        .arg(&conf)
        .arg("/etc/resolv.conf")
        .stdin(Stdio::null())
        .output();
    // The mount keeps the file's contents; its name is no longer needed.
    let _ = std::fs::remove_file(&conf);
    match mounted {
        Err(e) => return Err(format!("cannot run mount: {e}")),
        Ok(out) if !out.status.success() => {
            return Err(format!(
                "mount --bind over /etc/resolv.conf failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        }
        Ok(_) => {}
    }
    let seen = std::fs::read_to_string("/etc/resolv.conf").unwrap_or_default();
    if !seen.contains(&format!("nameserver {address}\n")) {
        return Err(format!("/etc/resolv.conf does not name the stub: {seen:?}"));
    }
    Ok(stub)
}

/// The mount namespace of a process (`self` or a pid), as `/proc/<p>/ns/mnt` names it.
fn mount_namespace(process: &str) -> Result<String, String> {
    std::fs::read_link(format!("/proc/{process}/ns/mnt"))
        .map(|p| p.to_string_lossy().into_owned())
        .map_err(|e| format!("cannot read /proc/{process}/ns/mnt: {e}"))
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

/// The runner's own lookup of `name` (port 80), as any program resolves a name: the positive
/// control, which the stub must see. The answer does not matter (the stub says `NXDOMAIN`).
pub(crate) fn lookup(name: &str) {
    use std::net::ToSocketAddrs as _;
    let _ = (name, 80).to_socket_addrs();
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
        let r = nxdomain(&q).unwrap_or_default();
        assert_eq!(&r[..4], &[0x12, 0x34, 0x81, 0x83]);
        assert_eq!(r.len(), q.len());
    }

    #[test]
    fn a_case_name_is_its_id_under_the_canary_domain_in_labels_of_at_most_63() {
        assert_eq!(name_for("dns-fetch"), "dns-fetch.canary.lineup.test");
        let long = "a".repeat(80);
        let name = name_for(&long);
        assert!(name.split('.').all(|l| !l.is_empty() && l.len() <= 63));
        assert_eq!(name.replace('.', "").len(), 80 + DOMAIN.len() - 2);
    }

    #[test]
    fn a_name_matches_on_label_boundaries_only() {
        let n = "dns-fetch.canary.lineup.test";
        assert!(is_or_holds(n, n));
        assert!(is_or_holds("www.dns-fetch.canary.lineup.test", n));
        assert!(is_or_holds("dns-fetch.canary.lineup.test.example.org", n));
        assert!(is_or_holds("dns-fetch.canary.lineup.test.", n));
        assert!(!is_or_holds("x-dns-fetch.canary.lineup.test", n));
        assert!(!is_or_holds("dns-fetch-2.canary.lineup.test", n));
    }

    #[test]
    fn the_stub_records_a_query_and_answers_nxdomain() {
        // Port 53 needs privileges; the stub's loop is the same on any port.
        let stub = DnsStub::start_on(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0)).expect("bind");
        assert_eq!(stub.address(), Ipv4Addr::LOCALHOST);
        let client = UdpSocket::bind("127.0.0.1:0").expect("bind");
        client
            .set_read_timeout(Some(Duration::from_secs(5)))
            .expect("timeout");
        let mut q = vec![0xab, 0xcd, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0];
        q.extend_from_slice(
            b"\x03Www\x09dns-fetch\x06canary\x06lineup\x04test\x00\x00\x01\x00\x01",
        );
        client.send_to(&q, stub.at).expect("send");
        let mut buf = [0u8; 512];
        let (n, _) = client.recv_from(&mut buf).expect("an answer");
        assert_eq!(&buf[..4], &[0xab, 0xcd, 0x81, 0x83]);
        assert_eq!(n, q.len());
        assert_eq!(
            stub.names(),
            vec!["www.dns-fetch.canary.lineup.test".to_owned()]
        );
        assert_eq!(stub.asked_for(&name_for("dns-fetch")).len(), 1);
        assert!(stub.asked_for(&name_for("fetch")).is_empty());
    }
}
