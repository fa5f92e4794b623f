//! Exactly once (R-CAP-5), handler timeouts, the consent queue, session end.

use super::*;

// ---- exactly once (R-CAP-5) ----

#[test]
fn r_cap_5_a_repeated_key_while_pending_waits_and_gets_the_same_result() {
    let mut h = Harness::new(None);
    h.register(open_url(Risk::UserConfirmation));
    h.call("c1", "app.open_url", url_args(), 60);
    h.call(
        "c1",
        "app.open_url",
        json!({"url": "https://example.com/docs"}),
        60,
    );
    assert!(h.results().is_empty(), "both wait");
    assert_eq!(h.prompts.len(), 1, "one prompt");
    h.consent(ConsentAnswer::Allow);
    h.ran(Ok(json!({"opened": true})));
    let r = h.results();
    assert_eq!(r.len(), 2, "one answer per envelope");
    assert_eq!(r[0], r[1]);
    assert_eq!(h.runs.len(), 1, "ran once");
}

#[test]
fn r_cap_5_a_repeated_key_after_completion_gets_the_stored_result() {
    let mut h = Harness::new(Some("agent_hermes_main"));
    h.register(open_url(Risk::DisplayOnly));
    h.call(
        "c1",
        "app.open_url",
        json!({"url": "https://example.com/docs", "n": {"b": 1, "a": 2}}),
        60,
    );
    h.ran(Ok(json!({"opened": true})));
    // Same arguments in another key order: the same call.
    h.call(
        "c1",
        "app.open_url",
        json!({"n": {"a": 2, "b": 1}, "url": "https://example.com/docs"}),
        60,
    );
    let r = h.results();
    assert_eq!(r.len(), 2);
    assert_eq!(r[0], r[1]);
    assert_eq!(h.runs.len(), 1);
    // And across a restart, from the store, for the same vouched identity.
    let store = std::mem::take(&mut h.store);
    let mut h = Harness::restart(
        store,
        Some("agent_hermes_main"),
        CapabilityLimits::default(),
    );
    h.register(open_url(Risk::DisplayOnly));
    let args = json!({"url": "https://example.com/docs", "n": {"b": 1, "a": 2}});
    h.call("c1", "app.open_url", args.clone(), 60);
    assert_eq!(h.last_result()["status"], "completed");
    assert_eq!(h.last_result()["result"], json!({"opened": true}));
    assert!(h.runs.is_empty(), "never runs again");
    // R-SES-1: the result belongs to its identity. Another vouched identity's call of the same
    // key is a new call of its own (it runs, its own record); an unvouched session of another
    // process is answered `call_id_reused`, and nothing runs.
    let store = std::mem::take(&mut h.store);
    let mut h = Harness::restart(store, Some("mallory"), CapabilityLimits::default());
    h.register(open_url(Risk::DisplayOnly));
    h.call("c1", "app.open_url", args.clone(), 60);
    assert_eq!(h.runs.len(), 1, "a new call for another identity");
    h.ran(Ok(json!({"opened": "mallory's"})));
    assert_eq!(h.last_result()["result"], json!({"opened": "mallory's"}));
    let store = std::mem::take(&mut h.store);
    let mut h = Harness::restart(store, None, CapabilityLimits::default());
    h.register(open_url(Risk::DisplayOnly));
    h.call("c1", "app.open_url", args, 60);
    let r = h.last_result();
    assert_eq!(r["status"], "failed", "{r}");
    assert_eq!(r["error"]["code"], "call_id_reused", "{r}");
    assert!(r.get("result").is_none(), "no one else's result: {r}");
    assert!(h.runs.is_empty(), "never runs");
}

#[test]
fn r_cap_5_a_reused_key_with_other_arguments_or_capability_fails() {
    let mut h = Harness::new(None);
    h.register(open_url(Risk::DisplayOnly));
    h.register(plain("clipboard.write", "1.0"));
    h.call("c1", "app.open_url", url_args(), 60);
    // While pending…
    h.call(
        "c1",
        "app.open_url",
        json!({"url": "https://example.com/other"}),
        60,
    );
    // …and after completion, with another capability.
    h.ran(Ok(json!({})));
    h.call("c1", "clipboard.write", json!({}), 60);
    let r = h.results();
    assert_eq!(r.len(), 3, "{r:?}");
    for reused in [&r[0], &r[2]] {
        assert_eq!(reused["status"], "failed", "{reused}");
        assert_eq!(reused["error"]["code"], "call_id_reused");
        assert!(reused["message"]
            .as_str()
            .unwrap()
            .contains("call_id reused"));
    }
    assert_eq!(r[1]["status"], "completed");
    assert_eq!(h.runs.len(), 1);
}

#[test]
fn r_cap_5_restart_recovery_cancels_what_never_ran_and_fails_what_was_running() {
    let mut h = Harness::new(Some("agent_hermes_main"));
    h.register(open_url(Risk::UserConfirmation));
    h.register(plain("app.show", "1"));
    h.call("waiting", "app.open_url", url_args(), 600); // awaiting consent
    h.call("running", "app.show", json!({}), 600); // running
    let mut received = record(&h, "waiting");
    received.key.call_id = "received".try_into().unwrap();
    received.state = CallState::Received;
    h.store.put_call(&received).unwrap();
    assert_eq!(record(&h, "waiting").state, CallState::AwaitingConsent);
    assert_eq!(record(&h, "running").state, CallState::Running);

    // The host dies here. A new one starts on the same store, for the same agent.
    let store = std::mem::take(&mut h.store);
    let mut h = Harness::restart(
        store,
        Some("agent_hermes_main"),
        CapabilityLimits::default(),
    );
    h.register(open_url(Risk::UserConfirmation));
    h.register(plain("app.show", "1"));
    assert!(
        h.store.unfinished_calls().unwrap().is_empty(),
        "every record finished"
    );
    h.call("waiting", "app.open_url", url_args(), 600);
    h.call("received", "app.open_url", url_args(), 600);
    h.call("running", "app.show", json!({}), 600);
    let r = h.results();
    assert_eq!(r[0]["status"], "cancelled", "{}", r[0]);
    assert_eq!(r[1]["status"], "cancelled", "{}", r[1]);
    assert_eq!(r[2]["status"], "failed", "{}", r[2]);
    assert_eq!(r[2]["error"]["code"], "outcome_unknown");
    assert!(r[2]["message"]
        .as_str()
        .unwrap()
        .contains("outcome is unknown"));
    assert!(
        h.runs.is_empty() && h.prompts.is_empty(),
        "nothing runs or prompts again"
    );
    assert_eq!(
        h.store
            .audit()
            .iter()
            .filter(|a| a.kind == AuditKind::Recovered)
            .count(),
        3
    );
}

#[test]
fn r_cap_5_an_unfinished_record_found_by_lookup_is_finished_the_same_way() {
    let mut h = Harness::new(None);
    h.register(plain("app.show", "1"));
    h.call("c1", "app.show", json!({}), 600);
    assert_eq!(record(&h, "c1").state, CallState::Running);
    let running = record(&h, "c1");
    // Not handed in at start (say, another host's record): found by the lookup instead.
    let mut h = Harness::new(None);
    h.store.put_call(&running).unwrap();
    h.register(plain("app.show", "1"));
    h.call("c1", "app.show", json!({}), 600);
    assert_eq!(h.last_result()["error"]["code"], "outcome_unknown");
    assert!(h.runs.is_empty());
    assert!(record(&h, "c1").state.is_finished());
}

#[test]
fn r_cap_5_the_running_record_is_kept_before_run() {
    let mut h = Harness::new(None);
    h.register(open_url(Risk::DisplayOnly));
    h.call("c1", "app.open_url", url_args(), 60);
    assert_eq!(h.runs.len(), 1);
    assert_eq!(record(&h, "c1").state, CallState::Running);
    let log = h.log();
    let kept = log.iter().position(|l| l == "write c1 running").unwrap();
    let run = log.iter().position(|l| l == "run c1").unwrap();
    assert!(kept < run, "kept, then run: {log:?}");
    // An answer of the wrong kind is the embedder's mistake.
    let ticket = h.runs[0].ticket;
    assert!(matches!(
        h.s.answered(ticket, Answer::Consent(ConsentAnswer::Allow)),
        Err(UsageError::WrongAnswer { .. })
    ));

    // A write that fails: not run, `failed` / `not_recorded`, naming the store's reason.
    h.fail_writes("running", 1);
    h.call("c2", "app.open_url", url_args(), 60);
    assert_eq!(h.writes("c2", "running"), 1);
    assert_eq!(h.runs.len(), 1);
    let r = h.last_result();
    assert_eq!(r["error"]["code"], "not_recorded", "{r}");
    assert!(
        r["message"]
            .as_str()
            .unwrap()
            .contains("database is locked"),
        "{r}"
    );
    assert!(record(&h, "c2").state.is_finished());
}

#[test]
fn handler_timeout_fails_the_call_and_a_late_result_is_discarded_and_audited() {
    let mut h = Harness::new(None);
    h.register(open_url(Risk::DisplayOnly));
    h.call("c1", "app.open_url", url_args(), 60);
    assert_eq!(h.s.next_capability_wakeup(), Some(Duration::from_secs(60)));
    h.mono.0.set(Duration::from_secs(59));
    h.poll();
    assert!(h.results().is_empty());
    h.mono.0.set(Duration::from_secs(60));
    h.poll();
    assert_eq!(h.last_result()["status"], "failed");
    assert_eq!(h.last_result()["error"]["code"], "handler_timeout");
    h.ran(Ok(json!({"opened": true})));
    assert_eq!(h.results().len(), 1, "the late result is discarded");
    assert!(h
        .audit_of("c1")
        .iter()
        .any(|a| a.kind == AuditKind::LateResultDiscarded));
    assert!(record(&h, "c1").state.is_finished());
}

#[test]
fn expiry_during_a_prompt_answered_late_is_expired() {
    let mut h = Harness::new(None);
    h.register(open_url(Risk::UserConfirmation));
    h.call("c1", "app.open_url", url_args(), 30);
    assert_eq!(h.s.next_capability_wakeup(), Some(Duration::from_secs(30)));
    h.wall.0.set(T0 + 31);
    // The user clicks after the deadline but before the platform polled.
    h.consent(ConsentAnswer::Allow);
    assert_eq!(h.last_result()["status"], "expired");
    assert!(h.runs.is_empty());
    // An answer to a withdrawn prompt is ignored.
    let t = h.prompts[0].ticket;
    assert!(h
        .s
        .answered(t, Answer::Consent(ConsentAnswer::Allow))
        .unwrap()
        .is_empty());
}

#[test]
fn at_most_four_calls_wait_for_consent_then_failed() {
    let mut h = Harness::new(None);
    h.register(open_url(Risk::UserConfirmation));
    h.register(plain("app.show", "1"));
    for i in 0..5 {
        h.call(&format!("c{i}"), "app.open_url", url_args(), 60);
    }
    assert_eq!(h.prompts.len(), 4);
    let r = h.last_result();
    assert_eq!(r["call_id"], "c4");
    assert_eq!(r["status"], "failed");
    assert_eq!(r["error"]["code"], "too_many_calls");
    assert_eq!(r["error"]["limit"], 4);
    // display_only does not wait for consent.
    h.call("c5", "app.show", json!({}), 60);
    assert_eq!(h.runs.len(), 1);
    // One answered: room again.
    h.consent(ConsentAnswer::Deny);
    h.call("c6", "app.open_url", url_args(), 60);
    assert_eq!(h.prompts.len(), 5);
}

#[test]
fn r_ses_1_session_end_cancels_waiting_calls_and_withdraws_their_prompts() {
    let mut h = Harness::new(None);
    h.register(open_url(Risk::UserConfirmation));
    h.call("c1", "app.open_url", url_args(), 60);
    let sent_before = h.sent.len();
    let fx = h.s.close_all();
    h.drive(fx);
    assert_eq!(h.withdrawn, vec![h.prompts[0].ticket]);
    assert_eq!(
        h.sent.len(),
        sent_before,
        "the agent is gone: nothing is sent"
    );
    let r = record(&h, "c1");
    assert!(
        matches!(&r.state, CallState::Finished { result } if result.status == lineup_host_core::Status::Cancelled)
    );
}

#[test]
fn capabilities_must_be_enabled_once() {
    let config = SessionConfig::new(PartyId::try_from("desktop").unwrap(), "out");
    let mut s = Session::new(config, Box::new(ManualClock::default())).unwrap();
    assert!(matches!(
        s.register_capability(open_url(Risk::DisplayOnly)),
        Err(UsageError::Capabilities { .. })
    ));
    s.enable_capabilities(CapabilitySetup::new(
        RevisionEpoch(1),
        Box::new(ManualWall::default()),
    ))
    .unwrap();
    let again = s.enable_capabilities(CapabilitySetup::new(
        RevisionEpoch(2),
        Box::new(ManualWall::default()),
    ));
    assert!(matches!(again, Err(UsageError::Capabilities { .. })));
}
