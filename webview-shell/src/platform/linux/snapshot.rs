//! WebKit's own snapshot of a Surface's whole document, as PNG bytes, for `lineup preview
//! --screenshot`: taken once two animation frames have passed, so whatever the page drew in
//! `requestAnimationFrame` after its state arrived is in the picture.

use webkit2gtk::{SnapshotOptions, SnapshotRegion, WebViewExt};

use crate::error::ShellError;

type Done = Box<dyn FnOnce(Result<Vec<u8>, ShellError>)>;

/// Takes the snapshot of `view`'s full document after two animation frames
/// ([`after_two_frames`](super::frames::after_two_frames)); `done` gets PNG bytes, on the GTK
/// thread.
pub(super) fn full_document_png(view: &webkit2gtk::WebView, done: Done) {
    super::frames::after_two_frames(
        view,
        Box::new(move |view| match view {
            Some(view) => take(&view, done),
            None => done(Err(ShellError::Platform(
                "the view closed before its snapshot".to_owned(),
            ))),
        }),
    );
}

fn take(view: &webkit2gtk::WebView, done: Done) {
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
