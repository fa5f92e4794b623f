//! Whose calls a session's are, and where its "always" answers live (R-CAP-3, R-CAP-5,
//! R-SES-1).

use std::collections::BTreeSet;

use crate::{
    unvouched_identity, AgentIdentity, CapabilityName, ConversationId, GrantKey, OpaqueVersion,
    RevisionEpoch, UNVOUCHED_PREFIX,
};

/// The party a session's calls belong to: the vouched agent, else an unvouched identity of the
/// conversation; and the "always" answers that last only the conversation.
///
/// Invariants: `conversation` is set once, when the session is established; `grants` holds only
/// answers given in this session (they are never read from anywhere else), each for one
/// capability version.
#[derive(Debug)]
pub(super) struct Grantee {
    agent: Option<AgentIdentity>,
    conversation: Option<ConversationId>,
    unvouched_scope: Option<String>,
    grants: BTreeSet<(CapabilityName, OpaqueVersion)>,
}

impl Grantee {
    /// The vouched `agent`, if any, and the embedder's scope for unvouched ones, if any.
    pub(super) fn new(agent: Option<AgentIdentity>, unvouched_scope: Option<String>) -> Self {
        Self {
            agent,
            conversation: None,
            unvouched_scope,
            grants: BTreeSet::new(),
        }
    }

    /// The vouched agent identity, if any.
    pub(super) fn agent(&self) -> Option<&AgentIdentity> {
        self.agent.as_ref()
    }

    /// The conversation, once the session is established.
    pub(super) fn conversation(&self) -> Option<&ConversationId> {
        self.conversation.as_ref()
    }

    /// The session is established in `conversation`.
    pub(super) fn establish(&mut self, conversation: ConversationId) {
        self.conversation = Some(conversation);
    }

    /// Whose calls these are (R-CAP-5, R-SES-1): the vouched identity, else the session's
    /// unvouched identity: this process's scope when the embedder gave one, else the session's
    /// revision `epoch`, which no other session shares.
    pub(super) fn owner(&self, epoch: RevisionEpoch) -> AgentIdentity {
        if let Some(agent) = &self.agent {
            return agent.clone();
        }
        let scope = match &self.unvouched_scope {
            Some(scope) => scope.clone(),
            None => format!("session-{}", epoch.0),
        };
        let conversation = self
            .conversation
            .clone()
            .unwrap_or_else(|| ConversationId::known("unknown"));
        unvouched_identity(&scope, &conversation)
            .unwrap_or_else(|| AgentIdentity::known(format!("{UNVOUCHED_PREFIX}{scope}")))
    }

    /// Whose "always" decides `user_confirmation` calls in the store: the vouched identity,
    /// else this process's unvouched identity for the conversation; `None` keeps them in
    /// memory, for the conversation (R-SES-1).
    pub(super) fn grant_identity(&self) -> Option<AgentIdentity> {
        if let Some(agent) = &self.agent {
            return Some(agent.clone());
        }
        let scope = self.unvouched_scope.as_deref()?;
        unvouched_identity(scope, self.conversation.as_ref()?)
    }

    /// Whether "always" was answered in this conversation for `grant`.
    pub(super) fn granted(&self, grant: &(CapabilityName, OpaqueVersion)) -> bool {
        self.grants.contains(grant)
    }

    /// "Always" was answered for `name` at `version`, to last the conversation.
    pub(super) fn grant(&mut self, name: CapabilityName, version: OpaqueVersion) {
        self.grants.insert((name, version));
    }

    /// "Always" was answered for `capability` at `version` (R-CAP-2, R-SES-1): the key of the
    /// grant for the store when whose it is goes there ([`Grantee::grant_identity`]); else it
    /// is kept for the conversation, and `None`.
    pub(super) fn remember(
        &mut self,
        capability: CapabilityName,
        version: OpaqueVersion,
    ) -> Option<GrantKey> {
        match self.grant_identity() {
            Some(agent) => Some(GrantKey {
                agent,
                capability,
                version,
            }),
            None => {
                self.grant(capability, version);
                None
            }
        }
    }

    /// Forgets the conversation's "always" for `name`; whether there was one.
    pub(super) fn forget(&mut self, name: &CapabilityName) -> bool {
        let before = self.grants.len();
        self.grants.retain(|(n, _)| n != name);
        before != self.grants.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_owner_is_the_vouched_agent_else_the_scope_or_the_epoch_of_the_conversation() {
        let epoch = RevisionEpoch(7);
        let vouched = AgentIdentity::known("agent-a");
        let mut g = Grantee::new(Some(vouched.clone()), Some("host-1".into()));
        g.establish(ConversationId::known("c1"));
        assert_eq!(g.owner(epoch), vouched);
        assert_eq!(g.grant_identity(), Some(vouched));

        let mut scoped = Grantee::new(None, Some("host-1".into()));
        assert_eq!(scoped.grant_identity(), None, "no conversation yet");
        scoped.establish(ConversationId::known("c1"));
        let owner = scoped.owner(epoch);
        assert_eq!(owner.as_str(), "~unvouched/host-1/c1");
        assert_eq!(scoped.grant_identity(), Some(owner));

        let mut bare = Grantee::new(None, None);
        bare.establish(ConversationId::known("c1"));
        assert_eq!(bare.owner(epoch).as_str(), "~unvouched/session-7/c1");
        assert_eq!(
            bare.grant_identity(),
            None,
            "kept in memory for the conversation"
        );
    }

    #[test]
    fn always_goes_to_the_store_under_a_grant_identity_else_lasts_the_conversation() {
        let name = CapabilityName::known("reports.publish");
        let v1 = OpaqueVersion::known("1");
        let mut scoped = Grantee::new(None, Some("host-1".into()));
        scoped.establish(ConversationId::known("c1"));
        let key = scoped.remember(name.clone(), v1.clone());
        assert_eq!(
            key.map(|k| (k.agent, k.capability, k.version)),
            Some((scoped.owner(RevisionEpoch(7)), name.clone(), v1.clone()))
        );
        assert!(
            !scoped.granted(&(name.clone(), v1.clone())),
            "the store keeps it"
        );

        let mut bare = Grantee::new(None, None);
        bare.establish(ConversationId::known("c1"));
        assert!(bare.remember(name.clone(), v1.clone()).is_none());
        assert!(bare.granted(&(name, v1)));
    }

    #[test]
    fn a_conversation_grant_is_per_version_and_forgotten_by_name() {
        let mut g = Grantee::new(None, None);
        let name = CapabilityName::known("reports.publish");
        let (v1, v2) = (OpaqueVersion::known("1"), OpaqueVersion::known("2"));
        g.grant(name.clone(), v1.clone());
        assert!(g.granted(&(name.clone(), v1.clone())));
        assert!(!g.granted(&(name.clone(), v2)));
        assert!(g.forget(&name));
        assert!(!g.forget(&name));
        assert!(!g.granted(&(name, v1)));
    }
}
