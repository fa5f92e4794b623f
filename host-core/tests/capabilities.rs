//! Table-driven tests of the App Capability kernel (issue 8 items 2–5, 7): a script of `app.call`
//! envelopes and platform answers, and the answers, prompts, runs, records and audit it must
//! produce. A small in-memory `CapabilityStore` executes the store effects, as the SQLite crate
//! will. Each test is named after the rule it guards.
#![allow(clippy::unwrap_used)]

#[path = "capabilities/deadlines.rs"]
mod deadlines;
#[path = "capabilities/once.rs"]
mod once;
#[path = "capabilities/registry.rs"]
mod registry;
#[path = "capabilities/risk.rs"]
mod risk;

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
                let more = self.s.answered(ticket, answer).unwrap();
                queue.extend(more);
            }
        }
    }

    fn answer(&mut self, ticket: Ticket, answer: Answer) {
        let fx = self.s.answered(ticket, answer).unwrap();
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

fn record(h: &Harness, call_id: &str) -> CallRecord {
    h.store
        .calls()
        .find(|r| r.key.call_id.as_str() == call_id)
        .cloned()
        .unwrap()
}
