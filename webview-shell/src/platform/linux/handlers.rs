//! Signal handlers wry connects and keeps no handle to, found and disconnected through GLib's FFI
//! (audited `unsafe`).

use std::ptr;

use gtk::glib::{self, prelude::*, translate::IntoGlib};

/// Disconnects every handler of `signal` on `object`, returning how many there were.
///
/// wry connects handlers it keeps no handle to: a `close` handler that destroys the view, and an
/// IPC handler that keeps the view alive. GLib offers no safe way to find a handler it did not
/// return, hence the two FFI calls.
#[allow(unsafe_code)]
pub(super) fn disconnect_all_handlers(object: &impl IsA<glib::Object>, signal: &str) -> usize {
    let Some(signal_id) = glib::subclass::signal::SignalId::lookup(signal, object.type_()) else {
        return 0;
    };
    let instance = object.upcast_ref::<glib::Object>().as_ptr();
    let mut removed = 0;
    // A view has a handful of handlers at most; the bound only guards against a GLib surprise.
    while removed < 64 {
        // SAFETY: `instance` points to a live GObject for the whole call (`object` holds a
        // strong reference). With G_SIGNAL_MATCH_ID only `signal_id`, looked up on the instance's own
        // type, is compared; the null closure, func and data pointers are not read.
        // g_signal_handler_find returns 0 or the id of a handler connected to this instance.
        let handler = unsafe {
            glib::gobject_ffi::g_signal_handler_find(
                instance.cast(),
                glib::gobject_ffi::G_SIGNAL_MATCH_ID,
                signal_id.into_glib(),
                0,
                ptr::null_mut(),
                ptr::null_mut(),
                ptr::null_mut(),
            )
        };
        if handler == 0 {
            break;
        }
        // SAFETY: `handler` was just returned by g_signal_handler_find for this live instance
        // and has not been disconnected yet.
        unsafe { glib::gobject_ffi::g_signal_handler_disconnect(instance.cast(), handler) };
        removed += 1;
    }
    removed
}
