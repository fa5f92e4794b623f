//! Call records: one per `(conversation_id, call_id)`, written before anything runs, so a call
//! runs at most once and a repeat gets the stored result, also across restarts (R-CAP-5).

use std::fmt;

use lineup_host_core::Fingerprint;
use rusqlite::{params, OptionalExtension, Row};
use serde::{Deserialize, Serialize};

use crate::db::now_rfc3339;
use crate::error::excerpt;
pub use crate::state::CallState;
use crate::{Sha256Hex, Store, StoreError};

/// The key of a call record.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CallKey {
    /// The conversation (agent session) the call belongs to (R-SES-1).
    pub conversation_id: String,
    /// The agent's `call_id`.
    pub call_id: String,
}

impl CallKey {
    /// A key from its two parts.
    pub fn new(conversation_id: impl Into<String>, call_id: impl Into<String>) -> Self {
        Self {
            conversation_id: conversation_id.into(),
            call_id: call_id.into(),
        }
    }
}

/// A call to record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewCall {
    /// The call's key.
    pub key: CallKey,
    /// The capability's name.
    pub capability: String,
    /// The capability's version.
    pub version: String,
    /// The SHA-256 of the call's arguments, as the caller canonicalises them; a repeat of the
    /// key with another digest is a reused `call_id`.
    pub args_digest: Sha256Hex,
}

/// The final result of a call, as the `app.result` that answered it. `Debug` shows the result
/// and the message as [`Fingerprint`]s: the result is the capability's data (a picked file's
/// content, say), a message may quote invalid arguments, and logs reach journald.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallOutcome {
    /// The `app.result` status (`completed`, `rejected`, `cancelled`, `expired`, `failed`,
    /// `unsupported`); the store does not interpret it.
    pub status: String,
    /// The `result` object as JSON text, when there is one.
    pub result: Option<String>,
    /// The human-readable `message`, when there is one.
    pub message: Option<String>,
    /// The `error` object as JSON text, when there is one.
    pub error: Option<String>,
}

impl fmt::Debug for CallOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallOutcome")
            .field("status", &self.status)
            .field("result", &self.result.as_ref().map(Fingerprint::of))
            .field("message", &self.message.as_ref().map(Fingerprint::of))
            .field("error", &self.error)
            .finish()
    }
}

/// A stored call record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallRecord {
    /// The call's key.
    pub key: CallKey,
    /// The capability's name.
    pub capability: String,
    /// The capability's version.
    pub version: String,
    /// The SHA-256 of the arguments.
    pub args_digest: Sha256Hex,
    /// Where the call is.
    pub state: CallState,
    /// The result, once `finished`.
    pub outcome: Option<CallOutcome>,
    /// When it was recorded (RFC 3339, UTC).
    pub created_at: String,
    /// When it last changed (RFC 3339, UTC).
    pub updated_at: String,
}

/// What [`Calls::insert`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inserted {
    /// The key was new; this is the record just written, `received`.
    New(CallRecord),
    /// The key was there: this is the record as stored, whatever its capability and digest.
    Existing(CallRecord),
}

impl Inserted {
    /// The record, new or existing.
    pub fn record(&self) -> &CallRecord {
        match self {
            Self::New(record) | Self::Existing(record) => record,
        }
    }
}

/// The columns [`RawCall::from_row`] reads, in its order.
pub(crate) const COLUMNS: &str =
    "conversation_id, call_id, capability, version, args_digest, state, \
                       status, result, message, error, created_at, updated_at";

/// The call records of a [`Store`] ([`Store::calls`]), in table `calls` (R-CAP-5).
///
/// Invariants: one record per key written here (owner `''`; the kernel's records are kept per
/// owner and key, see [`kernel`](crate::kernel)), `received` before anything runs; a record only
/// moves forward in [`CallState`]'s order, each move committed before it returns, and a call
/// already `running` or `finished` is never moved to `running` again, so of the callers sharing
/// the data directory only the one whose move to `running` returned `Ok` runs it; a `finished`
/// record keeps its outcome for good.
#[derive(Debug, Clone, Copy)]
pub struct Calls<'s> {
    store: &'s Store,
}

impl<'s> Calls<'s> {
    /// The call records of `store`.
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Records a call as `received` unless its key is there; atomically (`BEGIN IMMEDIATE`), so
    /// of two hosts inserting the same key at once one gets [`Inserted::New`] and the other
    /// [`Inserted::Existing`].
    ///
    /// # Errors
    ///
    /// [`StoreError::Sqlite`], [`StoreError::Corrupt`].
    pub fn insert(&self, call: &NewCall) -> Result<Inserted, StoreError> {
        let tx = self.store.write("begin call insert")?;
        let now = now_rfc3339();
        let added = tx
            .execute(
                "INSERT INTO calls (conversation_id, call_id, capability, version, args_digest,
                                    state, created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, 'received', ?6, ?6) ON CONFLICT DO NOTHING",
                params![
                    call.key.conversation_id,
                    call.key.call_id,
                    call.capability,
                    call.version,
                    call.args_digest.as_str(),
                    now
                ],
            )
            .map_err(self.store.sqlite("insert into calls"))?;
        let record = self.select(&tx, &call.key)?;
        tx.commit()
            .map_err(self.store.sqlite("commit call insert"))?;
        let record = record.ok_or_else(|| not_found(&call.key))?;
        Ok(if added == 1 {
            Inserted::New(record)
        } else {
            Inserted::Existing(record)
        })
    }

    /// The record of `key`, if any.
    ///
    /// # Errors
    ///
    /// [`StoreError::Sqlite`], [`StoreError::Corrupt`].
    pub fn get(&self, key: &CallKey) -> Result<Option<CallRecord>, StoreError> {
        self.select(self.store.conn(), key)
    }

    /// Moves a call forward to `awaiting_consent` or `running` and commits.
    ///
    /// **`running` is durable before this returns**: the caller must wait for it to return `Ok`
    /// before it runs the handler, and must not run it on an error. A call already `running`
    /// or `finished` (say, taken by another host on the same data directory) is an
    /// [`StoreError::InvalidTransition`], so only one caller ever runs it (R-CAP-5).
    ///
    /// # Errors
    ///
    /// [`StoreError::CallNotFound`], [`StoreError::InvalidTransition`] (also for `finished`:
    /// use [`Calls::finish`]), [`StoreError::Sqlite`], [`StoreError::Corrupt`].
    pub fn advance(&self, key: &CallKey, to: CallState) -> Result<CallRecord, StoreError> {
        let tx = self.store.write("begin call update")?;
        let current = self.select(&tx, key)?.ok_or_else(|| not_found(key))?;
        if !current.state.may_advance_to(to) {
            return Err(invalid_transition(key, current.state, to));
        }
        tx.execute(
            "UPDATE calls SET state = ?3, updated_at = ?4
             WHERE owner = '' AND conversation_id = ?1 AND call_id = ?2",
            params![key.conversation_id, key.call_id, to.as_str(), now_rfc3339()],
        )
        .map_err(self.store.sqlite("update calls"))?;
        let record = self.select(&tx, key)?.ok_or_else(|| not_found(key))?;
        tx.commit()
            .map_err(self.store.sqlite("commit call update"))?;
        Ok(record)
    }

    /// Stores the final result and marks the call `finished`, from any other state; committed
    /// before it returns, so the caller may then send the `app.result`.
    ///
    /// # Errors
    ///
    /// [`StoreError::InvalidValue`] when `result` or `error` is not JSON or the status is empty,
    /// [`StoreError::CallNotFound`], [`StoreError::InvalidTransition`] when already finished,
    /// [`StoreError::Sqlite`], [`StoreError::Corrupt`].
    pub fn finish(&self, key: &CallKey, outcome: &CallOutcome) -> Result<CallRecord, StoreError> {
        check_outcome(outcome)?;
        let tx = self.store.write("begin call finish")?;
        let current = self.select(&tx, key)?.ok_or_else(|| not_found(key))?;
        if current.state == CallState::Finished {
            return Err(invalid_transition(key, current.state, CallState::Finished));
        }
        tx.execute(
            "UPDATE calls SET state = 'finished', status = ?3, result = ?4, message = ?5,
                              error = ?6, updated_at = ?7
             WHERE owner = '' AND conversation_id = ?1 AND call_id = ?2",
            params![
                key.conversation_id,
                key.call_id,
                outcome.status,
                outcome.result,
                outcome.message,
                outcome.error,
                now_rfc3339()
            ],
        )
        .map_err(self.store.sqlite("update calls"))?;
        let record = self.select(&tx, key)?.ok_or_else(|| not_found(key))?;
        tx.commit()
            .map_err(self.store.sqlite("commit call finish"))?;
        Ok(record)
    }

    /// Every call not `finished`, oldest first: after a restart, a `received` or
    /// `awaiting_consent` call never ran (answer `cancelled`), a `running` one may have (answer
    /// `failed`, outcome unknown; never run it again).
    ///
    /// With several hosts on one data directory this lists the others' calls in flight too:
    /// recover only the conversations this host owns.
    ///
    /// # Errors
    ///
    /// [`StoreError::Sqlite`], [`StoreError::Corrupt`].
    pub fn unfinished(&self) -> Result<Vec<CallRecord>, StoreError> {
        let sql = format!(
            "SELECT {COLUMNS} FROM calls WHERE state <> 'finished' ORDER BY created_at, rowid"
        );
        self.store
            .select_all("select from calls", &sql, [], RawCall::from_row)?
            .into_iter()
            .map(RawCall::into_record)
            .collect()
    }

    fn select(
        &self,
        conn: &rusqlite::Connection,
        key: &CallKey,
    ) -> Result<Option<CallRecord>, StoreError> {
        let sql =
            format!("SELECT {COLUMNS} FROM calls WHERE conversation_id = ?1 AND call_id = ?2 ORDER BY owner <> '' LIMIT 1");
        conn.query_row(
            &sql,
            params![key.conversation_id, key.call_id],
            RawCall::from_row,
        )
        .optional()
        .map_err(self.store.sqlite("select from calls"))?
        .map(RawCall::into_record)
        .transpose()
    }
}

/// A row of `calls` ([`COLUMNS`]) before its text columns are checked.
pub(crate) struct RawCall {
    pub(crate) key: CallKey,
    pub(crate) capability: String,
    pub(crate) version: String,
    pub(crate) args_digest: String,
    pub(crate) state: String,
    pub(crate) status: Option<String>,
    pub(crate) result: Option<String>,
    pub(crate) message: Option<String>,
    pub(crate) error: Option<String>,
    pub(crate) created_at: String,
    pub(crate) updated_at: String,
}

impl RawCall {
    /// The row's [`COLUMNS`], from index 0.
    pub(crate) fn from_row(row: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            key: CallKey {
                conversation_id: row.get(0)?,
                call_id: row.get(1)?,
            },
            capability: row.get(2)?,
            version: row.get(3)?,
            args_digest: row.get(4)?,
            state: row.get(5)?,
            status: row.get(6)?,
            result: row.get(7)?,
            message: row.get(8)?,
            error: row.get(9)?,
            created_at: row.get(10)?,
            updated_at: row.get(11)?,
        })
    }

    fn into_record(self) -> Result<CallRecord, StoreError> {
        let corrupt = |detail: String| StoreError::Corrupt {
            table: "calls",
            key: format!("({}, {})", self.key.conversation_id, self.key.call_id),
            detail,
        };
        let state = CallState::parse(&self.state)
            .ok_or_else(|| corrupt(format!("unknown state '{}'", excerpt(&self.state))))?;
        let args_digest =
            Sha256Hex::try_from(self.args_digest.as_str()).map_err(|e| corrupt(e.to_string()))?;
        let outcome = match (state, self.status) {
            (CallState::Finished, Some(status)) => Some(CallOutcome {
                status,
                result: self.result,
                message: self.message,
                error: self.error,
            }),
            (CallState::Finished, None) => return Err(corrupt("finished without a status".into())),
            _ => None,
        };
        Ok(CallRecord {
            key: self.key,
            capability: self.capability,
            version: self.version,
            args_digest,
            state,
            outcome,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

fn check_outcome(outcome: &CallOutcome) -> Result<(), StoreError> {
    if outcome.status.is_empty() {
        return Err(StoreError::InvalidValue {
            what: "call status",
            value: String::new(),
            hint: "give the app.result status, like 'completed'",
        });
    }
    for (what, text) in [
        ("result JSON", &outcome.result),
        ("error JSON", &outcome.error),
    ] {
        if let Some(text) = text {
            if serde_json::from_str::<serde::de::IgnoredAny>(text).is_err() {
                // The text is the capability's result: named by its fingerprint, never quoted.
                return Err(StoreError::InvalidValue {
                    what,
                    value: Fingerprint::of(text).to_string(),
                    hint: "it must be JSON text",
                });
            }
        }
    }
    Ok(())
}

fn not_found(key: &CallKey) -> StoreError {
    StoreError::CallNotFound {
        conversation_id: key.conversation_id.clone(),
        call_id: key.call_id.clone(),
    }
}

pub(crate) fn invalid_transition(key: &CallKey, from: CallState, to: CallState) -> StoreError {
    StoreError::InvalidTransition {
        conversation_id: key.conversation_id.clone(),
        call_id: key.call_id.clone(),
        from,
        to,
    }
}
