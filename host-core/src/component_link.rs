//! A link the user activated in a standard component (R-STD-11): only a link the kernel itself
//! put in the instance's current Markdown tree is followed, never a URL the page names on its
//! own; the host's link confirm decides, then the desktop opens it, and the decision is audited
//! (R-CAP-6) as an [`AuditKind::Link`] record.

use serde_json::json;

use crate::capability::{
    ArgsDigest, AuditKind, AuditRecord, CallKey, ConsentAnswer, Decision, DecisionSource,
};
use crate::component::ComponentKind;
use crate::ids::{
    AgentIdentity, CallId, CapabilityName, ConversationId, OpaqueVersion, Risk, Status,
};
use crate::json::JsonObject;
use crate::keys::SurfaceKey;
use crate::markdown::{MarkdownNode, SafeMarkdown};
use crate::timestamp::Timestamp;
use crate::url_policy::SafeLink;

/// The name a link's confirm and its audit record carry: the action is `app.open_url`'s, under
/// the same URL rule (R-STD-11), whether or not that capability is offered to agents.
pub const LINK_ACTION: &str = "app.open_url";

/// A link of a shown component the user activated, found in the kernel's own tree: what the
/// host's link confirm shows and, once allowed, what the desktop opens.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ComponentLink {
    /// The component it is in.
    pub key: SurfaceKey,
    /// Which component.
    pub kind: ComponentKind,
    /// The link, as the URL policy passed it (punycode host, no userinfo).
    pub link: SafeLink,
    /// The conversation.
    pub conversation: ConversationId,
    /// The vouched agent identity, when there is one.
    pub agent: Option<AgentIdentity>,
    /// Who the confirm names as the link's sender: the vouched identity, else the id of the
    /// agent that opened the component.
    pub sender: String,
    /// The host-made id of this activation (`link:<instance>:<n>`), the audit record's call id.
    pub activation: CallId,
}

impl ComponentLink {
    /// The audit record of the link confirm's `answer` (R-CAP-6): `allowed` by the prompt and
    /// `completed` when it may open; `denied`/`rejected` when the user refused; `cancelled`
    /// when the confirm was dismissed; `cancelled` by `policy` and `failed` when no confirm
    /// could be shown, never as the user's decision.
    pub fn audit(&self, answer: ConsentAnswer, at: Timestamp) -> AuditRecord {
        let (decision, source, status, note) = match answer {
            ConsentAnswer::Allow | ConsentAnswer::AllowAlways => (
                Decision::Allowed,
                DecisionSource::Prompt,
                Status::Completed,
                "link opened after the link confirm",
            ),
            ConsentAnswer::Deny => (
                Decision::Denied,
                DecisionSource::Prompt,
                Status::Rejected,
                "link refused in the link confirm",
            ),
            ConsentAnswer::Dismissed => (
                Decision::Cancelled,
                DecisionSource::Prompt,
                Status::Cancelled,
                "link confirm dismissed",
            ),
            ConsentAnswer::Unavailable => (
                Decision::Cancelled,
                DecisionSource::Policy,
                Status::Failed,
                "no link confirm could be shown",
            ),
        };
        AuditRecord {
            at,
            kind: AuditKind::Link,
            call: CallKey {
                conversation_id: self.conversation.clone(),
                call_id: self.activation.clone(),
            },
            agent: self.agent.clone(),
            capability: link_action(),
            version: OpaqueVersion::try_from("1").ok(),
            risk: Some(Risk::UserConfirmation),
            arguments_digest: ArgsDigest::of(&self.arguments()),
            decision: Some(decision),
            source: Some(source),
            status: Some(status),
            note: format!("{note} ({} in {})", self.link.host, self.kind),
            error: None,
            count: None,
        }
    }

    /// The confirm's arguments: `{"url": …}`, as `app.open_url` takes them.
    pub fn arguments(&self) -> JsonObject {
        JsonObject::try_from(json!({ "url": self.link.url })).unwrap_or_default()
    }
}

/// [`LINK_ACTION`] as a capability name.
pub fn link_action() -> CapabilityName {
    CapabilityName::try_from(LINK_ACTION).unwrap_or_else(|_| unreachable!("a valid name"))
}

/// The link of `tree` whose URL is `url`, if it has one.
pub(crate) fn find_link<'a>(tree: &'a SafeMarkdown, url: &str) -> Option<&'a SafeLink> {
    let mut found = None;
    tree.visit(&mut |node| match node {
        MarkdownNode::Link { link, .. } if found.is_none() && link.url == url => found = Some(link),
        _ => {}
    });
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markdown::parse_markdown;
    use crate::url_policy::LinkPolicy;

    #[test]
    fn r_std_11_only_links_of_the_tree_are_found_at_any_depth() {
        let text = "See [docs](https://docs.example/a).\n\n\
                    > - **[deep](https://deep.example/x)**\n\n\
                    | a |\n|---|\n| [cell](https://cell.example/) |\n\n\
                    [bad](javascript:alert(1)) [bank](https://bank.example@evil.example/)";
        let tree = parse_markdown(text, LinkPolicy::Confirm);
        for url in [
            "https://docs.example/a",
            "https://deep.example/x",
            "https://cell.example/",
        ] {
            assert_eq!(find_link(&tree, url).map(|l| l.url.as_str()), Some(url));
        }
        for url in [
            "javascript:alert(1)",
            "https://bank.example@evil.example/",
            "https://evil.example/",
            "https://docs.example/",
        ] {
            assert_eq!(find_link(&tree, url), None, "{url}");
        }
        let off = parse_markdown(text, LinkPolicy::Off);
        assert_eq!(find_link(&off, "https://docs.example/a"), None);
    }
}
