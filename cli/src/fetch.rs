//! Downloading a package for `lineup apps install https://…` (R-SEC-7): https only, redirects
//! limited and never to plain http, the bytes capped while they stream, a stall timeout on every
//! read, and nothing kept: the caller verifies the bytes (digest or signature) before anything
//! is stored.

use std::path::Path;
use std::time::Duration;

/// At most this many redirects are followed.
pub(crate) const MAX_REDIRECTS: usize = 5;

/// How a download is bounded.
#[derive(Debug, Clone)]
pub(crate) struct FetchLimits {
    /// The most bytes read; a longer body is refused while it streams.
    pub(crate) max_bytes: u64,
    /// The longest wait for the connection, the response, or any next bytes of the body.
    pub(crate) stall: Duration,
}

/// Downloads `url` into memory.
///
/// `trusted_roots` (a PEM file of CA certificates), when given, replaces the system's roots: only
/// servers whose chain ends in one of them are trusted.
pub(crate) fn fetch(
    url: &str,
    trusted_roots: Option<&Path>,
    limits: &FetchLimits,
) -> Result<Vec<u8>, String> {
    if !url.starts_with("https://") {
        return Err(format!("{url}: only https:// URLs are downloaded"));
    }
    let mut builder = reqwest::Client::builder()
        .https_only(true)
        .redirect(reqwest::redirect::Policy::limited(MAX_REDIRECTS))
        .connect_timeout(limits.stall)
        .read_timeout(limits.stall)
        .no_proxy()
        .user_agent(concat!("lineup/", env!("CARGO_PKG_VERSION")));
    if let Some(path) = trusted_roots {
        let pem = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let roots = reqwest::Certificate::from_pem_bundle(&pem)
            .map_err(|e| format!("{}: not PEM certificates: {e}", path.display()))?;
        if roots.is_empty() {
            return Err(format!("{}: holds no certificate", path.display()));
        }
        builder = builder.tls_built_in_root_certs(false);
        for root in roots {
            builder = builder.add_root_certificate(root);
        }
    }
    let client = builder
        .build()
        .map_err(|e| format!("cannot set up the HTTPS client: {e}"))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the download: {e}"))?;
    runtime.block_on(download(client, url, limits))
}

async fn download(
    client: reqwest::Client,
    url: &str,
    limits: &FetchLimits,
) -> Result<Vec<u8>, String> {
    let explain = |e: reqwest::Error| {
        let mut message = e.to_string();
        let mut source = std::error::Error::source(&e);
        while let Some(cause) = source {
            message.push_str(": ");
            message.push_str(&cause.to_string());
            source = cause.source();
        }
        if e.is_timeout() {
            message.push_str(&format!(" (nothing arrived for {:?})", limits.stall));
        }
        format!("{url}: {message}")
    };
    let mut response = client.get(url).send().await.map_err(explain)?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!("{url}: the server answered {status}"));
    }
    if let Some(length) = response.content_length() {
        if length > limits.max_bytes {
            return Err(format!(
                "{url}: the server announces {length} bytes, over the limit of {}",
                limits.max_bytes
            ));
        }
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(explain)? {
        if body.len() as u64 + chunk.len() as u64 > limits.max_bytes {
            return Err(format!(
                "{url}: the body passed the limit of {} bytes",
                limits.max_bytes
            ));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}
