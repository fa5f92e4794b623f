//! #29 item 3 in a session: a hibernated Surface of a vouched session is kept in the store
//! beside the standard components' records ([`ComponentEffect::PersistSurface`]), its record
//! following every patch while it sleeps and forgotten when it wakes or closes; after a
//! restart, the records the driver reads back for the same identity and conversation are
//! opened again, hibernated, through every check of an agent's open, and each one's opener
//! gets `restored {status:"open", opened_by, state_from}`.

use serde_json::json;

use crate::component::ComponentEffect;
use crate::ids::EventName;
use crate::message::{InstalledSurface, SurfaceSource, UiEvent};
use crate::session::Entry;
use crate::{
    Effect, Envelope, InstanceId, JsonObject, PartyId, Session, SurfaceKey, SurfaceRecord, UiOpen,
};

impl Session {
    /// The record of Surface `instance` as it stands, when this session is vouched and has a
    /// conversation (nothing is kept for an unvouched session).
    fn surface_record(&self, instance: &InstanceId) -> Option<(PartyId, SurfaceRecord)> {
        let owner = self.config.agent_id.clone()?;
        let conversation = self.conversation.clone()?;
        let entry = self.surfaces.get(instance)?;
        let app = match &entry.installed {
            // An installed app's Surface comes back at the version it was opened with.
            Some(installed) => SurfaceSource::Installed(InstalledSurface {
                id: installed.surface.id.clone(),
                version: Some(installed.version.clone()),
                surface: installed.surface.surface.clone(),
            }),
            None => SurfaceSource::Inline(entry.app.clone()),
        };
        let record = SurfaceRecord {
            conversation,
            instance_id: instance.clone(),
            app,
            state: entry.state.clone(),
            opened_by: entry.opened_by.clone(),
            state_from: entry.state_from.clone(),
            opener: entry.opener.clone(),
        };
        Some((owner, record))
    }

    /// Keeps the record of Surface `instance` (#29), when there is one to keep, and marks it
    /// recorded.
    pub(super) fn persist_surface(&mut self, instance: &InstanceId, fx: &mut Vec<Effect>) {
        let Some((owner, record)) = self.surface_record(instance) else {
            return;
        };
        if let Some(entry) = self.surfaces.get_mut(instance) {
            entry.recorded = true;
        }
        fx.push(Effect::Component(ComponentEffect::PersistSurface {
            owner,
            record: Box::new(record),
        }));
    }

    /// Forgets the record of `entry`, Surface `instance`, when the store keeps one: it woke,
    /// closed or was replaced.
    pub(super) fn forget_surface_record(
        &self,
        instance: &InstanceId,
        entry: &Entry,
        fx: &mut Vec<Effect>,
    ) {
        if entry.recorded {
            self.forget_component(instance, fx);
        }
    }

    /// Surface `instance` woke: its record, if any, is forgotten.
    pub(super) fn woke(&mut self, instance: &InstanceId, fx: &mut Vec<Effect>) {
        let Some(entry) = self.surfaces.get(instance) else {
            return;
        };
        self.forget_surface_record(instance, entry, fx);
        if let Some(entry) = self.surfaces.get_mut(instance) {
            entry.recorded = false;
        }
    }

    /// The host hibernated Surface `key` (#29): a vouched session keeps its record, so that a
    /// restart can bring it back; nothing goes upstream. Nothing for a stale key.
    pub fn hibernated(&mut self, key: &SurfaceKey) -> Vec<Effect> {
        let mut fx = Vec::new();
        if self.is_current(key) {
            self.persist_surface(&key.instance, &mut fx);
        }
        fx
    }

    /// Opens again, hibernated, the Surfaces of `records` (read back by the driver after a
    /// [`ComponentEffect::Restore`]) that belong to this conversation, are not open now and
    /// pass every check of an agent's open (an installed app's at the version it was opened
    /// with); each one's opener gets `restored {status:"open", opened_by, state_from}`. A
    /// record that fails a check is forgotten.
    pub(super) fn restore_surfaces(&mut self, records: Vec<SurfaceRecord>) -> Vec<Effect> {
        let mut fx = Vec::new();
        for record in records {
            let Some(conversation) = self.conversation.clone() else {
                break;
            };
            if record.conversation != conversation
                || self.components.contains_key(&record.instance_id)
                || self.surfaces.contains_key(&record.instance_id)
            {
                continue;
            }
            let instance = record.instance_id.clone();
            let env = Envelope {
                id: record.opened_by.clone(),
                conversation_id: conversation,
                sender: record.opener.clone(),
                target: None,
                payload: UiOpen {
                    instance_id: instance.clone(),
                    app: record.app,
                    state: Some(record.state),
                },
            };
            let mut opened = Vec::new();
            if self.open_as(env, true, &mut opened).is_err() {
                self.forget_component(&instance, &mut fx);
                continue;
            }
            fx.extend(opened);
            let opener = record.opener;
            if let Some(entry) = self.surfaces.get_mut(&instance) {
                entry.state_from = record.state_from.clone();
                entry.recorded = true;
            }
            let payload = UiEvent {
                instance_id: instance,
                event: EventName::known("restored"),
                data: JsonObject::try_from(json!({
                    "status": "open",
                    "opened_by": record.opened_by.as_str(),
                    "state_from": record.state_from.as_str(),
                }))
                .unwrap_or_default(),
            };
            fx.push(Effect::Send(self.outbound(payload, Some(opener))));
        }
        fx
    }
}
