//! Logs, deadlines held to the effect (R-CAP-4), and what the user sees run (original §5.3).

use super::*;

// ---- logs (#7 item 7) ----

/// Logs reach journald (#7 item 7): `Debug` of every effect, prompt, run and record of a call
/// prints the agent's reason, its arguments, the capability's result and a message quoting
/// invalid arguments as a length and a digest, never in any form (raw, escaped, as a byte list,
/// hex, base64).
#[test]
fn debug_never_prints_a_calls_reason_arguments_result_or_message() {
    const SECRET: &str = "zQ7\"secret-call-Ω";
    let mut h = Harness::new(None);
    h.register(open_url(Risk::UserConfirmation));
    let url = format!("https://example.com/?s={SECRET}");
    h.call_because("c1", "app.open_url", json!({ "url": url }), 60, SECRET);
    h.consent(ConsentAnswer::Allow);
    h.ran(Ok(json!({ "s": SECRET })));
    // Invalid arguments: the validator's sentence quotes the value.
    let bad = format!("ftp://{SECRET}");
    h.call_because("c2", "app.open_url", json!({ "url": bad }), 60, SECRET);
    // Positive control: the secret reached the prompt, the run, the result and the message.
    assert_eq!(h.prompts[0].reason, SECRET);
    assert!(h.runs[0].arguments.to_json().contains("secret-call"));
    let results = h.results();
    assert!(results[0]["result"]["s"] == SECRET, "{}", results[0]);
    let message = results[1]["message"].as_str().unwrap();
    assert!(message.contains("secret-call"), "{message}");
    let mut shown: Vec<String> = Vec::new();
    for effect in &h.trace {
        shown.push(format!("{effect:?}"));
        shown.push(format!("{effect:#?}"));
    }
    shown.extend(h.prompts.iter().map(|p| format!("{p:?}")));
    shown.extend(h.runs.iter().map(|r| format!("{r:?}")));
    shown.extend(h.store.calls().iter().map(|r| format!("{r:?}")));
    for text in &shown {
        assert_eq!(
            lineup_host_core::leaked_form(text, SECRET),
            None,
            "Debug printed the call's data: {text}"
        );
    }
    // What is shown instead: the length and a digest.
    let prompt = format!("{:?}", h.prompts[0]);
    let reason = format!("reason: Fingerprint {{ bytes: {}, sha256: ", SECRET.len());
    assert!(prompt.contains(&reason), "{prompt}");
    let refused = format!("{:?}", record(&h, "c2"));
    assert!(
        refused.contains("message: Some(Fingerprint { bytes: "),
        "{refused}"
    );
}

#[test]
fn r_cap_4_a_link_that_breaks_the_link_rule_is_a_policy_refusal_in_every_grant_state() {
    let link_cap = || {
        cap(
            "app.open_url",
            "1.0",
            Risk::UserConfirmation,
            json!({"type":"object","required":["url"],"properties":{"url":{"type":"string"}}}),
        )
        .with_argument_rule(ArgumentRule::link(
            "url",
            &lineup_host_core::Limits::default(),
        ))
    };
    let refused = [
        "javascript:alert(1)",
        "file:///etc/passwd",
        "data:text/html,x",
        "https://bank.example@evil.example/",
        "not a url",
    ];
    let mut h = Harness::new(Some("agent_hermes_main"));
    h.register(link_cap());
    let check = |h: &Harness, call_id: &str, prompts: usize| {
        let r = h.last_result();
        assert_eq!(r["call_id"], call_id);
        assert_eq!(r["status"], "failed", "{r}");
        assert_eq!(r["error"]["code"], "invalid_arguments", "{r}");
        assert_eq!(r["error"]["field"], "payload.arguments/url", "{r}");
        assert!(
            r["message"]
                .as_str()
                .unwrap()
                .contains("no prompt was shown"),
            "{r}"
        );
        assert_eq!(
            h.prompts.len(),
            prompts,
            "no prompt was shown for {call_id}"
        );
        assert!(h.runs.is_empty(), "nothing ran");
        // Audited as the host's policy, not as the user's answer (R-CAP-6).
        let decided: Vec<_> = h
            .audit_of(call_id)
            .iter()
            .filter_map(|a| a.decision.map(|d| (d, a.source)))
            .collect();
        assert_eq!(
            decided,
            [(Decision::Denied, Some(DecisionSource::Policy))],
            "{call_id}"
        );
    };
    for (i, url) in refused.iter().enumerate() {
        let id = format!("before{i}");
        h.call(&id, "app.open_url", json!({ "url": url }), 60);
        check(&h, &id, 0);
    }
    // Positive control: a good link is asked about; "always" remembers it.
    h.call("good", "app.open_url", url_args(), 60);
    assert_eq!(h.prompts.len(), 1, "the good link is asked about");
    h.consent(ConsentAnswer::AllowAlways);
    h.ran(Ok(json!({"opened": true})));
    assert_eq!(h.last_result()["status"], "completed");
    // With the grant remembered, refused links are still the same policy refusal.
    for (i, url) in refused.iter().enumerate() {
        let id = format!("after{i}");
        h.call(&id, "app.open_url", json!({ "url": url }), 60);
        let runs = h.runs.len();
        check_after(&h, &id, runs);
    }

    fn check_after(h: &Harness, call_id: &str, runs: usize) {
        let r = h.last_result();
        assert_eq!(r["call_id"], call_id);
        assert_eq!(r["status"], "failed", "{r}");
        assert_eq!(r["error"]["code"], "invalid_arguments", "{r}");
        assert_eq!(h.prompts.len(), 1, "no new prompt for {call_id}");
        assert_eq!(h.runs.len(), runs);
    }
}

// ---- deadlines hold to the effect (R-CAP-4) ----

#[test]
fn r_cap_4_an_expires_at_past_max_call_lifetime_is_brought_forward_and_named() {
    let mut h = Harness::new(None);
    h.register(open_url(Risk::UserConfirmation));
    // A day ahead: the prompt gets ten minutes (the default max_call_lifetime), no more.
    h.call("c1", "app.open_url", url_args(), 86_400);
    assert_eq!(h.prompts[0].expires_at.unix_seconds(), T0 + 600);
    assert_eq!(h.s.next_capability_wakeup(), Some(Duration::from_secs(600)));
    h.wall.0.set(T0 + 599);
    h.poll();
    assert!(h.results().is_empty(), "still deciding before the cap");
    h.wall.0.set(T0 + 600);
    h.poll();
    let result = h.last_result();
    assert_eq!(result["status"], "expired");
    let message = result["message"].as_str().unwrap();
    assert!(
        message.contains("max_call_lifetime (600 s)"),
        "the answer names the limit: {message}"
    );
    assert_eq!(
        h.withdrawn,
        [h.prompts[0].ticket],
        "the prompt is taken away"
    );
    assert!(h.runs.is_empty());
    // Positive control: a deadline within the cap is kept as the agent gave it.
    h.call("c2", "app.open_url", url_args(), 30);
    assert_eq!(h.prompts[1].expires_at.unix_seconds(), T0 + 630);
}

#[test]
fn r_cap_4_max_call_lifetime_is_a_limit_the_embedder_sets() {
    let mono = ManualClock::default();
    let wall = ManualWall::default();
    let mut config = SessionConfig::new(PartyId::try_from("desktop").unwrap(), "out");
    config.limits.max_call_lifetime = Duration::ZERO;
    assert!(
        matches!(
            Session::new(config.clone(), Box::new(mono.clone())),
            Err(UsageError::InvalidLimit {
                name: "max_call_lifetime",
                ..
            })
        ),
        "zero is refused"
    );
    config.limits.max_call_lifetime = Duration::from_secs(5);
    config.conversation_id = Some(ConversationId::try_from(CONV).unwrap());
    let mut s = Session::new(config, Box::new(mono)).unwrap();
    s.enable_capabilities(CapabilitySetup::new(RevisionEpoch(1), Box::new(wall)))
        .unwrap();
    s.register_capability(open_url(Risk::UserConfirmation))
        .unwrap();
    let bytes = serde_json::to_vec(&json!({
        "v": 1, "id": "m1", "type": "lineup.v1.app.call", "conversation_id": CONV,
        "sender": {"kind": "agent", "id": "agent_hermes_main"},
        "payload": {"call_id": "c1", "capability": "app.open_url", "reason": "r",
                    "expires_at": Timestamp::from_unix_seconds(T0 + 3600).unwrap(),
                    "arguments": url_args()}
    }))
    .unwrap();
    let fx = s.handle_inbound(&bytes);
    let prompt = fx.iter().find_map(|e| match e {
        Effect::Capability(CapabilityEffect::Prompt(p)) => Some(p.expires_at),
        _ => None,
    });
    assert_eq!(prompt.map(|t| t.unix_seconds()), Some(T0 + 5));
}

/// A capability that decides with a dialog of its own (like `artifact.save`'s save dialog).
fn save_like() -> Capability {
    cap(
        "artifact.save",
        "1.0",
        Risk::UserConfirmation,
        json!({"type": "object"}),
    )
    .with_hook()
}

#[test]
fn r_cap_4_a_capability_with_its_own_dialog_asks_it_after_consent_and_a_remembered_grant() {
    let mut h = Harness::new(Some("agent-1"));
    h.register(save_like());
    h.call("c1", "artifact.save", json!({}), 60);
    h.consent(ConsentAnswer::AllowAlways);
    assert_eq!(h.hooks.len(), 1, "the dialog is part of the decision");
    assert_eq!(h.hooks[0].expires_at.unix_seconds(), T0 + 60);
    assert!(h.runs.is_empty(), "nothing runs before the dialog answers");
    h.hook(true);
    h.ran(Ok(json!({"saved": true})));
    assert_eq!(h.last_result()["status"], "completed");
    // With the grant remembered, no prompt, but the dialog still decides.
    h.call("c2", "artifact.save", json!({}), 60);
    assert_eq!(h.prompts.len(), 1);
    assert_eq!(h.hooks.len(), 2);
    // Positive control: without `with_hook`, a user_confirmation call runs after consent.
    h.register(open_url(Risk::UserConfirmation));
    h.call("c3", "app.open_url", url_args(), 60);
    h.consent(ConsentAnswer::Allow);
    assert_eq!(h.hooks.len(), 2);
    assert_eq!(h.runs.len(), 2);
}

#[test]
fn r_cap_4_a_dismissed_dialog_is_cancelled_and_a_dialog_past_the_deadline_is_expired() {
    let mut h = Harness::new(None);
    h.register(save_like());
    h.call("c1", "artifact.save", json!({}), 60);
    h.consent(ConsentAnswer::Allow);
    let t = h.hooks[0].ticket;
    h.answer(t, Answer::Hook(HookAnswer::Dismissed));
    let cancelled = h.last_result();
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    assert!(h.runs.is_empty());
    assert!(
        h.audit_of("c1")
            .iter()
            .any(|a| a.decision == Some(Decision::Cancelled)
                && a.source == Some(DecisionSource::Hook))
    );

    h.call("c2", "artifact.save", json!({}), 60);
    h.consent(ConsentAnswer::Allow);
    let t = h.hooks[1].ticket;
    h.wall.0.set(T0 + 60);
    h.poll();
    assert_eq!(h.last_result()["status"], "expired");
    assert!(h.withdrawn.contains(&t), "the dialog is withdrawn");
    // The user presses Save after the deadline: ignored, nothing runs.
    assert!(h
        .s
        .answered(t, Answer::Hook(HookAnswer::Allow))
        .unwrap()
        .is_empty());
    assert!(h.runs.is_empty());
}

#[test]
fn r_cap_4_the_effect_starts_only_before_the_deadline() {
    let mut h = Harness::new(None);
    h.register(open_url(Risk::UserConfirmation));
    h.call("c1", "app.open_url", url_args(), 30);
    // The `running` record's write returns only after the deadline (a slow disk).
    h.rig.slow_running.set(Some(T0 + 30));
    h.consent(ConsentAnswer::Allow);
    assert_eq!(h.writes("c1", "running"), 1);
    assert_eq!(h.last_result()["status"], "expired");
    assert!(h.runs.is_empty(), "no handler starts after the deadline");
    assert_eq!(
        record(&h, "c1").state,
        CallState::Finished {
            result: serde_json::from_value(h.last_result()).unwrap()
        }
    );
    // Positive control: written in time, it runs.
    h.rig.slow_running.set(None);
    h.call("c2", "app.open_url", url_args(), 30);
    h.consent(ConsentAnswer::Allow);
    assert_eq!(h.runs.len(), 1);
}

// ---- the user sees what runs (original §5.3) ----

#[test]
fn every_call_that_runs_is_in_the_activity_list_with_its_grant_and_unseen_ones_ask_for_a_notice() {
    let mut h = Harness::new(Some("agent-1"));
    h.register(plain("app.show", "1"));
    h.register(open_url(Risk::UserConfirmation));
    // display_only: nothing is shown before it runs.
    h.call_because("c1", "app.show", json!({}), 60, "show the totals");
    // Prompted and allowed "always": the user saw it.
    h.call("c2", "app.open_url", url_args(), 60);
    h.consent(ConsentAnswer::AllowAlways);
    // Under the remembered grant: nothing is shown.
    h.call("c3", "app.open_url", url_args(), 60);
    // Refused by the user: it never ran, so it is not activity.
    h.register(cap(
        "device.camera",
        "1",
        Risk::SystemPermission,
        json!({"type": "object"}),
    ));
    h.call("c4", "device.camera", json!({}), 60);
    h.consent(ConsentAnswer::Deny);

    let seen: Vec<(String, DecisionSource, bool)> = h
        .activities
        .iter()
        .map(|a| (a.key.call_id.to_string(), a.allowed_by, a.unseen()))
        .collect();
    assert_eq!(
        seen,
        [
            ("c1".to_owned(), DecisionSource::Policy, true),
            ("c2".to_owned(), DecisionSource::Prompt, false),
            ("c3".to_owned(), DecisionSource::RememberedGrant, true),
        ]
    );
    let first = &h.activities[0];
    assert_eq!(first.reason, "show the totals");
    assert_eq!(first.agent, Some(agent("agent-1")));
    assert_eq!(first.at.unix_seconds(), T0);
    // The session keeps the list; the effect came before the handler ran.
    let kept: Vec<Activity> = h.s.capabilities().unwrap().activity().cloned().collect();
    assert_eq!(kept, h.activities);
    let line = first.to_string();
    assert!(
        line.contains("app.show 1 ran for agent agent-1")
            && line.contains("allowed by display_only")
            && !line.contains("totals"),
        "a log line never carries the reason: {line}"
    );
    assert!(!format!("{first:?}").contains("totals"));
}

/// A prompt the host cannot show (none configured, or the capability's owner could not word the
/// call) is the host's decision, never the user's: `failed`, audited as policy (R-CAP-4).
#[test]
fn r_cap_4_an_unavailable_prompt_fails_the_call_as_the_hosts_decision() {
    let mut h = Harness::new(None);
    h.register(open_url(Risk::UserConfirmation));
    h.call("c1", "app.open_url", url_args(), 60);
    h.consent(ConsentAnswer::Unavailable);
    let failed = h.last_result();
    assert_eq!(failed["status"], "failed", "{failed}");
    assert!(h.runs.is_empty());
    let audit = h.audit_of("c1");
    assert!(
        audit
            .iter()
            .any(|a| a.decision == Some(Decision::Cancelled)
                && a.source == Some(DecisionSource::Policy)),
        "{audit:?}"
    );
    assert!(
        !audit
            .iter()
            .any(|a| a.source == Some(DecisionSource::Prompt)),
        "not the user's: {audit:?}"
    );
}

/// R-CAP-5: a call that ran is answered only once its final record is kept, so that an answer
/// the agent got is never lost to a restart: a failed write (a locked database) is tried again
/// after 500 ms, then after twice as long, a repeat of the key waits for the same answer, and
/// the handler runs once.
#[test]
fn r_cap_5_a_call_that_ran_is_answered_only_once_its_final_record_is_kept() {
    let mut h = Harness::new(None);
    h.register(plain("app.show", "1"));
    h.call("c1", "app.show", json!({}), 60);
    assert_eq!(h.runs.len(), 1);
    h.fail_writes("finished", 1);
    h.ran(Ok(json!({"shown": true})));
    assert_eq!(
        h.writes("c1", "finished"),
        1,
        "the final record is written before the answer"
    );
    assert!(
        h.results().is_empty(),
        "nothing is answered before it is kept"
    );
    // A repeat of its key while the record is not kept waits for the same answer.
    h.call("c1", "app.show", json!({}), 60);
    assert!(h.results().is_empty());
    // Written again after the retry delay, not before; the store is still locked.
    h.fail_writes("finished", 1);
    h.mono.0.set(Duration::from_millis(400));
    h.poll();
    assert_eq!(h.writes("c1", "finished"), 1);
    h.mono.0.set(Duration::from_millis(600));
    h.poll();
    assert_eq!(h.writes("c1", "finished"), 2, "written again");
    assert!(
        h.results().is_empty(),
        "no answer while the record is not kept"
    );
    // A second failure waits twice as long (1 s).
    h.mono.0.set(Duration::from_millis(1500));
    h.poll();
    assert_eq!(h.writes("c1", "finished"), 2, "not before 1 s");
    h.mono.0.set(Duration::from_millis(1700));
    h.poll();
    assert_eq!(h.writes("c1", "finished"), 3, "written again after 1 s");
    let log = h.log();
    let kept = log.iter().position(|l| l == "write c1 finished").unwrap();
    let answered = log.iter().position(|l| l == "answer c1").unwrap();
    assert!(kept < answered, "kept, then answered: {log:?}");
    let results = h.results();
    assert_eq!(results.len(), 2, "the call and its repeat: {results:?}");
    assert!(
        results
            .iter()
            .all(|r| r["status"] == "completed" && r["result"] == json!({"shown": true})),
        "{results:?}"
    );
    assert_eq!(h.runs.len(), 1, "run once");
    h.mono.0.set(Duration::from_secs(5));
    h.poll();
    assert_eq!(h.results().len(), 2, "answered once each");
}
