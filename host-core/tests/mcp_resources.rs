//! MCP App resources by digest (R-MCP-4), table-tested: chunks in order within their bound, the
//! digest checked before use, 8 MiB opens and 8 MiB + 1 byte does not, the cache bounded.
#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]

use base64::Engine as _;
use lineup_host_core::mcp::{
    Arrival, McpResources, ResourceDigest, ResourceLimits, ResourceRefusal,
};

const MIB: usize = 1024 * 1024;

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Sends `bytes` in chunks of `chunk` bytes; the last arrival, or the first refusal.
fn send(
    resources: &mut McpResources,
    digest: &str,
    bytes: &[u8],
    chunk: usize,
) -> Result<Arrival, ResourceRefusal> {
    let size = bytes.len() as u64;
    let mut last = Arrival::Partial { received: 0, size };
    for (i, part) in bytes.chunks(chunk.max(1)).enumerate() {
        last = resources.chunk(digest, size, (i * chunk) as u64, &b64(part))?;
    }
    Ok(last)
}

fn view(len: usize) -> Vec<u8> {
    (0..len).map(|i| b"<p>mcp app view</p>"[i % 19]).collect()
}

#[test]
fn r_mcp_4_a_view_of_8_mib_opens_by_its_digest_and_one_byte_more_is_refused() {
    let mut resources = McpResources::new(ResourceLimits::default());
    let bytes = view(8 * MIB);
    let digest = ResourceDigest::of(&bytes);
    // Chunks of 384 KiB: 512 KiB of base64 each, the chunk bound.
    assert_eq!(
        send(&mut resources, &digest.to_string(), &bytes, 384 * 1024),
        Ok(Arrival::Complete)
    );
    // Opened any number of times by its digest.
    for _ in 0..3 {
        assert_eq!(resources.get(&digest).unwrap().len(), 8 * MIB);
    }
    // One byte more is refused at its first chunk, naming the limit.
    let over = (8 * MIB + 1) as u64;
    let refused = resources.chunk(&ResourceDigest::of(b"x").to_string(), over, 0, "eA==");
    assert_eq!(
        refused,
        Err(ResourceRefusal::TooLarge {
            size: over,
            limit: 8 * MIB as u64
        })
    );
    assert!(refused
        .unwrap_err()
        .to_string()
        .contains("size 8388609 bytes is over the limit of 8388608 bytes"));
}

#[test]
fn r_mcp_4_every_chunk_is_checked_and_a_wrong_digest_is_dropped() {
    let bytes = view(1000);
    let digest = ResourceDigest::of(&bytes).to_string();
    let other = ResourceDigest::of(b"other").to_string();
    // Each row: what is sent after a first chunk of 400 bytes, and the refusal.
    type Step = Box<dyn Fn(&mut McpResources) -> Result<Arrival, ResourceRefusal>>;
    let part = b64(&bytes[400..800]);
    let table: Vec<(Step, &str)> = vec![
        (
            Box::new({
                let (d, p) = (digest.clone(), part.clone());
                move |r| r.chunk(&d, 1000, 300, &p)
            }),
            "offset 300 is not the next byte; 400 bytes have arrived",
        ),
        (
            Box::new({
                let (d, p) = (digest.clone(), part.clone());
                move |r| r.chunk(&d, 999, 400, &p)
            }),
            "size 999 differs from the 1000 bytes",
        ),
        (
            Box::new({
                let d = digest.clone();
                move |r| r.chunk(&d, 1000, 400, &b64(&[b'x'; 601]))
            }),
            "ends at byte 1001, past the declared size of 1000",
        ),
        (
            Box::new({
                let d = digest.clone();
                move |r| r.chunk(&d, 1000, 400, "not base64!")
            }),
            "not base64",
        ),
        (
            Box::new(|r| r.chunk("sha256:ABC", 10, 0, "")),
            "is not sha256: and 64 lowercase hex digits",
        ),
    ];
    for (step, words) in table {
        let mut resources = McpResources::new(ResourceLimits::default());
        let first = resources.chunk(&digest, 1000, 0, &b64(&bytes[..400]));
        assert_eq!(
            first,
            Ok(Arrival::Partial {
                received: 400,
                size: 1000
            })
        );
        let refused = step(&mut resources).unwrap_err().to_string();
        assert!(refused.contains(words), "{refused}");
        // A refused chunk changes nothing: the right one still completes it.
        assert_eq!(
            send_rest(&mut resources, &digest, &bytes, 400),
            Ok(Arrival::Complete)
        );
    }
    // Bytes that do not have the declared digest are refused and dropped.
    let mut resources = McpResources::new(ResourceLimits::default());
    let refused = send(&mut resources, &other, &bytes, 400).unwrap_err();
    assert!(
        matches!(refused, ResourceRefusal::DigestMismatch { .. }),
        "{refused}"
    );
    assert!(resources
        .get(&ResourceDigest::parse(&other).unwrap())
        .is_none());
    assert!(resources.get(&ResourceDigest::of(&bytes)).is_none());
}

fn send_rest(
    resources: &mut McpResources,
    digest: &str,
    bytes: &[u8],
    from: usize,
) -> Result<Arrival, ResourceRefusal> {
    resources.chunk(
        digest,
        bytes.len() as u64,
        from as u64,
        &b64(&bytes[from..]),
    )
}

#[test]
fn r_mcp_4_chunks_and_arrivals_are_bounded_and_the_cache_drops_the_least_recently_used() {
    let mut limits = ResourceLimits::default();
    limits.max_chunk_bytes = 100;
    limits.max_cached_bytes = 250;
    limits.max_arriving = 1;
    let mut resources = McpResources::new(limits);
    let long = b64(&[b'a'; 76]);
    let refused = resources.chunk(&ResourceDigest::of(b"a").to_string(), 76, 0, &long);
    assert_eq!(
        refused,
        Err(ResourceRefusal::ChunkTooLarge {
            len: 104,
            limit: 100
        })
    );
    // One arriving at a time.
    let (a, b) = (view(150), view(151));
    let a_digest = ResourceDigest::of(&a).to_string();
    assert!(matches!(
        resources.chunk(&a_digest, 150, 0, &b64(&a[..60])),
        Ok(Arrival::Partial { .. })
    ));
    let second = resources.chunk(&ResourceDigest::of(&b).to_string(), 151, 0, &b64(&b[..60]));
    assert_eq!(
        second,
        Err(ResourceRefusal::TooManyArriving {
            arriving: 1,
            limit: 1
        })
    );
    assert!(matches!(
        resources.chunk(&a_digest, 150, 60, &b64(&a[60..120])),
        Ok(Arrival::Partial { received: 120, .. })
    ));
    assert_eq!(
        resources.chunk(&a_digest, 150, 120, &b64(&a[120..])),
        Ok(Arrival::Complete)
    );
    // Two of 150 and 151 bytes do not fit 250: the one used least recently goes.
    assert_eq!(
        send(&mut resources, &ResourceDigest::of(&b).to_string(), &b, 60),
        Ok(Arrival::Complete)
    );
    assert!(resources.get(&ResourceDigest::of(&a)).is_none());
    assert!(resources.get(&ResourceDigest::of(&b)).is_some());
    assert_eq!(resources.cached_bytes(), 151);
    // A chunk of a resource already complete changes nothing.
    assert_eq!(
        resources.chunk(&ResourceDigest::of(&b).to_string(), 151, 0, ""),
        Ok(Arrival::Complete)
    );
}
