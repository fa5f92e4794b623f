//! The session table (R-SES-1): one host serves many agent sessions at once, one [`Session`] per
//! `conversation_id`, each with its own Surfaces, instance ids, inventory and calls.
//!
//! [`Sessions`] decodes an inbound envelope once and routes it by its conversation. An envelope
//! of a new conversation establishes a session only when that session accepts it; a refused one
//! leaves the table as it was. What cannot be decoded is answered by the table itself, in the
//! refused envelope's conversation when it can be read (R-ENV-5). Limits apply per session (the
//! session's own [`Limits`]) and in total: `max_surfaces` over every session, and
//! `max_sessions`.

use std::fmt;
use std::time::Duration;

use crate::capability::{Answer, Capability, CapabilitySetup, Ticket};
use crate::component_link::ComponentLink;
use crate::decode::decode;
use crate::error::{ProtocolError, UsageError};
use crate::ids::{AgentIdentity, CapabilityName, ConversationId, InstanceId, PartyId};
use crate::limits::Limits;
use crate::mcp::{RpcError, RpcId};
use crate::message::Message;
use crate::page_input::PageInput;
use crate::session::{Clock, Effect, GoneReason, Session, SessionConfig, Stats, SurfaceOpen};
use crate::{SurfaceKey, Timestamp};

mod directory;
mod ending;
mod establishing;
mod maker;
mod registrations;

use directory::Directory;
use ending::Ending;
use establishing::{cannot_start, too_many_sessions, Establishing};
use maker::Maker;
use registrations::Registrations;

pub use crate::keys::SessionId;

/// What the embedder (or webview-shell) provides to start a session: its clock, and its
/// capability kernel's setup, whose revision epoch the platform takes from its store.
/// host-core stays sans-IO: the store is behind this trait and the template's
/// [`SessionConfig::store`].
pub trait SessionFactory {
    /// The monotonic clock of a new session, and of the table itself.
    fn clock(&mut self) -> Box<dyn Clock>;

    /// The capability setup of a new session: its own revision epoch from the store (R-INV-2)
    /// and the vouched `agent` (R-SES-1). `Ok(None)` leaves capabilities off in it: every
    /// `app.call` is then answered `unsupported`. Called only for a session about to be
    /// established.
    fn capabilities(
        &mut self,
        agent: Option<&AgentIdentity>,
    ) -> Result<Option<CapabilitySetup>, String>;
}

/// The effects of one step of the table, with the session they came from, so that a
/// [`Effect::Capability`]'s [`Ticket`](crate::Ticket) is answered to that session
/// ([`Sessions::answered`]); tickets are per session.
#[derive(Debug)]
pub struct SessionEffects {
    /// The session; [`SessionId::STANDALONE`] for what the table answered itself.
    pub session: SessionId,
    /// What to do, in order.
    pub effects: Vec<Effect>,
}

impl SessionEffects {
    /// `effects` of `session`.
    pub(crate) fn of(session: SessionId, effects: Vec<Effect>) -> Self {
        Self { session, effects }
    }
}

/// The session table of one host (R-SES-1).
///
/// ```
/// use std::time::Duration;
/// use lineup_host_core::{
///     CapabilitySetup, AgentIdentity, Clock, Effect, PartyId, SessionConfig, SessionFactory,
///     Sessions,
/// };
///
/// struct Fixed;
/// impl Clock for Fixed { fn monotonic(&self) -> Duration { Duration::ZERO } }
/// struct NoCapabilities;
/// impl SessionFactory for NoCapabilities {
///     fn clock(&mut self) -> Box<dyn Clock> { Box::new(Fixed) }
///     fn capabilities(&mut self, _: Option<&AgentIdentity>)
///         -> Result<Option<CapabilitySetup>, String> { Ok(None) }
/// }
///
/// let template = SessionConfig::new(PartyId::try_from("desktop").unwrap(), "out");
/// let mut table = Sessions::new(template, Box::new(NoCapabilities)).unwrap();
/// let open = |conversation: &str| format!(r#"{{"v":1,"id":"m1","type":"lineup.v1.ui.open",
///   "conversation_id":"{conversation}","sender":{{"kind":"agent","id":"a1"}},
///   "payload":{{"instance_id":"w1","app":{{"id":"com.example.w","version":"1.0.0",
///   "html":"<b>hi</b>","css":"","js":""}}}}}}"#);
/// // Two conversations both open `w1`: two sessions, two different webviews.
/// let a = table.handle_inbound(open("c1").as_bytes());
/// let b = table.handle_inbound(open("c2").as_bytes());
/// let (Effect::Open(a), Effect::Open(b)) = (&a.effects[0], &b.effects[0]) else { panic!() };
/// assert_eq!(a.key.instance, b.key.instance);
/// assert_ne!(a.key, b.key);
/// assert_eq!(table.len(), 2);
/// ```
pub struct Sessions {
    /// Makes the sessions: the template, the factory, the table's clock.
    maker: Maker,
    /// Answers what belongs to no session; it is never established.
    table: Session,
    /// The open sessions, by id and by conversation.
    directory: Directory,
    /// Ended sessions whose capability calls still run, and the counters of all that ended.
    ending: Ending,
    /// The host's registrations, fanned out to every session (clones share the compiled
    /// schema) and replayed in each new one.
    registrations: Registrations,
}

impl fmt::Debug for Sessions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sessions")
            .field("sessions", &self.directory)
            .field("registered", &self.registrations.capabilities().len())
            .finish_non_exhaustive()
    }
}

impl Sessions {
    /// A table whose sessions are configured like `template` (client, message-id prefix, limits,
    /// bundle policy, and the vouched agent of sessions established by an envelope). The
    /// template's `conversation_id` and `session_id` are not used.
    pub fn new(
        template: SessionConfig,
        factory: Box<dyn SessionFactory>,
    ) -> Result<Self, UsageError> {
        let mut maker = Maker::new(template, factory);
        Ok(Self {
            table: maker.table()?,
            maker,
            directory: Directory::default(),
            ending: Ending::default(),
            registrations: Registrations::default(),
        })
    }

    /// How long from now until the table has timed work (the one clock of the kernel, with
    /// [`Sessions::handle_timeout`]): a capability call's deadline or retry (R-CAP-4), a
    /// component's `expires_at` (R-STD-7, on the wall clock `wall` the caller reads: the table
    /// keeps none), an MCP App view's deadline (R-MCP-6, R-MCP-8), or a quiet session's end
    /// after `idle` (none without). `None`: nothing timed.
    pub fn poll_timeout(&self, wall: Timestamp, idle: Option<Duration>) -> Option<Duration> {
        let calls = self.next_capability_wakeup();
        let components = self.next_component_expiry().map(|at| wall.until(&at));
        let quiet = idle.and_then(|idle| self.next_idle_check(idle));
        let views = self
            .directory
            .iter()
            .filter_map(|(_, s)| s.next_mcp_wakeup())
            .min();
        [calls, components, quiet, views]
            .into_iter()
            .flatten()
            .min()
    }

    /// Does the timed work that is due at `wall` and on the table's own clock: calls expired or
    /// timed out, components past their `expires_at` closed `expired`, and, with `idle`,
    /// sessions quiet that long ended. Cheap when nothing is due: call it on every turn and
    /// when the timer [`Sessions::poll_timeout`] armed fires.
    pub fn handle_timeout(
        &mut self,
        wall: Timestamp,
        idle: Option<Duration>,
    ) -> Vec<SessionEffects> {
        // Idle sessions first: the pass also marks every session that holds something as
        // busy now, so one whose last question expires below is quiet from now on.
        let mut due = idle.map(|idle| self.end_idle(idle)).unwrap_or_default();
        if self.next_capability_wakeup().is_some_and(|d| d.is_zero()) {
            due.extend(self.poll_capabilities());
        }
        if self.next_component_expiry().is_some_and(|at| at <= wall) {
            due.extend(self.expire_components(wall));
        }
        let views_due =
            |_: SessionId, s: &Session| s.next_mcp_wakeup().is_some_and(|d| d.is_zero());
        due.extend(self.directory.each(views_due, Session::poll_mcp));
        due
    }

    /// The limits of every session, and in total (`max_surfaces`, `max_sessions`).
    pub fn limits(&self) -> &Limits {
        self.maker.limits()
    }

    /// How many sessions are open.
    pub fn len(&self) -> usize {
        self.directory.len()
    }

    /// Whether no session is open.
    pub fn is_empty(&self) -> bool {
        self.directory.is_empty()
    }

    /// The open sessions, in the order they were established.
    pub fn iter(&self) -> impl Iterator<Item = (SessionId, &Session)> + '_ {
        self.directory.iter()
    }

    /// The session of `conversation`, if one is open.
    pub fn id_of(&self, conversation: &ConversationId) -> Option<SessionId> {
        self.directory.id_of(conversation)
    }

    /// Session `id`, while it is open.
    pub fn get(&self, id: SessionId) -> Option<&Session> {
        self.directory.get(id)
    }

    /// Handles what the webview of Surface `key` reported, in the session the key names: the
    /// one route for page input, beside [`Sessions::handle_inbound`] for the agent's. Nothing
    /// happens once that session has ended (its views are gone or going).
    pub fn handle_page(&mut self, key: &SurfaceKey, input: PageInput<'_>) -> SessionEffects {
        let effects = self
            .directory
            .get_mut(key.session)
            .map(|session| session.handle_page(key, input))
            .unwrap_or_default();
        SessionEffects::of(key.session, effects)
    }

    /// The host's answer to MCP App view `key`'s request `id`, one it took itself
    /// ([`McpEffect::HostOwned`](crate::McpEffect::HostOwned), R-MCP-8), in the session the key
    /// names ([`Session::mcp_host_answer`]); nothing once that session has ended.
    pub fn mcp_host_answer(
        &mut self,
        key: &SurfaceKey,
        id: &RpcId,
        outcome: Result<serde_json::Value, RpcError>,
    ) -> SessionEffects {
        let effects = self
            .directory
            .get_mut(key.session)
            .map(|session| session.mcp_host_answer(key, id, outcome))
            .unwrap_or_default();
        SessionEffects::of(key.session, effects)
    }

    /// The Surfaces open over every session.
    pub fn surface_count(&self) -> usize {
        self.directory.surface_count()
    }

    /// The counters of what the table refused itself (undecodable and oversized envelopes,
    /// `too_many_sessions`, envelopes refused before their session existed).
    pub fn table_stats(&self) -> &Stats {
        self.table.stats()
    }

    /// The counters of every session, ended ones included, and of the table's own refusals,
    /// added up.
    pub fn stats(&self) -> Stats {
        let mut total = self.ending.stats().clone();
        total += self.table.stats();
        for (_, session) in self.directory.iter() {
            total += session.stats();
        }
        total
    }

    /// Handles one inbound envelope (agent → client) as raw bytes: decoded once, then routed to
    /// the session of its conversation, which is established when it accepts the envelope.
    pub fn handle_inbound(&mut self, bytes: &[u8]) -> SessionEffects {
        match decode(bytes, self.maker.limits()) {
            Ok(message) => self.handle_message(message),
            Err(err) => match err.conversation_id.clone() {
                // R-SES-1: a well-formed envelope whose payload is refused establishes its
                // conversation's session.
                Some(conversation)
                    if err.sender.is_some() && self.id_of_refused(&err).is_none() =>
                {
                    let total = self.surface_count();
                    self.establish(Establishing::Refused { err, conversation }, total)
                }
                _ => self.refuse_undecodable(err),
            },
        }
    }

    /// Refuses an envelope that cannot be decoded and establishes nothing (R-ENV-5).
    fn refuse_undecodable(&mut self, err: ProtocolError) -> SessionEffects {
        let unreadable = err.conversation_id.is_none();
        // The session of the refused envelope's conversation answers it when there is one, so
        // its refusals are its own (R-CAP-6: audited, floods merged, per session).
        let answerer = self
            .id_of_refused(&err)
            .unwrap_or_else(|| self.answerer(unreadable));
        let effects = self.session_or_table(answerer).refuse_undecodable(err);
        SessionEffects::of(answerer, effects)
    }

    /// Refuses an inbound line too long to be read (R-ENV-4).
    pub fn handle_oversized(&mut self, len: u64) -> SessionEffects {
        let answerer = self.answerer(true);
        let effects = self.session_or_table(answerer).handle_oversized(len);
        SessionEffects::of(answerer, effects)
    }

    /// Refuses a binary frame of a WebSocket transport ([`Session::handle_binary_frame`]),
    /// answered like an oversized line: by the only session, else the table.
    pub fn handle_binary_frame(&mut self, len: u64) -> SessionEffects {
        let answerer = self.answerer(true);
        let effects = self.session_or_table(answerer).handle_binary_frame(len);
        SessionEffects::of(answerer, effects)
    }

    /// Who answers an envelope that cannot be decoded: the table, in the refused envelope's
    /// conversation when it can be read (R-ENV-5); when it cannot and exactly one session is
    /// open, that session, in its conversation (the only one the line can be from); otherwise
    /// the table, in `"unknown"`. The answer changes nothing in either.
    fn id_of_refused(&self, err: &ProtocolError) -> Option<SessionId> {
        err.conversation_id
            .as_ref()
            .and_then(|c| self.directory.id_of(c))
    }

    fn answerer(&self, unreadable: bool) -> SessionId {
        match self.directory.only() {
            Some(only) if unreadable => only,
            _ => SessionId::STANDALONE,
        }
    }

    fn session_or_table(&mut self, id: SessionId) -> &mut Session {
        match self.directory.get_mut(id) {
            Some(session) => session,
            None => &mut self.table,
        }
    }

    /// Routes one decoded inbound message by its `conversation_id` (R-SES-1).
    pub fn handle_message(&mut self, message: Message) -> SessionEffects {
        let now = self.maker.now();
        let total = self.surface_count();
        let Some(id) = self.directory.id_of(message.conversation_id()) else {
            return self.establish(Establishing::Message(message), total);
        };
        let elsewhere = total - self.directory.get(id).map_or(0, Session::surface_count);
        let effects = self.directory.handle_within(id, message, elsewhere, now);
        SessionEffects::of(id, effects.unwrap_or_default())
    }

    /// An envelope of a conversation without a session: a well-formed one from an admitted
    /// agent gets one, also when its payload is then refused (R-SES-1); the inventory comes
    /// before its answer (R-INV-1).
    fn establish(&mut self, input: Establishing, total: usize) -> SessionEffects {
        let refused = |effects| SessionEffects::of(SessionId::STANDALONE, effects);
        // Conversation, direction and sender first, before anything is set up for it; the
        // table answers, and nothing changes (R-SES-1).
        if let Err(err) = input.admission(&self.table) {
            return refused(input.refuse_on(&mut self.table, err));
        }
        let limit = self.maker.limits().max_sessions;
        if self.directory.len() >= limit {
            let err = too_many_sessions(input.conversation(), self.directory.len(), limit);
            return refused(input.refuse_on(&mut self.table, err));
        }
        // Ids are never reused, also when the candidate is dropped below: its answer's message
        // id is made from it.
        let id = self.directory.new_id();
        let started = self.maker.session(self.maker.config_for(id, None));
        let started = started.and_then(|mut candidate| {
            let effects = self
                .maker
                .start_capabilities(&mut candidate, &self.registrations)?;
            Ok((candidate, effects))
        });
        let (mut candidate, mut effects) = match started {
            Ok(started) => started,
            Err(e) => return refused(input.refuse_on(&mut self.table, cannot_start(&e))),
        };
        let conversation = input.conversation().clone();
        let answer = input.establish(&mut candidate, total);
        if !candidate.is_established() {
            // Not admitted after all: its answer is all that remains.
            return refused(answer);
        }
        effects.extend(answer);
        effects.extend(candidate.restore());
        let now = self.maker.now();
        self.directory.insert(id, conversation, candidate, now);
        SessionEffects::of(id, effects)
    }

    /// Opens a session for `conversation`, for the `agent` the embedder vouches for (R-SES-1):
    /// an envelope of it with another `sender.id` is refused `wrong_sender`, and remembered
    /// grants belong to this identity; `None` takes the template's. With capabilities on, the
    /// effects carry its `client.inventory` and `app.list` (R-INV-1).
    pub fn open_session(
        &mut self,
        conversation: ConversationId,
        agent: Option<PartyId>,
    ) -> Result<SessionEffects, UsageError> {
        if self.directory.id_of(&conversation).is_some() {
            return Err(UsageError::SessionOpen {
                conversation: conversation.to_string(),
            });
        }
        let limit = self.maker.limits().max_sessions;
        if self.directory.len() >= limit {
            let open = self.directory.len();
            return Err(UsageError::TooManySessions { open, limit });
        }
        let id = self.directory.new_id();
        let mut config = self.maker.config_for(id, agent);
        config.conversation_id = Some(conversation.clone());
        let mut session = self.maker.session(config)?;
        let mut effects = self
            .maker
            .start_capabilities(&mut session, &self.registrations)?;
        // R-STD-15: the vouched identity's component records of this conversation.
        effects.extend(session.restore());
        let now = self.maker.now();
        self.directory.insert(id, conversation, session, now);
        Ok(SessionEffects::of(id, effects))
    }

    /// Announces the inventory of `conversation`'s session again ([`Session::announce_inventory`]),
    /// for an agent that connected again (R-INV-1). `None` when it has no session; empty effects
    /// when capabilities are off.
    pub fn announce_inventory(&mut self, conversation: &ConversationId) -> Option<SessionEffects> {
        let id = self.directory.id_of(conversation)?;
        let effects = self.directory.get_mut(id)?.announce_inventory();
        Some(SessionEffects::of(id, effects))
    }

    /// Every open Surface of `conversation`'s session, or of every session with `None`, goes away
    /// for `reason` ([`Session::all_gone`], R-UI-12); sessions without a Surface yield nothing.
    pub fn surfaces_gone(
        &mut self,
        conversation: Option<&ConversationId>,
        reason: GoneReason,
    ) -> Vec<SessionEffects> {
        let only = match conversation.map(|c| self.directory.id_of(c)) {
            Some(None) => return Vec::new(),
            Some(Some(id)) => Some(id),
            None => None,
        };
        self.directory.each(
            |id, _| only.is_none_or(|o| o == id),
            |session| session.all_gone(reason),
        )
    }

    /// Gives hibernated Surface `key` a new webview ([`Session::wake`]): what to create it
    /// from, its key unchanged (its record forgotten, #29); `None` for a stale key.
    pub fn wake_surface(&mut self, key: &SurfaceKey) -> Option<SurfaceOpen> {
        self.directory.get_mut(key.session)?.wake(key)
    }

    /// The host hibernated Surface `key` ([`Session::hibernated`]): a vouched session keeps its
    /// record (#29). Nothing for a stale key.
    pub fn surface_hibernated(&mut self, key: &SurfaceKey) {
        if let Some(session) = self.directory.get_mut(key.session) {
            session.hibernated(key);
        }
    }

    /// `count` page events of Surface `instance` were dropped on the way out (see
    /// [`Session::events_dropped`]). The report names no conversation, so it goes to the one
    /// session that has `instance` open (or to the only session); when several sessions have
    /// an instance of that id it is dropped rather than told to a conversation it is not about.
    pub fn events_dropped(&mut self, instance: &InstanceId, count: u64) -> Vec<SessionEffects> {
        let holders: Vec<SessionId> = self
            .directory
            .iter()
            .filter(|(_, session)| session.shows(instance))
            .map(|(id, _)| id)
            .collect();
        let only = match holders.as_slice() {
            [one] => Some(*one),
            [] => self.directory.only(),
            _ => None,
        };
        only.and_then(|id| {
            let effects = self.directory.get_mut(id)?.events_dropped(instance, count);
            Some(SessionEffects::of(id, effects))
        })
        .into_iter()
        .collect()
    }

    /// Ends the session of `conversation`: its Surfaces close without a word upstream and its
    /// calls waiting for a decision are cancelled (prompts withdrawn, records finished). Calls
    /// already running finish on their own and are recorded; nothing more is sent to the agent.
    /// `None` when no session of it is open.
    pub fn end_session(&mut self, conversation: &ConversationId) -> Option<SessionEffects> {
        let (id, session) = self.directory.remove(conversation)?;
        Some(self.ending.end(id, session))
    }

    /// Ends every session (the agent's stream ended).
    pub fn end_all(&mut self) -> Vec<SessionEffects> {
        let conversations: Vec<ConversationId> = self.directory.conversations().cloned().collect();
        let ended: Vec<SessionEffects> = conversations
            .iter()
            .filter_map(|c| self.end_session(c))
            .collect();
        // The table's merged refusals are written out too (R-CAP-6).
        self.table.flush_refusal_audit();
        ended
    }

    /// Ends every session that accepted no envelope and had no Surface or standard component
    /// open and no call pending for `idle`. Call it now and then (the host does on each event and
    /// at [`Sessions::next_idle_check`]).
    pub fn end_idle(&mut self, idle: Duration) -> Vec<SessionEffects> {
        let quiet = self.directory.idle(self.maker.now(), idle);
        quiet.iter().filter_map(|c| self.end_session(c)).collect()
    }

    /// How long until [`Sessions::end_idle`] with `idle` may end a session, if any is quiet now.
    pub fn next_idle_check(&self, idle: Duration) -> Option<Duration> {
        self.directory.next_idle(self.maker.now(), idle)
    }

    /// Registers a capability for every session, open and future (a name registered twice is
    /// an error); each established session with capabilities gets a new inventory (R-INV-1).
    pub fn register_capability(
        &mut self,
        capability: Capability,
    ) -> Result<Vec<SessionEffects>, UsageError> {
        self.registrations.add(capability.clone())?;
        self.directory.try_each(has_capabilities, |session| {
            session.register_capability(capability.clone())
        })
    }

    /// Unregisters a capability in every session; a later call to it gets `unsupported` with
    /// `revoked` where it was offered (R-INV-4).
    pub fn unregister_capability(
        &mut self,
        name: &CapabilityName,
    ) -> Result<Vec<SessionEffects>, UsageError> {
        self.registrations.remove(name)?;
        self.directory.try_each(has_capabilities, |session| {
            session.unregister_capability(name)
        })
    }

    /// Whether capability `name` is registered for every session (and not unregistered since).
    pub fn is_registered(&self, name: &CapabilityName) -> bool {
        self.registrations.contains(name)
    }

    /// Hides capability `name` from `agent` (or shows it again) in every session, open and
    /// future; sessions of that agent get a new inventory.
    pub fn set_capability_visible(
        &mut self,
        agent: &AgentIdentity,
        name: &CapabilityName,
        visible: bool,
    ) -> Result<Vec<SessionEffects>, UsageError> {
        self.registrations.set_visible(agent, name, visible);
        self.directory.try_each(has_capabilities, |session| {
            session.set_capability_visible(agent, name, visible)
        })
    }

    /// The app center changed: every session announces its new inventory and closes the
    /// Surfaces of apps no longer enabled at their version ([`Session::apps_changed`]).
    pub fn apps_changed(&mut self) -> Vec<SessionEffects> {
        self.directory.each(|_, _| true, Session::apps_changed)
    }

    /// The platform answers `ticket` of session `session` (the one named by the
    /// [`SessionEffects`] that carried the effect), as [`Session::answered`] takes it: the
    /// user's consent, the hook's verdict and a handler's result come back here. An answer for
    /// an ended session whose call still ran is recorded and nothing is sent; any answer for a
    /// session that is gone is ignored.
    pub fn answered(
        &mut self,
        session: SessionId,
        ticket: Ticket,
        answer: Answer,
    ) -> Result<SessionEffects, UsageError> {
        let effects = match self.directory.get_mut(session) {
            Some(open) => open.answered(ticket, answer)?,
            None => self
                .ending
                .answered(session, ticket, answer)
                .transpose()?
                .unwrap_or_default(),
        };
        Ok(SessionEffects::of(session, effects))
    }

    /// Expires and times out capability calls in every session whose deadline passed.
    pub fn poll_capabilities(&mut self) -> Vec<SessionEffects> {
        let mut all = self.directory.each(|_, _| true, Session::poll_capabilities);
        all.extend(self.ending.poll());
        all
    }

    /// How long until [`Sessions::poll_capabilities`] has work, over every session.
    pub fn next_capability_wakeup(&self) -> Option<Duration> {
        let open = self.directory.iter().map(|(_, session)| session);
        let open = open.filter_map(Session::next_capability_wakeup).min();
        [open, self.ending.next_wakeup()]
            .into_iter()
            .flatten()
            .min()
    }

    /// Finishes the store's unfinished call records once, when the host starts (R-CAP-5):
    /// never ran → `cancelled`, was running → `failed` `outcome_unknown`, never run again. They
    /// are written and audited through the template's store; nothing is sent.
    pub fn recover(&mut self, setup: CapabilitySetup) -> Result<(), UsageError> {
        self.maker.recovery(setup)
    }

    /// Closes, in every session, each open component whose `props.expires_at` is at or before
    /// `now`: it is locked and hidden, and its agent gets `ui.event close {reason:"expired"}`
    /// (R-STD-7). Call it at [`Sessions::next_component_expiry`]. Wall-clock time comes from
    /// the caller, as the table keeps no wall clock of its own.
    pub fn expire_components(&mut self, now: Timestamp) -> Vec<SessionEffects> {
        self.directory
            .each(|_, _| true, |session| session.expire_components(now))
    }

    /// The link to `url` the user activated in component `key`, when it is one of that
    /// instance's current links ([`Session::component_link`], R-STD-11).
    pub fn component_link(&mut self, key: &SurfaceKey, url: &str) -> Option<ComponentLink> {
        self.directory
            .get_mut(key.session)?
            .component_link(key, url)
    }

    /// The earliest `props.expires_at` of the open components of every session.
    pub fn next_component_expiry(&self) -> Option<Timestamp> {
        self.directory
            .iter()
            .filter_map(|(_, session)| session.next_component_expiry())
            .min()
    }
}

/// Whether `session` runs a capability kernel, to which registrations fan out.
fn has_capabilities(_: SessionId, session: &Session) -> bool {
    session.capabilities().is_some()
}
