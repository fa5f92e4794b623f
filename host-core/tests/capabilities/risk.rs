//! Every status and every risk rule (R-CAP-2..4); remembered and revoked grants (R-CAP-2, R-SES-1).

use super::*;

// ---- every status, every risk rule (R-CAP-2..4) ----

#[derive(Debug, Clone, Copy)]
enum Step {
    Consent(ConsentAnswer),
    Hook(bool),
    Ran(bool),
    /// Move the wall clock on by this many seconds, then poll.
    Wait(i64),
}

#[test]
fn r_cap_4_every_status_and_every_risk_rule() {
    use ConsentAnswer::*;
    use Step::*;
    // (row, risk, expires in, steps, status, error code, prompts, hooks, runs)
    #[allow(clippy::type_complexity)]
    let rows: &[(
        &str,
        Risk,
        i64,
        &[Step],
        &str,
        Option<&str>,
        usize,
        usize,
        usize,
    )] = &[
        (
            "display_only runs without a prompt",
            Risk::DisplayOnly,
            60,
            &[Ran(true)],
            "completed",
            None,
            0,
            0,
            1,
        ),
        (
            "user_confirmation prompts, allow runs",
            Risk::UserConfirmation,
            60,
            &[Consent(Allow), Ran(true)],
            "completed",
            None,
            1,
            0,
            1,
        ),
        (
            "user says no: rejected",
            Risk::UserConfirmation,
            60,
            &[Consent(Deny)],
            "rejected",
            None,
            1,
            0,
            0,
        ),
        (
            "prompt dismissed: cancelled",
            Risk::UserConfirmation,
            60,
            &[Consent(Dismissed)],
            "cancelled",
            None,
            1,
            0,
            0,
        ),
        (
            "deadline passes during the prompt: expired",
            Risk::UserConfirmation,
            60,
            &[Wait(61)],
            "expired",
            None,
            1,
            0,
            0,
        ),
        (
            "already expired: expired before any prompt",
            Risk::UserConfirmation,
            0,
            &[],
            "expired",
            None,
            0,
            0,
            0,
        ),
        (
            "handler error: failed",
            Risk::DisplayOnly,
            60,
            &[Ran(false)],
            "failed",
            Some("handler_failed"),
            0,
            0,
            1,
        ),
        (
            "system_permission: prompt, then hook allows",
            Risk::SystemPermission,
            60,
            &[Consent(Allow), Hook(true), Ran(true)],
            "completed",
            None,
            1,
            1,
            1,
        ),
        (
            "system_permission: hook default deny is rejected",
            Risk::SystemPermission,
            60,
            &[Consent(Allow), Hook(false)],
            "rejected",
            None,
            1,
            1,
            0,
        ),
        (
            "restricted: prompt, then hook",
            Risk::Restricted,
            60,
            &[Consent(Allow), Hook(true), Ran(true)],
            "completed",
            None,
            1,
            1,
            1,
        ),
        (
            "restricted: user says no, the hook is never asked",
            Risk::Restricted,
            60,
            &[Consent(Deny)],
            "rejected",
            None,
            1,
            0,
            0,
        ),
        (
            "deadline passes while the hook is asked: expired",
            Risk::Restricted,
            60,
            &[Consent(Allow), Wait(61)],
            "expired",
            None,
            1,
            1,
            0,
        ),
    ];
    for &(row, risk, expires_in, steps, status, code, prompts, hooks, runs) in rows {
        let mut h = Harness::new(Some("agent-1"));
        h.register(open_url(risk));
        h.call("c1", "app.open_url", url_args(), expires_in);
        for step in steps {
            match *step {
                Consent(a) => h.consent(a),
                Hook(b) => h.hook(b),
                Ran(true) => h.ran(Ok(json!({"opened": true}))),
                Ran(false) => h.ran(Err("no handler for https")),
                Wait(secs) => {
                    h.wall.0.set(h.wall.0.get() + secs);
                    h.poll();
                }
            }
        }
        let results = h.results();
        assert_eq!(
            results.len(),
            1,
            "{row}: exactly one app.result: {results:?}"
        );
        let r = &results[0];
        assert_eq!(r["call_id"], "c1", "{row}");
        assert_eq!(r["status"], status, "{row}: {r}");
        assert_eq!(r["error"]["code"].as_str(), code, "{row}: {r}");
        if status == "completed" {
            assert_eq!(r["result"], json!({"opened": true}), "{row}");
        } else {
            assert!(
                r["message"].as_str().is_some_and(|m| !m.is_empty()),
                "{row}: {r}"
            );
        }
        assert_eq!(h.prompts.len(), prompts, "{row}: prompts");
        assert_eq!(h.hooks.len(), hooks, "{row}: hooks");
        assert_eq!(h.runs.len(), runs, "{row}: runs");
        if let Some(p) = h.prompts.first() {
            // R-CAP-3: "always" is offered for user_confirmation only.
            assert_eq!(p.may_remember, risk == Risk::UserConfirmation, "{row}");
            assert_eq!(p.reason, "打开部署文档供你核对", "{row}");
            assert_eq!(p.call.risk, risk, "{row}");
        }
        if status == "expired" && prompts > 0 {
            let pending = h.hooks.last().map_or(h.prompts[0].ticket, |x| x.ticket);
            assert_eq!(h.withdrawn, vec![pending], "{row}: the prompt goes away");
        }
        // The record is final and every call is audited with its digest (R-CAP-5, R-CAP-6).
        let record = h.store.calls().into_iter().next().unwrap();
        assert!(
            matches!(&record.state, CallState::Finished { result } if serde_json::to_value(result).unwrap() == *r),
            "{row}"
        );
        let audit = h.audit_of("c1");
        assert_eq!(audit.first().unwrap().kind, AuditKind::Received, "{row}");
        let answered = audit
            .iter()
            .find(|a| a.kind == AuditKind::Answered)
            .unwrap();
        assert_eq!(
            serde_json::to_value(answered.status).unwrap(),
            json!(status),
            "{row}"
        );
        assert_eq!(answered.arguments_digest, record.arguments_digest, "{row}");
    }
}

#[test]
fn r_inv_4_unknown_capability_is_unsupported() {
    let mut h = Harness::new(None);
    h.call("c1", "app.nope", json!({}), 60);
    let r = h.last_result();
    assert_eq!(r["status"], "unsupported");
    assert!(r.get("error").is_none(), "{r}");
    assert!(h.prompts.is_empty() && h.runs.is_empty());
}

#[test]
fn r_cap_3_system_permission_always_is_never_remembered() {
    let mut h = Harness::new(Some("agent-1"));
    h.register(open_url(Risk::SystemPermission));
    h.call("c1", "app.open_url", url_args(), 60);
    h.consent(ConsentAnswer::AllowAlways);
    h.hook(true);
    h.ran(Ok(json!({})));
    assert_eq!(h.store.grant_count(), 0);
    h.call("c2", "app.open_url", url_args(), 60);
    assert_eq!(h.prompts.len(), 2, "prompted every time");
    let decision = h.audit_of("c1");
    assert!(
        decision
            .iter()
            .any(|a| a.decision == Some(Decision::Allowed)
                && a.source == Some(DecisionSource::Prompt))
    );
    assert!(decision
        .iter()
        .any(|a| a.decision == Some(Decision::Allowed) && a.source == Some(DecisionSource::Hook)));
}

// ---- remembered and revoked grants (R-CAP-2, R-SES-1) ----

#[test]
fn r_cap_2_always_is_remembered_for_the_vouched_agent_and_revocation_holds_at_the_next_call() {
    let mut h = Harness::new(Some("agent-1"));
    h.register(open_url(Risk::UserConfirmation));
    h.call("c1", "app.open_url", url_args(), 60);
    h.consent(ConsentAnswer::AllowAlways);
    h.ran(Ok(json!({"opened": true})));
    let key = GrantKey {
        agent: agent("agent-1"),
        capability: name("app.open_url"),
        version: OpaqueVersion::try_from("1.0").unwrap(),
    };
    assert!(h.store.has_grant(&key), "scope: agent + name + version");
    assert!(h
        .audit_of("c1")
        .iter()
        .any(|a| a.kind == AuditKind::GrantRemembered));

    h.call("c2", "app.open_url", url_args(), 60);
    assert_eq!(h.prompts.len(), 1, "remembered: no second prompt");
    h.ran(Ok(json!({"opened": true})));
    assert_eq!(h.last_result()["status"], "completed");
    assert!(h
        .audit_of("c2")
        .iter()
        .any(|a| a.source == Some(DecisionSource::RememberedGrant)));

    // Another process revokes it (`lineup grants revoke`): the next decision asks again.
    assert!(h.store.revoke_grant(&key).unwrap());
    h.call("c3", "app.open_url", url_args(), 60);
    assert_eq!(h.prompts.len(), 2, "revoked: prompted again");
    let checks = h
        .log()
        .iter()
        .filter(|l| *l == "check grant app.open_url")
        .count();
    assert_eq!(checks, 3, "the store is asked at every decision");

    // A grant for another version does not cover this one.
    let mut h = Harness::new(Some("agent-1"));
    let old = GrantKey {
        version: OpaqueVersion::try_from("0.9").unwrap(),
        ..key
    };
    let grant: GrantRecord = serde_json::from_value(json!({
        "key": old, "granted_at": "2026-08-01T00:00:00Z", "conversation_id": CONV, "call_id": "old"
    }))
    .unwrap();
    h.store.put_grant(&grant).unwrap();
    h.register(open_url(Risk::UserConfirmation));
    h.call("c1", "app.open_url", url_args(), 60);
    assert_eq!(h.prompts.len(), 1, "a grant for 0.9 does not cover 1.0");
}

#[test]
fn r_ses_1_without_a_vouched_identity_always_lasts_the_conversation() {
    let mut h = Harness::new(None);
    h.register(open_url(Risk::UserConfirmation));
    h.call("c1", "app.open_url", url_args(), 60);
    h.consent(ConsentAnswer::AllowAlways);
    h.ran(Ok(json!({})));
    assert!(
        h.store.grant_count() == 0,
        "nothing durable without an identity"
    );
    h.call("c2", "app.open_url", url_args(), 60);
    assert_eq!(h.prompts.len(), 1, "remembered for the conversation");
    h.ran(Ok(json!({})));
    assert!(
        !h.log().iter().any(|l| l.starts_with("check grant")),
        "the store holds no grant of an unvouched conversation: {:?}",
        h.log()
    );
    assert!(h
        .s
        .forget_conversation_grant(&name("app.open_url"))
        .unwrap());
    h.call("c3", "app.open_url", url_args(), 60);
    assert_eq!(h.prompts.len(), 2, "forgotten: prompted again");
}
