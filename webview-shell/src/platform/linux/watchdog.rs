//! The engine's side of the hang watchdog (R-UI-12): a no-op script evaluated in a script world
//! of the host's own, WebKit's `is-web-process-responsive`, and
//! `webkit_web_view_terminate_web_process`.

use webkit2gtk::WebViewExt;

/// The script world of the watchdog's no-op: apart from the page's, so nothing the page defines
/// or replaces is involved in it.
const WORLD: &str = "lineup-watchdog";
/// The no-op. Its completion, reported by the web process after its main thread ran it, is the
/// sign of life; a page spinning on that thread delays it for as long as it spins.
const NOOP: &str = "0";

/// Evaluates the no-op in `view`; `done` runs on the GTK thread when the web process answered,
/// whatever the result (an error answer is an answer, too).
pub(super) fn ping(view: &webkit2gtk::WebView, done: Box<dyn FnOnce()>) {
    #[allow(deprecated)]
    view.run_javascript_in_world(NOOP, WORLD, None::<&gtk::gio::Cancellable>, move |_| done());
}

/// WebKit's own view: `false` once its web process did not answer WebKit's responsiveness check
/// in time, until it answers again.
pub(super) fn responsive(view: &webkit2gtk::WebView) -> bool {
    view.is_web_process_responsive()
}

/// Ends `view`'s web process; WebKit then emits `web-process-terminated` with
/// `WEBKIT_WEB_PROCESS_TERMINATED_BY_API`.
pub(super) fn terminate(view: &webkit2gtk::WebView) {
    view.terminate_web_process();
}
