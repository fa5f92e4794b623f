//! The standard components' window as the platform layer sees it (R-STD-8, R-STD-9, §4 of
//! standard-components.md): what a component view is given ([`ComponentContent`], the guard
//! delay in [`ComponentOptions`]), what it reports ([`ComponentAction`]), the one host-written
//! document for every component id (`components/components.{html,css,js}`), and the strict
//! parse of that document's messages. The window itself is
//! [`ComponentWindow`](crate::ComponentWindow).

use std::time::Duration;

use lineup_host_core::{
    host_word, host_words, ComponentKind, InputKind, JsonObject, LanguageTag, SafeMarkdown,
    ShownComponent,
};
use lineup_surface_runtime::{HIGH_CONTRAST_THEME_CSS, THEME_CSS};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::error::ShellError;
use crate::trusted::{inert_json, TrustedDocument};

/// The host-owned marker every component window's title ends with, in English (the host's
/// words table has it in every language); the part before it is the component's id, never
/// agent text (R-SEC-5).
pub const COMPONENT_TITLE_MARKER: &str = " — LineUp question";

/// The title of the window a conversation's components stack in (R-STD-13), in English: the
/// host's own words, ending with [`COMPONENT_TITLE_MARKER`]; [`component_board_title`] gives it
/// in a language.
pub const COMPONENT_STACK_TITLE: &str = "questions — LineUp question";

/// The title of a conversation's component window in `language` (R-STD-9, R-STD-13).
///
/// ```
/// use lineup_host_core::LanguageTag;
/// use lineup_webview_shell::{component_board_title, COMPONENT_STACK_TITLE};
/// assert_eq!(component_board_title(&LanguageTag::english()), COMPONENT_STACK_TITLE);
/// let zh = LanguageTag::try_from("zh-CN").unwrap();
/// assert_eq!(component_board_title(&zh), "问题 — LineUp 问题");
/// ```
pub fn component_board_title(language: &LanguageTag) -> String {
    format!(
        "{}{}",
        host_word(language, "questions").unwrap_or_default(),
        host_word(language, "question_marker").unwrap_or(COMPONENT_TITLE_MARKER)
    )
}

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
/// The instance's builder, then the board that uses it: one script element.
const JS: &str = concat!(
    include_str!("components/instance.js"),
    "\n",
    include_str!("components/components.js")
);

/// The title of the window of a `kind` component in `language`: its id, then the host's
/// marker ([`COMPONENT_TITLE_MARKER`] in English).
///
/// ```
/// use lineup_host_core::{ComponentKind, LanguageTag};
/// use lineup_webview_shell::component_window_title;
/// let en = LanguageTag::english();
/// assert_eq!(component_window_title(ComponentKind::Confirm, &en), "confirm — LineUp question");
/// ```
pub fn component_window_title(kind: ComponentKind, language: &LanguageTag) -> String {
    let marker = host_word(language, "question_marker").unwrap_or(COMPONENT_TITLE_MARKER);
    format!("{kind}{marker}")
}

/// How a component window behaves.
///
/// | setting | default |
/// | --- | --- |
/// | guard delay: input taken only this long after the window was last mapped, focused or shown | 500 ms, never below [`MIN_COMPONENT_GUARD_DELAY`]; a danger confirm waits at least [`DANGER_GUARD_DELAY`] |
/// | high contrast: the high-contrast values of the host's custom properties (R-UI-11, R-STD-9) | off |
/// | language of the host's own words (default labels; English or Simplified Chinese) | the environment's |
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ComponentOptions {
    guard_delay: Duration,
    high_contrast: bool,
    language: Option<LanguageTag>,
}

impl Default for ComponentOptions {
    fn default() -> Self {
        Self {
            guard_delay: Duration::from_millis(500),
            high_contrast: false,
            language: None,
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

    /// The language of the words the host draws itself (default labels, the words of
    /// severities and states: [`host_words`]); without one, the environment's
    /// ([`language_from_environment`](crate::language_from_environment)).
    pub fn with_language(mut self, language: LanguageTag) -> Self {
        self.language = Some(language);
        self
    }

    /// [`ComponentOptions::with_language`], unless a language was set already.
    pub fn with_default_language(self, language: LanguageTag) -> Self {
        match self.language {
            Some(_) => self,
            None => self.with_language(language),
        }
    }

    /// The language of the host's own words in the view.
    pub fn language(&self) -> LanguageTag {
        self.language
            .clone()
            .unwrap_or_else(crate::language_from_environment)
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
}

/// What one instance's box of a board said, parsed strictly; anything else is dropped.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum PageMessage {
    /// The instance's box was built and laid out.
    Rendered {},
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

/// Where one instance's box is drawn in its board: slot, x, y, width and height in CSS pixels
/// of the view (its logical pixels).
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub(crate) struct LayoutBox(String, f64, f64, f64, f64);

impl LayoutBox {
    /// The instance's slot.
    pub(crate) fn slot(&self) -> &str {
        &self.0
    }

    /// Whether the point (`x`, `y`) of the view is inside the box.
    pub(crate) fn contains(&self, x: f64, y: f64) -> bool {
        x >= self.1 && y >= self.2 && x < self.1 + self.3 && y < self.2 + self.4
    }

    /// Whether the box is drawn elsewhere than `other`, or at another size: the instance's
    /// controls moved under the pointer.
    pub(crate) fn moved_from(&self, other: &LayoutBox) -> bool {
        [
            (self.1, other.1),
            (self.2, other.2),
            (self.3, other.3),
            (self.4, other.4),
        ]
        .iter()
        .any(|(a, b)| (a - b).abs() >= 0.5)
    }
}

/// What the board itself said.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum BoardFrame {
    /// The document's script ran: the board takes instances.
    Ready {},
    /// Where each box is drawn now, and the board's whole height, in CSS pixels.
    Layout {
        /// The height of all boxes together.
        height: f64,
        /// Each box, in order.
        boxes: Vec<LayoutBox>,
    },
    /// The box holding the keyboard focus changed (`None`: none).
    Focus {
        /// Its slot.
        focused: Option<String>,
    },
}

/// A message of a board document.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum BoardMessage {
    /// The board's own.
    Board(BoardFrame),
    /// One instance's, named by its slot.
    Instance {
        /// The slot its message named.
        slot: String,
        /// What it said.
        message: PageMessage,
    },
}

/// `text` as a [`BoardMessage`], or `None` when it is anything else.
pub(crate) fn parse_message(text: &str) -> Option<BoardMessage> {
    if text.len() > MAX_COMPONENT_MESSAGE_BYTES {
        return None;
    }
    let Value::Object(mut object) = serde_json::from_str::<Value>(text).ok()? else {
        return None;
    };
    match object.remove("slot") {
        Some(Value::String(slot)) => {
            let message = serde_json::from_value(Value::Object(object)).ok()?;
            Some(BoardMessage::Instance { slot, message })
        }
        Some(_) => None,
        None => serde_json::from_value(Value::Object(object))
            .ok()
            .map(BoardMessage::Board),
    }
}

/// The one host-written board document, with no instance yet, titled `title` (the host's own
/// words), `width` logical pixels wide, in the host's theme: the R-UI-11 custom properties (regular or high contrast, as
/// `options` says) before the components' own sheet.
pub(crate) fn board_document(
    title: &str,
    width: u32,
    options: &ComponentOptions,
    token: Option<&str>,
) -> Result<TrustedDocument, ShellError> {
    let data = json!({
        "title": title,
        "width": width,
        "words": host_words(&options.language()),
        "lang": options.language().as_str(),
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

/// `value` as one JavaScript string literal holding its JSON, never code.
fn literal(value: &Value) -> String {
    inert_json(&Value::String(value.to_string()))
}

/// `slot` as a JavaScript string literal.
fn slot_literal(slot: &str) -> String {
    inert_json(&Value::String(slot.to_owned()))
}

/// The host's script that adds `content` to its board as box `slot`, at the bottom.
pub(crate) fn add_script(slot: &str, content: &ComponentContent) -> String {
    let data = json!({
        "kind": content.kind.as_str(),
        "props": content.props,
        "state": content.state,
        "markdown": content.markdown,
        "locked": content.locked,
        "draft": content.draft,
    });
    format!(
        "window.lineupBoard.add({}, {})",
        slot_literal(slot),
        literal(&data)
    )
}

/// The host's script that takes box `slot` out of its board.
pub(crate) fn remove_script(slot: &str) -> String {
    format!("window.lineupBoard.remove({})", slot_literal(slot))
}

/// The host's script that makes the board `width` logical pixels wide.
pub(crate) fn width_script(width: u32) -> String {
    format!("window.lineupBoard.width({width})")
}

/// The host's script that locks box `slot` after an answer.
pub(crate) fn lock_script(slot: &str) -> String {
    format!("window.lineupBoard.lock({})", slot_literal(slot))
}

/// Whether Enter may reach the page of a `kind` component: in the one-line fields of an
/// `input` or a `form` its release submits, and in a multi-line field it breaks the line.
/// Never on `confirm` or `choice`, where nothing is typed (R-STD-8).
pub(crate) fn takes_enter(kind: ComponentKind) -> bool {
    matches!(kind, ComponentKind::Input | ComponentKind::Form)
}

/// The host's script that shows a new `state` (and its Markdown) in box `slot`; the data goes
/// in as one JSON string literal that the page parses, never as code.
pub(crate) fn update_script(
    slot: &str,
    state: &JsonObject,
    markdown: Option<&SafeMarkdown>,
    reopened: bool,
) -> String {
    let data = json!({"state": state.as_map(), "markdown": markdown, "reopened": reopened});
    format!(
        "window.lineupBoard.update({}, {})",
        slot_literal(slot),
        literal(&data)
    )
}

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
    fn board_messages_are_parsed_strictly() {
        let instance = |text: &str| match parse_message(text) {
            Some(BoardMessage::Instance { slot, message }) => Some((slot, message)),
            _ => None,
        };
        assert_eq!(
            instance(r#"{"type":"rendered","slot":"b1"}"#),
            Some(("b1".into(), PageMessage::Rendered {}))
        );
        assert_eq!(
            instance(r#"{"type":"submit","answer":true,"slot":"b2"}"#),
            Some((
                "b2".into(),
                PageMessage::Submit {
                    answer: Value::Bool(true)
                }
            ))
        );
        assert_eq!(
            instance(r#"{"type":"cancel","slot":"b1"}"#),
            Some(("b1".into(), PageMessage::Cancel {}))
        );
        assert_eq!(
            instance(r#"{"type":"link","url":"https://example.com/","slot":"b1"}"#),
            Some((
                "b1".into(),
                PageMessage::Link {
                    url: "https://example.com/".into()
                }
            ))
        );
        assert_eq!(
            parse_message(r#"{"type":"ready"}"#),
            Some(BoardMessage::Board(BoardFrame::Ready {}))
        );
        assert_eq!(
            parse_message(r#"{"type":"focus","focused":null}"#),
            Some(BoardMessage::Board(BoardFrame::Focus { focused: None }))
        );
        let Some(BoardMessage::Board(BoardFrame::Layout { height, boxes })) =
            parse_message(r#"{"type":"layout","height":300,"boxes":[["b1",0,0,480,120]]}"#)
        else {
            panic!("a layout was not parsed");
        };
        assert_eq!(height, 300.0);
        assert!(boxes[0].contains(10.0, 119.0) && !boxes[0].contains(10.0, 120.0));
        assert_eq!(boxes[0].slot(), "b1");
        for bad in [
            "submit",
            r#"{"type":"submit","answer":true}"#,
            r#"{"type":"submit","slot":"b1"}"#,
            r#"{"type":"submit","answer":true,"slot":7}"#,
            r#"{"type":"cancel","via":"embedder","slot":"b1"}"#,
            r#"{"type":"close","slot":"b1"}"#,
            r#"{"type":"link","slot":"b1"}"#,
            r#"{"type":"link","url":7,"slot":"b1"}"#,
            r#"{"type":"submit","answer":true,"input":"pointer","slot":"b1"}"#,
            r#"{"type":"layout","height":1}"#,
            r#"{"type":"layout","height":1,"boxes":[["b1",0,0]]}"#,
            r#"{"type":"ready","slot":null}"#,
            "[]",
            "",
        ] {
            assert_eq!(parse_message(bad), None, "{bad}");
        }
        let long = format!(
            r#"{{"type":"submit","answer":"{}","slot":"b1"}}"#,
            "a".repeat(MAX_COMPONENT_MESSAGE_BYTES)
        );
        assert_eq!(parse_message(&long), None);
    }

    #[test]
    fn update_data_is_a_string_literal_not_code() {
        let state = JsonObject::try_from(json!({"error": "</script>\u{2028}'); alert(1); ('"}))
            .unwrap_or_default();
        let script = update_script("b1", &state, None, true);
        let literal = script
            .strip_prefix("window.lineupBoard.update(\"b1\", ")
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
