//! A check control: a real left click at a widget's point, through the X server's XTEST
//! extension, so the page under it sees trusted input exactly as from a person's mouse. An
//! example's `--check` answers a standard component with it.

use gtk::prelude::*;
use x11rb::connection::Connection;
use x11rb::protocol::xproto::{BUTTON_PRESS_EVENT, BUTTON_RELEASE_EVENT, MOTION_NOTIFY_EVENT};
use x11rb::protocol::xtest::ConnectionExt as _;
use x11rb::wrapper::ConnectionExt as _;

use crate::error::ShellError;

/// Moves the pointer of the X server at `$DISPLAY` to `widget`'s point (`x`, `y`) (its own
/// coordinates, in pixels) and clicks the left button there.
pub(super) fn click_in(widget: &impl IsA<gtk::Widget>, x: f64, y: f64) -> Result<(), ShellError> {
    let fail = |what: &str, e: &dyn std::fmt::Display| {
        ShellError::Platform(format!("cannot click (X11 XTEST {what}): {e}"))
    };
    let widget = widget.as_ref();
    let toplevel = widget.toplevel().ok_or_else(|| fail("toplevel", &"none"))?;
    let to = |v: f64| v.round() as i32;
    let (wx, wy) = widget
        .translate_coordinates(&toplevel, to(x), to(y))
        .ok_or_else(|| fail("translate", &"the widget is not in its toplevel"))?;
    let (_, ox, oy) = toplevel
        .window()
        .ok_or_else(|| fail("origin", &"the toplevel is not realized"))?
        .origin();
    let point = |v: i32| i16::try_from(v).map_err(|e| fail("point", &e));
    let (rx, ry) = (point(ox + wx)?, point(oy + wy)?);
    let (connection, screen) = x11rb::connect(None).map_err(|e| fail("connect", &e))?;
    let root = connection.setup().roots[screen].root;
    for (kind, detail, x, y) in [
        (MOTION_NOTIFY_EVENT, 0, rx, ry),
        (BUTTON_PRESS_EVENT, 1, 0, 0),
        (BUTTON_RELEASE_EVENT, 1, 0, 0),
    ] {
        connection
            .xtest_fake_input(kind, detail, x11rb::CURRENT_TIME, root, x, y, 0)
            .map_err(|e| fail("fake_input", &e))?;
    }
    connection.sync().map_err(|e| fail("sync", &e))?;
    Ok(())
}
