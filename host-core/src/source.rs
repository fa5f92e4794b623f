//! The author's files behind a Surface's document (R-DIAG-1): the three parts of a bundle, the
//! names the author knows them by, and a place in one of them.

use std::fmt;
use std::sync::Arc;

use crate::display::is_hidden;

/// One of the three parts of an inline bundle (R-UI-2), as an author's file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SourcePart {
    /// `html`, the body fragment (`index.html` of a bundle folder).
    Html,
    /// `css` (`style.css`).
    Css,
    /// `js` (`script.js`).
    Js,
}

impl SourcePart {
    /// `html`, `css` or `js`.
    pub fn as_str(self) -> &'static str {
        match self {
            SourcePart::Html => "html",
            SourcePart::Css => "css",
            SourcePart::Js => "js",
        }
    }

    /// The file of a bundle folder the part comes from: `index.html`, `style.css` or
    /// `script.js` (R-DIAG-1: positions read as the author's own file, `script.js:3:14`).
    pub fn file_name(self) -> &'static str {
        match self {
            SourcePart::Html => "index.html",
            SourcePart::Css => "style.css",
            SourcePart::Js => "script.js",
        }
    }
}

impl fmt::Display for SourcePart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The names the author knows a Surface's three parts by (R-DIAG-1): a bundle folder's
/// (`index.html`, `style.css`, `script.js`, [`SourcePart::file_name`]) for an inline bundle,
/// the files its manifest names for an installed app's Surface (`app/main.js`).
///
/// ```
/// use lineup_host_core::{SourceFiles, SourcePart};
/// let inline = SourceFiles::default();
/// assert_eq!(inline.name(SourcePart::Js), "script.js");
/// let installed = SourceFiles::named("page.html", None, Some("app/main.js"));
/// assert_eq!(installed.name(SourcePart::Html), "page.html");
/// assert_eq!(installed.name(SourcePart::Css), "style.css");
/// assert_eq!(installed.name(SourcePart::Js), "app/main.js");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct SourceFiles {
    /// `html`, `css`, `js`; `None` for the bundle folder's name.
    names: [Option<Arc<str>>; 3],
}

impl SourceFiles {
    /// The files a manifest names: `html` always, `css` and `js` when the Surface has them (a
    /// part it has not is empty in its bundle, and keeps the bundle folder's name).
    pub fn named(html: &str, css: Option<&str>, js: Option<&str>) -> Self {
        Self {
            names: [Some(html.into()), css.map(Into::into), js.map(Into::into)],
        }
    }

    /// The name of `part`'s file.
    pub fn name(&self, part: SourcePart) -> &str {
        self.names[index(part)]
            .as_deref()
            .unwrap_or(part.file_name())
    }

    /// A position in `part` under this set's name for it.
    pub fn position(&self, part: SourcePart, line: u32, column: u32) -> SourcePosition {
        SourcePosition {
            part,
            line,
            column,
            file: self.names[index(part)].clone(),
        }
    }
}

fn index(part: SourcePart) -> usize {
    match part {
        SourcePart::Html => 0,
        SourcePart::Css => 1,
        SourcePart::Js => 2,
    }
}

/// A place in one part of the bundle, 1-based, written with the part's file name
/// (`script.js:3:14`, or the manifest's `app/main.js:3:14` for an installed app's Surface).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SourcePosition {
    /// The part.
    pub part: SourcePart,
    /// The line within the part, from 1.
    pub line: u32,
    /// The column within the line, from 1, in the engine's units (UTF-16 code units for script
    /// positions, characters for [`SourcePosition::of_offset`]).
    pub column: u32,
    /// The part's file as the author named it; `None` for the bundle folder's
    /// ([`SourcePart::file_name`]).
    pub file: Option<Arc<str>>,
}

impl SourcePosition {
    /// The line and column (in characters) of byte `offset` of `text`, part `part`; an offset
    /// inside a character counts as that character.
    ///
    /// ```
    /// use lineup_host_core::{SourcePart, SourcePosition};
    /// let at = SourcePosition::of_offset(SourcePart::Js, "let a;\nx = '上</script>'", 15);
    /// assert_eq!(at.to_string(), "script.js:2:7");
    /// ```
    pub fn of_offset(part: SourcePart, text: &str, offset: usize) -> Self {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let before = &text.as_bytes()[..offset];
        let line_start = before
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |i| i + 1);
        let line = before.iter().filter(|b| **b == b'\n').count() + 1;
        let column = String::from_utf8_lossy(&before[line_start..])
            .chars()
            .count()
            + 1;
        Self {
            part,
            line: u32::try_from(line).unwrap_or(u32::MAX),
            column: u32::try_from(column).unwrap_or(u32::MAX),
            file: None,
        }
    }

    /// The name of its file.
    pub fn file_name(&self) -> &str {
        self.file.as_deref().unwrap_or(self.part.file_name())
    }
}

impl fmt::Display for SourcePosition {
    /// `file:line:column`. A manifest's file name is the package's word: format and bidi
    /// characters in it are written escaped (`\u{202e}`), so that it cannot reorder a log line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in self.file_name().chars() {
            if is_hidden(c) {
                write!(f, "\\u{{{:x}}}", u32::from(c))?;
            } else {
                fmt::Write::write_char(f, c)?;
            }
        }
        write!(f, ":{}:{}", self.line, self.column)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_position_counts_lines_and_characters() {
        let text = "a\nβγ</script";
        assert_eq!(
            SourcePosition::of_offset(SourcePart::Js, text, 6).to_string(),
            "script.js:2:3"
        );
        assert_eq!(
            SourcePosition::of_offset(SourcePart::Css, "", 9).to_string(),
            "style.css:1:1"
        );
    }

    /// R-DIAG-1: an installed app's positions name its manifest's files; a part the manifest
    /// leaves out keeps the bundle folder's name.
    #[test]
    fn r_diag_1_positions_name_the_manifest_files() {
        let files = SourceFiles::named("ui/page.html", None, Some("app.js"));
        assert_eq!(
            files.position(SourcePart::Js, 3, 14).to_string(),
            "app.js:3:14"
        );
        assert_eq!(
            files.position(SourcePart::Html, 1, 2).to_string(),
            "ui/page.html:1:2"
        );
        assert_eq!(
            files.position(SourcePart::Css, 1, 1).to_string(),
            "style.css:1:1"
        );
        // A package's name cannot reorder the line it is written in.
        let hostile = SourceFiles::named("index.html", None, Some("a\u{202e}sj.exe"));
        assert_eq!(
            hostile.position(SourcePart::Js, 1, 1).to_string(),
            "a\\u{202e}sj.exe:1:1"
        );
        // Positive control: the default set is the bundle folder's.
        assert_eq!(
            SourceFiles::default()
                .position(SourcePart::Js, 3, 14)
                .to_string(),
            "script.js:3:14"
        );
    }
}
