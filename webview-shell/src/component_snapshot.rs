//! What a component window shows, read back from its page for tests and checks
//! ([`ComponentWindow::snapshot`](crate::ComponentWindow::snapshot)): every element with its
//! attributes, role and accessible name, the text, the focus, and the theme's computed colours
//! (R-STD-9, R-STD-12, §5 checks 1, 14 and 15 of standard-components.md).

use std::collections::BTreeMap;
use std::fmt;

use lineup_host_core::Fingerprint;
use serde::Deserialize;

/// One element of a component's page, in document order.
#[derive(Clone, Default, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct SnapshotElement {
    /// Its lowercase tag name.
    pub tag: String,
    /// Its attributes, by name, as the DOM holds them.
    pub attributes: BTreeMap<String, String>,
    /// Its explicit `role`, else the implicit one of the elements that have a role the checks
    /// use (`button`, `checkbox`, `radio`, `textbox`, `spinbutton`, `progressbar`, `group`,
    /// `heading`); empty otherwise.
    pub role: String,
    /// Its accessible name as the page computes it: `aria-label`, the text of the elements
    /// `aria-labelledby` names, its `<label>`s, a fieldset's legend, or a button's text.
    pub name: String,
}

/// What a component window shows, read back from its page. `Debug` shows each text as a
/// [`Fingerprint`] (logs reach journald).
#[derive(Clone, Default, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct ComponentSnapshot {
    /// The text of the page's body as laid out (`innerText`).
    pub text: String,
    /// Every element of the body, in document order.
    pub elements: Vec<SnapshotElement>,
    /// The id of the focused element (empty when none has the focus or it has no id).
    pub focused: String,
    /// The body's computed background colour, as CSS writes it (`rgb(r, g, b)`).
    pub background: String,
    /// The computed value of `--lineup-color-accent` on the root element.
    pub accent: String,
    /// Each element with an id, by id: its box in CSS pixels (x, y, width, height).
    pub boxes: BTreeMap<String, [f64; 4]>,
}

impl ComponentSnapshot {
    /// The elements whose role is `role`.
    pub fn with_role<'a>(&'a self, role: &'a str) -> impl Iterator<Item = &'a SnapshotElement> {
        self.elements.iter().filter(move |e| e.role == role)
    }
}

impl fmt::Debug for ComponentSnapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let elements: Vec<(&str, &str, Fingerprint)> = self
            .elements
            .iter()
            .map(|e| (e.tag.as_str(), e.role.as_str(), Fingerprint::of(&e.name)))
            .collect();
        f.debug_struct("ComponentSnapshot")
            .field("text", &Fingerprint::of(&self.text))
            .field("elements", &elements)
            .field("focused", &self.focused)
            .field("background", &self.background)
            .field("accent", &self.accent)
            .finish_non_exhaustive()
    }
}

/// The host's script that reads the instance in box `slot` of a component board back as a
/// [`ComponentSnapshot`]: its elements, with the slot's prefix taken off every id and id
/// reference, so that an instance reads the same in any board.
pub(crate) fn snapshot_script(slot: &str) -> String {
    let literal = serde_json::Value::String(slot.to_owned()).to_string();
    format!("({SNAPSHOT_FUNCTION})({literal})")
}

const SNAPSHOT_FUNCTION: &str = r#"function (slot) {
  var root = document.getElementById(slot);
  if (!root) { return null; }
  var prefix = slot + '-';
  var REFS = { id: 1, 'for': 1, name: 1, 'aria-labelledby': 1, 'aria-describedby': 1 };
  var strip = function (value) {
    return value.split(' ').map(function (v) {
      return v.indexOf(prefix) === 0 ? v.slice(prefix.length) : v;
    }).join(' ');
  };
  var IMPLICIT = { button: 'button', progress: 'progressbar', textarea: 'textbox',
    fieldset: 'group', h1: 'heading', h2: 'heading', h3: 'heading', h4: 'heading' };
  var INPUTS = { checkbox: 'checkbox', radio: 'radio', number: 'spinbutton' };
  var textOf = function (ids) {
    return ids.split(/\s+/).map(function (id) {
      var e = document.getElementById(id);
      return e ? e.textContent : '';
    }).join(' ').trim();
  };
  var nameOf = function (e) {
    if (e.hasAttribute('aria-label')) { return e.getAttribute('aria-label'); }
    if (e.hasAttribute('aria-labelledby')) { return textOf(e.getAttribute('aria-labelledby')); }
    if (e.labels && e.labels.length > 0) {
      return Array.prototype.map.call(e.labels, function (l) { return l.textContent; }).join(' ').trim();
    }
    if (e.localName === 'fieldset') {
      var legend = e.querySelector('legend');
      return legend ? legend.textContent : '';
    }
    if (e.localName === 'button') { return e.textContent; }
    return '';
  };
  var elements = [];
  var boxes = {};
  root.querySelectorAll('*').forEach(function (e) {
    var attributes = {};
    Array.prototype.forEach.call(e.attributes, function (a) {
      attributes[a.name] = REFS[a.name] ? strip(a.value) : a.value;
    });
    var role = e.getAttribute('role') || IMPLICIT[e.localName] || '';
    if (!e.getAttribute('role') && e.localName === 'input') { role = INPUTS[e.type] || 'textbox'; }
    elements.push({ tag: e.localName, attributes: attributes, role: role, name: nameOf(e) });
    if (e.id) {
      var r = e.getBoundingClientRect();
      boxes[strip(e.id)] = [r.left, r.top, r.width, r.height];
    }
  });
  var active = document.activeElement;
  var focused = active && active !== root && root.contains(active) ? strip(active.id) : '';
  return JSON.stringify({
    text: root.innerText,
    elements: elements,
    focused: focused || '',
    background: getComputedStyle(document.body).backgroundColor,
    accent: getComputedStyle(document.documentElement).getPropertyValue('--lineup-color-accent').trim(),
    boxes: boxes
  });
}"#;

/// Parses what [`snapshot_script`] returned.
pub(crate) fn parse_snapshot(json: &str) -> Option<ComponentSnapshot> {
    serde_json::from_str(json).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_parses_and_its_debug_shows_no_text() {
        let json = r##"{"text":"Deploy secret-42?","elements":[{"tag":"button","attributes":{"id":"confirm"},"role":"button","name":"secret-42"}],"focused":"deny","background":"rgb(255, 255, 255)","accent":"#0a66d8","boxes":{"confirm":[1,2,3,4]}}"##;
        let snapshot = parse_snapshot(json).unwrap_or_default();
        assert_eq!(snapshot.focused, "deny");
        assert_eq!(snapshot.with_role("button").count(), 1);
        assert_eq!(snapshot.boxes["confirm"], [1.0, 2.0, 3.0, 4.0]);
        let shown = format!("{snapshot:?}");
        assert!(!shown.contains("secret-42"), "{shown}");
        assert!(parse_snapshot("not json").is_none());
    }
}
