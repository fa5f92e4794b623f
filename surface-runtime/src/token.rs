//! The per-open token that names a Surface's host under the [`SCHEME`](crate::SCHEME), so one
//! Surface's webview cannot ask for another's document (R-SEC-2).

use std::fmt;

use lineup_host_core::InvalidValue;

/// Length of a token in hex characters: 16 random bytes.
const TOKEN_LEN: usize = 32;

/// Unguessable per-open host label of the scheme URL.
///
/// The embedder draws 16 random bytes for every Surface it opens; the token is their lowercase
/// hex form. [`TryFrom<&str>`] accepts exactly 32 lowercase hex characters, which is how a request's
/// host is parsed.
///
/// ```
/// use lineup_surface_runtime::SurfaceToken;
/// let token = SurfaceToken::from_random_bytes([0xab; 16]);
/// assert_eq!(token.as_str(), "abababababababababababababababab");
/// assert_eq!(SurfaceToken::try_from(token.as_str()), Ok(token));
/// assert!(SurfaceToken::try_from("ABABABABABABABABABABABABABABABAB").is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SurfaceToken(String);

impl SurfaceToken {
    /// Builds the token from 16 bytes the caller drew from a cryptographic random source.
    pub fn from_random_bytes(bytes: [u8; 16]) -> Self {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut hex = String::with_capacity(TOKEN_LEN);
        for byte in bytes {
            hex.push(char::from(HEX[usize::from(byte >> 4)]));
            hex.push(char::from(HEX[usize::from(byte & 0x0f)]));
        }
        Self(hex)
    }

    /// The token: 32 lowercase hex characters.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<&str> for SurfaceToken {
    type Error = InvalidValue;

    fn try_from(value: &str) -> Result<Self, InvalidValue> {
        let is_lower_hex = |b: u8| b.is_ascii_digit() || (b'a'..=b'f').contains(&b);
        if value.len() == TOKEN_LEN && value.bytes().all(is_lower_hex) {
            Ok(Self(value.to_owned()))
        } else {
            Err(InvalidValue {
                kind: "surface token",
                value: shorten(value, 80),
                reason: format!(
                    "must be exactly {TOKEN_LEN} lowercase hex characters; \
                     build it with SurfaceToken::from_random_bytes"
                ),
            })
        }
    }
}

impl fmt::Display for SurfaceToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Shortens `s` to at most `max` characters for an error message.
fn shorten(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r_sec_2_token_is_lowercase_hex_of_the_bytes() {
        let bytes = [
            0x00, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0xff, 0x10, 0x20, 0x30, 0x40,
            0x50, 0x60,
        ];
        let token = SurfaceToken::from_random_bytes(bytes);
        assert_eq!(token.as_str(), "000123456789abcdefff102030405060");
        assert_eq!(token.to_string(), token.as_str());
    }

    #[test]
    fn r_sec_2_token_parse_table() {
        let ok = "0123456789abcdef0123456789abcdef";
        assert_eq!(SurfaceToken::try_from(ok).map(|t| t.0), Ok(ok.to_owned()));
        let refused = [
            "",
            "0123456789abcdef0123456789abcde",   // 31
            "0123456789abcdef0123456789abcdef0", // 33
            "0123456789ABCDEF0123456789abcdef",  // upper case
            "0123456789abcdeg0123456789abcdef",  // not hex
            "0123456789abcdef0123456789abcd f",  // space
            "0123456789abcdef0123456789abcd%2",  // percent escape
            "0123456789abcdef0123456789abcdé",   // 32 bytes, not ASCII
            "..",
        ];
        for input in refused {
            let err = SurfaceToken::try_from(input).expect_err(input);
            assert_eq!(err.kind, "surface token");
            assert!(err.to_string().contains("32 lowercase hex"), "{err}");
        }
    }

    #[test]
    fn r_sec_2_token_error_shortens_long_input() {
        let long = "x".repeat(10_000);
        let err = SurfaceToken::try_from(long.as_str()).expect_err("too long");
        assert_eq!(err.value.chars().count(), 81);
    }
}
