//! Schema migrations by `PRAGMA user_version`: migration *n* takes a file from version *n − 1*
//! to *n*. Append a migration to change the schema; never edit one that has shipped.

use std::path::Path;
use std::time::Duration;

use rusqlite::Connection;

use crate::tx::begin_immediate;
use crate::StoreError;

/// The migrations, in order; `MIGRATIONS[i]` takes the file from version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[
    // 1: the inventory revision counter with the file's random epoch, grants, call records.
    r"
    CREATE TABLE meta (
        key   TEXT PRIMARY KEY,
        value TEXT NOT NULL
    ) STRICT;
    -- A random prefix of every revision, so that a store deleted and created again never
    -- repeats an old revision (R-INV-2).
    INSERT INTO meta (key, value) VALUES ('epoch', lower(hex(randomblob(8))));
    CREATE TABLE revision (
        id      INTEGER PRIMARY KEY CHECK (id = 1),
        counter INTEGER NOT NULL
    ) STRICT;
    INSERT INTO revision (id, counter) VALUES (1, 0);
    CREATE TABLE grants (
        agent      TEXT NOT NULL,
        capability TEXT NOT NULL,
        version    TEXT NOT NULL,
        granted_at TEXT NOT NULL,
        PRIMARY KEY (agent, capability, version)
    ) STRICT, WITHOUT ROWID;
    CREATE TABLE calls (
        conversation_id TEXT NOT NULL,
        call_id         TEXT NOT NULL,
        capability      TEXT NOT NULL,
        version         TEXT NOT NULL,
        args_digest     TEXT NOT NULL,
        state           TEXT NOT NULL
            CHECK (state IN ('received', 'awaiting_consent', 'running', 'finished')),
        status          TEXT,
        result          TEXT,
        message         TEXT,
        error           TEXT,
        created_at      TEXT NOT NULL,
        updated_at      TEXT NOT NULL,
        PRIMARY KEY (conversation_id, call_id)
    ) STRICT;
    CREATE INDEX calls_unfinished ON calls (state) WHERE state <> 'finished';
    ",
    // 2: the append-only audit chain (R-CAP-6).
    r"
    CREATE TABLE audit (
        seq             INTEGER PRIMARY KEY,
        time            TEXT NOT NULL,
        conversation_id TEXT NOT NULL,
        call_id         TEXT NOT NULL,
        agent           TEXT,
        capability      TEXT NOT NULL,
        version         TEXT NOT NULL,
        risk            TEXT NOT NULL,
        args_digest     TEXT NOT NULL,
        decision        TEXT NOT NULL,
        decision_source TEXT NOT NULL,
        status          TEXT NOT NULL,
        prev            TEXT NOT NULL,
        digest          TEXT NOT NULL
    ) STRICT;
    -- Guards against mistakes, not against someone who can write the file: the chain of
    -- digests is what detects that.
    CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
        BEGIN SELECT RAISE(ABORT, 'audit is append-only'); END;
    CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
        BEGIN SELECT RAISE(ABORT, 'audit is append-only'); END;
    ",
    // 3: what the capability kernel's records hold beyond the indexed columns (`kernel.rs`):
    // a call's whole `lineup_host_core::CallRecord` as JSON (NULL for rows written through the
    // store's own call API), and the conversation and call in which a grant was given (NULL for
    // grants written through `Grants::insert`).
    r"
    ALTER TABLE calls ADD COLUMN record TEXT;
    ALTER TABLE grants ADD COLUMN conversation_id TEXT;
    ALTER TABLE grants ADD COLUMN call_id TEXT;
    ",
    // 4: the app registry (`apps.rs`): each app's current version and whether it is enabled,
    // and every installed version with its package digest (the name of its cache file), in
    // install order (`seq`, for roll back).
    r"
    CREATE TABLE apps (
        id      TEXT PRIMARY KEY,
        current TEXT NOT NULL,
        enabled INTEGER NOT NULL CHECK (enabled IN (0, 1))
    ) STRICT, WITHOUT ROWID;
    CREATE TABLE app_versions (
        id           TEXT NOT NULL,
        version      TEXT NOT NULL,
        name         TEXT NOT NULL,
        digest       TEXT NOT NULL,
        installed_at TEXT NOT NULL,
        seq          INTEGER NOT NULL,
        -- The trusted key whose signature was checked at install (`ed25519:<base64>`), or NULL
        -- when it was installed by digest.
        signed_by    TEXT,
        PRIMARY KEY (id, version)
    ) STRICT, WITHOUT ROWID;
    -- Apps that were installed and are removed, so an open by id is refused `revoked` rather
    -- than as unknown (R-INV-4).
    CREATE TABLE apps_removed (
        id         TEXT PRIMARY KEY,
        removed_at TEXT NOT NULL
    ) STRICT, WITHOUT ROWID;
    ",
    // 5: what each vouched identity was ever offered, so a capability withdrawn across a
    // restart is `revoked` for it (R-INV-4).
    "
    CREATE TABLE offered (
        agent            TEXT NOT NULL,
        capability       TEXT NOT NULL,
        first_offered_at TEXT NOT NULL,
        PRIMARY KEY (agent, capability)
    ) STRICT, WITHOUT ROWID;
    -- The operator's capability policy (`lineup capabilities`): agent '' withdraws the
    -- capability from every agent, another agent hides it from that one (R-INV-4).
    CREATE TABLE capability_policy (
        agent      TEXT NOT NULL,
        capability TEXT NOT NULL,
        since      TEXT NOT NULL,
        PRIMARY KEY (agent, capability)
    ) STRICT, WITHOUT ROWID;
    ",
    // 6: call records belong to the identity that made them (R-CAP-5, R-SES-1): `owner` joins
    // the key. Rows from before have owner '' and answer no one.
    "
    CREATE TABLE calls_owned (
        owner           TEXT NOT NULL DEFAULT '',
        conversation_id TEXT NOT NULL,
        call_id         TEXT NOT NULL,
        capability      TEXT NOT NULL,
        version         TEXT NOT NULL,
        args_digest     TEXT NOT NULL,
        state           TEXT NOT NULL
            CHECK (state IN ('received', 'awaiting_consent', 'running', 'finished')),
        status          TEXT,
        result          TEXT,
        message         TEXT,
        error           TEXT,
        created_at      TEXT NOT NULL,
        updated_at      TEXT NOT NULL,
        record          TEXT,
        -- The lease scope of the host process that wrote the row (`lease.rs`), if any.
        host            TEXT,
        PRIMARY KEY (owner, conversation_id, call_id)
    ) STRICT;
    INSERT INTO calls_owned (owner, conversation_id, call_id, capability, version, args_digest,
                             state, status, result, message, error, created_at, updated_at, record)
        SELECT '', conversation_id, call_id, capability, version, args_digest, state, status,
               result, message, error, created_at, updated_at, record
        FROM calls ORDER BY rowid;
    DROP TABLE calls;
    ALTER TABLE calls_owned RENAME TO calls;
    CREATE INDEX calls_unfinished ON calls (state) WHERE state <> 'finished';
    CREATE INDEX calls_by_key ON calls (conversation_id, call_id);
    ",
    // 7: the audit says why (R-CAP-6): record format 2 carries the kind, the refusal's code and
    // field, a note and a count; format-1 records keep their own canonical form.
    "
    ALTER TABLE audit ADD COLUMN format INTEGER NOT NULL DEFAULT 1;
    ALTER TABLE audit ADD COLUMN kind TEXT;
    ALTER TABLE audit ADD COLUMN code TEXT;
    ALTER TABLE audit ADD COLUMN field TEXT;
    ALTER TABLE audit ADD COLUMN note TEXT;
    ALTER TABLE audit ADD COLUMN count INTEGER;
    ",
    // 8: the open standard-component instances of vouched identities, for a restart (R-STD-15):
    // `record` is the kernel's InstanceRecord as JSON; `updated_at` is unix seconds.
    "
    CREATE TABLE open_instances (
        owner           TEXT NOT NULL,
        conversation_id TEXT NOT NULL,
        instance_id     TEXT NOT NULL,
        kind            TEXT NOT NULL,
        record          TEXT NOT NULL,
        updated_at      INTEGER NOT NULL,
        PRIMARY KEY (owner, conversation_id, instance_id)
    ) STRICT;
    CREATE INDEX open_instances_by_age ON open_instances (owner, updated_at);
    ",
];

/// The schema version this build writes.
pub const SCHEMA_VERSION: u32 = MIGRATIONS.len() as u32;

/// Brings the file at `path` to [`SCHEMA_VERSION`]. A file already there is only read: opening
/// a store never waits for the write lock that another host, writing steadily, may hold.
pub(crate) fn migrate(conn: &Connection, path: &Path, timeout: Duration) -> Result<(), StoreError> {
    let found: u32 = conn
        .pragma_query_value(None, "user_version", |row| row.get(0))
        .map_err(|source| StoreError::Sqlite {
            path: path.to_owned(),
            op: "read user_version",
            source,
        })?;
    if found == SCHEMA_VERSION {
        return Ok(());
    }
    migrate_to(conn, path, timeout, SCHEMA_VERSION)
}

/// Brings the file to version `target` inside one `BEGIN IMMEDIATE` transaction, so that two
/// processes opening a new data directory at once migrate it once.
fn migrate_to(
    conn: &Connection,
    path: &Path,
    timeout: Duration,
    target: u32,
) -> Result<(), StoreError> {
    let path = path.to_owned();
    let err = |op| {
        let path = path.clone();
        move |source| StoreError::Sqlite { path, op, source }
    };
    let tx = begin_immediate(conn, timeout, timeout).map_err(err("begin migration"))?;
    let found: u32 = tx
        .pragma_query_value(None, "user_version", |row| row.get(0))
        .map_err(err("read user_version"))?;
    if found > SCHEMA_VERSION {
        return Err(StoreError::SchemaTooNew {
            path,
            found,
            supported: SCHEMA_VERSION,
        });
    }
    for version in found..target.min(SCHEMA_VERSION) {
        let Some(sql) = MIGRATIONS.get(version as usize) else {
            break;
        };
        tx.execute_batch(sql).map_err(err("migrate schema"))?;
        tx.pragma_update(None, "user_version", version + 1)
            .map_err(err("write user_version"))?;
    }
    tx.commit().map_err(err("commit migration"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GrantKey;
    use crate::Store;
    use rusqlite::Connection;

    #[test]
    fn an_empty_file_is_migrated_to_the_current_version() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        // An empty file, as `touch` leaves it.
        std::fs::write(dir.join(crate::DB_FILE), b"").unwrap();
        let store = Store::open(dir).unwrap();
        assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
        assert_eq!(SCHEMA_VERSION, 8);
        store.audit().verify().unwrap();
    }

    #[test]
    fn a_version_1_file_keeps_its_data_and_gains_the_audit() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let key = GrantKey::new("agent-1", "clipboard.write", "1");
        let revision = {
            let store = open_unmigrated(dir);
            migrate_to(store.conn(), store.path(), store.busy_timeout(), 1).unwrap();
            assert_eq!(store.schema_version().unwrap(), 1);
            store.grants().insert(&key).unwrap();
            let revision = store.revisions().next().unwrap();
            // No audit table yet.
            assert!(store.conn().prepare("SELECT * FROM audit").is_err());
            revision
        };
        let store = Store::open(dir).unwrap();
        assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
        assert!(store.grants().contains(&key).unwrap());
        assert!(store.revisions().next().unwrap().number() > revision.number());
        assert_eq!(store.revisions().next().unwrap().epoch(), revision.epoch());
        store
            .audit()
            .append(&crate::tests::entry("c1", "k1"))
            .unwrap();
        assert_eq!(store.audit().verify().unwrap().count, 1);
    }

    #[test]
    fn a_version_2_file_with_rows_gains_the_kernel_columns_and_keeps_its_rows() {
        use crate::{CallKey, NewCall, Sha256Hex};
        use lineup_host_core::{self as kernel, CapabilityStore};

        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let grant = GrantKey::new("agent-1", "clipboard.write", "1");
        let call = |id: &str| NewCall {
            key: CallKey::new("conv-1", id),
            capability: "clipboard.write".into(),
            version: "1".into(),
            args_digest: Sha256Hex::of(b"{}"),
        };
        let (revision, head) = {
            let store = open_unmigrated(dir);
            migrate_to(store.conn(), store.path(), store.busy_timeout(), 2).unwrap();
            assert_eq!(store.schema_version().unwrap(), 2);
            store.grants().insert(&grant).unwrap();
            // Rows as a version-2 store wrote them (the store's API now needs the owner column).
            let digest = call("done").args_digest;
            for (id, state, status, result) in [
                (
                    "done",
                    "finished",
                    Some("completed"),
                    Some(r#"{"ok":true}"#),
                ),
                ("running", "running", None, None),
            ] {
                store
                    .conn()
                    .execute(
                        "INSERT INTO calls (conversation_id, call_id, capability, version,
                            args_digest, state, status, result, created_at, updated_at)
                         VALUES ('conv-1', ?1, 'clipboard.write', '1', ?2, ?3, ?4, ?5,
                                 '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')",
                        rusqlite::params![id, digest.as_str(), state, status, result],
                    )
                    .unwrap();
            }
            // A format-1 audit record, as a version-2 store wrote it: it must still verify.
            let mut old = crate::AuditRecord {
                seq: 1,
                format: 1,
                time: "2026-01-01T00:00:00Z".into(),
                entry: crate::tests::entry("conv-1", "done"),
                prev: Sha256Hex::zero(),
                digest: Sha256Hex::zero(),
            };
            old.digest = old.compute_digest();
            let e = &old.entry;
            store
                .conn()
                .execute(
                    "INSERT INTO audit (seq, time, conversation_id, call_id, agent, capability,
                        version, risk, args_digest, decision, decision_source, status, prev, digest)
                     VALUES (1, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
                    rusqlite::params![
                        old.time,
                        e.conversation_id,
                        e.call_id,
                        e.agent,
                        e.capability,
                        e.version,
                        e.risk,
                        e.args_digest.as_str(),
                        e.decision,
                        e.decision_source,
                        e.status,
                        old.prev.as_str(),
                        old.digest.as_str()
                    ],
                )
                .unwrap();
            // No kernel columns yet.
            assert!(store.conn().prepare("SELECT record FROM calls").is_err());
            (
                store.revisions().next().unwrap(),
                crate::AuditHead {
                    count: 1,
                    head: old.digest.clone(),
                },
            )
        };

        let mut store = Store::open(dir).unwrap();
        assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
        // The store's own API reads every old row as before.
        assert!(store.grants().contains(&grant).unwrap());
        assert_eq!(store.calls().unfinished().unwrap().len(), 1);
        assert_eq!(store.audit().verify().unwrap(), head);
        // A format-2 record appended after the format-1 one: the chain verifies across both.
        let mut reasoned = crate::tests::entry("conv-1", "later");
        reasoned.detail.code = Some("invalid_arguments".into());
        reasoned.detail.field = Some("payload.arguments/url".into());
        let appended = store.audit().append(&reasoned).unwrap();
        assert_eq!(appended.format, crate::AUDIT_FORMAT);
        assert_eq!(store.audit().verify().unwrap().count, 2);
        let mut out = Vec::new();
        store.audit().export(&mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(!lines[0].contains("\"format\""), "{}", lines[0]);
        assert!(
            lines[1].contains(r#""format":2"#)
                && lines[1].contains(r#""code":"invalid_arguments""#),
            "{}",
            lines[1]
        );
        // A gateway verifies the export line by line.
        let mut gateway = crate::ChainVerifier::new();
        for line in &lines {
            gateway.push(&serde_json::from_str(line).unwrap()).unwrap();
        }
        assert_eq!(gateway.finish().count, 2);
        assert_eq!(store.revisions().next().unwrap().epoch(), revision.epoch());

        // The kernel reads them too, rebuilt from the columns.
        let key = |id: &str| kernel::CallKey {
            conversation_id: "conv-1".try_into().unwrap(),
            call_id: id.try_into().unwrap(),
        };
        let anyone = kernel::AgentIdentity::try_from("agent-1").unwrap();
        let done = CapabilityStore::call(&mut store, &anyone, &key("done"))
            .unwrap()
            .unwrap();
        // A record from before owners were kept answers no one (R-CAP-5).
        assert_eq!(done.owner, None);
        let kernel::CallState::Finished { result } = &done.state else {
            panic!("{done:?}")
        };
        assert_eq!(result.status, kernel::Status::Completed);
        assert_eq!(
            serde_json::to_value(&result.result).unwrap(),
            serde_json::json!({"ok": true})
        );
        assert_eq!(done.version.as_ref().unwrap().as_str(), "1");
        assert_eq!(done.epoch, kernel::RevisionEpoch(0));
        let unfinished = CapabilityStore::unfinished_calls(&mut store).unwrap();
        assert_eq!(unfinished.len(), 1);
        assert_eq!(unfinished[0].key, key("running"));
        assert_eq!(unfinished[0].state, kernel::CallState::Running);
        let grants = CapabilityStore::grants(&mut store).unwrap();
        assert_eq!(grants.len(), 1);
        assert_eq!(grants[0].conversation_id.as_str(), crate::kernel::UNKNOWN);
        assert_eq!(grants[0].call_id.as_str(), crate::kernel::UNKNOWN);
        // And the kernel's epochs continue the old counter (one revision was taken above).
        let epoch = store.next_revision_epoch().unwrap();
        assert_eq!(epoch.0 & 0xffff_ffff, revision.number() + 2);
    }

    #[test]
    fn opening_again_migrates_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        drop(Store::open(dir).unwrap());
        let store = Store::open(dir).unwrap();
        assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    }

    #[test]
    fn a_newer_schema_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        drop(Store::open(dir).unwrap());
        let conn = Connection::open(dir.join(crate::DB_FILE)).unwrap();
        conn.pragma_update(None, "user_version", 99).unwrap();
        drop(conn);
        let err = Store::open(dir).unwrap_err();
        assert!(
            matches!(
                err,
                StoreError::SchemaTooNew {
                    found: 99,
                    supported: 8,
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("schema version 99"), "{err}");
    }

    /// A store with its pragmas but no migration, to test migrations from an old file.
    fn open_unmigrated(dir: &std::path::Path) -> Store {
        let path = dir.join(crate::DB_FILE);
        let conn = Connection::open(&path).unwrap();
        conn.pragma_update(None, "journal_mode", "WAL").unwrap();
        Store::from_parts(conn, path)
    }
}
