//! `Store` as the capability kernel's `CapabilityStore`, against real database files: call
//! records in every state, grants, revision epochs, the audit chain, and a real
//! `lineup_host_core::Session` whose store port holds a `Store` across a restart
//! (R-CAP-5, R-CAP-6, R-INV-2).

// Helpers outside `#[test]` functions unwrap too.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::time::Duration;

use lineup_host_core::{
    AgentIdentity, Answer, AppError, AppResult, ArgsDigest, AuditRecord, CallKey, CallRecord,
    CallState, Capability, CapabilityEffect, CapabilityName, CapabilitySetup, CapabilityStore,
    Clock, ConversationId, Effect, ErrorCode, GrantKey, GrantRecord, JsonObject, OpaqueVersion,
    PartyId, RevisionEpoch, Risk, RunRequest, Session, SessionConfig, Status, StorePort, Timestamp,
    WallClock,
};
use lineup_store::{kernel, RevokeScope, Sha256Hex, Store, StoreError};
use serde_json::{json, Value};

/// 2026-08-02T12:00:00Z.
const T0: i64 = 1_785_672_000;
const CONV: &str = "conv_01";

fn ts(secs: i64) -> Timestamp {
    Timestamp::from_unix_seconds(secs).unwrap()
}

fn key(call_id: &str) -> CallKey {
    CallKey {
        conversation_id: ConversationId::try_from(CONV).unwrap(),
        call_id: call_id.try_into().unwrap(),
    }
}

/// The identity the kernel asks for (the test records carry no owner, so they answer it as
/// another's record of the key, which is what the kernel then compares).
fn owner() -> AgentIdentity {
    AgentIdentity::try_from("agent-1").unwrap()
}

fn digest() -> ArgsDigest {
    ArgsDigest(Sha256Hex::of(br#"{"text":"hi"}"#).to_string())
}

fn record(call_id: &str, state: CallState) -> CallRecord {
    CallRecord::new(
        key(call_id),
        RevisionEpoch(7 << 32 | 3),
        Some(AgentIdentity::try_from("agent-1").unwrap()),
        CapabilityName::try_from("clipboard.write").unwrap(),
        Some(OpaqueVersion::try_from("1.0").unwrap()),
        Some(Risk::UserConfirmation),
        digest(),
        ts(T0),
        ts(T0 + 5),
        state,
    )
}

fn completed(call_id: &str) -> CallState {
    CallState::Finished {
        result: AppResult {
            call_id: call_id.try_into().unwrap(),
            status: Status::Completed,
            result: Some(JsonObject::try_from(json!({"z": 1, "a": [true, null]})).unwrap()),
            message: None,
            error: None,
        },
    }
}

fn failed(call_id: &str) -> CallState {
    CallState::Finished {
        result: AppResult {
            call_id: call_id.try_into().unwrap(),
            status: Status::Failed,
            result: None,
            message: Some("the outcome is unknown".into()),
            error: Some(AppError {
                code: ErrorCode::OutcomeUnknown,
                field: None,
                limit: None,
            }),
        },
    }
}

/// Every state the kernel writes, one call each.
fn every_state() -> Vec<CallRecord> {
    vec![
        record("received", CallState::Received),
        record("awaiting", CallState::AwaitingConsent),
        record("running", CallState::Running),
        record("completed", completed("completed")),
        record("failed", failed("failed")),
    ]
}

#[test]
fn r_cap_5_every_call_state_round_trips_through_put_call_and_call() {
    let tmp = tempfile::tempdir().unwrap();
    let mut store = Store::open(tmp.path()).unwrap();
    for r in every_state() {
        store.put_call(&r).unwrap();
        assert_eq!(
            CapabilityStore::call(&mut store, &owner(), &r.key).unwrap(),
            Some(r)
        );
    }
    assert_eq!(
        CapabilityStore::call(&mut store, &owner(), &key("absent")).unwrap(),
        None
    );

    // Durable: another connection, and the store opened again, read the same records.
    drop(store);
    let mut store = Store::open(tmp.path()).unwrap();
    for r in every_state() {
        assert_eq!(
            CapabilityStore::call(&mut store, &owner(), &r.key).unwrap(),
            Some(r)
        );
    }

    // The indexed columns are filled, for `lineup` and the store's own API.
    let own = |id: &str| {
        store
            .calls()
            .get(&lineup_store::CallKey::new(CONV, id))
            .unwrap()
            .unwrap()
    };
    assert_eq!(own("awaiting").state.as_str(), "awaiting_consent");
    assert_eq!(own("running").state, lineup_store::CallState::Running);
    assert_eq!(own("running").version, "1.0");
    assert_eq!(own("running").args_digest.as_str(), digest().0);
    let done = own("completed").outcome.unwrap();
    assert_eq!(done.status, "completed");
    assert_eq!(
        serde_json::from_str::<Value>(done.result.as_deref().unwrap()).unwrap(),
        json!({"z": 1, "a": [true, null]})
    );
    let failed = own("failed").outcome.unwrap();
    assert_eq!(failed.status, "failed");
    assert_eq!(failed.message.as_deref(), Some("the outcome is unknown"));
    assert_eq!(
        serde_json::from_str::<Value>(failed.error.as_deref().unwrap()).unwrap(),
        json!({"code": "outcome_unknown"})
    );
}

#[test]
fn r_cap_5_one_call_moves_forward_through_every_state() {
    let tmp = tempfile::tempdir().unwrap();
    let mut store = Store::open(tmp.path()).unwrap();
    for state in [
        CallState::Received,
        CallState::AwaitingConsent,
        CallState::Running,
        completed("k1"),
    ] {
        let r = record("k1", state);
        store.put_call(&r).unwrap();
        assert_eq!(
            CapabilityStore::call(&mut store, &owner(), &r.key).unwrap(),
            Some(r)
        );
    }
}

#[test]
fn r_cap_5_put_call_never_writes_running_or_finished_twice() {
    let tmp = tempfile::tempdir().unwrap();
    let mut store = Store::open(tmp.path()).unwrap();
    // `received` and `awaiting_consent` may be written again.
    store.put_call(&record("k1", CallState::Received)).unwrap();
    store.put_call(&record("k1", CallState::Received)).unwrap();
    store.put_call(&record("k1", CallState::Running)).unwrap();
    // Another host that saw no record yet cannot take the call over.
    for again in [CallState::Received, CallState::Running] {
        let err = store.put_call(&record("k1", again)).unwrap_err();
        assert!(matches!(err, StoreError::InvalidTransition { .. }), "{err}");
    }
    store.put_call(&record("k1", failed("k1"))).unwrap();
    let err = store.put_call(&record("k1", completed("k1"))).unwrap_err();
    assert!(
        err.to_string().contains("from finished to finished"),
        "{err}"
    );
    assert_eq!(
        CapabilityStore::call(&mut store, &owner(), &key("k1")).unwrap(),
        Some(record("k1", failed("k1")))
    );
}

#[test]
fn r_cap_5_unfinished_calls_returns_exactly_the_unfinished_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let mut store = Store::open(tmp.path()).unwrap();
    assert!(CapabilityStore::unfinished_calls(&mut store)
        .unwrap()
        .is_empty());
    for r in every_state() {
        store.put_call(&r).unwrap();
    }
    let mut unfinished = CapabilityStore::unfinished_calls(&mut store).unwrap();
    unfinished.sort_by(|a, b| a.key.cmp(&b.key));
    let mut expected = every_state()[..3].to_vec();
    expected.sort_by(|a, b| a.key.cmp(&b.key));
    assert_eq!(unfinished, expected);
    // Finishing one takes it off the list.
    store
        .put_call(&record("running", failed("running")))
        .unwrap();
    let mut ids: Vec<_> = CapabilityStore::unfinished_calls(&mut store)
        .unwrap()
        .into_iter()
        .map(|r| r.key.call_id.to_string())
        .collect();
    ids.sort();
    assert_eq!(ids, ["awaiting", "received"]);
}

#[test]
fn r_cap_5_a_row_written_by_the_store_api_is_rebuilt_or_left_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let mut store = Store::open(tmp.path()).unwrap();
    let new = |id: &str, capability: &str| lineup_store::NewCall {
        key: lineup_store::CallKey::new(CONV, id),
        capability: capability.into(),
        version: "1".into(),
        args_digest: Sha256Hex::of(b"{}"),
    };
    store.calls().insert(&new("plain", "app.show")).unwrap();
    let rebuilt = CapabilityStore::call(&mut store, &owner(), &key("plain"))
        .unwrap()
        .unwrap();
    assert_eq!(rebuilt.state, CallState::Received);
    assert_eq!(rebuilt.capability.as_str(), "app.show");
    assert_eq!((rebuilt.agent, rebuilt.risk), (None, None));

    // A status the kernel does not know: not a kernel record, and no panic.
    store.calls().insert(&new("odd", "app.show")).unwrap();
    let outcome = lineup_store::CallOutcome {
        status: "exploded".into(),
        result: None,
        message: None,
        error: None,
    };
    store
        .calls()
        .finish(&lineup_store::CallKey::new(CONV, "odd"), &outcome)
        .unwrap();
    assert_eq!(
        CapabilityStore::call(&mut store, &owner(), &key("odd")).unwrap(),
        None
    );
    // The kernel, taking the key for new, still cannot run it.
    assert!(store.put_call(&record("odd", CallState::Running)).is_err());

    // A kernel row the store's own API moved on: the state columns win.
    store
        .put_call(&record("moved", CallState::Received))
        .unwrap();
    store
        .calls()
        .advance(
            &lineup_store::CallKey::new(CONV, "moved"),
            lineup_store::CallState::Running,
        )
        .unwrap();
    let moved = CapabilityStore::call(&mut store, &owner(), &key("moved"))
        .unwrap()
        .unwrap();
    assert_eq!(moved.state, CallState::Running);
    assert_eq!(moved.agent, record("moved", CallState::Running).agent);
}

fn grant_key(agent: &str, version: &str) -> GrantKey {
    GrantKey {
        agent: AgentIdentity::try_from(agent).unwrap(),
        capability: CapabilityName::try_from("clipboard.write").unwrap(),
        version: OpaqueVersion::try_from(version).unwrap(),
    }
}

/// `GrantRecord` is `#[non_exhaustive]`: built from its serde form, as a store reads it.
fn grant(agent: &str, version: &str, call_id: &str) -> GrantRecord {
    serde_json::from_value(json!({
        "key": grant_key(agent, version),
        "granted_at": ts(T0),
        "conversation_id": CONV,
        "call_id": call_id,
    }))
    .unwrap()
}

#[test]
fn r_cap_2_grants_put_get_list_and_revoke() {
    let tmp = tempfile::tempdir().unwrap();
    let mut store = Store::open(tmp.path()).unwrap();
    let k = grant_key("agent-1", "1.0");
    assert_eq!(CapabilityStore::grant(&mut store, &k).unwrap(), None);
    store.put_grant(&grant("agent-1", "1.0", "c1")).unwrap();
    store.put_grant(&grant("agent-2", "1.0", "c2")).unwrap();
    // Replacing keeps one grant per key.
    store.put_grant(&grant("agent-1", "1.0", "c3")).unwrap();
    assert_eq!(
        CapabilityStore::grant(&mut store, &k).unwrap(),
        Some(grant("agent-1", "1.0", "c3"))
    );
    // Another version is another grant.
    assert_eq!(
        CapabilityStore::grant(&mut store, &grant_key("agent-1", "2.0")).unwrap(),
        None
    );
    assert_eq!(
        CapabilityStore::grants(&mut store).unwrap(),
        [grant("agent-1", "1.0", "c3"), grant("agent-2", "1.0", "c2")]
    );
    // `lineup grants list` sees them.
    assert_eq!(store.grants().list(None).unwrap().len(), 2);

    assert!(store.revoke_grant(&k).unwrap());
    assert!(!store.revoke_grant(&k).unwrap());
    assert_eq!(CapabilityStore::grant(&mut store, &k).unwrap(), None);
    assert_eq!(CapabilityStore::grants(&mut store).unwrap().len(), 1);
}

#[test]
fn r_cap_2_a_revoke_by_the_store_api_elsewhere_counts_at_the_next_grant_check() {
    let tmp = tempfile::tempdir().unwrap();
    let mut host = Store::open(tmp.path()).unwrap();
    let k = grant_key("agent-1", "1.0");
    host.put_grant(&grant("agent-1", "1.0", "c1")).unwrap();
    assert!(CapabilityStore::grant(&mut host, &k).unwrap().is_some());
    // `lineup grants revoke` in another process: another connection, the store's own API.
    let cli = Store::open(tmp.path()).unwrap();
    let removed = cli
        .grants()
        .revoke(&RevokeScope::Capability {
            agent: "agent-1".into(),
            capability: "clipboard.write".into(),
        })
        .unwrap();
    assert_eq!(removed, 1);
    assert_eq!(CapabilityStore::grant(&mut host, &k).unwrap(), None);

    // A grant made through the store's own API reads with placeholders.
    cli.grants()
        .insert(&lineup_store::GrantKey::new(
            "agent-1",
            "clipboard.write",
            "1.0",
        ))
        .unwrap();
    let g = CapabilityStore::grant(&mut host, &k).unwrap().unwrap();
    assert_eq!(g.conversation_id.as_str(), kernel::UNKNOWN);
    assert_eq!(g.call_id.as_str(), kernel::UNKNOWN);
}

#[test]
fn r_inv_2_epochs_strictly_increase_across_reopen_and_two_stores_on_one_dir() {
    let tmp = tempfile::tempdir().unwrap();
    let mut seen = Vec::new();
    for _reopen in 0..3 {
        let mut a = Store::open(tmp.path()).unwrap();
        let mut b = Store::open(tmp.path()).unwrap();
        for i in 0..6 {
            let s = if i % 2 == 0 { &mut a } else { &mut b };
            seen.push(s.next_revision_epoch().unwrap());
        }
        // The store's own revisions share the counter: never the same low bits.
        a.revisions().next().unwrap();
    }
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "{seen:?}");
    assert!(seen.iter().all(|e| e.0 >> 32 == seen[0].0 >> 32));
    assert_eq!(seen[0].0 & 0xffff_ffff, 1);

    // A database created again (another directory here) draws another prefix.
    let other = tempfile::tempdir().unwrap();
    let fresh = Store::open(other.path())
        .unwrap()
        .next_revision_epoch()
        .unwrap();
    assert_ne!(
        fresh.0 >> 32,
        seen[0].0 >> 32,
        "2^-32 chance of a false alarm"
    );
}

/// `AuditRecord` is `#[non_exhaustive]`: built from its serde form.
fn audit(kind: &str, extra: Value) -> AuditRecord {
    let mut value = json!({
        "at": ts(T0), "kind": kind, "call": key("k1"), "agent": null,
        "capability": "app.show", "version": null, "risk": null,
        "arguments_digest": digest(), "decision": null, "source": null, "status": null,
        "note": kind,
    });
    for (k, v) in extra.as_object().unwrap() {
        value[k] = v.clone();
    }
    serde_json::from_value(value).unwrap()
}

#[test]
fn r_cap_6_audit_through_the_trait_is_chained_and_verifies() {
    let tmp = tempfile::tempdir().unwrap();
    let mut store = Store::open(tmp.path()).unwrap();
    CapabilityStore::append_audit(&mut store, &audit("received", json!({}))).unwrap();
    CapabilityStore::append_audit(
        &mut store,
        &audit(
            "decision",
            json!({"agent": "agent-1", "version": "1", "risk": "display_only",
                   "decision": "allowed", "source": "policy"}),
        ),
    )
    .unwrap();
    CapabilityStore::append_audit(
        &mut store,
        &audit(
            "answered",
            json!({"version": "1", "risk": "display_only", "status": "completed"}),
        ),
    )
    .unwrap();
    assert_eq!(store.audit().verify().unwrap().count, 3);

    let mut out = Vec::new();
    store.audit().export(&mut out).unwrap();
    let lines: Vec<Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let fields = |l: &Value| {
        [
            "agent",
            "version",
            "risk",
            "decision",
            "decision_source",
            "status",
        ]
        .map(|k| l[k].clone())
    };
    assert_eq!(
        fields(&lines[0]),
        [
            json!(null),
            json!(""),
            json!("none"),
            json!("none"),
            json!("none"),
            json!("none")
        ]
    );
    assert_eq!(
        fields(&lines[1]),
        [
            json!("agent-1"),
            json!("1"),
            json!("display_only"),
            json!("allowed"),
            json!("policy"),
            json!("none")
        ]
    );
    assert_eq!(lines[2]["status"], "completed");
    assert_eq!(lines[2]["conversation_id"], CONV);
    assert_eq!(lines[2]["call_id"], "k1");
    assert_eq!(lines[2]["args_digest"], digest().0);
}

// ---- a real session whose store port holds a Store ----

struct Mono;

impl Clock for Mono {
    fn monotonic(&self) -> Duration {
        Duration::ZERO
    }
}

struct Wall;

impl WallClock for Wall {
    fn now(&self) -> Timestamp {
        ts(T0)
    }
}

/// A host: one session with capabilities whose store port holds a `Store` in `dir`, and a
/// connection of the test's own to the same directory.
struct Host {
    session: Session,
    store: Store,
    epoch: RevisionEpoch,
    sent: Vec<Value>,
    runs: Vec<RunRequest>,
}

impl Host {
    /// Starts as a host does: an epoch and the unfinished records from the store, then
    /// capabilities enabled and `app.show` (`display_only`) registered.
    fn start(dir: &Path) -> Self {
        let mut store = Store::open(dir).unwrap();
        let mut config = SessionConfig::new(PartyId::try_from("desktop").unwrap(), "out");
        config.conversation_id = Some(ConversationId::try_from(CONV).unwrap());
        config.store = StorePort::new(Store::open(dir).unwrap());
        let mut session = Session::new(config, Box::new(Mono)).unwrap();
        let epoch = store.next_revision_epoch().unwrap();
        let mut setup = CapabilitySetup::new(epoch, Box::new(Wall));
        // A vouched agent: its records answer it across restarts (R-CAP-5, R-SES-1).
        setup.agent = Some(owner());
        setup.unfinished = CapabilityStore::unfinished_calls(&mut store).unwrap();
        let fx = session.enable_capabilities(setup).unwrap();
        let mut host = Self {
            session,
            store,
            epoch,
            sent: Vec::new(),
            runs: Vec::new(),
        };
        host.drive(fx);
        let show = Capability::new(
            CapabilityName::try_from("app.show").unwrap(),
            OpaqueVersion::try_from("1").unwrap(),
            Risk::DisplayOnly,
            JsonObject::try_from(json!({"type": "object"})).unwrap(),
        )
        .unwrap();
        let fx = host.session.register_capability(show).unwrap();
        host.drive(fx);
        host
    }

    /// Takes the effects like a platform: what is sent, and the runs for the test to answer.
    fn drive(&mut self, effects: Vec<Effect>) {
        for effect in effects {
            match effect {
                Effect::Send(m) => self.sent.push(serde_json::from_str(&m.to_json()).unwrap()),
                Effect::Capability(CapabilityEffect::Run(r)) => self.runs.push(r),
                // What the user is shown of a call that runs: nothing for the store to do.
                Effect::Capability(CapabilityEffect::Activity(_)) => {}
                other => panic!("a display_only capability prompts nothing: {other:?}"),
            }
        }
    }

    fn call(&mut self, call_id: &str) {
        let bytes = serde_json::to_vec(&json!({
            "v": 1, "id": format!("m-{call_id}-{}", self.sent.len()), "type": "lineup.v1.app.call",
            "conversation_id": CONV, "sender": {"kind": "agent", "id": "agent_1"},
            "payload": {"call_id": call_id, "capability": "app.show", "reason": "show it",
                        "expires_at": ts(T0 + 600), "arguments": {"text": call_id}}
        }))
        .unwrap();
        let fx = self.session.handle_inbound(&bytes);
        self.drive(fx);
    }

    fn ran(&mut self, run: &RunRequest, result: Value) {
        let fx = self
            .session
            .answered(
                run.ticket,
                Answer::Ran(Ok(JsonObject::try_from(result).unwrap())),
            )
            .unwrap();
        self.drive(fx);
    }

    fn results(&self) -> Vec<Value> {
        self.sent
            .iter()
            .filter(|m| m["type"] == "lineup.v1.app.result")
            .map(|m| m["payload"].clone())
            .collect()
    }
}

#[test]
fn r_cap_5_a_session_on_the_store_answers_repeats_from_it_after_a_restart() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let own_state = |id: &str| {
        Store::open(dir)
            .unwrap()
            .calls()
            .get(&lineup_store::CallKey::new(CONV, id))
            .unwrap()
            .map(|r| r.state)
    };

    let mut first = Host::start(dir);
    first.call("done");
    let run = first.runs.pop().unwrap();
    // `Run` came only after the `running` record was committed: another connection sees it.
    assert_eq!(own_state("done"), Some(lineup_store::CallState::Running));
    first.ran(&run, json!({"shown": true}));
    assert_eq!(own_state("done"), Some(lineup_store::CallState::Finished));
    first.call("cut");
    assert_eq!(first.runs.len(), 1, "`cut` is running when the host dies");
    let results = first.results();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["status"], "completed");
    assert_eq!(results[0]["result"], json!({"shown": true}));
    let first_epoch = first.epoch;

    // The host dies; a new one starts on the same data directory.
    drop(first);
    let mut second = Host::start(dir);
    assert!(second.epoch > first_epoch, "R-INV-2");
    assert_eq!(
        own_state("cut"),
        Some(lineup_store::CallState::Finished),
        "recovered at start"
    );
    assert!(CapabilityStore::unfinished_calls(&mut second.store)
        .unwrap()
        .is_empty());

    second.call("done");
    second.call("cut");
    let results = second.results();
    assert_eq!(results.len(), 2, "{results:?}");
    assert_eq!(results[0]["status"], "completed");
    assert_eq!(results[0]["result"], json!({"shown": true}));
    assert_eq!(results[1]["status"], "failed");
    assert_eq!(results[1]["error"]["code"], "outcome_unknown");
    assert!(second.runs.is_empty(), "nothing runs again");

    // Every step of both hosts is on one verified chain, recovery included.
    let head = second.store.audit().verify().unwrap();
    assert!(head.count >= 8, "{head:?}");
    let mut out = Vec::new();
    second.store.audit().export(&mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains(r#""decision_source":"recovery""#), "{text}");
}
