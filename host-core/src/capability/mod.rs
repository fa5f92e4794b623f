//! App Capabilities (R-SEC-5, R-INV-1..4, R-CAP-1..6): the registry, the inventory, the
//! `app.call` pipeline with consent and exactly-once execution, the audit, and the contract of
//! the durable store. Sans-IO like the rest of the crate: handlers, prompts and the store live in
//! the platform. The kernel calls the store through its [`StorePort`] and takes each answer as
//! the return value; what is not the store's (prompts, the hook, runs) it asks as
//! [`CapabilityEffect`]s, and the platform answers those later by [`Ticket`].
//!
//! The pipeline of one `app.call`, in order (R-SEC-5): the call key `(conversation_id,
//! call_id)` is looked up first (in memory, then the store: a repeat waits for or gets the same
//! answer; a reuse for another capability or other arguments is `failed` `call_id_reused`) →
//! the capability is known and visible (`unsupported`; `revoked` once offered, R-INV-4) →
//! `expires_at` is not past (`expired`) → the arguments satisfy the compiled `input_schema`
//! (`failed` `invalid_arguments`, naming the JSON pointer and the rule) → the capability's own
//! [`ArgumentRule`]s, such as the link rule of `app.open_url` (`failed` `invalid_arguments`,
//! audited as policy, the same in every grant state, R-CAP-4) → consent by risk:
//! `display_only` runs, `user_confirmation` checks a remembered grant then prompts,
//! `system_permission` and `restricted` prompt every time and then ask the embedder's hook
//! (default deny); at most [`CapabilityLimits::max_waiting_consent`] calls wait (then `failed`
//! `too_many_calls`) → a `running` record is written, and kept → `Run` → its final record is
//! written, and kept (written again until it is) → exactly one `app.result` per `app.call`
//! envelope. Every step is audited.
//!
//! ```
//! use std::time::Duration;
//! use lineup_host_core::*;
//! use serde_json::json;
//!
//! struct Mono;
//! impl Clock for Mono { fn monotonic(&self) -> Duration { Duration::ZERO } }
//! struct Wall;
//! impl WallClock for Wall {
//!     fn now(&self) -> Timestamp { Timestamp::from_unix_seconds(1_785_672_000).unwrap() }
//! }
//!
//! let mut config = SessionConfig::new(PartyId::try_from("desktop").unwrap(), "out");
//! config.conversation_id = Some(ConversationId::try_from("c1").unwrap());
//! let mut session = Session::new(config, Box::new(Mono)).unwrap();
//! // The epoch comes from `CapabilityStore::next_revision_epoch` at start.
//! let fx = session.enable_capabilities(CapabilitySetup::new(RevisionEpoch(7), Box::new(Wall))).unwrap();
//! assert!(matches!(&fx[0], Effect::Send(Message::ClientInventory(i)) if i.payload.revision.as_str() == "rev-7-1"));
//!
//! // The embedder registers a capability; the schema is compiled once, here.
//! let show = Capability::new(
//!     CapabilityName::try_from("app.show").unwrap(),
//!     OpaqueVersion::try_from("1").unwrap(),
//!     Risk::DisplayOnly,
//!     JsonObject::try_from(json!({"type": "object", "required": ["text"]})).unwrap(),
//! ).unwrap();
//! let fx = session.register_capability(show).unwrap();
//! assert!(matches!(&fx[0], Effect::Send(Message::ClientInventory(_)))); // then app.list
//!
//! // The agent calls it. The kernel looks its key up in the store (the session's
//! // `SessionConfig::store`, in memory here), finds none, and as display_only needs no prompt,
//! // writes the `running` record and only then asks the platform to run the handler.
//! let call = br#"{"v":1,"id":"m1","type":"lineup.v1.app.call","conversation_id":"c1",
//!   "sender":{"kind":"agent","id":"a1"},"payload":{"call_id":"k1","capability":"app.show",
//!   "reason":"show it","expires_at":"2026-08-02T12:10:00Z","arguments":{"text":"hi"}}}"#;
//! let fx = session.handle_inbound(call);
//! let run = fx.iter().find_map(|e| match e {
//!     Effect::Capability(CapabilityEffect::Run(run)) => Some(run.ticket),
//!     _ => None,
//! }).unwrap();
//! // The handler's outcome comes back by its ticket: the final record is written, then the
//! // answer goes.
//! let done = JsonObject::try_from(json!({"shown": true})).unwrap();
//! let fx = session.answered(run, Answer::Ran(Ok(done))).unwrap();
//! let result = fx.iter().find_map(|e| match e {
//!     Effect::Send(Message::AppResult(r)) => Some(&r.payload),
//!     _ => None,
//! }).unwrap();
//! assert_eq!(result.status, Status::Completed);
//! ```

mod activity;
mod digest;
mod effect;
mod memory;
mod pipeline;
mod policy;
mod port;
mod provider;
mod refusals;
mod registry;
mod store;

pub use activity::{Activity, MAX_ACTIVITY};
pub use digest::ArgsDigest;
pub use memory::MemoryStore;
pub use pipeline::Capabilities;
pub(crate) use pipeline::Out;
pub use policy::{CapabilityPolicy, PolicyRule};
pub(crate) use port::reported;
pub use port::{StoreFailure, StoreOp, StorePort};
pub use provider::{AnswerSink, CapabilityProvider, PromptWording};
pub use registry::{ArgumentRule, Capability, Registry};

pub use effect::{
    unvouched_identity, Answer, CallSummary, CapabilityEffect, CapabilityLimits, CapabilitySetup,
    ConsentAnswer, ConsentRequest, HandlerError, HookAnswer, HookRequest, RunRequest, Ticket,
    WallClock, UNVOUCHED_PREFIX,
};
pub use store::{
    AuditKind, AuditRecord, CallKey, CallRecord, CallState, CapabilityStore, Decision,
    DecisionSource, GrantKey, GrantRecord, RevisionEpoch,
};
