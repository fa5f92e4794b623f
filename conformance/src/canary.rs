//! Loopback canaries: an HTTP listener on 127.0.0.1 that records every connection it accepts and
//! the path of every request read from it, so a case can assert that nothing from a Surface
//! reached it (or, as a positive control, that something did). It is the WebSocket canary too: a
//! request asking to upgrade to a WebSocket is answered `101 Switching Protocols` with the
//! handshake's `Sec-WebSocket-Accept` and recorded as a WebSocket hit.
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
    hits: Arc<Mutex<Vec<Hit>>>,
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

    /// The WebSocket URL of the same canary: `ws://127.0.0.1:<port>/<case id>/`.
    pub(crate) fn ws_url_for(&self, case_id: &str) -> String {
        format!("ws://127.0.0.1:{}/{case_id}/", self.port)
    }

    /// Everything this canary saw, one hit per connection.
    pub(crate) fn hits(&self) -> Vec<Hit> {
        self.hits.lock().map(|h| h.clone()).unwrap_or_default()
    }
}

/// What one connection to a canary was.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Hit {
    /// The path of its request line, or, when it sent none, a bracketed description
    /// (`[connection, no request]`, `[connection, 5 bytes]`).
    pub(crate) what: String,
    /// Whether it asked to upgrade to a WebSocket (and was answered `101`).
    pub(crate) websocket: bool,
}

impl std::fmt::Debug for Hit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.websocket {
            write!(f, "{:?} (websocket)", self.what)
        } else {
            write!(f, "{:?}", self.what)
        }
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

/// The key of the runner's own WebSocket handshake (RFC 6455's example nonce).
const HANDSHAKE_KEY: &str = "dGhlIHNhbXBsZSBub25jZQ==";

/// A WebSocket opening handshake to a `ws://127.0.0.1:<port>/…` URL, for the WebSocket canary's
/// positive control: the answer must be `101` with the `Sec-WebSocket-Accept` of its key.
pub(crate) fn websocket_handshake(url: &str) -> Result<(), String> {
    let rest = url
        .strip_prefix("ws://")
        .ok_or("websocket_handshake: not a ws URL")?;
    let (addr, path) = rest.split_once('/').ok_or("websocket_handshake: no path")?;
    let fail = |e: std::io::Error| format!("websocket_handshake {url}: {e}");
    let mut stream = TcpStream::connect(addr).map_err(fail)?;
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .map_err(fail)?;
    stream
        .write_all(
            format!(
                "GET /{path} HTTP/1.1\r\nHost: {addr}\r\nUpgrade: websocket\r\n\
                 Connection: Upgrade\r\nSec-WebSocket-Key: {HANDSHAKE_KEY}\r\n\
                 Sec-WebSocket-Version: 13\r\n\r\n"
            )
            .as_bytes(),
        )
        .map_err(fail)?;
    let head = read_head(&mut stream, &[]);
    let head = String::from_utf8_lossy(&head);
    let status = head.lines().next().unwrap_or("");
    if status.split_whitespace().nth(1) != Some("101") {
        return Err(format!(
            "websocket_handshake {url}: answered {status:?}, not 101"
        ));
    }
    let accept = header(&head, "sec-websocket-accept");
    if accept.as_deref() != Some(accept_for(HANDSHAKE_KEY).as_str()) {
        return Err(format!(
            "websocket_handshake {url}: Sec-WebSocket-Accept {accept:?} is not the key's"
        ));
    }
    Ok(())
}

/// The value of a header in a request or response head (names compared case-insensitively).
fn header(head: &str, name: &str) -> Option<String> {
    head.lines().skip(1).find_map(|line| {
        let (n, v) = line.split_once(':')?;
        n.trim()
            .eq_ignore_ascii_case(name)
            .then(|| v.trim().to_owned())
    })
}

/// Reads the rest of an HTTP head that began with `first`: until the blank line, end of stream,
/// 16 KiB or two seconds of silence.
fn read_head(stream: &mut TcpStream, first: &[u8]) -> Vec<u8> {
    let mut head = first.to_vec();
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let mut buf = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16 * 1024 {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    head
}

/// Whether bytes begin like an HTTP request: a method (capital letters), then a space.
fn starts_a_request(first: &[u8]) -> bool {
    let method = first.iter().take_while(|b| b.is_ascii_uppercase()).count();
    method > 0 && first.get(method) == Some(&b' ')
}

/// Whether a request head asks to upgrade to a WebSocket, with a key: its key.
fn websocket_key(head: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(head);
    let upgrade = header(&text, "upgrade")?;
    if !upgrade.eq_ignore_ascii_case("websocket") {
        return None;
    }
    header(&text, "sec-websocket-key")
}

/// `Sec-WebSocket-Accept` for a key (RFC 6455 §4.2.2): base64 of the SHA-1 of the key and the
/// protocol's GUID.
fn accept_for(key: &str) -> String {
    use base64::Engine as _;
    let digest = sha1(format!("{key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11").as_bytes());
    base64::engine::general_purpose::STANDARD.encode(digest)
}

/// SHA-1 (FIPS 180-4), for the WebSocket handshake only.
fn sha1(data: &[u8]) -> [u8; 20] {
    let mut h: [u32; 5] = [
        0x6745_2301,
        0xEFCD_AB89,
        0x98BA_DCFE,
        0x1032_5476,
        0xC3D2_E1F0,
    ];
    let mut message = data.to_vec();
    message.push(0x80);
    while message.len() % 64 != 56 {
        message.push(0);
    }
    message.extend_from_slice(&((data.len() as u64) * 8).to_be_bytes());
    for block in message.chunks(64) {
        let mut w = [0u32; 80];
        for (i, word) in block.chunks(4).enumerate() {
            w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        for i in 16..80 {
            w[i] = (w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]).rotate_left(1);
        }
        let [mut a, mut b, mut c, mut d, mut e] = h;
        for (i, wi) in w.iter().enumerate() {
            let (f, k) = match i {
                0..=19 => ((b & c) | (!b & d), 0x5A82_7999),
                20..=39 => (b ^ c ^ d, 0x6ED9_EBA1),
                40..=59 => ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC),
                _ => (b ^ c ^ d, 0xCA62_C1D6),
            };
            let t = a
                .rotate_left(5)
                .wrapping_add(f)
                .wrapping_add(e)
                .wrapping_add(k)
                .wrapping_add(*wi);
            e = d;
            d = c;
            c = b.rotate_left(30);
            b = a;
            a = t;
        }
        for (hi, v) in h.iter_mut().zip([a, b, c, d, e]) {
            *hi = hi.wrapping_add(v);
        }
    }
    let mut out = [0u8; 20];
    for (chunk, v) in out.chunks_mut(4).zip(h) {
        chunk.copy_from_slice(&v.to_be_bytes());
    }
    out
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

fn serve(mut stream: TcpStream, seen: &Mutex<Vec<Hit>>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let mut buf = [0u8; 4096];
    let n = stream.read(&mut buf).unwrap_or(0);
    let first = &buf[..n];
    // A connection that sent no request (a TURN client waiting for an answer) is recorded at
    // once; a request's head is read whole, to see whether it asks for a WebSocket.
    let (what, key) = if starts_a_request(first) {
        let head = read_head(&mut stream, first);
        (describe(&head), websocket_key(&head))
    } else {
        (describe(first), None)
    };
    if let Ok(mut hits) = seen.lock() {
        hits.push(Hit {
            what,
            websocket: key.is_some(),
        });
    }
    let _ = match key {
        Some(key) => stream.write_all(
            format!(
                "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\
                 Connection: Upgrade\r\nSec-WebSocket-Accept: {}\r\n\r\n",
                accept_for(&key)
            )
            .as_bytes(),
        ),
        None => stream.write_all(
            b"HTTP/1.1 200 OK\r\nAccess-Control-Allow-Origin: *\r\nContent-Type: text/plain\r\n\
              Content-Length: 2\r\nConnection: close\r\n\r\nok",
        ),
    };
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
        assert_eq!(
            canary.hits(),
            vec![Hit {
                what: "/c1/x".into(),
                websocket: false
            }]
        );
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
        let mut hits: Vec<String> = canary.hits().into_iter().map(|h| h.what).collect();
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
    fn sha1_and_the_handshake_accept_are_rfc_6455s() {
        let hex = |d: [u8; 20]| d.iter().map(|b| format!("{b:02x}")).collect::<String>();
        assert_eq!(
            hex(sha1(b"abc")),
            "a9993e364706816aba3e25717850c26c9cd0d89d"
        );
        assert_eq!(hex(sha1(b"")), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
        let long = vec![b'a'; 1000];
        assert_eq!(hex(sha1(&long)), "291e9a6c66994949b57ba5e650361e98fc36b1ba");
        assert_eq!(
            accept_for("dGhlIHNhbXBsZSBub25jZQ=="),
            "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        );
    }

    #[test]
    fn a_websocket_handshake_is_answered_101_and_recorded_as_a_websocket_hit() {
        let canary = HttpCanary::start().expect("bind");
        websocket_handshake(&format!("{}ws", canary.ws_url_for("c1"))).expect("101");
        assert_eq!(
            canary.hits(),
            vec![Hit {
                what: "/c1/ws".into(),
                websocket: true
            }]
        );
        // A plain GET is not one.
        get(&format!("{}x", canary.url_for("c1"))).expect("get");
        assert_eq!(canary.hits().iter().filter(|h| h.websocket).count(), 1);
        // And a handshake to a plain HTTP server is refused by the control itself.
        let plain = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = plain.local_addr().expect("addr").port();
        thread::spawn(move || {
            if let Ok((mut s, _)) = plain.accept() {
                let _ = read_head(&mut s, &[]);
                let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
            }
        });
        assert!(websocket_handshake(&format!("ws://127.0.0.1:{port}/c1/ws")).is_err());
    }

    #[test]
    fn each_canary_has_its_own_port() {
        let a = HttpCanary::start().expect("bind");
        let b = HttpCanary::start().expect("bind");
        assert_ne!(a.url_for("x"), b.url_for("x"));
    }
}
