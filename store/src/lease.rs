//! A host process's lease in its data directory: `hosts/<scope>.lock`, held with an exclusive
//! `flock` for the process's life (an OS lock, released by the kernel however the process
//! ends; never a PID). The scope keys the grants of its unvouched sessions (R-SES-1), which
//! the process deletes when it ends, and marks the call records it writes, so another host
//! can tell a call in flight in a live process from one whose process is gone (R-CAP-5).

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use rustix::fs::{flock, FlockOperation};

use crate::{Store, StoreError};

/// The folder of leases inside the data directory.
const HOSTS: &str = "hosts";

/// This process's lease; dropping it deletes the grants of its unvouched sessions.
#[derive(Debug)]
pub struct HostLease {
    data_dir: PathBuf,
    scope: String,
    path: PathBuf,
    _file: File,
}

impl HostLease {
    /// Takes a lease under a fresh random scope in `data_dir`, after deleting the unvouched
    /// grants of processes whose lease nobody holds.
    ///
    /// # Errors
    /// [`StoreError::Io`] when the lease file cannot be made or locked.
    pub fn take(data_dir: &Path, store: &Store) -> Result<Self, StoreError> {
        let hosts = data_dir.join(HOSTS);
        let io = |path: &Path, e: std::io::Error| StoreError::Io {
            path: path.to_owned(),
            source: e,
        };
        std::fs::create_dir_all(&hosts).map_err(|e| io(&hosts, e))?;
        let mut random = [0u8; 16];
        getrandom::fill(&mut random).map_err(|e| {
            io(
                &hosts,
                std::io::Error::other(format!("no random source: {e}")),
            )
        })?;
        let scope: String = random.iter().map(|b| format!("{b:02x}")).collect();
        let path = hosts.join(format!("{scope}.lock"));
        let file = OpenOptions::new()
            .create_new(true)
            .write(true)
            .open(&path)
            .map_err(|e| io(&path, e))?;
        flock(&file, FlockOperation::NonBlockingLockExclusive).map_err(|e| io(&path, e.into()))?;
        prune(&hosts, store, &scope);
        Ok(Self {
            data_dir: data_dir.to_owned(),
            scope,
            path,
            _file: file,
        })
    }

    /// The scope that names this process: its unvouched grants and the call records it
    /// writes ([`Store::with_host_lease`]).
    pub fn scope(&self) -> &str {
        &self.scope
    }
}

/// Whether the host process of lease `scope` in the data directory of `store` is alive: its
/// lease file exists and someone holds its lock.
pub(crate) fn alive(store: &Store, scope: &str) -> bool {
    if scope.is_empty() || !scope.chars().all(|c| c.is_ascii_hexdigit()) {
        return false;
    }
    let Some(dir) = store.path().parent() else {
        return false;
    };
    let path = dir.join(HOSTS).join(format!("{scope}.lock"));
    File::open(path).is_ok_and(|file| flock(&file, FlockOperation::NonBlockingLockShared).is_err())
}

impl Drop for HostLease {
    fn drop(&mut self) {
        match Store::open_existing(&self.data_dir)
            .and_then(|s| s.grants().forget_unvouched(&self.scope))
        {
            Ok(0) => {}
            Ok(n) => tracing::info!("{n} grants of unvouched sessions forgotten at exit"),
            Err(e) => tracing::warn!("cannot forget the grants of unvouched sessions: {e}"),
        }
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Deletes the unvouched grants of every scope whose lease is not held (its process is gone),
/// and its lease file.
fn prune(hosts: &Path, store: &Store, own: &str) {
    let Ok(scopes) = store.grants().unvouched_scopes() else {
        return;
    };
    for scope in scopes.iter().filter(|s| *s != own) {
        // A scope is hex digits; anything else is not a lease name of ours.
        if !scope.chars().all(|c| c.is_ascii_hexdigit()) || alive(store, scope) {
            continue;
        }
        let path = hosts.join(format!("{scope}.lock"));
        match store.grants().forget_unvouched(scope) {
            Ok(n) => tracing::info!("{n} grants of an ended host's unvouched sessions forgotten"),
            Err(e) => tracing::warn!("cannot forget an ended host's unvouched grants: {e}"),
        }
        let _ = std::fs::remove_file(&path);
    }
}
