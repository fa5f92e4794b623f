//! App ids the app center holds or has held (R-UI-9 as amended): compared ignoring ASCII case
//! (SQLite's `NOCASE`, which folds ASCII only), a tombstone in `apps_removed` for every removed
//! app, kept until an operator forgets it with [`AppIds::forget`], which is audited.

use lineup_host_core::{AppId, Reservation};
use rusqlite::OptionalExtension as _;

use crate::{AuditEntry, Sha256Hex, Store, StoreError};

/// The `conversation_id` of an operator's audit records: they belong to no agent session.
pub const OPERATOR: &str = "operator";

/// What `id` is to the app center, read in `conn`'s snapshot.
pub(crate) fn reservation_in(
    conn: &rusqlite::Connection,
    id: &str,
) -> rusqlite::Result<Option<(String, Held)>> {
    let installed: Option<(String, i64)> = conn
        .query_row(
            "SELECT id, enabled FROM apps WHERE id = ?1 COLLATE NOCASE",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    if let Some((held, enabled)) = installed {
        let state = if enabled != 0 {
            Held::Enabled
        } else {
            Held::Disabled
        };
        return Ok(Some((held, state)));
    }
    let removed: Option<String> = conn
        .query_row(
            "SELECT id FROM apps_removed WHERE id = ?1 COLLATE NOCASE",
            [id],
            |r| r.get(0),
        )
        .optional()?;
    Ok(removed.map(|held| (held, Held::Removed)))
}

/// How an id is held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Held {
    Enabled,
    Disabled,
    Removed,
}

/// Refuses installing `id` when it equals, ignoring ASCII case, an id the app center holds
/// under another spelling or has a tombstone for (R-UI-9).
pub(crate) fn check_installable(
    store: &Store,
    tx: &rusqlite::Transaction<'_>,
    id: &str,
) -> Result<(), StoreError> {
    let found = reservation_in(tx, id).map_err(store.sqlite("select reserved app ids"))?;
    let reason = match found {
        Some((held, Held::Removed)) => format!(
            "the app center held {held} and removed it; its id stays reserved (an inline bundle under it is refused `revoked`) until `lineup apps forget {held}`"
        ),
        Some((held, _)) if held != id => format!(
            "the app center holds {held}, which differs only in case; app ids are compared ignoring ASCII case"
        ),
        _ => return Ok(()),
    };
    Err(StoreError::App {
        id: id.to_owned(),
        reason,
    })
}

/// The app ids a [`Store`]'s app center holds or has held ([`Store::app_ids`]): those of the
/// installed apps (table `apps`) and the tombstones of removed ones (table `apps_removed`).
///
/// Invariants: ids are compared ignoring ASCII case, so an install under an id equal so to one
/// held in another spelling, or to a tombstone, is refused; every removed app leaves a tombstone,
/// which goes only by [`AppIds::forget`], audited and with the revision counter bumped in the
/// same transaction (R-UI-9).
#[derive(Debug, Clone, Copy)]
pub struct AppIds<'s> {
    store: &'s Store,
}

impl<'s> AppIds<'s> {
    /// The app ids of `store`.
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// Whether `id` is held or was held, ignoring ASCII case, and how (R-UI-9); `None` when it
    /// is free. A store that cannot be read reserves nothing here, but then opens nothing by id
    /// either.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`].
    pub fn reservation(&self, id: &str) -> Result<Option<Reservation>, StoreError> {
        let found = reservation_in(self.store.conn(), id)
            .map_err(self.store.sqlite("select reserved app ids"))?;
        Ok(found.and_then(|(held, state)| {
            let held = AppId::try_from(held).ok()?;
            Some(match state {
                Held::Enabled => Reservation::Enabled(held),
                Held::Disabled => Reservation::Disabled(held),
                Held::Removed => Reservation::Removed(held),
            })
        }))
    }

    /// The tombstones: every removed app id still reserved, oldest first, with when it was
    /// removed.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`].
    pub fn removed(&self) -> Result<Vec<(String, String)>, StoreError> {
        self.store.select_all(
            "select from apps_removed",
            "SELECT id, removed_at FROM apps_removed ORDER BY removed_at, id",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
    }

    /// Clears the tombstone of removed app `id` (exact spelling), so that the id may be
    /// installed again and inline bundles under it are no longer refused (R-UI-9). The
    /// operator's act is audited in the same transaction: a record in conversation
    /// [`OPERATOR`], call `apps.forget`, capability `app:<id>`, decision `allowed` by
    /// `operator`, status `completed`.
    ///
    /// # Errors
    /// [`StoreError::App`] when `id` has no tombstone (it is installed, or was never held);
    /// [`StoreError::Sqlite`].
    pub fn forget(&self, id: &str) -> Result<u64, StoreError> {
        let tx = self.store.write("begin app forget")?;
        let found =
            reservation_in(&tx, id).map_err(self.store.sqlite("select reserved app ids"))?;
        match found {
            Some((held, Held::Removed)) if held == id => {}
            Some((held, Held::Removed)) => {
                return Err(StoreError::App {
                    id: id.to_owned(),
                    reason: format!("the removed app's id is spelled {held}; forget it by that id"),
                })
            }
            Some((held, _)) => {
                return Err(StoreError::App {
                    id: id.to_owned(),
                    reason: format!("{held} is installed; remove it first"),
                })
            }
            None => {
                return Err(StoreError::App {
                    id: id.to_owned(),
                    reason: "no removed app of this id is remembered".into(),
                })
            }
        }
        tx.execute("DELETE FROM apps_removed WHERE id = ?1", [id])
            .map_err(self.store.sqlite("delete from apps_removed"))?;
        self.store.audit().append_in(
            &tx,
            &AuditEntry {
                conversation_id: OPERATOR.into(),
                call_id: "apps.forget".into(),
                agent: None,
                capability: format!("app:{id}"),
                version: String::new(),
                risk: "none".into(),
                args_digest: Sha256Hex::of(id.as_bytes()),
                decision: "allowed".into(),
                decision_source: "operator".into(),
                status: "completed".into(),
                detail: crate::AuditDetail {
                    kind: Some("operator".into()),
                    note: Some(
                        "lineup apps forget: a removed app's id may be installed again".into(),
                    ),
                    ..crate::AuditDetail::default()
                },
            },
        )?;
        let revision = crate::revision::bump(&tx).map_err(self.store.sqlite("update revision"))?;
        tx.commit()
            .map_err(self.store.sqlite("commit app forget"))?;
        Ok(revision)
    }
}
