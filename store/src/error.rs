//! `StoreError`, the one error type of this crate: every variant names the file, table or key it
//! is about.

use std::io;
use std::path::PathBuf;

use crate::state::CallState;

/// Everything that can go wrong in the store.
///
/// Variants about the database name its file; variants about a record name its table and key;
/// the three audit-chain variants name the first bad sequence number (R-CAP-6).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// No data directory was given and neither `XDG_DATA_HOME` (absolute) nor `HOME` is set.
    #[error("no data directory: set XDG_DATA_HOME or HOME, or choose one with --data-dir")]
    NoDataDir,

    /// The data directory could not be created.
    #[error("cannot create data directory {path}: {source}")]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },

    /// [`Store::open_existing`](crate::Store::open_existing) found no store file.
    #[error("no lineup store at {path}: check --data-dir (a host creates it on first run)")]
    NotFound {
        /// The file that was looked for.
        path: PathBuf,
    },

    /// SQLite refused an operation; `op` says what the store was doing, on which table.
    #[error("{path}: {op}: {source}")]
    Sqlite {
        /// The database file.
        path: PathBuf,
        /// What the store was doing, like `insert into calls`.
        op: &'static str,
        /// SQLite's error.
        source: rusqlite::Error,
    },

    /// The database did not switch to write-ahead logging (say, on a file system without shared
    /// memory), so concurrent hosts and crash safety could not be promised.
    #[error("{path}: journal_mode is '{mode}', not 'wal': put the data directory on a local file system")]
    NotWal {
        /// The database file.
        path: PathBuf,
        /// The journal mode SQLite reported.
        mode: String,
    },

    /// The database was written by a newer lineup with a schema this one does not know.
    #[error("{path}: schema version {found} is newer than the {supported} this lineup knows: upgrade lineup")]
    SchemaTooNew {
        /// The database file.
        path: PathBuf,
        /// `PRAGMA user_version` of the file.
        found: u32,
        /// The newest version this build migrates to.
        supported: u32,
    },

    /// No call record has this key (table `calls`).
    #[error("calls: no record for conversation '{conversation_id}' call '{call_id}'")]
    CallNotFound {
        /// The conversation of the key.
        conversation_id: String,
        /// The call id of the key.
        call_id: String,
    },

    /// A call record cannot go from its state to the one asked for (table `calls`). A second
    /// host trying to run a call another already marked `running` gets this (R-CAP-5).
    #[error(
        "calls: conversation '{conversation_id}' call '{call_id}' cannot go from {from} to {to}"
    )]
    InvalidTransition {
        /// The conversation of the key.
        conversation_id: String,
        /// The call id of the key.
        call_id: String,
        /// The state the record is in.
        from: CallState,
        /// The state that was asked for.
        to: CallState,
    },

    /// A value given to the store is not acceptable, like result text that is not JSON or a
    /// digest that is not 64 lowercase hex digits.
    #[error("invalid {what} '{value}': {hint}")]
    InvalidValue {
        /// Which value, like `args digest` or `result JSON`.
        what: &'static str,
        /// The value, cut to 80 characters.
        value: String,
        /// What it should be.
        hint: &'static str,
    },

    /// A registry change or load of app `id` is refused (not installed, disabled, not newer,
    /// nothing to roll back to …).
    #[error("app {id}: {reason}")]
    App {
        /// The app id.
        id: String,
        /// Why, naming the versions involved.
        reason: String,
    },

    /// A package is refused, or a cached one no longer has its recorded digest.
    #[error(transparent)]
    Package(lineup_packages::PackageError),

    /// A file of the package cache could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },

    /// A stored row could not be read back as this build expects (table and key named).
    #[error("{table}: record {key} is unreadable: {detail}")]
    Corrupt {
        /// The table.
        table: &'static str,
        /// The record's key.
        key: String,
        /// What was wrong.
        detail: String,
    },

    /// Audit chain: the record with this sequence number is missing, the next one follows a
    /// gap (a removed record), or the log does not start at 1.
    #[error("audit: record {seq} is missing (the chain jumps to {found})")]
    AuditRecordMissing {
        /// The sequence number that should have come next.
        seq: u64,
        /// The sequence number that came instead.
        found: u64,
    },

    /// Audit chain: the record's digest does not match its content (an edited record).
    #[error("audit: record {seq} was altered: its digest does not match its content")]
    AuditRecordAltered {
        /// The sequence number of the record.
        seq: u64,
    },

    /// Audit chain: the record's `prev` is not the digest of the record before it.
    #[error("audit: record {seq} does not link to record {}: its prev is not that record's digest", .seq.saturating_sub(1))]
    AuditLinkBroken {
        /// The sequence number of the record.
        seq: u64,
    },

    /// The revision counter is past 2³² − 1, the most revision epochs one database can hand out
    /// to the capability kernel (R-INV-2; see [`crate::kernel`]).
    #[error("{path}: the revision counter is past 4294967295: this database hands out no more revision epochs; start a new data directory")]
    EpochsExhausted {
        /// The database file.
        path: PathBuf,
    },

    /// Writing an export failed.
    #[error("cannot write the audit export: {0}")]
    Export(#[source] io::Error),
}

impl StoreError {
    /// The sequence number of the first bad audit record, for the three audit-chain variants.
    pub fn audit_seq(&self) -> Option<u64> {
        match self {
            Self::AuditRecordMissing { seq, .. }
            | Self::AuditRecordAltered { seq }
            | Self::AuditLinkBroken { seq } => Some(*seq),
            _ => None,
        }
    }
}

/// Cuts a value for an error message.
pub(crate) fn excerpt(value: &str) -> String {
    value.chars().take(80).collect()
}
