//! Loopback canaries: an HTTP listener on 127.0.0.1 that records every connection it accepts and
//! the path of every request read from it, so a case can assert that nothing from a Surface
//! reached it (or, as a positive control, that something did).
//!
//! Each case gets a canary of its own, on a port of its own: a connection that never sends a
//! request line (a preconnect, a TURN or STUN client, a raw socket) is still the case's, and cases
//! can run in parallel without telling their hits apart by path.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

/// An HTTP canary on 127.0.0.1, stopped when dropped.
pub(crate) struct HttpCanary {
    port: u16,
    hits: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
}

impl HttpCanary {
    /// Binds an ephemeral loopback port and serves in a background thread.
    pub(crate) fn start() -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        let hits = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let seen = Arc::clone(&hits);
        let stopped = Arc::clone(&stop);
        thread::spawn(move || {
            for stream in listener.incoming() {
                if stopped.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let seen = Arc::clone(&seen);
                thread::spawn(move || serve(stream, &seen));
            }
        });
        Ok(Self { port, hits, stop })
    }

    /// The base URL a case uses: `http://127.0.0.1:<port>/<case id>/`.
    pub(crate) fn url_for(&self, case_id: &str) -> String {
        format!("http://127.0.0.1:{}/{case_id}/", self.port)
    }

    /// Everything this canary saw: the request path of each connection, or a description of a
    /// connection that sent no HTTP request line.
    pub(crate) fn hits(&self) -> Vec<String> {
        self.hits.lock().map(|h| h.clone()).unwrap_or_default()
    }
}

impl Drop for HttpCanary {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag and ends.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// A plain GET of a `http://127.0.0.1:<port>/…` URL, for the positive control.
pub(crate) fn get(url: &str) -> Result<(), String> {
    let rest = url
        .strip_prefix("http://")
        .ok_or("http_get: not an http URL")?;
    let (addr, path) = rest.split_once('/').ok_or("http_get: no path")?;
    let mut stream = TcpStream::connect(addr).map_err(|e| format!("http_get {url}: {e}"))?;
    stream
        .write_all(format!("GET /{path} HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes())
        .map_err(|e| format!("http_get {url}: {e}"))?;
    let mut out = String::new();
    let _ = stream.read_to_string(&mut out);
    Ok(())
}

/// What one connection is recorded as: the path of its request line, or, when it sent none, a
/// bracketed description (`[connection, no request]`, `[connection, 5 bytes]`).
fn describe(head: &[u8]) -> String {
    let text = String::from_utf8_lossy(head);
    let line = text.lines().next().unwrap_or("");
    let mut words = line.split_whitespace();
    match (words.next(), words.next(), words.next()) {
        (Some(_method), Some(path), Some(version)) if version.starts_with("HTTP/") => {
            path.to_owned()
        }
        _ if head.is_empty() => "[connection, no request]".to_owned(),
        _ => format!("[connection, {} bytes]", head.len()),
    }
}

fn serve(mut stream: TcpStream, seen: &Mutex<Vec<String>>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let mut buf = [0u8; 4096];
    let n = stream.read(&mut buf).unwrap_or(0);
    if let Ok(mut hits) = seen.lock() {
        hits.push(describe(&buf[..n]));
    }
    let _ = stream.write_all(
        b"HTTP/1.1 200 OK\r\nAccess-Control-Allow-Origin: *\r\nContent-Type: text/plain\r\n\
          Content-Length: 2\r\nConnection: close\r\n\r\nok",
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_to_the_canary_is_recorded() {
        let canary = HttpCanary::start().expect("bind");
        let url = canary.url_for("c1");
        let addr = url
            .trim_start_matches("http://")
            .split('/')
            .next()
            .unwrap_or("");
        let mut s = TcpStream::connect(addr).expect("connect");
        s.write_all(b"GET /c1/x HTTP/1.1\r\nHost: a\r\n\r\n")
            .expect("write");
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        assert!(out.ends_with("ok"));
        assert_eq!(canary.hits(), vec!["/c1/x".to_owned()]);
    }

    #[test]
    fn a_connection_without_a_request_line_is_recorded_too() {
        let canary = HttpCanary::start().expect("bind");
        let url = canary.url_for("c1");
        let addr = url
            .trim_start_matches("http://")
            .split('/')
            .next()
            .unwrap_or("")
            .to_owned();
        drop(TcpStream::connect(&addr).expect("connect"));
        let mut s = TcpStream::connect(&addr).expect("connect");
        s.write_all(b"\x00\x01\x00\x08abcd").expect("write");
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while canary.hits().len() < 2 && std::time::Instant::now() < deadline {
            thread::sleep(Duration::from_millis(20));
        }
        let mut hits = canary.hits();
        hits.sort();
        assert_eq!(
            hits,
            vec![
                "[connection, 8 bytes]".to_owned(),
                "[connection, no request]".to_owned()
            ]
        );
    }

    #[test]
    fn each_canary_has_its_own_port() {
        let a = HttpCanary::start().expect("bind");
        let b = HttpCanary::start().expect("bind");
        assert_ne!(a.url_for("x"), b.url_for("x"));
    }
}
