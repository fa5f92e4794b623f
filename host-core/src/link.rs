//! The one rule for a link the host opens or shows (R-CAP-4, R-SEC-6): `app.open_url`'s `url`
//! today, every link of the standard components next. Parsed as a WHATWG URL (the `url` crate),
//! `http` or `https` only, with a host, no userinfo, at most [`MAX_LINK_BYTES`].

use std::fmt;

/// The longest link accepted, in bytes.
pub const MAX_LINK_BYTES: usize = 8192;

/// A link that passed [`check_link`]: its text as given and its host in punycode (an IPv6
/// address in brackets), as a prompt shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    url: String,
    host: String,
}

impl Link {
    /// The link as given.
    pub fn as_str(&self) -> &str {
        &self.url
    }

    /// The host it leads to, in punycode (`bücher.example` is `xn--bcher-kva.example`).
    pub fn host(&self) -> &str {
        &self.host
    }
}

/// Why [`check_link`] refused a link; its `Display` names the rule.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LinkRefusal {
    /// Longer than [`MAX_LINK_BYTES`].
    TooLong {
        /// Its length in bytes.
        len: usize,
    },
    /// Not a URL.
    NotAUrl,
    /// Another scheme than `http` or `https` (`javascript:`, `file:`, `data:`, …).
    Scheme(String),
    /// Userinfo (`name@host`, even empty), which makes a link look like another host's.
    Userinfo,
    /// No host.
    NoHost,
}

impl fmt::Display for LinkRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooLong { len } => {
                write!(
                    f,
                    "is {len} bytes long; a link may have at most {MAX_LINK_BYTES}"
                )
            }
            Self::NotAUrl => f.write_str("is not a URL"),
            Self::Scheme(scheme) => {
                let shown: String = scheme.chars().take(32).collect();
                write!(f, "has the scheme {shown:?}; a link must be http or https")
            }
            Self::Userinfo => f.write_str(
                "carries userinfo (name@host), which makes a link look like another host's",
            ),
            Self::NoHost => f.write_str("has no host"),
        }
    }
}

/// Checks `url` against the link rule.
///
/// ```
/// use lineup_host_core::{check_link, LinkRefusal};
/// let link = check_link("https://Bücher.example:8443/x").unwrap();
/// assert_eq!(link.host(), "xn--bcher-kva.example");
/// assert_eq!(check_link("javascript:alert(1)").unwrap_err(), LinkRefusal::Scheme("javascript".into()));
/// assert_eq!(check_link("https://bank.example@evil.example/").unwrap_err(), LinkRefusal::Userinfo);
/// ```
///
/// # Errors
/// A [`LinkRefusal`] naming the rule the link breaks.
pub fn check_link(url: &str) -> Result<Link, LinkRefusal> {
    if url.len() > MAX_LINK_BYTES {
        return Err(LinkRefusal::TooLong { len: url.len() });
    }
    let parsed = url::Url::parse(url).map_err(|_| LinkRefusal::NotAUrl)?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(LinkRefusal::Scheme(parsed.scheme().to_owned()));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() || raw_userinfo(url) {
        return Err(LinkRefusal::Userinfo);
    }
    match parsed.host_str() {
        Some(host) if !host.is_empty() => Ok(Link {
            url: url.to_owned(),
            host: host.to_owned(),
        }),
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
    fn r_cap_4_the_link_rule_accepts_http_and_https_and_refuses_the_rest() {
        for (url, host) in [
            ("https://example.com/docs", "example.com"),
            ("http://127.0.0.1:8080/", "127.0.0.1"),
            ("https://[::1]/x", "[::1]"),
            ("https://Bücher.example/", "xn--bcher-kva.example"),
        ] {
            assert_eq!(
                check_link(url).map(|l| l.host().to_owned()),
                Ok(host.to_owned()),
                "{url}"
            );
        }
        for (url, refusal) in [
            (
                "javascript:alert(1)",
                LinkRefusal::Scheme("javascript".into()),
            ),
            ("file:///etc/passwd", LinkRefusal::Scheme("file".into())),
            (
                "data:text/html,<b>x</b>",
                LinkRefusal::Scheme("data".into()),
            ),
            ("not a url", LinkRefusal::NotAUrl),
            ("https://bank.example@evil.example/", LinkRefusal::Userinfo),
            ("https://@evil.example/", LinkRefusal::Userinfo),
            ("https://a:b@evil.example/", LinkRefusal::Userinfo),
        ] {
            assert_eq!(check_link(url), Err(refusal), "{url}");
        }
        let long = format!("https://example.com/{}", "x".repeat(MAX_LINK_BYTES));
        assert!(matches!(
            check_link(&long),
            Err(LinkRefusal::TooLong { .. })
        ));
    }
}
