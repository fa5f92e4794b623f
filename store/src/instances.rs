//! [`Store`] as the standard components' record store: `impl InstanceStore for Store`
//! (R-STD-15). One row per open instance of a vouched identity's conversation, in
//! `open_instances`: the kernel's [`InstanceRecord`] as JSON under its component id, or a
//! hibernated Surface's [`SurfaceRecord`] under kind `surface` (#29), with the write time in
//! unix seconds. A write keeps at most [`MAX_RECORDS_PER_IDENTITY`] rows per identity (the least
//! recently written go), and rows older than [`RECORD_TTL_SECS`] are deleted when an identity's
//! records are read. What is read back is only parsed here; the kernel checks it again like an
//! agent's open before it shows anything.

use std::time::{SystemTime, UNIX_EPOCH};

use lineup_host_core::{
    ConversationId, InstanceId, InstanceRecord, InstanceStore, InstanceStoreError, PartyId,
    SurfaceRecord, MAX_RECORDS_PER_IDENTITY, RECORD_TTL_SECS, SURFACE_RECORD_KIND,
};
use rusqlite::params;

use crate::Store;

fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// The rows that parse as `T`: one that does not is skipped, and the kernel never sees it.
fn parsed<T: serde::de::DeserializeOwned>(rows: &[String]) -> Vec<T> {
    rows.iter()
        .filter_map(|json| serde_json::from_str(json).ok())
        .collect()
}

/// The open instances of a [`Store`] ([`Store::open_instances`]), in table `open_instances`: what
/// `impl InstanceStore for Store` reads and writes.
///
/// Invariants: one row per owner, conversation and instance; after a write at most
/// [`MAX_RECORDS_PER_IDENTITY`] rows per owner (the least recently written go first); no row
/// older than [`RECORD_TTL_SECS`] is read back, since an owner's older rows are deleted before
/// its records are read.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OpenInstances<'s> {
    store: &'s Store,
}

impl<'s> OpenInstances<'s> {
    /// The open instances of `store`.
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Writes one row of `open_instances`, in place of the conversation's row of the same
    /// instance, and keeps at most [`MAX_RECORDS_PER_IDENTITY`] rows for `owner`.
    fn put(
        &self,
        owner: &PartyId,
        conversation: &ConversationId,
        instance: &InstanceId,
        kind: &str,
        json: &str,
    ) -> Result<(), InstanceStoreError> {
        let tx = self.store.write("begin open instance write")?;
        tx.execute(
            "INSERT OR REPLACE INTO open_instances
                 (owner, conversation_id, instance_id, kind, record, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                owner.as_str(),
                conversation.as_str(),
                instance.as_str(),
                kind,
                json,
                unix_now()
            ],
        )
        .map_err(self.store.sqlite("insert into open_instances"))?;
        // R-STD-15: at most 256 per identity; the least recently written go first.
        tx.execute(
            "DELETE FROM open_instances WHERE owner = ?1 AND rowid NOT IN
                 (SELECT rowid FROM open_instances WHERE owner = ?1
                  ORDER BY updated_at DESC, rowid DESC LIMIT ?2)",
            params![owner.as_str(), MAX_RECORDS_PER_IDENTITY as i64],
        )
        .map_err(self.store.sqlite("bound open_instances"))?;
        tx.commit()
            .map_err(self.store.sqlite("commit open instance write"))?;
        Ok(())
    }

    /// The rows of `kind` (`= surface`, or else every component's) of `owner`'s `conversation`
    /// within [`RECORD_TTL_SECS`], oldest first, after deleting `owner`'s older rows.
    fn records(
        &self,
        owner: &PartyId,
        conversation: &ConversationId,
        surfaces: bool,
    ) -> Result<Vec<String>, InstanceStoreError> {
        let oldest = unix_now().saturating_sub(RECORD_TTL_SECS);
        let tx = self.store.write("begin open instances expiry")?;
        tx.execute(
            "DELETE FROM open_instances WHERE owner = ?1 AND updated_at < ?2",
            params![owner.as_str(), oldest],
        )
        .map_err(self.store.sqlite("expire open_instances"))?;
        tx.commit()
            .map_err(self.store.sqlite("commit open instances expiry"))?;
        let rows: Vec<String> = self.store.select_all(
            "select from open_instances",
            "SELECT record FROM open_instances
             WHERE owner = ?1 AND conversation_id = ?2 AND (kind = ?3) = ?4
             ORDER BY updated_at, rowid",
            params![
                owner.as_str(),
                conversation.as_str(),
                SURFACE_RECORD_KIND,
                surfaces
            ],
            |r| r.get(0),
        )?;
        Ok(rows)
    }

    /// Deletes the row of `owner`'s `instance` in `conversation`.
    fn forget(
        &self,
        owner: &PartyId,
        conversation: &ConversationId,
        instance: &InstanceId,
    ) -> Result<(), InstanceStoreError> {
        let tx = self.store.write("begin open instance delete")?;
        tx.execute(
            "DELETE FROM open_instances
             WHERE owner = ?1 AND conversation_id = ?2 AND instance_id = ?3",
            params![owner.as_str(), conversation.as_str(), instance.as_str()],
        )
        .map_err(self.store.sqlite("delete from open_instances"))?;
        tx.commit()
            .map_err(self.store.sqlite("commit open instance delete"))?;
        Ok(())
    }
}

impl InstanceStore for Store {
    fn put_instance(
        &mut self,
        owner: &PartyId,
        record: &InstanceRecord,
    ) -> Result<(), InstanceStoreError> {
        let json = serde_json::to_string(record)?;
        self.open_instances().put(
            owner,
            &record.conversation,
            &record.instance_id,
            &record.component,
            &json,
        )
    }

    fn put_surface(
        &mut self,
        owner: &PartyId,
        record: &SurfaceRecord,
    ) -> Result<(), InstanceStoreError> {
        let json = serde_json::to_string(record)?;
        self.open_instances().put(
            owner,
            &record.conversation,
            &record.instance_id,
            SURFACE_RECORD_KIND,
            &json,
        )
    }

    fn surfaces(
        &mut self,
        owner: &PartyId,
        conversation: &ConversationId,
    ) -> Result<Vec<SurfaceRecord>, InstanceStoreError> {
        Ok(parsed(&self.open_instances().records(
            owner,
            conversation,
            true,
        )?))
    }

    fn forget_instance(
        &mut self,
        owner: &PartyId,
        conversation: &ConversationId,
        instance: &InstanceId,
    ) -> Result<(), InstanceStoreError> {
        self.open_instances().forget(owner, conversation, instance)
    }

    fn instances(
        &mut self,
        owner: &PartyId,
        conversation: &ConversationId,
    ) -> Result<Vec<InstanceRecord>, InstanceStoreError> {
        Ok(parsed(&self.open_instances().records(
            owner,
            conversation,
            false,
        )?))
    }
}
