//! The standby screen's view over a parent window ([`StandbyWindow`]), on the platform's trusted
//! view.

use crate::error::ShellError;
use crate::standby::StandbyScreen;
use crate::view::SurfaceView;

/// The standby screen's view, over the Surfaces of a parent window: a trusted host page that
/// comes up with [`StandbyWindow::show`] and steps aside with [`StandbyWindow::hide_when_drawn`].
pub struct StandbyWindow(crate::platform::PlatformStandby);

impl StandbyWindow {
    /// Puts `screen` into `parent`'s container, above the child views, showing.
    ///
    /// # Errors
    /// [`ShellError::NoContainer`] when `parent` has no container for child views, and
    /// [`ShellError::Platform`] or [`ShellError::Unsupported`] when the view cannot be made.
    pub fn new(parent: &tao::window::Window, screen: &StandbyScreen) -> Result<Self, ShellError> {
        crate::platform::PlatformStandby::new(parent, screen).map(Self)
    }

    /// Comes up now, over every Surface.
    pub fn show(&self) {
        self.0.show();
    }

    /// Steps aside once `surface`'s page has drawn ([`SurfaceView::when_drawn`]), unless
    /// [`StandbyWindow::show`] comes first: the window goes from the standby screen to the
    /// Surface's picture, never through an empty view.
    pub fn hide_when_drawn(&self, surface: &SurfaceView) {
        surface.when_drawn(self.0.hide_later());
    }

    /// Replaces the status line (capped at [`MAX_STANDBY_STATUS_CHARS`](crate::MAX_STANDBY_STATUS_CHARS)).
    pub fn set_status(&self, status: &str) {
        self.0.set_status(status);
    }

    /// Shows the activity notice over everything, in the standby's colours.
    pub fn show_notice(&self, notice: &crate::ActivityNotice) {
        self.0.show_notice(notice);
    }

    /// The small indicator over the Surfaces: shown with `text`, or hidden.
    pub fn set_indicator(&self, text: Option<&str>) {
        self.0.set_indicator(text);
    }
}

impl std::fmt::Debug for StandbyWindow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StandbyWindow").finish_non_exhaustive()
    }
}
