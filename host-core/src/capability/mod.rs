//! App Capabilities (R-SEC-5, R-INV-1..4, R-CAP-1..6): the registry, the inventory, the
//! `app.call` pipeline with consent and exactly-once execution, the audit, and the contract of
//! the durable store. Sans-IO like the rest of the crate: handlers, prompts and the store live in
//! the platform, which executes [`CapabilityEffect`]s and answers by [`Ticket`].

mod digest;
mod effect;
mod pipeline;
mod registry;
mod store;

pub use pipeline::Capabilities;
pub(crate) use pipeline::Out;
pub use registry::{Capability, Registry};

pub use effect::{
    Answer, CallSummary, CapabilityEffect, CapabilityLimits, CapabilitySetup, ConsentAnswer,
    ConsentRequest, HandlerError, HookRequest, RunRequest, Ticket, WallClock,
};
pub use store::{
    ArgsDigest, AuditKind, AuditRecord, CallKey, CallRecord, CallState, CapabilityStore, Decision,
    DecisionSource, GrantKey, GrantRecord, RevisionEpoch,
};
