//! What stands in for a hibernated Surface while its new view loads: the picture of what it
//! last showed, at its place, over the new view, until the new page says `ready`.

use crate::config::Rect;
use crate::error::ShellError;
use crate::platform::PlatformPlaceholder;
use crate::window_pixels::WindowPixels;

/// A picture of a Surface shown at its place among the child views of an embedder's window,
/// drawn over the views there; removed when dropped.
///
/// ## Platform-specific
/// Linux: a `gtk::Image` in the child views' container. Elsewhere [`Placeholder::new`] fails
/// with [`ShellError::Unsupported`].
pub struct Placeholder {
    inner: PlatformPlaceholder,
}

impl std::fmt::Debug for Placeholder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Placeholder")
    }
}

impl Placeholder {
    /// Shows `pixels` at `bounds` among the child views of `parent`.
    pub fn new(
        parent: &tao::window::Window,
        pixels: &WindowPixels,
        bounds: Rect,
    ) -> Result<Self, ShellError> {
        Ok(Self {
            inner: PlatformPlaceholder::new(parent, pixels, bounds)?,
        })
    }

    /// Moves it to `bounds`.
    pub fn set_bounds(&self, bounds: Rect) {
        self.inner.set_bounds(bounds);
    }
}
