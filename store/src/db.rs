//! `Store`: one SQLite connection to the data directory's database, opened with WAL,
//! `synchronous=FULL` and a busy timeout, and migrated to the current schema.

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, Transaction};

use crate::instances::OpenInstances;
use crate::migrate;
use crate::tx::{begin_immediate, is_busy, retry_busy};
use crate::{AppIds, Apps, AuditLog, Calls, Grants, Offered, Policy, Revisions, StoreError};

/// The database file's name inside the data directory.
pub const DB_FILE: &str = "lineup.sqlite3";

/// How long a write waits for another process's write to finish before it gives up, unless
/// [`StoreOptions::busy_timeout`] says otherwise.
pub const DEFAULT_BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a write waits for the lock while the store is contended: after a write gave up on
/// another process's lock, until a write gets it again ([`Store::write_wait`]).
pub const CONTENDED_WAIT: Duration = Duration::from_millis(100);

/// How a [`Store`] is opened.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct StoreOptions {
    /// How long a write waits for another connection's write lock (default
    /// [`DEFAULT_BUSY_TIMEOUT`]). Writes are short, so waiting that long means a stuck process.
    pub busy_timeout: Duration,
}

impl Default for StoreOptions {
    fn default() -> Self {
        Self {
            busy_timeout: DEFAULT_BUSY_TIMEOUT,
        }
    }
}

/// A cheap change marker: [`Store::data_version`] returns a different value once another
/// connection (another host process, `lineup grants revoke`) has committed a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DataVersion(i64);

/// The durable store of one data directory: one SQLite connection.
///
/// Opening sets, on this connection: `busy_timeout` (first, so that the rest waits for other
/// processes rather than failing), `journal_mode=WAL` (checked: [`StoreError::NotWal`]),
/// `synchronous=FULL` (a commit is on disk, WAL fsynced, before it returns), then migrates the
/// schema by `PRAGMA user_version` inside `BEGIN IMMEDIATE`. Every write is one
/// `BEGIN IMMEDIATE` transaction, so several hosts on one data directory take turns instead of
/// failing with `database is locked`.
///
/// What is kept is reached through one part per table group, each a borrowed view of this
/// connection that states what it keeps true: [`Store::apps`] (the app registry and its package
/// cache), [`Store::app_ids`] (app ids held or once held), [`Store::audit`] (the chained audit
/// log), [`Store::calls`] (call records), [`Store::grants`] (remembered consent),
/// [`Store::offered`] (what each agent was offered), [`Store::policy`] (the operator's capability
/// policy) and [`Store::revisions`] (the inventory revision counter). The parts share this
/// connection's write lock handling, so a part's write is one `BEGIN IMMEDIATE` transaction like
/// any other.
///
/// A `Store` is `Send` but not `Sync`: give each thread its own, or put it behind a mutex.
#[derive(Debug)]
pub struct Store {
    conn: Connection,
    path: PathBuf,
    /// How long a write waits for another process's lock.
    busy_timeout: Duration,
    /// Whether the last write gave up on another process's lock (and none got it since): the
    /// next write waits only [`CONTENDED_WAIT`].
    contended: Cell<bool>,
    /// The lease scope of the host process this connection writes call records for
    /// ([`Store::with_host_lease`]).
    host: Option<String>,
    /// What a package may hold, checked at install and at every load
    /// ([`Store::with_manifest_limits`]).
    manifest_limits: lineup_packages::ManifestLimits,
}

impl Store {
    /// Opens the store in `data_dir`, creating the directory and the database on first run.
    ///
    /// # Errors
    ///
    /// [`StoreError::CreateDir`], [`StoreError::Sqlite`], [`StoreError::NotWal`],
    /// [`StoreError::SchemaTooNew`].
    pub fn open(data_dir: impl AsRef<Path>) -> Result<Self, StoreError> {
        Self::open_with(data_dir, &StoreOptions::default())
    }

    /// [`Store::open`] with options.
    ///
    /// # Errors
    ///
    /// As [`Store::open`].
    pub fn open_with(
        data_dir: impl AsRef<Path>,
        options: &StoreOptions,
    ) -> Result<Self, StoreError> {
        let dir = data_dir.as_ref();
        std::fs::create_dir_all(dir).map_err(|source| StoreError::CreateDir {
            path: dir.to_owned(),
            source,
        })?;
        Self::open_file(dir.join(DB_FILE), options)
    }

    /// Opens the store in `data_dir` only if it exists: for tools that inspect a host's store
    /// (`lineup audit verify`), where creating one would hide a mistyped directory. An older
    /// schema is migrated, as by [`Store::open`].
    ///
    /// # Errors
    ///
    /// [`StoreError::NotFound`], then as [`Store::open`].
    pub fn open_existing(data_dir: impl AsRef<Path>) -> Result<Self, StoreError> {
        let path = data_dir.as_ref().join(DB_FILE);
        if !path.is_file() {
            return Err(StoreError::NotFound { path });
        }
        Self::open_file(path, &StoreOptions::default())
    }

    fn open_file(path: PathBuf, options: &StoreOptions) -> Result<Self, StoreError> {
        let err = |op| {
            let path = path.clone();
            move |source| StoreError::Sqlite { path, op, source }
        };
        let conn = Connection::open(&path).map_err(err("open"))?;
        conn.busy_timeout(options.busy_timeout)
            .map_err(err("set busy_timeout"))?;
        let mode = set_wal(&conn, options.busy_timeout).map_err(err("set journal_mode=WAL"))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError::NotWal { path, mode });
        }
        conn.pragma_update(None, "synchronous", "FULL")
            .map_err(err("set synchronous=FULL"))?;
        let store = Self {
            conn,
            path,
            busy_timeout: options.busy_timeout,
            contended: Cell::new(false),
            host: None,
            manifest_limits: lineup_packages::ManifestLimits::default(),
        };
        migrate::migrate(&store.conn, &store.path, store.busy_timeout)?;
        Ok(store)
    }

    /// A store around a connection as it is, for migration tests.
    #[cfg(test)]
    pub(crate) fn from_parts(conn: Connection, path: PathBuf) -> Self {
        Self {
            conn,
            path,
            busy_timeout: DEFAULT_BUSY_TIMEOUT,
            contended: Cell::new(false),
            host: None,
            manifest_limits: lineup_packages::ManifestLimits::default(),
        }
    }

    /// How long a write waits for another process's lock.
    #[cfg(test)]
    pub(crate) fn busy_timeout(&self) -> Duration {
        self.busy_timeout
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Marks the call records this connection writes as the host process of `lease`'s
    /// (R-CAP-5): another host that finds one unfinished while the lease is held waits for its
    /// outcome instead of declaring it unknown, and leaves it out of its restart recovery.
    pub fn with_host_lease(mut self, lease: &crate::HostLease) -> Self {
        self.host = Some(lease.scope().to_owned());
        self
    }

    /// This connection, checking packages against `limits` instead of the defaults: at install
    /// and upgrade, and at every load, so that a host configured with a lower per-package code
    /// limit (R-SEC-3a) refuses at open an app installed under a higher one. A package cannot
    /// raise a limit; only the host's configuration sets it.
    pub fn with_manifest_limits(mut self, limits: lineup_packages::ManifestLimits) -> Self {
        self.manifest_limits = limits;
        self
    }

    /// The limits packages are checked against ([`Store::with_manifest_limits`]).
    pub fn manifest_limits(&self) -> &lineup_packages::ManifestLimits {
        &self.manifest_limits
    }

    /// [`Store::with_host_lease`]'s scope, if any.
    pub(crate) fn host(&self) -> Option<&str> {
        self.host.as_deref()
    }

    /// The schema version of the file (`PRAGMA user_version`).
    ///
    /// # Errors
    ///
    /// [`StoreError::Sqlite`].
    pub fn schema_version(&self) -> Result<u32, StoreError> {
        self.conn
            .pragma_query_value(None, "user_version", |row| row.get(0))
            .map_err(self.sqlite("read user_version"))
    }

    /// A marker that changes when another connection commits (`PRAGMA data_version`). A host
    /// polls it (say each second) and re-reads what it caches only when it changed; this
    /// connection's own writes do not change it.
    ///
    /// # Errors
    ///
    /// [`StoreError::Sqlite`].
    pub fn data_version(&self) -> Result<DataVersion, StoreError> {
        self.conn
            .pragma_query_value(None, "data_version", |row| row.get(0))
            .map(DataVersion)
            .map_err(self.sqlite("read data_version"))
    }

    /// A pragma's value as text, for checks (`journal_mode`, `synchronous`, `busy_timeout`,
    /// `integrity_check`). The name must be one of those.
    ///
    /// # Errors
    ///
    /// [`StoreError::InvalidValue`] for another name, [`StoreError::Sqlite`].
    pub fn pragma(&self, name: &str) -> Result<String, StoreError> {
        const READABLE: [&str; 4] = [
            "journal_mode",
            "synchronous",
            "busy_timeout",
            "integrity_check",
        ];
        if !READABLE.contains(&name) {
            return Err(StoreError::InvalidValue {
                what: "pragma name",
                value: crate::error::excerpt(name),
                hint: "one of journal_mode, synchronous, busy_timeout, integrity_check",
            });
        }
        self.conn
            .pragma_query_value(None, name, |row| {
                let value: rusqlite::types::Value = row.get(0)?;
                Ok(match value {
                    rusqlite::types::Value::Integer(n) => n.to_string(),
                    rusqlite::types::Value::Text(t) => t,
                    other => format!("{other:?}"),
                })
            })
            .map_err(self.sqlite("read pragma"))
    }

    /// The local app registry: installed packages, their versions and the package cache.
    pub fn apps(&self) -> Apps<'_> {
        Apps::new(self)
    }

    /// The app ids the app center holds or has held, compared ignoring ASCII case, and their
    /// tombstones (R-UI-9).
    pub fn app_ids(&self) -> AppIds<'_> {
        AppIds::new(self)
    }

    /// The audit log, append-only and chained by SHA-256 (R-CAP-6).
    pub fn audit(&self) -> AuditLog<'_> {
        AuditLog::new(self)
    }

    /// The call records, one per `(conversation_id, call_id)` (R-CAP-5).
    pub fn calls(&self) -> Calls<'_> {
        Calls::new(self)
    }

    /// The remembered grants ("always") of vouched agents and of unvouched sessions (R-CAP-3,
    /// R-SES-1).
    ///
    /// Where [`CapabilityStore`] is in scope, `.grants()` on a `&mut Store` is the kernel's
    /// [`CapabilityStore::grants`]; write `Store::grants(&store)` there.
    ///
    /// [`CapabilityStore`]: lineup_host_core::CapabilityStore
    /// [`CapabilityStore::grants`]: lineup_host_core::CapabilityStore::grants
    pub fn grants(&self) -> Grants<'_> {
        Grants::new(self)
    }

    /// The capabilities each vouched agent was ever offered (R-INV-4).
    ///
    /// Where [`CapabilityStore`] is in scope, `.offered(agent)` on a `&mut Store` is the
    /// kernel's [`CapabilityStore::offered`]; this one takes no argument.
    ///
    /// [`CapabilityStore`]: lineup_host_core::CapabilityStore
    /// [`CapabilityStore::offered`]: lineup_host_core::CapabilityStore::offered
    pub fn offered(&self) -> Offered<'_> {
        Offered::new(self)
    }

    /// The operator's capability policy: capabilities withdrawn or hidden (R-INV-1, R-INV-4).
    pub fn policy(&self) -> Policy<'_> {
        Policy::new(self)
    }

    /// The inventory revision counter (R-INV-2).
    pub fn revisions(&self) -> Revisions<'_> {
        Revisions::new(self)
    }

    /// The standard components' open instances, kept for a restart (R-STD-15).
    pub(crate) fn open_instances(&self) -> OpenInstances<'_> {
        OpenInstances::new(self)
    }

    /// Begins a write: `BEGIN IMMEDIATE` takes the write lock now (waiting up to
    /// [`Store::write_wait`]), so nothing read inside can be changed by another process before
    /// the commit.
    pub(crate) fn write(&self, op: &'static str) -> Result<Transaction<'_>, StoreError> {
        match begin_immediate(&self.conn, self.write_wait(), self.busy_timeout) {
            Ok(tx) => {
                self.contended.set(false);
                Ok(tx)
            }
            Err(e) => {
                if is_busy(&e) {
                    self.contended.set(true);
                }
                Err(self.sqlite(op)(e))
            }
        }
    }

    /// How long the next write waits for another process's lock: the busy timeout, or only
    /// [`CONTENDED_WAIT`] once a write gave up on the lock, until a write gets it again.
    ///
    /// Writes run on the thread that calls them (a host's event loop): a process that keeps the
    /// lock would otherwise hold that thread for the whole busy timeout at every write, and a
    /// call makes several (its records and audit entries). Contended, each such write fails
    /// within [`CONTENDED_WAIT`], as the first one did after the timeout, with the same
    /// `database is locked` error.
    pub fn write_wait(&self) -> Duration {
        if self.contended.get() {
            CONTENDED_WAIT.min(self.busy_timeout)
        } else {
            self.busy_timeout
        }
    }

    /// Every row of the query `sql` with `params`, each mapped by `map`, read in one statement
    /// (one snapshot); `op` names the query in errors, like `select from calls`.
    pub(crate) fn select_all<T>(
        &self,
        op: &'static str,
        sql: &str,
        params: impl rusqlite::Params,
        map: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Vec<T>, StoreError> {
        let mut statement = self.conn.prepare(sql).map_err(self.sqlite(op))?;
        let rows = statement.query_map(params, map).map_err(self.sqlite(op))?;
        rows.collect::<Result<_, _>>().map_err(self.sqlite(op))
    }

    /// The connection, for reads.
    pub(crate) fn conn(&self) -> &Connection {
        &self.conn
    }

    /// Maps a SQLite error of operation `op` to [`StoreError::Sqlite`] naming this file.
    pub(crate) fn sqlite(&self, op: &'static str) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
        move |source| StoreError::Sqlite {
            path: self.path.clone(),
            op,
            source,
        }
    }
}

/// Switches the file to WAL. Two processes creating a store at once both try; SQLite answers
/// the loser `SQLITE_BUSY` at once, without its busy handler, so this retries until `timeout`.
fn set_wal(conn: &Connection, timeout: Duration) -> rusqlite::Result<String> {
    retry_busy(timeout, || {
        conn.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))
    })
}

/// Now, as RFC 3339 in UTC (`2025-01-31T12:00:00.123456789Z`).
pub(crate) fn now_rfc3339() -> String {
    use time::format_description::well_known::Rfc3339;
    // Formatting a UTC time as RFC 3339 only fails for years outside 0..=9999.
    time::OffsetDateTime::now_utc()
        .format(&Rfc3339)
        .unwrap_or_else(|_| String::from("1970-01-01T00:00:00Z"))
}
