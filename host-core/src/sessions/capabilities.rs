//! The table's App Capability work: registrations fanned out to every session, answers routed
//! to the session whose ticket they carry, deadlines, recovery after a restart (R-SES-1,
//! R-CAP-5).

use crate::sessions::{has_pending_calls, Duration};
use crate::{
    AgentIdentity, Answer, Capability, CapabilityName, CapabilitySetup, Effect, Session,
    SessionEffects, SessionId, Sessions, Ticket, UsageError,
};

impl Sessions {
    /// Registers a capability for every session, open and future (a name registered twice is
    /// an error); each established session with capabilities gets a new inventory (R-INV-1).
    pub fn register_capability(
        &mut self,
        capability: Capability,
    ) -> Result<Vec<SessionEffects>, UsageError> {
        self.registrations.add(capability.clone())?;
        self.fan_out(|session| session.register_capability(capability.clone()))
    }

    /// The app center changed: every session announces its new inventory and closes the
    /// Surfaces of apps no longer enabled at their version ([`Session::apps_changed`]).
    pub fn apps_changed(&mut self) -> Vec<SessionEffects> {
        let mut all = Vec::new();
        for (id, slot) in self.directory.iter_mut() {
            let effects = slot.session.apps_changed();
            if !effects.is_empty() {
                all.push(SessionEffects {
                    session: *id,
                    effects,
                });
            }
        }
        all
    }

    /// Unregisters a capability in every session; a later call to it gets `unsupported` with
    /// `revoked` where it was offered (R-INV-4).
    pub fn unregister_capability(
        &mut self,
        name: &CapabilityName,
    ) -> Result<Vec<SessionEffects>, UsageError> {
        self.registrations.remove(name)?;
        self.fan_out(|session| session.unregister_capability(name))
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
        self.fan_out(|session| session.set_capability_visible(agent, name, visible))
    }

    /// The platform answers `ticket` of session `session` (the one named by the
    /// [`SessionEffects`] that carried the effect), as [`Session::answered`] takes it: every
    /// store read, durable write's acknowledgement and user decision comes back here. An answer
    /// for an ended session whose call still ran is recorded and nothing is sent; a read-back
    /// of records for an ended session, and any answer for a session that is gone, is ignored.
    pub fn answered(
        &mut self,
        session: SessionId,
        ticket: Ticket,
        answer: Answer,
    ) -> Result<SessionEffects, UsageError> {
        if let Some(slot) = self.directory.get_mut(&session) {
            let effects = slot.session.answered(ticket, answer)?;
            return Ok(SessionEffects { session, effects });
        }
        let Some(ending) = self
            .ending
            .get_mut(&session)
            .filter(|_| !matches!(answer, Answer::Records(_)))
        else {
            return Ok(SessionEffects {
                session,
                effects: Vec::new(),
            });
        };
        let mut effects = ending.answered(ticket, answer)?;
        // The agent is gone: its answers are on record, none is sent.
        effects.retain(|e| !matches!(e, Effect::Send(_)));
        if !has_pending_calls(ending) {
            self.ending.remove(&session);
        }
        Ok(SessionEffects { session, effects })
    }

    /// Expires and times out capability calls in every session whose deadline passed.
    pub fn poll_capabilities(&mut self) -> Vec<SessionEffects> {
        let mut all = Vec::new();
        for (id, slot) in self.directory.iter_mut() {
            let effects = slot.session.poll_capabilities();
            if !effects.is_empty() {
                all.push(SessionEffects {
                    session: *id,
                    effects,
                });
            }
        }
        for (id, session) in self.ending.iter_mut() {
            let mut effects = session.poll_capabilities();
            effects.retain(|e| !matches!(e, Effect::Send(_)));
            if !effects.is_empty() {
                all.push(SessionEffects {
                    session: *id,
                    effects,
                });
            }
        }
        self.ending.retain(|_, s| has_pending_calls(s));
        all
    }

    /// How long until [`Sessions::poll_capabilities`] has work, over every session.
    pub fn next_capability_wakeup(&self) -> Option<Duration> {
        self.directory
            .values()
            .map(|slot| &slot.session)
            .chain(self.ending.values())
            .filter_map(Session::next_capability_wakeup)
            .min()
    }

    /// Finishes the store's unfinished call records once, when the host starts (R-CAP-5):
    /// never ran → `cancelled`, was running → `failed` `outcome_unknown`, never run again. The
    /// effects are store writes and audit records; nothing is sent.
    pub fn recover(&mut self, setup: CapabilitySetup) -> Result<SessionEffects, UsageError> {
        let mut config = self.template.clone();
        config.conversation_id = None;
        config.session_id = SessionId::STANDALONE;
        let mut session = Session::new(config, self.factory.clock())?;
        let effects = session.enable_capabilities(setup)?;
        Ok(SessionEffects {
            session: SessionId::STANDALONE,
            effects,
        })
    }

    /// Starts the capability kernel of a new session, when the factory turns it on, with every
    /// registration and hidden capability of the host.
    pub(super) fn start_capabilities(
        &mut self,
        session: &mut Session,
    ) -> Result<Vec<Effect>, UsageError> {
        let agent = session
            .agent_id()
            .and_then(|id| AgentIdentity::try_from(id.as_str()).ok());
        let setup = self
            .factory
            .capabilities(agent.as_ref())
            .map_err(|reason| UsageError::SessionSetup { reason })?;
        match setup {
            Some(setup) => session.start_capabilities(
                setup,
                self.registrations.capabilities(),
                self.registrations.hidden(),
            ),
            None => Ok(Vec::new()),
        }
    }

    pub(super) fn fan_out(
        &mut self,
        mut f: impl FnMut(&mut Session) -> Result<Vec<Effect>, UsageError>,
    ) -> Result<Vec<SessionEffects>, UsageError> {
        let mut all = Vec::new();
        for (id, slot) in self.directory.iter_mut() {
            if slot.session.capabilities().is_none() {
                continue;
            }
            let effects = f(&mut slot.session)?;
            if !effects.is_empty() {
                all.push(SessionEffects {
                    session: *id,
                    effects,
                });
            }
        }
        Ok(all)
    }
}
