//! The relay of an MCP App view on WebKitGTK (R-MCP-7, R-MCP-10): user scripts and message
//! handlers in two script worlds of the host's own, and the host's messages posted to the view
//! from one of them. The view's page has no message handler of its own to reach.

use std::rc::{Rc, Weak};

use gtk::glib::{self, prelude::*};
use javascriptcore::ValueExt;
use lineup_surface_runtime::MCP_VIEW_FRAME_ID;
use serde::Deserialize;
use webkit2gtk::{
    UserContentInjectedFrames, UserContentManagerExt, UserScript, UserScriptInjectionTime,
    WebViewExt,
};

use super::events::{push, EventQueue};
use crate::error::ShellError;
use crate::event::{McpDrop, ViewEvent};

/// The world of the relay: its script runs in the top frame only, and its two handlers are
/// registered in it alone.
const RELAY_WORLD: &str = "lineup-mcp-relay";
/// The world of the `securitypolicyviolation` listener, in every frame, with its one handler.
const BLOCKED_WORLD: &str = "lineup-mcp-blocked";
/// Gets a message the relay passed, as its JSON text.
const MESSAGE: &str = "mcpMessage";
/// Gets `{reason, len}` for a message the relay dropped.
const DROPPED: &str = "mcpDropped";
/// Gets `{directive, blocked}` for each blocked load.
const BLOCKED: &str = "mcpBlocked";

/// The relay's source (`mcp_relay.js`), its placeholders still in it.
const RELAY_JS: &str = include_str!("mcp_relay.js");
/// The blocked-load listener's source (`mcp_blocked.js`).
const BLOCKED_JS: &str = include_str!("mcp_blocked.js");

/// The longest text of a blocked-load report kept, in bytes, should a report ever pass the
/// script's own cut (2000 UTF-16 units, at most 6000 bytes).
const MAX_BLOCKED_TEXT: usize = 6000;

/// What the relay script says of a message it dropped.
#[derive(Deserialize)]
struct Dropped {
    reason: String,
    #[serde(default)]
    len: usize,
}

/// What the blocked-load listener says of a violation.
#[derive(Deserialize)]
struct Blocked {
    directive: String,
    blocked: String,
}

/// Sets up the relay of `view`, before its first load: the relay script in the top frame's
/// relay world, the blocked-load listener in every frame's own world, each world's handlers
/// registered in it alone, and what they receive pushed to `queue` (a message longer than
/// `max_bytes` is refused here too).
pub(super) fn install(
    view: &webkit2gtk::WebView,
    max_bytes: usize,
    queue: &Rc<EventQueue>,
) -> Result<(), ShellError> {
    let manager = view.user_content_manager().ok_or_else(|| {
        ShellError::Platform("the MCP App view has no user content manager".to_owned())
    })?;
    for (name, world) in [
        (MESSAGE, RELAY_WORLD),
        (DROPPED, RELAY_WORLD),
        (BLOCKED, BLOCKED_WORLD),
    ] {
        if !manager.register_script_message_handler_in_world(name, world) {
            return Err(ShellError::Platform(format!(
                "cannot register the MCP relay's handler {name} in its world"
            )));
        }
    }
    manager.add_script(&UserScript::for_world(
        &relay_script(max_bytes),
        UserContentInjectedFrames::TopFrame,
        UserScriptInjectionTime::Start,
        RELAY_WORLD,
        &[],
        &[],
    ));
    manager.add_script(&UserScript::for_world(
        BLOCKED_JS,
        UserContentInjectedFrames::AllFrames,
        UserScriptInjectionTime::Start,
        BLOCKED_WORLD,
        &[],
        &[],
    ));

    let q = Rc::downgrade(queue);
    manager.connect_script_message_received(Some(MESSAGE), move |_, result| {
        let Some(text) = result.js_value().map(|v| v.to_str().to_string()) else {
            return;
        };
        push(&q, message_event(text, max_bytes));
    });
    let q = Rc::downgrade(queue);
    manager.connect_script_message_received(Some(DROPPED), move |_, result| {
        let report = json_of(result).and_then(|j| serde_json::from_str::<Dropped>(&j).ok());
        let drop = match report {
            Some(Dropped { reason, len }) => match reason.as_str() {
                "wrong_source" => McpDrop::WrongSource,
                "too_large" => McpDrop::TooLarge {
                    len,
                    max: max_bytes,
                },
                _ => McpDrop::NotJsonRpc,
            },
            None => McpDrop::NotJsonRpc,
        };
        tracing::debug!(?drop, "MCP view message dropped by the relay (R-MCP-7)");
        push(&q, ViewEvent::McpDropped(drop));
    });
    let q = Rc::downgrade(queue);
    manager.connect_script_message_received(Some(BLOCKED), move |_, result| {
        blocked(&q, json_of(result));
    });
    Ok(())
}

/// The relay's source with its frame id and bound in place.
fn relay_script(max_bytes: usize) -> String {
    RELAY_JS
        .replacen("@@LINEUP_MCP_FRAME_ID@@", MCP_VIEW_FRAME_ID, 1)
        .replacen("@@LINEUP_MCP_MAX_BYTES@@", &max_bytes.to_string(), 1)
}

/// The event for a message the relay passed: refused again here when it is over the bound.
fn message_event(text: String, max_bytes: usize) -> ViewEvent {
    if text.len() > max_bytes {
        ViewEvent::McpDropped(McpDrop::TooLarge {
            len: text.len(),
            max: max_bytes,
        })
    } else {
        ViewEvent::McpMessage(text)
    }
}

/// Pushes a blocked-load report, its texts cut to [`MAX_BLOCKED_TEXT`].
fn blocked(queue: &Weak<EventQueue>, json: Option<String>) {
    let Some(Blocked { directive, blocked }) =
        json.and_then(|j| serde_json::from_str::<Blocked>(&j).ok())
    else {
        return;
    };
    let cut = |mut text: String| {
        if text.len() > MAX_BLOCKED_TEXT {
            let mut end = MAX_BLOCKED_TEXT;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.truncate(end);
        }
        text
    };
    tracing::debug!(%directive, "MCP view load blocked (R-MCP-10)");
    push(
        queue,
        ViewEvent::McpBlocked {
            directive: cut(directive),
            blocked: cut(blocked),
        },
    );
}

/// The JSON text of what a script posted.
fn json_of(result: &webkit2gtk::JavascriptResult) -> Option<String> {
    result
        .js_value()
        .and_then(|value| value.to_json(0))
        .map(|json| json.to_string())
}

/// Unregisters the relay's handlers, when the view goes.
pub(super) fn release(manager: &webkit2gtk::UserContentManager) {
    manager.unregister_script_message_handler_in_world(MESSAGE, RELAY_WORLD);
    manager.unregister_script_message_handler_in_world(DROPPED, RELAY_WORLD);
    manager.unregister_script_message_handler_in_world(BLOCKED, BLOCKED_WORLD);
}

/// Posts `json`, one JSON object as text, to the view's frame from the relay world:
/// `postMessage(JSON.parse(json), "*")` on the frame's window, so that in the view
/// `event.source === window.parent` (R-MCP-7). The text travels as the function's argument, a
/// string value, never lexed as script. Messages go in the order they are posted.
pub(super) fn post(view: &webkit2gtk::WebView, json: &str) {
    let body = format!(
        "var frame = document.getElementById({id});\
         if (!frame || !frame.contentWindow) {{ return false; }}\
         frame.contentWindow.postMessage(JSON.parse(json), '*');\
         return true;",
        id = serde_json::Value::from(MCP_VIEW_FRAME_ID),
    );
    let arguments = glib::VariantDict::new(None);
    arguments.insert_value("json", &json.to_variant());
    let arguments = arguments.end();
    view.call_async_javascript_function(
        &body,
        Some(&arguments),
        Some(RELAY_WORLD),
        None,
        None::<&gtk::gio::Cancellable>,
        |result| match result {
            Ok(value) if value.to_boolean() => {}
            Ok(_) => tracing::warn!("no MCP view frame to post to yet; the message is lost"),
            Err(e) => tracing::warn!("posting to the MCP view failed: {e}"),
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The relay script has every placeholder filled, each in its code (a placeholder left in,
    /// or filled in a comment instead, is a syntax error that silences the relay).
    #[test]
    fn r_mcp_7_relay_script_placeholders_filled_in_its_code() {
        let script = relay_script(4_194_304);
        assert!(!script.contains("@@"), "a placeholder is left");
        assert!(script.contains("var FRAME_ID = 'lineup-mcp-view';"));
        assert!(script.contains("var MAX_BYTES = 4194304;"));
        assert!(!BLOCKED_JS.contains("@@"));
    }

    /// A message over the bound is refused on the host's side too.
    #[test]
    fn r_mcp_7_host_side_bound() {
        assert_eq!(
            message_event("{}".to_owned(), 2),
            ViewEvent::McpMessage("{}".to_owned())
        );
        assert_eq!(
            message_event("{ }".to_owned(), 2),
            ViewEvent::McpDropped(McpDrop::TooLarge { len: 3, max: 2 })
        );
    }
}
