//! MCP App resources by digest (R-MCP-4): the agent sends a view's HTML once per session, in
//! bounded chunks addressed by its SHA-256 digest, and opens it any number of times by that
//! digest. The bytes are checked against the digest before use and kept in a bounded cache.

use std::collections::BTreeMap;
use std::sync::Arc;

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

/// The bounds of one session's resources (R-MCP-4).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResourceLimits {
    /// The largest resource, in bytes after base64 decoding
    /// (`Limits::max_mcp_resource_bytes`, 8 MiB).
    pub max_resource_bytes: u64,
    /// The largest chunk's base64 text, in bytes: an envelope carrying it stays within
    /// R-ENV-4's bound.
    pub max_chunk_bytes: usize,
    /// How many bytes complete resources may hold together; the least recently used go first.
    pub max_cached_bytes: u64,
    /// How many resources may be arriving at once.
    pub max_arriving: usize,
}

impl Default for ResourceLimits {
    fn default() -> Self {
        Self {
            max_resource_bytes: 8 * 1024 * 1024,
            max_chunk_bytes: 512 * 1024,
            max_cached_bytes: 32 * 1024 * 1024,
            max_arriving: 4,
        }
    }
}

/// A SHA-256 digest as the wire writes it: `sha256:` and 64 lowercase hex digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ResourceDigest([u8; 32]);

impl ResourceDigest {
    /// Reads `sha256:<64 lowercase hex digits>`.
    pub fn parse(text: &str) -> Result<Self, ResourceRefusal> {
        let malformed = || ResourceRefusal::MalformedDigest(text.chars().take(80).collect());
        let hex = text.strip_prefix("sha256:").ok_or_else(malformed)?;
        if hex.len() != 64 || !hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
            return Err(malformed());
        }
        let mut bytes = [0u8; 32];
        for (i, byte) in bytes.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).map_err(|_| malformed())?;
        }
        Ok(Self(bytes))
    }

    /// The digest of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        Self(Sha256::digest(bytes).into())
    }
}

impl TryFrom<String> for ResourceDigest {
    type Error = ResourceRefusal;
    fn try_from(text: String) -> Result<Self, ResourceRefusal> {
        Self::parse(&text)
    }
}

impl From<ResourceDigest> for String {
    fn from(digest: ResourceDigest) -> String {
        digest.to_string()
    }
}

impl std::fmt::Display for ResourceDigest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("sha256:")?;
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

/// Why a chunk or an open by digest is refused; each names the field, the value and the limit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ResourceRefusal {
    /// `digest` is not `sha256:` and 64 lowercase hex digits.
    #[error("digest {0:?} is not sha256: and 64 lowercase hex digits (R-MCP-4)")]
    MalformedDigest(String),
    /// `size` is over the limit.
    #[error("size {size} bytes is over the limit of {limit} bytes after decoding (R-MCP-4)")]
    TooLarge {
        /// The declared or reached size.
        size: u64,
        /// [`ResourceLimits::max_resource_bytes`].
        limit: u64,
    },
    /// A chunk's `data` is longer than a chunk may be.
    #[error("data is {len} bytes of base64; a chunk is at most {limit} (R-MCP-4)")]
    ChunkTooLarge {
        /// Its length.
        len: usize,
        /// [`ResourceLimits::max_chunk_bytes`].
        limit: usize,
    },
    /// A chunk's `data` is not base64.
    #[error("data is not base64: {0}")]
    NotBase64(String),
    /// A chunk's `offset` is not where the resource's bytes end so far.
    #[error("offset {offset} is not the next byte; {expected} bytes have arrived (R-MCP-4)")]
    OutOfOrder {
        /// The chunk's offset.
        offset: u64,
        /// How many bytes arrived.
        expected: u64,
    },
    /// A chunk's `size` differs from the first chunk's.
    #[error("size {size} differs from the {first} bytes the first chunk declared")]
    SizeChanged {
        /// This chunk's size.
        size: u64,
        /// The first chunk's.
        first: u64,
    },
    /// A chunk runs past the declared `size`.
    #[error("the chunk ends at byte {end}, past the declared size of {size}")]
    Overrun {
        /// Where it ends.
        end: u64,
        /// The declared size.
        size: u64,
    },
    /// The bytes do not have the declared digest: they were dropped.
    #[error("the bytes' digest is {actual}, not the declared {declared}; dropped (R-MCP-4)")]
    DigestMismatch {
        /// The declared digest.
        declared: ResourceDigest,
        /// The bytes'.
        actual: ResourceDigest,
    },
    /// Too many resources are arriving at once.
    #[error("{arriving} resources are arriving; the limit is {limit}")]
    TooManyArriving {
        /// How many are.
        arriving: usize,
        /// [`ResourceLimits::max_arriving`].
        limit: usize,
    },
}

/// Where a resource stands after a chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    /// More is to come: `received` of `size` bytes.
    Partial {
        /// Bytes so far.
        received: u64,
        /// The declared size.
        size: u64,
    },
    /// Complete and checked: it opens by its digest.
    Complete,
}

/// One session's MCP App resources: those arriving and those complete.
///
/// Invariants: a complete resource's bytes have its digest and are at most
/// [`ResourceLimits::max_resource_bytes`]; complete resources hold at most
/// [`ResourceLimits::max_cached_bytes`] together, the least recently used dropped first
/// (`used` orders them); an arriving resource's bytes are the prefix its chunks gave, in order.
#[derive(Debug, Default)]
pub struct McpResources {
    limits: ResourceLimits,
    arriving: BTreeMap<ResourceDigest, (u64, Vec<u8>)>,
    complete: BTreeMap<ResourceDigest, (Arc<[u8]>, u64)>,
    cached_bytes: u64,
    turn: u64,
}

impl McpResources {
    /// No resources yet, within `limits`.
    pub fn new(limits: ResourceLimits) -> Self {
        Self {
            limits,
            ..Self::default()
        }
    }

    /// A chunk of resource `digest` (`size` bytes when decoded): its base64 `data` for the
    /// bytes from `offset` on. Chunks arrive in order; the last one checks the digest. A chunk
    /// of a resource already complete changes nothing.
    pub fn chunk(
        &mut self,
        digest: &str,
        size: u64,
        offset: u64,
        data: &str,
    ) -> Result<Arrival, ResourceRefusal> {
        let digest = ResourceDigest::parse(digest)?;
        if self.complete.contains_key(&digest) {
            return Ok(Arrival::Complete);
        }
        let limit = self.limits.max_resource_bytes;
        if size > limit {
            return Err(ResourceRefusal::TooLarge { size, limit });
        }
        if data.len() > self.limits.max_chunk_bytes {
            return Err(ResourceRefusal::ChunkTooLarge {
                len: data.len(),
                limit: self.limits.max_chunk_bytes,
            });
        }
        if !self.arriving.contains_key(&digest) && self.arriving.len() >= self.limits.max_arriving {
            return Err(ResourceRefusal::TooManyArriving {
                arriving: self.arriving.len(),
                limit: self.limits.max_arriving,
            });
        }
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(data)
            .map_err(|e| ResourceRefusal::NotBase64(e.to_string()))?;
        let (first, bytes) = self.arriving.entry(digest).or_insert((size, Vec::new()));
        let received = bytes.len() as u64;
        let refusal = if *first != size {
            Some(ResourceRefusal::SizeChanged {
                size,
                first: *first,
            })
        } else if offset != received {
            Some(ResourceRefusal::OutOfOrder {
                offset,
                expected: received,
            })
        } else if received + decoded.len() as u64 > size {
            Some(ResourceRefusal::Overrun {
                end: received + decoded.len() as u64,
                size,
            })
        } else {
            None
        };
        if let Some(refusal) = refusal {
            if bytes.is_empty() {
                self.arriving.remove(&digest);
            }
            return Err(refusal);
        }
        bytes.extend_from_slice(&decoded);
        let received = bytes.len() as u64;
        if received < size {
            return Ok(Arrival::Partial { received, size });
        }
        let (_, bytes) = self.arriving.remove(&digest).unwrap_or_default();
        let actual = ResourceDigest::of(&bytes);
        if actual != digest {
            return Err(ResourceRefusal::DigestMismatch {
                declared: digest,
                actual,
            });
        }
        self.keep(digest, bytes.into());
        Ok(Arrival::Complete)
    }

    fn keep(&mut self, digest: ResourceDigest, bytes: Arc<[u8]>) {
        self.cached_bytes += bytes.len() as u64;
        self.turn += 1;
        self.complete.insert(digest, (bytes, self.turn));
        while self.cached_bytes > self.limits.max_cached_bytes {
            let Some(oldest) = self
                .complete
                .iter()
                .filter(|(d, _)| **d != digest)
                .min_by_key(|(_, (_, used))| *used)
                .map(|(d, _)| *d)
            else {
                break;
            };
            if let Some((gone, _)) = self.complete.remove(&oldest) {
                self.cached_bytes -= gone.len() as u64;
            }
        }
    }

    /// The bytes of complete resource `digest`, to open a view with; `None` when it never
    /// arrived whole or was dropped from the cache (the agent sends it again).
    pub fn get(&mut self, digest: &ResourceDigest) -> Option<Arc<[u8]>> {
        self.turn += 1;
        let turn = self.turn;
        let (bytes, used) = self.complete.get_mut(digest)?;
        *used = turn;
        Some(Arc::clone(bytes))
    }

    /// How many bytes complete resources hold.
    pub fn cached_bytes(&self) -> u64 {
        self.cached_bytes
    }
}
