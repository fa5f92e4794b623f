//! Consent for App Capabilities: what a prompt shows ([`PromptContent`]), how the user answered
//! ([`ConsentAnswer`]), and the request object a prompt answers ([`PendingConsent`]), with no
//! platform type in sight (R-CAP-2, R-CAP-3, R-CAP-4, R-SEC-6).

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use lineup_host_core::{
    check_link, display_line, display_text, CapabilityName, ConsentAnswer, Fingerprint,
    OpaqueVersion, Risk, Timestamp,
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

/// The shared flag between a [`PendingConsent`] and its [`ConsentHandle`].
#[derive(Debug, Default)]
struct Shared {
    withdrawn: AtomicBool,
    settled: AtomicBool,
}

/// One consent request waiting for the user: answered exactly once, by [`allow`](Self::allow),
/// [`allow_always`](Self::allow_always), [`deny`](Self::deny) or [`cancel`](Self::cancel).
/// Dropping it unanswered answers [`ConsentAnswer::Dismissed`] and logs it, so nothing waits
/// forever.
///
/// The answer goes to the callback given to [`PendingConsent::new`], on the thread that answers
/// (or drops) it; it is `Send`, so the creator may live on another thread than the prompt. Once
/// the creator has [withdrawn](ConsentHandle::withdraw) the request (its call expired), no answer
/// reaches it any more.
///
/// ```
/// use std::sync::mpsc;
/// use lineup_host_core::Risk;
/// use lineup_webview_shell::{ConsentAnswer, PromptContent, PendingConsent};
/// let request = PromptContent::new(
///     "agent-7", "clipboard.write".try_into()?, "1".try_into()?,
///     Risk::UserConfirmation, "copy the summary", &serde_json::Map::new(),
/// )?;
/// let (tx, rx) = mpsc::channel();
/// let (pending, _handle) = PendingConsent::new(request, move |answer| { let _ = tx.send(answer); });
/// drop(pending); // nobody answered
/// assert_eq!(rx.recv()?, ConsentAnswer::Dismissed);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct PendingConsent {
    request: Arc<PromptContent>,
    shared: Arc<Shared>,
    respond: Option<Box<dyn FnOnce(ConsentAnswer) + Send>>,
}

/// The creator's side of a [`PendingConsent`]: withdraws it when the call expires, so that a
/// prompt showing it closes and its answer is discarded.
#[derive(Clone, Debug)]
pub struct ConsentHandle {
    shared: Arc<Shared>,
}

impl ConsentHandle {
    /// Withdraws the request: it is taken off the prompt queue (its window closed if showing)
    /// and no answer reaches the callback any more. Nothing happens once it was answered.
    pub fn withdraw(&self) {
        self.shared.withdrawn.store(true, Ordering::SeqCst);
    }

    /// Whether the creator withdrew the request.
    pub fn is_withdrawn(&self) -> bool {
        self.shared.withdrawn.load(Ordering::SeqCst)
    }

    /// Whether the request is still waiting: neither answered nor withdrawn.
    pub fn is_waiting(&self) -> bool {
        !self.shared.settled.load(Ordering::SeqCst) && !self.shared.withdrawn.load(Ordering::SeqCst)
    }
}

impl PendingConsent {
    /// A request waiting for an answer; `respond` receives it, exactly once, unless the request is
    /// withdrawn first through the returned [`ConsentHandle`].
    pub fn new(
        request: PromptContent,
        respond: impl FnOnce(ConsentAnswer) + Send + 'static,
    ) -> (Self, ConsentHandle) {
        let shared = Arc::new(Shared::default());
        let handle = ConsentHandle {
            shared: Arc::clone(&shared),
        };
        let pending = Self {
            request: Arc::new(request),
            shared,
            respond: Some(Box::new(respond)),
        };
        (pending, handle)
    }

    /// What to show.
    pub fn request(&self) -> &PromptContent {
        &self.request
    }

    /// A handle on this request's withdrawal, for a prompt to watch.
    pub(crate) fn watch(&self) -> ConsentHandle {
        ConsentHandle {
            shared: Arc::clone(&self.shared),
        }
    }

    /// Whether the creator withdrew the request; its answer would be discarded.
    pub fn is_withdrawn(&self) -> bool {
        self.shared.withdrawn.load(Ordering::SeqCst)
    }

    /// Allows the call this once.
    pub fn allow(self) {
        self.answer(ConsentAnswer::Allow);
    }

    /// Allows the call and asks to remember it; refused, handing the request back, when the
    /// request does not permit remembering (R-CAP-3).
    pub fn allow_always(self) -> Result<(), RememberNotPermitted> {
        if !self.request.remember_allowed() {
            return Err(RememberNotPermitted(self));
        }
        self.answer(ConsentAnswer::AllowAlways);
        Ok(())
    }

    /// Refuses the call.
    pub fn deny(self) {
        self.answer(ConsentAnswer::Deny);
    }

    /// Dismisses the request without a decision (Escape, window closed).
    pub fn cancel(self) {
        self.answer(ConsentAnswer::Dismissed);
    }

    fn answer(mut self, answer: ConsentAnswer) {
        self.settle(answer);
    }

    fn settle(&mut self, answer: ConsentAnswer) {
        let Some(respond) = self.respond.take() else {
            return;
        };
        self.shared.settled.store(true, Ordering::SeqCst);
        if self.is_withdrawn() {
            tracing::debug!(?answer, capability = %self.request.capability, "answer to a withdrawn consent request discarded");
            return;
        }
        respond(answer);
    }
}

impl Drop for PendingConsent {
    fn drop(&mut self) {
        if self.respond.is_some() && !self.is_withdrawn() {
            tracing::info!(
                capability = %self.request.capability,
                "consent request dropped unanswered: cancelled"
            );
        }
        self.settle(ConsentAnswer::Dismissed);
    }
}

impl fmt::Debug for PendingConsent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PendingConsent")
            .field("request", &self.request)
            .field("withdrawn", &self.is_withdrawn())
            .field("answered", &self.respond.is_none())
            .finish()
    }
}

/// [`PendingConsent::allow_always`] on a request that does not permit remembering; holds the
/// request, still unanswered, so it can be answered otherwise.
#[derive(Debug)]
pub struct RememberNotPermitted(PendingConsent);

impl RememberNotPermitted {
    /// The request, still waiting for an answer.
    pub fn into_pending(self) -> PendingConsent {
        self.0
    }
}

impl fmt::Display for RememberNotPermitted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "remembering is not permitted for '{}' ({} risk or not offered); answer allow or deny (R-CAP-3)",
            self.0.request.capability,
            self.0.request.risk.as_str()
        )
    }
}

impl std::error::Error for RememberNotPermitted {}

/// Shows consent requests to the user and answers them: the built-in
/// [`PromptQueue`](crate::PromptQueue), or the embedder's own UI.
///
/// An implementation answers each [`PendingConsent`] it receives once, or drops it (which answers
/// `Cancelled`). Closures `FnMut(PendingConsent)` are prompts too.
pub trait ConsentPrompt {
    /// Shows `request` (now or after those before it) and answers it when the user decides.
    fn request(&mut self, request: PendingConsent);
}

impl<F: FnMut(PendingConsent)> ConsentPrompt for F {
    fn request(&mut self, request: PendingConsent) {
        self(request);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use serde_json::json;

    use super::*;

    fn request(capability: &str, risk: Risk, arguments: Value) -> Result<PromptContent, String> {
        let map = arguments.as_object().cloned().unwrap_or_default();
        PromptContent::new(
            "agent-7",
            CapabilityName::try_from(capability).map_err(|e| e.to_string())?,
            OpaqueVersion::try_from("1").map_err(|e| e.to_string())?,
            risk,
            "why",
            &map,
        )
        .map_err(|e| e.to_string())
    }

    fn pending(r: PromptContent) -> (PendingConsent, ConsentHandle, mpsc::Receiver<ConsentAnswer>) {
        let (tx, rx) = mpsc::channel();
        let (p, h) = PendingConsent::new(r, move |a| {
            let _ = tx.send(a);
        });
        (p, h, rx)
    }

    #[test]
    fn r_cap_4_open_url_host_is_punycode_and_userinfo_is_refused() {
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
    }

    #[test]
    fn r_cap_4_open_url_request_needs_an_acceptable_url() {
        let ok = request(
            "app.open_url",
            Risk::UserConfirmation,
            json!({"url": "https://xn--bcher-kva.example/"}),
        );
        assert_eq!(
            ok.ok().and_then(|r| r.link_host().map(str::to_owned)),
            Some("xn--bcher-kva.example".to_owned())
        );
        for args in [
            json!({}),
            json!({"url": 5}),
            json!({"url": "https://u@h.example"}),
        ] {
            assert!(
                request("app.open_url", Risk::UserConfirmation, args.clone()).is_err(),
                "{args}"
            );
        }
        // Other capabilities never get a link host.
        let other = request(
            "clipboard.write",
            Risk::UserConfirmation,
            json!({"url": "x"}),
        );
        assert_eq!(other.ok().map(|r| r.link_host().is_none()), Some(true));
    }

    #[test]
    fn r_sec_6_arguments_are_summarized_cleaned_and_capped() {
        let r = request(
            "x.y",
            Risk::UserConfirmation,
            json!({
                "text": "<b>x</b>\u{202E}\nnext",
                "n": 1.5, "flag": true, "none": null,
                "list": [1, 2, 3], "obj": {"a": 1}, "": "empty key",
                "long": "z".repeat(500),
                "ninth": 9, "tenth": 10,
            }),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let shown: Vec<(&str, &str)> = r
            .arguments()
            .iter()
            .map(|a| (a.key.as_str(), a.value.as_str()))
            .collect();
        let long = format!("{}…", "z".repeat(MAX_ARGUMENT_VALUE_GRAPHEMES));
        assert_eq!(
            shown,
            vec![
                ("text", "<b>x</b> next"),
                ("n", "1.5"),
                ("flag", "true"),
                ("none", "null"),
                ("list", "a list of 3 items"),
                ("obj", "an object with 1 field"),
                ("(empty)", "empty key"),
                ("long", long.as_str()),
            ]
        );
        assert_eq!(r.more_arguments(), 2);
    }

    #[test]
    fn r_cap_3_always_is_offered_only_when_permitted_and_rememberable() {
        for (risk, asked, offered) in [
            (Risk::UserConfirmation, true, true),
            (Risk::UserConfirmation, false, false),
            (Risk::DisplayOnly, true, true),
            (Risk::SystemPermission, true, false),
            (Risk::Restricted, true, false),
        ] {
            let r = request("x.y", risk, json!({}))
                .unwrap_or_else(|e| panic!("{e}"))
                .with_remember(asked);
            assert_eq!(r.remember_allowed(), offered, "{risk:?} {asked}");
        }
    }

    #[test]
    fn r_cap_4_the_deadline_travels_with_the_request() {
        let r = request("x.y", Risk::UserConfirmation, json!({})).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.expires_at(), None);
        let at = Timestamp::from_unix_seconds(1_900_000_000).unwrap_or_else(|| panic!("time"));
        let r = r.with_expires_at(at).with_remember(true);
        assert_eq!(r.expires_at(), Some(at));
        assert!(format!("{r:?}").contains("expires_at"));
    }

    #[test]
    fn consent_answers_reach_the_creator_exactly_once() {
        let make = |remember: bool| {
            let r = request("x.y", Risk::UserConfirmation, json!({}))
                .unwrap_or_else(|e| panic!("{e}"))
                .with_remember(remember);
            pending(r)
        };
        let (p, h, rx) = make(false);
        assert!(h.is_waiting());
        p.allow();
        assert_eq!(rx.try_recv().ok(), Some(ConsentAnswer::Allow));
        assert!(rx.try_recv().is_err(), "exactly once");
        assert!(!h.is_waiting());

        let (p, _, rx) = make(false);
        p.deny();
        assert_eq!(rx.try_recv().ok(), Some(ConsentAnswer::Deny));

        let (p, _, rx) = make(false);
        p.cancel();
        assert_eq!(rx.try_recv().ok(), Some(ConsentAnswer::Dismissed));

        // Not permitted: refused, handed back unanswered, still answerable.
        let (p, _, rx) = make(false);
        let back = p
            .allow_always()
            .err()
            .map(RememberNotPermitted::into_pending);
        assert!(rx.try_recv().is_err());
        if let Some(p) = back {
            p.deny();
        }
        assert_eq!(rx.try_recv().ok(), Some(ConsentAnswer::Deny));

        let (p, _, rx) = make(true);
        assert!(p.allow_always().is_ok());
        assert_eq!(rx.try_recv().ok(), Some(ConsentAnswer::AllowAlways));

        // Dropped unanswered: cancelled.
        let (p, _, rx) = make(false);
        drop(p);
        assert_eq!(rx.try_recv().ok(), Some(ConsentAnswer::Dismissed));

        // Withdrawn: neither an answer nor the drop reaches the creator.
        let (p, h, rx) = make(false);
        h.withdraw();
        assert!(p.is_withdrawn() && !h.is_waiting());
        p.allow();
        let (p, h, rx2) = make(false);
        h.withdraw();
        drop(p);
        assert!(rx.try_recv().is_err() && rx2.try_recv().is_err());
    }

    #[test]
    fn pending_consent_can_be_answered_on_another_thread() {
        let r = request("x.y", Risk::UserConfirmation, json!({})).unwrap_or_else(|e| panic!("{e}"));
        let (p, _, rx) = pending(r);
        let joined = std::thread::spawn(move || p.deny()).join();
        assert!(joined.is_ok());
        assert_eq!(rx.try_recv().ok(), Some(ConsentAnswer::Deny));
    }

    #[test]
    fn risk_words_and_headlines_are_plain() {
        let r = request(
            "app.open_url",
            Risk::UserConfirmation,
            json!({"url": "https://a.example"}),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.headline(), "asks to open a link in your browser");
        assert_eq!(r.risk_words(), "It acts only if you allow it.");
        let r = request("weather.set_unit", Risk::Restricted, json!({}))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.headline(), "asks to use “weather.set_unit”");
        assert!(r.risk_words().contains("never remembered"));
    }
}
