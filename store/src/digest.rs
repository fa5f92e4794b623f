//! `Sha256Hex`: a SHA-256 digest written as 64 lowercase hex digits, the form of argument
//! digests and audit-chain digests.

use std::fmt;

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use crate::error::excerpt;
use crate::StoreError;

/// A SHA-256 digest as 64 lowercase hex digits: the digest of a call's arguments, or of an audit
/// record. Built by [`Sha256Hex::of`] or parsed with `TryFrom`, so it is always well-formed.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Sha256Hex(String);

impl Sha256Hex {
    /// The `prev` of the first audit record: 64 zeros.
    pub fn zero() -> Self {
        Self("0".repeat(64))
    }

    /// The SHA-256 of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        let digest = Sha256::digest(bytes);
        let mut hex = String::with_capacity(64);
        for byte in digest {
            hex.push(char::from(HEX[usize::from(byte >> 4)]));
            hex.push(char::from(HEX[usize::from(byte & 0x0f)]));
        }
        Self(hex)
    }

    /// The 64 hex digits.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

impl TryFrom<String> for Sha256Hex {
    type Error = StoreError;

    fn try_from(value: String) -> Result<Self, StoreError> {
        if value.len() == 64 && value.bytes().all(|b| HEX.contains(&b)) {
            Ok(Self(value))
        } else {
            Err(StoreError::InvalidValue {
                what: "sha-256 digest",
                value: excerpt(&value),
                hint: "it must be 64 lowercase hex digits",
            })
        }
    }
}

impl TryFrom<&str> for Sha256Hex {
    type Error = StoreError;

    fn try_from(value: &str) -> Result<Self, StoreError> {
        Self::try_from(value.to_owned())
    }
}

impl From<Sha256Hex> for String {
    fn from(value: Sha256Hex) -> Self {
        value.0
    }
}

impl fmt::Display for Sha256Hex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_of_abc_is_the_fips_180_vector() {
        assert_eq!(
            Sha256Hex::of(b"abc").as_str(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn only_64_lowercase_hex_digits_parse() {
        assert!(Sha256Hex::try_from("0".repeat(64)).is_ok());
        assert!(Sha256Hex::try_from("A".repeat(64)).is_err());
        assert!(Sha256Hex::try_from("0".repeat(63)).is_err());
        let err = Sha256Hex::try_from("xyz").unwrap_err();
        assert!(err.to_string().contains("'xyz'"), "{err}");
    }
}
