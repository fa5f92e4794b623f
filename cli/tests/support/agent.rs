//! A test agent: a loopback WebSocket server that checks the bearer token, records what the
//! host sends, sends what the test tells it to, and can be killed and restarted on its port.
//! Shared by the `ws_link` and `kiosk` tests (`#[path]`), not a test of its own.
#![allow(dead_code)]

use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use futures_util::{SinkExt as _, StreamExt as _};
use serde_json::Value;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http::StatusCode;
use tokio_tungstenite::tungstenite::Message as Frame;

/// How long the agent waits for any one thing.
const STEP: Duration = Duration::from_secs(60);

/// What the agent saw.
#[derive(Debug)]
pub(crate) enum Seen {
    /// A handshake, with its `Authorization` header and whether it was accepted.
    Handshake {
        authorization: Option<String>,
        accepted: bool,
    },
    /// A text frame, as JSON.
    Text(Value),
    /// The connection ended; the close code when the host sent one.
    Closed(Option<u16>),
}

pub(crate) enum Command_ {
    Text(String),
    Binary(Vec<u8>),
}

/// A WebSocket agent on 127.0.0.1, serving one connection at a time on a runtime of its own.
/// Dropping it drops the listener and the connection, as a killed agent would.
pub(crate) struct AgentServer {
    port: u16,
    secure: bool,
    seen: Receiver<Seen>,
    commands: tokio::sync::mpsc::UnboundedSender<Command_>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<thread::JoinHandle<()>>,
}

impl AgentServer {
    /// Listens on `port` (0: any). Handshakes whose `Authorization` is not `Bearer <token>` are
    /// answered 401, as are the first `refuse_first` handshakes whatever they carry.
    pub(crate) fn start(port: u16, token: &str, refuse_first: usize) -> Self {
        Self::start_with(port, token, vec![401; refuse_first], None)
    }

    /// [`AgentServer::start`], answering the first handshakes with the statuses of `refusals`
    /// in turn (a 3xx with a `Location` elsewhere), and speaking TLS with `tls` when given
    /// (`wss://`).
    pub(crate) fn start_with(
        port: u16,
        token: &str,
        refusals: Vec<u16>,
        tls: Option<Arc<rustls::ServerConfig>>,
    ) -> Self {
        let (seen_tx, seen) = mpsc::channel();
        let (commands, mut command_rx) = tokio::sync::mpsc::unbounded_channel::<Command_>();
        let (stop, mut stop_rx) = tokio::sync::oneshot::channel::<()>();
        let (port_tx, port_rx) = mpsc::channel();
        let expected = format!("Bearer {token}");
        let secure = tls.is_some();
        let thread = thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
                    .await
                    .unwrap();
                port_tx.send(listener.local_addr().unwrap().port()).unwrap();
                let acceptor = tls.map(tokio_rustls::TlsAcceptor::from);
                // Taken by handshakes only: a connection that fails its TLS takes none.
                let refusals = Arc::new(Mutex::new(std::collections::VecDeque::from(refusals)));
                loop {
                    let tcp = tokio::select! {
                        _ = &mut stop_rx => return,
                        accepted = listener.accept() => match accepted {
                            Ok((tcp, _)) => tcp,
                            Err(_) => continue,
                        },
                    };
                    let refusals = Arc::clone(&refusals);
                    let seen = seen_tx.clone();
                    let expected = expected.clone();
                    let check = move |request: &Request, response: Response| {
                        let refuse = refusals.lock().unwrap().pop_front();
                        let authorization = request
                            .headers()
                            .get("authorization")
                            .map(|v| v.to_str().unwrap_or("?").to_owned());
                        let accepted =
                            refuse.is_none() && authorization.as_deref() == Some(&expected);
                        let _ = seen.send(Seen::Handshake {
                            authorization,
                            accepted,
                        });
                        if accepted {
                            Ok(response)
                        } else {
                            let mut refusal = ErrorResponse::new(Some("no".into()));
                            *refusal.status_mut() =
                                StatusCode::from_u16(refuse.unwrap_or(401)).unwrap();
                            refusal
                                .headers_mut()
                                .insert("location", "ws://127.0.0.1:9/elsewhere".parse().unwrap());
                            Err(refusal)
                        }
                    };
                    let go_on = match &acceptor {
                        Some(acceptor) => {
                            let Ok(stream) = acceptor.accept(tcp).await else {
                                let _ = seen_tx.send(Seen::Closed(None));
                                continue;
                            };
                            let Ok(ws) = tokio_tungstenite::accept_hdr_async(stream, check).await
                            else {
                                continue;
                            };
                            serve_connection(ws, &seen_tx, &mut command_rx, &mut stop_rx).await
                        }
                        None => {
                            let Ok(ws) = tokio_tungstenite::accept_hdr_async(tcp, check).await
                            else {
                                continue;
                            };
                            serve_connection(ws, &seen_tx, &mut command_rx, &mut stop_rx).await
                        }
                    };
                    if !go_on {
                        return;
                    }
                }
            });
        });
        let port = port_rx.recv_timeout(STEP).unwrap();
        Self {
            port,
            secure,
            seen,
            commands,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    pub(crate) fn url(&self) -> String {
        let scheme = if self.secure { "wss" } else { "ws" };
        format!("{scheme}://127.0.0.1:{}/lineup", self.port)
    }

    pub(crate) fn send(&self, text: String) {
        self.commands.send(Command_::Text(text)).unwrap();
    }

    pub(crate) fn send_binary(&self, bytes: Vec<u8>) {
        self.commands.send(Command_::Binary(bytes)).unwrap();
    }

    /// The next thing seen, within `STEP`.
    pub(crate) fn next(&self, what: &str) -> Seen {
        match self.seen.recv_timeout(STEP) {
            Ok(seen) => seen,
            Err(RecvTimeoutError::Timeout) => panic!("waiting for {what}: nothing within {STEP:?}"),
            Err(RecvTimeoutError::Disconnected) => panic!("waiting for {what}: the agent stopped"),
        }
    }

    /// Waits for an accepted handshake and returns its `Authorization`.
    pub(crate) fn accepted(&self) -> Option<String> {
        loop {
            if let Seen::Handshake {
                authorization,
                accepted: true,
            } = self.next("an accepted handshake")
            {
                return authorization;
            }
        }
    }

    /// The next text frame.
    pub(crate) fn text(&self, what: &str) -> Value {
        loop {
            match self.next(what) {
                Seen::Text(v) => return v,
                Seen::Closed(code) => {
                    panic!("waiting for {what}: the connection closed ({code:?})")
                }
                Seen::Handshake { .. } => {}
            }
        }
    }

    /// Text frames until one matches `want`; returns it.
    pub(crate) fn until(&self, what: &str, want: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + STEP;
        while Instant::now() < deadline {
            let v = self.text(what);
            if want(&v) {
                return v;
            }
        }
        panic!("waiting for {what}: not within {STEP:?}")
    }

    /// Stops the agent: the listener and the connection are dropped without a closing handshake.
    pub(crate) fn kill(mut self) -> u16 {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
        self.port
    }
}

impl Drop for AgentServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Serves one connection until it ends (`true`: accept the next) or the agent is stopped
/// (`false`).
async fn serve_connection<S>(
    mut ws: tokio_tungstenite::WebSocketStream<S>,
    seen: &mpsc::Sender<Seen>,
    commands: &mut tokio::sync::mpsc::UnboundedReceiver<Command_>,
    stop: &mut tokio::sync::oneshot::Receiver<()>,
) -> bool
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    loop {
        tokio::select! {
            _ = &mut *stop => return false,
            command = commands.recv() => {
                let frame = match command {
                    Some(Command_::Text(t)) => Frame::text(t),
                    Some(Command_::Binary(b)) => Frame::binary(b),
                    None => return false,
                };
                if ws.send(frame).await.is_err() {
                    let _ = seen.send(Seen::Closed(None));
                    return true;
                }
            }
            frame = ws.next() => match frame {
                Some(Ok(Frame::Text(t))) => {
                    let _ = seen.send(Seen::Text(serde_json::from_str(t.as_str()).unwrap()));
                }
                Some(Ok(Frame::Close(c))) => {
                    let _ = seen.send(Seen::Closed(c.map(|c| u16::from(c.code))));
                    let _ = ws.close(None).await;
                    return true;
                }
                Some(Ok(_)) => {}
                Some(Err(_)) | None => {
                    let _ = seen.send(Seen::Closed(None));
                    return true;
                }
            },
        }
    }
}

pub(crate) fn kind(v: &Value) -> &str {
    v["type"].as_str().unwrap_or("?")
}
