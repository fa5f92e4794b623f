//! A page's animation frames, counted from the host's side: two of them passed means the web
//! process has painted what was sent to the page before the count began, and WebKit's frame
//! throttling means its first frame reached this process; the widget's next draw then puts it
//! on the window. The snapshot and the standby screen wait on this.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use gtk::glib::{self, prelude::*};
use gtk::prelude::*;
use javascriptcore::ValueExt;
use webkit2gtk::WebViewExt;

/// The script world the frame counter lives in: apart from the page's, so a page that replaced
/// `requestAnimationFrame` or the counter's name changes nothing here.
const WORLD: &str = "lineup-frames";
/// Counts two animation frames of the page, in [`WORLD`].
const ARM: &str = "var lineupFrames = 0;\
    requestAnimationFrame(function () { requestAnimationFrame(function () {\
    lineupFrames = 2; }); }); 0";
/// Reads the counter.
const POLL: &str = "lineupFrames";
/// How often the counter is read.
const POLL_EVERY: Duration = Duration::from_millis(16);
/// How many reads before going on anyway (about two seconds): a page that is not being painted
/// (an unmapped window) runs no animation frames.
const MAX_POLLS: u32 = 125;

/// What runs after the frames: the view, or `None` when it was closed meanwhile.
pub(super) type AfterFrames = Box<dyn FnOnce(Option<webkit2gtk::WebView>)>;

/// Runs `then` on the GTK thread once two animation frames of `view`'s page have passed (or
/// about two seconds without any).
///
/// The scripts go to the web process after everything sent before them (a state delivery, say),
/// and run in order there: when the frames are counted, the page's `onState` subscribers have
/// returned.
pub(super) fn after_two_frames(view: &webkit2gtk::WebView, then: AfterFrames) {
    let weak = view.downgrade();
    #[allow(deprecated)]
    view.run_javascript_in_world(ARM, WORLD, None::<&gtk::gio::Cancellable>, move |armed| {
        if let Err(e) = armed {
            tracing::debug!("cannot count the page's animation frames ({e}); going on now");
            return then(weak.upgrade());
        }
        poll(weak, then, MAX_POLLS);
    });
}

fn poll(weak: glib::WeakRef<webkit2gtk::WebView>, then: AfterFrames, left: u32) {
    glib::timeout_add_local_once(POLL_EVERY, move || {
        let Some(view) = weak.upgrade() else {
            return then(None);
        };
        #[allow(deprecated)]
        view.run_javascript_in_world(POLL, WORLD, None::<&gtk::gio::Cancellable>, move |r| {
            let frames = r
                .ok()
                .and_then(|r| r.js_value())
                .map_or(0, |v| v.to_int32());
            if frames >= 2 {
                then(weak.upgrade());
            } else if left == 0 {
                tracing::warn!("no animation frame of the page within two seconds; going on");
                then(weak.upgrade());
            } else {
                poll(weak, then, left - 1);
            }
        });
    });
}

/// Runs `done` on the GTK thread once what `view`'s page has drawn so far is on the window:
/// after two animation frames, at the first idle turn after the widget's next draw. Runs it
/// at once when the view was closed during the frames, and after the frames when it is not
/// drawable (hidden, or its window unmapped): nothing of it will be drawn then. A view closed
/// after the frames but before its draw never runs it (`done` is dropped with the view).
pub(super) fn when_drawn(view: &webkit2gtk::WebView, done: Box<dyn FnOnce()>) {
    after_two_frames(
        view,
        Box::new(move |view| {
            let Some(view) = view.filter(|v| v.is_drawable()) else {
                return done();
            };
            let done = Rc::new(RefCell::new(Some(done)));
            let handler = Rc::new(RefCell::new(None));
            let own = Rc::clone(&handler);
            let id = view.connect_draw(move |widget, _| {
                if let Some(id) = own.borrow_mut().take() {
                    widget.disconnect(id);
                }
                if let Some(done) = done.borrow_mut().take() {
                    glib::idle_add_local_once(done);
                }
                glib::Propagation::Proceed
            });
            *handler.borrow_mut() = Some(id);
            view.queue_draw();
        }),
    );
}
