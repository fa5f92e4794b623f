//! The consent model's rules: what a prompt shows, cleaned and capped, and how a request is
//! answered once.

use std::sync::mpsc;

use serde_json::json;

use super::*;
use lineup_host_core::ConsentAnswer;

fn request(capability: &str, risk: Risk, arguments: Value) -> Result<PromptContent, String> {
    let map = arguments.as_object().cloned().unwrap_or_default();
    Ok(PromptContent::new(
        "agent-7",
        CapabilityName::try_from(capability).map_err(|e| e.to_string())?,
        OpaqueVersion::try_from("1").map_err(|e| e.to_string())?,
        risk,
        "why",
        &map,
    ))
}

fn pending(r: PromptContent) -> (PendingConsent, ConsentHandle, mpsc::Receiver<ConsentAnswer>) {
    let (tx, rx) = mpsc::channel();
    let (p, h) = PendingConsent::new(r, move |a| {
        let _ = tx.send(a);
    });
    (p, h, rx)
}

/// R-CAP-4: the platform knows no capability by name; the wording and the link's host are the
/// capability owner's, and cleaned like every agent-reachable string (R-SEC-6).
#[test]
fn r_cap_4_the_wording_is_the_owners_and_cleaned() {
    let plain = request(
        "app.open_url",
        Risk::UserConfirmation,
        json!({"url": "https://u@h.example"}),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(plain.headline(), "asks to use “app.open_url”");
    assert_eq!(plain.link_host(), None, "no URL is parsed here");
    let worded = plain
        .with_headline("asks to open a link\u{202E} in your browser")
        .with_link_host("xn--bcher-kva.example");
    assert_eq!(worded.headline(), "asks to open a link in your browser");
    assert_eq!(worded.link_host(), Some("xn--bcher-kva.example"));
    let long = "w".repeat(MAX_HEADLINE_GRAPHEMES + 10);
    let capped = request("x.y", Risk::UserConfirmation, json!({}))
        .unwrap_or_else(|e| panic!("{e}"))
        .with_headline(&long);
    assert!(capped.headline().ends_with('…'), "{}", capped.headline());
    assert!(capped.headline().chars().count() <= MAX_HEADLINE_GRAPHEMES + 1);
    let kept = request("x.y", Risk::UserConfirmation, json!({}))
        .unwrap_or_else(|e| panic!("{e}"))
        .with_headline("\u{200B}");
    assert_eq!(
        kept.headline(),
        "asks to use “x.y”",
        "an empty wording is ignored"
    );
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
    let lines = r.arguments();
    let shown: Vec<(&str, &str)> = lines
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
    // R-STD-9: the host's words in the request's language; the agent's stay as they came.
    let zh =
        r.with_language(LanguageTag::try_from("zh-CN").unwrap_or_else(|_| LanguageTag::english()));
    let lines = zh.arguments();
    let shown: Vec<(&str, &str)> = lines
        .iter()
        .map(|a| (a.key.as_str(), a.value.as_str()))
        .collect();
    assert_eq!(shown[0], ("text", "<b>x</b> next"));
    assert_eq!(shown[4], ("list", "含 3 项的列表"));
    assert_eq!(shown[5], ("obj", "含 1 个字段的对象"));
    assert_eq!(shown[6], ("（空）", "empty key"));
    assert_eq!(zh.headline(), "请求使用“x.y”");
    assert_eq!(zh.risk_words(), "只有在你允许后它才会执行。");
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
    assert_eq!(r.risk_words(), "It acts only if you allow it.");
    let r =
        request("weather.set_unit", Risk::Restricted, json!({})).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.headline(), "asks to use “weather.set_unit”");
    assert!(r.risk_words().contains("never remembered"));
}
