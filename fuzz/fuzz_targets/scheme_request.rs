//! Fuzzes the Surface scheme handler's routing: `SurfaceServer::respond(method, uri)` of a
//! Surface with fuzzed asset paths, for a fuzzed method and URI (R-SEC-2, R-SEC-3a).
//!
//! Input: lines. The first is the method, the second the URI (a leading `@` stands for the
//! Surface's own origin `lineup-surface://<token>`, a leading `!` for another Surface's), and
//! each later line (at most 8) is the path of an asset the Surface serves.
//!
//! Checks: no panic; `200` only for `GET` or `HEAD` of exactly the token's document (`/`,
//! `/index.html`) or of exactly a listed asset path (a `#fragment` aside, the URI at most 2048
//! bytes), with that resource's bytes (none for `HEAD`) and type; `405` only for another method
//! on such a URI; `404` for everything else; every response carries the security headers with a
//! policy, and no header value holds a line break or NUL.
#![no_main]

use std::collections::BTreeMap;
use std::sync::Arc;

use lineup_host_core::InlineBundle;
use lineup_packages::{asset_mime, PackagePath};
use lineup_surface_runtime::{
    ContentSecurityPolicy, DocumentOptions, SurfaceDocument, SurfaceServer, SurfaceToken, SCHEME,
};

/// The longest URI the handler looks at (`server.rs`).
const MAX_URI_LEN: usize = 2048;

#[derive(Clone, Copy)]
enum Served {
    Document,
    Asset(usize),
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut lines = text.split('\n');
    let method = lines.next().unwrap_or_default();
    let uri = lines.next().unwrap_or_default();
    let paths: Vec<&str> = lines.take(8).collect();

    let token = SurfaceToken::from_random_bytes([0x5a; 16]);
    let other = SurfaceToken::from_random_bytes([0xa5; 16]);
    let own = format!("{SCHEME}://{token}");
    let uri = if let Some(rest) = uri.strip_prefix('@') {
        format!("{own}{rest}")
    } else if let Some(rest) = uri.strip_prefix('!') {
        format!("{SCHEME}://{other}{rest}")
    } else {
        uri.to_owned()
    };

    // As the host builds an installed app's Surface (host/src/host/views.rs).
    let bundle = InlineBundle::new("<p>hi</p>", "p{}", "1").expect("a valid bundle");
    let mut options = DocumentOptions::default();
    if !paths.is_empty() {
        options = options.with_own_assets(&own);
    }
    let document = SurfaceDocument::assemble(&bundle, &options);
    let document_csp = options.csp().map(ContentSecurityPolicy::header_value);
    let html = document.html().as_bytes().to_vec();
    let assets: Vec<(String, String, Arc<[u8]>)> = paths
        .iter()
        .enumerate()
        .map(|(i, path)| {
            let mime = PackagePath::new(path)
                .ok()
                .and_then(|p| asset_mime(&p))
                .unwrap_or("application/octet-stream");
            let bytes: Arc<[u8]> = Arc::from(format!("asset {i}").into_bytes());
            ((*path).to_owned(), mime.to_owned(), bytes)
        })
        .collect();
    let server = SurfaceServer::new(token, document).with_assets(assets.clone());

    // What may be served: the document at two paths, then each asset at its exact path, the
    // first of equal paths winning and the document's paths never replaced.
    let mut served: BTreeMap<String, Served> = BTreeMap::new();
    served.insert("/".to_owned(), Served::Document);
    served.insert("/index.html".to_owned(), Served::Document);
    for (i, (path, _, _)) in assets.iter().enumerate() {
        served.entry(format!("/{path}")).or_insert(Served::Asset(i));
    }
    let without_fragment = uri
        .split_once('#')
        .map_or(uri.as_str(), |(before, _)| before);
    let expected = if uri.len() > MAX_URI_LEN {
        None
    } else {
        without_fragment
            .strip_prefix(own.as_str())
            .and_then(|path| served.get(path).copied())
    };

    let response = server.respond(method, &uri);
    let reads = method == "GET" || method == "HEAD";
    let body_of = |bytes: &[u8]| {
        if method == "HEAD" {
            Vec::new()
        } else {
            bytes.to_vec()
        }
    };
    match (expected, reads) {
        (None, _) => {
            assert_eq!(response.status, 404, "{method:?} {uri:?} was served");
            assert_eq!(response.body, body_of(b"not found\n"));
        }
        (Some(_), false) => {
            assert_eq!(response.status, 405, "{method:?} {uri:?}");
            assert_eq!(response.header("Allow"), Some("GET, HEAD"));
        }
        (Some(Served::Document), true) => {
            assert_eq!(response.status, 200, "{method:?} {uri:?}");
            assert_eq!(response.body, body_of(&html));
            assert_eq!(
                response.header("Content-Type"),
                Some("text/html; charset=utf-8")
            );
            assert_eq!(
                response
                    .header("Content-Security-Policy")
                    .map(str::to_owned),
                document_csp
            );
        }
        (Some(Served::Asset(i)), true) => {
            let (_, mime, bytes) = &assets[i];
            assert_eq!(response.status, 200, "{method:?} {uri:?}");
            assert_eq!(response.body, body_of(bytes));
            assert_eq!(response.header("Content-Type"), Some(mime.as_str()));
            assert_eq!(response.header("Access-Control-Allow-Origin"), Some("*"));
        }
    }
    if response.status != 200 || matches!(expected, Some(Served::Asset(_))) {
        assert_eq!(
            response
                .header("Content-Security-Policy")
                .map(str::to_owned),
            Some(ContentSecurityPolicy::strict().header_value()),
            "{method:?} {uri:?} without the strict policy"
        );
    }
    assert_eq!(response.header("X-Content-Type-Options"), Some("nosniff"));
    assert_eq!(response.header("Cache-Control"), Some("no-store"));
    for (name, value) in &response.headers {
        assert!(
            !value.contains(['\r', '\n', '\0']),
            "header {name} holds a line break or NUL: {value:?}"
        );
    }
});
