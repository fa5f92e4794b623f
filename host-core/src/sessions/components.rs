//! The table's standard-component deadlines: every session's instances whose
//! `props.expires_at` passed are closed `expired` (R-STD-7). Wall-clock time comes from the
//! caller, as the table keeps no wall clock of its own (sans-IO).

use crate::{SessionEffects, Sessions, SurfaceKey, Timestamp};

impl Sessions {
    /// Closes, in every session, each open component whose `props.expires_at` is at or before
    /// `now`: it is locked and hidden, and its agent gets `ui.event close {reason:"expired"}`
    /// (R-STD-7). Call it at [`Sessions::next_component_expiry`].
    pub fn expire_components(&mut self, now: Timestamp) -> Vec<SessionEffects> {
        let mut all = Vec::new();
        for (id, slot) in self.directory.iter_mut() {
            let effects = slot.session.expire_components(now);
            if !effects.is_empty() {
                all.push(SessionEffects {
                    session: *id,
                    effects,
                });
            }
        }
        all
    }

    /// The link to `url` the user activated in component `key`, when it is one of that
    /// instance's current links ([`Session::component_link`](crate::Session::component_link), R-STD-11).
    pub fn component_link(&mut self, key: &SurfaceKey, url: &str) -> Option<crate::ComponentLink> {
        self.get_mut(key.session)?.component_link(key, url)
    }

    /// The earliest `props.expires_at` of the open components of every session.
    pub fn next_component_expiry(&self) -> Option<Timestamp> {
        self.directory
            .values()
            .filter_map(|slot| slot.session.next_component_expiry())
            .min()
    }
}
