//! What several kernel test files share: a still clock, a session configuration, the
//! envelopes of conversation `c1` from agent `a1`, a restoration records store in memory
//! that tells what the kernel wrote, and the library cache's place.
#![allow(dead_code)]

use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::Duration;

use lineup_host_core::{
    Clock, ConversationId, InstanceId, InstanceRecord, InstanceStore, InstanceStoreError, Limits,
    PartyId, SessionConfig, StorePort, SurfaceRecord,
};
use serde_json::{json, Value};

/// A monotonic clock that never moves.
pub(crate) struct Still;

impl Clock for Still {
    fn monotonic(&self) -> Duration {
        Duration::ZERO
    }
}

/// A session configuration of client `desktop` with `limits`.
pub(crate) fn config(limits: Limits) -> SessionConfig {
    let mut config = SessionConfig::new(PartyId::try_from("desktop").unwrap(), "out");
    config.limits = limits;
    config
}

/// An envelope of `kind` (`ui.open`…) with `payload`, in conversation `c1` from agent `a1`.
pub(crate) fn envelope(id: &str, kind: &str, payload: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "v": 1, "id": id, "type": format!("lineup.v1.{kind}"), "conversation_id": "c1",
        "sender": {"kind": "agent", "id": "a1"}, "payload": payload
    }))
    .unwrap()
}

/// What the kernel asked of a [`Records`] store, in order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Write {
    /// `put_instance`.
    Instance(PartyId, InstanceRecord),
    /// `put_surface`.
    Surface(PartyId, SurfaceRecord),
    /// `forget_instance`.
    Forget(PartyId, ConversationId, InstanceId),
    /// A read of a conversation's records (`instances` and `surfaces`).
    Read(PartyId, ConversationId),
}

/// A restoration records store in memory; its clones share it. It keeps what a read is to
/// find (`stored`, set by a test as another process's store would hold it) apart from the log
/// of what the kernel asked ([`Records::take`]), so a test reads the kernel's calls step by
/// step.
#[derive(Clone, Default)]
pub(crate) struct Records(Rc<RefCell<Shelf>>);

#[derive(Default)]
struct Shelf {
    components: Vec<InstanceRecord>,
    surfaces: Vec<SurfaceRecord>,
    log: Vec<Write>,
}

impl Records {
    /// What the kernel asked since the last call.
    pub(crate) fn take(&self) -> Vec<Write> {
        std::mem::take(&mut self.0.borrow_mut().log)
    }

    /// What a read finds from now on.
    pub(crate) fn stored(&self, components: Vec<InstanceRecord>, surfaces: Vec<SurfaceRecord>) {
        let mut shelf = self.0.borrow_mut();
        shelf.components = components;
        shelf.surfaces = surfaces;
    }

    /// A store port keeping calls in memory and restoration records here.
    pub(crate) fn port(&self) -> StorePort {
        StorePort::memory().with_records(Box::new(self.clone()))
    }
}

impl InstanceStore for Records {
    fn put_instance(
        &mut self,
        owner: &PartyId,
        record: &InstanceRecord,
    ) -> Result<(), InstanceStoreError> {
        let write = Write::Instance(owner.clone(), record.clone());
        self.0.borrow_mut().log.push(write);
        Ok(())
    }

    fn forget_instance(
        &mut self,
        owner: &PartyId,
        conversation: &ConversationId,
        instance: &InstanceId,
    ) -> Result<(), InstanceStoreError> {
        let write = Write::Forget(owner.clone(), conversation.clone(), instance.clone());
        self.0.borrow_mut().log.push(write);
        Ok(())
    }

    fn instances(
        &mut self,
        owner: &PartyId,
        conversation: &ConversationId,
    ) -> Result<Vec<InstanceRecord>, InstanceStoreError> {
        let mut shelf = self.0.borrow_mut();
        let read = Write::Read(owner.clone(), conversation.clone());
        shelf.log.push(read);
        Ok(shelf.components.clone())
    }

    fn put_surface(
        &mut self,
        owner: &PartyId,
        record: &SurfaceRecord,
    ) -> Result<(), InstanceStoreError> {
        let write = Write::Surface(owner.clone(), record.clone());
        self.0.borrow_mut().log.push(write);
        Ok(())
    }

    fn surfaces(
        &mut self,
        _owner: &PartyId,
        _conversation: &ConversationId,
    ) -> Result<Vec<SurfaceRecord>, InstanceStoreError> {
        Ok(self.0.borrow().surfaces.clone())
    }
}

/// The components' records among `writes`, each checked to be `a1`'s.
pub(crate) fn kept_components(writes: &[Write]) -> Vec<InstanceRecord> {
    writes
        .iter()
        .filter_map(|w| match w {
            Write::Instance(owner, record) => {
                assert_eq!(owner.as_str(), "a1");
                Some(record.clone())
            }
            _ => None,
        })
        .collect()
}

/// The hibernated Surfaces' records among `writes`, each checked to be `a1`'s.
pub(crate) fn kept_surfaces(writes: &[Write]) -> Vec<SurfaceRecord> {
    writes
        .iter()
        .filter_map(|w| match w {
            Write::Surface(owner, record) => {
                assert_eq!(owner.as_str(), "a1");
                Some(record.clone())
            }
            _ => None,
        })
        .collect()
}

/// How many records `writes` forgot.
pub(crate) fn forgets(writes: &[Write]) -> usize {
    writes
        .iter()
        .filter(|w| matches!(w, Write::Forget(..)))
        .count()
}

/// The library cache `scripts/libraries.sh` makes (the pinned npm releases of
/// `tests/libraries/package.json`) in `LINEUP_LIBRARIES_DIR` (default
/// `~/.cache/lineup-libraries`), when `probe` (a path inside it) is there. CI runs the script
/// before the tests: under CI (`CI=true`) a missing cache fails the test; elsewhere it is named
/// to the developer and the test has nothing to check (`None`).
#[allow(clippy::print_stderr)] // names the missing cache to the developer who runs it
pub(crate) fn library_cache(probe: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("LINEUP_LIBRARIES_DIR")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/lineup-libraries"))
        })
        .unwrap_or_default();
    if dir.join(probe).exists() {
        return Some(dir);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "no {probe} in the library cache at {}: CI runs `bash scripts/libraries.sh` before the tests",
        dir.display()
    );
    eprintln!(
        "no {probe} in the library cache at {}: `bash scripts/libraries.sh` makes it; nothing checked",
        dir.display()
    );
    None
}
