//! [`Store`] as the capability kernel's durable store: `impl CapabilityStore for Store`
//! (R-CAP-5, R-CAP-6, R-INV-2). The kernel calls it through its
//! [`StorePort`](lineup_host_core::StorePort) (when, and what a failure means, is the table on
//! [`lineup_host_core::CapabilityStore`]'s module).
//!
//! The kernel's records are kept in the store's own tables, so `lineup grants` and `lineup audit`
//! see them and the `calls_unfinished` index keeps working:
//!
//! | trait method | tables and columns |
//! |---|---|
//! | `next_revision_epoch` | the `revision` counter shared with [`Revisions::next`](crate::Revisions::next), and the `meta` epoch |
//! | `put_call`, `call`, `unfinished_calls` | `calls`: every indexed column, plus `record`, the kernel's [`CallRecord`](lineup_host_core::CallRecord) as JSON (its serde form; schema version 3) |
//! | `put_grant`, `grant`, `grants`, `revoke_grant` | `grants`, plus `conversation_id` and `call_id` (schema version 3) |
//! | `append_audit` | `audit`, chained as [`AuditLog::append`](crate::AuditLog::append) chains every entry |
//!
//! **Calling the trait.** The store's own records are reached through its parts
//! (`store.calls().get(&key)`, `store.grants().list(None)`, `store.audit().append(&entry)`), so
//! `store.call(&owner, &key)` is the kernel's. Two accessors share a name with a kernel method,
//! [`Store::grants`] and [`Store::offered`]: on a `Store` or a `&Store` Rust picks the accessor,
//! on a `&mut Store` the kernel's method; call the kernel's as
//! `CapabilityStore::grants(&mut store)`, or through a generic `S: CapabilityStore`.
//!
//! **Revision epochs** (R-INV-2). [`RevisionEpoch`] is the 64-bit number
//! `prefix << 32 | counter`: `prefix` is the first 32 bits of the random epoch the database drew
//! when it was created (`meta.epoch`), `counter` the `revision` counter, incremented and
//! committed (`BEGIN IMMEDIATE`, `synchronous=FULL`) before the epoch is returned. So within one
//! database epochs strictly increase, across processes, connections and restarts; a database
//! can hand out 2³² − 1 counter values (epochs and revisions of
//! [`Revisions::next`](crate::Revisions::next) together; then [`StoreError::EpochsExhausted`]).
//! A data directory whose database was deleted and created
//! again draws a new prefix: it repeats an epoch of the old database only if it draws the same
//! 32 bits, with probability 2⁻³² per re-creation (about k²/2³³ for any two of k databases).
//!
//! **Call records** (R-CAP-5). `put_call` inserts or replaces the record of its key in one
//! `BEGIN IMMEDIATE` transaction, committed with `synchronous=FULL` before it returns, so the
//! kernel may emit `Run` for a `running` record as soon as it returns `Ok`. The indexed columns are filled from the record: `state`; `status`, `result`, `message`,
//! `error` from a finished call's `app.result` (`result` and `error` as JSON text); `capability`;
//! `version` (`""` when the kernel has none: an unknown or hidden capability); `args_digest`.
//! `created_at` and `updated_at` are the store's own clock (insert time, write time), as for the
//! store's own call API; the kernel's `received_at` and `updated_at` are in `record`.
//!
//! A write only moves a key forward, `received` → `awaiting_consent` → `running` → `finished`
//! (a state may be skipped; `received` and `awaiting_consent` may be written again): a record
//! already `running` or `finished` is never replaced by `running` again, nor is a `finished`
//! record replaced at all. Such a write fails with [`StoreError::InvalidTransition`] (the kernel
//! then answers `failed` `not_recorded` and does not run the call), so of two hosts sharing the
//! data directory only one runs a call, as with [`Calls::advance`](crate::Calls::advance).
//!
//! **Rows without a `record`** (written through the store's own call API, or before schema
//! version 3) never panic: `call` rebuilds a kernel record from the columns, with epoch 0, no
//! agent, no risk, no version when the column is empty or not a valid kernel version, the
//! store's `created_at` and `updated_at` as the kernel's times, and a finished call's
//! `app.result` from `status`, `result`, `message`, `error` (a `result` or `error` that is not
//! the kernel's shape is left out). When even that is impossible (a capability name or status
//! the kernel does not accept) `call` returns `Ok(None)`, and `unfinished_calls` leaves the row
//! out. That is safe: a kernel that then treats the call as new cannot write `running` over a
//! `running` or `finished` row (see above), so it never runs it. When the store's own API moved a
//! row that has a `record` (its `state` column no longer matches), the columns win for the state.
//!
//! **Grants.** `put_grant` replaces the grant of its key, with the kernel's `granted_at` (RFC
//! 3339). A grant written through [`Grants::insert`](crate::Grants::insert) has no conversation
//! or call: `grant` and `grants` report it with [`UNKNOWN`] for both. `grant` reads the database
//! every time (no cache), so a [`Grants::revoke`](crate::Grants::revoke) by `lineup grants
//! revoke` in another process counts at the next decision.
//!
//! **Audit** (R-CAP-6). Each kernel [`AuditRecord`](lineup_host_core::AuditRecord) becomes one
//! [`AuditEntry`], appended and chained by [`AuditLog::append`](crate::AuditLog::append):
//! conversation, call id, agent, capability, version (`""` when `None`), risk, arguments digest,
//! decision, decision source and status as their snake_case protocol names, or [`NONE`] when the
//! kernel leaves one `None`. The store stamps its own time on the entry (`time`, in the chain);
//! the kernel's `at` is not kept, and neither are its `kind` and `note`, which the store's
//! chained entry has no field for.

use lineup_host_core as kernel;
use lineup_host_core::{AgentIdentity, CapabilityName, CapabilityStore, RevisionEpoch};
use rusqlite::{params, OptionalExtension, Row};
use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::calls::{invalid_transition, CallState, RawCall, COLUMNS};
use crate::error::excerpt;
use crate::{AuditDetail, AuditEntry, GrantKey, RevokeScope, Sha256Hex, Store, StoreError};

/// The placeholder for a grant's conversation and call when the grant was written through
/// [`Grants::insert`](crate::Grants::insert), which does not record them.
pub const UNKNOWN: &str = "unknown";

/// The placeholder in an audit entry for a risk, decision, decision source or status the kernel
/// left `None` (say, the decision of a `received` record).
pub const NONE: &str = "none";

impl CapabilityStore for Store {
    type Error = StoreError;

    /// `prefix << 32 | counter` (see the module docs), committed before it is returned (R-INV-2).
    fn next_revision_epoch(&mut self) -> Result<RevisionEpoch, StoreError> {
        let (epoch, counter) = self.revisions().next_counter()?;
        let prefix = epoch
            .get(..8)
            .filter(|_| epoch.len() == 16 && epoch.bytes().all(|b| b.is_ascii_hexdigit()))
            .and_then(|high| u32::from_str_radix(high, 16).ok())
            .ok_or_else(|| StoreError::Corrupt {
                table: "meta",
                key: "epoch".into(),
                detail: format!("'{}' is not 16 hex digits", excerpt(&epoch)),
            })?;
        let counter = u32::try_from(counter).map_err(|_| StoreError::EpochsExhausted {
            path: self.path().to_owned(),
        })?;
        Ok(RevisionEpoch(
            (u64::from(prefix) << 32) | u64::from(counter),
        ))
    }

    /// Every record not `finished`, oldest first; a row that cannot be read as a kernel record
    /// is left out (see the module docs).
    fn unfinished_calls(&mut self) -> Result<Vec<kernel::CallRecord>, StoreError> {
        let sql = format!(
            "SELECT {COLUMNS}, record, owner, host FROM calls WHERE state <> 'finished' ORDER BY created_at, rowid"
        );
        let mut records = Vec::new();
        for row in self.select_all("select from calls", &sql, [], KernelRow::from_row)? {
            // R-CAP-5: a call another live host process has is its to finish, not ours.
            if row
                .host
                .as_deref()
                .is_some_and(|h| Some(h) != self.host() && crate::lease::alive(self, h))
            {
                continue;
            }
            records.extend(row.into_kernel()?);
        }
        Ok(records)
    }

    fn in_flight_elsewhere(&mut self, record: &kernel::CallRecord) -> Result<bool, StoreError> {
        let owner = record
            .owner
            .as_ref()
            .map_or_else(String::new, |o| o.as_str().to_owned());
        let host: Option<String> = self
            .conn()
            .query_row(
                "SELECT host FROM calls WHERE owner = ?1 AND conversation_id = ?2 AND call_id = ?3",
                params![
                    owner,
                    record.key.conversation_id.as_str(),
                    record.key.call_id.as_str()
                ],
                |r| r.get(0),
            )
            .optional()
            .map_err(self.sqlite("select from calls"))?
            .flatten();
        Ok(host.is_some_and(|h| Some(h.as_str()) != self.host() && crate::lease::alive(self, &h)))
    }

    /// The record `owner` made of `key`, else another identity's record of it; `None` also for
    /// a row that cannot be read as a kernel record (see the module docs).
    fn call(
        &mut self,
        owner: &AgentIdentity,
        key: &kernel::CallKey,
    ) -> Result<Option<kernel::CallRecord>, StoreError> {
        let sql = format!(
            "SELECT {COLUMNS}, record, owner, host FROM calls WHERE conversation_id = ?1 AND call_id = ?2
             ORDER BY owner = ?3 DESC LIMIT 1"
        );
        self.conn()
            .query_row(
                &sql,
                params![
                    key.conversation_id.as_str(),
                    key.call_id.as_str(),
                    owner.as_str()
                ],
                KernelRow::from_row,
            )
            .optional()
            .map_err(self.sqlite("select from calls"))?
            .map_or(Ok(None), KernelRow::into_kernel)
    }

    /// Inserts or replaces the record of its key, forward only, in one `BEGIN IMMEDIATE`
    /// transaction committed before it returns (R-CAP-5; see the module docs).
    fn put_call(&mut self, record: &kernel::CallRecord) -> Result<(), StoreError> {
        let row = ColumnsOf::call(record)?;
        let key = crate::CallKey::new(
            record.key.conversation_id.as_str(),
            record.key.call_id.as_str(),
        );
        let owner = record
            .owner
            .as_ref()
            .map_or_else(String::new, |o| o.as_str().to_owned());
        let tx = self.write("begin kernel call write")?;
        let existing: Option<String> = tx
            .query_row(
                "SELECT state FROM calls WHERE owner = ?3 AND conversation_id = ?1 AND call_id = ?2",
                params![key.conversation_id, key.call_id, owner],
                |r| r.get(0),
            )
            .optional()
            .map_err(self.sqlite("select from calls"))?;
        if let Some(existing) = existing {
            let from = CallState::parse(&existing).ok_or_else(|| StoreError::Corrupt {
                table: "calls",
                key: format!("({}, {})", key.conversation_id, key.call_id),
                detail: format!("unknown state '{}'", excerpt(&existing)),
            })?;
            if !may_replace(from, row.state) {
                return Err(invalid_transition(&key, from, row.state));
            }
        }
        tx.execute(
            "INSERT INTO calls (conversation_id, call_id, capability, version, args_digest, state,
                                status, result, message, error, created_at, updated_at, record,
                                owner, host)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?11, ?12, ?13, ?14)
             ON CONFLICT (owner, conversation_id, call_id) DO UPDATE SET host = excluded.host,
                capability = excluded.capability, version = excluded.version,
                args_digest = excluded.args_digest, state = excluded.state,
                status = excluded.status, result = excluded.result, message = excluded.message,
                error = excluded.error, updated_at = excluded.updated_at, record = excluded.record",
            params![
                key.conversation_id,
                key.call_id,
                record.capability.as_str(),
                row.version,
                row.args_digest.as_str(),
                row.state.as_str(),
                row.status,
                row.result,
                row.message,
                row.error,
                crate::db::now_rfc3339(),
                row.json,
                owner,
                self.host()
            ],
        )
        .map_err(self.sqlite("write calls"))?;
        tx.commit().map_err(self.sqlite("commit kernel call write"))
    }

    /// The grant of `key`, read from the database now (no cache).
    ///
    /// # Errors
    ///
    /// [`StoreError::Corrupt`] for a row whose `granted_at`, conversation or call the kernel
    /// cannot read; [`StoreError::Sqlite`].
    fn grant(&mut self, key: &kernel::GrantKey) -> Result<Option<kernel::GrantRecord>, StoreError> {
        let row = self
            .conn()
            .query_row(
                "SELECT agent, capability, version, granted_at, conversation_id, call_id
                 FROM grants WHERE agent = ?1 AND capability = ?2 AND version = ?3",
                params![
                    key.agent.as_str(),
                    key.capability.as_str(),
                    key.version.as_str()
                ],
                GrantRow::from_row,
            )
            .optional()
            .map_err(self.sqlite("select from grants"))?;
        row.map(|row| {
            let name = row.name();
            row.into_kernel().ok_or_else(|| StoreError::Corrupt {
                table: "grants",
                key: name,
                detail: "not readable as a kernel grant".into(),
            })
        })
        .transpose()
    }

    /// Replaces the grant of its key, with the kernel's time, conversation and call.
    fn put_grant(&mut self, grant: &kernel::GrantRecord) -> Result<(), StoreError> {
        let granted_at = serde_text(&grant.granted_at, "grant time")?;
        let tx = self.write("begin kernel grant write")?;
        tx.execute(
            "INSERT INTO grants (agent, capability, version, granted_at, conversation_id, call_id)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT (agent, capability, version) DO UPDATE SET
                granted_at = excluded.granted_at, conversation_id = excluded.conversation_id,
                call_id = excluded.call_id",
            params![
                grant.key.agent.as_str(),
                grant.key.capability.as_str(),
                grant.key.version.as_str(),
                granted_at,
                grant.conversation_id.as_str(),
                grant.call_id.as_str()
            ],
        )
        .map_err(self.sqlite("write grants"))?;
        tx.commit()
            .map_err(self.sqlite("commit kernel grant write"))
    }

    /// Every grant the kernel can read, ordered by agent, capability, version; a row it cannot
    /// (say, an agent written by `Grants::insert` that is not a valid kernel identity) is left out.
    fn grants(&mut self) -> Result<Vec<kernel::GrantRecord>, StoreError> {
        let rows = self.select_all(
            "select from grants",
            "SELECT agent, capability, version, granted_at, conversation_id, call_id
             FROM grants ORDER BY agent, capability, version",
            [],
            GrantRow::from_row,
        )?;
        Ok(rows.into_iter().filter_map(GrantRow::into_kernel).collect())
    }

    /// [`Grants::revoke`](crate::Grants::revoke) of exactly this grant; effective at the next decision.
    fn revoke_grant(&mut self, key: &kernel::GrantKey) -> Result<bool, StoreError> {
        let key = GrantKey::new(
            key.agent.as_str(),
            key.capability.as_str(),
            key.version.as_str(),
        );
        Ok(Store::grants(self).revoke(&RevokeScope::Exact(key))? > 0)
    }

    /// Appends the record as an [`AuditEntry`], chained (R-CAP-6; the mapping and its
    /// placeholders are in the module docs).
    fn remember_offered(
        &mut self,
        agent: &AgentIdentity,
        capabilities: &[CapabilityName],
    ) -> Result<(), StoreError> {
        let names: Vec<&str> = capabilities.iter().map(CapabilityName::as_str).collect();
        Store::offered(self).remember(agent.as_str(), &names)
    }

    fn offered(&mut self, agent: &AgentIdentity) -> Result<Vec<CapabilityName>, StoreError> {
        // A name this build cannot read is left out, never a panic.
        Ok(Store::offered(self)
            .list(agent.as_str())?
            .into_iter()
            .filter_map(|name| CapabilityName::try_from(name).ok())
            .collect())
    }

    fn append_audit(&mut self, record: &kernel::AuditRecord) -> Result<(), StoreError> {
        let entry = AuditEntry {
            conversation_id: record.call.conversation_id.as_str().to_owned(),
            call_id: record.call.call_id.as_str().to_owned(),
            agent: record.agent.as_ref().map(|a| a.as_str().to_owned()),
            capability: record.capability.as_str().to_owned(),
            version: record
                .version
                .as_ref()
                .map_or_else(String::new, |v| v.as_str().to_owned()),
            risk: name_or_none(record.risk.as_ref(), "risk")?,
            args_digest: Sha256Hex::try_from(record.arguments_digest.0.as_str())?,
            decision: name_or_none(record.decision.as_ref(), "decision")?,
            decision_source: name_or_none(record.source.as_ref(), "decision source")?,
            status: name_or_none(record.status.as_ref(), "status")?,
            // R-CAP-6: why, never the refused payload.
            detail: AuditDetail {
                kind: Some(serde_text(&record.kind, "audit kind")?),
                code: record.error.as_ref().map(|e| e.code.to_string()),
                field: record.error.as_ref().and_then(|e| e.field.clone()),
                note: (!record.note.is_empty()).then(|| record.note.clone()),
                count: record.count,
            },
        };
        self.audit().append(&entry).map(drop)
    }
}

/// Whether a record in state `from` may be replaced by one in state `to`: forward only, and
/// `running` or `finished` only once (R-CAP-5).
fn may_replace(from: CallState, to: CallState) -> bool {
    fn rank(state: CallState) -> u8 {
        match state {
            CallState::Received => 0,
            CallState::AwaitingConsent => 1,
            CallState::Running => 2,
            CallState::Finished => 3,
        }
    }
    rank(to) > rank(from)
        || (from == to && matches!(to, CallState::Received | CallState::AwaitingConsent))
}

/// The column values of a kernel record.
struct ColumnsOf {
    version: String,
    args_digest: Sha256Hex,
    state: CallState,
    status: Option<String>,
    result: Option<String>,
    message: Option<String>,
    error: Option<String>,
    json: String,
}

impl ColumnsOf {
    fn call(record: &kernel::CallRecord) -> Result<Self, StoreError> {
        let state = CallState::parse(record.state.as_str()).ok_or(StoreError::InvalidValue {
            what: "call state",
            value: String::new(),
            hint: "a state this store knows: received, awaiting_consent, running, finished",
        })?;
        let (status, result, message, error) = match &record.state {
            kernel::CallState::Finished { result } => (
                Some(serde_text(&result.status, "call status")?),
                result.result.as_ref().map(json_text).transpose()?,
                result.message.clone(),
                result.error.as_ref().map(json_text).transpose()?,
            ),
            _ => (None, None, None, None),
        };
        Ok(Self {
            version: record
                .version
                .as_ref()
                .map_or_else(String::new, |v| v.as_str().to_owned()),
            args_digest: Sha256Hex::try_from(record.arguments_digest.0.as_str())?,
            state,
            status,
            result,
            message,
            error,
            json: json_text(record)?,
        })
    }
}

/// A `calls` row as the kernel reads it: the store's columns and `record`.
struct KernelRow {
    raw: RawCall,
    record: Option<String>,
    /// The `owner` column: `''` for rows from before owners were kept.
    owner: String,
    /// The `host` column: the lease scope of the process that wrote the row.
    host: Option<String>,
}

impl KernelRow {
    /// Reads a row selected as `{COLUMNS}, record, owner, host`.
    fn from_row(row: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            raw: RawCall::from_row(row)?,
            record: row.get("record")?,
            owner: row.get("owner")?,
            host: row.get("host")?,
        })
    }

    /// The kernel record: `record` when it is there and its state is the row's; otherwise
    /// rebuilt from the columns, or `None` when the kernel cannot read that (module docs).
    ///
    /// # Errors
    ///
    /// [`StoreError::Corrupt`] when `record` is there but is not a kernel record of this key:
    /// only this store writes it, so that is damage, not an older row.
    fn into_kernel(self) -> Result<Option<kernel::CallRecord>, StoreError> {
        let mut value = match &self.record {
            Some(text) => {
                let corrupt = |detail: String| StoreError::Corrupt {
                    table: "calls",
                    key: format!(
                        "({}, {})",
                        self.raw.key.conversation_id, self.raw.key.call_id
                    ),
                    detail,
                };
                let stored: kernel::CallRecord = serde_json::from_str(text)
                    .map_err(|e| corrupt(format!("record is not a kernel call record: {e}")))?;
                if stored.key.conversation_id.as_str() != self.raw.key.conversation_id
                    || stored.key.call_id.as_str() != self.raw.key.call_id
                {
                    return Err(corrupt(format!("record is of another key, {}", stored.key)));
                }
                if stored.state.as_str() == self.raw.state {
                    let owner = AgentIdentity::try_from(self.owner.as_str()).ok();
                    return Ok(Some(stored.with_owner(owner)));
                }
                // Moved by the store's own call API: the columns win for the state.
                serde_json::to_value(&stored).unwrap_or(Value::Null)
            }
            None => self.legacy(),
        };
        let Some(fields) = value.as_object_mut() else {
            return Ok(None);
        };
        let Some(state) = self.state_value() else {
            return Ok(None);
        };
        fields.insert("state".into(), state);
        fields.insert(
            "updated_at".into(),
            Value::String(self.raw.updated_at.clone()),
        );
        // The column is the owner, whatever `record` says: a row from before answers no one.
        let owner = AgentIdentity::try_from(self.owner.as_str()).ok();
        let record: Option<kernel::CallRecord> = serde_json::from_value(value).ok();
        Ok(record.map(|r| r.with_owner(owner)))
    }

    /// The kernel record's fields other than its state, from the columns of a row that has no
    /// `record`.
    fn legacy(&self) -> Value {
        let version = kernel::OpaqueVersion::try_from(self.raw.version.as_str())
            .ok()
            .map_or(Value::Null, |v| Value::String(v.as_str().to_owned()));
        json!({
            "key": {"conversation_id": self.raw.key.conversation_id, "call_id": self.raw.key.call_id},
            "epoch": 0,
            "agent": null,
            "capability": self.raw.capability,
            "version": version,
            "risk": null,
            "arguments_digest": self.raw.args_digest,
            "received_at": self.raw.created_at,
        })
    }

    /// The kernel's serde form of the row's state (a finished call's `app.result` rebuilt from
    /// `status`, `result`, `message`, `error`); `None` for a state or status it does not know.
    fn state_value(&self) -> Option<Value> {
        let state = CallState::parse(&self.raw.state)?;
        if state != CallState::Finished {
            return Some(json!({ "state": state.as_str() }));
        }
        let mut result = Map::new();
        result.insert(
            "call_id".into(),
            Value::String(self.raw.key.call_id.clone()),
        );
        let status: kernel::Status =
            serde_json::from_value(Value::String(self.raw.status.clone()?)).ok()?;
        result.insert("status".into(), serde_json::to_value(status).ok()?);
        if let Some(object) = self
            .raw
            .result
            .as_deref()
            .and_then(|text| serde_json::from_str::<kernel::JsonObject>(text).ok())
        {
            result.insert("result".into(), serde_json::to_value(object).ok()?);
        }
        if let Some(message) = &self.raw.message {
            result.insert("message".into(), Value::String(message.clone()));
        }
        if let Some(error) = self
            .raw
            .error
            .as_deref()
            .and_then(|text| serde_json::from_str::<kernel::AppError>(text).ok())
        {
            result.insert("error".into(), serde_json::to_value(error).ok()?);
        }
        Some(json!({"state": "finished", "result": result}))
    }
}

/// A `grants` row as the kernel reads it.
struct GrantRow {
    agent: String,
    capability: String,
    version: String,
    granted_at: String,
    conversation_id: Option<String>,
    call_id: Option<String>,
}

impl GrantRow {
    fn from_row(row: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            agent: row.get(0)?,
            capability: row.get(1)?,
            version: row.get(2)?,
            granted_at: row.get(3)?,
            conversation_id: row.get(4)?,
            call_id: row.get(5)?,
        })
    }

    /// The grant's key, for an error message.
    fn name(&self) -> String {
        format!("({}, {}, {})", self.agent, self.capability, self.version)
    }

    /// The kernel's grant, with [`UNKNOWN`] for a conversation or call the row lacks; `None`
    /// when the kernel cannot read a value.
    fn into_kernel(self) -> Option<kernel::GrantRecord> {
        serde_json::from_value(json!({
            "key": {"agent": self.agent, "capability": self.capability, "version": self.version},
            "granted_at": self.granted_at,
            "conversation_id": self.conversation_id.as_deref().unwrap_or(UNKNOWN),
            "call_id": self.call_id.as_deref().unwrap_or(UNKNOWN),
        }))
        .ok()
    }
}

/// A value's serde form as JSON text.
fn json_text<T: Serialize>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| StoreError::InvalidValue {
        what: "kernel record",
        value: excerpt(&e.to_string()),
        hint: "it must serialize to JSON",
    })
}

/// A value whose serde form is a string (a status, a risk, a decision, a time), as that string.
fn serde_text<T: Serialize>(value: &T, what: &'static str) -> Result<String, StoreError> {
    match serde_json::to_value(value) {
        Ok(Value::String(text)) => Ok(text),
        other => Err(StoreError::InvalidValue {
            what,
            value: excerpt(&format!("{other:?}")),
            hint: "its serde form must be a string",
        }),
    }
}

/// [`serde_text`] of `value`, or [`NONE`].
fn name_or_none<T: Serialize>(value: Option<&T>, what: &'static str) -> Result<String, StoreError> {
    value.map_or_else(|| Ok(NONE.to_owned()), |v| serde_text(v, what))
}
