//! The standby screen: a trusted host page (never agent content) that fills the embedder's
//! window whenever no Surface is showing there, so a kiosk never shows an empty or half-drawn
//! screen. It covers the child views from above and steps aside only once a Surface has
//! painted; it comes back before the last Surface's view is destroyed. Bytes and the show/hide
//! rule here; the view itself is in `platform/`.

use serde_json::json;

use crate::error::ShellError;
use crate::trusted::TrustedDocument;

/// The longest status line the standby screen shows, in characters; a longer one is cut.
pub const MAX_STANDBY_STATUS_CHARS: usize = 200;

/// A colour of the standby screen, `#rrggbb`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StandbyColor([u8; 3]);

impl StandbyColor {
    /// The colour with these red, green and blue components.
    pub const fn rgb(red: u8, green: u8, blue: u8) -> Self {
        Self([red, green, blue])
    }

    /// The red, green and blue components.
    pub const fn components(self) -> [u8; 3] {
        self.0
    }

    fn css(self) -> String {
        let [r, g, b] = self.0;
        format!("#{r:02x}{g:02x}{b:02x}")
    }
}

impl std::str::FromStr for StandbyColor {
    type Err = String;

    /// Reads `#rrggbb`.
    fn from_str(text: &str) -> Result<Self, String> {
        let hex = text
            .strip_prefix('#')
            .filter(|h| h.len() == 6 && h.bytes().all(|b| b.is_ascii_hexdigit()))
            .ok_or_else(|| format!("{text:?} is not a colour of the form #rrggbb"))?;
        let byte = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).unwrap_or(0);
        Ok(Self([byte(0), byte(2), byte(4)]))
    }
}

/// What the standby screen shows: a title, a message, and a status line the embedder updates
/// (`lineup_host::HostHandle::set_standby_status`), say "connecting
/// to the agent"; on a background colour that fills the window.
///
/// All of it is the embedder's text, shown as text (never markup). Give it to
/// `lineup_host::HostBuilder::standby` with child-view placement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StandbyScreen {
    title: String,
    message: String,
    status: String,
    background: StandbyColor,
    foreground: StandbyColor,
}

impl StandbyScreen {
    /// A standby screen titled `title`, white on dark blue, with no message.
    pub fn new(title: impl Into<String>) -> Self {
        Self {
            title: title.into(),
            message: String::new(),
            status: String::new(),
            background: StandbyColor::rgb(0x10, 0x24, 0x3a),
            foreground: StandbyColor::rgb(0xff, 0xff, 0xff),
        }
    }

    /// The message under the title.
    pub fn message(mut self, message: impl Into<String>) -> Self {
        self.message = message.into();
        self
    }

    /// The status line shown at first.
    pub fn status(mut self, status: impl Into<String>) -> Self {
        self.status = cap_status(&status.into());
        self
    }

    /// The background and text colours.
    pub fn colors(mut self, background: StandbyColor, foreground: StandbyColor) -> Self {
        self.background = background;
        self.foreground = foreground;
        self
    }

    /// The background colour.
    pub fn background(&self) -> StandbyColor {
        self.background
    }

    /// The text colour.
    pub fn foreground(&self) -> StandbyColor {
        self.foreground
    }

    /// The host-written document; the texts travel as inert JSON data (R-SEC-6).
    pub(crate) fn document(&self) -> Result<TrustedDocument, ShellError> {
        let css = format!(
            "html,body{{margin:0;height:100%;background:{bg};color:{fg};cursor:none;\
             font-family:system-ui,sans-serif;overflow:hidden}}\
             main{{height:100%;display:flex;flex-direction:column;align-items:center;\
             justify-content:center;text-align:center;gap:1em}}\
             h1{{margin:0;font-size:2.5em;font-weight:600}}p{{margin:0;font-size:1.3em;opacity:.85}}",
            bg = self.background.css(),
            fg = self.foreground.css(),
        );
        let data = json!({
            "title": self.title,
            "message": self.message,
            "status": self.status,
        });
        TrustedDocument::new(STANDBY_HTML, &css, STANDBY_JS, &data)
    }
}

/// `status` cut to [`MAX_STANDBY_STATUS_CHARS`].
pub fn cap_status(status: &str) -> String {
    status.chars().take(MAX_STANDBY_STATUS_CHARS).collect()
}

/// The script that sets the status line later: the status as a JSON string literal, which the
/// page's own function puts in as text.
pub(crate) fn status_script(status: &str) -> String {
    format!(
        "window.lineupStandbyStatus({})",
        crate::trusted::inert_json(&serde_json::Value::String(cap_status(status)))
    )
}

const STANDBY_HTML: &str = "<main data-lineup-standby><h1 id=\"title\"></h1>\
    <p id=\"message\"></p><p id=\"status\"></p></main>";

const STANDBY_JS: &str = "(() => {\n\
  const data = JSON.parse(document.getElementById('data').textContent);\n\
  const set = (id, text) => { document.getElementById(id).textContent = text; };\n\
  set('title', data.title); set('message', data.message); set('status', data.status);\n\
  Object.defineProperty(window, 'lineupStandbyStatus', { value: (s) => set('status', String(s)) });\n\
})();";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_are_read_only_in_the_one_form() {
        assert_eq!(
            "#10243A".parse::<StandbyColor>(),
            Ok(StandbyColor::rgb(0x10, 0x24, 0x3a))
        );
        for bad in [
            "10243a",
            "#10243",
            "#10243az",
            "red",
            "#1024 3a",
            "",
            "#ffffff;x",
        ] {
            assert!(bad.parse::<StandbyColor>().is_err(), "{bad}");
        }
    }

    #[test]
    fn r_sec_6_standby_texts_are_data_and_the_status_is_capped() {
        let screen = StandbyScreen::new("</script><b>x</b>").message("<img src=x onerror=1>");
        let doc = screen.document().unwrap_or_else(|e| panic!("{e}"));
        assert!(!doc.html().contains("<b>x"), "{}", doc.html());
        assert!(!doc.html().contains("<img"));
        let long = "é".repeat(MAX_STANDBY_STATUS_CHARS + 50);
        assert_eq!(cap_status(&long).chars().count(), MAX_STANDBY_STATUS_CHARS);
        let script = status_script("</script>\u{2028}");
        assert!(
            !script.contains('<') && !script.contains('\u{2028}'),
            "{script}"
        );
    }
}
