//! A session's open standard components and the kinds it ever offered.

use std::collections::{BTreeMap, BTreeSet};

use crate::component::{ComponentKind, Instance};
use crate::ids::InstanceId;

/// The standard components open in one session, by instance id, and every kind the session
/// offered since it began.
///
/// Invariant: `offered` only grows, so a kind withdrawn after it was offered is told apart
/// from one never offered (`revoked`, R-STD-4). An instance id is open here or among the
/// session's Surfaces, never both (R-STD-1; the session replaces one by the other).
/// `records_asked` is set while the session's read-back of its records
/// ([`Ticket::RECORDS`](crate::Ticket::RECORDS)) waits for its answer, and a read-back is
/// taken only then, once.
#[derive(Debug, Default)]
pub(crate) struct ComponentDesk {
    open: BTreeMap<InstanceId, Instance>,
    offered: BTreeSet<ComponentKind>,
    records_asked: bool,
}

impl ComponentDesk {
    /// A desk offering `kinds`, nothing open.
    pub(crate) fn offering(kinds: impl IntoIterator<Item = ComponentKind>) -> Self {
        Self {
            open: BTreeMap::new(),
            offered: kinds.into_iter().collect(),
            records_asked: false,
        }
    }

    /// The session asked for its records.
    pub(crate) fn ask_records(&mut self) {
        self.records_asked = true;
    }

    /// Whether a read-back of the records may be taken now: `true` once per ask.
    pub(crate) fn take_records_answer(&mut self) -> bool {
        std::mem::take(&mut self.records_asked)
    }

    /// Notes that `kinds` are offered now (they stay counted as offered for good).
    pub(crate) fn offer(&mut self, kinds: impl IntoIterator<Item = ComponentKind>) {
        self.offered.extend(kinds);
    }

    /// Whether the session ever offered `kind`.
    pub(crate) fn was_offered(&self, kind: &ComponentKind) -> bool {
        self.offered.contains(kind)
    }

    /// Whether `instance` is an open component.
    pub(crate) fn contains_key(&self, instance: &InstanceId) -> bool {
        self.open.contains_key(instance)
    }

    /// The open component `instance`.
    pub(crate) fn get(&self, instance: &InstanceId) -> Option<&Instance> {
        self.open.get(instance)
    }

    /// The open component `instance`, to change.
    pub(crate) fn get_mut(&mut self, instance: &InstanceId) -> Option<&mut Instance> {
        self.open.get_mut(instance)
    }

    /// Opens (or replaces) component `instance`; the one it replaced, if any.
    pub(crate) fn insert(&mut self, instance: InstanceId, component: Instance) -> Option<Instance> {
        self.open.insert(instance, component)
    }

    /// Closes component `instance`; what it was.
    pub(crate) fn remove(&mut self, instance: &InstanceId) -> Option<Instance> {
        self.open.remove(instance)
    }

    /// Closes every component; what they were, by instance id.
    pub(crate) fn take_all(&mut self) -> BTreeMap<InstanceId, Instance> {
        std::mem::take(&mut self.open)
    }

    /// The open components, by instance id.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&InstanceId, &Instance)> {
        self.open.iter()
    }

    /// The open components.
    pub(crate) fn values(&self) -> impl Iterator<Item = &Instance> {
        self.open.values()
    }

    /// How many components are open.
    pub(crate) fn len(&self) -> usize {
        self.open.len()
    }
}
