//! The session table (R-SES-1): one host serves many agent sessions at once, one [`Session`] per
//! `conversation_id`, each with its own Surfaces, instance ids, inventory and calls.
//!
//! [`Sessions`] decodes an inbound envelope once and routes it by its conversation. An envelope
//! of a new conversation establishes a session only when that session accepts it; a refused one
//! leaves the table as it was. What cannot be decoded is answered by the table itself, in the
//! refused envelope's conversation when it can be read (R-ENV-5). Limits apply per session (the
//! session's own [`Limits`]) and in total: `max_surfaces` over every session, and
//! `max_sessions`.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use crate::capability::CapabilitySetup;
use crate::decode::decode;
use crate::error::{ErrorCode, ProtocolError, UsageError};
use crate::ids::{AgentIdentity, ConversationId};
use crate::limits::Limits;
use crate::message::Message;
use crate::page_input::PageInput;
use crate::session::{Clock, Effect, Session, SessionConfig, Stats};
use crate::{SurfaceKey, Timestamp};

mod capabilities;
mod components;
mod directory;
mod lifecycle;
mod registrations;

use directory::Directory;
use registrations::Registrations;

pub use crate::keys::SessionId;

/// What the embedder (or webview-shell) provides to start a session: its clock, and its
/// capability kernel's setup. host-core stays sans-IO; the store is behind this trait.
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

struct Slot {
    session: Session,
    /// When it last accepted an envelope or had a Surface open: the start of its idleness.
    quiet_since: Duration,
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
    template: SessionConfig,
    factory: Box<dyn SessionFactory>,
    clock: Box<dyn Clock>,
    /// Answers what belongs to no session; it is never established.
    table: Session,
    /// The open sessions, by id and by conversation.
    directory: Directory,
    /// Ended sessions whose capability calls still run: their answers are recorded, never sent.
    ending: BTreeMap<SessionId, Session>,
    /// The host's registrations, fanned out to every session (clones share the compiled
    /// schema) and replayed in each new one.
    registrations: Registrations,
    /// The counters of the sessions that ended.
    ended_stats: Stats,
}

impl fmt::Debug for Sessions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sessions")
            .field("sessions", &self.directory)
            .field("ending", &self.ending.len())
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
        mut factory: Box<dyn SessionFactory>,
    ) -> Result<Self, UsageError> {
        let mut config = template.clone();
        config.conversation_id = None;
        config.session_id = SessionId::STANDALONE;
        config.message_id_prefix = format!("{}-{}", template.message_id_prefix, SessionId(0));
        let mut table = Session::new(config, factory.clock())?;
        // The table's own refusals of calls (wrong sender, too_many_sessions) are audited too
        // (R-CAP-6): it runs a capability kernel that is never established.
        if let Ok(Some(setup)) = factory.capabilities(None) {
            table.enable_capabilities(setup)?;
        }
        Ok(Self {
            clock: factory.clock(),
            template,
            factory,
            table,
            directory: Directory::default(),
            ending: BTreeMap::new(),
            registrations: Registrations::default(),
            ended_stats: Stats::default(),
        })
    }

    /// How long from now until the table has timed work (the one clock of the kernel, with
    /// [`Sessions::handle_timeout`]): a capability call's deadline or retry (R-CAP-4), a
    /// component's `expires_at` (R-STD-7, on the wall clock `wall` the caller reads: the table
    /// keeps none), or a quiet session's end after `idle` (none without). `None`: nothing timed.
    pub fn poll_timeout(&self, wall: Timestamp, idle: Option<Duration>) -> Option<Duration> {
        let calls = self.next_capability_wakeup();
        let components = self.next_component_expiry().map(|at| wall.until(&at));
        let quiet = idle.and_then(|idle| self.next_idle_check(idle));
        [calls, components, quiet].into_iter().flatten().min()
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
        due
    }

    /// The limits of every session, and in total (`max_surfaces`, `max_sessions`).
    pub fn limits(&self) -> &Limits {
        &self.template.limits
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
        self.directory.iter().map(|(id, slot)| (*id, &slot.session))
    }

    /// The session of `conversation`, if one is open.
    pub fn id_of(&self, conversation: &ConversationId) -> Option<SessionId> {
        self.directory.id_of(conversation)
    }

    /// Session `id`, while it is open.
    pub fn get(&self, id: SessionId) -> Option<&Session> {
        self.directory.get(&id).map(|slot| &slot.session)
    }

    /// Session `id`, while it is open.
    pub(crate) fn get_mut(&mut self, id: SessionId) -> Option<&mut Session> {
        self.directory.get_mut(&id).map(|slot| &mut slot.session)
    }

    /// Handles what the webview of Surface `key` reported, in the session the key names: the
    /// one route for page input, beside [`Sessions::handle_inbound`] for the agent's. Nothing
    /// happens once that session has ended (its views are gone or going).
    pub fn handle_page(&mut self, key: &SurfaceKey, input: PageInput<'_>) -> SessionEffects {
        SessionEffects {
            session: key.session,
            effects: self
                .get_mut(key.session)
                .map(|session| session.handle_page(key, input))
                .unwrap_or_default(),
        }
    }

    /// The Surfaces open over every session.
    pub fn surface_count(&self) -> usize {
        self.directory
            .values()
            .map(|slot| slot.session.surface_count())
            .sum()
    }

    /// The counters of what the table refused itself (undecodable and oversized envelopes,
    /// `too_many_sessions`, envelopes refused before their session existed).
    pub fn table_stats(&self) -> &crate::session::Stats {
        self.table.stats()
    }

    /// The counters of every session, ended ones included, and of the table's own refusals,
    /// added up.
    pub fn stats(&self) -> Stats {
        let mut total = self.ended_stats.clone();
        add(&mut total, self.table.stats());
        for slot in self.directory.values() {
            add(&mut total, slot.session.stats());
        }
        total
    }

    /// Handles one inbound envelope (agent → client) as raw bytes: decoded once, then routed to
    /// the session of its conversation, which is established when it accepts the envelope.
    pub fn handle_inbound(&mut self, bytes: &[u8]) -> SessionEffects {
        match decode(bytes, &self.template.limits) {
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
        SessionEffects {
            session: answerer,
            effects: self.session_or_table(answerer).refuse_undecodable(err),
        }
    }

    /// Refuses an inbound line too long to be read (R-ENV-4).
    pub fn handle_oversized(&mut self, len: u64) -> SessionEffects {
        let answerer = self.answerer(true);
        SessionEffects {
            session: answerer,
            effects: self.session_or_table(answerer).handle_oversized(len),
        }
    }

    /// Refuses a binary frame of a WebSocket transport ([`Session::handle_binary_frame`]),
    /// answered like an oversized line: by the only session, else the table.
    pub fn handle_binary_frame(&mut self, len: u64) -> SessionEffects {
        let answerer = self.answerer(true);
        SessionEffects {
            session: answerer,
            effects: self.session_or_table(answerer).handle_binary_frame(len),
        }
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
        match (unreadable, self.directory.keys().next()) {
            (true, Some(only)) if self.directory.len() == 1 => *only,
            _ => SessionId::STANDALONE,
        }
    }

    fn session_or_table(&mut self, id: SessionId) -> &mut Session {
        match self.directory.get_mut(&id) {
            Some(slot) => &mut slot.session,
            None => &mut self.table,
        }
    }

    /// Routes one decoded inbound message by its `conversation_id` (R-SES-1).
    pub fn handle_message(&mut self, message: Message) -> SessionEffects {
        let now = self.clock.monotonic();
        let total = self.surface_count();
        if let Some(id) = self.directory.id_of(message.conversation_id()) {
            if let Some(slot) = self.directory.get_mut(&id) {
                let accepted = slot.session.stats().envelopes_accepted;
                let elsewhere = total - slot.session.surface_count();
                let effects = slot.session.handle_message_within(message, elsewhere);
                if slot.session.stats().envelopes_accepted > accepted {
                    slot.quiet_since = now;
                }
                return SessionEffects {
                    session: id,
                    effects,
                };
            }
        }
        self.establish(Establishing::Message(message), total)
    }
}

/// What may establish a session (R-SES-1): a decoded envelope, or a well-formed envelope whose
/// payload was refused ([`ProtocolError::sender`]).
enum Establishing {
    Message(Message),
    Refused {
        err: ProtocolError,
        conversation: ConversationId,
    },
}

impl Establishing {
    fn conversation(&self) -> &ConversationId {
        match self {
            Self::Message(message) => message.conversation_id(),
            Self::Refused { conversation, .. } => conversation,
        }
    }

    /// The table's own admission check, before anything is set up.
    fn admission(&self, table: &Session) -> Result<(), ProtocolError> {
        match self {
            Self::Message(message) => table.check_admission(message),
            Self::Refused { err, .. } => table.check_refused_admission(err),
        }
    }

    /// The table answers instead of a session; nothing changes.
    fn refuse_on(&self, table: &mut Session, err: ProtocolError) -> Vec<Effect> {
        match self {
            Self::Message(message) => table.refuse_message(message, err),
            Self::Refused { err: refused, .. } => table.refuse_about(refused, err),
        }
    }
}

/// Whether `session` holds what the user sees or waits for: an open Surface, an open standard
/// component (a question waiting for its answer), or a pending call; such a session is never
/// idle.
fn holds_something(session: &Session) -> bool {
    session.surface_count() > 0 || session.component_count() > 0 || has_pending_calls(session)
}

fn has_pending_calls(session: &Session) -> bool {
    session
        .capabilities()
        .is_some_and(|caps| caps.pending().0 > 0)
}

fn cannot_start(e: &UsageError) -> ProtocolError {
    ProtocolError::new(
        ErrorCode::Unsupported,
        "R-SES-1",
        format!("the host cannot start a session for this conversation now: {e}"),
    )
}

fn add(total: &mut Stats, more: &Stats) {
    total.envelopes_accepted += more.envelopes_accepted;
    total.envelopes_refused += more.envelopes_refused;
    total.events_forwarded += more.events_forwarded;
    total.bridge_invalid += more.bridge_invalid;
    total.bridge_stale += more.bridge_stale;
    total.bridge_flooded += more.bridge_flooded;
    total.forged_close += more.forged_close;
    total.duplicate_ready += more.duplicate_ready;
    total.replaced_documents += more.replaced_documents;
    total.reloads += more.reloads;
    total.diagnostics += more.diagnostics;
    total.diagnostics_suppressed += more.diagnostics_suppressed;
    total.reopened += more.reopened;
    total.close_attempts += more.close_attempts;
}
