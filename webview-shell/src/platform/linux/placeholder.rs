//! A picture standing in for a hibernated Surface's view while its new view loads: a
//! `gtk::Image` in the child views' `gtk::Fixed`, added after the view so it is drawn over it.

use gtk::gdk_pixbuf::{Colorspace, Pixbuf};
use gtk::glib::Bytes;
use gtk::prelude::*;

use crate::config::Rect;
use crate::error::ShellError;
use crate::window_pixels::WindowPixels;

use super::layers::child_container;

/// The image and the container it was put in.
pub(crate) struct PlatformPlaceholder {
    image: gtk::Image,
    fixed: gtk::Fixed,
}

impl PlatformPlaceholder {
    /// Shows `pixels` at `bounds` over the child views of `parent`.
    pub(crate) fn new(
        parent: &tao::window::Window,
        pixels: &WindowPixels,
        bounds: Rect,
    ) -> Result<Self, ShellError> {
        let fixed = child_container(parent)?;
        let width = i32::try_from(pixels.width()).unwrap_or(i32::MAX);
        let height = i32::try_from(pixels.height()).unwrap_or(i32::MAX);
        let pixbuf = Pixbuf::from_bytes(
            &Bytes::from_owned(pixels.rgb()),
            Colorspace::Rgb,
            false,
            8,
            width,
            height,
            width.saturating_mul(3),
        );
        let image = gtk::Image::from_pixbuf(Some(&pixbuf));
        fixed.put(&image, bounds.x, bounds.y);
        image.show();
        Ok(Self { image, fixed })
    }

    /// Moves it to `bounds` (the pixels keep their size).
    pub(crate) fn set_bounds(&self, bounds: Rect) {
        self.fixed.move_(&self.image, bounds.x, bounds.y);
    }
}

impl Drop for PlatformPlaceholder {
    fn drop(&mut self) {
        self.fixed.remove(&self.image);
    }
}
