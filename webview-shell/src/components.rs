//! The standard components' window as the platform layer sees it (R-STD-8, R-STD-9, §4 of
//! standard-components.md): what a component view is given ([`ComponentContent`], the guard
//! delay in [`ComponentOptions`]), what it reports ([`ComponentAction`]), the one host-written
//! document for every component id (`components/components.{html,css,js}`), and the strict
//! parse of that document's messages. The window itself is
//! [`ComponentWindow`](crate::ComponentWindow).

use std::time::Duration;

use lineup_host_core::{ComponentKind, InputKind, JsonObject, SafeMarkdown, ShownComponent};
use lineup_surface_runtime::{HIGH_CONTRAST_THEME_CSS, THEME_CSS};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::error::ShellError;
use crate::trusted::{inert_json, TrustedDocument};

/// The host-owned marker every component window's title ends with; the part before it is the
/// component's id, never agent text (R-SEC-5).
pub const COMPONENT_TITLE_MARKER: &str = " — LineUp question";

/// The title of the window a conversation's components stack in (R-STD-13): the host's own
/// words, ending with [`COMPONENT_TITLE_MARKER`].
pub const COMPONENT_STACK_TITLE: &str = "questions — LineUp question";

/// The shortest guard delay [`ComponentOptions::with_guard_delay`] accepts (R-STD-8).
pub const MIN_COMPONENT_GUARD_DELAY: Duration = Duration::from_millis(250);

/// The guard delay of a `tone: "danger"` confirm, at least (R-STD-8).
pub const DANGER_GUARD_DELAY: Duration = Duration::from_secs(1);

/// How long after a real input event its answer may arrive and still use it (R-STD-8 (a)).
pub(crate) const CREDIT_LIFETIME: Duration = Duration::from_secs(1);

/// The longest message the host takes from a component document.
pub(crate) const MAX_COMPONENT_MESSAGE_BYTES: usize = 20 * 1024;

const HTML: &str = include_str!("components/components.html");
const CSS: &str = include_str!("components/components.css");
const JS: &str = include_str!("components/components.js");

/// The title of the window of a `kind` component: its id, then [`COMPONENT_TITLE_MARKER`].
///
/// ```
/// use lineup_host_core::ComponentKind;
/// use lineup_webview_shell::component_window_title;
/// assert_eq!(component_window_title(ComponentKind::Confirm), "confirm — LineUp question");
/// ```
pub fn component_window_title(kind: ComponentKind) -> String {
    format!("{kind}{COMPONENT_TITLE_MARKER}")
}

/// How a component window behaves.
///
/// | setting | default |
/// | --- | --- |
/// | guard delay: input taken only this long after the window was last mapped, focused or shown | 500 ms, never below [`MIN_COMPONENT_GUARD_DELAY`]; a danger confirm waits at least [`DANGER_GUARD_DELAY`] |
/// | high contrast: the high-contrast values of the host's custom properties (R-UI-11, R-STD-9) | off |
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ComponentOptions {
    guard_delay: Duration,
    high_contrast: bool,
}

impl Default for ComponentOptions {
    fn default() -> Self {
        Self {
            guard_delay: Duration::from_millis(500),
            high_contrast: false,
        }
    }
}

impl ComponentOptions {
    /// The defaults above.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the guard delay; anything below [`MIN_COMPONENT_GUARD_DELAY`] becomes it.
    pub fn with_guard_delay(mut self, delay: Duration) -> Self {
        self.guard_delay = delay.max(MIN_COMPONENT_GUARD_DELAY);
        self
    }

    /// Whether the window gets the high-contrast values of the `--lineup-*` custom properties
    /// ([`HIGH_CONTRAST_THEME_CSS`](lineup_surface_runtime::HIGH_CONTRAST_THEME_CSS)) and
    /// `data-lineup-contrast="more"` on its root element; light or dark follows
    /// `prefers-color-scheme` either way (R-UI-11, R-STD-9).
    pub fn with_high_contrast(mut self, high_contrast: bool) -> Self {
        self.high_contrast = high_contrast;
        self
    }

    /// Whether [`ComponentOptions::with_high_contrast`] is on.
    pub fn high_contrast(&self) -> bool {
        self.high_contrast
    }

    /// The guard delay for `content`: [`DANGER_GUARD_DELAY`] at least for a danger confirm.
    pub fn guard_delay_for(&self, content: &ComponentContent) -> Duration {
        let danger = content.kind == ComponentKind::Confirm
            && content.props.get("tone").and_then(Value::as_str) == Some("danger");
        if danger {
            self.guard_delay.max(DANGER_GUARD_DELAY)
        } else {
            self.guard_delay
        }
    }
}

/// What a component view shows: the kernel's validated, cleaned component.
#[derive(Clone, Debug, PartialEq)]
pub struct ComponentContent {
    /// Which component.
    pub kind: ComponentKind,
    /// Its props, cleaned (an object).
    pub props: serde_json::Map<String, Value>,
    /// Its state, cleaned (an object).
    pub state: serde_json::Map<String, Value>,
    /// Its Markdown sink as the closed tree, when it has one.
    pub markdown: Option<SafeMarkdown>,
    /// The user's draft to put back into the controls (a restored instance's, R-STD-15).
    pub draft: Option<Value>,
    /// Whether it shows locked: its round was answered (R-STD-7).
    pub locked: bool,
}

impl From<&ShownComponent> for ComponentContent {
    fn from(shown: &ShownComponent) -> Self {
        Self {
            kind: shown.kind,
            props: shown.props.as_map().clone(),
            state: shown.state.as_map().clone(),
            markdown: shown.markdown.clone(),
            draft: shown.draft.clone(),
            locked: shown.locked,
        }
    }
}

/// What the user did in a component window, after the window's input gate (R-STD-8): a real
/// input event in this window after its guard delay, consumed by this one answer.
#[derive(Clone, Debug, PartialEq)]
pub enum ComponentAction {
    /// The user answered `answer` (not yet checked against the props: the kernel does that).
    Submit {
        /// The answer the page built.
        answer: Value,
        /// The input event that carried it.
        input: InputKind,
    },
    /// The user cancelled (the cancel button, or Escape).
    Cancel {
        /// The input event that carried it.
        input: InputKind,
    },
    /// The user activated the link to `url` in the component's Markdown (R-STD-11): the host
    /// follows it only when it is a link of the kernel's own tree, and only after its link
    /// confirm. Not an answer: the round stays open.
    Link {
        /// The link's URL, as the page holds it from the kernel's tree.
        url: String,
        /// The input event that carried it.
        input: InputKind,
    },
    /// The user's unsent draft changed (no answer: no input event is needed, R-STD-15).
    Draft(Value),
    /// The user closed the window.
    Close,
    /// The view failed: its web process ended, or its document never rendered.
    Failed,
    /// The content of a view in an embedder's window ([`ComponentWindow::in_parent`]) is now
    /// `height` logical pixels tall: lay it out again. Not an answer; no other frame reports it.
    ///
    /// [`ComponentWindow::in_parent`]: crate::ComponentWindow::in_parent
    Resized {
        /// The content's height.
        height: u32,
    },
}

/// A message of the component document, parsed strictly; anything else is dropped.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum PageMessage {
    /// The document built its DOM; `height` is its content's, in CSS pixels.
    Rendered {
        /// The content's height.
        #[serde(default)]
        height: Option<f64>,
    },
    /// The content's height changed (an update, a reopened round's error line).
    Resize {
        /// The new height, in CSS pixels.
        height: f64,
    },
    /// A submit button (or an immediate choice) was used.
    Submit {
        /// The answer the page built.
        answer: Value,
    },
    /// The cancel button was used.
    Cancel {},
    /// A dismissible alert's dismiss button was used: the user closes it.
    Dismiss {},
    /// A link in the component's Markdown was used.
    Link {
        /// Its URL, as the kernel's tree gave it.
        url: String,
    },
    /// The user's unsent draft, as the page reads its controls.
    Draft {
        /// The draft, in the shape of the component's answer.
        draft: Value,
    },
}

/// `text` as a [`PageMessage`], or `None` when it is anything else.
pub(crate) fn parse_message(text: &str) -> Option<PageMessage> {
    if text.len() > MAX_COMPONENT_MESSAGE_BYTES {
        return None;
    }
    serde_json::from_str(text).ok()
}

/// The one host-written document, with `content` as its inert data, in the host's theme: the
/// R-UI-11 custom properties (regular or high contrast, as `options` says) before the
/// components' own sheet.
pub(crate) fn component_document(
    content: &ComponentContent,
    options: &ComponentOptions,
    token: Option<&str>,
) -> Result<TrustedDocument, ShellError> {
    let data = json!({
        "kind": content.kind.as_str(),
        "title": component_window_title(content.kind),
        "props": content.props,
        "state": content.state,
        "markdown": content.markdown,
        "locked": content.locked,
        "draft": content.draft,
        "contrast": if options.high_contrast { "more" } else { "normal" },
        "token": token,
    });
    let theme = if options.high_contrast {
        HIGH_CONTRAST_THEME_CSS
    } else {
        THEME_CSS
    };
    TrustedDocument::new(HTML, &format!("{theme}\n{CSS}"), JS, &data)
}

/// Whether Enter may reach the page of a `kind` component: in the one-line fields of an
/// `input` or a `form` its release submits, and in a multi-line field it breaks the line.
/// Never on `confirm` or `choice`, where nothing is typed (R-STD-8).
pub(crate) fn takes_enter(kind: ComponentKind) -> bool {
    matches!(kind, ComponentKind::Input | ComponentKind::Form)
}

/// The host's script that shows a new `state` (and its Markdown) in the page; the data goes
/// in as one JSON string literal that the page parses, never as code.
pub(crate) fn update_script(
    state: &JsonObject,
    markdown: Option<&SafeMarkdown>,
    reopened: bool,
) -> String {
    let data = json!({"state": state.as_map(), "markdown": markdown, "reopened": reopened});
    let literal = inert_json(&Value::String(data.to_string()));
    format!("window.lineupComponent.update({literal})")
}

/// The host's script that locks the page after an answer.
pub(crate) const LOCK_SCRIPT: &str = "window.lineupComponent.lock()";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r_std_10_the_document_script_builds_no_markup_from_strings() {
        for forbidden in [
            "innerHTML",
            "outerHTML",
            "insertAdjacentHTML",
            "document.write",
            "eval",
            "Function(",
            "setAttribute('on",
            "createContextualFragment",
            "DOMParser",
        ] {
            assert!(!JS.contains(forbidden), "{forbidden} in components.js");
        }
        assert!(
            !HTML.contains("<script"),
            "the markup has no script of its own"
        );
        assert!(!HTML.contains(" on"), "no handler attributes in the markup");
    }

    #[test]
    fn page_messages_are_parsed_strictly() {
        assert_eq!(
            parse_message(r#"{"type":"rendered"}"#),
            Some(PageMessage::Rendered { height: None })
        );
        assert_eq!(
            parse_message(r#"{"type":"rendered","height":120.5}"#),
            Some(PageMessage::Rendered {
                height: Some(120.5)
            })
        );
        assert_eq!(
            parse_message(r#"{"type":"resize","height":88}"#),
            Some(PageMessage::Resize { height: 88.0 })
        );
        assert_eq!(
            parse_message(r#"{"type":"submit","answer":true}"#),
            Some(PageMessage::Submit {
                answer: Value::Bool(true)
            })
        );
        assert_eq!(
            parse_message(r#"{"type":"cancel"}"#),
            Some(PageMessage::Cancel {})
        );
        assert_eq!(
            parse_message(r#"{"type":"dismiss"}"#),
            Some(PageMessage::Dismiss {})
        );
        assert_eq!(
            parse_message(r#"{"type":"link","url":"https://example.com/"}"#),
            Some(PageMessage::Link {
                url: "https://example.com/".into()
            })
        );
        for bad in [
            "submit",
            r#"{"type":"submit"}"#,
            r#"{"type":"cancel","via":"embedder"}"#,
            r#"{"type":"close"}"#,
            r#"{"type":"link"}"#,
            r#"{"type":"link","url":7}"#,
            r#"{"type":"link","url":"https://example.com/","input":"pointer"}"#,
            r#"{"type":"submit","answer":true,"input":"pointer"}"#,
            "[]",
            "",
        ] {
            assert_eq!(parse_message(bad), None, "{bad}");
        }
        let long = format!(
            r#"{{"type":"submit","answer":"{}"}}"#,
            "a".repeat(MAX_COMPONENT_MESSAGE_BYTES)
        );
        assert_eq!(parse_message(&long), None);
    }

    #[test]
    fn update_data_is_a_string_literal_not_code() {
        let state = JsonObject::try_from(json!({"error": "</script>\u{2028}'); alert(1); ('"}))
            .unwrap_or_default();
        let script = update_script(&state, None, true);
        let literal = script
            .strip_prefix("window.lineupComponent.update(")
            .and_then(|s| s.strip_suffix(')'))
            .unwrap_or_default();
        let Ok(Value::String(inner)) = serde_json::from_str::<Value>(literal) else {
            panic!("not one string literal: {script}");
        };
        let data: Value = serde_json::from_str(&inner).unwrap_or_default();
        assert_eq!(data["state"]["error"], "</script>\u{2028}'); alert(1); ('");
        assert_eq!(data["reopened"], true);
        assert!(!script.contains('<') && !script.contains('\u{2028}'));
    }

    #[test]
    fn danger_confirms_wait_longer() {
        let mut content = ComponentContent {
            kind: ComponentKind::Confirm,
            props: serde_json::Map::new(),
            state: serde_json::Map::new(),
            markdown: None,
            draft: None,
            locked: false,
        };
        let options = ComponentOptions::new().with_guard_delay(Duration::from_millis(1));
        assert_eq!(options.guard_delay_for(&content), MIN_COMPONENT_GUARD_DELAY);
        content.props.insert("tone".into(), json!("danger"));
        assert_eq!(options.guard_delay_for(&content), DANGER_GUARD_DELAY);
    }
}
