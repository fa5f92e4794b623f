//! The inventory revision: a durable counter that never returns a value twice (R-INV-2).

use std::fmt;

use rusqlite::OptionalExtension;
use serde::{Deserialize, Serialize};

use crate::{Store, StoreError};

/// An inventory revision: `<epoch>-<number>`, where the epoch is 16 random hex digits chosen
/// when the database was created and the number counts up from 1.
///
/// Agents must treat it as opaque and compare it for equality (R-INV-2). The epoch makes a
/// store deleted and created again start a fresh series instead of repeating old values.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Revision(String);

impl Revision {
    /// The revision as the agent sees it.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The database's epoch part.
    pub fn epoch(&self) -> &str {
        self.0.split_once('-').map_or("", |(epoch, _)| epoch)
    }

    /// The counter part: within one database, a later revision has a larger number.
    pub fn number(&self) -> u64 {
        self.0
            .rsplit_once('-')
            .and_then(|(_, n)| n.parse().ok())
            .unwrap_or(0)
    }
}

impl fmt::Display for Revision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The inventory revision counter of a [`Store`] ([`Store::revisions`]).
///
/// Invariants: the counter only grows, and every increment is committed (`BEGIN IMMEDIATE`,
/// `synchronous=FULL`) before its value is handed out, so no value is handed out twice by this
/// database, in any process, before or after a restart; [`Revisions::next`] and the kernel's
/// revision epochs draw from the same counter. A change to the app registry, to the app ids or to
/// the capability policy bumps it in the change's own transaction, so [`Revisions::counter`]
/// moves with every such change.
#[derive(Debug, Clone, Copy)]
pub struct Revisions<'s> {
    store: &'s Store,
}

impl<'s> Revisions<'s> {
    /// The counter of `store`.
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// A revision never returned before by this database, in this process or any other, before
    /// or after a restart (R-INV-2): the counter is incremented and committed (`BEGIN
    /// IMMEDIATE`, `synchronous=FULL`) before the value is returned.
    ///
    /// # Errors
    ///
    /// [`StoreError::Sqlite`], [`StoreError::Corrupt`] when the counter or the epoch row is gone.
    pub fn next(&self) -> Result<Revision, StoreError> {
        let (epoch, number) = self.next_counter()?;
        Ok(Revision(format!("{epoch}-{number}")))
    }

    /// The revision counter as it is, without incrementing it: a host compares it with the
    /// value it last saw to learn that the registry changed, also in another process.
    ///
    /// # Errors
    ///
    /// [`StoreError::Sqlite`].
    pub fn counter(&self) -> Result<u64, StoreError> {
        self.store
            .conn()
            .query_row("SELECT counter FROM revision WHERE id = 1", [], |row| {
                row.get::<_, i64>(0)
            })
            .map(|n| u64::try_from(n).unwrap_or(0))
            .map_err(self.store.sqlite("select from revision"))
    }

    /// Increments the revision counter and commits, then returns the database's epoch (16 hex
    /// digits) and the new counter value: the one source of [`Revisions::next`] and of the
    /// kernel's revision epochs, so the two never hand out the same counter value.
    pub(crate) fn next_counter(&self) -> Result<(String, u64), StoreError> {
        let tx = self.store.write("begin revision update")?;
        let number: Option<i64> = tx
            .query_row(
                "UPDATE revision SET counter = counter + 1 WHERE id = 1 RETURNING counter",
                [],
                |row| row.get(0),
            )
            .optional()
            .map_err(self.store.sqlite("update revision"))?;
        let epoch: Option<String> = tx
            .query_row("SELECT value FROM meta WHERE key = 'epoch'", [], |row| {
                row.get(0)
            })
            .optional()
            .map_err(self.store.sqlite("read meta epoch"))?;
        let (Some(number), Some(epoch)) = (number, epoch) else {
            return Err(StoreError::Corrupt {
                table: "revision",
                key: "1".into(),
                detail: "the counter or the epoch row is missing".into(),
            });
        };
        tx.commit().map_err(self.store.sqlite("commit revision"))?;
        Ok((epoch, number.unsigned_abs()))
    }
}

/// Bumps the inventory revision counter in `tx`; the new value.
pub(crate) fn bump(tx: &rusqlite::Transaction<'_>) -> rusqlite::Result<u64> {
    tx.query_row(
        "UPDATE revision SET counter = counter + 1 WHERE id = 1 RETURNING counter",
        [],
        |r| r.get::<_, i64>(0),
    )
    .map(|n| u64::try_from(n).unwrap_or(0))
}
