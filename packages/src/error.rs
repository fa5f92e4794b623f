//! Why a package is refused: every error names the file or field, the value and the limit.

use std::path::PathBuf;

/// A refused package, archive, manifest, key or signature.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PackageError {
    /// A file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The error of the system.
        #[source]
        source: std::io::Error,
    },
    /// The archive is not a readable tar archive.
    #[error("the archive is not a valid tar archive: {0}")]
    Archive(String),
    /// An entry's name is not allowed (absolute, `..`, backslash, control character, not
    /// UTF-8, too long …).
    #[error("entry {name:?}: {reason}")]
    BadPath {
        /// The name as found (lossily decoded).
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// An entry is a symbolic link, hard link, device, FIFO or another non-regular type.
    #[error("entry {name:?} is a {kind}: a package holds only regular files and folders")]
    NotAFile {
        /// The name.
        name: String,
        /// What it is.
        kind: &'static str,
    },
    /// Two entries have the same name.
    #[error("entry {name:?} appears twice")]
    Duplicate {
        /// The name.
        name: String,
    },
    /// Two entries differ only by case, or one is a file where another needs a folder; they
    /// would collide on a case-insensitive file system or when unpacked.
    #[error("entries {first:?} and {second:?} collide: {reason}")]
    Collision {
        /// The entry found first.
        first: String,
        /// The entry that collides with it.
        second: String,
        /// Why they collide.
        reason: &'static str,
    },
    /// A cap on the package was passed.
    #[error("{what} is {value}, over the limit of {limit}")]
    TooLarge {
        /// What was counted, e.g. `entry "a.png"` or `the number of entries`.
        what: String,
        /// The value found (at least; reading stops at the limit).
        value: u64,
        /// The limit.
        limit: u64,
    },
    /// A file's bytes are not what its archive header says.
    #[error("entry {name:?}: the header says {declared} bytes, the archive holds {found}")]
    SizeMismatch {
        /// The name.
        name: String,
        /// The size in the header.
        declared: u64,
        /// The bytes read.
        found: u64,
    },
    /// The package has no `manifest.json`.
    #[error("the package has no {0}")]
    NoManifest(&'static str),
    /// The manifest does not parse or a field is invalid.
    #[error("manifest.json: {field}: {reason}")]
    Manifest {
        /// The field's path, like `surfaces.main.events[2]`.
        field: String,
        /// What is wrong, with the value and the rule.
        reason: String,
    },
    /// A file is in the package but not in the manifest.
    #[error("{0:?} is in the package but not listed in manifest.json: a package holds only the files its manifest names")]
    Unlisted(String),
    /// A digest is not `sha256-` and 44 characters of standard base64.
    #[error("digest {value:?}: {reason}")]
    BadDigest {
        /// The value given.
        value: String,
        /// What is wrong.
        reason: &'static str,
    },
    /// The package's digest is not the one expected.
    #[error("the package's digest is {actual}, not the expected {expected}")]
    DigestMismatch {
        /// The digest expected.
        expected: String,
        /// The digest of the bytes.
        actual: String,
    },
    /// A key or signature file does not parse.
    #[error("{what}: {reason}")]
    BadKey {
        /// What was read, e.g. `the signature`, `trusted key 2`.
        what: String,
        /// What is wrong.
        reason: String,
    },
    /// No trusted key verifies the signature.
    #[error("the signature by key {key} {reason}")]
    Untrusted {
        /// The signing key, as `ed25519:<base64>`.
        key: String,
        /// `is not one of the trusted keys` or `does not verify this package's digest`.
        reason: &'static str,
    },
}

impl PackageError {
    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| Self::Io { path, source }
    }
}
