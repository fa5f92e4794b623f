//! `lineup apps install https://…` against a loopback TLS server whose test CA is made here and
//! passed with `--trusted-roots` (R-SEC-7): the right bytes install; wrong bytes, a server that
//! lies about the length, one that stalls, too many redirects, a redirect to plain http, an
//! announced oversize body, an untrusted certificate and an http:// URL are each refused with
//! nothing kept.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Output};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

#[path = "support/tls.rs"]
mod tls;
use tls::tls;

const LINEUP: &str = env!("CARGO_BIN_EXE_lineup");

/// A package as a tar archive, with its digest; `text` makes two packages differ.
fn package(dir: &Path, text: &str) -> (Vec<u8>, String) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("manifest.json"),
        r#"{"id": "com.example.remote", "name": "Remote", "version": "1.0.0",
            "surfaces": {"main": {"html": "index.html"}}}"#,
    )
    .unwrap();
    std::fs::write(dir.join("index.html"), text).unwrap();
    let run = Command::new(LINEUP)
        .args(["apps", "verify", dir.to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    let digest = serde_json::from_slice::<serde_json::Value>(&run.stdout).unwrap()["digest"]
        .as_str()
        .unwrap()
        .to_owned();
    // The canonical archive of the folder, made with the library the host uses.
    let files = lineup_packages::PackageFiles::read_dir(dir, &Default::default()).unwrap();
    let mut tar = Vec::new();
    files.write_tar(&mut tar).unwrap();
    (tar, digest)
}

/// Serves each connection on a thread of its own: `route(path, port)` writes the response.
fn serve(
    config: Arc<rustls::ServerConfig>,
    route: impl Fn(&str, u16, &mut dyn Write) + Send + Sync + 'static,
) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let route = Arc::new(route);
    thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let (config, route) = (Arc::clone(&config), Arc::clone(&route));
            thread::spawn(move || handle(stream, config, port, &*route));
        }
    });
    port
}

fn handle(
    stream: TcpStream,
    config: Arc<rustls::ServerConfig>,
    port: u16,
    route: &(dyn Fn(&str, u16, &mut dyn Write) + Send + Sync),
) {
    let Ok(conn) = rustls::ServerConnection::new(config) else {
        return;
    };
    stream.set_read_timeout(Some(Duration::from_secs(20))).ok();
    let mut tls = rustls::StreamOwned::new(conn, stream);
    let mut request = Vec::new();
    let mut byte = [0u8; 1];
    while !request.ends_with(b"\r\n\r\n") {
        match tls.read(&mut byte) {
            Ok(1) => request.push(byte[0]),
            _ => return,
        }
    }
    let line = String::from_utf8_lossy(&request).into_owned();
    let path = line.split(' ').nth(1).unwrap_or("/").to_owned();
    route(&path, port, &mut tls);
    let _ = tls.flush();
    tls.conn.send_close_notify();
    let _ = tls.flush();
}

fn install(data: &Path, url: &str, digest: &str, roots: Option<&Path>) -> Output {
    let mut command = Command::new(LINEUP);
    command.args(["apps", "--data-dir"]).arg(data).args([
        "install",
        url,
        "--digest",
        digest,
        "--stall-timeout",
        "2",
    ]);
    if let Some(roots) = roots {
        command.arg("--trusted-roots").arg(roots);
    }
    command.output().unwrap()
}

fn listed(data: &Path) -> String {
    let run = Command::new(LINEUP)
        .args(["apps", "--data-dir"])
        .arg(data)
        .args(["list", "--json"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&run.stdout).into_owned()
}

#[test]
fn downloads_are_verified_bounded_and_https_only() {
    let tmp = tempfile::tempdir().unwrap();
    let (good, digest) = package(&tmp.path().join("good"), "<p>good</p>");
    let (wrong, _) = package(&tmp.path().join("wrong"), "<p>wrong</p>");
    let (ca, config) = tls();
    let roots = tmp.path().join("ca.pem");
    std::fs::write(&roots, ca).unwrap();
    let port = serve(config, move |path, port, out| {
        let ok = |out: &mut dyn Write, body: &[u8], length: usize| {
            let _ = write!(
                out,
                "HTTP/1.1 200 OK\r\nContent-Length: {length}\r\nConnection: close\r\n\r\n"
            );
            let _ = out.write_all(body);
        };
        let redirect = |out: &mut dyn Write, to: &str| {
            let _ = write!(out, "HTTP/1.1 302 Found\r\nLocation: {to}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        };
        match path {
            "/good.tar" => ok(out, &good, good.len()),
            "/wrong.tar" => ok(out, &wrong, wrong.len()),
            "/lies.tar" => ok(out, &good, good.len() + 4096),
            "/stall.tar" => {
                let _ = write!(
                    out,
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n",
                    good.len()
                );
                let _ = out.write_all(&good[..good.len() / 2]);
                let _ = out.flush();
                thread::sleep(Duration::from_secs(15));
            }
            "/huge.tar" => ok(out, b"", 64 * 1024 * 1024),
            "/to-http" => redirect(out, &format!("http://127.0.0.1:{port}/good.tar")),
            "/five" => redirect(out, "/r/1"),
            p if p.starts_with("/r/") => {
                let n: u32 = p[3..].parse().unwrap_or(0);
                if n >= 5 {
                    ok(out, &good, good.len());
                } else {
                    redirect(out, &format!("/r/{}", n + 1));
                }
            }
            p if p.starts_with("/loop/") => {
                let n: u32 = p[6..].parse().unwrap_or(0);
                redirect(out, &format!("/loop/{}", n + 1));
            }
            _ => {
                let _ = write!(out, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
            }
        }
    });
    let url = |path: &str| format!("https://127.0.0.1:{port}{path}");
    let data = tmp.path().join("data");
    let refused = |path: &str, roots: Option<&Path>, expected: &str| {
        let started = Instant::now();
        let run = install(&data, &url(path), &digest, roots);
        let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
        assert_eq!(run.status.code(), Some(1), "{path}: {stderr}");
        assert!(
            stderr.contains(expected),
            "{path}: expected {expected:?} in {stderr}"
        );
        assert!(
            !listed(&data).contains("com.example.remote"),
            "{path} was kept"
        );
        started.elapsed()
    };
    refused("/wrong.tar", Some(&roots), "not the expected");
    refused(
        "/lies.tar",
        Some(&roots),
        "end of file before message length reached",
    );
    let waited = refused("/stall.tar", Some(&roots), "nothing arrived for 2s");
    assert!(
        waited < Duration::from_secs(12),
        "the stall took {waited:?}"
    );
    refused("/huge.tar", Some(&roots), "over the limit");
    refused("/to-http", Some(&roots), "URL scheme is not allowed");
    refused("/loop/0", Some(&roots), "too many redirects");
    // Not trusted without the test CA: the system's roots do not know it.
    refused("/good.tar", None, "UnknownIssuer");
    let run = install(
        &data,
        &format!("http://127.0.0.1:{port}/good.tar"),
        &digest,
        Some(&roots),
    );
    assert_eq!(run.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&run.stderr).contains("only https:// URLs"));

    // Positive controls: five redirects are followed, and the right bytes install.
    let run = install(&data, &url("/five"), &digest, Some(&roots));
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(listed(&data).contains("com.example.remote"));
    let run = Command::new(LINEUP)
        .args(["apps", "--data-dir"])
        .arg(&data)
        .args(["remove", "com.example.remote"])
        .output()
        .unwrap();
    assert!(run.status.success());
    // R-UI-9: a removed id is reserved until it is forgotten.
    let run = Command::new(LINEUP)
        .args(["apps", "--data-dir"])
        .arg(&data)
        .args(["forget", "com.example.remote"])
        .output()
        .unwrap();
    assert!(run.status.success());
    let run = install(&data, &url("/good.tar"), &digest, Some(&roots));
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
}
