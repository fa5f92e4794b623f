//! Fuzzes what the WebSocket agent link takes from its configuration: the bearer token
//! (`lineup_transport::link::Token::new`, as read from a token file, a systemd credential or
//! `LINEUP_AGENT_TOKEN`) and the agent's URL (`lineup_transport::link::check_url`).
//!
//! Input: lossy UTF-8, given to both.
//!
//! Checks: no panic; an accepted token is the input without surrounding white space, not
//! empty, visible ASCII and spaces only, and `Bearer <token>` is a valid HTTP header value (so
//! it can carry no line break into the handshake), and its `Debug` shows its length only; a
//! refusal is one of the two fixed sentences and never repeats the token's text; an accepted URL is `wss://`, or `ws://` to a loopback host
//! (127.0.0.0/8, ::1, `localhost`), with a host and no user or password.
#![no_main]

use std::net::IpAddr;

use lineup_transport::link::{check_url, Token};
use tungstenite::http::HeaderValue;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);

    match Token::new(&text, "fuzz") {
        Ok(token) => {
            let shown = token.expose();
            assert_eq!(shown, text.trim());
            assert!(!shown.is_empty());
            assert!(
                shown.bytes().all(|b| b.is_ascii_graphic() || b == b' '),
                "{shown:?}"
            );
            let header = HeaderValue::from_str(&format!("Bearer {shown}"));
            assert!(
                header.is_ok(),
                "the token does not fit an HTTP header: {shown:?}"
            );
            // Its `Debug` (what a log could show) is its length only.
            assert_eq!(
                format!("{token:?}"),
                format!("Token(<redacted, {} bytes>)", shown.len())
            );
        }
        Err(e) => {
            let trimmed = text.trim();
            let empty = "fuzz: the token is empty".to_owned();
            let invalid = format!(
                "fuzz: the token must be visible ASCII on one line ({} bytes read)",
                trimmed.len()
            );
            assert!(e == empty || e == invalid, "an unexpected refusal: {e:?}");
        }
    }

    if let Ok(url) = check_url(&text) {
        assert!(
            url.username().is_empty() && url.password().is_none(),
            "{url}"
        );
        let host = url.host().expect("an accepted URL without a host");
        match url.scheme() {
            "wss" => {}
            "ws" => {
                let loopback = match host {
                    url::Host::Domain(d) => d.eq_ignore_ascii_case("localhost"),
                    url::Host::Ipv4(ip) => IpAddr::V4(ip).is_loopback(),
                    url::Host::Ipv6(ip) => IpAddr::V6(ip).is_loopback(),
                };
                assert!(loopback, "plain ws:// accepted to {url}");
            }
            other => panic!("scheme {other} accepted: {url}"),
        }
    }
});
