//! The `LineUpSurface` bridge script, kept as a real JavaScript file (R-UI-6), and the key that
//! makes its state entry point the host's alone.

use std::fmt;

/// The bridge's source, `src/bridge.js`, with the key placeholder still in it.
const BRIDGE_JS: &str = include_str!("bridge.js");

/// What `bridge.js` holds in place of the key.
const KEY_PLACEHOLDER: &str = "@@LINEUP_DELIVERY_KEY@@";

/// The secret of one webview's state entry point (R-UI-3, R-UI-6).
///
/// The host evaluates `window.LineUpSurface.__deliverState(<key>, <state JSON>)`; the bridge
/// ignores any call without the key. The key lives only in the bridge's closure, which the webview
/// layer injects as a user script (never part of the document's text), and in the host, so page
/// code — which can call the entry point, read `document.scripts` and any function's
/// `toString()` — cannot feed its own Surface a state the agent never sent. Its `Debug` does not
/// print it.
///
/// ```
/// use lineup_surface_runtime::DeliveryKey;
/// let key = DeliveryKey::from_random_bytes([0x11; 16]);
/// let script = key.bridge_script();
/// assert!(script.contains("11111111111111111111111111111111"));
/// assert_eq!(
///     key.state_script(r#"{"__proto__":{"x":1}}"#),
///     r#"window.LineUpSurface.__deliverState("11111111111111111111111111111111","{\"__proto__\":{\"x\":1}}");"#
/// );
/// assert!(!format!("{key:?}").contains("1111"));
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct DeliveryKey(String);

/// What the bridge puts before each message it posts on the console channel, the one a backend
/// without a message handler reads (Servo's console messages): a console line that does not
/// start with it is the page's own output. Anyone in the page can write it, so like every
/// channel it says nothing of who sent: the sender is the webview the line came from (R-SEC-4).
pub const CONSOLE_MARKER: &str = "\u{1}lineup.surface.v1\u{1}";

impl DeliveryKey {
    /// Builds the key from 16 bytes the caller drew from a cryptographic random source; draw new
    /// ones for every webview.
    pub fn from_random_bytes(bytes: [u8; 16]) -> Self {
        Self(bytes.iter().map(|b| format!("{b:02x}")).collect())
    }

    /// The bridge JavaScript for a webview whose state is delivered with this key: inject it into
    /// the top frame at document start, before any guest code (R-UI-6, R-UI-6a).
    ///
    /// It defines one non-writable, non-configurable global, `LineUpSurface`, a frozen object with
    /// `event(name, data)`, `onState(callback)` and `resize(height)`, and the host's state entry
    /// point `window.LineUpSurface.__deliverState(key, json)`. It posts strings on wry's IPC
    /// channel (`window.webkit.messageHandlers.ipc` when present, else `window.ipc`), and where
    /// neither exists (Servo) on the console: `console.debug("%s", CONSOLE_MARKER + message)`
    /// with the `console.debug` of document start (see [`CONSOLE_MARKER`]):
    ///
    /// - `{"namespace":"lineup.surface.v1","type":"event","event":<name>,"data":<data or {}>}`
    /// - `{"namespace":"lineup.surface.v1","type":"resize","height":<number>}`
    /// - `{"namespace":"lineup.surface.v1","type":"ready","document":<id>}`, once per document
    ///   (the id drawn anew for each document the bridge runs in), after the guest
    ///   script has run.
    ///
    /// The primitives it uses are captured before guest code runs, so a guest cannot change what
    /// it posts; but any frame can post to the channel directly, so the host validates every
    /// message itself (R-SEC-4).
    pub fn bridge_script(&self) -> String {
        BRIDGE_JS.replacen(KEY_PLACEHOLDER, &self.0, 1)
    }

    /// The body of a function that hands the state to the page's subscribers when the engine
    /// passes its JSON text as the function's argument `state` (WebKitGTK's
    /// `call_async_javascript_function`): the text reaches the page as a string value, never
    /// lexed as script, and is parsed by the bridge's captured `JSON.parse` (R-UI-3).
    pub fn state_function_body(&self) -> String {
        format!(
            "return window.LineUpSurface.__deliverState(\"{}\",state);",
            self.0
        )
    }

    /// The script that hands `state_json`, the compact JSON text of the whole state, to the page's
    /// subscribers. The text travels as a JavaScript string and is parsed by the `JSON.parse` the
    /// bridge captured, so every member is an own data property (`__proto__` included), in the
    /// agent's order (R-UI-3).
    pub fn state_script(&self, state_json: &str) -> String {
        const HEAD: &str = "window.LineUpSurface.__deliverState(\"";
        const TAIL: &str = ");";
        // One buffer, written once: a large state is not copied on its way into the script.
        let mut script = Vec::with_capacity(
            HEAD.len()
                + self.0.len()
                + 2
                + state_json.len()
                + state_json.len() / 8
                + 2
                + TAIL.len(),
        );
        script.extend_from_slice(HEAD.as_bytes());
        script.extend_from_slice(self.0.as_bytes());
        script.extend_from_slice(b"\",");
        // A JSON string literal is a JavaScript string literal (ES2019 allows U+2028/U+2029);
        // writing a `&str` into a `Vec` cannot fail.
        let _ = serde_json::to_writer(&mut script, state_json);
        script.extend_from_slice(TAIL.as_bytes());
        // Every part is UTF-8: the key is hex, the rest ASCII or JSON text of a `&str`.
        String::from_utf8(script).unwrap_or_default()
    }
}

impl fmt::Debug for DeliveryKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("DeliveryKey(..)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> DeliveryKey {
        DeliveryKey::from_random_bytes([0xc3; 16])
    }

    #[test]
    fn r_ui_6_the_key_replaces_the_placeholder_once() {
        let script = key().bridge_script();
        assert!(!script.contains(KEY_PLACEHOLDER));
        assert_eq!(script.matches(&"c3".repeat(16)).count(), 1);
        assert_eq!(BRIDGE_JS.matches(KEY_PLACEHOLDER).count(), 1);
    }

    #[test]
    fn the_console_channel_uses_the_marker_the_host_looks_for() {
        let escaped: String = CONSOLE_MARKER
            .chars()
            .map(|c| match c {
                '\u{1}' => "\\u0001".to_owned(),
                c => c.to_string(),
            })
            .collect();
        assert_eq!(escaped, "\\u0001lineup.surface.v1\\u0001");
        assert!(BRIDGE_JS.contains(&format!("var CONSOLE_MARKER = '{escaped}';")));
    }

    #[test]
    fn r_ui_6_bridge_names_its_contract() {
        let js = key().bridge_script();
        for needle in [
            "'LineUpSurface'",
            "'__deliverState'",
            "'lineup.surface.v1'",
            "'DOMContentLoaded'",
            "JSON.parse",
        ] {
            assert!(js.contains(needle), "bridge.js lacks {needle}");
        }
    }

    #[test]
    fn r_ui_3_state_script_carries_the_json_text_as_a_string() {
        let script = key().state_script("{\"a\":\"</script>\\u2028\u{2028}😀\"}");
        let (_, argument) = script
            .split_once(',')
            .expect("two arguments: the key and the text");
        let argument = argument.trim_end_matches(");");
        let text: String = serde_json::from_str(argument).expect("a JSON string literal");
        assert_eq!(text, "{\"a\":\"</script>\\u2028\u{2028}😀\"}");
    }
}
