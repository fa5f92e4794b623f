//! Write transactions that wait for another process's lock by polling, not by SQLite's
//! growing sleeps, so a host writing steadily cannot starve another one.

use std::time::Duration;

use rusqlite::{Connection, Transaction, TransactionBehavior};

/// How often a waiting write tries for the lock.
const WRITE_POLL: Duration = Duration::from_millis(1);

/// `BEGIN IMMEDIATE`, waiting up to `wait` for another process's write lock; the connection's
/// busy timeout for reads is then `timeout`.
///
/// SQLite's own busy handler sleeps ever longer between tries (up to 100 ms), and its locks are
/// not queued: a waiter that wakes while another host is inside its next transaction sleeps
/// again, so a host writing steadily could starve another one for the whole timeout. So the
/// wait is done here instead, trying every millisecond; the connection's own busy timeout,
/// which covers reads, is put back afterwards.
pub(crate) fn begin_immediate(
    conn: &Connection,
    wait: Duration,
    timeout: Duration,
) -> rusqlite::Result<Transaction<'_>> {
    conn.busy_timeout(WRITE_POLL)?;
    let begun = retry_busy(wait, || {
        Transaction::new_unchecked(conn, TransactionBehavior::Immediate)
    });
    let restored = conn.busy_timeout(timeout);
    let tx = begun?;
    restored?;
    Ok(tx)
}

/// Runs `attempt` again while it fails with `SQLITE_BUSY`, until `timeout` has passed.
///
/// The busy handler does not cover every wait: SQLite answers `SQLITE_BUSY` at once, without
/// calling it, when it sees a possible deadlock, while it changes the journal mode, and while
/// another process rebuilds the WAL index of a file whose last writer was killed. Each of
/// those clears in milliseconds, so `BEGIN IMMEDIATE` and the journal-mode switch retry here.
pub(crate) fn retry_busy<T>(
    timeout: Duration,
    mut attempt: impl FnMut() -> rusqlite::Result<T>,
) -> rusqlite::Result<T> {
    let start = std::time::Instant::now();
    loop {
        match attempt() {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DatabaseBusy && start.elapsed() < timeout =>
            {
                std::thread::sleep(WRITE_POLL);
            }
            other => return other,
        }
    }
}

/// Whether `error` is SQLite's `SQLITE_BUSY`: another connection held the lock for the whole
/// wait.
pub(crate) fn is_busy(error: &rusqlite::Error) -> bool {
    matches!(error, rusqlite::Error::SqliteFailure(e, _) if e.code == rusqlite::ErrorCode::DatabaseBusy)
}
