//! Ed25519 signatures over a package digest, and the text forms of keys and signatures.
//!
//! | what | form |
//! | --- | --- |
//! | signed message | the 18 bytes `lineup-package-v1\0`, then the digest's 32 raw bytes |
//! | public key | `ed25519:` + standard base64 of the 32-byte key |
//! | secret key file | `lineup-ed25519-secret-v1 ` + standard base64 of the 32-byte seed, one line, mode 0600 |
//! | signature file | `ed25519:<key base64> <signature base64>`, one line |
//!
//! Verification is strict (`verify_strict`: no small-order keys, canonical `S`).

use std::fmt;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use ed25519_dalek::{Signer as _, SigningKey, VerifyingKey};

use crate::{PackageDigest, PackageError};

/// The domain separation prefix of every signed message.
pub const SIGNATURE_CONTEXT: &[u8] = b"lineup-package-v1\0";

const SECRET_PREFIX: &str = "lineup-ed25519-secret-v1 ";
const KEY_PREFIX: &str = "ed25519:";

fn message(digest: &PackageDigest) -> Vec<u8> {
    let mut message = SIGNATURE_CONTEXT.to_vec();
    message.extend_from_slice(digest.as_bytes());
    message
}

fn bad_key(what: &str, reason: impl Into<String>) -> PackageError {
    PackageError::BadKey {
        what: what.to_owned(),
        reason: reason.into(),
    }
}

/// A secret signing key. Its `Debug` shows only the public key.
pub struct SecretKey(SigningKey);

impl SecretKey {
    /// A new key from the system's random source.
    ///
    /// # Errors
    /// [`PackageError::BadKey`] when there is no random source.
    pub fn generate() -> Result<Self, PackageError> {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed)
            .map_err(|e| bad_key("a new key", format!("no random source: {e}")))?;
        Ok(Self(SigningKey::from_bytes(&seed)))
    }

    /// Parses the one-line secret key file form.
    ///
    /// # Errors
    /// [`PackageError::BadKey`].
    pub fn parse(text: &str) -> Result<Self, PackageError> {
        let b64 = text.trim().strip_prefix(SECRET_PREFIX).ok_or_else(|| {
            bad_key(
                "the secret key",
                format!("it must start with {SECRET_PREFIX:?}"),
            )
        })?;
        let seed: [u8; 32] = STANDARD
            .decode(b64)
            .ok()
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| bad_key("the secret key", "not 32 bytes of standard base64"))?;
        Ok(Self(SigningKey::from_bytes(&seed)))
    }

    /// The one-line secret key file form (keep it private: mode 0600).
    pub fn to_file_text(&self) -> String {
        format!("{SECRET_PREFIX}{}\n", STANDARD.encode(self.0.to_bytes()))
    }

    /// The public key.
    pub fn public_key(&self) -> PublicKey {
        PublicKey(self.0.verifying_key())
    }

    /// Signs a package digest.
    pub fn sign(&self, digest: &PackageDigest) -> PackageSignature {
        PackageSignature {
            key: self.public_key(),
            signature: self.0.sign(&message(digest)),
        }
    }
}

impl fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("SecretKey")
            .field(&self.public_key())
            .finish()
    }
}

/// A public key, written `ed25519:<base64>`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct PublicKey(VerifyingKey);

impl PublicKey {
    /// Parses `ed25519:<base64>`.
    ///
    /// # Errors
    /// [`PackageError::BadKey`], also for a key that is not a valid curve point.
    pub fn parse(text: &str) -> Result<Self, PackageError> {
        let b64 = text.trim().strip_prefix(KEY_PREFIX).ok_or_else(|| {
            bad_key(
                "the public key",
                format!("it must start with {KEY_PREFIX:?}"),
            )
        })?;
        let bytes: [u8; 32] = STANDARD
            .decode(b64)
            .ok()
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| bad_key("the public key", "not 32 bytes of standard base64"))?;
        VerifyingKey::from_bytes(&bytes)
            .map(Self)
            .map_err(|_| bad_key("the public key", "not a valid Ed25519 key"))
    }
}

impl fmt::Display for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{KEY_PREFIX}{}", STANDARD.encode(self.0.as_bytes()))
    }
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// A signature of a package digest, with the key that made it.
#[derive(Clone, PartialEq, Eq)]
pub struct PackageSignature {
    key: PublicKey,
    signature: ed25519_dalek::Signature,
}

impl PackageSignature {
    /// Parses the one-line signature file form.
    ///
    /// # Errors
    /// [`PackageError::BadKey`].
    pub fn parse(text: &str) -> Result<Self, PackageError> {
        let mut words = text.split_whitespace();
        let (Some(key), Some(signature), None) = (words.next(), words.next(), words.next()) else {
            return Err(bad_key(
                "the signature",
                "it must be one line: ed25519:<key base64> <signature base64>",
            ));
        };
        let key = PublicKey::parse(key)?;
        let bytes: [u8; 64] = STANDARD
            .decode(signature)
            .ok()
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| bad_key("the signature", "not 64 bytes of standard base64"))?;
        Ok(Self {
            key,
            signature: ed25519_dalek::Signature::from_bytes(&bytes),
        })
    }

    /// The key that made it.
    pub fn key(&self) -> PublicKey {
        self.key
    }

    /// Checks the signature over `digest`, made by one of `trusted`.
    ///
    /// # Errors
    /// [`PackageError::Untrusted`] when the key is not trusted or the signature does not
    /// verify.
    pub fn verify(
        &self,
        digest: &PackageDigest,
        trusted: &[PublicKey],
    ) -> Result<(), PackageError> {
        if !trusted.contains(&self.key) {
            return Err(PackageError::Untrusted {
                key: self.key.to_string(),
                reason: "is not one of the trusted keys",
            });
        }
        self.key
            .0
            .verify_strict(&message(digest), &self.signature)
            .map_err(|_| PackageError::Untrusted {
                key: self.key.to_string(),
                reason: "does not verify this package's digest",
            })
    }
}

impl fmt::Display for PackageSignature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {}",
            self.key,
            STANDARD.encode(self.signature.to_bytes())
        )
    }
}

impl fmt::Debug for PackageSignature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}
