//! Links in standard components through the kernel (R-STD-11, §5 check 3): the host follows
//! only a link the kernel put in the instance's current Markdown tree (never a URL the page
//! names, never a link the policy made inert, never one of an older generation or another
//! instance), numbers each activation, and audits the link confirm's answer without ever
//! reporting a host refusal as the user's (R-CAP-6).
#![allow(clippy::unwrap_used)]

mod support;

use lineup_host_core::{
    AuditKind, ComponentEffect, ComponentSet, ConsentAnswer, Decision, DecisionSource, Effect,
    Limits, LinkPolicy, PartyId, Risk, Session, Status, SurfaceKey, Timestamp, LINK_ACTION,
};
use serde_json::{json, Value};
use support::{config, Still};

const TEXT: &str = "Read [the guide](https://Bücher.example/guide?x=1) or \
    [this](javascript:alert(1)), [bank](https://bank.example@evil.example/), \
    [spoof](https://xn--pple-43d.com/) and ![img](https://img.example/p.png).";

fn session(policy: LinkPolicy, vouched: Option<&str>) -> Session {
    let mut config = config(Limits::default());
    config.standard_components = ComponentSet::all_v1();
    config.link_policy = policy;
    config.agent_id = vouched.map(|a| PartyId::try_from(a).unwrap());
    Session::new(config, Box::new(Still)).unwrap()
}

fn open(s: &mut Session, id: &str, instance: &str, text: &str) -> SurfaceKey {
    let bytes = serde_json::to_vec(&json!({
        "v": 1, "id": id, "type": "lineup.v1.ui.open", "conversation_id": "c1",
        "sender": {"kind": "agent", "id": "a1"},
        "payload": {"instance_id": instance, "component": {"id": "markdown", "version": "1"},
                    "state": {"text": text}}
    }))
    .unwrap();
    s.handle_inbound(&bytes)
        .iter()
        .find_map(|e| match e {
            Effect::Component(ComponentEffect::Show(c)) => Some(c.key.clone()),
            _ => None,
        })
        .unwrap()
}

fn patch(s: &mut Session, instance: &str, text: &str) {
    let bytes = serde_json::to_vec(&json!({
        "v": 1, "id": "p1", "type": "lineup.v1.ui.patch", "conversation_id": "c1",
        "sender": {"kind": "agent", "id": "a1"},
        "payload": {"instance_id": instance, "state": {"text": text}}
    }))
    .unwrap();
    let fx = s.handle_inbound(&bytes);
    assert!(
        fx.iter()
            .any(|e| matches!(e, Effect::Component(ComponentEffect::Update { .. }))),
        "{fx:?}"
    );
}

#[test]
fn r_std_11_only_the_trees_own_links_are_followed() {
    let mut s = session(LinkPolicy::Confirm, None);
    let key = open(&mut s, "m1", "m", TEXT);
    // The positive control: the tree's link, in punycode, numbered.
    let url = "https://xn--bcher-kva.example/guide?x=1";
    let link = s.component_link(&key, url).expect("the tree's own link");
    assert_eq!(link.link.host, "xn--bcher-kva.example");
    assert_eq!(link.link.url, url);
    assert_eq!(link.activation.as_str(), "link:m:1");
    assert_eq!(link.sender, "a1", "unvouched: the opener's id");
    assert_eq!(link.agent, None);
    assert_eq!(
        s.component_link(&key, url).unwrap().activation.as_str(),
        "link:m:2"
    );
    // The homograph is a link, shown by its punycode host (the confirm shows that host).
    let spoof = s.component_link(&key, "https://xn--pple-43d.com/").unwrap();
    assert_eq!(spoof.link.host, "xn--pple-43d.com");
    // What the tree made inert, or never had, is not followed.
    for url in [
        "javascript:alert(1)",
        "https://bank.example@evil.example/",
        "https://evil.example/",
        "https://img.example/p.png",
        "https://Bücher.example/guide?x=1",
        "",
    ] {
        assert_eq!(s.component_link(&key, url), None, "{url}");
    }
    // Another instance, or the old generation after a replace, has none of them.
    let other = SurfaceKey {
        instance: "n".try_into().unwrap(),
        ..key.clone()
    };
    assert_eq!(s.component_link(&other, url), None);
    let newer = open(&mut s, "m2", "m", "no links now");
    assert_eq!(s.component_link(&key, url), None, "old generation");
    assert_eq!(s.component_link(&newer, url), None, "not in the new tree");
    // A patch changes the tree: the link it adds is followed, the one it removed is not.
    patch(&mut s, "m", "[new](https://new.example/)");
    assert!(s.component_link(&newer, "https://new.example/").is_some());
    assert_eq!(s.component_link(&newer, url), None);
}

#[test]
fn r_std_11_under_the_kiosk_policy_no_link_is_followed() {
    let mut s = session(LinkPolicy::Off, None);
    let key = open(&mut s, "m1", "m", TEXT);
    assert_eq!(
        s.component_link(&key, "https://xn--bcher-kva.example/guide?x=1"),
        None
    );
}

#[test]
fn r_cap_6_the_link_confirms_answer_is_audited_and_a_host_refusal_is_never_the_users() {
    let mut s = session(LinkPolicy::Confirm, Some("a1"));
    let key = open(&mut s, "m1", "m", TEXT);
    let link = s
        .component_link(&key, "https://xn--bcher-kva.example/guide?x=1")
        .unwrap();
    assert_eq!(link.agent.as_ref().map(|a| a.as_str()), Some("a1"));
    let at = Timestamp::from_unix_seconds(1_785_672_000).unwrap();
    let cases = [
        (
            ConsentAnswer::Allow,
            Decision::Allowed,
            DecisionSource::Prompt,
            Status::Completed,
        ),
        (
            ConsentAnswer::AllowAlways,
            Decision::Allowed,
            DecisionSource::Prompt,
            Status::Completed,
        ),
        (
            ConsentAnswer::Deny,
            Decision::Denied,
            DecisionSource::Prompt,
            Status::Rejected,
        ),
        (
            ConsentAnswer::Dismissed,
            Decision::Cancelled,
            DecisionSource::Prompt,
            Status::Cancelled,
        ),
        (
            ConsentAnswer::Unavailable,
            Decision::Cancelled,
            DecisionSource::Policy,
            Status::Failed,
        ),
    ];
    for (answer, decision, source, status) in cases {
        let record = link.audit(answer, at);
        assert_eq!(record.kind, AuditKind::Link);
        assert_eq!(record.decision, Some(decision), "{answer:?}");
        assert_eq!(record.source, Some(source), "{answer:?}");
        assert_eq!(record.status, Some(status), "{answer:?}");
        assert_eq!(record.capability.as_str(), LINK_ACTION);
        assert_eq!(record.risk, Some(Risk::UserConfirmation));
        assert_eq!(record.call.call_id.as_str(), "link:m:1");
        assert_eq!(record.call.conversation_id.as_str(), "c1");
        assert!(
            record.note.contains("xn--bcher-kva.example"),
            "{}",
            record.note
        );
        assert!(
            !record.note.contains("guide"),
            "the note names the host, not the URL"
        );
    }
    let arguments = link.arguments();
    assert_eq!(
        Value::Object(arguments.as_map().clone()),
        json!({"url": "https://xn--bcher-kva.example/guide?x=1"})
    );
}
