//! A clipboard per Surface: without it, Servo built without its `clipboard` feature keeps one
//! process-wide string that every webview reads and writes, a channel between Surfaces.

use std::cell::RefCell;

use servo::{ClipboardDelegate, StringRequest, WebView};

/// What this Surface copied, readable by this Surface only; the system clipboard is never
/// touched (`Hardening::clipboard_access` is false).
#[derive(Default)]
pub(crate) struct OwnClipboard(RefCell<String>);

impl ClipboardDelegate for OwnClipboard {
    fn clear(&self, _webview: WebView) {
        self.0.borrow_mut().clear();
    }

    fn get_text(&self, _webview: WebView, request: StringRequest) {
        request.success(self.0.borrow().clone());
    }

    fn set_text(&self, _webview: WebView, new_contents: String) {
        *self.0.borrow_mut() = new_contents;
    }
}
