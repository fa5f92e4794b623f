//! Consent for App Capabilities: what a prompt shows ([`PromptContent`]), how the user answered
//! ([`ConsentAnswer`](crate::ConsentAnswer)), and the request object a prompt answers ([`PendingConsent`]), with no
//! platform type in sight (R-CAP-2, R-CAP-3, R-CAP-4, R-SEC-6).

use std::fmt;

use lineup_host_core::{
    check_link, display_line, display_text, CapabilityName, Fingerprint, OpaqueVersion, Risk,
    Timestamp,
};
use serde_json::{Map, Value};

use crate::error::ShellError;

/// The longest `reason` a prompt shows, in extended grapheme clusters, before its `…`.
pub const MAX_REASON_GRAPHEMES: usize = 1000;
/// The longest agent identity a prompt shows, in extended grapheme clusters, before its `…`.
pub const MAX_AGENT_GRAPHEMES: usize = 64;
/// How many arguments a prompt lists; the rest are counted ([`PromptContent::more_arguments`]).
pub const MAX_ARGUMENTS_SHOWN: usize = 8;
/// The longest argument key shown, in extended grapheme clusters, before its `…`.
pub const MAX_ARGUMENT_KEY_GRAPHEMES: usize = 40;
/// The longest argument value shown, in extended grapheme clusters, before its `…`.
pub const MAX_ARGUMENT_VALUE_GRAPHEMES: usize = 160;
/// The longest URL [`open_url_host`] accepts, in bytes.
pub const MAX_URL_BYTES: usize = 8 * 1024;

/// The capability whose `url` argument is shown as its parsed host (and refused with userinfo).
const OPEN_URL: &str = "app.open_url";

/// What a consent prompt shows the user about one `app.call` (R-CAP-4): who asks, for which
/// capability, at which risk, why, and with which arguments.
///
/// Every agent-supplied string is cleaned when the request is built, by the one path for agent
/// text in host UI (`lineup_host_core::display_line`/`display_text`, R-SEC-6, R-SEC-8): control,
/// format and bidi characters removed, white space folded and each string capped
/// ([`MAX_AGENT_GRAPHEMES`], [`MAX_REASON_GRAPHEMES`], [`MAX_ARGUMENT_KEY_GRAPHEMES`],
/// [`MAX_ARGUMENT_VALUE_GRAPHEMES`], at most [`MAX_ARGUMENTS_SHOWN`] arguments). What comes out is
/// plain text: a prompt must still show it as text, never as markup.
///
/// ```
/// use lineup_host_core::Risk;
/// use lineup_webview_shell::PromptContent;
/// let arguments = serde_json::json!({ "url": "https://bücher.example/a?b=c" });
/// let request = PromptContent::new(
///     "agent-7",
///     "app.open_url".try_into()?,
///     "1".try_into()?,
///     Risk::UserConfirmation,
///     "To show you\u{202E} the shop",
///     arguments.as_object().ok_or("an object")?,
/// )?;
/// assert_eq!(request.link_host(), Some("xn--bcher-kva.example"));
/// assert_eq!(request.headline(), "asks to open a link in your browser");
/// assert_eq!(request.reason(), "To show you the shop");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct PromptContent {
    agent: String,
    capability: CapabilityName,
    version: OpaqueVersion,
    risk: Risk,
    reason: String,
    arguments: Vec<ArgumentLine>,
    more_arguments: usize,
    link_host: Option<String>,
    remember_allowed: bool,
    expires_at: Option<Timestamp>,
}

/// One argument of a call as a prompt lists it: key and value as cleaned, capped plain text.
/// `Debug` shows both, the agent's arguments, as [`Fingerprint`]s (logs reach journald).
#[derive(Clone, PartialEq, Eq)]
pub struct ArgumentLine {
    /// The argument's name (`(empty)` when the agent sent an empty one).
    pub key: String,
    /// The value: a string as itself, a number or boolean as written, `null`, or for a list or an
    /// object how many items or fields it has.
    pub value: String,
}

impl fmt::Debug for ArgumentLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ArgumentLine")
            .field("key", &Fingerprint::of(&self.key))
            .field("value", &Fingerprint::of(&self.value))
            .finish()
    }
}

impl PromptContent {
    /// The request for `capability` (`version`, declared `risk`) that the agent identified as
    /// `agent` makes for `reason`, with the call's `arguments`.
    ///
    /// `agent` is the requesting agent's identity as the host knows it (the identity the
    /// embedder vouched for, or the envelope's sender): never a name a Surface or an app chose.
    /// Remembering the answer is not offered until [`PromptContent::with_remember`] says so.
    ///
    /// For `app.open_url`, the `url` argument must be a string that [`open_url_host`] accepts;
    /// otherwise the call is refused here, before any prompt, with
    /// [`ShellError::UrlRefused`].
    pub fn new(
        agent: &str,
        capability: CapabilityName,
        version: OpaqueVersion,
        risk: Risk,
        reason: &str,
        arguments: &Map<String, Value>,
    ) -> Result<Self, ShellError> {
        let link_host = if capability.as_str() == OPEN_URL {
            match arguments.get("url") {
                Some(Value::String(url)) => Some(open_url_host(url)?),
                _ => {
                    return Err(ShellError::UrlRefused {
                        url: String::new(),
                        reason: "is missing: app.open_url needs a `url` argument that is a string"
                            .to_owned(),
                    })
                }
            }
        } else {
            None
        };
        let lines = arguments
            .iter()
            .take(MAX_ARGUMENTS_SHOWN)
            .map(|(key, value)| ArgumentLine {
                key: match display_line(key, MAX_ARGUMENT_KEY_GRAPHEMES) {
                    k if k.is_empty() => "(empty)".to_owned(),
                    k => k,
                },
                value: summarize(value),
            })
            .collect();
        Ok(Self {
            agent: match display_line(agent, MAX_AGENT_GRAPHEMES) {
                a if a.is_empty() => "(unnamed agent)".to_owned(),
                a => a,
            },
            capability,
            version,
            risk,
            reason: display_text(reason, MAX_REASON_GRAPHEMES),
            arguments: lines,
            more_arguments: arguments.len().saturating_sub(MAX_ARGUMENTS_SHOWN),
            link_host,
            remember_allowed: false,
            expires_at: None,
        })
    }

    /// Whether the prompt may offer "always" (R-CAP-3): only when `allowed` and the risk may be
    /// remembered at all; `system_permission` and `restricted` never are, whatever `allowed` says.
    pub fn with_remember(mut self, allowed: bool) -> Self {
        self.remember_allowed = allowed && self.risk.may_be_remembered();
        self
    }

    /// When the call lapses (its `expires_at`): the request is withdrawn then, and its prompt
    /// closed. The host sets it on every request it makes; `None` until
    /// [`PromptContent::with_expires_at`].
    pub fn with_expires_at(mut self, at: Timestamp) -> Self {
        self.expires_at = Some(at);
        self
    }

    /// When the call lapses and the prompt stops waiting, if known.
    pub fn expires_at(&self) -> Option<Timestamp> {
        self.expires_at
    }

    /// The requesting agent, cleaned and capped.
    pub fn agent(&self) -> &str {
        &self.agent
    }

    /// The capability asked for.
    pub fn capability(&self) -> &CapabilityName {
        &self.capability
    }

    /// The capability's declared version.
    pub fn version(&self) -> &OpaqueVersion {
        &self.version
    }

    /// The capability's declared risk.
    pub fn risk(&self) -> Risk {
        self.risk
    }

    /// What the agent asks to do, in plain words: the built-in capabilities' own sentence
    /// (`app.open_url`: "asks to open a link in your browser"), otherwise one naming the
    /// capability.
    pub fn headline(&self) -> String {
        match self.capability.as_str() {
            OPEN_URL => "asks to open a link in your browser".to_owned(),
            "clipboard.write" => "asks to copy text to your clipboard".to_owned(),
            "device.pick_file" => "asks you to choose a file to give it".to_owned(),
            "artifact.save" => "asks to save a file on your computer".to_owned(),
            other => format!("asks to use “{other}”"),
        }
    }

    /// The risk in plain words ([`risk_in_words`]).
    pub fn risk_words(&self) -> &'static str {
        risk_in_words(self.risk)
    }

    /// The agent's `reason`, cleaned, line breaks kept, capped at [`MAX_REASON_GRAPHEMES`].
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// The first [`MAX_ARGUMENTS_SHOWN`] arguments, in the call's order.
    pub fn arguments(&self) -> &[ArgumentLine] {
        &self.arguments
    }

    /// How many arguments are not listed.
    pub fn more_arguments(&self) -> usize {
        self.more_arguments
    }

    /// For `app.open_url`, the host the link leads to, in punycode ([`open_url_host`]).
    pub fn link_host(&self) -> Option<&str> {
        self.link_host.as_deref()
    }

    /// Whether the prompt may offer "always".
    pub fn remember_allowed(&self) -> bool {
        self.remember_allowed
    }
}

impl fmt::Debug for PromptContent {
    /// Agent text reaches logs only as a fingerprint.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PromptContent")
            .field("agent", &Fingerprint::of(&self.agent))
            .field("capability", &self.capability.as_str())
            .field("version", &Fingerprint::of(self.version.as_str()))
            .field("risk", &self.risk)
            .field("reason", &Fingerprint::of(&self.reason))
            .field("arguments", &self.arguments.len())
            .field("remember_allowed", &self.remember_allowed)
            .field("expires_at", &self.expires_at)
            .finish_non_exhaustive()
    }
}

/// A risk level (R-CAP-2) in plain words, as a prompt shows it under the headline.
pub fn risk_in_words(risk: Risk) -> &'static str {
    match risk {
        Risk::DisplayOnly => "It only shows something; nothing changes.",
        Risk::UserConfirmation => "It acts only if you allow it.",
        Risk::SystemPermission => {
            "It needs a system permission. You are asked every time; it is never remembered."
        }
        Risk::Restricted => {
            "It is restricted and needs an extra check. You are asked every time; it is never remembered."
        }
    }
}

/// One argument value as a short line of plain text.
fn summarize(value: &Value) -> String {
    match value {
        Value::String(s) => display_line(s, MAX_ARGUMENT_VALUE_GRAPHEMES),
        Value::Number(n) => display_line(&n.to_string(), MAX_ARGUMENT_VALUE_GRAPHEMES),
        Value::Bool(b) => b.to_string(),
        Value::Null => "null".to_owned(),
        Value::Array(items) => match items.len() {
            1 => "a list of 1 item".to_owned(),
            n => format!("a list of {n} items"),
        },
        Value::Object(fields) => match fields.len() {
            1 => "an object with 1 field".to_owned(),
            n => format!("an object with {n} fields"),
        },
    }
}

/// The host an `app.open_url` link leads to, as a prompt shows it, by host-core's link rule
/// ([`check_link`]): parsed as a WHATWG URL (the `url` crate), `http` or `https` only, in punycode (`bücher.example` is
/// `xn--bcher-kva.example`), an IPv6 address in brackets.
///
/// Refused with [`ShellError::UrlRefused`], before any prompt: a URL longer than
/// [`MAX_URL_BYTES`], one that does not parse, another scheme, no host, and any userinfo
/// (`https://bank.example@evil.example/`), even an empty one (`https://@evil.example/`), since it
/// exists to make a link look like it leads somewhere else.
///
/// ```
/// use lineup_webview_shell::open_url_host;
/// assert_eq!(open_url_host("https://Bücher.example:8443/x").ok().as_deref(), Some("xn--bcher-kva.example"));
/// assert!(open_url_host("https://bank.example@evil.example/").is_err());
/// assert!(open_url_host("javascript:alert(1)").is_err());
/// ```
pub fn open_url_host(url: &str) -> Result<String, ShellError> {
    check_link(url, MAX_URL_BYTES)
        .map(|link| link.host().to_owned())
        .map_err(|refusal| ShellError::UrlRefused {
            url: display_line(url, MAX_ARGUMENT_VALUE_GRAPHEMES),
            reason: refusal.to_string(),
        })
}

mod pending;
#[cfg(test)]
mod tests;

pub use pending::{ConsentHandle, ConsentPrompt, PendingConsent, RememberNotPermitted};
