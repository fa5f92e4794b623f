//! Standard components (R-STD-1 … R-STD-17): host-rendered `markdown`, `text`, `status`,
//! `progress`, `alert`, `confirm`, `choice`, `input` and `form`, opened by a `ui.open` that
//! carries `component` instead of `app`.
//!
//! The kernel's part: the v1 catalog and its frozen schemas ([`ComponentKind`], the files in
//! `schemas/components/`), validation of props and state with the exact field
//! ([`MAX_COMPONENT_BYTES`], depth, U+0000, numbers, caps in graphemes after display cleaning,
//! the checks a schema cannot express), the set the driver can render ([`ComponentSet`], listed
//! in `client.inventory`), the [`ComponentEffect`]s the driver carries out, and the answer state
//! machine that checks a user's [`UserAnswer`] and builds the `submit`/`cancel` data. What the
//! user's gesture must be (R-STD-8) is the driver's.

mod answer;
mod catalog;
mod effect;
mod record;
mod rules;
mod validate;
mod wire;

pub use answer::{validate_answer, AnswerRefusal, InputKind, UserAnswer, Via};
pub(crate) use answer::{Instance, Status};
pub use catalog::{ComponentKey, ComponentKind, ComponentSet, V1};
pub use effect::{ComponentClosed, ComponentEffect, ShownComponent};
pub use record::{
    InstanceRecord, InstanceStore, InstanceStoreError, RecordStatus, MAX_DRAFT_BYTES,
    MAX_RECORDS_PER_IDENTITY, RECORD_TTL_SECS,
};
pub use rules::DEFAULT_MAX_LENGTH;
pub(crate) use rules::{check_props, check_state};
pub(crate) use validate::{check_bytes, check_part, check_values, invalid};
pub use validate::{MAX_COMPONENT_BYTES, MAX_COMPONENT_DEPTH, MAX_SAFE_INTEGER};
pub use wire::{ComponentOpen, ComponentRef, ComponentSchemas, Placement, StandardComponent};

/// The longest `fallback_text`, in bytes (R-STD-13).
pub const MAX_FALLBACK_BYTES: usize = 4 * 1024;
