//! Sessions coming and going: opened by the embedder or established by the first envelope of a
//! conversation, bounded by `Limits::max_sessions`, ended one by one, all at once, or when idle
//! (R-SES-1).

use crate::sessions::{
    add, cannot_start, has_pending_calls, holds_something, Duration, Establishing, Slot,
};
use crate::{
    ConversationId, ErrorCode, GoneReason, InstanceId, PartyId, ProtocolError, Session,
    SessionConfig, SessionEffects, SessionId, Sessions, SurfaceKey, UsageError,
};

impl Sessions {
    /// `count` page events of Surface `instance` were dropped on the way out (see
    /// [`Session::events_dropped`]). The report names no conversation, so it goes to the one
    /// session that has `instance` open (or to the only session); when several sessions have
    /// an instance of that id it is dropped rather than told to a conversation it is not about.
    pub fn events_dropped(&mut self, instance: &InstanceId, count: u64) -> Vec<SessionEffects> {
        let holders: Vec<SessionId> = self
            .directory
            .iter()
            .filter(|(_, slot)| slot.session.surfaces().any(|k| k.instance == *instance))
            .map(|(id, _)| *id)
            .collect();
        let only = match holders.as_slice() {
            [one] => Some(*one),
            [] if self.directory.len() == 1 => self.directory.keys().next().copied(),
            _ => None,
        };
        only.and_then(|session| {
            let slot = self.directory.get_mut(&session)?;
            Some(SessionEffects {
                session,
                effects: slot.session.events_dropped(instance, count),
            })
        })
        .into_iter()
        .collect()
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
        self.check_room()?;
        let id = self.next_session_id();
        let mut config = self.config_for(id, agent);
        config.conversation_id = Some(conversation.clone());
        let mut session = Session::new(config, self.factory.clock())?;
        let mut effects = self.start_capabilities(&mut session)?;
        // R-STD-15: the vouched identity's component records of this conversation.
        effects.extend(session.restore_request());
        self.insert(id, conversation, session);
        Ok(SessionEffects {
            session: id,
            effects,
        })
    }

    /// Announces the inventory of `conversation`'s session again ([`Session::announce_inventory`]),
    /// for an agent that connected again (R-INV-1). `None` when it has no session; empty effects
    /// when capabilities are off.
    pub fn announce_inventory(&mut self, conversation: &ConversationId) -> Option<SessionEffects> {
        let id = self.directory.id_of(conversation)?;
        let slot = self.directory.get_mut(&id)?;
        Some(SessionEffects {
            session: id,
            effects: slot.session.announce_inventory(),
        })
    }

    /// Every open Surface of `conversation`'s session, or of every session with `None`, goes away
    /// for `reason` ([`Session::all_gone`], R-UI-12); sessions without a Surface yield nothing.
    pub fn surfaces_gone(
        &mut self,
        conversation: Option<&ConversationId>,
        reason: GoneReason,
    ) -> Vec<SessionEffects> {
        let only = match conversation {
            Some(c) => match self.directory.id_of(c) {
                Some(id) => Some(id),
                None => return Vec::new(),
            },
            None => None,
        };
        let mut all = Vec::new();
        for (id, slot) in self.directory.iter_mut() {
            if only.is_some_and(|o| o != *id) || slot.session.surface_count() == 0 {
                continue;
            }
            all.push(SessionEffects {
                session: *id,
                effects: slot.session.all_gone(reason),
            });
        }
        all
    }

    /// Gives hibernated Surface `key` a new webview ([`Session::wake`]): what to create it
    /// from, its key unchanged, and the effects of its wake (its record forgotten, #29);
    /// `None` for a stale key.
    pub fn wake_surface(
        &mut self,
        key: &SurfaceKey,
    ) -> Option<(crate::SurfaceOpen, SessionEffects)> {
        let mut effects = Vec::new();
        let open = self.get_mut(key.session)?.wake(key, &mut effects)?;
        Some((
            open,
            SessionEffects {
                session: key.session,
                effects,
            },
        ))
    }

    /// The host hibernated Surface `key` ([`Session::hibernated`]): a vouched session keeps its
    /// record (#29).
    pub fn surface_hibernated(&mut self, key: &SurfaceKey) -> Option<SessionEffects> {
        let effects = self.get_mut(key.session)?.hibernated(key);
        Some(SessionEffects {
            session: key.session,
            effects,
        })
    }

    /// Ends the session of `conversation`: its Surfaces close without a word upstream and its
    /// calls waiting for a decision are cancelled (prompts withdrawn, records finished). Calls
    /// already running finish on their own and are recorded; nothing more is sent to the agent.
    /// `None` when no session of it is open.
    pub fn end_session(&mut self, conversation: &ConversationId) -> Option<SessionEffects> {
        let (id, slot) = self.directory.remove(conversation)?;
        Some(self.end(id, slot.session))
    }

    /// Ends every session (the agent's stream ended).
    pub fn end_all(&mut self) -> Vec<SessionEffects> {
        let conversations: Vec<ConversationId> = self.directory.conversations().cloned().collect();
        let mut ended: Vec<SessionEffects> = conversations
            .iter()
            .filter_map(|c| self.end_session(c))
            .collect();
        // The table's merged refusals are written out too (R-CAP-6).
        let flushed = self.table.flush_refusal_audit();
        if !flushed.is_empty() {
            ended.push(SessionEffects {
                session: SessionId::STANDALONE,
                effects: flushed,
            });
        }
        ended
    }

    /// Ends every session that accepted no envelope and had no Surface or standard component
    /// open and no call pending for `idle`. Call it now and then (the host does on each event and at
    /// [`Sessions::next_idle_check`]).
    pub fn end_idle(&mut self, idle: Duration) -> Vec<SessionEffects> {
        let now = self.clock.monotonic();
        let mut idle_ones = Vec::new();
        for (id, slot) in self.directory.iter_mut() {
            if holds_something(&slot.session) {
                slot.quiet_since = now;
            } else if now.saturating_sub(slot.quiet_since) >= idle {
                if let Some(c) = slot.session.conversation_id() {
                    idle_ones.push((*id, c.clone()));
                }
            }
        }
        idle_ones
            .into_iter()
            .filter_map(|(_, c)| self.end_session(&c))
            .collect()
    }

    /// How long until [`Sessions::end_idle`] with `idle` may end a session, if any is quiet now.
    pub fn next_idle_check(&self, idle: Duration) -> Option<Duration> {
        let now = self.clock.monotonic();
        self.directory
            .values()
            .filter(|s| !holds_something(&s.session))
            .map(|s| (s.quiet_since + idle).saturating_sub(now))
            .min()
    }

    /// An envelope of a conversation without a session: a well-formed one from an admitted
    /// agent gets one, also when its payload is then refused (R-SES-1); the inventory comes
    /// before its answer (R-INV-1).
    pub(super) fn establish(&mut self, input: Establishing, total: usize) -> SessionEffects {
        let refused = |effects| SessionEffects {
            session: SessionId::STANDALONE,
            effects,
        };
        // Conversation, direction and sender first, before anything is set up for it; the
        // table answers, and nothing changes (R-SES-1).
        if let Err(err) = input.admission(&self.table) {
            return refused(input.refuse_on(&mut self.table, err));
        }
        if self.directory.len() >= self.template.limits.max_sessions {
            let limit = self.template.limits.max_sessions;
            let err = ProtocolError::new(
                ErrorCode::TooManySessions,
                "R-SES-1",
                format!(
                    "conversation {} would be session {} of this host; the limit is {limit}; \
                     end a conversation first",
                    input.conversation(),
                    self.directory.len() + 1
                ),
            )
            .field("conversation_id")
            .limit(limit);
            return refused(input.refuse_on(&mut self.table, err));
        }
        // Ids are never reused, also when the candidate is dropped below: its answer's message
        // id is made from it.
        let id = self.next_session_id();
        let config = self.config_for(id, None);
        let mut candidate = match Session::new(config, self.factory.clock()) {
            Ok(session) => session,
            Err(e) => return refused(input.refuse_on(&mut self.table, cannot_start(&e))),
        };
        let mut effects = match self.start_capabilities(&mut candidate) {
            Ok(effects) => effects,
            Err(e) => return refused(input.refuse_on(&mut self.table, cannot_start(&e))),
        };
        let conversation = input.conversation().clone();
        let answer = match input {
            Establishing::Message(message) => candidate.handle_message_within(message, total),
            Establishing::Refused { err, .. } => candidate.establish_refusing(err),
        };
        if !candidate.is_established() {
            // Not admitted after all: its answer is all that remains.
            return refused(answer);
        }
        effects.extend(answer);
        effects.extend(candidate.restore_request());
        self.insert(id, conversation, candidate);
        SessionEffects {
            session: id,
            effects,
        }
    }

    pub(super) fn next_session_id(&mut self) -> SessionId {
        self.directory.new_id()
    }

    pub(super) fn check_room(&self) -> Result<(), UsageError> {
        let limit = self.template.limits.max_sessions;
        if self.directory.len() >= limit {
            return Err(UsageError::TooManySessions {
                open: self.directory.len(),
                limit,
            });
        }
        Ok(())
    }

    pub(super) fn config_for(&self, id: SessionId, agent: Option<PartyId>) -> SessionConfig {
        let mut config = self.template.clone();
        config.conversation_id = None;
        config.session_id = id;
        config.message_id_prefix = format!("{}-{id}", self.template.message_id_prefix);
        if agent.is_some() {
            config.agent_id = agent;
        }
        config
    }

    pub(super) fn insert(&mut self, id: SessionId, conversation: ConversationId, session: Session) {
        let quiet_since = self.clock.monotonic();
        self.directory.insert(
            id,
            conversation,
            Slot {
                session,
                quiet_since,
            },
        );
    }

    pub(super) fn end(&mut self, id: SessionId, mut session: Session) -> SessionEffects {
        let effects = session.close_all();
        add(&mut self.ended_stats, session.stats());
        if has_pending_calls(&session) {
            self.ending.insert(id, session);
        }
        SessionEffects {
            session: id,
            effects,
        }
    }
}
