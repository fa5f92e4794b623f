//! The one rule for a link the host opens or shows on an agent's or a page's behalf (R-CAP-4,
//! R-SEC-5): a WHATWG URL (the `url` crate), `http` or `https` only, with a host, without any
//! userinfo, and no longer than [`Limits::max_link_url_bytes`](crate::Limits). `app.open_url`
//! checks its `url` argument with it before consent ([`ArgumentRule::Link`](crate::ArgumentRule)),
//! and the standard components use it for every link.

use std::fmt;

/// Why a link was refused: one variant per rule, each with the sentence a refusal quotes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LinkRefusal {
    /// Longer than the limit, in bytes.
    TooLong {
        /// The link's length in bytes.
        bytes: usize,
        /// The limit in bytes.
        limit: usize,
    },
    /// Not a URL at all.
    NotAUrl,
    /// A scheme other than `http` or `https` (`javascript:`, `file:`, `data:`, …).
    Scheme,
    /// Userinfo (`name@host`, even an empty `@host`), which makes a link look like another host's.
    Userinfo,
    /// No host.
    NoHost,
}

impl LinkRefusal {
    /// The rule's short name, as a refusal names it (`scheme`, `userinfo`, …).
    pub fn rule(self) -> &'static str {
        match self {
            LinkRefusal::TooLong { .. } => "length",
            LinkRefusal::NotAUrl => "url",
            LinkRefusal::Scheme => "scheme",
            LinkRefusal::Userinfo => "userinfo",
            LinkRefusal::NoHost => "host",
        }
    }

    /// The limit that was exceeded, for [`LinkRefusal::TooLong`].
    pub fn limit(self) -> Option<usize> {
        match self {
            LinkRefusal::TooLong { limit, .. } => Some(limit),
            _ => None,
        }
    }
}

impl fmt::Display for LinkRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LinkRefusal::TooLong { bytes, limit } => {
                write!(f, "is {bytes} bytes long; the limit is {limit} bytes")
            }
            LinkRefusal::NotAUrl => f.write_str("is not a valid URL"),
            LinkRefusal::Scheme => f.write_str("must be http or https"),
            LinkRefusal::Userinfo => f.write_str(
                "carries userinfo (name@host), which makes a link look like another host's",
            ),
            LinkRefusal::NoHost => f.write_str("has no host"),
        }
    }
}

impl std::error::Error for LinkRefusal {}

/// A link that passed [`check_link`]: the parsed URL and its host in punycode
/// (`bücher.example` is `xn--bcher-kva.example`; an IPv6 address in brackets).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    url: url::Url,
    host: String,
}

impl Link {
    /// The parsed URL, as the desktop should open it.
    pub fn url(&self) -> &url::Url {
        &self.url
    }

    /// The host the link leads to, in punycode, as a prompt shows it.
    pub fn host(&self) -> &str {
        &self.host
    }
}

/// Checks `text` against the link rule; `max_bytes` is [`Limits::max_link_url_bytes`](crate::Limits).
///
/// ```
/// use lineup_host_core::{check_link, LinkRefusal};
/// let link = check_link("https://Bücher.example:8443/x", 8192).unwrap();
/// assert_eq!(link.host(), "xn--bcher-kva.example");
/// assert_eq!(check_link("javascript:alert(1)", 8192), Err(LinkRefusal::Scheme));
/// assert_eq!(check_link("https://bank.example@evil.example/", 8192), Err(LinkRefusal::Userinfo));
/// assert_eq!(check_link("not a url", 8192), Err(LinkRefusal::NotAUrl));
/// ```
pub fn check_link(text: &str, max_bytes: usize) -> Result<Link, LinkRefusal> {
    if text.len() > max_bytes {
        return Err(LinkRefusal::TooLong {
            bytes: text.len(),
            limit: max_bytes,
        });
    }
    let url = url::Url::parse(text).map_err(|_| LinkRefusal::NotAUrl)?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(LinkRefusal::Scheme);
    }
    if !url.username().is_empty() || url.password().is_some() || raw_userinfo(text) {
        return Err(LinkRefusal::Userinfo);
    }
    match url.host_str() {
        Some(host) if !host.is_empty() => {
            let host = host.to_owned();
            Ok(Link { url, host })
        }
        _ => Err(LinkRefusal::NoHost),
    }
}

/// Whether the authority of `url` as written holds an `@`: the parser drops an empty userinfo
/// (`http://@host`), so the text is checked as well. Conservative: any `@` before the path,
/// query or fragment counts.
fn raw_userinfo(url: &str) -> bool {
    let Some((_, rest)) = url.split_once(':') else {
        return false;
    };
    let rest = rest.trim_start_matches(['/', '\\', ' ', '\t', '\n', '\r']);
    rest.split(['/', '\\', '?', '#'])
        .next()
        .unwrap_or_default()
        .contains('@')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r_cap_4_link_rule_refuses_each_kind_by_name() {
        let cases = [
            ("javascript:alert(1)", LinkRefusal::Scheme),
            ("file:///etc/passwd", LinkRefusal::Scheme),
            ("data:text/html,<b>x</b>", LinkRefusal::Scheme),
            ("https://bank.example@evil.example/", LinkRefusal::Userinfo),
            ("https://@evil.example/", LinkRefusal::Userinfo),
            ("https://user:pw@evil.example/", LinkRefusal::Userinfo),
            ("not a url", LinkRefusal::NotAUrl),
            ("", LinkRefusal::NotAUrl),
        ];
        for (text, refusal) in cases {
            assert_eq!(check_link(text, 8192), Err(refusal), "{text}");
        }
        let long = format!("https://example.org/{}", "a".repeat(100));
        assert_eq!(
            check_link(&long, 50),
            Err(LinkRefusal::TooLong {
                bytes: long.len(),
                limit: 50
            })
        );
    }

    #[test]
    fn r_cap_4_link_rule_accepts_plain_web_links_positive_control() {
        for (text, host) in [
            ("https://example.org/a?b#c", "example.org"),
            ("http://[::1]:8080/", "[::1]"),
            ("https://example.org/mail@x", "example.org"),
            ("https://Bücher.example/", "xn--bcher-kva.example"),
        ] {
            assert_eq!(
                check_link(text, 8192).map(|l| l.host().to_owned()),
                Ok(host.to_owned())
            );
        }
    }
}
