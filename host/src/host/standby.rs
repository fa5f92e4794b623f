//! The standby screen in the host ([`HostBuilder::standby`](crate::HostBuilder::standby)): up
//! while no Surface in the parent window has drawn, down once the first ready Surface's page is
//! on screen, up again before the last Surface's view is destroyed, so the window is never
//! empty.

use lineup_host_core::SurfaceKey;

use lineup_webview_shell::{StandbyWindow, SurfaceView};

use crate::standby_rule::{StandbyChange, StandbyRule};

/// The standby view and the rule that moves it.
pub(super) struct HostStandby {
    view: StandbyWindow,
    rule: StandbyRule,
}

impl HostStandby {
    pub(super) fn new(view: StandbyWindow) -> Self {
        Self {
            view,
            rule: StandbyRule::default(),
        }
    }

    /// A Surface's page is ready; `view` is its view, while open.
    /// A Surface without a view shows nothing: the standby screen stays for it.
    pub(super) fn ready(&mut self, key: &SurfaceKey, view: Option<&SurfaceView>) {
        let Some(view) = view else { return };
        match self.rule.ready(key) {
            StandbyChange::HideWhenDrawn => self.view.hide_when_drawn(view),
            change => self.apply(change),
        }
    }

    /// A Surface's view is about to be destroyed.
    pub(super) fn gone(&mut self, key: &SurfaceKey) {
        let change = self.rule.gone(key);
        self.apply(change);
    }

    pub(super) fn set_status(&self, status: &str) {
        self.view.set_status(status);
    }

    /// The small indicator over the Surfaces: shown with `text`, or hidden.
    pub(super) fn set_indicator(&self, text: Option<&str>) {
        self.view
            .set_indicator(text.map(lineup_webview_shell::cap_status).as_deref());
    }

    /// The activity notice, in the standby's colours over the Surfaces.
    pub(super) fn show_notice(&self, notice: &lineup_webview_shell::ActivityNotice) {
        self.view.show_notice(notice);
    }

    fn apply(&self, change: StandbyChange) {
        match change {
            StandbyChange::Keep => {}
            StandbyChange::Show => self.view.show(),
            // Only `ready` steps aside, with the view it waits for.
            StandbyChange::HideWhenDrawn => {}
        }
    }
}
