//! A host process's lease in its data directory: `hosts/<scope>.lock`, held with an exclusive
//! `flock` for the process's life. The scope keys the grants of its unvouched sessions
//! (R-SES-1), which the process deletes when it ends; a process that ended without doing so
//! (killed) left a lease nobody holds, and the next host deletes its grants.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use lineup_store::Store;
use rustix::fs::{flock, FlockOperation};

/// The folder of leases inside the data directory.
const HOSTS: &str = "hosts";

/// This process's lease; dropping it deletes the grants of its unvouched sessions.
pub(crate) struct HostLease {
    data_dir: PathBuf,
    scope: String,
    path: PathBuf,
    _file: File,
}

impl HostLease {
    /// Takes a lease under a fresh random scope in `data_dir`, after deleting the unvouched
    /// grants of processes whose lease nobody holds.
    pub(crate) fn take(data_dir: &Path, store: &Store) -> Result<Self, String> {
        let hosts = data_dir.join(HOSTS);
        std::fs::create_dir_all(&hosts)
            .map_err(|e| format!("cannot create {}: {e}", hosts.display()))?;
        let mut random = [0u8; 16];
        getrandom::fill(&mut random).map_err(|e| format!("no random source: {e}"))?;
        let scope: String = random.iter().map(|b| format!("{b:02x}")).collect();
        let path = hosts.join(format!("{scope}.lock"));
        let file = OpenOptions::new()
            .create_new(true)
            .write(true)
            .open(&path)
            .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        flock(&file, FlockOperation::NonBlockingLockExclusive)
            .map_err(|e| format!("cannot lock {}: {e}", path.display()))?;
        prune(&hosts, store, &scope);
        Ok(Self {
            data_dir: data_dir.to_owned(),
            scope,
            path,
            _file: file,
        })
    }

    /// The scope that names this process's unvouched grants.
    pub(crate) fn scope(&self) -> &str {
        &self.scope
    }
}

impl Drop for HostLease {
    fn drop(&mut self) {
        match Store::open_existing(&self.data_dir)
            .and_then(|s| s.forget_unvouched_grants(&self.scope))
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
    let Ok(scopes) = store.unvouched_scopes() else {
        return;
    };
    for scope in scopes.iter().filter(|s| *s != own) {
        // A scope is hex digits; anything else is not a lease name of ours.
        if !scope.chars().all(|c| c.is_ascii_hexdigit()) {
            continue;
        }
        let path = hosts.join(format!("{scope}.lock"));
        let alive = File::open(&path)
            .is_ok_and(|file| flock(&file, FlockOperation::NonBlockingLockShared).is_err());
        if alive {
            continue;
        }
        match store.forget_unvouched_grants(scope) {
            Ok(n) => tracing::info!("{n} grants of an ended host's unvouched sessions forgotten"),
            Err(e) => tracing::warn!("cannot forget an ended host's unvouched grants: {e}"),
        }
        let _ = std::fs::remove_file(&path);
    }
}
