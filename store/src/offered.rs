//! What each vouched agent identity was ever offered (R-INV-4), in table `offered`.

use rusqlite::params;

use crate::db::now_rfc3339;
use crate::{Store, StoreError};

/// The capabilities each vouched agent identity was ever offered, of a [`Store`]
/// ([`Store::offered`]).
///
/// Invariant: a row is only ever added, with the time of the first offer, and never changed or
/// removed, so a capability once offered to an agent stays known as offered (R-INV-4).
#[derive(Debug, Clone, Copy)]
pub struct Offered<'s> {
    store: &'s Store,
}

impl<'s> Offered<'s> {
    /// The offers of `store`.
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Records that `agent` was offered each of `capabilities` (kept from the first time).
    ///
    /// # Errors
    /// [`StoreError::Sqlite`].
    pub fn remember(&self, agent: &str, capabilities: &[&str]) -> Result<(), StoreError> {
        let tx = self.store.write("begin offered update")?;
        let now = now_rfc3339();
        for capability in capabilities {
            tx.execute(
                "INSERT OR IGNORE INTO offered (agent, capability, first_offered_at)
                 VALUES (?1, ?2, ?3)",
                params![agent, capability, now],
            )
            .map_err(self.store.sqlite("insert into offered"))?;
        }
        tx.commit()
            .map_err(self.store.sqlite("commit offered update"))
    }

    /// Every capability `agent` was ever offered, by name.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`].
    pub fn list(&self, agent: &str) -> Result<Vec<String>, StoreError> {
        self.store.select_all(
            "select from offered",
            "SELECT capability FROM offered WHERE agent = ?1 ORDER BY capability",
            [agent],
            |r| r.get(0),
        )
    }
}
