//! No system clipboard for Surfaces (R-SEC-5): the WebKit features that would give it, the
//! document-start guard of `execCommand`, and the key chords kept from the engine.

use gtk::gdk;

/// WebKit features that give a page the system clipboard, all switched off (R-SEC-5): the async
/// Clipboard API (`navigator.clipboard`, which a click unlocks whatever
/// `javascript-can-access-clipboard` says), script paste with and without an access request.
pub(super) const CLIPBOARD_FEATURES: [&str; 4] = [
    "AsyncClipboardAPI",
    "DOMPasteAccessRequests",
    "DOMPasteAllowed",
    "JavaScriptCanAccessClipboard",
];

/// Injected at document start into every frame: `execCommand` and its queries refuse `copy`,
/// `cut` and `paste`, which WebKit runs during any user gesture; no setting turns that off. The
/// wrappers are neither writable nor configurable and use only what they captured before any
/// page script ran.
pub(super) const CLIPBOARD_GUARD_JS: &str = r#"(function () {
  'use strict';
  var D = Document.prototype, apply = Reflect.apply, S = String, lower = S.prototype.toLowerCase;
  var define = Object.defineProperty, refused = Object.create(null);
  refused.copy = true; refused.cut = true; refused.paste = true;
  ['execCommand', 'queryCommandEnabled', 'queryCommandSupported'].forEach(function (name) {
    var original = D[name];
    if (typeof original !== 'function') { return; }
    define(D, name, { configurable: false, writable: false, enumerable: true, value: function (command) {
      var c = S(command), rest = [c];
      for (var i = 1; i < arguments.length; i++) { rest[i] = arguments[i]; }
      if (refused[apply(lower, c, [])] === true) { return false; }
      return apply(original, this, rest);
    } });
  });
})();"#;

/// Whether `event` is a key chord that copies, cuts or pastes (Ctrl+C/X/V, Ctrl+Insert,
/// Shift+Insert, Shift+Delete, the Copy/Cut/Paste keys).
pub(super) fn is_clipboard_key(event: &gdk::EventKey) -> bool {
    use gdk::keys::constants as key;
    let state = event.state();
    let ctrl = state.contains(gdk::ModifierType::CONTROL_MASK);
    let shift = state.contains(gdk::ModifierType::SHIFT_MASK);
    let k = event.keyval().to_lower();
    (ctrl && [key::c, key::x, key::v, key::Insert, key::KP_Insert].contains(&k))
        || (shift && [key::Insert, key::KP_Insert, key::Delete, key::KP_Delete].contains(&k))
        || [key::Copy, key::Cut, key::Paste].contains(&k)
}
