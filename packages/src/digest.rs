//! The package digest: one SHA-256 over a canonical listing of every file.

use std::fmt;

use base64::Engine as _;
use sha2::{Digest as _, Sha256};

use crate::{PackageError, PackageFiles};

/// The digest of a package, written `sha256-` + standard base64 (with padding) of 32 bytes.
///
/// It is SHA-256 over, for every file of the package (the manifest included) in the byte order
/// of the names, `N(name) N(hex(sha256(bytes)))`, where `N(s)` is R-UI-2a's netstring: the
/// decimal byte length of `s`, `:`, `s`, `,`, and `hex` is lower case. The length prefixes make
/// the listing unambiguous; hashing each file first lets a tool compute it with the standard
/// tools:
///
/// ```sh
/// cd package && find . -type f | sed 's|^\./||' | LC_ALL=C sort | while read -r f; do
///   h=$(sha256sum "$f" | cut -c1-64)
///   printf '%d:%s,64:%s,' "$(printf '%s' "$f" | wc -c)" "$f" "$h"
/// done | sha256sum | xxd -r -p | base64
/// ```
///
/// ```
/// use lineup_packages::{PackageFiles, PackageLimits};
/// let files = PackageFiles::from_memory([("a.txt", b"ab".to_vec())], &PackageLimits::default())
///     .unwrap();
/// // SHA-256 of "5:a.txt,64:fb8e20fc…0603," (the recipe above gives the same)
/// assert_eq!(
///     files.digest().to_string(),
///     "sha256-5bvpuYvyT7jubcmOFHtoo9qVL0V7CPK4ug/ZLTp5XQ8="
/// );
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct PackageDigest([u8; 32]);

impl PackageDigest {
    /// The digest of `files`.
    pub fn of(files: &PackageFiles) -> Self {
        let mut outer = Sha256::new();
        for (name, bytes) in files.iter() {
            let hex: String = Sha256::digest(bytes)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            for part in [name.as_str(), hex.as_str()] {
                outer.update(part.len().to_string().as_bytes());
                outer.update(b":");
                outer.update(part.as_bytes());
                outer.update(b",");
            }
        }
        Self(outer.finalize().into())
    }

    /// The 32 bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// Parses `sha256-<base64>`.
    ///
    /// # Errors
    /// [`PackageError::BadDigest`] naming the value.
    pub fn parse(value: &str) -> Result<Self, PackageError> {
        let bad = |reason| PackageError::BadDigest {
            value: value.to_owned(),
            reason,
        };
        let b64 = value
            .strip_prefix("sha256-")
            .ok_or_else(|| bad("it must start with 'sha256-'"))?;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .map_err(|_| bad("not standard base64 after 'sha256-'"))?;
        let bytes: [u8; 32] = bytes
            .try_into()
            .map_err(|_| bad("not 32 bytes (44 base64 characters)"))?;
        Ok(Self(bytes))
    }

    /// Checks that `files` have this digest.
    ///
    /// # Errors
    /// [`PackageError::DigestMismatch`] with both digests.
    pub fn check(&self, files: &PackageFiles) -> Result<(), PackageError> {
        let actual = files.digest();
        if actual == *self {
            Ok(())
        } else {
            Err(PackageError::DigestMismatch {
                expected: self.to_string(),
                actual: actual.to_string(),
            })
        }
    }
}

impl fmt::Display for PackageDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "sha256-{}",
            base64::engine::general_purpose::STANDARD.encode(self.0)
        )
    }
}

impl fmt::Debug for PackageDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}
