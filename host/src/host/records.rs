//! R-STD-15 and #29 on the host's side: the store the kernel's component records and hibernated
//! Surfaces' records go to
//! ([`HostBuilder::component_store`](super::HostBuilder::component_store)). A write that fails is
//! logged and the instance goes on (the record is a convenience for a restart, never a condition
//! of the answer); without a store nothing is kept and nothing is restored.

use lineup_host_core::{
    ComponentEffect, ConversationId, InstanceId, InstanceRecord, InstanceStore, PartyId,
    SurfaceRecord,
};

/// Where component records go, if anywhere.
#[derive(Default)]
pub(super) struct Records {
    store: Option<Box<dyn InstanceStore>>,
}

impl Records {
    /// Records kept in `store`.
    pub(super) fn new(store: Option<Box<dyn InstanceStore>>) -> Self {
        Self { store }
    }

    /// Writes `effect` when it is a record write (a keep or a forget); any other effect comes
    /// back for its owner.
    pub(super) fn write(&mut self, effect: ComponentEffect) -> Option<ComponentEffect> {
        match effect {
            ComponentEffect::Persist { owner, record } => self.persist(&owner, &record),
            ComponentEffect::PersistSurface { owner, record } => {
                self.persist_surface(&owner, &record)
            }
            ComponentEffect::Forget {
                owner,
                conversation,
                instance,
            } => self.forget(&owner, &conversation, &instance),
            other @ (ComponentEffect::Restore { .. }
            | ComponentEffect::Show(_)
            | ComponentEffect::Update { .. }
            | ComponentEffect::Lock { .. }
            | ComponentEffect::Hide { .. }) => return Some(other),
        }
        None
    }

    /// Keeps `record` for `owner`.
    fn persist(&mut self, owner: &PartyId, record: &InstanceRecord) {
        if let Some(store) = self.store.as_mut() {
            if let Err(e) = store.put_instance(owner, record) {
                tracing::warn!(
                    "component {} not kept for a restart: {e}",
                    record.instance_id
                );
            }
        }
    }

    /// Keeps the record of a hibernated Surface for `owner` (#29).
    fn persist_surface(&mut self, owner: &PartyId, record: &SurfaceRecord) {
        if let Some(store) = self.store.as_mut() {
            if let Err(e) = store.put_surface(owner, record) {
                tracing::warn!(
                    "hibernated surface {} not kept for a restart: {e}",
                    record.instance_id
                );
            }
        }
    }

    /// `owner`'s hibernated Surfaces of `conversation` (none without a store, or when it
    /// cannot be read).
    pub(super) fn read_surfaces(
        &mut self,
        owner: &PartyId,
        conversation: &ConversationId,
    ) -> Vec<SurfaceRecord> {
        let Some(store) = self.store.as_mut() else {
            return Vec::new();
        };
        store.surfaces(owner, conversation).unwrap_or_else(|e| {
            tracing::warn!("hibernated surfaces of {conversation} not read: {e}");
            Vec::new()
        })
    }

    /// Forgets `owner`'s record of `instance` in `conversation`.
    fn forget(&mut self, owner: &PartyId, conversation: &ConversationId, instance: &InstanceId) {
        if let Some(store) = self.store.as_mut() {
            if let Err(e) = store.forget_instance(owner, conversation, instance) {
                tracing::warn!("the record of component {instance} not deleted: {e}");
            }
        }
    }

    /// `owner`'s records of `conversation` (none without a store, or when it cannot be read).
    pub(super) fn read(
        &mut self,
        owner: &PartyId,
        conversation: &ConversationId,
    ) -> Vec<InstanceRecord> {
        let Some(store) = self.store.as_mut() else {
            return Vec::new();
        };
        store.instances(owner, conversation).unwrap_or_else(|e| {
            tracing::warn!("component records of {conversation} not read: {e}");
            Vec::new()
        })
    }
}
