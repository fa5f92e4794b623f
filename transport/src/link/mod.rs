//! The agent link over WebSocket: `lineup host --connect wss://…` connects out to the agent and
//! speaks `lineup.v1`, one envelope per text frame, reconnecting when the connection drops.
//! Built for reuse: a future `lineup kiosk` gives [`spawn`] its own [`LinkConfig`] and host.
//!
//! - **Transport.** tokio-tungstenite on a current-thread tokio runtime on a thread of its own
//!   (`lineup-agent-link`); TLS by rustls (ring) with the system's roots or, with
//!   `--trusted-roots`, only the given ones. `ws://` only to a loopback host (127.0.0.0/8, ::1,
//!   `localhost`). Messages and frames are capped at the envelope limit (R-ENV-4).
//! - **Identity.** The conversation and the vouched agent come from the configuration
//!   (R-SES-1), so the session exists before the first connection; the token (see [`token`]) is
//!   sent as `Authorization: Bearer …` and never logged. A refused handshake is logged with its
//!   status ("the agent refused the token (401)"); a redirect is not followed.
//! - **Each connection** starts with the session's `client.inventory` and `app.list`
//!   (R-INV-1), then the answers kept while away, then live traffic ([`frames`]).
//! - **Inbound.** A text frame goes to the host as one envelope; a binary frame is answered
//!   `client.error` `binary_frame`; a message over the cap cannot be skipped (tungstenite stops
//!   reading the stream at its header), so the host answers `too_large` naming the size and the
//!   limit, the link closes the connection with 1009 (message too big) and reconnects, and the
//!   answer is the first after the next connection's inventory. Back-pressure as for `--stdio`
//!   (R-ENV-4): no frame is read while too many answers wait for the agent or too many
//!   envelopes wait for the event loop.
//! - **Away.** Reconnects with `backoff.rs`: full jitter, 1 s doubling to 60 s, reset after 30 s
//!   connected. Open Surfaces stay on screen and patchable; after `grace` without a connection
//!   every Surface closes with `agent_gone` (R-UI-12), told to the agent after the next
//!   inventory. A reconnect within the grace cancels it.

use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::{SinkExt as _, StreamExt as _};
use lineup_host::{HostClosed, HostHandle};
use lineup_host_core::{ConversationId, GoneReason, PartyId};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
use tokio_tungstenite::tungstenite::error::{CapacityError, Error as WsError};
use tokio_tungstenite::tungstenite::http::{header, HeaderValue, StatusCode};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, WebSocketConfig};
use tokio_tungstenite::tungstenite::Message as Frame;
use tokio_tungstenite::{Connector, MaybeTlsStream, WebSocketStream};

mod backoff;
pub mod frames;
pub mod token;

pub use frames::Outbound;
pub use token::Token;

/// The longest wait for the TCP connection, the TLS and the WebSocket handshake together.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// How often a ping goes to the agent while connected.
const PING_EVERY: Duration = Duration::from_secs(20);
/// A connection silent this long (no frame, no pong) is taken for dead and dropped.
const SILENCE_LIMIT: Duration = Duration::from_secs(60);

/// What the agent link needs: where the agent is, who it is, and how long Surfaces wait for it.
pub struct LinkConfig {
    /// `wss://…`, or `ws://` to a loopback host; checked by [`check_url`].
    pub url: url::Url,
    /// Sent as `Authorization: Bearer …`; `None`: no header.
    pub token: Option<Token>,
    /// The conversation whose session is announced at each connect (R-SES-1).
    pub conversation: ConversationId,
    /// The vouched agent identity, used should the session be opened again.
    pub agent: Option<PartyId>,
    /// How long open Surfaces wait for a lost agent before they close with `agent_gone`.
    pub grace: Duration,
    /// A PEM file of CA certificates that replaces the system's roots.
    pub trusted_roots: Option<PathBuf>,
    /// The cap of an inbound message and frame: the host's `max_envelope_bytes` (R-ENV-4).
    pub max_message_bytes: usize,
    /// Inbound envelopes that may wait for the event loop before the link stops reading.
    pub max_inbound_waiting: usize,
}

impl std::fmt::Debug for LinkConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LinkConfig")
            .field("url", &self.url.as_str())
            .field("token", &self.token)
            .field("conversation", &self.conversation)
            .field("agent", &self.agent)
            .field("grace", &self.grace)
            .field("trusted_roots", &self.trusted_roots)
            .field("max_message_bytes", &self.max_message_bytes)
            .finish_non_exhaustive()
    }
}

/// Parses and checks the agent's URL: `wss://`, or `ws://` only to a loopback host
/// (127.0.0.0/8, ::1, `localhost`), since a plain connection elsewhere would carry the token
/// and every envelope in clear text. No userinfo (a credential in a URL ends up in logs).
pub fn check_url(text: &str) -> Result<url::Url, String> {
    let url = url::Url::parse(text).map_err(|e| format!("--connect {text}: not a URL: {e}"))?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err(format!(
            "--connect {text}: a URL must not carry a user or password; use --token-file"
        ));
    }
    match url.scheme() {
        "wss" => {}
        "ws" if is_loopback(&url) => {}
        "ws" => {
            return Err(format!(
                "--connect {text}: plain ws:// is allowed only to a loopback host (127.0.0.0/8, ::1, localhost); use wss://"
            ))
        }
        other => {
            return Err(format!(
                "--connect {text}: the scheme must be wss:// (or ws:// to loopback), not {other}://"
            ))
        }
    }
    if url.host().is_none() {
        return Err(format!("--connect {text}: the URL names no host"));
    }
    Ok(url)
}

fn is_loopback(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip).is_loopback(),
        Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip).is_loopback(),
        None => false,
    }
}

/// The TLS client configuration: rustls with ring, the system's roots, or only those of
/// `trusted_roots` when given.
fn tls_config(trusted_roots: Option<&std::path::Path>) -> Result<rustls::ClientConfig, String> {
    use rustls_pki_types::pem::PemObject as _;
    let mut roots = rustls::RootCertStore::empty();
    match trusted_roots {
        Some(path) => {
            let certs = rustls_pki_types::CertificateDer::pem_file_iter(path)
                .map_err(|e| format!("--trusted-roots {}: {e}", path.display()))?
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| {
                    format!(
                        "--trusted-roots {}: not PEM certificates: {e}",
                        path.display()
                    )
                })?;
            if certs.is_empty() {
                return Err(format!(
                    "--trusted-roots {}: holds no certificate",
                    path.display()
                ));
            }
            for cert in certs {
                roots
                    .add(cert)
                    .map_err(|e| format!("--trusted-roots {}: {e}", path.display()))?;
            }
        }
        None => {
            let found = rustls_native_certs::load_native_certs();
            for e in &found.errors {
                tracing::warn!("system certificates: {e}");
            }
            let (added, _) = roots.add_parsable_certificates(found.certs);
            if added == 0 {
                return Err("no system root certificates found; give --trusted-roots".into());
            }
        }
    }
    // Later rustls releases (the Servo workspace resolves one) deprecate `ring`'s provider for
    // its lack of post-quantum key exchange; `ring` is the provider this link is built with.
    #[allow(deprecated)]
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS setup: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth())
}

/// Starts the link on a thread of its own. `outbound` must be the queue the host's outbound
/// callback feeds. Setup errors (the TLS roots) are returned; after that the link runs until
/// the host's event loop ends, reconnecting as needed.
pub fn spawn(
    config: LinkConfig,
    handle: HostHandle,
    outbound: Outbound,
) -> Result<std::thread::JoinHandle<()>, String> {
    // Never told to stop: the link ends with the host.
    let (_never, stop) = tokio::sync::watch::channel(false);
    spawn_stoppable(config, handle, outbound, stop)
}

/// [`spawn`], and once `stop` turns `true` (the process is told to end), the link closes its
/// connection with 1001 (going away), then ends the host ([`HostHandle::shutdown`]).
pub fn spawn_stoppable(
    config: LinkConfig,
    handle: HostHandle,
    outbound: Outbound,
    stop: tokio::sync::watch::Receiver<bool>,
) -> Result<std::thread::JoinHandle<()>, String> {
    let connector = match config.url.scheme() {
        "wss" => Connector::Rustls(Arc::new(tls_config(config.trusted_roots.as_deref())?)),
        _ => Connector::Plain,
    };
    if config.token.is_none() {
        tracing::info!("no agent token configured: connecting without an Authorization header");
    }
    outbound.report_drops_to(handle.clone());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the agent link: {e}"))?;
    std::thread::Builder::new()
        .name("lineup-agent-link".into())
        .spawn(move || {
            let link = Link {
                config,
                connector,
                handle,
                outbound,
                stop,
            };
            if runtime.block_on(link.run()).is_err() {
                tracing::info!("the host ended; the agent link stops");
            }
        })
        .map_err(|e| format!("cannot start the agent link: {e}"))
}

struct Link {
    config: LinkConfig,
    connector: Connector,
    handle: HostHandle,
    outbound: Outbound,
    stop: tokio::sync::watch::Receiver<bool>,
}

/// Why the link tells the agent it goes (the close frame's reason).
const SHUTTING_DOWN: &str = "the host is shutting down";

/// Returns once `stop` turns `true`; never when its sender is gone without that.
async fn stopped(mut stop: tokio::sync::watch::Receiver<bool>) {
    if stop.wait_for(|s| *s).await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// Why one connection ended (or never began).
enum Ended {
    /// It could not be made.
    Failed(String),
    /// The agent answered the handshake with 401 or 403.
    Refused(String),
    /// It was up and ended.
    Lost(String),
}

/// How a refused handshake is told ([`explain_handshake`]).
const REFUSED_TOKEN: &str = "the agent refused the token";

impl Ended {
    /// The standby screen's status line, `secs` before the next attempt.
    fn status(&self, secs: u64) -> String {
        match self {
            Ended::Refused(_) => format!("The agent refused the token: next attempt in {secs} s"),
            Ended::Failed(_) => format!("Cannot reach the agent: next attempt in {secs} s"),
            Ended::Lost(_) => format!("The agent is away: reconnecting in {secs} s"),
        }
    }

    /// The small indicator over the Surfaces, `secs` before the next attempt.
    fn indicator(&self, secs: u64) -> String {
        match self {
            Ended::Refused(_) => format!("Agent refused the token · retry in {secs} s"),
            Ended::Failed(_) => format!("Agent unreachable · retry in {secs} s"),
            Ended::Lost(_) => format!("Agent away · reconnecting in {secs} s"),
        }
    }
}

impl Link {
    /// Connects, serves, and reconnects with backoff, until the host is gone.
    async fn run(self) -> Result<(), HostClosed> {
        let mut backoff = backoff::Backoff::new(backoff::system_random);
        // No Surface exists before the first connection: the grace counts from a lost one.
        let (away_tx, away_rx) = tokio::sync::watch::channel(None);
        let grace = tokio::spawn(grace_watch(away_rx, self.config.grace, self.handle.clone()));
        let mut attempt: u64 = 0;
        let result = 'link: loop {
            attempt += 1;
            let up = Instant::now();
            let connected = tokio::select! {
                connected = self.connect() => connected,
                () = stopped(self.stop.clone()) => break self.handle.shutdown(),
            };
            let ended = match connected {
                Ok(ws) => {
                    attempt = 0;
                    tracing::info!("connected to the agent at {}", self.config.url);
                    // A kiosk's standby screen says where the link stands (a no-op without one).
                    self.handle.set_standby_status("Connected to the agent")?;
                    self.handle.set_standby_indicator(None)?;
                    let _ = away_tx.send(None);
                    let ended = self.serve(ws).await;
                    self.outbound.set_away();
                    let _ = away_tx.send(Some(Instant::now()));
                    backoff.connection_ended(up.elapsed());
                    match ended {
                        Ok(_) if *self.stop.borrow() => break self.handle.shutdown(),
                        Ok(why) => Ended::Lost(why),
                        Err(closed) => break Err(closed),
                    }
                }
                Err(why) if why.starts_with(REFUSED_TOKEN) => Ended::Refused(why),
                Err(why) => Ended::Failed(why),
            };
            let bound = backoff.bound();
            let delay = backoff.next_delay();
            match &ended {
                Ended::Lost(why) => tracing::warn!(
                    "the connection to the agent ended: {why}; reconnecting in {} ms (drawn from 0..{} s)",
                    delay.as_millis(),
                    bound.as_secs()
                ),
                Ended::Failed(why) | Ended::Refused(why) => tracing::warn!(
                    "cannot connect to the agent (attempt {attempt}): {why}; next attempt in {} ms (drawn from 0..{} s)",
                    delay.as_millis(),
                    bound.as_secs()
                ),
            }
            // The screen says which it is and counts down to the next attempt, each second.
            let next = Instant::now() + delay;
            loop {
                let left = next.saturating_duration_since(Instant::now());
                let secs = left.as_secs() + u64::from(left.subsec_nanos() > 0);
                self.handle.set_standby_status(ended.status(secs.max(1)))?;
                self.handle
                    .set_standby_indicator(Some(ended.indicator(secs.max(1))))?;
                if left.is_zero() {
                    break;
                }
                let step = left.min(Duration::from_secs(1));
                tokio::select! {
                    () = tokio::time::sleep(step) => {}
                    () = stopped(self.stop.clone()) => break 'link self.handle.shutdown(),
                }
            }
        };
        grace.abort();
        result
    }

    /// One connection attempt: TCP, TLS (for wss), the WebSocket handshake with the token.
    async fn connect(&self) -> Result<WebSocketStream<MaybeTlsStream<TcpStream>>, String> {
        let url = &self.config.url;
        let mut request = url
            .as_str()
            .into_client_request()
            .map_err(|e| format!("{url}: {e}"))?;
        if let Some(token) = &self.config.token {
            let mut value = HeaderValue::from_str(&format!("Bearer {}", token.expose()))
                .map_err(|_| "the token does not fit an HTTP header".to_owned())?;
            value.set_sensitive(true);
            request.headers_mut().insert(header::AUTHORIZATION, value);
        }
        let host = url
            .host_str()
            .map(|h| h.trim_start_matches('[').trim_end_matches(']').to_owned())
            .ok_or_else(|| format!("{url}: no host"))?;
        let port = url
            .port_or_known_default()
            .ok_or_else(|| format!("{url}: no port"))?;
        let max = self.config.max_message_bytes;
        let ws_config = WebSocketConfig::default()
            .max_message_size(Some(max))
            .max_frame_size(Some(max));
        let connector = self.connector.clone();
        let attempt = async move {
            let tcp = TcpStream::connect((host.as_str(), port))
                .await
                .map_err(|e| format!("{url}: {e}"))?;
            let _ = tcp.set_nodelay(true);
            tokio_tungstenite::client_async_tls_with_config(
                request,
                tcp,
                Some(ws_config),
                Some(connector),
            )
            .await
            .map(|(ws, _)| ws)
            .map_err(|e| explain_handshake(url, e))
        };
        tokio::time::timeout(HANDSHAKE_TIMEOUT, attempt)
            .await
            .map_err(|_| format!("{url}: no answer within {HANDSHAKE_TIMEOUT:?}"))?
    }

    /// Serves one connection until it ends; `Err` when the host is gone.
    async fn serve(
        &self,
        ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
    ) -> Result<String, HostClosed> {
        let (mut sink, mut stream) = ws.split();
        // R-INV-1: the inventory is the first frame; answers kept while away follow it.
        let greeting = self.outbound.begin_greeting();
        let greeted = self.outbound.clone();
        self.handle.announce_inventory(
            self.config.conversation.clone(),
            self.config.agent.clone(),
            move |_| greeted.greeting_done(greeting),
        )?;
        let last_seen = std::cell::Cell::new(Instant::now());
        let writer = async {
            let mut ping = tokio::time::interval(PING_EVERY);
            ping.tick().await;
            loop {
                tokio::select! {
                    line = self.outbound.next() => {
                        if let Err(e) = sink.send(Frame::text(line)).await {
                            return format!("cannot send: {e}");
                        }
                        self.outbound.sent();
                    }
                    _ = ping.tick() => {
                        if last_seen.get().elapsed() >= SILENCE_LIMIT {
                            return format!("nothing heard from the agent for {SILENCE_LIMIT:?}");
                        }
                        if let Err(e) = sink.send(Frame::Ping(Vec::new().into())).await {
                            return format!("cannot send: {e}");
                        }
                    }
                }
            }
        };
        let reader = async {
            loop {
                self.gate().await;
                let Some(frame) = stream.next().await else {
                    return Ok("the agent closed the connection".to_owned());
                };
                last_seen.set(Instant::now());
                match frame {
                    Ok(Frame::Text(text)) => {
                        let bytes: Vec<u8> = text.as_bytes().to_vec();
                        if bytes.iter().all(u8::is_ascii_whitespace) {
                            continue;
                        }
                        self.handle.send_inbound(bytes)?;
                    }
                    // R-ENV-5: each envelope is a text frame; a binary one is answered.
                    Ok(Frame::Binary(data)) => {
                        tracing::warn!(
                            "a binary frame of {} bytes from the agent; envelopes are text frames (R-ENV-5)",
                            data.len()
                        );
                        self.handle.send_binary_frame(data.len() as u64)?;
                    }
                    Ok(Frame::Close(frame)) => {
                        return Ok(match frame {
                            Some(f) => format!(
                                "the agent closed the connection ({} {})",
                                u16::from(f.code),
                                f.reason
                            ),
                            None => "the agent closed the connection".to_owned(),
                        });
                    }
                    Ok(_) => {} // ping (answered by tungstenite), pong, raw frame
                    Err(WsError::Capacity(CapacityError::MessageTooLong { size, max_size })) => {
                        // R-ENV-4: the rest of the message is still on the wire, so the stream
                        // cannot go on; the agent hears why after the next inventory.
                        self.handle.send_oversized(size as u64)?;
                        return Err(ReaderStop::TooBig(format!(
                            "the agent sent a message of {size} bytes; the limit is {max_size} (R-ENV-4)"
                        )));
                    }
                    Err(e) => return Ok(format!("{e}")),
                }
            }
        };
        let (why, close) = tokio::select! {
            why = writer => (why, None),
            read = reader => match read {
                Ok(why) => (why, None),
                Err(ReaderStop::TooBig(why)) => (why.clone(), Some((CloseCode::Size, why))),
                Err(ReaderStop::Host) => return Err(HostClosed),
            },
            // The process is told to end: the agent hears 1001 (going away), not a dropped
            // connection it would wait out.
            () = stopped(self.stop.clone()) => (
                SHUTTING_DOWN.to_owned(),
                Some((CloseCode::Away, SHUTTING_DOWN.to_owned())),
            ),
        };
        // The two halves were borrowed by the futures above, which are done now.
        if let Ok(mut ws) = sink.reunite(stream) {
            let frame = close.map(|(code, reason)| CloseFrame {
                code,
                reason: reason.into(),
            });
            let _ = tokio::time::timeout(Duration::from_secs(1), ws.close(frame)).await;
        }
        Ok(why)
    }

    /// Waits while too many answers wait for the agent or too many envelopes wait for the event
    /// loop (R-ENV-4), like `--stdio`'s input gate.
    async fn gate(&self) {
        if self.outbound.backpressure() {
            tracing::warn!(
                "{} answers are waiting for the agent; stopped reading its frames (R-ENV-4)",
                self.outbound.answers_waiting()
            );
            while self.outbound.backpressure() {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            tracing::info!("the agent caught up; reading its frames again");
        }
        while self.handle.inbound_waiting() >= self.config.max_inbound_waiting {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }
}

/// Why the reader stopped other than the connection ending.
enum ReaderStop {
    /// The host's event loop ended.
    Host,
    /// A message over the cap: the connection is closed with 1009 (message too big).
    TooBig(String),
}

impl From<HostClosed> for ReaderStop {
    fn from(_: HostClosed) -> Self {
        ReaderStop::Host
    }
}

/// A failed handshake in words: 401/403 as a refused token, a 3xx as a redirect not followed.
fn explain_handshake(url: &url::Url, e: WsError) -> String {
    match e {
        WsError::Http(response) => {
            let status = response.status();
            if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
                format!("{REFUSED_TOKEN} ({})", status.as_u16())
            } else if status.is_redirection() {
                let to = response
                    .headers()
                    .get(header::LOCATION)
                    .and_then(|l| l.to_str().ok())
                    .unwrap_or("nowhere");
                format!(
                    "{url} answered a redirect ({}) to {to}; redirects are not followed",
                    status.as_u16()
                )
            } else {
                format!(
                    "{url} answered HTTP {} instead of a WebSocket",
                    status.as_u16()
                )
            }
        }
        other => format!("{url}: {other}"),
    }
}

/// Closes every Surface with `agent_gone` once the agent has been away for `grace` (R-UI-12);
/// a connection in between cancels it. `away` holds since when the agent is away (`None`:
/// connected).
async fn grace_watch(
    mut away: tokio::sync::watch::Receiver<Option<Instant>>,
    grace: Duration,
    handle: HostHandle,
) {
    loop {
        let since = *away.borrow_and_update();
        let Some(since) = since else {
            if away.changed().await.is_err() {
                return;
            }
            continue;
        };
        let deadline = tokio::time::Instant::from_std(since + grace);
        tokio::select! {
            _ = tokio::time::sleep_until(deadline) => {
                tracing::warn!(
                    "the agent has been away for {} s: its surfaces close with agent_gone (R-UI-12)",
                    grace.as_secs()
                );
                if handle.surfaces_gone(None, GoneReason::AgentGone).is_err() {
                    return;
                }
                // Once per absence: wait for the next connection.
                if away.changed().await.is_err() {
                    return;
                }
            }
            changed = away.changed() => {
                if changed.is_err() {
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Issue 30 item 3: a refused token, an unreachable agent and a lost connection read
    /// differently on the screen, each with its countdown.
    #[test]
    fn the_screen_says_which_way_the_agent_is_away() {
        let refused = Ended::Refused(format!("{REFUSED_TOKEN} (401)"));
        let failed = Ended::Failed("connection refused".to_owned());
        let lost = Ended::Lost("reset".to_owned());
        assert_eq!(
            refused.status(4),
            "The agent refused the token: next attempt in 4 s"
        );
        assert_eq!(
            failed.status(2),
            "Cannot reach the agent: next attempt in 2 s"
        );
        assert_eq!(lost.status(1), "The agent is away: reconnecting in 1 s");
        assert_eq!(
            refused.indicator(3),
            "Agent refused the token · retry in 3 s"
        );
        assert_eq!(failed.indicator(3), "Agent unreachable · retry in 3 s");
        assert_eq!(lost.indicator(9), "Agent away · reconnecting in 9 s");
    }

    #[test]
    fn plain_ws_only_to_loopback_and_wss_anywhere() {
        for ok in [
            "wss://agent.example/lineup",
            "ws://127.0.0.1:9000/",
            "ws://127.8.9.10/",
            "ws://[::1]:80/x",
            "ws://localhost:1234/",
            "ws://LOCALHOST/",
        ] {
            assert!(check_url(ok).is_ok(), "{ok}");
        }
        for bad in [
            "ws://192.0.2.1/",
            "ws://agent.example/",
            "ws://localhost.example/",
            "ws://[::2]/",
            "http://127.0.0.1/",
            "wss://user:pw@agent.example/",
            "not a url",
        ] {
            let e = check_url(bad).unwrap_err();
            assert!(
                e.contains(bad.split('@').next().unwrap()) || bad.contains('@'),
                "{e}"
            );
        }
        let e = check_url("ws://192.0.2.1/").unwrap_err();
        assert!(e.contains("loopback"), "{e}");
    }
}
