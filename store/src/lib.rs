//! The durable store of lineup-host: one SQLite database per data directory holding what must
//! survive a restart or a crash. [`Store`] owns the connection; what it keeps is reached through
//! one part per table group, each stating its invariants:
//!
//! - the **inventory revision**, a counter that never returns a value twice (R-INV-2):
//!   [`Store::revisions`], [`Revisions`];
//! - **call records** keyed by `(conversation_id, call_id)` and their owner, written before a
//!   call runs, so each runs at most once and a repeat gets the stored result (R-CAP-5):
//!   [`Store::calls`], [`Calls`];
//! - **grants**, remembered consent per vouched agent, capability and version (R-CAP-3,
//!   R-SES-1), read from the database at every decision: [`Store::grants`], [`Grants`];
//! - the **audit log**, append-only and chained by SHA-256 (R-CAP-6): [`Store::audit`],
//!   [`AuditLog`], [`ChainVerifier`]; the canonical form a digest is computed over, for a gateway
//!   to recompute, is documented on [`AuditRecord`];
//! - the **app registry** and its package cache (R-UI-9, R-SEC-7, R-INV-3): [`Store::apps`],
//!   [`Apps`]; the app ids it holds or has held: [`Store::app_ids`], [`AppIds`];
//! - what each agent was **offered** (R-INV-4) and the operator's **capability policy**
//!   (R-INV-1): [`Store::offered`], [`Offered`], [`Store::policy`], [`Policy`];
//! - a cheap change check for running hosts: [`Store::data_version`];
//! - the capability kernel's store: `Store` implements
//!   [`lineup_host_core::CapabilityStore`], mapping the kernel's records onto these tables
//!   ([`kernel`] documents the mapping, the revision epochs and the placeholders).
//!
//! Several host processes on one data directory are normal: every write is one
//! `BEGIN IMMEDIATE` transaction with a busy timeout, the journal is a WAL and
//! `synchronous=FULL` makes each commit durable before the call returns. The schema is migrated
//! by `PRAGMA user_version` when a store is opened. The store's own records are plain serde
//! types, and statuses, risks and decisions are the caller's strings; only [`kernel`] knows the
//! protocol kernel's types.
//!
//! ```
//! use lineup_store::{AuditEntry, CallKey, CallOutcome, CallState, GrantKey, Inserted, NewCall,
//!     Sha256Hex, Store};
//!
//! let dir = tempfile::tempdir()?;
//! let store = Store::open(dir.path())?;
//!
//! // Record the call before anything happens; a repeated key finds the record instead.
//! let key = CallKey::new("conv-1", "call-1");
//! let call = NewCall {
//!     key: key.clone(),
//!     capability: "clipboard.write".into(),
//!     version: "1".into(),
//!     args_digest: Sha256Hex::of(br#"{"text":"hi"}"#),
//! };
//! assert!(matches!(store.calls().insert(&call)?, Inserted::New(_)));
//!
//! // The user chose "always"; the grant is read back at the next decision.
//! let grant = GrantKey::new("agent-7", "clipboard.write", "1");
//! store.grants().insert(&grant)?;
//! assert!(store.grants().contains(&grant)?);
//!
//! // `running` is committed before the handler runs; then the result is stored.
//! store.calls().advance(&key, CallState::Running)?;
//! let outcome = CallOutcome { status: "completed".into(), result: Some("{}".into()),
//!     message: None, error: None };
//! store.calls().finish(&key, &outcome)?;
//! assert!(matches!(store.calls().insert(&call)?,
//!     Inserted::Existing(r) if r.outcome.as_ref() == Some(&outcome)));
//!
//! // Every decision goes on the chained audit log.
//! store.audit().append(&AuditEntry {
//!     conversation_id: "conv-1".into(), call_id: "call-1".into(),
//!     agent: Some("agent-7".into()), capability: "clipboard.write".into(),
//!     version: "1".into(), risk: "user_confirmation".into(),
//!     args_digest: call.args_digest.clone(), decision: "allowed".into(),
//!     decision_source: "grant".into(), status: "completed".into(),
//!     detail: Default::default(),
//! })?;
//! let head = store.audit().verify()?;
//! assert_eq!(head.count, 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]

mod apps;
mod audit;
mod calls;
mod data_dir;
mod db;
mod digest;
mod error;
mod grants;
mod instances;
pub mod kernel;
mod lease;
mod migrate;
mod offered;
mod policy;
mod reserved;
mod revision;
mod state;
mod tx;

pub use apps::{AppChange, Apps, InstalledApp, PACKAGE_CACHE};
pub use audit::{
    AuditDetail, AuditEntry, AuditHead, AuditLog, AuditRecord, ChainVerifier, AUDIT_FORMAT,
};
pub use calls::{CallKey, CallOutcome, CallRecord, CallState, Calls, Inserted, NewCall};
pub use data_dir::{default_data_dir, APP_DIR};
pub use db::{DataVersion, Store, StoreOptions, CONTENDED_WAIT, DB_FILE, DEFAULT_BUSY_TIMEOUT};
pub use digest::Sha256Hex;
pub use error::StoreError;
pub use grants::{Grant, GrantKey, Grants, RevokeScope};
pub use lease::HostLease;
pub use migrate::SCHEMA_VERSION;
pub use offered::Offered;
pub use policy::{Policy, PolicyEntry};
pub use reserved::{AppIds, OPERATOR};
pub use revision::{Revision, Revisions};

#[cfg(test)]
pub(crate) mod tests {
    use crate::{AuditEntry, Sha256Hex};

    /// An audit entry for tests.
    pub(crate) fn entry(conversation_id: &str, call_id: &str) -> AuditEntry {
        AuditEntry {
            conversation_id: conversation_id.into(),
            call_id: call_id.into(),
            agent: Some("agent-1".into()),
            capability: "clipboard.write".into(),
            version: "1".into(),
            risk: "user_confirmation".into(),
            args_digest: Sha256Hex::of(b"{}"),
            decision: "allowed".into(),
            decision_source: "prompt".into(),
            status: "completed".into(),
            detail: crate::AuditDetail::default(),
        }
    }
}
