//! [`StorePort`]: the kernel's one way to the platform's durable stores. The kernel calls it
//! where a step needs a durable read or write and takes the answer as the return value; the
//! contract of each call is the table in the store module ([`CapabilityStore`]).

use std::cell::RefCell;
use std::error::Error;
use std::fmt;
use std::rc::Rc;

use crate::capability::store::{
    AuditRecord, CallKey, CallRecord, CapabilityStore, GrantKey, GrantRecord, RevisionEpoch,
};
use crate::component::{InstanceRecord, InstanceStore};
use crate::ids::{AgentIdentity, CapabilityName, ConversationId, InstanceId, PartyId};
use crate::surface_record::SurfaceRecord;

/// The platform's durable stores as the kernel reaches them: a [`CapabilityStore`] for calls,
/// grants, the audit and revision epochs, and, when the platform keeps them, an
/// [`InstanceStore`] for the records of open components and hibernated Surfaces (R-STD-15,
/// #29). Set in [`SessionConfig::store`](crate::SessionConfig::store); clones are handles to
/// the same stores, so every session of a host and the host itself share one.
///
/// Each call runs one store method to its end before it returns (one small transaction in a
/// durable store) and answers with its result: a write that returns `Ok` is durable. A call
/// made while another is still running (a store that called back into the port) fails with a
/// [`StoreFailure`] instead of waiting or panicking. Every failure goes to the reporter set with
/// [`StorePort::on_failure`], then back to the kernel, which decides what it means for the call
/// or record at hand (the store module's table).
///
/// ```
/// use lineup_host_core::{MemoryStore, StorePort};
/// let store = MemoryStore::default();
/// let port = StorePort::new(store.clone()).on_failure(|failure| eprintln!("{failure}"));
/// let first = port.next_revision_epoch().unwrap();
/// assert!(port.next_revision_epoch().unwrap() > first);
/// assert!(port.unfinished_calls().unwrap().is_empty());
/// ```
#[derive(Clone)]
pub struct StorePort {
    stores: Rc<Stores>,
}

/// What a [`StorePort`] holds. Invariant: each store is borrowed only for the one call that
/// uses it, never across a call back into the port.
struct Stores {
    calls: RefCell<Box<dyn CallStore>>,
    records: RefCell<Option<Box<dyn InstanceStore>>>,
    report: RefCell<Option<Reporter>>,
}

/// What the platform does with each [`StoreFailure`] ([`StorePort::on_failure`]).
type Reporter = Box<dyn Fn(&StoreFailure)>;

impl fmt::Debug for StorePort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let records = self.stores.records.try_borrow().map(|r| r.is_some());
        f.debug_struct("StorePort")
            .field("records", &records.ok())
            .finish_non_exhaustive()
    }
}

/// What the store holds for a call key, as the kernel reads it before anything else (R-CAP-5).
pub(crate) enum KeyRecord {
    /// The key's record.
    Kept(Box<CallRecord>),
    /// The key's record is unfinished and the host process that wrote it is still alive: the
    /// call is deciding or running there ([`CapabilityStore::in_flight_elsewhere`]).
    InFlightElsewhere(Box<CallRecord>),
}

/// Which call of the port failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StoreOp {
    /// [`CapabilityStore::next_revision_epoch`].
    NextEpoch,
    /// [`CapabilityStore::unfinished_calls`].
    UnfinishedCalls,
    /// [`CapabilityStore::offered`].
    ReadOffered,
    /// [`CapabilityStore::call`] and [`CapabilityStore::in_flight_elsewhere`].
    ReadCall,
    /// [`CapabilityStore::put_call`].
    WriteCall,
    /// [`CapabilityStore::grant`].
    ReadGrant,
    /// [`CapabilityStore::put_grant`].
    WriteGrant,
    /// [`CapabilityStore::append_audit`].
    AppendAudit,
    /// [`CapabilityStore::remember_offered`].
    RememberOffered,
    /// [`InstanceStore::put_instance`] or [`InstanceStore::put_surface`].
    WriteRecord,
    /// [`InstanceStore::forget_instance`].
    ForgetRecord,
    /// [`InstanceStore::instances`] and [`InstanceStore::surfaces`].
    ReadRecords,
}

impl fmt::Display for StoreOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            StoreOp::NextEpoch => "taking a revision epoch",
            StoreOp::UnfinishedCalls => "reading the unfinished calls",
            StoreOp::ReadOffered => "reading the capabilities offered before",
            StoreOp::ReadCall => "reading a call record",
            StoreOp::WriteCall => "writing a call record",
            StoreOp::ReadGrant => "reading a grant",
            StoreOp::WriteGrant => "writing a grant",
            StoreOp::AppendAudit => "appending an audit record",
            StoreOp::RememberOffered => "remembering the capabilities offered",
            StoreOp::WriteRecord => "keeping a restoration record",
            StoreOp::ForgetRecord => "forgetting a restoration record",
            StoreOp::ReadRecords => "reading the restoration records",
        })
    }
}

/// A call of the [`StorePort`] that failed: which one, and the store's own error (its source
/// chain intact). Nothing the call was to write was written.
#[derive(Debug)]
pub struct StoreFailure {
    op: StoreOp,
    error: Box<dyn Error + Send + Sync>,
}

impl StoreFailure {
    /// Which call failed.
    pub fn op(&self) -> StoreOp {
        self.op
    }

    /// The store's error, as it said it.
    pub fn reason(&self) -> String {
        self.error.to_string()
    }
}

impl fmt::Display for StoreFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.op, self.error)
    }
}

impl Error for StoreFailure {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        Some(self.error.as_ref())
    }
}

/// The port was called again while one of its stores was still in use.
#[derive(Debug)]
struct Busy;

impl fmt::Display for Busy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the store is in use by a call that has not returned; nothing was done")
    }
}

impl Error for Busy {}

/// A write whose failure changes no answer (an audit record, a record that is not yet the
/// call's answer, a grant, a restoration record): the port reported the failure, and the kernel
/// goes on as if it had been kept.
pub(crate) fn reported(written: Result<(), StoreFailure>) {
    let _reported_by_the_port = written;
}

impl StorePort {
    /// The port of `calls`, keeping no restoration records (add them with
    /// [`StorePort::with_records`]) and reporting failures nowhere (set
    /// [`StorePort::on_failure`]).
    pub fn new(calls: impl CapabilityStore + 'static) -> Self {
        Self {
            stores: Rc::new(Stores {
                calls: RefCell::new(Box::new(calls)),
                records: RefCell::new(None),
                report: RefCell::new(None),
            }),
        }
    }

    /// An in-memory port ([`MemoryStore`](crate::MemoryStore)): nothing outlives the process.
    pub fn memory() -> Self {
        Self::new(crate::MemoryStore::default())
    }

    /// The same port keeping the records of open components and hibernated Surfaces in
    /// `records` (R-STD-15, #29); without, none is kept and none restored. (Called from inside
    /// one of the port's own calls, it changes nothing.)
    pub fn with_records(self, records: Box<dyn InstanceStore>) -> Self {
        if let Ok(mut slot) = self.stores.records.try_borrow_mut() {
            *slot = Some(records);
        }
        self
    }

    /// The same port handing every [`StoreFailure`] to `report` (the platform logs it) before
    /// the kernel gets it back. (Called from inside one of the port's own calls, it changes
    /// nothing.)
    pub fn on_failure(self, report: impl Fn(&StoreFailure) + 'static) -> Self {
        if let Ok(mut slot) = self.stores.report.try_borrow_mut() {
            *slot = Some(Box::new(report));
        }
        self
    }

    /// [`CapabilityStore::next_revision_epoch`]: one per session (R-INV-2).
    pub fn next_revision_epoch(&self) -> Result<RevisionEpoch, StoreFailure> {
        self.on_calls(StoreOp::NextEpoch, |s| s.next_revision_epoch())
    }

    /// [`CapabilityStore::unfinished_calls`]: once per host start (R-CAP-5).
    pub fn unfinished_calls(&self) -> Result<Vec<CallRecord>, StoreFailure> {
        self.on_calls(StoreOp::UnfinishedCalls, |s| s.unfinished_calls())
    }

    /// [`CapabilityStore::offered`]: what vouched `agent` was offered before (R-INV-4).
    pub fn offered(&self, agent: &AgentIdentity) -> Result<Vec<CapabilityName>, StoreFailure> {
        self.on_calls(StoreOp::ReadOffered, |s| s.offered(agent))
    }

    /// [`CapabilityStore::append_audit`] (R-CAP-6).
    pub fn append_audit(&self, record: &AuditRecord) -> Result<(), StoreFailure> {
        self.on_calls(StoreOp::AppendAudit, |s| s.append_audit(record))
    }

    /// The record of `key` for `owner`, and whether its call is in flight in another live
    /// host process (R-CAP-5).
    pub(crate) fn call(
        &self,
        owner: &AgentIdentity,
        key: &CallKey,
    ) -> Result<Option<KeyRecord>, StoreFailure> {
        self.on_calls(StoreOp::ReadCall, |s| {
            let Some(record) = s.call(owner, key)? else {
                return Ok(None);
            };
            let elsewhere = !record.state.is_finished() && s.in_flight_elsewhere(&record)?;
            let record = Box::new(record);
            Ok(Some(match elsewhere {
                true => KeyRecord::InFlightElsewhere(record),
                false => KeyRecord::Kept(record),
            }))
        })
    }

    /// [`CapabilityStore::put_call`]: `Ok` once the record is durable.
    pub(crate) fn put_call(&self, record: &CallRecord) -> Result<(), StoreFailure> {
        self.on_calls(StoreOp::WriteCall, |s| s.put_call(record))
    }

    /// Whether the grant of `key` is remembered, read at every decision (R-CAP-2).
    pub(crate) fn grant(&self, key: &GrantKey) -> Result<bool, StoreFailure> {
        self.on_calls(StoreOp::ReadGrant, |s| Ok(s.grant(key)?.is_some()))
    }

    /// [`CapabilityStore::put_grant`].
    pub(crate) fn put_grant(&self, grant: &GrantRecord) -> Result<(), StoreFailure> {
        self.on_calls(StoreOp::WriteGrant, |s| s.put_grant(grant))
    }

    /// [`CapabilityStore::remember_offered`] (R-INV-4).
    pub(crate) fn remember_offered(
        &self,
        agent: &AgentIdentity,
        capabilities: &[CapabilityName],
    ) -> Result<(), StoreFailure> {
        self.on_calls(StoreOp::RememberOffered, |s| {
            s.remember_offered(agent, capabilities)
        })
    }

    /// [`InstanceStore::put_instance`] (R-STD-15).
    pub(crate) fn put_instance(
        &self,
        owner: &PartyId,
        record: &InstanceRecord,
    ) -> Result<(), StoreFailure> {
        self.on_records(StoreOp::WriteRecord, |r| r.put_instance(owner, record))
    }

    /// [`InstanceStore::put_surface`] (#29).
    pub(crate) fn put_surface(
        &self,
        owner: &PartyId,
        record: &SurfaceRecord,
    ) -> Result<(), StoreFailure> {
        self.on_records(StoreOp::WriteRecord, |r| r.put_surface(owner, record))
    }

    /// [`InstanceStore::forget_instance`], of either kind.
    pub(crate) fn forget_instance(
        &self,
        owner: &PartyId,
        conversation: &ConversationId,
        instance: &InstanceId,
    ) -> Result<(), StoreFailure> {
        self.on_records(StoreOp::ForgetRecord, |r| {
            r.forget_instance(owner, conversation, instance)
        })
    }

    /// `owner`'s records of `conversation`: its components' and its hibernated Surfaces'.
    pub(crate) fn read_records(
        &self,
        owner: &PartyId,
        conversation: &ConversationId,
    ) -> Result<(Vec<InstanceRecord>, Vec<SurfaceRecord>), StoreFailure> {
        self.on_records(StoreOp::ReadRecords, |r| {
            Ok((
                r.instances(owner, conversation)?,
                r.surfaces(owner, conversation)?,
            ))
        })
    }

    /// Runs `call` on the capability store, for `op`.
    fn on_calls<T>(
        &self,
        op: StoreOp,
        call: impl FnOnce(&mut dyn CallStore) -> Result<T, Fault>,
    ) -> Result<T, StoreFailure> {
        let done = match self.stores.calls.try_borrow_mut() {
            Ok(mut store) => call(store.as_mut()),
            Err(_) => Err(Box::new(Busy) as Fault),
        };
        self.failed(op, done)
    }

    /// Runs `call` on the records store, for `op`; without one, what an empty store answers.
    fn on_records<T: Default>(
        &self,
        op: StoreOp,
        call: impl FnOnce(&mut dyn InstanceStore) -> Result<T, Fault>,
    ) -> Result<T, StoreFailure> {
        let done = match self.stores.records.try_borrow_mut() {
            Ok(mut store) => store
                .as_mut()
                .map_or(Ok(T::default()), |s| call(s.as_mut())),
            Err(_) => Err(Box::new(Busy) as Fault),
        };
        self.failed(op, done)
    }

    /// `done`, its failure reported first.
    fn failed<T>(&self, op: StoreOp, done: Result<T, Fault>) -> Result<T, StoreFailure> {
        done.map_err(|error| {
            let failure = StoreFailure { op, error };
            if let Ok(report) = self.stores.report.try_borrow() {
                if let Some(report) = report.as_ref() {
                    report(&failure);
                }
            }
            failure
        })
    }
}

/// A store's error, boxed with its source chain intact.
type Fault = Box<dyn Error + Send + Sync>;

/// A [`CapabilityStore`] with its error type erased, so the port can hold any.
trait CallStore {
    fn next_revision_epoch(&mut self) -> Result<RevisionEpoch, Fault>;
    fn unfinished_calls(&mut self) -> Result<Vec<CallRecord>, Fault>;
    fn offered(&mut self, agent: &AgentIdentity) -> Result<Vec<CapabilityName>, Fault>;
    fn call(&mut self, owner: &AgentIdentity, key: &CallKey) -> Result<Option<CallRecord>, Fault>;
    fn in_flight_elsewhere(&mut self, record: &CallRecord) -> Result<bool, Fault>;
    fn put_call(&mut self, record: &CallRecord) -> Result<(), Fault>;
    fn grant(&mut self, key: &GrantKey) -> Result<Option<GrantRecord>, Fault>;
    fn put_grant(&mut self, grant: &GrantRecord) -> Result<(), Fault>;
    fn append_audit(&mut self, record: &AuditRecord) -> Result<(), Fault>;
    fn remember_offered(
        &mut self,
        agent: &AgentIdentity,
        capabilities: &[CapabilityName],
    ) -> Result<(), Fault>;
}

impl<S: CapabilityStore> CallStore for S {
    fn next_revision_epoch(&mut self) -> Result<RevisionEpoch, Fault> {
        Ok(CapabilityStore::next_revision_epoch(self)?)
    }

    fn unfinished_calls(&mut self) -> Result<Vec<CallRecord>, Fault> {
        Ok(CapabilityStore::unfinished_calls(self)?)
    }

    fn offered(&mut self, agent: &AgentIdentity) -> Result<Vec<CapabilityName>, Fault> {
        Ok(CapabilityStore::offered(self, agent)?)
    }

    fn call(&mut self, owner: &AgentIdentity, key: &CallKey) -> Result<Option<CallRecord>, Fault> {
        Ok(CapabilityStore::call(self, owner, key)?)
    }

    fn in_flight_elsewhere(&mut self, record: &CallRecord) -> Result<bool, Fault> {
        Ok(CapabilityStore::in_flight_elsewhere(self, record)?)
    }

    fn put_call(&mut self, record: &CallRecord) -> Result<(), Fault> {
        Ok(CapabilityStore::put_call(self, record)?)
    }

    fn grant(&mut self, key: &GrantKey) -> Result<Option<GrantRecord>, Fault> {
        Ok(CapabilityStore::grant(self, key)?)
    }

    fn put_grant(&mut self, grant: &GrantRecord) -> Result<(), Fault> {
        Ok(CapabilityStore::put_grant(self, grant)?)
    }

    fn append_audit(&mut self, record: &AuditRecord) -> Result<(), Fault> {
        Ok(CapabilityStore::append_audit(self, record)?)
    }

    fn remember_offered(
        &mut self,
        agent: &AgentIdentity,
        capabilities: &[CapabilityName],
    ) -> Result<(), Fault> {
        Ok(CapabilityStore::remember_offered(
            self,
            agent,
            capabilities,
        )?)
    }
}
