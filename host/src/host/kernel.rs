//! The engine's kernel side: the session table (which calls its store through its own
//! `StorePort`, decision 0037), the effects it made that wait for the one interpreter
//! ([`Engine::interpret`](super::engine::Engine::interpret)), and the reopen rule. The engine
//! feeds it each input and drains its queue; the views, the renderers and the embedder's
//! callbacks are the engine's.

use std::time::{Duration, Instant};

use lineup_host_core::mcp::{RpcError, RpcId};
use lineup_host_core::{
    AgentIdentity, Answer, CapabilityName, ComponentLink, ConversationId, GoneReason, InstanceId,
    Limits, PageInput, PartyId, SessionEffects, SessionId, Sessions, SurfaceKey, SurfaceOpen,
    Ticket, UsageError, WallClock,
};
use lineup_webview_shell::SystemWallClock;

use super::link;
use super::policy;
use super::work::{Job, Work};

/// The shortest wait the kernel's clock asks of the loop, so that a deadline due now cannot
/// spin it.
const MIN_TIMER: Duration = Duration::from_millis(10);

/// The session table and what its effects wait in.
///
/// Invariants: every batch of effects the table makes is queued here, ahead of what waits, in
/// its order (as a nested call would take it), and reaches the interpreter only through
/// [`Kernel::next`], one drain at a time ([`Work`]). Only a session opened or ended through the
/// host's API hands its batch back, for the loop's next turn, and the endings at shutdown
/// ([`Kernel::end_all`]) go to the engine's shutdown, which names each effect it carries out.
/// No record passes through here: each session writes and reads its component and Surface
/// records through its store port (a hibernation's and a wake's as they happen). A lost view is reported `Lost` (reopened within its session's budget) when `reopen`
/// ([`HostBuilder::reopen_lost_surfaces`]), else `Gone` (closed).
///
/// [`HostBuilder::reopen_lost_surfaces`]: super::HostBuilder::reopen_lost_surfaces
pub(super) struct Kernel {
    sessions: Sessions,
    /// Effects waiting for the interpreter, in order.
    work: Work,
    reopen: bool,
}

impl Kernel {
    /// `sessions` with nothing queued, lost views reopened when `reopen`.
    pub(super) fn new(sessions: Sessions, reopen: bool) -> Self {
        Self {
            sessions,
            work: Work::default(),
            reopen,
        }
    }

    /// The session table, to read.
    pub(super) fn sessions(&self) -> &Sessions {
        &self.sessions
    }

    /// The limits in force, per session and in total.
    pub(super) fn limits(&self) -> &Limits {
        self.sessions.limits()
    }

    /// Queues `effects` ahead of what waits; `line` is the inbound line they answer.
    pub(super) fn queue(&mut self, effects: SessionEffects, line: Option<u64>) {
        self.work.push_front(effects.session, effects.effects, line);
    }

    /// Queues every batch of `all`, in their order, ahead of what waits.
    fn queue_all(&mut self, all: Vec<SessionEffects>) {
        for effects in all.into_iter().rev() {
            self.queue(effects, None);
        }
    }

    /// Starts a drain of the queue; `false` when one already runs further up the stack.
    pub(super) fn start_drain(&mut self) -> bool {
        self.work.start()
    }

    /// The next effect for the interpreter.
    pub(super) fn next(&mut self) -> Option<Job> {
        self.work.next()
    }

    /// Ends the running drain.
    pub(super) fn finish_drain(&mut self) {
        self.work.finish();
    }

    /// An inbound envelope (`line`: the transport's line number).
    pub(super) fn handle_inbound(&mut self, bytes: &[u8], line: Option<u64>) {
        let effects = self.sessions.handle_inbound(bytes);
        self.queue(effects, line);
    }

    /// An inbound line too long to be read (R-ENV-4).
    pub(super) fn handle_oversized(&mut self, len: u64, line: Option<u64>) {
        let effects = self.sessions.handle_oversized(len);
        self.queue(effects, line);
    }

    /// A binary frame of a WebSocket transport, refused (R-ENV-5).
    pub(super) fn handle_binary_frame(&mut self, len: u64) {
        let effects = self.sessions.handle_binary_frame(len);
        self.queue(effects, None);
    }

    /// `count` page events of Surface `instance` were dropped on the way out.
    pub(super) fn events_dropped(&mut self, instance: &InstanceId, count: u64) {
        let all = self.sessions.events_dropped(instance, count);
        self.queue_all(all);
    }

    /// Every Surface of `conversation` (of every one with `None`) goes for `reason` (R-UI-12).
    pub(super) fn surfaces_gone(&mut self, conversation: Option<&ConversationId>, why: GoneReason) {
        let all = self.sessions.surfaces_gone(conversation, why);
        self.queue_all(all);
    }

    /// The app center changed: every session hears of it.
    pub(super) fn apps_changed(&mut self) {
        let all = self.sessions.apps_changed();
        self.queue_all(all);
    }

    /// Withdraws capability `name` from every session (R-INV-4); `false` when none of that
    /// name was registered.
    pub(super) fn withdraw(&mut self, name: &CapabilityName) -> bool {
        let Some(all) = policy::withdraw(&mut self.sessions, name) else {
            return false;
        };
        self.queue_all(all);
        true
    }

    /// Shows capability `name` to the vouched `agent`, or hides it (R-INV-4).
    pub(super) fn set_visible(&mut self, agent: &AgentIdentity, name: &CapabilityName, on: bool) {
        if let Some(all) = policy::set_visible(&mut self.sessions, agent, name, on) {
            self.queue_all(all);
        }
    }

    /// Announces the inventory of `conversation` again, opening its session again for `agent`
    /// when it ended ([`link::announce_again`]); whether a `client.inventory` is queued.
    pub(super) fn announce(
        &mut self,
        conversation: ConversationId,
        agent: Option<PartyId>,
    ) -> bool {
        let Some(effects) = link::announce_again(&mut self.sessions, conversation, agent) else {
            return false;
        };
        let announced = link::announces(&effects);
        self.queue(effects, None);
        announced
    }

    /// Opens a session for `conversation` vouching for `agent`: its effects, for the loop's
    /// next turn.
    pub(super) fn open_session(
        &mut self,
        conversation: ConversationId,
        agent: Option<PartyId>,
    ) -> Result<SessionEffects, UsageError> {
        self.sessions.open_session(conversation, agent)
    }

    /// Ends the session of `conversation`: its effects, for the loop's next turn; `None` when
    /// it has none.
    pub(super) fn end_session(&mut self, conversation: &ConversationId) -> Option<SessionEffects> {
        self.sessions.end_session(conversation)
    }

    /// What the view of `key` reported, for its session (R-SEC-4: the key is the view's).
    pub(super) fn page(&mut self, key: &SurfaceKey, input: PageInput<'_>) {
        let effects = self.sessions.handle_page(key, input);
        self.queue(effects, None);
    }

    /// The host's answer to MCP App view `key`'s request `id`, one it took itself (R-MCP-8).
    pub(super) fn mcp_host_answer(
        &mut self,
        key: &SurfaceKey,
        id: &RpcId,
        outcome: Result<serde_json::Value, RpcError>,
    ) {
        let effects = self.sessions.mcp_host_answer(key, id, outcome);
        self.queue(effects, None);
    }

    /// The web process of `key` was lost for `reason`: reopened within its session's budget
    /// when lost views reopen, else closed.
    pub(super) fn lost(&mut self, key: &SurfaceKey, reason: GoneReason) {
        let input = if self.reopen {
            PageInput::Lost(reason)
        } else {
            PageInput::Gone(reason)
        };
        self.page(key, input);
    }

    /// The answer to `ticket` of `session` (a prompt's, the hook's, a handler's).
    pub(super) fn answered(&mut self, session: SessionId, ticket: Ticket, answer: Answer) {
        match self.sessions.answered(session, ticket, answer) {
            Ok(effects) => self.queue(effects, None),
            Err(e) => tracing::error!("answer refused by the kernel: {e}"),
        }
    }

    /// The host hibernated the Surfaces of `keys`: a vouched session keeps their records,
    /// written through its store port now (#29).
    pub(super) fn hibernated(&mut self, keys: Vec<SurfaceKey>) {
        for key in keys {
            self.sessions.surface_hibernated(&key);
        }
    }

    /// Wakes hibernated Surface `key`: what to create its view from; its record, if the store
    /// keeps one, is forgotten. `None` for a stale key.
    pub(super) fn wake(&mut self, key: &SurfaceKey) -> Option<SurfaceOpen> {
        self.sessions.wake_surface(key)
    }

    /// The user activated the link to `url` in component `key`: the link, when the kernel put
    /// it in the instance's current tree (R-STD-11).
    pub(super) fn component_link(&mut self, key: &SurfaceKey, url: &str) -> Option<ComponentLink> {
        self.sessions.component_link(key, url)
    }

    /// The kernel's timed work that is due (capability deadlines, components' `expires_at`,
    /// with `idle` quiet sessions), queued.
    pub(super) fn handle_timeout(&mut self, idle: Option<Duration>) {
        let all = self.sessions.handle_timeout(SystemWallClock.now(), idle);
        self.queue_all(all);
    }

    /// When the kernel next has timed work (at least [`MIN_TIMER`] away); `None`: none.
    pub(super) fn poll_timeout(&self, idle: Option<Duration>) -> Option<Instant> {
        let next = self.sessions.poll_timeout(SystemWallClock.now(), idle)?;
        Some(Instant::now() + next.max(MIN_TIMER))
    }

    /// Ends every session: what each ending does, for the engine's shutdown (not queued).
    pub(super) fn end_all(&mut self) -> Vec<SessionEffects> {
        self.sessions.end_all()
    }
}
