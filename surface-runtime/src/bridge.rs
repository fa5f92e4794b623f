//! The `LineUpSurface` bridge script, kept as a real JavaScript file (R-UI-6).

/// The bridge's source, `src/bridge.js`.
const BRIDGE_JS: &str = include_str!("bridge.js");

/// The bridge JavaScript that [`SurfaceDocument::assemble`](crate::SurfaceDocument::assemble)
/// places before any guest code (R-UI-6, R-UI-6a).
///
/// It defines one non-writable, non-configurable global, `LineUpSurface`, a frozen object with
/// `event(name, data)`, `onState(callback)` and `resize(height)`, and the host's state entry point
/// `window.__lineupSurfaceDeliverState(state)`. It posts strings on wry's IPC channel
/// (`window.webkit.messageHandlers.ipc` when present, else `window.ipc`):
///
/// - `{"namespace":"lineup.surface.v1","type":"event","event":<name>,"data":<data or {}>}`
/// - `{"namespace":"lineup.surface.v1","type":"resize","height":<number>}`
/// - `{"namespace":"lineup.surface.v1","type":"ready"}`, once, after the guest script has run.
///
/// The primitives it uses are captured before guest code runs, so a guest cannot change what it
/// posts; but any frame can post to the channel directly, so the host validates every message
/// itself (R-SEC-4).
pub fn bridge_script() -> &'static str {
    BRIDGE_JS
}

#[cfg(test)]
mod tests {
    use super::*;

    /// R-UI-6a: the bridge sits in a `<script>` element, so it must not be able to end it.
    #[test]
    fn r_ui_6a_bridge_cannot_end_its_script_element() {
        let lower = bridge_script().to_ascii_lowercase();
        assert!(!lower.contains("</script"));
        assert!(!lower.contains("<!--"));
    }

    #[test]
    fn r_ui_6_bridge_names_its_contract() {
        let js = bridge_script();
        for needle in [
            "'LineUpSurface'",
            "'__lineupSurfaceDeliverState'",
            "'lineup.surface.v1'",
            "'DOMContentLoaded'",
        ] {
            assert!(js.contains(needle), "bridge.js lacks {needle}");
        }
    }
}
