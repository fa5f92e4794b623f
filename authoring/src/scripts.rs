//! A bundle's script made of several files (#26 item 3): `scripts/*.js` in name order (the
//! libraries), then `script.js` (the author's code), joined so that no file can swallow the
//! next, with every diagnostic named by the file and line it came from.

use std::path::Path;

use lineup_host_core::{Breakout, SourcePart};

use crate::error::{refused, AuthoringError};
use crate::source::{check_js, read_text};

/// The folder of library scripts, joined before `script.js`.
pub const SCRIPTS_DIR: &str = "scripts";

/// The script files of a folder, joined.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct JoinedScript {
    /// The joined text: each file, then a newline unless it ended with one.
    pub(crate) text: String,
    /// Each file's name (`scripts/chart.umd.js`, `script.js`) and its first line in `text`.
    files: Vec<(String, u32)>,
    /// What an author should know but the host does not refuse.
    pub(crate) warnings: Vec<String>,
}

impl JoinedScript {
    /// Reads `scripts/*.js` in name order and then `script.js` (each optional), checks each
    /// file on its own (syntax, R-UI-6a break-outs) and the joined text, and joins them.
    pub(crate) fn read(folder: &Path) -> Result<Self, AuthoringError> {
        let mut names = Vec::new();
        let dir = folder.join(SCRIPTS_DIR);
        if dir.is_dir() {
            let entries = std::fs::read_dir(&dir).map_err(|source| AuthoringError::Read {
                path: dir.clone(),
                source,
            })?;
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if name.ends_with(".js") && entry.path().is_file() {
                    names.push(format!("{SCRIPTS_DIR}/{name}"));
                }
            }
            names.sort();
        }
        let mut joined = Self::default();
        for name in &names {
            let text = read_text(&folder.join(name), true)?;
            joined.push(name, &text)?;
        }
        let main = read_text(&folder.join("script.js"), false)?;
        if names.is_empty() {
            // One file: the text as written, as before there were several.
            check_file("script.js", &main)?;
            joined.text = main;
            joined.files.push(("script.js".to_owned(), 1));
        } else if !main.is_empty() {
            joined.push("script.js", &main)?;
        }
        if names.len() > 1 || (!names.is_empty() && !joined.text.is_empty()) {
            joined.check_joined()?;
        }
        Ok(joined)
    }

    fn push(&mut self, name: &str, text: &str) -> Result<(), AuthoringError> {
        check_file(name, text)?;
        if let Some(comment) = ends_in_line_comment(text) {
            self.warnings.push(format!(
                "{name}: ends in a line comment (`{comment}`) without a newline: joined as is \
                 to another script, it would comment out that script's first line; the host \
                 adds a newline after every file"
            ));
        }
        let first_line = self.text.matches('\n').count() as u32 + 1;
        self.files.push((name.to_owned(), first_line));
        self.text.push_str(text);
        if !text.ends_with('\n') {
            self.text.push('\n');
        }
        Ok(())
    }

    /// The joined text can break out where no single file does (a `<!--` ending one file and a
    /// `<script` starting the next): checked again, its position named in its file.
    /// So can a syntax error (a `let` declared in two files): the page would run the joined
    /// text as one classic script.
    fn check_joined(&self) -> Result<(), AuthoringError> {
        if let Some(found) = Breakout::find("", &self.text) {
            let (file, line) = self.locate(found.at.line);
            return Err(refused(
                format!("{file}:{line}:{}", found.at.column),
                format!("{found} (across the joined script files)"),
            ));
        }
        if let Some(mut error) = crate::check_script(&self.text) {
            let (file, line) = self.locate(error.line);
            error.line = line;
            error.message.push_str(" (in the joined script files)");
            return Err(AuthoringError::Syntax {
                file: file.to_owned(),
                error,
            });
        }
        Ok(())
    }

    /// The file and its own line for line `line` of the joined text.
    pub(crate) fn locate(&self, line: u32) -> (&str, u32) {
        let (name, first) = self
            .files
            .iter()
            .rev()
            .find(|(_, first)| *first <= line)
            .map_or(("script.js", 1), |(n, f)| (n.as_str(), *f));
        (name, line - first + 1)
    }
}

fn check_file(name: &str, text: &str) -> Result<(), AuthoringError> {
    if let Some(found) = Breakout::find("", text) {
        debug_assert_eq!(found.part, SourcePart::Js);
        return Err(refused(
            format!("{name}:{}:{}", found.at.line, found.at.column),
            found.to_string(),
        ));
    }
    check_js(name, text)
}

/// The last line of `text` when it is a line comment with no newline after it, as a
/// `//# sourceMappingURL=…` a minifier leaves.
fn ends_in_line_comment(text: &str) -> Option<&str> {
    if text.ends_with('\n') {
        return None;
    }
    let last = text.rsplit('\n').next()?.trim();
    last.starts_with("//").then(|| {
        let end = last.char_indices().nth(40).map_or(last.len(), |(i, _)| i);
        &last[..end]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(name: &str, files: &[(&str, &str)]) -> std::path::PathBuf {
        let dir =
            std::env::temp_dir().join(format!("lineup-scripts-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join(SCRIPTS_DIR)).unwrap();
        for (file, text) in files {
            std::fs::write(dir.join(file), text).unwrap();
        }
        dir
    }

    #[test]
    fn files_join_in_name_order_with_a_newline_after_each() {
        let dir = folder(
            "order",
            &[
                ("scripts/b.js", "var b = 2;"),
                ("scripts/a.js", "var a = 1;\n"),
                ("scripts/notes.txt", "not a script"),
                ("script.js", "draw(a, b);"),
            ],
        );
        let joined = JoinedScript::read(&dir).unwrap();
        assert_eq!(joined.text, "var a = 1;\nvar b = 2;\ndraw(a, b);\n");
        assert_eq!(joined.locate(1), ("scripts/a.js", 1));
        assert_eq!(joined.locate(2), ("scripts/b.js", 1));
        assert_eq!(joined.locate(3), ("script.js", 1));
        assert!(joined.warnings.is_empty(), "{:?}", joined.warnings);
    }

    /// The trap the issue names: a library ending in `//# sourceMappingURL=…` with no newline,
    /// and the author's code after it. Joined by the host, the code runs; the author is warned.
    #[test]
    fn a_trailing_line_comment_cannot_swallow_the_next_file_and_is_warned_about() {
        let dir = folder(
            "comment",
            &[
                (
                    "scripts/lib.min.js",
                    "var lib={v:1};\n//# sourceMappingURL=lib.min.js.map",
                ),
                ("script.js", "lib.v = 2;"),
            ],
        );
        let joined = JoinedScript::read(&dir).unwrap();
        assert!(
            joined.text.ends_with("lib.min.js.map\nlib.v = 2;\n"),
            "{:?}",
            joined.text
        );
        assert_eq!(joined.warnings.len(), 1);
        assert!(
            joined.warnings[0].starts_with("scripts/lib.min.js: ends in a line comment"),
            "{:?}",
            joined.warnings
        );
        // Positive control: naive joining would have commented the author's code out.
        let naive = "var lib={v:1};\n//# sourceMappingURL=lib.min.js.map".to_owned() + "lib.v = 2;";
        assert!(naive.rsplit('\n').next().unwrap().starts_with("//"));
    }

    #[test]
    fn errors_name_the_file_and_its_own_line() {
        let dir = folder(
            "syntax",
            &[
                ("scripts/a.js", "var a = 1;\nvar b = 2;\n"),
                ("scripts/c.js", "var ok = 1;\nvar = ;\n"),
            ],
        );
        let err = JoinedScript::read(&dir).unwrap_err().to_string();
        assert!(err.starts_with("scripts/c.js:2:"), "{err}");
        let dir = folder(
            "breakout",
            &[("scripts/a.js", "var a;\nvar s = '</script>';\n")],
        );
        let err = JoinedScript::read(&dir).unwrap_err().to_string();
        assert!(
            err.starts_with("scripts/a.js:2:10: contains \"</script\""),
            "{err}"
        );
        // Across files: `<!--` ends one, `<script` starts the next.
        let dir = folder(
            "across",
            &[
                ("scripts/a.js", "var a = 1; /*\n<!--*/\n"),
                ("scripts/b.js", "/*<script>*/ var b;\n"),
            ],
        );
        let err = JoinedScript::read(&dir).unwrap_err().to_string();
        assert!(err.contains("across the joined script files"), "{err}");
        assert!(err.starts_with("scripts/a.js:2:1"), "{err}");
        // A name declared in two files: fine alone, an error joined, named in the second.
        let dir = folder(
            "redeclared",
            &[
                (
                    "scripts/a.js",
                    "let chart = 1;
",
                ),
                ("script.js", "\n\nlet chart = 2;\n"),
            ],
        );
        let err = JoinedScript::read(&dir).unwrap_err().to_string();
        assert!(err.starts_with("script.js:3:"), "{err}");
        assert!(err.contains("joined script files"), "{err}");
    }
}
