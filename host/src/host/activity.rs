//! What ran, told to the user (original §5.3): an activity the user saw nothing of
//! ([`Activity::unseen`]) shows the host's notice, over the Surfaces in the standby's colours
//! when there is a standby screen, else in the notice's own window. The delegate and the log
//! hear of every activity from the host.

use lineup_host_core::{Activity, LanguageTag};
use lineup_webview_shell::{ActivityNotice, NoticeWindow};

use super::standby::HostStandby;

/// The host's activity notices, when [`HostBuilder::activity_notices`] is on.
///
/// [`HostBuilder::activity_notices`]: super::HostBuilder::activity_notices
pub(super) struct ActivityNotices {
    /// The notice's own window, for a host without a standby screen.
    window: NoticeWindow,
    /// The host context's language, of the notice's words (R-STD-9).
    language: LanguageTag,
}

impl ActivityNotices {
    /// Notices in `language`; the window is made at the first.
    pub(super) fn new(language: LanguageTag) -> Self {
        Self {
            window: NoticeWindow::default(),
            language,
        }
    }

    /// Shows the notice of `activity` if the user saw nothing of it.
    pub(super) fn show(&mut self, activity: &Activity, standby: Option<&HostStandby>) {
        if !activity.unseen() {
            return;
        }
        let text = ActivityNotice::of(activity, &self.language);
        match standby {
            Some(standby) => standby.show_notice(&text),
            None => self.window.show(&text),
        }
    }
}
