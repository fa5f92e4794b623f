//! What a window, or a view in it, shows on screen, read back from the X server through GDK.

use gtk::prelude::*;
use tao::platform::unix::WindowExtUnix;

use crate::error::ShellError;
use crate::window_pixels::WindowPixels;

/// What `window` shows on screen now, its content area read back from the display (on Linux,
/// X11's image of the window through GDK: the Surfaces' views, the components' layer and the
/// embedder's widgets as painted). Let the event loop run first, so what was laid out is
/// painted. Another top-level window over it (a prompt, a notice) is not part of what this
/// reads: [`screen_pixels_of`] reads the screen itself. [`ShellError::Unsupported`] where the platform cannot read a window back.
pub fn window_pixels(window: &tao::window::Window) -> Result<WindowPixels, ShellError> {
    let gdk_window = window
        .gtk_window()
        .window()
        .ok_or_else(|| ShellError::Platform("the window is not realized".to_owned()))?;
    let (width, height) = (gdk_window.width(), gdk_window.height());
    read(&gdk_window, [0, 0, width, height])
}

/// What the screen shows where `window`'s content area is: the window as painted, with every
/// other window over it (a consent prompt, a notice) and anything a window left unpainted, as
/// the person sees it; the part of the area that is on screen (clipped to the screen's edges,
/// so the pixels start at the first visible one). [`ShellError::Unsupported`] where the
/// platform cannot read the screen back.
pub fn screen_pixels_of(window: &tao::window::Window) -> Result<WindowPixels, ShellError> {
    let gdk_window = window
        .gtk_window()
        .window()
        .ok_or_else(|| ShellError::Platform("the window is not realized".to_owned()))?;
    let (_, x, y) = gdk_window.origin();
    let root = gdk_window
        .screen()
        .root_window()
        .ok_or_else(|| ShellError::Platform("the screen has no root window".to_owned()))?;
    let (left, top) = (x.max(0), y.max(0));
    let right = (x + gdk_window.width()).min(root.width());
    let bottom = (y + gdk_window.height()).min(root.height());
    read(&root, [left, top, right - left, bottom - top])
}

/// What `widget` shows now: its allocation, read from the window it draws on.
pub(crate) fn read_widget(widget: &impl IsA<gtk::Widget>) -> Result<WindowPixels, ShellError> {
    let gdk_window = widget
        .window()
        .ok_or_else(|| ShellError::Platform("the view is not realized".to_owned()))?;
    let a = widget.allocation();
    // A widget with a window of its own draws from that window's origin.
    let (x, y) = if widget.has_window() {
        (0, 0)
    } else {
        (a.x(), a.y())
    };
    read(&gdk_window, [x, y, a.width(), a.height()])
}

fn read(
    gdk_window: &gtk::gdk::Window,
    [x, y, width, height]: [i32; 4],
) -> Result<WindowPixels, ShellError> {
    if width <= 0 || height <= 0 {
        return Err(ShellError::Platform(
            "nothing of it is on screen".to_owned(),
        ));
    }
    let pixbuf = gdk_window
        .pixbuf(x, y, width, height)
        .ok_or_else(|| ShellError::Platform("the window could not be read back".to_owned()))?;
    let (w, h) = (
        u32::try_from(pixbuf.width()).unwrap_or(0),
        u32::try_from(pixbuf.height()).unwrap_or(0),
    );
    let stride = usize::try_from(pixbuf.rowstride()).unwrap_or(0);
    let channels = usize::try_from(pixbuf.n_channels()).unwrap_or(0);
    let bytes = pixbuf.read_pixel_bytes();
    let mut rgb = Vec::with_capacity(usize::try_from(w * h * 3).unwrap_or(0));
    for row in 0..usize::try_from(h).unwrap_or(0) {
        for col in 0..usize::try_from(w).unwrap_or(0) {
            let at = row * stride + col * channels;
            rgb.extend_from_slice(bytes.get(at..at + 3).unwrap_or(&[0, 0, 0]));
        }
    }
    WindowPixels::new(w, h, rgb)
        .ok_or_else(|| ShellError::Platform("the window's pixels do not fit".to_owned()))
}
