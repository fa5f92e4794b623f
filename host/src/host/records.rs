//! R-STD-15 and #29 on the host's side: the store the kernel's component records and hibernated
//! Surfaces' records go to
//! ([`HostBuilder::component_store`](super::HostBuilder::component_store)). A write that fails is
//! logged and the instance goes on (the record is a convenience for a restart, never a condition
//! of the answer); without a store nothing is kept and nothing is restored.

use lineup_host_core::{
    Answer, ComponentEffect, ConversationId, Effect, InstanceId, InstanceRecord, InstanceStore,
    PartyId, StoredRecords, SurfaceRecord, Ticket,
};

/// What is left of a component effect once its record, if it is one, is written.
pub(super) enum Recorded {
    /// A record was kept or forgotten: nothing is left.
    Written,
    /// The kernel's read-back of a session's records, answered (`Answer::Records`).
    Read(Ticket, Answer),
    /// An effect for the component's renderer.
    Shown(ComponentEffect),
}

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

    /// Carries out component `effect` as far as the records go: a keep or a forget is written,
    /// a read-back is read; what is left is for the renderer.
    pub(super) fn carry_out(&mut self, effect: ComponentEffect) -> Recorded {
        let Some(effect) = self.write(effect) else {
            return Recorded::Written;
        };
        match effect {
            ComponentEffect::Restore {
                ticket,
                owner,
                conversation,
            } => Recorded::Read(ticket, self.restore(&owner, &conversation)),
            // Written above.
            ComponentEffect::Persist { .. }
            | ComponentEffect::PersistSurface { .. }
            | ComponentEffect::Forget { .. } => Recorded::Written,
            shown @ (ComponentEffect::Show(_)
            | ComponentEffect::Update { .. }
            | ComponentEffect::Lock { .. }
            | ComponentEffect::Hide { .. }) => Recorded::Shown(shown),
        }
    }

    /// Writes `effect` when it is a record write ([`Records::write`]); any other effect comes
    /// back for the interpreter.
    pub(super) fn write_effect(&mut self, effect: Effect) -> Option<Effect> {
        match effect {
            Effect::Component(effect) => self.write(effect).map(Effect::Component),
            other => Some(other),
        }
    }

    /// `owner`'s records of `conversation`, its components' and its hibernated Surfaces', as
    /// the kernel's answer to its read-back (`ComponentEffect::Restore`).
    fn restore(&mut self, owner: &PartyId, conversation: &ConversationId) -> Answer {
        let records = StoredRecords {
            components: self.read(owner, conversation),
            surfaces: self.read_surfaces(owner, conversation),
        };
        Answer::Records(Box::new(records))
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
    fn read_surfaces(
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
    fn read(&mut self, owner: &PartyId, conversation: &ConversationId) -> Vec<InstanceRecord> {
        let Some(store) = self.store.as_mut() else {
            return Vec::new();
        };
        store.instances(owner, conversation).unwrap_or_else(|e| {
            tracing::warn!("component records of {conversation} not read: {e}");
            Vec::new()
        })
    }
}
