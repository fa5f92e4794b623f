//! WebKit's own snapshot of a Surface's whole document, as PNG bytes, for `lineup preview
//! --screenshot`: taken once two animation frames have passed, so whatever the page drew in
//! `requestAnimationFrame` after its state arrived is in the picture.

use std::time::Duration;

use gtk::glib::{self, prelude::*};
use javascriptcore::ValueExt;
use webkit2gtk::{SnapshotOptions, SnapshotRegion, WebViewExt};

use crate::error::ShellError;

/// The script world the frame counter lives in: apart from the page's, so a page that replaced
/// `requestAnimationFrame` or the counter's name changes nothing here.
const WORLD: &str = "lineup-snapshot";
/// Counts two animation frames of the page, in [`WORLD`].
const ARM: &str = "var lineupSnapshotFrames = 0;\
    requestAnimationFrame(function () { requestAnimationFrame(function () {\
    lineupSnapshotFrames = 2; }); }); 0";
/// Reads the counter.
const POLL: &str = "lineupSnapshotFrames";
/// How often the counter is read.
const POLL_EVERY: Duration = Duration::from_millis(16);
/// How many reads before the snapshot is taken anyway (about two seconds): a page that is not
/// being painted (an unmapped window) runs no animation frames.
const MAX_POLLS: u32 = 125;

type Done = Box<dyn FnOnce(Result<Vec<u8>, ShellError>)>;

/// Takes the snapshot of `view`'s full document after two animation frames; `done` gets PNG
/// bytes, on the GTK thread.
///
/// The scripts go to the web process after everything sent before them (a state delivery, say),
/// and run in order there: when the frames are counted, the page's `onState` subscribers have
/// returned.
pub(super) fn full_document_png(view: &webkit2gtk::WebView, done: Done) {
    let weak = view.downgrade();
    #[allow(deprecated)]
    view.run_javascript_in_world(ARM, WORLD, None::<&gtk::gio::Cancellable>, move |armed| {
        if let Err(e) = armed {
            tracing::debug!("snapshot: cannot count animation frames ({e}); taking it now");
            return take(&weak, done);
        }
        poll(weak, done, MAX_POLLS);
    });
}

fn poll(weak: glib::WeakRef<webkit2gtk::WebView>, done: Done, left: u32) {
    glib::timeout_add_local_once(POLL_EVERY, move || {
        let Some(view) = weak.upgrade() else {
            return done(Err(ShellError::Platform(
                "the view closed before its snapshot".to_owned(),
            )));
        };
        #[allow(deprecated)]
        view.run_javascript_in_world(POLL, WORLD, None::<&gtk::gio::Cancellable>, move |r| {
            let frames = r
                .ok()
                .and_then(|r| r.js_value())
                .map_or(0, |v| v.to_int32());
            if frames >= 2 {
                take(&weak, done);
            } else if left == 0 {
                tracing::warn!("snapshot: no animation frame within two seconds; taking it now");
                take(&weak, done);
            } else {
                poll(weak, done, left - 1);
            }
        });
    });
}

fn take(weak: &glib::WeakRef<webkit2gtk::WebView>, done: Done) {
    let Some(view) = weak.upgrade() else {
        return done(Err(ShellError::Platform(
            "the view closed before its snapshot".to_owned(),
        )));
    };
    view.snapshot(
        SnapshotRegion::FullDocument,
        SnapshotOptions::NONE,
        None::<&gtk::gio::Cancellable>,
        move |result| {
            done(
                result
                    .map_err(|e| ShellError::Platform(format!("webkit snapshot failed: {e}")))
                    .and_then(encode_png),
            )
        },
    );
}

/// The snapshot's pixels as PNG, through cairo.
fn encode_png(surface: cairo::Surface) -> Result<Vec<u8>, ShellError> {
    let image = cairo::ImageSurface::try_from(surface)
        .map_err(|_| ShellError::Platform("the snapshot is not an image surface".to_owned()))?;
    let mut png = Vec::new();
    image
        .write_to_png(&mut png)
        .map_err(|e| ShellError::Platform(format!("cannot encode the snapshot as png: {e}")))?;
    Ok(png)
}
