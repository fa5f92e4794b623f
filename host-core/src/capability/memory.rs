//! [`MemoryStore`]: a [`CapabilityStore`] that keeps everything in memory, for tests and for
//! embedders that do not need records to outlive the process.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::convert::Infallible;
use std::rc::Rc;

use crate::ids::AgentIdentity;

use super::store::{
    AuditRecord, CallKey, CallRecord, CallState, CapabilityStore, GrantKey, GrantRecord,
    RevisionEpoch,
};

/// A [`CapabilityStore`] in memory. Nothing survives the process: a restart forgets every call
/// (so R-CAP-5 holds only within one process), every grant and the audit; its revision epochs
/// start again at 1, so use it only where no agent outlives the host either. A durable store
/// (the `lineup-store` crate) is the default of the `lineup` command.
///
/// Its clones are handles to the same records, as two connections to one database are: hand
/// one to a [`StorePort`](crate::StorePort) and read the records through another.
///
/// ```
/// use lineup_host_core::{CapabilityStore, MemoryStore};
/// let mut store = MemoryStore::default();
/// let first = store.next_revision_epoch().unwrap();
/// assert!(store.next_revision_epoch().unwrap() > first);
/// assert!(store.unfinished_calls().unwrap().is_empty());
/// ```
#[derive(Debug, Default, Clone)]
pub struct MemoryStore {
    records: Rc<RefCell<Records>>,
}

/// What a [`MemoryStore`] keeps. Invariant: borrowed only within one method of the store, which
/// calls nothing outside it.
#[derive(Debug, Default)]
struct Records {
    epoch: u64,
    calls: BTreeMap<(Option<AgentIdentity>, CallKey), CallRecord>,
    grants: BTreeMap<GrantKey, GrantRecord>,
    audit: Vec<AuditRecord>,
}

impl MemoryStore {
    /// An empty store whose revision epochs start after `base`: an embedder that draws `base`
    /// at random (say, a random 32 bits shifted left by 32) at each start gets revisions that
    /// a restart does not repeat, except by chance (R-INV-2), without a durable store.
    ///
    /// ```
    /// use lineup_host_core::{CapabilityStore, MemoryStore, RevisionEpoch};
    /// let mut store = MemoryStore::starting_after(RevisionEpoch(7 << 32));
    /// assert_eq!(store.next_revision_epoch().unwrap(), RevisionEpoch((7 << 32) + 1));
    /// ```
    pub fn starting_after(base: RevisionEpoch) -> Self {
        let records = Records {
            epoch: base.0,
            ..Records::default()
        };
        Self {
            records: Rc::new(RefCell::new(records)),
        }
    }

    /// The audit records appended so far, oldest first.
    pub fn audit(&self) -> Vec<AuditRecord> {
        self.records.borrow().audit.clone()
    }

    /// The call records, in key order.
    pub fn calls(&self) -> Vec<CallRecord> {
        self.records.borrow().calls.values().cloned().collect()
    }

    /// Whether a grant for `key` is remembered.
    pub fn has_grant(&self, key: &GrantKey) -> bool {
        self.records.borrow().grants.contains_key(key)
    }

    /// How many grants are remembered.
    pub fn grant_count(&self) -> usize {
        self.records.borrow().grants.len()
    }
}

impl CapabilityStore for MemoryStore {
    type Error = Infallible;

    fn next_revision_epoch(&mut self) -> Result<RevisionEpoch, Infallible> {
        let mut records = self.records.borrow_mut();
        records.epoch += 1;
        Ok(RevisionEpoch(records.epoch))
    }

    fn unfinished_calls(&mut self) -> Result<Vec<CallRecord>, Infallible> {
        Ok(self
            .records
            .borrow()
            .calls
            .values()
            .filter(|r| !matches!(r.state, CallState::Finished { .. }))
            .cloned()
            .collect())
    }

    fn call(
        &mut self,
        owner: &AgentIdentity,
        key: &CallKey,
    ) -> Result<Option<CallRecord>, Infallible> {
        let records = self.records.borrow();
        let own = records.calls.get(&(Some(owner.clone()), key.clone()));
        Ok(own
            .or_else(|| records.calls.values().find(|r| r.key == *key))
            .cloned())
    }

    fn put_call(&mut self, record: &CallRecord) -> Result<(), Infallible> {
        self.records
            .borrow_mut()
            .calls
            .insert((record.owner.clone(), record.key.clone()), record.clone());
        Ok(())
    }

    fn grant(&mut self, key: &GrantKey) -> Result<Option<GrantRecord>, Infallible> {
        Ok(self.records.borrow().grants.get(key).cloned())
    }

    fn put_grant(&mut self, grant: &GrantRecord) -> Result<(), Infallible> {
        let mut records = self.records.borrow_mut();
        records.grants.insert(grant.key.clone(), grant.clone());
        Ok(())
    }

    fn grants(&mut self) -> Result<Vec<GrantRecord>, Infallible> {
        Ok(self.records.borrow().grants.values().cloned().collect())
    }

    fn revoke_grant(&mut self, key: &GrantKey) -> Result<bool, Infallible> {
        Ok(self.records.borrow_mut().grants.remove(key).is_some())
    }

    fn append_audit(&mut self, record: &AuditRecord) -> Result<(), Infallible> {
        self.records.borrow_mut().audit.push(record.clone());
        Ok(())
    }
}
