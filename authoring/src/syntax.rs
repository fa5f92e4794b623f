//! `script.js` parsed before it is loaded (R-UI-6a, R-DIAG-1): WebKit reports a syntax error in
//! the sandboxed document's top-level script only as `Script error.`, with no message or
//! position, because the document's origin is opaque. So the author's tools parse the script
//! first, as the classic script the host runs it as, and name the first error as
//! `script.js:LINE:COL: message`.

use std::fmt;

use oxc_allocator::Allocator;
use oxc_diagnostics::OxcDiagnostic;
use oxc_parser::{ParseOptions, Parser};
use oxc_semantic::SemanticBuilder;
use oxc_span::{GetSpan, SourceType};

/// The first syntax error of a script: where (from 1) and what.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SyntaxError {
    /// The line, from 1.
    pub line: u32,
    /// The column, from 1, in UTF-16 code units as the engine and editors count them.
    pub column: u32,
    /// The parser's message, with a hint when the script is written as a module.
    pub message: String,
}

impl fmt::Display for SyntaxError {
    /// `LINE:COL: message`; the caller puts the file name in front.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.message)
    }
}

/// Parses `js` as a classic script (not a module: the host puts it in a plain `<script>`,
/// R-UI-6a) with the latest ECMAScript syntax, and returns its first syntax error, if any.
///
/// ```
/// use lineup_authoring::check_script;
/// assert_eq!(check_script("let a = 1;\nlet b = ;\n").map(|e| (e.line, e.column)), Some((2, 9)));
/// assert_eq!(check_script("LineUpSurface.onState((s) => s);"), None);
/// ```
pub fn check_script(js: &str) -> Option<SyntaxError> {
    let allocator = Allocator::default();
    let options = ParseOptions {
        // The engine refuses an invalid regular-expression literal when it parses the script.
        parse_regular_expression: true,
        ..ParseOptions::default()
    };
    let parsed = Parser::new(&allocator, js, SourceType::script())
        .with_options(options)
        .parse();
    // Each error as (byte offset, message); the first in the text is reported.
    let mut errors: Vec<(u32, String)> = parsed
        .diagnostics
        .iter()
        .map(|d| diagnostic(js, d, false))
        .collect();
    // The early errors the parser leaves to semantic analysis (a `let` or `const` declared
    // twice, `break` outside a loop, ...): the engine refuses those when it parses the script
    // too. Only when the parse itself succeeded, as the analysis needs a whole tree.
    if errors.is_empty() {
        let semantic = SemanticBuilder::new()
            .with_check_syntax_error(true)
            .build(&parsed.program);
        errors.extend(semantic.diagnostics.iter().map(|d| diagnostic(js, d, true)));
    }
    // The parser leaves `import` and `export` declarations in a script to later analysis; the
    // engine refuses them when it parses the script.
    if let Some(declaration) = parsed
        .program
        .body
        .iter()
        .find(|s| s.is_module_declaration())
    {
        errors.push((
            GetSpan::span(declaration).start,
            "an import or export declaration".to_owned(),
        ));
    }
    let (offset, mut message) = errors.into_iter().min_by_key(|(offset, _)| *offset)?;
    let (line, column) = position(js, usize::try_from(offset).unwrap_or(usize::MAX));
    if is_module_syntax(js, offset) {
        message.push_str(
            "; script.js runs as a classic script, not a module (R-UI-6a): no import or \
             export; use a library's single-file IIFE/UMD build",
        );
    }
    Some(SyntaxError {
        line,
        column,
        message,
    })
}

/// A diagnostic as (byte offset, message): at its primary label, else its first (the parser's
/// labels) or with `last` its last (semantic analysis labels the first declaration first and
/// the offending one last); the other labels' words and positions follow the message.
fn diagnostic(js: &str, d: &OxcDiagnostic, last: bool) -> (u32, String) {
    let chosen = d
        .labels
        .iter()
        .position(oxc_span::LabeledSpan::primary)
        .or(if last {
            d.labels.len().checked_sub(1)
        } else if d.labels.is_empty() {
            None
        } else {
            Some(0)
        });
    let offset = chosen
        .and_then(|i| d.labels.get(i))
        .map_or(0, oxc_span::LabeledSpan::offset);
    let mut message = d.message.to_string();
    for (i, label) in d.labels.iter().enumerate() {
        let Some(text) = label
            .label()
            .filter(|t| !t.is_empty() && !message.contains(t))
        else {
            continue;
        };
        if Some(i) == chosen {
            if d.labels.len() == 1 {
                message = format!("{message} ({text})");
            }
        } else {
            let (line, column) = position(js, usize::try_from(label.offset()).unwrap_or(0));
            message = format!("{message} ({text}: {line}:{column})");
        }
    }
    (offset, message)
}

/// Whether the error is at an `import`/`export` declaration, which only a module may have.
fn is_module_syntax(js: &str, offset: u32) -> bool {
    let at = usize::try_from(offset).unwrap_or(usize::MAX);
    let rest = js.get(at..).unwrap_or_default();
    let word = |w: &str| {
        rest.strip_prefix(w)
            .is_some_and(|after| after.starts_with(|c: char| c.is_whitespace() || "{*".contains(c)))
    };
    word("import") || word("export")
}

/// The line and the UTF-16 column, both from 1, of byte `offset` in `text`.
fn position(text: &str, offset: usize) -> (u32, u32) {
    let offset = offset.min(text.len());
    let mut end = offset;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let before = &text[..end];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].encode_utf16().count() + 1;
    let n = |v: usize| u32::try_from(v).unwrap_or(u32::MAX);
    (n(line), n(column))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 30 item 7: the first error's position and message; a valid script passes
    /// (positive control), also with syntax a classic script may have and a module may not.
    #[test]
    fn r_ui_6a_a_syntax_error_has_its_line_column_and_message() {
        let err = check_script("let a = 1;\nlet b = ;\n").expect("an error");
        assert_eq!((err.line, err.column), (2, 9), "{err}");
        assert!(!err.message.is_empty());
        let err = check_script("const s = '😀'; let = = 2;").expect("an error");
        assert_eq!(err.line, 1, "{err}");
        // A column counts UTF-16 units, as the engine's do: the emoji is two.
        assert!(err.column > 15, "{err}");
        let err = check_script("var r = /(/;").expect("an invalid regular expression");
        assert_eq!(err.line, 1, "{err}");
        // Early errors of semantic analysis: a name declared twice, a stray `break`.
        let err = check_script("const el = 1;\nlet x;\nconst el = 2;").expect("redeclared");
        assert_eq!((err.line, err.column), (3, 7), "{err}");
        assert!(err.message.contains("1:7"), "the first declaration: {err}");
        let err = check_script("if (true) { break; }").expect("break outside a loop");
        assert_eq!(err.line, 1, "{err}");
        for ok in [
            "",
            "LineUpSurface.onState((s) => { document.body.textContent = `${s.n ?? 0}`; });",
            // Classic-script only: `with`, `<!--` comments (Annex B), `await` as a name.
            "var o = {a: 1}; with (o) { a; }\n<!-- an old comment\nvar await = 1;",
            "class A { #x = 1; static { this.y = 2; } get x() { return this.#x; } }",
            "import('x').catch(() => {});",
            // Sloppy-mode scripts may declare a var or a function twice.
            "var a = 1; var a = 2; function f() {} function f() {}",
        ] {
            assert_eq!(check_script(ok), None, "{ok}");
        }
    }

    /// The bundle rules (R-UI-6a): one classic script, no modules; the error says so.
    #[test]
    fn r_ui_6a_module_syntax_is_an_error_with_a_hint() {
        let err = check_script("// lib\nimport x from './x.js';\n").expect("not a script");
        assert_eq!((err.line, err.column), (2, 1), "{err}");
        assert!(err.message.contains("not a module"), "{err}");
        let err = check_script("export function f() {}").expect("not a script");
        assert!(err.message.contains("IIFE/UMD"), "{err}");
        // Positive control: another error gets no module hint.
        let err = check_script("let = ;").expect("an error");
        assert!(!err.message.contains("module"), "{err}");
    }

    #[test]
    fn positions_are_from_one_and_count_utf16() {
        assert_eq!(position("", 0), (1, 1));
        assert_eq!(position("ab\ncd", 4), (2, 2));
        assert_eq!(position("😀x", 4), (1, 3));
        assert_eq!(position("ab", 99), (1, 3));
    }
}
