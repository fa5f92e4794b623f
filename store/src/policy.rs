//! The operator's capability policy (`lineup capabilities`, R-INV-1, R-INV-4): capabilities
//! withdrawn from every agent and capabilities hidden from one vouched agent, in table
//! `capability_policy`. Every change bumps the revision counter in the same transaction, so a
//! running host sees it through [`Revisions::counter`](crate::Revisions::counter) and applies it.

use std::collections::BTreeSet;

use lineup_host_core::{AgentIdentity, CapabilityName, CapabilityPolicy, PolicyRule};
use rusqlite::params;
use serde::Serialize;

use crate::db::now_rfc3339;
use crate::{Store, StoreError};

/// One rule as `lineup capabilities list` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PolicyEntry {
    /// The agent it is hidden from; `None`: withdrawn from every agent.
    pub agent: Option<String>,
    /// The capability.
    pub capability: String,
    /// Since when (RFC 3339, UTC).
    pub since: String,
}

/// The operator's capability policy of a [`Store`] ([`Store::policy`]), in table
/// `capability_policy`.
///
/// Invariants: at most one rule per agent and capability (withdrawn from every agent is the
/// agent `""`); a change that adds or removes a rule bumps the revision counter in the same
/// transaction, and one that changes nothing does not.
#[derive(Debug, Clone, Copy)]
pub struct Policy<'s> {
    store: &'s Store,
}

impl<'s> Policy<'s> {
    /// The policy of `store`.
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Adds a rule: `capability` hidden from `agent`, or withdrawn from every agent with
    /// `None`; `Ok(false)` when it was there already. Returns after the commit.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`].
    pub fn restrict(&self, agent: Option<&str>, capability: &str) -> Result<bool, StoreError> {
        self.change(
            "INSERT OR IGNORE INTO capability_policy (agent, capability, since) VALUES (?1, ?2, ?3)",
            agent,
            capability,
        )
    }

    /// Removes a rule added by [`Policy::restrict`]; `Ok(false)` when there was none.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`].
    pub fn lift(&self, agent: Option<&str>, capability: &str) -> Result<bool, StoreError> {
        self.change(
            "DELETE FROM capability_policy WHERE agent = ?1 AND capability = ?2 AND ?3 IS NOT NULL",
            agent,
            capability,
        )
    }

    fn change(&self, sql: &str, agent: Option<&str>, capability: &str) -> Result<bool, StoreError> {
        let tx = self.store.write("begin capability policy change")?;
        let changed = tx
            .execute(sql, params![agent.unwrap_or(""), capability, now_rfc3339()])
            .map_err(self.store.sqlite("change capability_policy"))?;
        if changed > 0 {
            crate::revision::bump(&tx).map_err(self.store.sqlite("update revision"))?;
        }
        tx.commit()
            .map_err(self.store.sqlite("commit capability policy change"))?;
        Ok(changed > 0)
    }

    /// Every rule, withdrawn ones first, then by agent and capability.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`].
    pub fn list(&self) -> Result<Vec<PolicyEntry>, StoreError> {
        self.store.select_all(
            "select from capability_policy",
            "SELECT agent, capability, since FROM capability_policy ORDER BY agent, capability",
            [],
            |r| {
                let agent: String = r.get(0)?;
                Ok(PolicyEntry {
                    agent: (!agent.is_empty()).then_some(agent),
                    capability: r.get(1)?,
                    since: r.get(2)?,
                })
            },
        )
    }
}

impl CapabilityPolicy for Store {
    fn rules(&self) -> Result<BTreeSet<PolicyRule>, String> {
        let entries = self.policy().list().map_err(|e| e.to_string())?;
        // A row this build cannot read is left out, never a panic.
        Ok(entries
            .into_iter()
            .filter_map(|entry| {
                let name = CapabilityName::try_from(entry.capability).ok()?;
                Some(match entry.agent {
                    None => PolicyRule::Withdrawn(name),
                    Some(agent) => PolicyRule::Hidden(AgentIdentity::try_from(agent).ok()?, name),
                })
            })
            .collect())
    }

    fn change_marker(&self) -> Option<u64> {
        self.revisions().counter().ok()
    }
}
