//! Where an embedder's window holds the host's child views (#49 item 3): [`HostContainer`], a
//! widget the embedder packs into its own layout, and [`child_area_size`], the size placement
//! rectangles are measured in, and [`on_child_area_resized`], when it changes.

use tao::dpi::LogicalSize;
use tao::window::Window;

/// The host's container in an embedder's window: the widget that holds the Surfaces' child
/// views, the standard components' layer over them, and the standby screen (R-STD-13). Pack
/// [`HostContainer::widget`] wherever the app's layout wants the host's area (beside a sidebar,
/// under a header) in the window it gives
/// `lineup_host::HostBuilder::child_views_in`;
/// the host finds it there. Without one, the host packs its own into tao's default vbox after
/// what the app packed there.
///
/// Every placement rectangle ([`Rect`](crate::Rect)) is in this container's coordinates, and
/// every size the host offers for placement is this container's ([`child_area_size`]). One
/// container per window; the host uses the first it finds.
///
/// ## Platform-specific
/// Linux: a `gtk::Overlay` (widget name `lineup-host-container`) that expands in both
/// directions. Elsewhere there are no child views, and it holds nothing.
#[derive(Clone)]
pub struct HostContainer(crate::platform::PlatformContainer);

impl HostContainer {
    /// A new container, in no window yet.
    pub fn new() -> Self {
        Self(crate::platform::PlatformContainer::new())
    }

    /// The widget to pack into the app's own layout.
    #[cfg(target_os = "linux")]
    pub fn widget(&self) -> gtk::Widget {
        self.0.widget()
    }
}

impl Default for HostContainer {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for HostContainer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostContainer").finish_non_exhaustive()
    }
}

/// Calls `changed` from the main loop whenever the area that holds `parent`'s child views gets a
/// new size: the window resized, or the app's own layout moved the container's edges (a sidebar
/// folded) with the window's size unchanged. The host lays its views out again then.
///
/// # Errors
/// [`ShellError::NoContainer`](crate::ShellError::NoContainer) when `parent` has no place for
/// child views.
pub fn on_child_area_resized(
    parent: &Window,
    changed: impl Fn() + 'static,
) -> Result<(), crate::ShellError> {
    crate::platform::watch_container(parent, Box::new(changed))
}

/// The size of the area that holds `parent`'s child views, in logical pixels: its
/// [`HostContainer`]'s once GTK has laid it out, else 1 × 1 (a guess could only be larger than
/// the container, and a child view larger than its container grows the window; the host lays
/// the views out again when the container gets its size, [`on_child_area_resized`]). Placement
/// rectangles are measured in it.
pub fn child_area_size(parent: &Window) -> LogicalSize<u32> {
    match crate::platform::container_size(parent) {
        Some((width, height)) => LogicalSize::new(width, height),
        None => LogicalSize::new(1, 1),
    }
}
