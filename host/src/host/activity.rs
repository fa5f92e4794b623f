//! What ran, told to the user and the embedder (original §5.3): each [`Activity`] goes to the
//! delegate and the log; one the user saw nothing of ([`Activity::unseen`]) also shows the
//! host's notice ([`crate::notice`]), over the Surfaces in the standby's colours when there is a
//! standby screen, else in the notice's own window.

use lineup_host_core::Activity;

use super::Host;
use lineup_webview_shell::ActivityNotice;

impl Host {
    pub(super) fn activity(&mut self, activity: &Activity) {
        tracing::info!("activity: {activity}");
        self.delegate.notify_capability_ran(activity);
        if !activity.unseen() {
            return;
        }
        let Some(notice) = self.notice.as_mut() else {
            return;
        };
        let text = ActivityNotice::of(activity);
        match &self.standby {
            Some(standby) => standby.show_notice(&text),
            None => notice.show(&text),
        }
    }
}
