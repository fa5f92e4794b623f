//! `Debug` output reaches logs (and journald), so guest bytes, agent state and event data are
//! printed there as a [`Fingerprint`], a length and a short digest, never as themselves.

use std::fmt;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use sha2::{Digest as _, Sha256};

/// How many bytes of the SHA-256 digest a [`Fingerprint`] shows: 6 bytes, 12 hex characters.
const SHOWN_DIGEST_BYTES: usize = 6;

/// A length and the first 12 hex characters of the SHA-256 digest, standing in for bytes that
/// must not be printed: enough to tell two values apart in a log, or to match one against a value
/// at hand, without showing it.
///
/// ```
/// use lineup_host_core::Fingerprint;
/// let shown = format!("{:?}", Fingerprint::of(b"{\"pin\":\"4711\"}"));
/// assert!(shown.starts_with("Fingerprint { bytes: 14, sha256: \""), "{shown}");
/// assert!(!shown.contains("4711"));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fingerprint {
    len: usize,
    digest: [u8; SHOWN_DIGEST_BYTES],
}

impl Fingerprint {
    /// The fingerprint of `bytes`.
    pub fn of(bytes: impl AsRef<[u8]>) -> Self {
        let bytes = bytes.as_ref();
        let full = Sha256::digest(bytes);
        let mut digest = [0; SHOWN_DIGEST_BYTES];
        digest.copy_from_slice(&full[..SHOWN_DIGEST_BYTES]);
        Self {
            len: bytes.len(),
            digest,
        }
    }

    /// The length of the bytes, in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the bytes were empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The shown part of the digest, in lowercase hex.
    pub fn sha256_prefix(&self) -> String {
        self.digest.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Writes `name { bytes: <len>, sha256: "<hex>" }`, for the `Debug` impl of a type that holds
    /// such bytes.
    pub fn debug_as(&self, name: &str, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct(name)
            .field("bytes", &self.len)
            .field("sha256", &self.sha256_prefix())
            .finish()
    }
}

impl fmt::Debug for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.debug_as("Fingerprint", f)
    }
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} bytes, sha256 {}…", self.len, self.sha256_prefix())
    }
}

/// For tests of `Debug` output: the first form of `secret` found in `text`, if any, so that a test
/// fails whichever way a value leaks. The forms are any 8 consecutive characters of the raw text
/// (the whole of a shorter secret), the start of its JSON-escaped and Rust-escaped forms, its
/// bytes as a decimal list (`115, 101, …`, with or without spaces), in hex (either case) and the
/// start of its base64.
///
/// ```
/// use lineup_host_core::leaked_form;
/// let secret = "s3cret-state";
/// assert_eq!(leaked_form(&format!("{:?}", secret.as_bytes()), secret), Some("decimal bytes"));
/// assert_eq!(leaked_form("nothing here", secret), None);
/// ```
pub fn leaked_form(text: &str, secret: &str) -> Option<&'static str> {
    const WINDOW: usize = 8;
    let chars: Vec<char> = secret.chars().collect();
    let windows: Vec<String> = if chars.len() <= WINDOW {
        vec![secret.to_owned()]
    } else {
        chars.windows(WINDOW).map(|w| w.iter().collect()).collect()
    };
    if windows.iter().any(|w| text.contains(w.as_str())) {
        return Some("raw text");
    }
    let start = |s: String| s.chars().take(WINDOW).collect::<String>();
    let json = serde_json::to_string(secret).unwrap_or_default();
    let head = &secret.as_bytes()[..secret.len().min(WINDOW)];
    let decimal: Vec<String> = head.iter().map(u8::to_string).collect();
    let hex: String = head.iter().map(|b| format!("{b:02x}")).collect();
    let forms = [
        ("json-escaped", start(json.trim_matches('"').to_owned())),
        (
            "rust-escaped",
            start(format!("{secret:?}").trim_matches('"').to_owned()),
        ),
        ("decimal bytes", decimal.join(", ")),
        ("decimal bytes", decimal.join(",")),
        ("hex", hex.clone()),
        ("hex", hex.to_uppercase()),
        (
            "hex bytes",
            format!("{head:x?}").trim_matches(['[', ']']).to_owned(),
        ),
        (
            "hex bytes",
            format!("{head:X?}").trim_matches(['[', ']']).to_owned(),
        ),
        ("base64", start(STANDARD.encode(secret))),
    ];
    forms
        .into_iter()
        .find(|(_, form)| !form.is_empty() && text.contains(form.as_str()))
        .map(|(name, _)| name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprint_shows_a_length_and_a_digest_prefix() {
        // sha256("") = e3b0c442 98fc1c14 …
        let empty = Fingerprint::of(b"");
        assert_eq!(
            format!("{empty:?}"),
            r#"Fingerprint { bytes: 0, sha256: "e3b0c44298fc" }"#
        );
        assert_eq!(empty.to_string(), "0 bytes, sha256 e3b0c44298fc…");
        assert_ne!(Fingerprint::of("a"), Fingerprint::of("b"));
    }

    /// Positive control of the leak check: every form it looks for is found.
    #[test]
    fn leaked_form_finds_every_form() {
        let secret = "tôp\"secret-state";
        let bytes = secret.as_bytes();
        let cases = [
            (format!("x{secret}y"), "raw text"),
            (format!("cut: {}…", &secret[..12]), "raw text"),
            (serde_json::to_string(secret).unwrap(), "raw text"),
            (format!("{secret:?}"), "raw text"),
            (format!("{bytes:?}"), "decimal bytes"),
            (format!("{bytes:x?}"), "hex bytes"),
            (bytes.iter().map(|b| format!("{b:02x}")).collect(), "hex"),
            (bytes.iter().map(|b| format!("{b:02X}")).collect(), "hex"),
            (STANDARD.encode(bytes), "base64"),
        ];
        for (text, form) in &cases {
            assert_eq!(leaked_form(text, secret), Some(*form), "{text}");
        }
        assert_eq!(
            leaked_form(&format!("{:?}", Fingerprint::of(secret)), secret),
            None
        );
    }
}
