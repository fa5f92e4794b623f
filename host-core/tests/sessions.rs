//! Table tests of the session table (R-SES-1): routing by `conversation_id`, instance ids scoped
//! to their session, refused envelopes that establish nothing, `too_many_sessions`, the
//! per-session and total limits, ending sessions (by the API and when idle), and capability
//! state per session with answers routed back by session. Each test is named after what it
//! guards.
#![allow(clippy::unwrap_used)]

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use lineup_host_core::{
    AgentIdentity, Answer, Capability, CapabilityEffect, CapabilityName, CapabilitySetup,
    CapabilityStore, Clock, CloseReason, ComponentSet, ConversationId, Effect, GoneReason,
    JsonObject, Limits, MemoryStore, OpaqueVersion, PageInput, PartyId, Risk, SessionConfig,
    SessionEffects, SessionFactory, SessionId, Sessions, StorePort, SurfaceKey, Timestamp,
    UsageError, WallClock,
};
use serde_json::{json, Value};

#[derive(Clone, Default)]
struct ManualClock(Rc<Cell<Duration>>);

impl Clock for ManualClock {
    fn monotonic(&self) -> Duration {
        self.0.get()
    }
}

struct Wall;

impl WallClock for Wall {
    fn now(&self) -> Timestamp {
        Timestamp::from_unix_seconds(1_785_672_000).unwrap()
    }
}

/// Hands out the shared clock and, with capabilities on, an epoch of the shared store.
struct Factory {
    clock: ManualClock,
    store: Option<MemoryStore>,
}

impl SessionFactory for Factory {
    fn clock(&mut self) -> Box<dyn Clock> {
        Box::new(self.clock.clone())
    }

    fn capabilities(
        &mut self,
        agent: Option<&AgentIdentity>,
    ) -> Result<Option<CapabilitySetup>, String> {
        let Some(store) = &mut self.store else {
            return Ok(None);
        };
        let epoch = store.next_revision_epoch().unwrap();
        let mut setup = CapabilitySetup::new(epoch, Box::new(Wall));
        setup.agent = agent.cloned();
        Ok(Some(setup))
    }
}

struct Table {
    t: Sessions,
    clock: ManualClock,
    /// The records, shared with the sessions' store port.
    store: MemoryStore,
    /// What was sent, as JSON, in order.
    sent: Vec<Value>,
    /// Handlers asked to run: (session, ticket, tag).
    runs: Vec<(SessionId, lineup_host_core::Ticket, String)>,
    /// Consent prompts shown: (session, ticket).
    prompts: Vec<(SessionId, lineup_host_core::Ticket)>,
}

fn table_with(limits: Limits, capabilities: bool) -> Table {
    let clock = ManualClock::default();
    let store = MemoryStore::default();
    let factory = Factory {
        clock: clock.clone(),
        store: capabilities.then(|| store.clone()),
    };
    let mut template = SessionConfig::new(PartyId::try_from("desktop").unwrap(), "out");
    template.limits = limits;
    template.store = StorePort::new(store.clone());
    Table {
        t: Sessions::new(template, Box::new(factory)).unwrap(),
        clock,
        store,
        sent: Vec::new(),
        runs: Vec::new(),
        prompts: Vec::new(),
    }
}

fn table() -> Table {
    table_with(Limits::default(), false)
}

fn envelope(conversation: &str, id: &str, kind: &str, payload: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "v": 1, "id": id, "type": format!("lineup.v1.{kind}"), "conversation_id": conversation,
        "sender": {"kind": "agent", "id": "agent_hermes_main"}, "payload": payload
    }))
    .unwrap()
}

fn open(conversation: &str, instance: &str) -> Vec<u8> {
    envelope(
        conversation,
        &format!("open-{instance}"),
        "ui.open",
        json!({"instance_id": instance, "app": {"id": "com.example.w", "version": "1.0.0",
               "html": "<main></main>", "css": "", "js": ""}, "state": {"who": conversation}}),
    )
}

fn patch(conversation: &str, instance: &str) -> Vec<u8> {
    envelope(
        conversation,
        "patch",
        "ui.patch",
        json!({"instance_id": instance, "state": {"n": 1}}),
    )
}

fn count_call(conversation: &str, call_id: &str) -> Vec<u8> {
    envelope(
        conversation,
        &format!("m-{call_id}"),
        "app.call",
        json!({"call_id": call_id, "capability": "test.count", "reason": "count",
               "expires_at": "2026-08-02T12:10:00Z", "arguments": {"tag": conversation}}),
    )
}

const READY: &str = r#"{"namespace":"lineup.surface.v1","type":"ready","document":"0123456789abcdef0123456789abcdef"}"#;

fn conversation(c: &str) -> ConversationId {
    ConversationId::try_from(c).unwrap()
}

fn opened(fx: &SessionEffects) -> SurfaceKey {
    fx.effects
        .iter()
        .find_map(|e| match e {
            Effect::Open(open) => Some(open.key.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no open in {fx:?}"))
}

fn sent(fx: &SessionEffects) -> Vec<Value> {
    fx.effects
        .iter()
        .filter_map(|e| match e {
            Effect::Send(m) => Some(serde_json::from_str(&m.to_json()).unwrap()),
            _ => None,
        })
        .collect()
}

/// The one answer of a refusal.
fn refusal(fx: &SessionEffects) -> Value {
    assert!(
        fx.effects.iter().any(|e| matches!(e, Effect::Rejected(_))),
        "not refused: {fx:?}"
    );
    let sent = sent(fx);
    assert_eq!(sent.len(), 1, "{sent:?}");
    sent[0].clone()
}

impl Table {
    fn inbound(&mut self, bytes: &[u8]) -> SessionEffects {
        self.t.handle_inbound(bytes)
    }

    /// Collects what was sent, the prompts and the runs, each with its session.
    fn drive(&mut self, fx: SessionEffects) {
        let SessionEffects { session, effects } = fx;
        for effect in effects {
            match effect {
                Effect::Send(m) => {
                    self.sent.push(serde_json::from_str(&m.to_json()).unwrap());
                }
                Effect::Capability(CapabilityEffect::Prompt(prompt)) => {
                    self.prompts.push((session, prompt.ticket));
                }
                Effect::Capability(CapabilityEffect::Run(run)) => {
                    let tag = run.arguments.as_map()["tag"].as_str().unwrap().to_owned();
                    self.runs.push((session, run.ticket, tag));
                }
                Effect::Capability(CapabilityEffect::Activity(_)) => {}
                Effect::Capability(other) => panic!("unexpected {other:?}"),
                _ => {}
            }
        }
    }

    fn sent_in(&self, c: &str) -> Vec<&Value> {
        self.sent
            .iter()
            .filter(|m| m["conversation_id"] == c)
            .collect()
    }
}

fn count_capability() -> Capability {
    Capability::new(
        CapabilityName::try_from("test.count").unwrap(),
        OpaqueVersion::try_from("1").unwrap(),
        Risk::DisplayOnly,
        JsonObject::try_from(json!({"type": "object"})).unwrap(),
    )
    .unwrap()
}

#[test]
fn envelopes_are_routed_by_conversation_and_instance_ids_are_scoped_to_their_session() {
    let mut h = table();
    let a = h.inbound(&open("c1", "w1"));
    let b = h.inbound(&open("c2", "w1"));
    let (ka, kb) = (opened(&a), opened(&b));
    assert_eq!(ka.instance, kb.instance);
    assert_ne!(ka, kb, "two sessions' w1 are two webviews");
    assert_ne!(ka.session, kb.session);
    assert_eq!((a.session, b.session), (ka.session, kb.session));
    assert_eq!(h.t.len(), 2);
    assert_eq!(h.t.id_of(&conversation("c1")), Some(ka.session));

    // Each page gets its own state; an event goes to its own conversation only.
    let fx = h.t.handle_page(&ka, PageInput::Message(READY)).effects;
    let state = fx.iter().find_map(|e| match e {
        Effect::DeliverState { key, state } => Some((key.clone(), state.to_json())),
        _ => None,
    });
    assert_eq!(state, Some((ka.clone(), r#"{"who":"c1"}"#.to_owned())));
    let event = r#"{"namespace":"lineup.surface.v1","type":"event","event":"go","data":{}}"#;
    let fx = h.t.handle_page(&kb, PageInput::Message(event)).effects;
    let [Effect::Send(m)] = fx.as_slice() else {
        panic!("{fx:?}")
    };
    assert_eq!(m.conversation_id().as_str(), "c2");

    // Page input goes to the session its key names (R-SES-1): c1's page speaks in c1 only.
    let fx = h.t.handle_page(&ka, PageInput::Message(event)).effects;
    let [Effect::Send(m)] = fx.as_slice() else {
        panic!("{fx:?}")
    };
    assert_eq!(m.conversation_id().as_str(), "c1");

    // A patch naming an instance only the other conversation has open is unknown here.
    h.inbound(&open("c1", "only_c1"));
    let fx = h.inbound(&patch("c2", "only_c1"));
    let answer = refusal(&fx);
    assert_eq!(answer["payload"]["code"], "unknown_instance");
    assert_eq!(answer["conversation_id"], "c2");

    // Once c1 ended, its page's input reaches nothing.
    h.t.end_session(&conversation("c1"));
    let fx = h.t.handle_page(&ka, PageInput::Message(event));
    assert!(fx.effects.is_empty(), "{fx:?}");
}

#[test]
fn r_ses_1_a_malformed_envelope_establishes_no_session_and_a_well_formed_refused_one_does() {
    let mut h = table();
    // Refused before anything is set up: wrong sender kind. Nothing remains.
    let mut forged: Value = serde_json::from_slice(&open("c2", "w1")).unwrap();
    forged["sender"]["kind"] = json!("client");
    let fx = h.inbound(&serde_json::to_vec(&forged).unwrap());
    let answer = refusal(&fx);
    assert_eq!(answer["payload"]["code"], "wrong_sender");
    assert_eq!(answer["conversation_id"], "c2");
    assert_eq!(fx.session, SessionId::STANDALONE);
    // Not JSON at all: "unknown" while no session (or several) could be meant.
    let fx = h.inbound(b"not json");
    assert_eq!(refusal(&fx)["conversation_id"], "unknown");
    assert!(h.t.is_empty(), "{:?}", h.t);
    assert_eq!(h.t.table_stats().envelopes_refused, 2);
    // Well-formed, refused by the session it establishes (amended R-SES-1): the session stays.
    let fx = h.inbound(&patch("c1", "w1"));
    assert_eq!(refusal(&fx)["payload"]["code"], "unknown_instance");
    assert_ne!(fx.session, SessionId::STANDALONE);
    assert_eq!(h.t.len(), 1);
    // Well-formed envelope, payload undecodable: established too, answered in its conversation.
    let fx = h.inbound(br#"{"v":1,"id":"x","type":"lineup.v1.ui.open","conversation_id":"c3","sender":{"kind":"agent","id":"a"},"payload":{}}"#);
    let answer = refusal(&fx);
    assert_eq!(answer["conversation_id"], "c3");
    assert_eq!(answer["payload"]["in_reply_to"], "x");
    assert_eq!(h.t.len(), 2);
    assert!(h.t.id_of(&conversation("c3")).is_some());

    // Every outbound id is unique, refusals of candidates included.
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(refusal(&h.inbound(&patch("c1", "w1")))["id"].clone());
    }
    ids.push(sent(&h.inbound(&count_call("c9", "x")))[0]["id"].clone());
    let unique: std::collections::BTreeSet<String> = ids.iter().map(Value::to_string).collect();
    assert_eq!(unique.len(), ids.len(), "{ids:?}");
}

#[test]
fn a_new_conversation_beyond_max_sessions_is_refused_too_many_sessions() {
    let mut limits = Limits::default();
    limits.max_sessions = 2;
    let mut h = table_with(limits, false);
    h.inbound(&open("c1", "w1"));
    h.inbound(&open("c2", "w1"));
    let fx = h.inbound(&open("c3", "w1"));
    let answer = refusal(&fx);
    assert_eq!(answer["payload"]["code"], "too_many_sessions");
    assert_eq!(answer["payload"]["limit"], 2);
    assert_eq!(answer["conversation_id"], "c3");
    assert_eq!(h.t.len(), 2);
    // An app.call is answered with app.result, failed, naming the code.
    let fx = h.inbound(&count_call("c3", "call_1"));
    let answer = refusal(&fx);
    assert_eq!(answer["type"], "lineup.v1.app.result");
    assert_eq!(answer["payload"]["error"]["code"], "too_many_sessions");
    // The established ones go on; the API refuses too.
    assert!(h.inbound(&patch("c1", "w1")).effects.is_empty());
    assert!(matches!(
        h.t.open_session(conversation("c3"), None),
        Err(UsageError::TooManySessions { open: 2, limit: 2 })
    ));
    // Ending one makes room.
    h.t.end_session(&conversation("c1")).unwrap();
    let fx = h.inbound(&open("c3", "w1"));
    opened(&fx);
    assert_eq!(h.t.len(), 2);
}

#[test]
fn max_surfaces_bounds_each_session_and_the_host_in_total() {
    let mut limits = Limits::default();
    limits.max_surfaces = 3;
    let mut h = table_with(limits, false);
    opened(&h.inbound(&open("c1", "a")));
    opened(&h.inbound(&open("c1", "b")));
    opened(&h.inbound(&open("c2", "a")));
    // Total: a new one anywhere is refused.
    let answer = refusal(&h.inbound(&open("c1", "c")));
    assert_eq!(answer["payload"]["code"], "too_many_surfaces");
    assert_eq!(answer["payload"]["limit"], 3);
    let answer = refusal(&h.inbound(&open("c3", "a")));
    assert_eq!(answer["payload"]["code"], "too_many_surfaces");
    // A well-formed envelope establishes its conversation even when refused (R-SES-1).
    assert_eq!(h.t.len(), 3);
    // Replacing is not a new Surface.
    let fx = h.inbound(&open("c2", "a"));
    assert!(
        matches!(fx.effects.as_slice(), [Effect::Replace { .. }]),
        "{fx:?}"
    );
    assert_eq!(h.t.surface_count(), 3);

    // Per session: the session's own limit, with the others empty.
    let mut limits = Limits::default();
    limits.max_surfaces = 1;
    let mut h = table_with(limits, false);
    opened(&h.inbound(&open("c1", "a")));
    let answer = refusal(&h.inbound(&open("c1", "b")));
    assert_eq!(answer["payload"]["code"], "too_many_surfaces");
}

#[test]
fn ending_a_session_closes_its_surfaces_silently_and_frees_its_conversation() {
    let mut h = table();
    let k1 = opened(&h.inbound(&open("c1", "w1")));
    let k2 = opened(&h.inbound(&open("c2", "w1")));
    let fx = h.t.end_session(&conversation("c1")).unwrap();
    assert_eq!(fx.session, k1.session);
    assert_eq!(
        fx.effects,
        vec![Effect::Close {
            key: k1.clone(),
            reason: CloseReason::SessionEnded
        }]
    );
    assert!(h.t.get(k1.session).is_none(), "the old key reaches nobody");
    assert!(h.t.end_session(&conversation("c1")).is_none());
    // The other session is untouched.
    assert!(h.t.get(k2.session).unwrap().is_current(&k2));
    // The conversation comes back as a new session; its old key stays stale.
    let again = opened(&h.inbound(&open("c1", "w1")));
    assert_ne!(again.session, k1.session);
    assert_ne!(again, k1);

    let all = h.t.end_all();
    assert_eq!(all.len(), 2);
    assert!(h.t.is_empty());
    assert!(all.iter().flat_map(|fx| &fx.effects).all(|e| matches!(
        e,
        Effect::Close {
            reason: CloseReason::SessionEnded,
            ..
        }
    )));
}

#[test]
fn an_idle_session_without_surfaces_ends_and_a_busy_one_stays() {
    let mut h = table();
    let idle = Duration::from_secs(60);
    opened(&h.inbound(&open("c1", "w1")));
    let k2 = opened(&h.inbound(&open("c2", "w1")));
    // c2's Surface closes; c2 is then quiet.
    h.inbound(&envelope(
        "c2",
        "close",
        "ui.close",
        json!({"instance_id": "w1"}),
    ));
    assert!(h.t.end_idle(idle).is_empty());
    assert_eq!(h.t.next_idle_check(idle), Some(idle));
    h.clock.0.set(Duration::from_secs(59));
    assert!(h.t.end_idle(idle).is_empty());
    h.clock.0.set(Duration::from_secs(61));
    let ended = h.t.end_idle(idle);
    assert_eq!(ended.len(), 1);
    assert_eq!(ended[0].session, k2.session);
    // c1 has a Surface open: not idle, however long.
    h.clock.0.set(Duration::from_secs(10_000));
    assert!(h.t.end_idle(idle).is_empty());
    assert_eq!(h.t.len(), 1);
}

#[test]
fn an_opened_session_has_its_vouched_agent_and_cannot_be_opened_twice() {
    let mut h = table();
    let id =
        h.t.open_session(
            conversation("c1"),
            Some(PartyId::try_from("agent_x").unwrap()),
        )
        .unwrap()
        .session;
    assert!(matches!(
        h.t.open_session(conversation("c1"), None),
        Err(UsageError::SessionOpen { .. })
    ));
    // Another sender.id is refused wrong_sender (R-SES-1); in another conversation it is fine.
    let answer = refusal(&h.inbound(&open("c1", "w1")));
    assert_eq!(answer["payload"]["code"], "wrong_sender");
    assert_eq!(h.t.get(id).unwrap().surface_count(), 0);
    opened(&h.inbound(&open("c2", "w1")));
}

#[test]
fn each_session_gets_its_own_inventory_calls_and_results() {
    let mut h = table_with(Limits::default(), true);
    h.t.register_capability(count_capability()).unwrap();
    assert!(matches!(
        h.t.register_capability(count_capability()),
        Err(UsageError::CapabilityRegistered { .. })
    ));
    let opened_c0 = h.t.open_session(conversation("c0"), None).unwrap();
    h.drive(opened_c0);
    let fx = h.inbound(&count_call("c1", "call_1"));
    h.drive(fx);
    let fx = h.inbound(&count_call("c2", "call_1"));
    h.drive(fx);
    for c in ["c0", "c1", "c2"] {
        let types: Vec<&Value> = h.sent_in(c).iter().map(|m| &m["type"]).collect();
        assert_eq!(
            types[..2],
            [
                &json!("lineup.v1.client.inventory"),
                &json!("lineup.v1.app.list")
            ],
            "{c}: the inventory comes first: {types:?}"
        );
    }
    let revisions: std::collections::BTreeSet<String> = h
        .sent
        .iter()
        .filter(|m| m["type"] == "lineup.v1.client.inventory")
        .map(|m| m["payload"]["revision"].to_string())
        .collect();
    assert_eq!(
        revisions.len(),
        3,
        "each session has its own revision epoch"
    );

    // The same call_id runs once per conversation; each result goes to its own.
    assert_eq!(h.runs.len(), 2, "{:?}", h.runs);
    let runs = std::mem::take(&mut h.runs);
    for (session, ticket, tag) in runs.into_iter().rev() {
        let mut result = serde_json::Map::new();
        result.insert("tag".into(), json!(tag));
        let fx =
            h.t.answered(session, ticket, Answer::Ran(Ok(JsonObject::from(result))))
                .unwrap();
        h.drive(fx);
    }
    for c in ["c1", "c2"] {
        let results: Vec<&Value> = h
            .sent_in(c)
            .into_iter()
            .filter(|m| m["type"] == "lineup.v1.app.result")
            .collect();
        assert_eq!(results.len(), 1, "{c}: {results:?}");
        assert_eq!(results[0]["payload"]["status"], "completed");
        assert_eq!(results[0]["payload"]["result"]["tag"], c);
    }
    // A registration reaches every session with a new inventory.
    let more = Capability::new(
        CapabilityName::try_from("test.more").unwrap(),
        OpaqueVersion::try_from("1").unwrap(),
        Risk::DisplayOnly,
        JsonObject::try_from(json!({"type": "object"})).unwrap(),
    )
    .unwrap();
    let before = h.sent.len();
    for fx in h.t.register_capability(more).unwrap() {
        h.drive(fx);
    }
    let announced: Vec<&Value> = h.sent[before..]
        .iter()
        .filter(|m| m["type"] == "lineup.v1.client.inventory")
        .map(|m| &m["conversation_id"])
        .collect();
    assert_eq!(announced, [&json!("c0"), &json!("c1"), &json!("c2")]);
}

#[test]
fn a_call_running_when_its_session_ends_is_recorded_and_nothing_is_sent() {
    let mut h = table_with(Limits::default(), true);
    h.t.register_capability(count_capability()).unwrap();
    let fx = h.inbound(&count_call("c1", "call_1"));
    h.drive(fx);
    let (session, ticket, _) = h.runs.pop().unwrap();
    h.t.end_session(&conversation("c1")).unwrap();
    let before = h.sent.len();
    let fx =
        h.t.answered(session, ticket, Answer::Ran(Ok(JsonObject::default())))
            .unwrap();
    h.drive(fx);
    assert_eq!(
        h.sent.len(),
        before,
        "the ended session's agent hears nothing"
    );
    let key = lineup_host_core::CallKey {
        conversation_id: conversation("c1"),
        call_id: lineup_host_core::CallId::try_from("call_1").unwrap(),
    };
    // Any identity finds the key's record (another's, when not its own).
    let anyone = lineup_host_core::AgentIdentity::try_from("anyone").unwrap();
    let record = CapabilityStore::call(&mut h.store, &anyone, &key)
        .unwrap()
        .unwrap();
    assert!(record.state.is_finished(), "{record:?}");
    // An answer for a session long gone is ignored.
    let fx =
        h.t.answered(session, ticket, Answer::Ran(Ok(JsonObject::default())))
            .unwrap();
    assert!(fx.effects.is_empty());
}

#[test]
fn an_unreadable_line_is_answered_in_the_only_sessions_conversation_else_unknown() {
    let mut h = table();
    opened(&h.inbound(&open("c1", "w1")));
    let fx = h.inbound(b"not json");
    assert_eq!(refusal(&fx)["conversation_id"], "c1");
    assert_eq!(
        refusal(&h.t.handle_oversized(5_000_000))["conversation_id"],
        "c1"
    );
    opened(&h.inbound(&open("c2", "w1")));
    assert_eq!(
        refusal(&h.inbound(b"not json"))["conversation_id"],
        "unknown"
    );
    assert_eq!(h.t.len(), 2);
}

/// R-SES-1: without a vouched identity, "always" lasts one conversation: a grant given in one
/// session is not seen by another, which asks again; the first session's next call runs
/// without a prompt (the positive control that the grant exists).
#[test]
fn a_conversation_grant_is_not_seen_by_another_session() {
    let mut h = table_with(Limits::default(), true);
    let confirm = Capability::new(
        CapabilityName::try_from("test.count").unwrap(),
        OpaqueVersion::try_from("1").unwrap(),
        Risk::UserConfirmation,
        JsonObject::try_from(json!({"type": "object"})).unwrap(),
    )
    .unwrap();
    h.t.register_capability(confirm).unwrap();
    let fx = h.inbound(&count_call("c1", "call_1"));
    h.drive(fx);
    assert_eq!(h.prompts.len(), 1, "the first call asks");
    let (session, ticket) = h.prompts[0];
    let fx =
        h.t.answered(
            session,
            ticket,
            Answer::Consent(lineup_host_core::ConsentAnswer::AllowAlways),
        )
        .unwrap();
    h.drive(fx);
    assert_eq!(h.runs.len(), 1, "allowed, it runs");
    // The same conversation: remembered, no prompt.
    let fx = h.inbound(&count_call("c1", "call_2"));
    h.drive(fx);
    assert_eq!(h.prompts.len(), 1, "c1 remembers its grant");
    assert_eq!(h.runs.len(), 2);
    // Another conversation: asked again, nothing runs until it answers.
    let fx = h.inbound(&count_call("c2", "call_1"));
    h.drive(fx);
    assert_eq!(h.prompts.len(), 2, "c2 does not see c1's grant");
    assert_ne!(h.prompts[1].0, session);
    assert_eq!(h.runs.len(), 2, "nothing ran in c2");
}

#[test]
fn r_inv_1_a_reconnected_agent_gets_the_inventory_again_under_a_new_revision() {
    let mut h = table_with(Limits::default(), true);
    let first = h.t.open_session(conversation("c1"), None).unwrap();
    let first = sent(&first);
    assert_eq!(first.len(), 2, "{first:?}");
    assert_eq!(first[0]["type"], "lineup.v1.client.inventory");
    assert_eq!(first[1]["type"], "lineup.v1.app.list");
    let again = sent(&h.t.announce_inventory(&conversation("c1")).unwrap());
    assert_eq!(
        again.iter().map(|m| m["type"].clone()).collect::<Vec<_>>(),
        vec![
            json!("lineup.v1.client.inventory"),
            json!("lineup.v1.app.list")
        ]
    );
    assert_eq!(again[0]["conversation_id"], "c1");
    // R-INV-2: the same content under a newer revision, never a reused one.
    assert_ne!(
        again[0]["payload"]["revision"],
        first[0]["payload"]["revision"]
    );
    assert_eq!(
        again[0]["payload"]["capabilities"],
        first[0]["payload"]["capabilities"]
    );
    // No session for the conversation: nothing to announce.
    assert!(h.t.announce_inventory(&conversation("c2")).is_none());
}

#[test]
fn r_inv_1_without_capabilities_there_is_no_inventory_to_announce_again() {
    let mut h = table();
    assert!(sent(&h.t.open_session(conversation("c1"), None).unwrap()).is_empty());
    let fx = h.t.announce_inventory(&conversation("c1")).unwrap();
    assert!(fx.effects.is_empty(), "{fx:?}");
}

#[test]
fn r_ui_12_agent_gone_closes_every_surface_with_its_reason_upstream() {
    let mut h = table();
    let w1 = opened(&h.inbound(&open("c1", "w1")));
    let w2 = opened(&h.inbound(&open("c1", "w2")));
    let other = opened(&h.inbound(&open("c2", "w1")));
    let all =
        h.t.surfaces_gone(Some(&conversation("c1")), GoneReason::AgentGone);
    assert_eq!(all.len(), 1);
    let closes: Vec<&Effect> = all[0]
        .effects
        .iter()
        .filter(|e| matches!(e, Effect::Close { .. }))
        .collect();
    assert_eq!(
        closes,
        vec![
            &Effect::Close {
                key: w1.clone(),
                reason: CloseReason::Gone(GoneReason::AgentGone)
            },
            &Effect::Close {
                key: w2.clone(),
                reason: CloseReason::Gone(GoneReason::AgentGone)
            }
        ]
    );
    let up = sent(&all[0]);
    assert_eq!(up.len(), 2);
    for (message, instance) in up.iter().zip(["w1", "w2"]) {
        assert_eq!(message["type"], "lineup.v1.ui.event");
        assert_eq!(message["conversation_id"], "c1");
        assert_eq!(
            message["payload"],
            json!({"instance_id": instance, "event": "close", "data": {"reason": "agent_gone"}})
        );
    }
    assert_eq!(h.t.get(w1.session).unwrap().surface_count(), 0);
    // The other conversation keeps its Surface until asked for all of them.
    assert!(h.t.get(other.session).unwrap().is_current(&other));
    assert!(h
        .t
        .surfaces_gone(Some(&conversation("c1")), GoneReason::AgentGone)
        .is_empty());
    let rest = h.t.surfaces_gone(None, GoneReason::AgentGone);
    assert_eq!(rest.len(), 1);
    assert_eq!(rest[0].session, other.session);
    assert_eq!(sent(&rest[0])[0]["payload"]["data"]["reason"], "agent_gone");
    // A stale key reaches nobody: a patch to a gone Surface is unknown_instance.
    let answer = refusal(&h.inbound(&patch("c1", "w1")));
    assert_eq!(answer["payload"]["code"], "unknown_instance");
}

#[test]
fn r_env_5_a_binary_frame_is_answered_binary_frame_in_the_only_sessions_conversation() {
    let mut h = table();
    opened(&h.inbound(&open("c1", "w1")));
    let answer = refusal(&h.t.handle_binary_frame(12));
    assert_eq!(answer["type"], "lineup.v1.client.error");
    assert_eq!(answer["conversation_id"], "c1");
    assert_eq!(answer["payload"]["code"], "binary_frame");
    assert_eq!(answer["payload"]["in_reply_to"], Value::Null);
    assert!(answer["payload"]["message"]
        .as_str()
        .unwrap()
        .contains("12 bytes"));
}

#[test]
fn the_one_clock_gives_the_earliest_deadline_and_does_what_is_due() {
    let mut h = table();
    h.t = {
        let factory = Factory {
            clock: h.clock.clone(),
            store: None,
        };
        let mut template = SessionConfig::new(PartyId::try_from("desktop").unwrap(), "out");
        template.standard_components = ComponentSet::all_v1();
        Sessions::new(template, Box::new(factory)).unwrap()
    };
    let wall = Timestamp::from_unix_seconds(1_785_672_000).unwrap();
    let idle = Some(Duration::from_secs(60));
    // Nothing timed yet.
    assert_eq!(h.t.poll_timeout(wall, idle), None);
    // c1: a question expiring 10 s from `wall`; c2: a session that goes quiet.
    h.inbound(&envelope(
        "c1",
        "ask",
        "ui.open",
        json!({"instance_id": "q", "component": {"id": "confirm", "version": "1",
               "props": {"title": "Go?", "expires_at": "2026-08-02T12:00:10Z"}}}),
    ));
    h.inbound(&open("c2", "w1"));
    h.inbound(&envelope(
        "c2",
        "close",
        "ui.close",
        json!({"instance_id": "w1"}),
    ));
    // The earliest of the question's expiry (10 s) and c2's quiet end (60 s).
    assert_eq!(h.t.poll_timeout(wall, idle), Some(Duration::from_secs(10)));
    // Without an idle end only the question counts; before it, nothing is due.
    assert_eq!(h.t.poll_timeout(wall, None), Some(Duration::from_secs(10)));
    assert!(h.t.handle_timeout(wall, idle).is_empty());
    // At the expiry the question closes `expired`, and c2 stays (59 s short of its end).
    let later = Timestamp::from_unix_seconds(1_785_672_010).unwrap();
    h.clock.0.set(Duration::from_secs(10));
    let due = h.t.handle_timeout(later, idle);
    let sent: Vec<String> = due
        .iter()
        .flat_map(|fx| &fx.effects)
        .filter_map(|e| match e {
            Effect::Send(m) => Some(m.to_json()),
            _ => None,
        })
        .collect();
    assert!(
        sent.len() == 1 && sent[0].contains(r#""reason":"expired""#),
        "{sent:?}"
    );
    assert_eq!(
        h.t.poll_timeout(later, idle),
        Some(Duration::from_secs(50)),
        "c2's quiet end is next"
    );
    // At 60 s c2 ends. c1 was never quiet while its question was open (a question waiting
    // for its answer keeps its session); it is quiet from its expiry on.
    h.clock.0.set(Duration::from_secs(60));
    let ended = h.t.handle_timeout(later, idle);
    assert_eq!(ended.len(), 1, "{ended:?}");
    assert_eq!(h.t.len(), 1);
    assert_eq!(h.t.poll_timeout(later, idle), Some(Duration::from_secs(10)));
}
