//! What each vouched agent identity was ever offered (R-INV-4), and the grants of unvouched
//! sessions, kept per host process (R-SES-1).

use rusqlite::params;

use crate::db::now_rfc3339;
use crate::{Store, StoreError};

impl Store {
    /// Records that `agent` was offered each of `capabilities` (kept from the first time).
    ///
    /// # Errors
    /// [`StoreError::Sqlite`].
    pub fn remember_offered(&self, agent: &str, capabilities: &[&str]) -> Result<(), StoreError> {
        let tx = self.write("begin offered update")?;
        let now = now_rfc3339();
        for capability in capabilities {
            tx.execute(
                "INSERT OR IGNORE INTO offered (agent, capability, first_offered_at)
                 VALUES (?1, ?2, ?3)",
                params![agent, capability, now],
            )
            .map_err(self.sqlite("insert into offered"))?;
        }
        tx.commit().map_err(self.sqlite("commit offered update"))
    }

    /// Every capability `agent` was ever offered, by name.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`].
    pub fn offered_to(&self, agent: &str) -> Result<Vec<String>, StoreError> {
        self.select_all(
            "select from offered",
            "SELECT capability FROM offered WHERE agent = ?1 ORDER BY capability",
            [agent],
            |r| r.get(0),
        )
    }

    /// Forgets every grant kept for the unvouched sessions of host process `scope` (the
    /// identities `~unvouched/<scope>/<conversation>`); returns how many there were. A host
    /// calls it when it ends, and for a process that ended without doing so.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`].
    pub fn forget_unvouched_grants(&self, scope: &str) -> Result<usize, StoreError> {
        let prefix = format!("{}{scope}/", lineup_host_core::UNVOUCHED_PREFIX);
        let tx = self.write("begin unvouched grants delete")?;
        let removed = tx
            .execute(
                "DELETE FROM grants WHERE substr(agent, 1, length(?1)) = ?1",
                [&prefix],
            )
            .map_err(self.sqlite("delete from grants"))?;
        tx.commit()
            .map_err(self.sqlite("commit unvouched grants delete"))?;
        Ok(removed)
    }

    /// The host process scopes that hold unvouched grants.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`].
    pub fn unvouched_scopes(&self) -> Result<Vec<String>, StoreError> {
        let prefix = lineup_host_core::UNVOUCHED_PREFIX;
        let agents: Vec<String> = self.select_all(
            "select from grants",
            "SELECT DISTINCT agent FROM grants WHERE substr(agent, 1, length(?1)) = ?1",
            [prefix],
            |r| r.get(0),
        )?;
        let mut scopes: Vec<String> = agents
            .iter()
            .filter_map(|a| a.strip_prefix(prefix)?.split('/').next().map(str::to_owned))
            .collect();
        scopes.sort();
        scopes.dedup();
        Ok(scopes)
    }
}
