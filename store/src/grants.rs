//! Remembered consent ("always"): grants keyed by the vouched agent identity, the capability's
//! name and its version (R-CAP-3, R-SES-1), and the grants of unvouched sessions, kept per host
//! process.

use rusqlite::{params, OptionalExtension, Row};
use serde::{Deserialize, Serialize};

use crate::db::now_rfc3339;
use crate::{Store, StoreError};

/// What a grant is for: one agent identity, one capability name, one capability version.
///
/// The agent identity is the one the embedder or the transport vouched for, never a
/// self-asserted `sender.id` (R-SES-1). The store does not know risks: the caller must never
/// grant a `system_permission` or `restricted` capability (R-CAP-3).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GrantKey {
    /// The vouched agent identity.
    pub agent: String,
    /// The capability's name, like `clipboard.write`.
    pub capability: String,
    /// The capability's version (opaque, R-CAP-2).
    pub version: String,
}

impl GrantKey {
    /// A key from its three parts.
    pub fn new(
        agent: impl Into<String>,
        capability: impl Into<String>,
        version: impl Into<String>,
    ) -> Self {
        Self {
            agent: agent.into(),
            capability: capability.into(),
            version: version.into(),
        }
    }
}

/// A remembered grant, as listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grant {
    /// What is granted.
    #[serde(flatten)]
    pub key: GrantKey,
    /// When the user chose "always" (RFC 3339, UTC).
    pub granted_at: String,
}

/// Which grants [`Grants::revoke`] removes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RevokeScope {
    /// Every grant of this agent.
    Agent(String),
    /// Every version of one capability for this agent.
    Capability {
        /// The agent identity.
        agent: String,
        /// The capability's name.
        capability: String,
    },
    /// Exactly one grant.
    Exact(GrantKey),
}

/// The remembered grants of a [`Store`] ([`Store::grants`]), in table `grants`.
///
/// Invariants: at most one grant per [`GrantKey`]; nothing is cached, so every answer is the
/// database's at that moment and a revoke by another process counts from the next read
/// (R-CAP-3). The grants of unvouched sessions are kept under the identity
/// `~unvouched/<host process scope>/<conversation>` and are forgotten when that process ends, or
/// at the next start of a host on the data directory when it was killed (R-SES-1).
#[derive(Debug, Clone, Copy)]
pub struct Grants<'s> {
    store: &'s Store,
}

impl<'s> Grants<'s> {
    /// The grants of `store`.
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Remembers a grant. Returns `false` when it was already there (its time is kept).
    ///
    /// # Errors
    ///
    /// [`StoreError::Sqlite`].
    pub fn insert(&self, key: &GrantKey) -> Result<bool, StoreError> {
        let tx = self.store.write("begin grant")?;
        let added = tx
            .execute(
                "INSERT INTO grants (agent, capability, version, granted_at) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT DO NOTHING",
                params![key.agent, key.capability, key.version, now_rfc3339()],
            )
            .map_err(self.store.sqlite("insert into grants"))?;
        tx.commit().map_err(self.store.sqlite("commit grant"))?;
        Ok(added == 1)
    }

    /// Whether this grant is remembered. It reads the database every time, never a cache, so a
    /// `lineup grants revoke` in another process counts from the next decision on.
    ///
    /// # Errors
    ///
    /// [`StoreError::Sqlite`].
    pub fn contains(&self, key: &GrantKey) -> Result<bool, StoreError> {
        self.store
            .conn()
            .query_row(
                "SELECT 1 FROM grants WHERE agent = ?1 AND capability = ?2 AND version = ?3",
                params![key.agent, key.capability, key.version],
                |_| Ok(()),
            )
            .optional()
            .map(|found| found.is_some())
            .map_err(self.store.sqlite("select from grants"))
    }

    /// The remembered grants, of one agent or of all, ordered by agent, capability, version.
    ///
    /// # Errors
    ///
    /// [`StoreError::Sqlite`].
    pub fn list(&self, agent: Option<&str>) -> Result<Vec<Grant>, StoreError> {
        self.store.select_all(
            "select from grants",
            "SELECT agent, capability, version, granted_at FROM grants
             WHERE ?1 IS NULL OR agent = ?1 ORDER BY agent, capability, version",
            [agent],
            grant_from_row,
        )
    }

    /// Forgets the grants in `scope`; returns how many there were.
    ///
    /// # Errors
    ///
    /// [`StoreError::Sqlite`].
    pub fn revoke(&self, scope: &RevokeScope) -> Result<usize, StoreError> {
        let (agent, capability, version) = match scope {
            RevokeScope::Agent(agent) => (agent, None, None),
            RevokeScope::Capability { agent, capability } => (agent, Some(capability), None),
            RevokeScope::Exact(key) => (&key.agent, Some(&key.capability), Some(&key.version)),
        };
        let tx = self.store.write("begin revoke")?;
        let removed = tx
            .execute(
                "DELETE FROM grants WHERE agent = ?1
                 AND (?2 IS NULL OR capability = ?2) AND (?3 IS NULL OR version = ?3)",
                params![agent, capability, version],
            )
            .map_err(self.store.sqlite("delete from grants"))?;
        tx.commit().map_err(self.store.sqlite("commit revoke"))?;
        Ok(removed)
    }

    /// Forgets every grant kept for the unvouched sessions of host process `scope` (the
    /// identities `~unvouched/<scope>/<conversation>`); returns how many there were. A host
    /// calls it when it ends, and for a process that ended without doing so.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`].
    pub fn forget_unvouched(&self, scope: &str) -> Result<usize, StoreError> {
        let prefix = format!("{}{scope}/", lineup_host_core::UNVOUCHED_PREFIX);
        let tx = self.store.write("begin unvouched grants delete")?;
        let removed = tx
            .execute(
                "DELETE FROM grants WHERE substr(agent, 1, length(?1)) = ?1",
                [&prefix],
            )
            .map_err(self.store.sqlite("delete from grants"))?;
        tx.commit()
            .map_err(self.store.sqlite("commit unvouched grants delete"))?;
        Ok(removed)
    }

    /// The host process scopes that hold unvouched grants.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`].
    pub fn unvouched_scopes(&self) -> Result<Vec<String>, StoreError> {
        let prefix = lineup_host_core::UNVOUCHED_PREFIX;
        let agents: Vec<String> = self.store.select_all(
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

fn grant_from_row(row: &Row<'_>) -> rusqlite::Result<Grant> {
    Ok(Grant {
        key: GrantKey {
            agent: row.get(0)?,
            capability: row.get(1)?,
            version: row.get(2)?,
        },
        granted_at: row.get(3)?,
    })
}
