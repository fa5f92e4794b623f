//! The activity notice's own window ([`NoticeWindow`]), for hosts without a standby screen.

use crate::notice::ActivityNotice;

/// The activity notice's own window, for hosts without a standby screen: each
/// [`NoticeWindow::show`] shows a notice for [`NOTICE_DURATION`](crate::NOTICE_DURATION).
#[derive(Default)]
pub struct NoticeWindow(crate::platform::PlatformNotice);

impl NoticeWindow {
    /// Shows `notice`, replacing one still showing.
    pub fn show(&mut self, notice: &ActivityNotice) {
        self.0.show(notice);
    }
}

impl std::fmt::Debug for NoticeWindow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NoticeWindow").finish_non_exhaustive()
    }
}
