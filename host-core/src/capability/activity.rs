//! What ran (original §5.3): each call whose handler started is an [`Activity`], kept in the
//! session's bounded list ([`ActivityLog`]) and reported to the platform
//! ([`CapabilityEffect::Activity`](crate::CapabilityEffect::Activity)), which tells the user with
//! a host-owned notice when nothing of the call was visible before it ran ([`Activity::unseen`]).

use std::collections::VecDeque;
use std::fmt;

use crate::capability::store::{CallKey, DecisionSource};
use crate::ids::{AgentIdentity, CapabilityName, OpaqueVersion, Risk};
use crate::redact::Fingerprint;
use crate::timestamp::Timestamp;

/// How many activities a session keeps; older ones leave the list (the audit log keeps every
/// call, R-CAP-6).
pub const MAX_ACTIVITY: usize = 256;

/// One call that ran: what, when, for whom, and under which grant.
///
/// `reason` is the agent's text: show it as plain text, escaped and capped
/// ([`crate::display_title`]). `Debug` shows it as a [`Fingerprint`] (logs reach journald).
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Activity {
    /// The call.
    pub key: CallKey,
    /// The vouched agent identity, when there is one.
    pub agent: Option<AgentIdentity>,
    /// The capability that ran.
    pub capability: CapabilityName,
    /// Its version.
    pub version: OpaqueVersion,
    /// Its risk.
    pub risk: Risk,
    /// The agent's reason (untrusted text).
    pub reason: String,
    /// When its handler started (wall clock).
    pub at: Timestamp,
    /// What allowed it: [`DecisionSource::Policy`] for `display_only`, the prompt, a
    /// remembered grant, or the permission check.
    pub allowed_by: DecisionSource,
}

impl Activity {
    /// Whether the user saw nothing of this call before it ran: `display_only`, or a grant
    /// remembered earlier. The host shows a notice for these; for the others the user has just
    /// answered a prompt.
    pub fn unseen(&self) -> bool {
        matches!(
            self.allowed_by,
            DecisionSource::Policy | DecisionSource::RememberedGrant
        )
    }

    /// The grant in plain words: `display_only`, `the user's consent`, `a remembered grant`,
    /// `the permission check`.
    pub fn grant(&self) -> &'static str {
        self.grant_in(&crate::LanguageTag::english())
    }

    /// The grant in plain words in `language`, from the host's words table (R-STD-9).
    pub fn grant_in(&self, language: &crate::LanguageTag) -> &'static str {
        let key = match self.allowed_by {
            DecisionSource::Policy => "grant_policy",
            DecisionSource::Prompt => "grant_prompt",
            DecisionSource::RememberedGrant => "grant_remembered",
            DecisionSource::Hook => "grant_hook",
            DecisionSource::Deadline | DecisionSource::Recovery => "grant_host",
        };
        crate::host_word(language, key).unwrap_or_default()
    }
}

impl fmt::Debug for Activity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Activity")
            .field("key", &self.key)
            .field("agent", &self.agent)
            .field("capability", &self.capability)
            .field("version", &self.version)
            .field("risk", &self.risk)
            .field("reason", &Fingerprint::of(&self.reason))
            .field("at", &self.at)
            .field("allowed_by", &self.allowed_by)
            .finish()
    }
}

impl fmt::Display for Activity {
    /// One log line: when, what, for whom, under which grant; never the reason.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {} ran for ",
            self.at, self.capability, self.version
        )?;
        match &self.agent {
            Some(agent) => write!(f, "agent {agent}")?,
            None => f.write_str("an unvouched agent")?,
        }
        write!(
            f,
            " in conversation {} (call {}), allowed by {}",
            self.key.conversation_id,
            self.key.call_id,
            self.grant()
        )
    }
}

/// A session's activities, oldest first, at most [`MAX_ACTIVITY`].
#[derive(Debug, Clone, Default)]
pub(crate) struct ActivityLog {
    entries: VecDeque<Activity>,
}

impl ActivityLog {
    pub(crate) fn push(&mut self, activity: Activity) {
        if self.entries.len() >= MAX_ACTIVITY {
            self.entries.pop_front();
        }
        self.entries.push_back(activity);
    }

    pub(crate) fn entries(&self) -> impl Iterator<Item = &Activity> + '_ {
        self.entries.iter()
    }
}
