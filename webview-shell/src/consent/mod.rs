//! Consent for App Capabilities: what a prompt shows ([`PromptContent`]), how the user answered
//! ([`ConsentAnswer`](crate::ConsentAnswer)), and the request object a prompt answers ([`PendingConsent`]), with no
//! platform type in sight (R-CAP-2, R-CAP-3, R-CAP-4, R-SEC-6).

use std::fmt;

use lineup_host_core::{
    display_line, display_text, host_word, host_word_with, imitates_consent_prompt_line,
    CapabilityName, ConversationId, Fingerprint, LanguageTag, OpaqueVersion, Risk, SessionId,
    Timestamp,
};
use serde_json::{Map, Value};

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
/// The longest headline a capability's own wording may give, in extended grapheme clusters.
pub const MAX_HEADLINE_GRAPHEMES: usize = 120;

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
/// The platform layer knows no capability by name: what a capability asks in plain words
/// ([`PromptContent::with_headline`]) and, for a link, where it leads
/// ([`PromptContent::with_link_host`], checked by host-core's one URL rule) come from whoever
/// owns the capability (the built-ins their own wording, R-CAP-4).
///
/// The words the host adds itself (the default headline, the conversation's line, an argument
/// value's summary, the risk's words) are in the request's language
/// ([`PromptContent::with_language`], English until set), from host-core's one table (R-STD-9).
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
/// );
/// assert_eq!(request.headline(), "asks to use “app.open_url”");
/// let request = request
///     .with_headline("asks to open a link in your browser")
///     .with_link_host("xn--bcher-kva.example");
/// assert_eq!(request.link_host(), Some("xn--bcher-kva.example"));
/// assert_eq!(request.headline(), "asks to open a link in your browser");
/// assert_eq!(request.reason(), "To show you the shop");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct PromptContent {
    /// Cleaned and capped; empty when the agent has no name fit to show.
    agent: String,
    capability: CapabilityName,
    version: OpaqueVersion,
    risk: Risk,
    reason: String,
    /// Each listed argument's cleaned key (empty when the agent sent an empty one) and value.
    arguments: Vec<(String, ArgumentValue)>,
    more_arguments: usize,
    /// The capability owner's wording, cleaned and capped; `None`: the host's default.
    headline: Option<String>,
    link_host: Option<String>,
    remember_allowed: bool,
    expires_at: Option<Timestamp>,
    conversation: Option<AskingConversation>,
    language: LanguageTag,
}

/// An argument's value as a prompt summarizes it: text is shown, a list or an object counted.
#[derive(Clone, PartialEq, Eq)]
enum ArgumentValue {
    Text(String),
    List(usize),
    Object(usize),
}

/// The conversation a prompt's request comes from (#49): its id and session, and what the
/// prompt may call it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AskingConversation {
    /// The conversation's id, as the agent wrote it.
    pub id: ConversationId,
    /// Its session in the host.
    pub session: SessionId,
    /// What the built-in prompt calls it: the embedder's label, else the id as the agent's
    /// words, never one of the prompt's own lines.
    pub name: ConversationName,
}

/// What a prompt calls the conversation that asks (#49 item 4, R-SEC-5), each cleaned and
/// capped at [`MAX_CONVERSATION_GRAPHEMES`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConversationName {
    /// The embedder's label for it.
    Label(String),
    /// Its id, shown as the agent's words for it.
    AgentWords(String),
    /// Not shown: its name imitates one of the prompt's own lines, or is empty.
    Withheld,
}

impl ConversationName {
    /// The prompt's line for it in `language`: `in Trip planning`, `in the conversation the
    /// agent calls “c1”`, or that the name is withheld.
    pub fn line(&self, language: &LanguageTag) -> String {
        match self {
            Self::Label(label) => host_word_with(language, "in_label", label, 0),
            Self::AgentWords(id) => host_word_with(language, "in_agent_words", id, 0),
            Self::Withheld => host_word_with(language, "in_withheld", "", 0),
        }
    }
}

/// The longest conversation name a prompt shows, in graphemes.
pub const MAX_CONVERSATION_GRAPHEMES: usize = 60;

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
    pub fn new(
        agent: &str,
        capability: CapabilityName,
        version: OpaqueVersion,
        risk: Risk,
        reason: &str,
        arguments: &Map<String, Value>,
    ) -> Self {
        let lines = arguments
            .iter()
            .take(MAX_ARGUMENTS_SHOWN)
            .map(|(key, value)| {
                (
                    display_line(key, MAX_ARGUMENT_KEY_GRAPHEMES),
                    summarize(value),
                )
            })
            .collect();
        Self {
            agent: display_line(agent, MAX_AGENT_GRAPHEMES),
            capability,
            version,
            risk,
            reason: display_text(reason, MAX_REASON_GRAPHEMES),
            arguments: lines,
            more_arguments: arguments.len().saturating_sub(MAX_ARGUMENTS_SHOWN),
            headline: None,
            link_host: None,
            remember_allowed: false,
            expires_at: None,
            conversation: None,
            language: LanguageTag::english(),
        }
    }

    /// The language of the words the host adds (R-STD-9): the host context's, which the host
    /// sets on every request it makes; English until set.
    pub fn with_language(mut self, language: LanguageTag) -> Self {
        self.language = language;
        self
    }

    /// The language of the words the host adds.
    pub fn language(&self) -> &LanguageTag {
        &self.language
    }

    /// Says which conversation asks: `label` (the embedder's name for it, display-cleaned),
    /// else `id` in quotes as the agent's name for it. A name that imitates one of the
    /// prompt's own lines ([`imitates_consent_prompt_line`]) is not shown; the prompt says so
    /// instead (R-SEC-5).
    pub fn with_conversation(
        mut self,
        id: &ConversationId,
        session: SessionId,
        label: Option<&str>,
    ) -> Self {
        let label = label
            .map(|l| display_line(l, MAX_CONVERSATION_GRAPHEMES))
            .filter(|l| !l.is_empty() && imitates_consent_prompt_line(l).is_none());
        let named = display_line(id.as_str(), MAX_CONVERSATION_GRAPHEMES);
        let name = match label {
            Some(label) => ConversationName::Label(label),
            None if named.is_empty() || imitates_consent_prompt_line(&named).is_some() => {
                ConversationName::Withheld
            }
            None => ConversationName::AgentWords(named),
        };
        self.conversation = Some(AskingConversation {
            id: id.clone(),
            session,
            name,
        });
        self
    }

    /// The conversation that asks, when the host said ([`PromptContent::with_conversation`]).
    pub fn conversation(&self) -> Option<&AskingConversation> {
        self.conversation.as_ref()
    }

    /// The prompt's line for the conversation that asks, in the request's language.
    pub fn conversation_line(&self) -> Option<String> {
        self.conversation
            .as_ref()
            .map(|c| c.name.line(&self.language))
    }

    /// What the capability asks, in plain words, as its owner words it ("asks to open a link
    /// in your browser"); cleaned and capped at [`MAX_HEADLINE_GRAPHEMES`]. Without it the
    /// prompt says "asks to use “name”".
    pub fn with_headline(mut self, headline: impl AsRef<str>) -> Self {
        let headline = display_line(headline.as_ref(), MAX_HEADLINE_GRAPHEMES);
        if !headline.is_empty() {
            self.headline = Some(headline);
        }
        self
    }

    /// The host a link argument leads to, in punycode, as host-core's link rule gave it
    /// (`lineup_host_core::open_url_host`); the prompt shows it on a line of its own.
    pub fn with_link_host(mut self, host: impl AsRef<str>) -> Self {
        self.link_host = Some(display_line(host.as_ref(), MAX_ARGUMENT_VALUE_GRAPHEMES));
        self
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

    /// The requesting agent, cleaned and capped (`(unnamed agent)` in the request's language
    /// when nothing of its name is fit to show).
    pub fn agent(&self) -> &str {
        if self.agent.is_empty() {
            host_word(&self.language, "unnamed_agent").unwrap_or_default()
        } else {
            &self.agent
        }
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

    /// What the agent asks to do, in plain words: the capability owner's wording
    /// ([`PromptContent::with_headline`]), otherwise the host's, naming the capability, in the
    /// request's language.
    pub fn headline(&self) -> String {
        match &self.headline {
            Some(headline) => headline.clone(),
            None => host_word_with(&self.language, "asks_to_use", self.capability.as_str(), 0),
        }
    }

    /// The risk in plain words, in the request's language ([`risk_in_words`]).
    pub fn risk_words(&self) -> &'static str {
        risk_in_words(self.risk, &self.language)
    }

    /// The agent's `reason`, cleaned, line breaks kept, capped at [`MAX_REASON_GRAPHEMES`].
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// The first [`MAX_ARGUMENTS_SHOWN`] arguments, in the call's order, with the host's words
    /// (an empty key, a list's or an object's summary) in the request's language.
    pub fn arguments(&self) -> Vec<ArgumentLine> {
        let language = &self.language;
        self.arguments
            .iter()
            .map(|(key, value)| ArgumentLine {
                key: if key.is_empty() {
                    host_word_with(language, "empty_key", "", 0)
                } else {
                    key.clone()
                },
                value: match value {
                    ArgumentValue::Text(text) => text.clone(),
                    ArgumentValue::List(1) => host_word_with(language, "list_one", "", 1),
                    ArgumentValue::List(n) => host_word_with(language, "list_many", "", *n),
                    ArgumentValue::Object(1) => host_word_with(language, "object_one", "", 1),
                    ArgumentValue::Object(n) => host_word_with(language, "object_many", "", *n),
                },
            })
            .collect()
    }

    /// How many arguments are not listed.
    pub fn more_arguments(&self) -> usize {
        self.more_arguments
    }

    /// The host a link argument leads to, in punycode, when the capability's owner gave one
    /// ([`PromptContent::with_link_host`]).
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

/// A risk level (R-CAP-2) in plain words in `language`, as a prompt shows it under the
/// headline.
pub fn risk_in_words(risk: Risk, language: &LanguageTag) -> &'static str {
    let key = match risk {
        Risk::DisplayOnly => "risk_display_only",
        Risk::UserConfirmation => "risk_user_confirmation",
        Risk::SystemPermission => "risk_system_permission",
        Risk::Restricted => "risk_restricted",
    };
    host_word(language, key).unwrap_or_default()
}

/// One argument value as a prompt summarizes it: a string, number, boolean or `null` as a short
/// line of plain text, a list or an object by its size.
fn summarize(value: &Value) -> ArgumentValue {
    match value {
        Value::String(s) => ArgumentValue::Text(display_line(s, MAX_ARGUMENT_VALUE_GRAPHEMES)),
        Value::Number(n) => {
            ArgumentValue::Text(display_line(&n.to_string(), MAX_ARGUMENT_VALUE_GRAPHEMES))
        }
        Value::Bool(b) => ArgumentValue::Text(b.to_string()),
        Value::Null => ArgumentValue::Text("null".to_owned()),
        Value::Array(items) => ArgumentValue::List(items.len()),
        Value::Object(fields) => ArgumentValue::Object(fields.len()),
    }
}

mod pending;
#[cfg(test)]
mod tests;

pub use pending::{ConsentHandle, ConsentPrompt, PendingConsent, RememberNotPermitted};
