//! The one URL policy (R-STD-11): every link the host shows or opens for an agent or a page
//! (Markdown links, `app.open_url`, future media) passes [`check_link`] and is shown by its
//! punycode host; [`LinkPolicy`] says whether links are live at all.

use crate::link::{check_link, Link, LinkRefusal};

/// The longest URL [`open_url_host`] accepts, in bytes (`Limits::max_link_url_bytes` default).
pub const MAX_URL_BYTES: usize = 8 * 1024;

/// Whether agent links are live controls (R-STD-11).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LinkPolicy {
    /// A link is a host control showing its text and punycode host; activating it needs the
    /// host's link confirm first. The default.
    #[default]
    Confirm,
    /// Links are inert text (kiosk mode): no link node is ever made.
    Off,
}

/// A link that passed the URL policy: what a renderer may show and, after the confirm, open.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SafeLink {
    /// The URL as the parser normalised it (`http` or `https`, no userinfo).
    pub url: String,
    /// Its host in punycode, as the link and its confirm show it.
    pub host: String,
}

impl From<Link> for SafeLink {
    fn from(link: Link) -> Self {
        Self {
            url: link.url().as_str().to_owned(),
            host: link.host().to_owned(),
        }
    }
}

/// The link `url` under `policy`: `None` when the policy is [`LinkPolicy::Off`] or the URL
/// breaks the link rule (then the link is shown as inert text).
pub fn safe_link(url: &str, policy: LinkPolicy) -> Option<SafeLink> {
    match policy {
        LinkPolicy::Confirm => check_link(url, MAX_URL_BYTES).ok().map(SafeLink::from),
        LinkPolicy::Off => None,
    }
}

/// The host an `app.open_url` link leads to, as a prompt shows it (R-STD-11, R-CAP-4): parsed
/// as a WHATWG URL, `http` or `https` only, in punycode (`bücher.example` is
/// `xn--bcher-kva.example`), an IPv6 address in brackets. Refused: longer than
/// [`MAX_URL_BYTES`], not a URL, another scheme, no host, and any userinfo, even an empty one
/// (`https://@evil.example/`), since it exists to make a link look like it leads elsewhere.
///
/// ```
/// use lineup_host_core::open_url_host;
/// assert_eq!(open_url_host("https://Bücher.example:8443/x").ok().as_deref(), Some("xn--bcher-kva.example"));
/// assert!(open_url_host("https://bank.example@evil.example/").is_err());
/// assert!(open_url_host("javascript:alert(1)").is_err());
/// ```
pub fn open_url_host(url: &str) -> Result<String, LinkRefusal> {
    check_link(url, MAX_URL_BYTES).map(|link| link.host().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r_std_11_open_url_host_is_punycode_and_userinfo_is_refused() {
        let accepted = [
            ("https://example.com/a", "example.com"),
            ("http://EXAMPLE.com:8080/", "example.com"),
            ("https://bücher.example/", "xn--bcher-kva.example"),
            ("https://пример.испытание/", "xn--e1afmkfd.xn--80akhbyknj4f"),
            ("https://[::1]/x", "[::1]"),
            ("https://127.0.0.1/", "127.0.0.1"),
            ("https://a.example/path@x?q=@#@", "a.example"),
        ];
        for (url, host) in accepted {
            assert_eq!(open_url_host(url).ok().as_deref(), Some(host), "{url}");
        }
        let refused = [
            "https://bank.example@evil.example/",
            "https://user:pw@evil.example/",
            "https://@evil.example/",
            "https://:@evil.example/",
            "http:\\\\bank@evil.example/",
            "https://a@b@evil.example",
            "javascript:alert(1)",
            "&#x6A;avascript:alert(1)",
            "java\tscript:alert(1)",
            "vbscript:msgbox(1)",
            "lineup-host://x/",
            "//evil.example/",
            "file:///etc/passwd",
            "data:text/html,x",
            "ftp://example.com/",
            "not a url",
            "",
            "https://",
        ];
        for url in refused {
            assert!(open_url_host(url).is_err(), "{url} must be refused");
        }
        let long = format!("https://example.com/{}", "a".repeat(MAX_URL_BYTES));
        assert!(open_url_host(&long).is_err());
        let fits = format!("https://example.com/{}", "a".repeat(MAX_URL_BYTES - 20));
        assert_eq!(fits.len(), MAX_URL_BYTES);
        assert!(open_url_host(&fits).is_ok(), "exactly the limit passes");
    }

    #[test]
    fn r_std_11_off_makes_every_link_inert() {
        let url = "https://example.com/";
        assert!(safe_link(url, LinkPolicy::Confirm).is_some());
        assert_eq!(safe_link(url, LinkPolicy::Off), None);
        assert_eq!(safe_link("javascript:x", LinkPolicy::Confirm), None);
    }
}
