//! Nothing leaves the host at the network layer (R-SEC-3): every context's requests go to a
//! loopback proxy endpoint that refuses every connection.

use std::net::{Ipv4Addr, SocketAddrV4};
use std::os::fd::OwnedFd;
use std::sync::OnceLock;

use webkit2gtk::{NetworkProxyMode, WebsiteDataManagerExt};

use crate::error::ShellError;

/// R-SEC-3: sends every request of `manager`'s network session, speculative connections
/// included, to [`refusing_endpoint`] (or, for the isolation probe's view alone, to the loopback
/// listener at `probe_proxy` that witnesses the traffic arriving there), with no host exempt.
/// The engine then opens no connection to a page-chosen host and looks up no page-chosen name:
/// an HTTP proxy is handed the name, and this one refuses the connection before a byte is sent.
pub(crate) fn refuse_all_network(
    manager: &webkit2gtk::WebsiteDataManager,
    probe_proxy: Option<u16>,
) -> Result<(), ShellError> {
    let port = match probe_proxy {
        Some(port) => port,
        None => refusing_endpoint()?,
    };
    let proxy = format!("http://127.0.0.1:{port}/");
    let mut settings = webkit2gtk::NetworkProxySettings::new(Some(&proxy), &[]);
    // Every scheme WebKit might proxy names the same endpoint, so no default slips through.
    for scheme in ["http", "https", "ws", "wss"] {
        settings.add_proxy_for_scheme(scheme, &proxy);
    }
    manager.set_network_proxy_settings(NetworkProxyMode::Custom, Some(&mut settings));
    Ok(())
}

/// A loopback TCP port that refuses every connection, for the life of the process: a socket
/// bound to `127.0.0.1:<port>` that never listens. The kernel answers a connection to it with a
/// reset, and no other socket can take the port while this one holds it (no `SO_REUSEADDR` or
/// `SO_REUSEPORT`; the kernel never picks a bound port as an ephemeral one).
pub(super) fn refusing_endpoint() -> Result<u16, ShellError> {
    static ENDPOINT: OnceLock<Result<(OwnedFd, u16), String>> = OnceLock::new();
    let bound = ENDPOINT.get_or_init(|| {
        let socket = rustix::net::socket_with(
            rustix::net::AddressFamily::INET,
            rustix::net::SocketType::STREAM,
            rustix::net::SocketFlags::CLOEXEC,
            None,
        )
        .map_err(|e| format!("cannot create the refusing proxy's socket: {e}"))?;
        rustix::net::bind(&socket, &SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0))
            .map_err(|e| format!("cannot bind the refusing proxy's socket: {e}"))?;
        let local = rustix::net::getsockname(&socket)
            .map_err(|e| format!("cannot read the refusing proxy's port: {e}"))?;
        let port = SocketAddrV4::try_from(local)
            .map_err(|e| format!("the refusing proxy's socket is not IPv4: {e}"))?
            .port();
        Ok((socket, port))
    });
    match bound {
        Ok((_, port)) => Ok(*port),
        Err(reason) => Err(ShellError::Platform(reason.clone())),
    }
}
