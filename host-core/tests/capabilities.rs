//! Table-driven tests of the App Capability kernel (issue 8 items 2–5, 7): a script of `app.call`
//! envelopes and platform answers, and the answers, prompts, runs, records and audit it must
//! produce. The session's store port holds an in-memory store, each of its calls logged, whose
//! writes of call records fail (a locked database) or return late (a slow disk) when a test
//! says so. Each test is named after the rule it guards.
#![allow(clippy::unwrap_used)]

#[path = "capabilities/deadlines.rs"]
mod deadlines;
#[path = "capabilities/once.rs"]
mod once;
#[path = "capabilities/registry.rs"]
mod registry;
#[path = "capabilities/risk.rs"]
mod risk;

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use lineup_host_core::{
    Activity, AgentIdentity, Answer, ArgumentRule, AuditKind, AuditRecord, CallKey, CallRecord,
    CallState, Capability, CapabilityEffect, CapabilityLimits, CapabilityName, CapabilitySetup,
    CapabilityStore, Clock, ConsentAnswer, ConsentRequest, ConversationId, Decision,
    DecisionSource, Effect, GrantKey, GrantRecord, HandlerError, HookAnswer, HookRequest,
    JsonObject, MemoryStore, Message, OpaqueVersion, PartyId, RevisionEpoch, Risk, RunRequest,
    Session, SessionConfig, StorePort, Ticket, Timestamp, UsageError, WallClock,
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

// ---- the store: in memory, each call logged, writes that fail or take long on demand ----

/// What a store answers while it is locked.
#[derive(Debug)]
struct Locked;

impl std::fmt::Display for Locked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("database is locked")
    }
}

impl std::error::Error for Locked {}

/// A memory store never fails.
fn never(e: std::convert::Infallible) -> Locked {
    match e {}
}

/// The session's store: `memory`, every call the kernel makes written to `log` (beside the
/// effects the harness sees, so their order shows), the next `failing` writes of call records
/// in one state refused, and a `running` record's write returning only once the wall clock
/// reads `slow_running` (the deadline may pass during it).
#[derive(Clone)]
struct Rigged {
    memory: MemoryStore,
    log: Rc<RefCell<Vec<String>>>,
    failing: Rc<Cell<(&'static str, u32)>>,
    slow_running: Rc<Cell<Option<i64>>>,
    wall: ManualWall,
}

impl CapabilityStore for Rigged {
    type Error = Locked;

    fn next_revision_epoch(&mut self) -> Result<RevisionEpoch, Locked> {
        self.memory.next_revision_epoch().map_err(never)
    }

    fn unfinished_calls(&mut self) -> Result<Vec<CallRecord>, Locked> {
        self.memory.unfinished_calls().map_err(never)
    }

    fn call(&mut self, owner: &AgentIdentity, key: &CallKey) -> Result<Option<CallRecord>, Locked> {
        self.log
            .borrow_mut()
            .push(format!("look up {}", key.call_id));
        self.memory.call(owner, key).map_err(never)
    }

    fn put_call(&mut self, record: &CallRecord) -> Result<(), Locked> {
        let (id, state) = (&record.key.call_id, record.state.as_str());
        if let (failing, n @ 1..) = self.failing.get() {
            if failing == state {
                self.failing.set((failing, n - 1));
                self.log
                    .borrow_mut()
                    .push(format!("write {id} {state}: locked"));
                return Err(Locked);
            }
        }
        if let (CallState::Running, Some(at)) = (&record.state, self.slow_running.get()) {
            self.wall.0.set(at);
        }
        self.log.borrow_mut().push(format!("write {id} {state}"));
        self.memory.put_call(record).map_err(never)
    }

    fn grant(&mut self, key: &GrantKey) -> Result<Option<GrantRecord>, Locked> {
        self.log
            .borrow_mut()
            .push(format!("check grant {}", key.capability));
        self.memory.grant(key).map_err(never)
    }

    fn put_grant(&mut self, grant: &GrantRecord) -> Result<(), Locked> {
        self.memory.put_grant(grant).map_err(never)
    }

    fn grants(&mut self) -> Result<Vec<GrantRecord>, Locked> {
        self.memory.grants().map_err(never)
    }

    fn revoke_grant(&mut self, key: &GrantKey) -> Result<bool, Locked> {
        self.memory.revoke_grant(key).map_err(never)
    }

    fn append_audit(&mut self, record: &AuditRecord) -> Result<(), Locked> {
        self.memory.append_audit(record).map_err(never)
    }
}

// ---- the harness: a session, its clocks, the store, and what reached the platform ----

struct Harness {
    s: Session,
    mono: ManualClock,
    wall: ManualWall,
    /// The records, shared with the session's store.
    store: MemoryStore,
    /// The session's store, to fail or slow its writes.
    rig: Rigged,
    /// Every effect, in order, and every message sent.
    trace: Vec<Effect>,
    sent: Vec<Value>,
    prompts: Vec<ConsentRequest>,
    hooks: Vec<HookRequest>,
    runs: Vec<RunRequest>,
    activities: Vec<Activity>,
    withdrawn: Vec<Ticket>,
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
        let rig = Rigged {
            memory: store.clone(),
            log: Rc::default(),
            failing: Rc::default(),
            slow_running: Rc::default(),
            wall: wall.clone(),
        };
        let mut config = SessionConfig::new(PartyId::try_from("desktop").unwrap(), "out");
        config.conversation_id = Some(ConversationId::try_from(CONV).unwrap());
        config.store = StorePort::new(rig.clone());
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
            rig,
            trace: Vec::new(),
            sent: Vec::new(),
            prompts: Vec::new(),
            hooks: Vec::new(),
            runs: Vec::new(),
            activities: Vec::new(),
            withdrawn: Vec::new(),
        };
        h.drive(fx);
        h
    }

    /// Collects effects like a platform: prompts, hooks and runs for the test to answer; a run
    /// and an `app.result` are also written to the store's log, among the store's calls.
    fn drive(&mut self, effects: Vec<Effect>) {
        for effect in effects {
            match &effect {
                Effect::Send(m) => {
                    if let Message::AppResult(r) = m {
                        let answer = format!("answer {}", r.payload.call_id);
                        self.rig.log.borrow_mut().push(answer);
                    }
                    self.sent.push(serde_json::from_str(&m.to_json()).unwrap());
                }
                Effect::Capability(c) => match c {
                    CapabilityEffect::Prompt(p) => self.prompts.push(p.clone()),
                    CapabilityEffect::Hook(h) => self.hooks.push(h.clone()),
                    CapabilityEffect::Run(r) => {
                        self.rig
                            .log
                            .borrow_mut()
                            .push(format!("run {}", r.call.call_id));
                        self.runs.push(r.clone());
                    }
                    CapabilityEffect::Activity(a) => self.activities.push(a.clone()),
                    CapabilityEffect::Withdraw(t) => self.withdrawn.push(*t),
                },
                other => panic!("unexpected {other:?}"),
            }
            self.trace.push(effect);
        }
    }

    /// The next `n` writes of call records in `state` fail, as a locked database's do.
    fn fail_writes(&self, state: &'static str, n: u32) {
        self.rig.failing.set((state, n));
    }

    /// The store's log so far: lookups, writes, grant checks, and the runs beside them.
    fn log(&self) -> Vec<String> {
        self.rig.log.borrow().clone()
    }

    /// How many times the record of `call_id` was written in `state`, kept or not.
    fn writes(&self, call_id: &str, state: &str) -> usize {
        let kept = format!("write {call_id} {state}");
        self.log()
            .iter()
            .filter(|l| **l == kept || **l == format!("{kept}: locked"))
            .count()
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

    fn audit_of(&self, call_id: &str) -> Vec<AuditRecord> {
        self.store
            .audit()
            .into_iter()
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
        .into_iter()
        .find(|r| r.key.call_id.as_str() == call_id)
        .unwrap()
}
