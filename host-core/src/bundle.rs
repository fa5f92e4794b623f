//! The inline Surface bundle (`html`, `css`, `js`) and its integrity digest (R-UI-2, R-UI-2a,
//! R-UI-6a).

use std::fmt;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use crate::breakout::Breakout;
use crate::ids::{shorten, InvalidValue};
use crate::redact::Fingerprint;
use crate::source::SourcePart;

/// An inline Surface bundle whose parts can be placed into one document without breaking out of
/// their element (R-UI-6a).
///
/// `html` is a body fragment, `css` goes into a `<style>` element and `js` into a `<script>`
/// element. Construction refuses what would end those elements early or keep the script element
/// from ending ([`Breakout`]): `</style` in `css`; `</script`, and a `<!--` followed by `<script`
/// with no `-->` after it, in `js`. A `<!--` alone passes. The size limit depends on
/// configuration and is checked by the decoder.
///
/// ```
/// use lineup_host_core::InlineBundle;
/// let bundle = InlineBundle::new("<p>hi</p>", "p { color: red }", "console.log(1)").unwrap();
/// assert_eq!(bundle.len(), 9 + 16 + 14);
/// assert!(InlineBundle::new("", "", "s = '</script>'").is_err());
/// assert!(InlineBundle::new("", "", "s = '<!--<script>'").is_err());
/// assert!(InlineBundle::new("", "", "s = '<!--'").is_ok());
/// ```
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RawBundle", into = "RawBundle")]
pub struct InlineBundle {
    html: String,
    css: String,
    js: String,
}

/// The wire form of the bundle's three fields, before [`InlineBundle`]'s checks.
#[derive(Serialize, Deserialize)]
struct RawBundle {
    html: String,
    css: String,
    js: String,
}

impl TryFrom<RawBundle> for InlineBundle {
    type Error = InvalidValue;
    fn try_from(raw: RawBundle) -> Result<Self, InvalidValue> {
        Self::new(raw.html, raw.css, raw.js)
    }
}

impl From<InlineBundle> for RawBundle {
    fn from(b: InlineBundle) -> Self {
        RawBundle {
            html: b.html,
            css: b.css,
            js: b.js,
        }
    }
}

impl InlineBundle {
    /// Checks the parts (R-UI-6a) and builds the bundle.
    pub fn new(
        html: impl Into<String>,
        css: impl Into<String>,
        js: impl Into<String>,
    ) -> Result<Self, InvalidValue> {
        let (html, css, js) = (html.into(), css.into(), js.into());
        if let Some(found) = Breakout::find(&css, &js) {
            let (kind, text) = if found.part == SourcePart::Css {
                ("app.css", &css)
            } else {
                ("app.js", &js)
            };
            return Err(InvalidValue {
                kind,
                value: shorten(&text[found.offset..], 40),
                reason: found.to_string(),
            });
        }
        Ok(Self { html, css, js })
    }

    /// The body fragment.
    pub fn html(&self) -> &str {
        &self.html
    }

    /// The style sheet.
    pub fn css(&self) -> &str {
        &self.css
    }

    /// The script, run after the body fragment is in the document.
    pub fn js(&self) -> &str {
        &self.js
    }

    /// The bundle's size: the UTF-8 bytes of its three parts (R-UI-2).
    pub fn len(&self) -> usize {
        self.html.len() + self.css.len() + self.js.len()
    }

    /// Whether all three parts are empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bundle digest of R-UI-2a: SHA-256 over `N(html) N(css) N(js)`, where `N(s)` is the
    /// netstring `<byte length>:<bytes>,`.
    pub fn digest(&self) -> Integrity {
        let mut hasher = Sha256::new();
        for part in [&self.html, &self.css, &self.js] {
            hasher.update(part.len().to_string().as_bytes());
            hasher.update(b":");
            hasher.update(part.as_bytes());
            hasher.update(b",");
        }
        Integrity(hasher.finalize().into())
    }
}

impl fmt::Debug for InlineBundle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Guest code: a length and a digest per part, never the text (logs reach journald).
        f.debug_struct("InlineBundle")
            .field("html", &Fingerprint::of(&self.html))
            .field("css", &Fingerprint::of(&self.css))
            .field("js", &Fingerprint::of(&self.js))
            .finish()
    }
}

/// A SHA-256 integrity value, written `sha256-<standard base64 with padding>` (R-UI-2).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Integrity([u8; 32]);

impl Integrity {
    /// The raw 32-byte digest.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// Builds an integrity value from a raw digest.
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }
}

impl TryFrom<&str> for Integrity {
    type Error = InvalidValue;
    fn try_from(value: &str) -> Result<Self, InvalidValue> {
        let bad = |reason: String| InvalidValue::new("integrity", value, reason);
        let Some(b64) = value.strip_prefix("sha256-") else {
            return Err(bad(
                "must start with 'sha256-' followed by the base64 SHA-256 digest (R-UI-2)".into(),
            ));
        };
        let bytes = STANDARD.decode(b64).map_err(|e| {
            bad(format!(
                "is not a base64 digest ({e}); it looks like a placeholder: compute the digest of R-UI-2a"
            ))
        })?;
        let bytes: [u8; 32] = bytes.as_slice().try_into().map_err(|_| {
            bad(format!(
                "decodes to {} bytes; a SHA-256 digest is 32 bytes (R-UI-2)",
                bytes.len()
            ))
        })?;
        Ok(Self(bytes))
    }
}

impl TryFrom<String> for Integrity {
    type Error = InvalidValue;
    fn try_from(value: String) -> Result<Self, InvalidValue> {
        Self::try_from(value.as_str())
    }
}

impl From<Integrity> for String {
    fn from(value: Integrity) -> String {
        value.to_string()
    }
}

impl fmt::Display for Integrity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sha256-{}", STANDARD.encode(self.0))
    }
}

impl fmt::Debug for Integrity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Golden values for R-UI-2a, cross-checked with Python's hashlib and
    /// `printf '%s' '<netstrings>' | sha256sum | xxd -r -p | base64`.
    #[test]
    fn r_ui_2a_digest_golden() {
        let empty = InlineBundle::new("", "", "").unwrap();
        // sha256("0:,0:,0:,")
        assert_eq!(
            empty.digest().to_string(),
            "sha256-tRCo0UfTHXSE5K8fJr+wLJs5jyyvCnbNUVvHHXaiDkM="
        );
        let weather = InlineBundle::new(
            "<main><button id='refresh'>刷新</button></main>",
            "main { padding: 16px }",
            "document.querySelector('#refresh').onclick=()=>LineUpSurface.event('refresh',{unit:'c'})",
        )
        .unwrap();
        assert_eq!(
            weather.digest().to_string(),
            "sha256-ecPibi7ZlubYeqTuDZAukKe2tqh90t5X2wt7FWucgv0="
        );
    }

    #[test]
    fn r_ui_2a_netstrings_make_the_split_unambiguous() {
        let a = InlineBundle::new("ab", "c", "").unwrap();
        let b = InlineBundle::new("a", "bc", "").unwrap();
        assert_ne!(a.digest(), b.digest());
    }

    #[test]
    fn r_ui_2_integrity_parses_and_refuses_placeholder() {
        let d = InlineBundle::new("", "", "").unwrap().digest();
        assert_eq!(Integrity::try_from(d.to_string().as_str()).unwrap(), d);
        let err = Integrity::try_from("sha256-BASE64_DIGEST").unwrap_err();
        assert!(err.to_string().contains("placeholder"), "{err}");
        assert!(Integrity::try_from("sha384-abc").is_err());
        assert!(Integrity::try_from("sha256-AAAA").is_err());
    }

    #[test]
    fn r_ui_6a_breakout_sequences_are_refused() {
        assert!(InlineBundle::new("</script></style>", "", "").is_ok());
        let err = InlineBundle::new("", "a{}</STYLE><script>", "").unwrap_err();
        assert_eq!(err.kind, "app.css");
        assert!(err.reason.contains("</style\" at 1:4"), "{err}");
        let err = InlineBundle::new("", "", "x='</ScRiPt>'").unwrap_err();
        assert_eq!(err.kind, "app.js");
        assert!(err.reason.contains("<\\/script"), "the fix: {err}");
        let err = InlineBundle::new("", "", "x='<!--'+\n'<script>'").unwrap_err();
        assert!(
            err.reason.contains("at 1:4") && err.reason.contains("at 2:2"),
            "{err}"
        );
        // A bare `<!--` passes unchanged (R-UI-6a as amended): it cannot end the element.
        let bundle = InlineBundle::new("", "", "x='<!--'").unwrap();
        assert_eq!(bundle.js(), "x='<!--'");
        assert!(InlineBundle::new("", "", "x='<\\/script>'").is_ok());
    }
}
