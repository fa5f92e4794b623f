//! The consent prompt's window as the platform layer sees it: how it behaves
//! ([`PromptOptions`], its guard delay), how a shown prompt ended ([`PromptOutcome`]), and what
//! it showed, read back for tests ([`PromptSnapshot`]). The queue that shows requests one at a
//! time is [`PromptQueue`](crate::PromptQueue).

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use lineup_host_core::{ConsentAnswer, Fingerprint};
use serde::Deserialize;
use serde_json::Value;

/// The shortest guard delay [`PromptOptions::with_guard_delay`] accepts.
pub const MIN_GUARD_DELAY: Duration = Duration::from_millis(250);

/// How the built-in prompt behaves.
///
/// | setting | default |
/// | --- | --- |
/// | guard delay: input (clicks, touches and keys) taken only this long after the prompt was last mapped, focused, uncovered or covered, or its content shown | 1 s, never below [`MIN_GUARD_DELAY`] |
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromptOptions {
    guard_delay: Duration,
}

impl Default for PromptOptions {
    fn default() -> Self {
        Self {
            guard_delay: Duration::from_secs(1),
        }
    }
}

impl PromptOptions {
    /// The defaults above.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the guard delay; anything below [`MIN_GUARD_DELAY`] becomes [`MIN_GUARD_DELAY`].
    pub fn with_guard_delay(mut self, delay: Duration) -> Self {
        self.guard_delay = delay.max(MIN_GUARD_DELAY);
        self
    }

    /// The guard delay.
    pub fn guard_delay(&self) -> Duration {
        self.guard_delay
    }
}

/// How a shown prompt ended, as the platform reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PromptOutcome {
    /// The user answered (or dismissed) it.
    Answered(ConsentAnswer),
    /// Its creator withdrew the request.
    Withdrawn,
}

/// What a showing prompt displays, read back from its page ([`PromptQueue::snapshot`](crate::PromptQueue::snapshot)). `Debug`
/// shows each element's text and each argument, the agent's reason and arguments among them, as
/// [`Fingerprint`]s (logs reach journald).
#[derive(Clone, Default, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct PromptSnapshot {
    /// The text content of each element with an id, by id (`agent`, `headline`, `capability`,
    /// `version`, `risk`, `host`, `reason`, `more`, and the buttons).
    pub text: BTreeMap<String, String>,
    /// The listed arguments as (key, value) text.
    pub arguments: Vec<(String, String)>,
    /// The lowercase tag name of every element in the page's body, in document order.
    pub elements: Vec<String>,
    /// The id of the focused element (empty when it has none).
    pub focused: String,
    /// Each button's id and its box in CSS pixels from the page's top left: x, y, width, height.
    pub buttons: Vec<(String, [f64; 4])>,
    /// How many requests other than for the document itself the page made (all refused).
    pub other_requests: usize,
    /// Each element with an id, by id: its box in CSS pixels (x, y, width, height).
    #[serde(default)]
    pub boxes: BTreeMap<String, [f64; 4]>,
    /// The fold: the bottom of the visible part of the prompt's content, in CSS pixels from
    /// the page's top (the top of the button row).
    #[serde(default)]
    pub fold: f64,
    /// Whether the reason's box holds more than it shows (it scrolls).
    #[serde(default)]
    pub reason_scrolls: bool,
}

impl fmt::Debug for PromptSnapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text: BTreeMap<&str, Fingerprint> = self
            .text
            .iter()
            .map(|(id, text)| (id.as_str(), Fingerprint::of(text)))
            .collect();
        let arguments: Vec<(Fingerprint, Fingerprint)> = self
            .arguments
            .iter()
            .map(|(key, value)| (Fingerprint::of(key), Fingerprint::of(value)))
            .collect();
        f.debug_struct("PromptSnapshot")
            .field("text", &text)
            .field("arguments", &arguments)
            .field("elements", &self.elements)
            .field("focused", &self.focused)
            .field("buttons", &self.buttons)
            .field("other_requests", &self.other_requests)
            .field("boxes", &self.boxes)
            .field("fold", &self.fold)
            .field("reason_scrolls", &self.reason_scrolls)
            .finish()
    }
}

/// The host's read-back script: the page's state as JSON text.
pub(crate) const SNAPSHOT_JS: &str = r#"(function () {
  var text = {};
  document.querySelectorAll('[id]').forEach(function (e) {
    if (e.id !== 'data') { text[e.id] = e.textContent; }
  });
  var dts = document.querySelectorAll('#arguments dt');
  var args = [];
  dts.forEach(function (dt) { args.push([dt.textContent, dt.nextElementSibling ? dt.nextElementSibling.textContent : '']); });
  var elements = [];
  document.body.querySelectorAll('*').forEach(function (e) { elements.push(e.localName); });
  var buttons = [];
  document.querySelectorAll('button').forEach(function (b) {
    var r = b.getBoundingClientRect();
    buttons.push([b.id, [r.left, r.top, r.width, r.height]]);
  });
  var focused = document.activeElement && document.activeElement.id ? document.activeElement.id : '';
  var boxes = {};
  document.querySelectorAll('[id]').forEach(function (e) {
    if (e.id !== 'data') { var r = e.getBoundingClientRect(); boxes[e.id] = [r.left, r.top, r.width, r.height]; }
  });
  var main = document.querySelector('main');
  var fold = main ? Math.min(main.getBoundingClientRect().bottom, window.innerHeight) : 0;
  var reason = document.getElementById('reason');
  var scrolls = !!reason && reason.scrollHeight > reason.clientHeight;
  return JSON.stringify({ text: text, arguments: args, elements: elements, focused: focused, buttons: buttons, other_requests: 0, boxes: boxes, fold: fold, reason_scrolls: scrolls });
})()"#;

/// Parses what [`SNAPSHOT_JS`] returned, adding the request count the host kept.
pub(crate) fn parse_snapshot(json: &str, other_requests: usize) -> Option<PromptSnapshot> {
    let value: Value = serde_json::from_str(json).ok()?;
    let mut snapshot: PromptSnapshot = serde_json::from_value(value).ok()?;
    snapshot.other_requests = other_requests;
    Some(snapshot)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guard_delay_is_never_below_the_minimum() {
        assert_eq!(
            PromptOptions::default().guard_delay(),
            Duration::from_secs(1)
        );
        let short = PromptOptions::new().with_guard_delay(Duration::from_millis(10));
        assert_eq!(short.guard_delay(), MIN_GUARD_DELAY);
        let long = PromptOptions::new().with_guard_delay(Duration::from_secs(3));
        assert_eq!(long.guard_delay(), Duration::from_secs(3));
    }

    #[test]
    fn snapshot_parses_and_counts_requests() {
        let json = r#"{"text":{"reason":"r"},"arguments":[["k","v"]],"elements":["main"],"focused":"deny","buttons":[["deny",[1,2,3,4]]],"other_requests":0}"#;
        let snapshot = parse_snapshot(json, 2).unwrap_or_else(|| panic!("parses"));
        assert_eq!(snapshot.focused, "deny");
        assert_eq!(snapshot.other_requests, 2);
        assert_eq!(snapshot.buttons[0].1, [1.0, 2.0, 3.0, 4.0]);
        assert!(parse_snapshot("not json", 0).is_none());
    }
}
