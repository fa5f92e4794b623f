//! The agent's Surface envelopes: admission (direction, sender, version), `ui.open`, `ui.patch`,
//! `ui.close` (R-ENV-1..6, R-UI-1..4, R-UI-9).

use crate::message::Payload;
use crate::session::{
    refusal_error, reserved_error, shorten, unknown_instance, DiagnosticBudget, Entry,
    OpenedInstalled, ReopenBudget, VecDeque, AGENT_KIND,
};
use crate::{
    BundlePolicy, CloseReason, ConversationId, Direction, Effect, Envelope, ErrorCode, Message,
    Party, ProtocolError, Session, SurfaceKey, SurfaceOpen, SurfaceSource, UiClose, UiOpen,
    UiPatch,
};

impl Session {
    /// The checks every decoded inbound envelope passes before it may change anything: its
    /// conversation (R-ENV-1, R-SES-1), its direction (R-ENV-2) and its sender (R-ENV-1).
    pub(super) fn admit(&self, message: &Message) -> Result<(), ProtocolError> {
        self.admit_envelope(
            message.conversation_id(),
            message.direction(),
            message.message_type(),
            message.sender(),
        )
    }

    /// [`Session::admit`] on an envelope's parts.
    pub(super) fn admit_envelope(
        &self,
        conversation: &ConversationId,
        direction: Direction,
        message_type: &str,
        sender: &Party,
    ) -> Result<(), ProtocolError> {
        if let Some(ours) = self
            .conversation
            .as_ref()
            .filter(|ours| *ours != conversation)
        {
            return Err(ProtocolError::new(
                ErrorCode::WrongConversation,
                "R-ENV-1",
                format!("conversation_id {conversation} is not this session's conversation {ours}"),
            )
            .field("conversation_id"));
        }
        if direction == Direction::ClientToAgent {
            return Err(ProtocolError::new(
                ErrorCode::WrongDirection,
                "R-ENV-2",
                format!("{message_type} is sent by the client, not to it"),
            )
            .field("type"));
        }
        let kind = &sender.kind;
        if kind.as_str() != AGENT_KIND {
            return Err(ProtocolError::new(
                ErrorCode::WrongSender,
                "R-ENV-1",
                format!(
                    "sender.kind is {:?}; only a sender of kind {AGENT_KIND:?} sends {message_type} to the client",
                    shorten(kind.as_str(), 40),
                ),
            )
            .field("sender.kind"));
        }
        let id = &sender.id;
        if let Some(vouched) = self.config.agent_id.as_ref().filter(|v| *v != id) {
            return Err(ProtocolError::new(
                ErrorCode::WrongSender,
                "R-SES-1",
                format!(
                    "sender.id is {:?}; this session's agent is {:?}, vouched for by the transport",
                    shorten(id.as_str(), 64),
                    vouched.as_str()
                ),
            )
            .field("sender.id"));
        }
        Ok(())
    }

    pub(super) fn open(
        &mut self,
        env: Envelope<UiOpen>,
        fx: &mut Vec<Effect>,
    ) -> Result<(), ProtocolError> {
        self.open_as(env, false, fx)
    }

    /// An open, checked in full; `restored` for one made from a hibernated Surface's record
    /// after a restart (#29), which the agent's open rate does not count and which opens
    /// hibernated ([`Effect::OpenHibernated`]).
    pub(super) fn open_as(
        &mut self,
        env: Envelope<UiOpen>,
        restored: bool,
        fx: &mut Vec<Effect>,
    ) -> Result<(), ProtocolError> {
        let UiOpen {
            instance_id,
            app,
            state,
        } = env.payload;
        let catalog = self.config.app_catalog.clone();
        let (app, installed) = match app {
            SurfaceSource::Inline(app) => {
                // R-UI-9: an id the app center holds or has held is reserved, whatever the
                // bytes: its app opens only by id, and only while enabled.
                if let Some(reservation) = catalog.as_ref().and_then(|c| c.0.reservation(&app.id)) {
                    return Err(reserved_error(&app.id, &reservation));
                }
                (app, None)
            }
            SurfaceSource::Installed(s) => {
                let Some(catalog) = catalog else {
                    return Err(ProtocolError::new(
                        ErrorCode::Unsupported,
                        "R-UI-9",
                        format!(
                            "surface {} of app {} cannot be opened by id: this host has no app center; send an inline bundle",
                            s.surface, s.id
                        ),
                    )
                    .field("payload.app.surface"));
                };
                let resolved = catalog
                    .0
                    .resolve(&s.id, s.version.as_ref(), &s.surface)
                    .map_err(|refusal| refusal_error(&s, &refusal))?;
                let opened = OpenedInstalled {
                    version: resolved.app.version.clone(),
                    surface: s,
                    events: resolved.events,
                    assets: resolved.assets,
                    sources: resolved.sources,
                    signed_by: resolved.signed_by,
                };
                (resolved.app, Some(opened))
            }
        };
        let digest = app.bundle.digest();
        let policy = &self.config.bundle_policy;
        if let Some(installed) = &installed {
            if *policy == BundlePolicy::SignedOnly && installed.signed_by.is_none() {
                return Err(ProtocolError::new(
                    ErrorCode::PolicyViolation,
                    "R-SEC-7",
                    format!(
                        "app {} was installed without a trusted signature; the bundle policy is signed-only",
                        installed.surface.id
                    ),
                )
                .field("payload.app.id"));
            }
        } else {
            let refused = match policy {
                BundlePolicy::SignedOnly | BundlePolicy::AppCenterOnly => Some(format!(
                    "the bundle policy is {}: this host opens only installed apps, by id; inline bundles are refused",
                    policy.name()
                )),
                BundlePolicy::Allowlist(allowed) if !allowed.contains(&digest) => Some(format!(
                    "the bundle's digest {digest} is not on this host's allowlist ({} digests)",
                    allowed.len()
                )),
                _ => None,
            };
            if let Some(message) = refused {
                return Err(
                    ProtocolError::new(ErrorCode::PolicyViolation, "R-SEC-7", message)
                        .field("payload.app"),
                );
            }
        }
        match (&app.integrity, policy) {
            (Some(declared), _) if *declared != digest => {
                return Err(ProtocolError::new(
                    ErrorCode::IntegrityMismatch,
                    "R-UI-2a",
                    format!(
                        "integrity {declared} does not match the bundle, whose digest is {digest}"
                    ),
                )
                .field("payload.app.integrity"));
            }
            (None, BundlePolicy::RequireIntegrity) => {
                return Err(ProtocolError::new(
                    ErrorCode::PolicyViolation,
                    "R-SEC-7",
                    format!("the bundle policy requires app.integrity; this bundle's is {digest}"),
                )
                .field("payload.app.integrity"));
            }
            _ => {}
        }
        let replacing = self.surfaces.contains_key(&instance_id);
        let limits = self.config.limits.clone();
        // R-SES-1: the limit also bounds the host's web processes over every session.
        if !replacing {
            self.opens.admit_count(self.surfaces.len(), &limits)?;
        }
        let now = self.clock.monotonic();
        if !restored {
            self.admit_open_rate()?;
        }
        // R-STD-1: a component holding the id is replaced by the Surface.
        let mut replaced = Vec::new();
        self.replace_instance_component(&instance_id, &mut replaced);
        fx.extend(replaced);
        let generation = self.numbers.generation();
        let assets = installed
            .as_ref()
            .map(|i| i.assets.clone())
            .unwrap_or_default();
        let sources = installed
            .as_ref()
            .map(|i| i.sources.clone())
            .unwrap_or_default();
        let entry = Entry {
            generation,
            state_from: env.id.clone(),
            recorded: false,
            opened_by: env.id,
            opener: env.sender,
            app: app.clone(),
            reopens: ReopenBudget::default(),
            ready: None,
            state: state.unwrap_or_default(),
            documents: VecDeque::new(),
            committed: false,
            diagnostics: DiagnosticBudget {
                window_start: now,
                ..DiagnosticBudget::default()
            },
            installed,
        };
        let key = SurfaceKey {
            session: self.config.session_id,
            instance: instance_id.clone(),
            generation,
        };
        let open = SurfaceOpen {
            key,
            app,
            assets,
            sources,
        };
        if restored {
            self.surfaces.insert(instance_id, entry);
            fx.push(Effect::OpenHibernated(open));
            return Ok(());
        }
        match self.surfaces.insert(instance_id.clone(), entry) {
            Some(old) => {
                self.forget_surface_record(&instance_id, &old, fx);
                fx.push(Effect::Replace {
                    old: SurfaceKey {
                        session: self.config.session_id,
                        instance: instance_id,
                        generation: old.generation,
                    },
                    open,
                });
            }
            None => fx.push(Effect::Open(open)),
        }
        Ok(())
    }

    /// Counts one open (of a Surface or a component: one window, R-STD-17) against
    /// `Limits::max_opens_per_window`, or refuses it `rate_limited`.
    pub(super) fn admit_open_rate(&mut self) -> Result<(), ProtocolError> {
        self.opens
            .admit_rate(self.clock.monotonic(), &self.config.limits)
    }

    pub(super) fn patch(
        &mut self,
        env: Envelope<UiPatch>,
        fx: &mut Vec<Effect>,
    ) -> Result<(), ProtocolError> {
        let UiPatch { instance_id, state } = env.payload;
        if self.patch_component(&instance_id, env.id.clone(), &state, fx)? {
            return Ok(());
        }
        let entry = self
            .surfaces
            .get_mut(&instance_id)
            .ok_or_else(|| unknown_instance(&instance_id, UiPatch::TYPE))?;
        // R-UI-3: the patch replaces the whole state; before `ready`, only the latest is kept.
        entry.state = state;
        entry.state_from = env.id;
        if entry.recorded {
            // #29: asleep, its record follows the latest state.
            self.persist_surface(&instance_id, fx);
            return Ok(());
        }
        let entry = self
            .surfaces
            .get_mut(&instance_id)
            .ok_or_else(|| unknown_instance(&instance_id, UiPatch::TYPE))?;
        if entry.ready.is_some() {
            fx.push(Effect::DeliverState {
                key: SurfaceKey {
                    session: self.config.session_id,
                    instance: instance_id,
                    generation: entry.generation,
                },
                state: entry.state.clone(),
            });
        }
        Ok(())
    }

    pub(super) fn close(
        &mut self,
        env: Envelope<UiClose>,
        fx: &mut Vec<Effect>,
    ) -> Result<(), ProtocolError> {
        let UiClose {
            instance_id,
            reason,
        } = env.payload;
        if self.close_component(&instance_id, reason.clone(), fx) {
            return Ok(());
        }
        let entry = self
            .surfaces
            .remove(&instance_id)
            .ok_or_else(|| unknown_instance(&instance_id, UiClose::TYPE))?;
        self.forget_surface_record(&instance_id, &entry, fx);
        fx.push(Effect::Close {
            key: SurfaceKey {
                session: self.config.session_id,
                instance: instance_id,
                generation: entry.generation,
            },
            reason: CloseReason::Agent(reason),
        });
        Ok(())
    }
}
