//! How the table makes its sessions: each configured from the template under its own id and
//! message-id prefix, with the factory's clock and capability setup and the host's
//! registrations (R-SES-1, R-INV-1).

use std::time::Duration;

use super::registrations::Registrations;
use super::SessionFactory;
use crate::capability::CapabilitySetup;
use crate::error::UsageError;
use crate::ids::{AgentIdentity, PartyId};
use crate::keys::SessionId;
use crate::limits::Limits;
use crate::session::{Clock, Effect, Session, SessionConfig};

/// The template, the factory and the table's own clock.
///
/// Invariant: every session it makes has the template's configuration but for its id, a
/// message-id prefix made unique by that id, no conversation until one is given, and the
/// vouched agent given for it, if any.
pub(super) struct Maker {
    template: SessionConfig,
    factory: Box<dyn SessionFactory>,
    clock: Box<dyn Clock>,
}

impl Maker {
    /// A maker of sessions configured like `template`.
    pub(super) fn new(template: SessionConfig, mut factory: Box<dyn SessionFactory>) -> Self {
        Self {
            clock: factory.clock(),
            template,
            factory,
        }
    }

    /// The limits of every session, and in total.
    pub(super) fn limits(&self) -> &Limits {
        &self.template.limits
    }

    /// The table's monotonic time now.
    pub(super) fn now(&self) -> Duration {
        self.clock.monotonic()
    }

    /// The configuration of session `id`, for `agent` when the embedder vouches for one (else
    /// the template's).
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

    /// A session of `config`, on the factory's clock.
    pub(super) fn session(&mut self, config: SessionConfig) -> Result<Session, UsageError> {
        Session::new(config, self.factory.clock())
    }

    /// The table's own session: it answers what belongs to no session and is never
    /// established; its refusals of calls are audited too (R-CAP-6), so it runs a capability
    /// kernel when the factory gives one.
    pub(super) fn table(&mut self) -> Result<Session, UsageError> {
        let mut table = self.session(self.config_for(SessionId::STANDALONE, None))?;
        if let Ok(Some(setup)) = self.factory.capabilities(None) {
            table.enable_capabilities(setup)?;
        }
        Ok(table)
    }

    /// A session that only finishes `setup`'s unfinished call records (R-CAP-5), in the
    /// template's store; with no conversation it announces nothing, and so has no effects.
    pub(super) fn recovery(&mut self, setup: CapabilitySetup) -> Result<(), UsageError> {
        let mut config = self.template.clone();
        config.conversation_id = None;
        config.session_id = SessionId::STANDALONE;
        self.session(config)?.enable_capabilities(setup).map(drop)
    }

    /// Starts the capability kernel of a new session, when the factory turns it on, with every
    /// registration and hidden capability of the host.
    pub(super) fn start_capabilities(
        &mut self,
        session: &mut Session,
        registrations: &Registrations,
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
                registrations.capabilities(),
                registrations.hidden(),
            ),
            None => Ok(Vec::new()),
        }
    }
}
