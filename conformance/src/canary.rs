//! Loopback canaries: an HTTP listener on 127.0.0.1 that records the path of every request it
//! receives, so a case can assert that nothing from a Surface reached it (or, as a positive
//! control, that something did).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

/// An HTTP canary on 127.0.0.1.
pub(crate) struct HttpCanary {
    port: u16,
    hits: Arc<Mutex<Vec<String>>>,
}

impl HttpCanary {
    /// Binds an ephemeral loopback port and serves in a background thread.
    pub(crate) fn start() -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        let hits = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&hits);
        thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let seen = Arc::clone(&seen);
                thread::spawn(move || serve(stream, &seen));
            }
        });
        Ok(Self { port, hits })
    }

    /// The base URL a case uses: `http://127.0.0.1:<port>/<case id>/`.
    pub(crate) fn url_for(&self, case_id: &str) -> String {
        format!("http://127.0.0.1:{}/{case_id}/", self.port)
    }

    /// The request paths seen under a case's base path.
    pub(crate) fn hits_for(&self, case_id: &str) -> Vec<String> {
        let prefix = format!("/{case_id}/");
        self.hits
            .lock()
            .map(|h| {
                h.iter()
                    .filter(|p| p.starts_with(&prefix))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
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

fn serve(mut stream: TcpStream, seen: &Mutex<Vec<String>>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let mut buf = [0u8; 4096];
    let n = stream.read(&mut buf).unwrap_or(0);
    let head = String::from_utf8_lossy(&buf[..n]);
    let path = head
        .lines()
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap_or("")
        .to_owned();
    if let Ok(mut hits) = seen.lock() {
        hits.push(path);
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
    fn a_request_to_the_canary_is_recorded_under_its_case() {
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
        assert_eq!(canary.hits_for("c1"), vec!["/c1/x".to_owned()]);
        assert!(canary.hits_for("c2").is_empty());
    }
}
