//! What one session announced: its inventory's revisions and what they listed (R-INV-1..4,
//! R-STD-14).

use std::collections::BTreeSet;

use crate::capability::Out;
use crate::mcp_host::McpAppsInventory;
use crate::{
    AppList, CapabilityDecl, CapabilityName, ClientInventory, InventoryApp, Revision,
    RevisionEpoch, StandardComponent,
};

/// A session's announcements: the revision epoch the store handed out and the next revision's
/// number, the capability list last announced, every capability ever offered, and the
/// applications, standard components and MCP App views every inventory lists.
///
/// Invariants: revisions are `rev-<epoch>-<n>` with `n` counting up from 1, so none is ever
/// reused, also across restarts (R-INV-2); `offered` only grows (R-INV-4 `revoked`);
/// `announced` is `None` until the first announcement (the session is established).
#[derive(Debug)]
pub(crate) struct Announcements {
    epoch: RevisionEpoch,
    next_revision: u64,
    announced: Option<Vec<CapabilityDecl>>,
    offered: BTreeSet<CapabilityName>,
    applications: Vec<InventoryApp>,
    standard_components: Vec<StandardComponent>,
    mcp_apps: Option<McpAppsInventory>,
}

impl Announcements {
    /// Nothing announced yet under `epoch`; `offered` were offered to this agent before.
    pub(crate) fn new(epoch: RevisionEpoch, offered: BTreeSet<CapabilityName>) -> Self {
        Self {
            epoch,
            next_revision: 1,
            announced: None,
            offered,
            applications: Vec::new(),
            standard_components: Vec::new(),
            mcp_apps: None,
        }
    }

    /// The revision epoch, which no other session shares.
    pub(crate) fn epoch(&self) -> RevisionEpoch {
        self.epoch
    }

    /// Whether an inventory was announced (the session is established).
    pub(crate) fn established(&self) -> bool {
        self.announced.is_some()
    }

    /// Whether an established session last announced something other than `decls`.
    pub(crate) fn differs(&self, decls: &[CapabilityDecl]) -> bool {
        self.announced.as_deref().is_some_and(|last| last != decls)
    }

    /// Whether `name` was ever offered to this session (or its vouched agent before).
    pub(crate) fn was_offered(&self, name: &CapabilityName) -> bool {
        self.offered.contains(name)
    }

    /// Takes `applications` for the next inventories; whether they differ from the last.
    pub(crate) fn set_applications(&mut self, applications: Vec<InventoryApp>) -> bool {
        let changed = applications != self.applications;
        self.applications = applications;
        changed
    }

    /// Takes `components` for the next inventories; whether they differ from the last.
    pub(crate) fn set_standard_components(&mut self, components: Vec<StandardComponent>) -> bool {
        let changed = components != self.standard_components;
        self.standard_components = components;
        changed
    }

    /// Takes what of MCP App views the next inventories list (R-MCP-13); whether it differs
    /// from the last.
    pub(crate) fn set_mcp_apps(&mut self, mcp_apps: Option<McpAppsInventory>) -> bool {
        let changed = mcp_apps != self.mcp_apps;
        self.mcp_apps = mcp_apps;
        changed
    }

    /// Announces `decls` under the next revision; returns the names offered for the first
    /// time, which a vouched agent's kernel remembers in the store (R-INV-4: so that one
    /// withdrawn across a restart is `revoked` for it; to anyone else it stays unknown).
    pub(crate) fn announce(
        &mut self,
        decls: Vec<CapabilityDecl>,
        out: &mut Vec<Out>,
    ) -> Vec<CapabilityName> {
        let revision = Revision::known(format!("rev-{}-{}", self.epoch.0, self.next_revision));
        self.next_revision += 1;
        let new: Vec<CapabilityName> = decls
            .iter()
            .map(|d| d.name.clone())
            .filter(|name| !self.offered.contains(name))
            .collect();
        self.offered.extend(new.iter().cloned());
        self.announced = Some(decls.clone());
        out.push(Out::Announce {
            inventory: ClientInventory {
                revision,
                standard_components: self.standard_components.clone(),
                applications: self.applications.clone(),
                capabilities: decls.clone(),
                mcp_apps: self.mcp_apps.clone(),
            },
            list: AppList {
                capabilities: decls,
            },
        });
        new
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Risk;

    fn decl(name: &str) -> CapabilityDecl {
        CapabilityDecl {
            name: CapabilityName::known(name),
            version: crate::OpaqueVersion::known("1"),
            risk: Risk::DisplayOnly,
            input_schema: None,
        }
    }

    fn revisions(out: &[Out]) -> Vec<String> {
        out.iter()
            .filter_map(|o| match o {
                Out::Announce { inventory, .. } => Some(inventory.revision.as_str().to_owned()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn revisions_count_up_under_the_epoch_and_offered_names_are_remembered_once() {
        let mut a = Announcements::new(RevisionEpoch(3), BTreeSet::new());
        assert!(!a.established());
        assert!(
            !a.differs(&[decl("x")]),
            "nothing announced yet: nothing differs"
        );
        let mut out = Vec::new();
        let remembered = [
            a.announce(vec![decl("x")], &mut out),
            a.announce(vec![decl("x"), decl("y")], &mut out),
            a.announce(vec![decl("y")], &mut out),
        ];
        assert_eq!(revisions(&out), ["rev-3-1", "rev-3-2", "rev-3-3"]);
        assert_eq!(
            remembered,
            [
                vec![CapabilityName::known("x")],
                vec![CapabilityName::known("y")],
                vec![]
            ]
        );
        assert!(
            a.was_offered(&CapabilityName::known("x")),
            "withdrawn, still offered"
        );
        assert!(a.established() && a.differs(&[decl("x")]) && !a.differs(&[decl("y")]));
        assert!(
            !a.set_applications(Vec::new()),
            "the same list is no change"
        );
    }
}
