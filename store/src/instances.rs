//! [`Store`] as the standard components' record store: `impl InstanceStore for Store`
//! (R-STD-15). One row per open instance of a vouched identity's conversation, in
//! `open_instances`: the kernel's [`InstanceRecord`] as JSON, with the write time in unix
//! seconds. A write keeps at most [`MAX_RECORDS_PER_IDENTITY`] rows per identity (the least
//! recently written go), and rows older than [`RECORD_TTL_SECS`] are deleted when an identity's
//! records are read. What is read back is only parsed here; the kernel checks it again like an
//! agent's open before it shows anything.

use std::time::{SystemTime, UNIX_EPOCH};

use lineup_host_core::{
    ConversationId, InstanceId, InstanceRecord, InstanceStore, InstanceStoreError, PartyId,
    MAX_RECORDS_PER_IDENTITY, RECORD_TTL_SECS,
};
use rusqlite::params;

use crate::Store;

fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

impl InstanceStore for Store {
    fn put_instance(
        &mut self,
        owner: &PartyId,
        record: &InstanceRecord,
    ) -> Result<(), InstanceStoreError> {
        let json = serde_json::to_string(record)?;
        let tx = self.write("begin open instance write")?;
        tx.execute(
            "INSERT OR REPLACE INTO open_instances
                 (owner, conversation_id, instance_id, kind, record, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                owner.as_str(),
                record.conversation.as_str(),
                record.instance_id.as_str(),
                record.component,
                json,
                unix_now()
            ],
        )
        .map_err(self.sqlite("insert into open_instances"))?;
        // R-STD-15: at most 256 per identity; the least recently written go first.
        tx.execute(
            "DELETE FROM open_instances WHERE owner = ?1 AND rowid NOT IN
                 (SELECT rowid FROM open_instances WHERE owner = ?1
                  ORDER BY updated_at DESC, rowid DESC LIMIT ?2)",
            params![owner.as_str(), MAX_RECORDS_PER_IDENTITY as i64],
        )
        .map_err(self.sqlite("bound open_instances"))?;
        tx.commit()
            .map_err(self.sqlite("commit open instance write"))?;
        Ok(())
    }

    fn forget_instance(
        &mut self,
        owner: &PartyId,
        conversation: &ConversationId,
        instance: &InstanceId,
    ) -> Result<(), InstanceStoreError> {
        let tx = self.write("begin open instance delete")?;
        tx.execute(
            "DELETE FROM open_instances
             WHERE owner = ?1 AND conversation_id = ?2 AND instance_id = ?3",
            params![owner.as_str(), conversation.as_str(), instance.as_str()],
        )
        .map_err(self.sqlite("delete from open_instances"))?;
        tx.commit()
            .map_err(self.sqlite("commit open instance delete"))?;
        Ok(())
    }

    fn instances(
        &mut self,
        owner: &PartyId,
        conversation: &ConversationId,
    ) -> Result<Vec<InstanceRecord>, InstanceStoreError> {
        let oldest = unix_now().saturating_sub(RECORD_TTL_SECS);
        let tx = self.write("begin open instances expiry")?;
        tx.execute(
            "DELETE FROM open_instances WHERE owner = ?1 AND updated_at < ?2",
            params![owner.as_str(), oldest],
        )
        .map_err(self.sqlite("expire open_instances"))?;
        tx.commit()
            .map_err(self.sqlite("commit open instances expiry"))?;
        let rows: Vec<String> = self.select_all(
            "select from open_instances",
            "SELECT record FROM open_instances WHERE owner = ?1 AND conversation_id = ?2
             ORDER BY updated_at, rowid",
            params![owner.as_str(), conversation.as_str()],
            |r| r.get(0),
        )?;
        // A row that does not parse is skipped: the kernel never sees it.
        Ok(rows
            .iter()
            .filter_map(|json| serde_json::from_str(json).ok())
            .collect())
    }
}
