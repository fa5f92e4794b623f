//! Table-driven tests of the App Capability kernel (issue 8 items 2–5, 7): a script of `app.call`
//! envelopes and platform answers, and the answers, prompts, runs, records and audit it must
//! produce. A small in-memory `CapabilityStore` executes the store effects, as the SQLite crate
//! will. Each test is named after the rule it guards.
#![allow(clippy::unwrap_used)]

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use lineup_host_core::{
    Activity, AgentIdentity, Answer, ArgumentRule, AuditKind, AuditRecord, CallRecord, CallState,
    Capability, CapabilityEffect, CapabilityLimits, CapabilityName, CapabilitySetup,
    CapabilityStore, Clock, ConsentAnswer, ConsentRequest, ConversationId, Decision,
    DecisionSource, Effect, GrantKey, GrantRecord, HandlerError, HookAnswer, HookRequest,
    JsonObject, MemoryStore, Message, OpaqueVersion, PartyId, RevisionEpoch, Risk, RunRequest,
    Session, SessionConfig, Ticket, Timestamp, UsageError, WallClock,
};
use serde_json::{json, Value};

// ---- clocks ----

#[derive(Clone, Default)]
struct ManualClock(Rc<Cell<Duration>>);

impl Clock for ManualClock {
    fn monotonic(&self) -> Duration {
        self.0.get()
    }
}

/// Wall clock in seconds since the epoch, starting at 2026-08-02T12:00:00Z.
#[derive(Clone)]
struct ManualWall(Rc<Cell<i64>>);

const T0: i64 = 1_785_672_000;

impl Default for ManualWall {
    fn default() -> Self {
        Self(Rc::new(Cell::new(T0)))
    }
}

impl WallClock for ManualWall {
    fn now(&self) -> Timestamp {
        Timestamp::from_unix_seconds(self.0.get()).unwrap()
    }
}

// ---- an in-memory store, executing the kernel's store effects as a real one would ----

// ---- the harness: a session, its clocks, the store, and what reached the platform ----

struct Harness {
    s: Session,
    mono: ManualClock,
    wall: ManualWall,
    store: MemoryStore,
    /// Acknowledge `running` records at once (turn off to watch persist-before-run).
    auto_ack: bool,
    /// Every capability effect, in order, and every message sent.
    trace: Vec<Effect>,
    sent: Vec<Value>,
    prompts: Vec<ConsentRequest>,
    hooks: Vec<HookRequest>,
    runs: Vec<RunRequest>,
    activities: Vec<Activity>,
    withdrawn: Vec<Ticket>,
    acks: Vec<Ticket>,
}

const CONV: &str = "conv_01";

fn name(s: &str) -> CapabilityName {
    CapabilityName::try_from(s).unwrap()
}

fn agent(s: &str) -> AgentIdentity {
    AgentIdentity::try_from(s).unwrap()
}

fn cap(n: &str, version: &str, risk: Risk, schema: Value) -> Capability {
    Capability::new(
        name(n),
        OpaqueVersion::try_from(version).unwrap(),
        risk,
        JsonObject::try_from(schema).unwrap(),
    )
    .unwrap()
}

/// A `display_only` capability taking any object.
fn plain(n: &str, version: &str) -> Capability {
    cap(n, version, Risk::DisplayOnly, json!({"type": "object"}))
}

fn open_url(risk: Risk) -> Capability {
    cap(
        "app.open_url",
        "1.0",
        risk,
        json!({"type":"object","required":["url"],
               "properties":{"url":{"type":"string","pattern":"^https?://"}}}),
    )
}

impl Harness {
    fn new(who: Option<&str>) -> Self {
        Self::restart(MemoryStore::default(), who, CapabilityLimits::default())
    }

    fn restart(mut store: MemoryStore, who: Option<&str>, limits: CapabilityLimits) -> Self {
        let mono = ManualClock::default();
        let wall = ManualWall::default();
        let mut config = SessionConfig::new(PartyId::try_from("desktop").unwrap(), "out");
        config.conversation_id = Some(ConversationId::try_from(CONV).unwrap());
        let mut s = Session::new(config, Box::new(mono.clone())).unwrap();
        let mut setup =
            CapabilitySetup::new(store.next_revision_epoch().unwrap(), Box::new(wall.clone()));
        setup.agent = who.map(agent);
        setup.unfinished = store.unfinished_calls().unwrap();
        setup.limits = limits;
        let fx = s.enable_capabilities(setup).unwrap();
        let mut h = Self {
            s,
            mono,
            wall,
            store,
            auto_ack: true,
            trace: Vec::new(),
            sent: Vec::new(),
            prompts: Vec::new(),
            hooks: Vec::new(),
            runs: Vec::new(),
            activities: Vec::new(),
            withdrawn: Vec::new(),
            acks: Vec::new(),
        };
        h.drive(fx);
        h
    }

    /// Executes effects like a platform: store work at once (answering tickets), prompts, hooks
    /// and runs collected for the test to answer.
    fn drive(&mut self, effects: Vec<Effect>) {
        let mut queue: std::collections::VecDeque<Effect> = effects.into();
        while let Some(effect) = queue.pop_front() {
            let mut answer = None;
            match &effect {
                Effect::Send(m) => self.sent.push(serde_json::from_str(&m.to_json()).unwrap()),
                Effect::Capability(c) => match c {
                    CapabilityEffect::LookupCall { ticket, key, owner } => {
                        let record = self.store.call(owner, key).unwrap().map(Box::new);
                        answer = Some((*ticket, Answer::Call(record)));
                    }
                    CapabilityEffect::PersistCall { ack, record } => {
                        self.store.put_call(record).unwrap();
                        if let Some(t) = ack {
                            if self.auto_ack {
                                answer = Some((*t, Answer::Persisted));
                            } else {
                                self.acks.push(*t);
                            }
                        }
                    }
                    CapabilityEffect::CheckGrant { ticket, key } => {
                        let found = self.store.grant(key).unwrap().is_some();
                        answer = Some((*ticket, Answer::Grant(found)));
                    }
                    CapabilityEffect::RememberGrant(g) => self.store.put_grant(g).unwrap(),
                    CapabilityEffect::Audit(a) => self.store.append_audit(a).unwrap(),
                    CapabilityEffect::Prompt(p) => self.prompts.push(p.clone()),
                    CapabilityEffect::Hook(h) => self.hooks.push(h.clone()),
                    CapabilityEffect::Run(r) => self.runs.push(r.clone()),
                    CapabilityEffect::Activity(a) => self.activities.push(a.clone()),
                    CapabilityEffect::Withdraw(t) => self.withdrawn.push(*t),
                    CapabilityEffect::RememberOffered {
                        agent,
                        capabilities,
                    } => self.store.remember_offered(agent, capabilities).unwrap(),
                },
                other => panic!("unexpected {other:?}"),
            }
            self.trace.push(effect);
            if let Some((ticket, answer)) = answer {
                let more = self.s.capability_answered(ticket, answer).unwrap();
                queue.extend(more);
            }
        }
    }

    fn answer(&mut self, ticket: Ticket, answer: Answer) {
        let fx = self.s.capability_answered(ticket, answer).unwrap();
        self.drive(fx);
    }

    fn register(&mut self, c: Capability) {
        let fx = self.s.register_capability(c).unwrap();
        self.drive(fx);
    }

    /// Sends an `app.call` that expires `expires_in` seconds from now.
    fn call(&mut self, call_id: &str, capability: &str, arguments: Value, expires_in: i64) {
        self.call_because(
            call_id,
            capability,
            arguments,
            expires_in,
            "打开部署文档供你核对",
        );
    }

    /// Sends an `app.call` with this `reason`.
    fn call_because(
        &mut self,
        call_id: &str,
        capability: &str,
        arguments: Value,
        expires_in: i64,
        reason: &str,
    ) {
        let expires = Timestamp::from_unix_seconds(self.wall.0.get() + expires_in).unwrap();
        let bytes = serde_json::to_vec(&json!({
            "v": 1, "id": format!("m-{call_id}-{}", self.sent.len()), "type": "lineup.v1.app.call",
            "conversation_id": CONV, "sender": {"kind": "agent", "id": "agent_hermes_main"},
            "payload": {"call_id": call_id, "capability": capability, "reason": reason,
                        "expires_at": expires, "arguments": arguments}
        }))
        .unwrap();
        let fx = self.s.handle_inbound(&bytes);
        self.drive(fx);
    }

    fn consent(&mut self, answer: ConsentAnswer) {
        let t = self.prompts.last().unwrap().ticket;
        self.answer(t, Answer::Consent(answer));
    }

    fn hook(&mut self, allow: bool) {
        let t = self.hooks.last().unwrap().ticket;
        self.answer(t, Answer::Hook(allow.into()));
    }

    fn ran(&mut self, outcome: Result<Value, &str>) {
        let t = self.runs.last().unwrap().ticket;
        let outcome = outcome
            .map(|v| JsonObject::try_from(v).unwrap())
            .map_err(HandlerError::new);
        self.answer(t, Answer::Ran(outcome));
    }

    fn poll(&mut self) {
        let fx = self.s.poll_capabilities();
        self.drive(fx);
    }

    /// The `app.result` payloads sent, in order.
    fn results(&self) -> Vec<Value> {
        self.sent
            .iter()
            .filter(|m| m["type"] == "lineup.v1.app.result")
            .map(|m| m["payload"].clone())
            .collect()
    }

    fn last_result(&self) -> Value {
        self.results().last().cloned().expect("an app.result")
    }

    fn inventories(&self) -> Vec<Value> {
        self.sent
            .iter()
            .filter(|m| m["type"] == "lineup.v1.client.inventory")
            .map(|m| m["payload"].clone())
            .collect()
    }

    fn audit_of(&self, call_id: &str) -> Vec<&AuditRecord> {
        self.store
            .audit()
            .iter()
            .filter(|a| a.call.call_id.as_str() == call_id)
            .collect()
    }
}

fn url_args() -> Value {
    json!({"url": "https://example.com/docs"})
}

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
        let record = h.store.calls().next().unwrap();
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
    assert!(!h
        .trace
        .iter()
        .any(|e| matches!(e, Effect::Capability(CapabilityEffect::CheckGrant { .. }))));
    assert!(h
        .s
        .forget_conversation_grant(&name("app.open_url"))
        .unwrap());
    h.call("c3", "app.open_url", url_args(), 60);
    assert_eq!(h.prompts.len(), 2, "forgotten: prompted again");
}

// ---- hidden and revoked capabilities (R-INV-4) ----

fn without_call_id(mut v: Value) -> Value {
    v["call_id"] = Value::Null;
    v
}

#[test]
fn r_inv_4_hidden_and_unknown_get_identical_answers() {
    // Session A: app.secret is registered but hidden from this agent. Session B: it does not
    // exist. The same call gets byte-identical answers.
    let mut hidden = Harness::new(Some("agent-1"));
    let fx = hidden
        .s
        .set_capability_visible(&agent("agent-1"), &name("app.secret"), false)
        .unwrap();
    assert!(
        fx.is_empty(),
        "hiding what was never offered changes nothing: {fx:?}"
    );
    hidden.register(plain("app.secret", "1"));
    assert_eq!(
        hidden.inventories().len(),
        1,
        "a hidden capability sends no new inventory"
    );
    assert_eq!(hidden.inventories()[0]["capabilities"], json!([]));
    let mut unknown = Harness::new(Some("agent-1"));
    hidden.call("c1", "app.secret", json!({"x": 1}), 60);
    unknown.call("c1", "app.secret", json!({"x": 1}), 60);
    let a = serde_json::to_string(&hidden.last_result()).unwrap();
    let b = serde_json::to_string(&unknown.last_result()).unwrap();
    assert_eq!(a, b, "a hidden capability is never revealed");
    assert_eq!(hidden.last_result()["status"], "unsupported");
    assert!(hidden.runs.is_empty());
    // Apart from call_id, another unknown call's answer has the same shape.
    unknown.call("c2", "app.secret", json!({}), 60);
    assert_eq!(
        without_call_id(unknown.results()[0].clone()),
        without_call_id(unknown.results()[1].clone())
    );
}

#[test]
fn r_inv_4_once_offered_then_unregistered_or_hidden_is_revoked() {
    let mut h = Harness::new(Some("agent-1"));
    h.register(open_url(Risk::DisplayOnly));
    h.register(plain("clipboard.write", "1.0"));
    let fx = h.s.unregister_capability(&name("app.open_url")).unwrap();
    h.drive(fx);
    let fx =
        h.s.set_capability_visible(&agent("agent-1"), &name("clipboard.write"), false)
            .unwrap();
    h.drive(fx);
    h.call("c1", "app.open_url", url_args(), 60);
    h.call("c2", "clipboard.write", json!({}), 60);
    // Each call is answered, once, and `revoked`: no answer at all must fail here too.
    let results = h.results();
    assert_eq!(results.len(), 2, "one answer per call: {results:?}");
    for (call_id, r) in ["c1", "c2"].into_iter().zip(&results) {
        assert_eq!(r["call_id"], call_id, "{r}");
        assert_eq!(r["status"], "unsupported", "{call_id}: {r}");
        assert_eq!(r["error"]["code"], "revoked", "{call_id}: {r}");
    }
    assert!(h.runs.is_empty(), "never falls back to running it");
    assert!(matches!(
        h.s.unregister_capability(&name("app.open_url")),
        Err(UsageError::CapabilityNotRegistered { .. })
    ));
}

// ---- the registry and the inventory (R-INV-1, R-INV-2, R-CAP-1) ----

#[test]
fn r_inv_2_revision_changes_on_every_change_and_is_never_reused() {
    let mut store = MemoryStore::default();
    let mut seen = Vec::new();
    for _restart in 0..2 {
        let mut h = Harness::restart(store, Some("agent-1"), CapabilityLimits::default());
        h.register(open_url(Risk::UserConfirmation));
        let fx = h.s.register_capability(open_url(Risk::DisplayOnly));
        assert!(
            matches!(fx, Err(UsageError::CapabilityRegistered { .. })),
            "registering a name twice is an error"
        );
        let fx =
            h.s.set_capability_visible(&agent("agent-1"), &name("app.open_url"), false)
                .unwrap();
        h.drive(fx);
        // Hiding from another agent does not affect this session: nothing is sent.
        let fx =
            h.s.set_capability_visible(&agent("agent-2"), &name("app.open_url"), false)
                .unwrap();
        assert!(fx.is_empty(), "{fx:?}");
        let fx =
            h.s.set_capability_visible(&agent("agent-1"), &name("app.open_url"), true)
                .unwrap();
        h.drive(fx);
        let fx = h.s.unregister_capability(&name("app.open_url")).unwrap();
        h.drive(fx);
        h.register(open_url(Risk::UserConfirmation));
        let inventories = h.inventories();
        assert_eq!(inventories.len(), 6, "start + 5 changes");
        // app.list follows each inventory as its capability-only projection (R-CAP-1).
        let lists: Vec<&Value> = h
            .sent
            .iter()
            .filter(|m| m["type"] == "lineup.v1.app.list")
            .collect();
        assert_eq!(lists.len(), 6);
        for (inv, list) in inventories.iter().zip(&lists) {
            assert_eq!(inv["capabilities"], list["payload"]["capabilities"]);
            assert_eq!(inv["standard_components"], json!([]));
            assert_eq!(inv["applications"], json!([]));
        }
        assert_eq!(
            inventories[1]["capabilities"],
            json!([{"name":"app.open_url","version":"1.0","risk":"user_confirmation",
                    "input_schema":{"type":"object","required":["url"],
                    "properties":{"url":{"type":"string","pattern":"^https?://"}}}}])
        );
        seen.extend(
            inventories
                .iter()
                .map(|i| i["revision"].as_str().unwrap().to_owned()),
        );
        store = std::mem::take(&mut h.store);
    }
    let mut unique = seen.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(
        unique.len(),
        seen.len(),
        "never reused, also across a restart: {seen:?}"
    );
}

#[test]
fn r_inv_1_inventory_comes_before_the_answer_to_the_establishing_envelope() {
    let mono = ManualClock::default();
    let config = SessionConfig::new(PartyId::try_from("desktop").unwrap(), "out");
    let mut s = Session::new(config, Box::new(mono)).unwrap();
    let fx = s
        .enable_capabilities(CapabilitySetup::new(
            RevisionEpoch(3),
            Box::new(ManualWall::default()),
        ))
        .unwrap();
    assert!(fx.is_empty(), "no conversation yet: nothing to send");
    // R-SES-1 (amended): a malformed envelope establishes nothing and gets no inventory:
    // no sender, a sender of another kind, an unreadable conversation.
    for malformed in [
        &br#"{"v":1,"id":"m0","type":"lineup.v1.ui.close","conversation_id":"conv_01","payload":{"instance_id":"nope"}}"#[..],
        br#"{"v":1,"id":"m0","type":"lineup.v1.ui.close","conversation_id":"conv_01","sender":{"kind":"client","id":"a"},"payload":{"instance_id":"nope"}}"#,
        br#"{"v":1,"id":"m0","type":"lineup.v1.ui.close","conversation_id":"","sender":{"kind":"agent","id":"a"},"payload":{"instance_id":"nope"}}"#,
        br#"{"v":2,"id":"m0","type":"lineup.v1.ui.close","conversation_id":"conv_01","sender":{"kind":"agent","id":"a"},"payload":{"instance_id":"nope"}}"#,
    ] {
        let fx = s.handle_inbound(malformed);
        assert!(
            fx.iter()
                .all(|e| !matches!(e, Effect::Send(Message::ClientInventory(_)))),
            "{fx:?}"
        );
        assert!(s.conversation_id().is_none(), "{fx:?}");
    }
    // A well-formed envelope whose payload is refused establishes the session: the inventory
    // and app.list come first, then the refusal.
    let bad = br#"{"v":1,"id":"m0","type":"lineup.v1.ui.close","conversation_id":"conv_01","sender":{"kind":"agent","id":"a"},"payload":{"instance_id":"nope"}}"#;
    let fx = s.handle_inbound(bad);
    let sent: Vec<&Message> = fx
        .iter()
        .filter_map(|e| match e {
            Effect::Send(m) => Some(m),
            _ => None,
        })
        .collect();
    assert!(
        matches!(sent[0], Message::ClientInventory(i) if i.payload.revision.as_str() == "rev-3-1"),
        "{fx:?}"
    );
    assert!(matches!(sent[1], Message::AppList(_)), "{fx:?}");
    assert!(matches!(sent[2], Message::ClientError(_)), "{fx:?}");
    assert_eq!(s.conversation_id().map(|c| c.as_str()), Some("conv_01"));
    // Established once: the next envelope gets no inventory again.
    let call = br#"{"v":1,"id":"m1","type":"lineup.v1.app.call","conversation_id":"conv_01","sender":{"kind":"agent","id":"a"},"payload":{"call_id":"c1","capability":"x.y","reason":"r","expires_at":"2099-01-01T00:00:00Z","arguments":{}}}"#;
    let fx = s.handle_inbound(call);
    assert!(
        fx.iter()
            .all(|e| !matches!(e, Effect::Send(Message::ClientInventory(_)))),
        "{fx:?}"
    );
}

#[test]
fn r_cap_2_a_schema_that_does_not_compile_is_refused_at_registration() {
    let rows = [
        ("wrong keyword type", json!({"type": 5})),
        (
            "remote $ref",
            json!({"$ref": "https://example.com/schema.json"}),
        ),
        ("file $ref", json!({"$ref": "file:///etc/passwd"})),
        (
            "bad pattern",
            json!({"type":"object","properties":{"a":{"pattern":"("}}}),
        ),
    ];
    for (row, schema) in rows {
        let err = Capability::new(
            name("app.bad"),
            OpaqueVersion::try_from("1").unwrap(),
            Risk::DisplayOnly,
            JsonObject::try_from(schema).unwrap(),
        )
        .unwrap_err();
        assert!(
            matches!(err, UsageError::InvalidInputSchema { .. }),
            "{row}: {err}"
        );
        assert!(
            err.to_string().contains("app.bad"),
            "{row}: names it: {err}"
        );
    }
    // A local $ref resolves.
    let ok = json!({"$defs":{"u":{"type":"string"}},"type":"object","properties":{"url":{"$ref":"#/$defs/u"}}});
    assert!(Capability::new(
        name("app.ok"),
        OpaqueVersion::try_from("1").unwrap(),
        Risk::DisplayOnly,
        JsonObject::try_from(ok).unwrap()
    )
    .is_ok());
}

#[test]
fn r_cap_2_schema_failures_name_the_path_and_the_rule() {
    let rows = [
        (
            "missing required",
            json!({}),
            "payload.arguments",
            "required",
        ),
        (
            "wrong type",
            json!({"url": 5}),
            "payload.arguments/url",
            "type",
        ),
        (
            "pattern",
            json!({"url": "ftp://x"}),
            "payload.arguments/url",
            "pattern",
        ),
    ];
    for (row, args, field, rule) in rows {
        let mut h = Harness::new(None);
        h.register(open_url(Risk::UserConfirmation));
        h.call("c1", "app.open_url", args, 60);
        let r = h.last_result();
        assert_eq!(r["status"], "failed", "{row}");
        assert_eq!(r["error"]["code"], "invalid_arguments", "{row}: {r}");
        assert_eq!(r["error"]["field"], field, "{row}: {r}");
        let message = r["message"].as_str().unwrap();
        assert!(
            message.contains(&format!("\"{rule}\"")),
            "{row}: names the rule: {message}"
        );
        assert!(
            h.prompts.is_empty(),
            "{row}: no prompt for invalid arguments"
        );
    }
}

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

fn record(h: &Harness, call_id: &str) -> CallRecord {
    h.store
        .calls()
        .find(|r| r.key.call_id.as_str() == call_id)
        .cloned()
        .unwrap()
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
fn r_cap_5_the_running_record_is_acknowledged_before_run() {
    let mut h = Harness::new(None);
    h.auto_ack = false;
    h.register(open_url(Risk::DisplayOnly));
    h.call("c1", "app.open_url", url_args(), 60);
    assert!(h.runs.is_empty(), "no run before the acknowledgement");
    assert_eq!(record(&h, "c1").state, CallState::Running);
    let ack = h.acks[0];
    // An answer of the wrong kind is the embedder's mistake.
    assert!(matches!(
        h.s.capability_answered(ack, Answer::Grant(true)),
        Err(UsageError::WrongAnswer { .. })
    ));
    h.answer(ack, Answer::Persisted);
    assert_eq!(h.runs.len(), 1);
    let persist_at = h
        .trace
        .iter()
        .position(|e| {
            matches!(
                e,
                Effect::Capability(CapabilityEffect::PersistCall { ack: Some(_), .. })
            )
        })
        .unwrap();
    let run_at = h
        .trace
        .iter()
        .position(|e| matches!(e, Effect::Capability(CapabilityEffect::Run(_))))
        .unwrap();
    assert!(persist_at < run_at);

    // A write that fails: not run, `failed` / `not_recorded`.
    h.call("c2", "app.open_url", url_args(), 60);
    let ack = *h.acks.last().unwrap();
    h.answer(ack, Answer::PersistFailed("disk full".into()));
    assert_eq!(h.runs.len(), 1);
    assert_eq!(h.last_result()["error"]["code"], "not_recorded");
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
        .capability_answered(t, Answer::Consent(ConsentAnswer::Allow))
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
    shown.extend(h.store.calls().map(|r| format!("{r:?}")));
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
    let lookup = fx.iter().find_map(|e| match e {
        Effect::Capability(CapabilityEffect::LookupCall { ticket, .. }) => Some(*ticket),
        _ => None,
    });
    let fx = s
        .capability_answered(lookup.unwrap(), Answer::Call(None))
        .unwrap();
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
        .capability_answered(t, Answer::Hook(HookAnswer::Allow))
        .unwrap()
        .is_empty());
    assert!(h.runs.is_empty());
}

#[test]
fn r_cap_4_the_effect_starts_only_before_the_deadline() {
    let mut h = Harness::new(None);
    h.auto_ack = false;
    h.register(open_url(Risk::UserConfirmation));
    h.call("c1", "app.open_url", url_args(), 30);
    h.consent(ConsentAnswer::Allow);
    // The `running` record's write is acknowledged only after the deadline.
    h.wall.0.set(T0 + 30);
    let ack = h.acks[0];
    h.answer(ack, Answer::Persisted);
    assert_eq!(h.last_result()["status"], "expired");
    assert!(h.runs.is_empty(), "no handler starts after the deadline");
    assert_eq!(
        record(&h, "c1").state,
        CallState::Finished {
            result: serde_json::from_value(h.last_result()).unwrap()
        }
    );
    // Positive control: acknowledged in time, it runs.
    h.call("c2", "app.open_url", url_args(), 30);
    h.consent(ConsentAnswer::Allow);
    let ack = h.acks[1];
    h.answer(ack, Answer::Persisted);
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
    h.auto_ack = false;
    h.register(plain("app.show", "1"));
    h.call("c1", "app.show", json!({}), 60);
    let running = h.acks[0];
    h.answer(running, Answer::Persisted);
    assert_eq!(h.runs.len(), 1);
    h.ran(Ok(json!({"shown": true})));
    assert_eq!(
        h.acks.len(),
        2,
        "the final record is written with an acknowledgement"
    );
    assert!(
        h.results().is_empty(),
        "nothing is answered before it is kept"
    );
    // A repeat of its key while the record is written waits for the same answer.
    h.call("c1", "app.show", json!({}), 60);
    assert!(h.results().is_empty());
    h.answer(
        h.acks[1],
        Answer::PersistFailed("database is locked".into()),
    );
    assert!(
        h.results().is_empty(),
        "no answer while the record is not kept"
    );
    // Written again after the retry delay, not before.
    h.mono.0.set(Duration::from_millis(400));
    h.poll();
    assert_eq!(h.acks.len(), 2);
    h.mono.0.set(Duration::from_millis(600));
    h.poll();
    assert_eq!(h.acks.len(), 3, "written again");
    // A second failure waits twice as long (1 s).
    h.answer(
        h.acks[2],
        Answer::PersistFailed("database is locked".into()),
    );
    h.mono.0.set(Duration::from_millis(1500));
    h.poll();
    assert_eq!(h.acks.len(), 3, "not before 1 s");
    h.mono.0.set(Duration::from_millis(1700));
    h.poll();
    assert_eq!(h.acks.len(), 4, "written again after 1 s");
    h.answer(h.acks[3], Answer::Persisted);
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
