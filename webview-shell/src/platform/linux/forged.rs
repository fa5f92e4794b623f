//! A test control for R-STD-8 (§5 check 8): key events flagged `send_event`, as another client
//! (or a `gtk_main_do_event` call) would forge them, fed through GTK's main dispatch to a
//! window of the host's own. Under X11 GTK 3 takes input through XInput 2, whose events no
//! other client can forge with `XSendEvent`, so the flag is set here, in process.

/// Feeds a press and a release of `keyval`, each flagged `send_event`, to `window` through
/// GTK's main dispatch, as the focused window's keys.
#[allow(unsafe_code)]
pub(crate) fn forge_key(window: &gtk::Window, keyval: u32) {
    use gtk::gdk;
    use gtk::glib::translate::{ToGlibPtr, ToGlibPtrMut};
    use gtk::prelude::*;
    let Some(gdk_window) = window.window() else {
        return;
    };
    let display = gdk_window.display();
    let keyboard = display.default_seat().and_then(|seat| seat.keyboard());
    let keycode = gdk::Keymap::for_display(&display)
        .and_then(|map| map.entries_for_keyval(keyval).first().map(|k| k.keycode()))
        .and_then(|code| u16::try_from(code).ok())
        .unwrap_or(0);
    for kind in [gdk::EventType::KeyPress, gdk::EventType::KeyRelease] {
        let mut event = gdk::Event::new(kind);
        event.set_device(keyboard.as_ref());
        let raw: *mut gdk::ffi::GdkEvent = event.to_glib_none_mut().0;
        let raw = raw.cast::<gdk::ffi::GdkEventKey>();
        // SAFETY: `event` was made as a key event, so its storage is a `GdkEventKey`; the
        // window reference given to it is released when the event is freed.
        unsafe {
            (*raw).window = gdk_window.to_glib_full();
            (*raw).send_event = 1;
            (*raw).keyval = keyval;
            (*raw).hardware_keycode = keycode;
        }
        gtk::main_do_event(&mut event);
    }
}
