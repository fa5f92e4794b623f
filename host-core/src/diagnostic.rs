//! Diagnostics a Surface's page reports about itself (R-DIAG-1): console messages, uncaught
//! errors, unhandled rejections and CSP violations, for the embedder and the Surface's author.
//! They are page-supplied (a hostile page can forge any of them), capped, and never sent to the
//! agent.

use std::fmt;

use crate::display::is_hidden;
use crate::redact::Fingerprint;
use crate::source::SourcePosition;

/// Text a page supplied: possibly forged, possibly hostile.
///
/// `Display` writes it on one line with every control, format and bidi character escaped
/// (`\n`, `\u{1b}`, `\u{202e}`), so that a page can neither forge log lines nor drive a
/// terminal; `Debug` writes a [`Fingerprint`], as for every page-supplied value that may end up
/// in logs. [`PageText::as_str`] gives the text itself.
///
/// ```
/// use lineup_host_core::PageText;
/// let text = PageText::capped("a\nb\u{1b}[31m\u{202e}c", 64);
/// assert_eq!(text.to_string(), "a\\nb\\u{1b}[31m\\u{202e}c");
/// assert_eq!(text.as_str(), "a\nb\u{1b}[31m\u{202e}c");
/// assert!(!text.truncated());
/// let long = PageText::capped("上海上海", 7);
/// assert_eq!((long.as_str(), long.truncated()), ("上海", true));
/// ```
#[derive(Clone, PartialEq, Eq, Default)]
pub struct PageText {
    text: String,
    truncated: bool,
}

impl PageText {
    /// `text`, cut to at most `max_bytes` bytes of UTF-8 on a character boundary.
    pub fn capped(text: &str, max_bytes: usize) -> Self {
        if text.len() <= max_bytes {
            return Self {
                text: text.to_owned(),
                truncated: false,
            };
        }
        let mut end = max_bytes;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        Self {
            text: text[..end].to_owned(),
            truncated: true,
        }
    }

    /// The text as the page supplied it (after the cap).
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether the page supplied more than the cap and the rest was cut off.
    pub fn truncated(&self) -> bool {
        self.truncated
    }

    /// Its length in bytes.
    pub fn len(&self) -> usize {
        self.text.len()
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }
}

impl fmt::Display for PageText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in self.text.chars() {
            match c {
                '\n' => f.write_str("\\n")?,
                '\r' => f.write_str("\\r")?,
                '\t' => f.write_str("\\t")?,
                '\\' => f.write_str("\\\\")?,
                c if is_hidden(c) => write!(f, "\\u{{{:x}}}", u32::from(c))?,
                c => fmt::Write::write_char(f, c)?,
            }
        }
        if self.truncated {
            f.write_str("…")?;
        }
        Ok(())
    }
}

impl fmt::Debug for PageText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Fingerprint::of(&self.text).debug_as("PageText", f)
    }
}

/// What a diagnostic is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DiagnosticKind {
    /// A `console.*` call (wire: `console`).
    Console,
    /// An uncaught exception or a script that failed to load (`error`).
    Error,
    /// A promise rejected with no handler (`rejection`).
    Rejection,
    /// A Content-Security-Policy violation (`csp`): something the Surface's policy blocked.
    Csp,
    /// Made by the host, never by a page: further diagnostics of the Surface were dropped because
    /// it passed its diagnostic budget (`Limits::max_diagnostics_per_window`).
    Suppressed,
}

impl DiagnosticKind {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            DiagnosticKind::Console => "console",
            DiagnosticKind::Error => "error",
            DiagnosticKind::Rejection => "rejection",
            DiagnosticKind::Csp => "csp",
            DiagnosticKind::Suppressed => "suppressed",
        }
    }

    /// The kinds a page may post; `suppressed` is the host's alone.
    fn from_page(name: &str) -> Option<Self> {
        match name {
            "console" => Some(DiagnosticKind::Console),
            "error" => Some(DiagnosticKind::Error),
            "rejection" => Some(DiagnosticKind::Rejection),
            "csp" => Some(DiagnosticKind::Csp),
            _ => None,
        }
    }
}

impl fmt::Display for DiagnosticKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How serious a diagnostic is: the console method's level, `error` for errors, rejections and
/// CSP violations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum DiagnosticLevel {
    /// `console.debug`, `console.trace`.
    Debug,
    /// `console.log`.
    Log,
    /// `console.info`.
    Info,
    /// `console.warn`.
    Warn,
    /// `console.error`, `console.assert` that failed, errors, rejections, CSP violations.
    Error,
}

impl DiagnosticLevel {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            DiagnosticLevel::Debug => "debug",
            DiagnosticLevel::Log => "log",
            DiagnosticLevel::Info => "info",
            DiagnosticLevel::Warn => "warn",
            DiagnosticLevel::Error => "error",
        }
    }

    fn from_wire(name: &str) -> Option<Self> {
        match name {
            "debug" => Some(DiagnosticLevel::Debug),
            "log" => Some(DiagnosticLevel::Log),
            "info" => Some(DiagnosticLevel::Info),
            "warn" => Some(DiagnosticLevel::Warn),
            "error" => Some(DiagnosticLevel::Error),
            _ => None,
        }
    }
}

impl fmt::Display for DiagnosticLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a CSP violation report names (R-SEC-3): page-supplied like the rest, plus the host's own
/// hint.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CspViolation {
    /// The directive that blocked it, as the page reported it (`connect-src`,
    /// `script-src-elem`, …).
    pub directive: PageText,
    /// The blocked URL, or the kind of thing blocked (`eval`, `inline`), as reported.
    pub blocked: PageText,
    /// The host's one-line reason why it will not loosen that directive; never page text.
    pub hint: &'static str,
}

/// The host's one-line reason for keeping `directive` as it is (R-SEC-2, R-SEC-3).
///
/// ```
/// use lineup_host_core::csp_hint;
/// assert!(csp_hint("connect-src", "https://example.com/").contains("no network"));
/// assert!(csp_hint("script-src", "eval").contains("eval"));
/// ```
pub fn csp_hint(directive: &str, blocked: &str) -> &'static str {
    let name = directive.split_whitespace().next().unwrap_or_default();
    let base = name
        .strip_suffix("-elem")
        .or_else(|| name.strip_suffix("-attr"))
        .unwrap_or(name);
    match base {
        "connect-src" => {
            "a Surface has no network (R-SEC-3): the agent sends what it needs in the state"
        }
        "script-src" if blocked == "eval" || blocked == "wasm-eval" => {
            "eval, new Function and string timers stay blocked (R-SEC-3): ship code as code in the bundle's js"
        }
        "script-src" => {
            "only the bundle's own inline script runs (R-SEC-3): put library code into the bundle's js"
        }
        "style-src" => "only inline styles apply (R-SEC-3): put them into the bundle's css",
        "img-src" => {
            "images load only from data: and blob: URLs, and an installed app's own assets (R-SEC-3, R-SEC-3a): inline them or list them as assets"
        }
        "media-src" => {
            "an inline Surface plays no audio or video; an installed app plays its own assets (R-SEC-3, R-SEC-3a): list them as assets of an installed app"
        }
        "font-src" => {
            "an inline Surface loads no fonts (use the system's, --lineup-font-family); an installed app loads its own assets (R-SEC-3, R-SEC-3a): list them as assets of an installed app"
        }
        "frame-src" | "child-src" => "a Surface embeds no frames from anywhere (R-SEC-2)",
        "worker-src" => "a Surface starts no workers (R-SEC-3)",
        "object-src" => "a Surface loads no plugins (R-SEC-3)",
        "base-uri" => "a Surface may not set <base> (R-SEC-3)",
        "form-action" => {
            "forms submit nowhere (R-SEC-2): handle submit in script and send an event"
        }
        _ => "the Surface's policy is fixed; the host only ever makes it stricter (R-SEC-3)",
    }
}

/// One diagnostic of a Surface (R-DIAG-1), for the embedder and the Surface's author.
///
/// Everything but [`CspViolation::hint`] and the host's own `suppressed` notes is
/// **page-supplied**: a hostile page can post any of it from any frame, so show it as the page's
/// word ([`PageText`] escapes it for a terminal), never act on it, and never send it to the agent.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Diagnostic {
    /// What it is about.
    pub kind: DiagnosticKind,
    /// How serious.
    pub level: DiagnosticLevel,
    /// The console arguments as text, or the error's message.
    pub message: PageText,
    /// The script or document the page named as the origin, if any.
    pub source: Option<PageText>,
    /// The line in the Surface's document the page reported, from 1.
    pub line: Option<u32>,
    /// The column in that line the page reported, from 1.
    pub column: Option<u32>,
    /// `line`/`column` mapped back to the author's own part of the bundle (`script.js:3:14`); set by
    /// the platform layer, which knows the document's layout.
    pub position: Option<SourcePosition>,
    /// The installed app's script asset `line`/`column` are in (`lib/chart.umd.js`), when the
    /// page named a file of its own host other than the document (R-SEC-3a); set by the
    /// platform layer. Page-supplied, as `source` is.
    pub asset: Option<PageText>,
    /// For [`DiagnosticKind::Csp`]: what was blocked, by which directive, and why it stays so.
    pub csp: Option<CspViolation>,
}

impl Diagnostic {
    /// Whether a page supplied it (everything but the host's `suppressed` notes).
    pub fn page_supplied(&self) -> bool {
        self.kind != DiagnosticKind::Suppressed
    }

    /// A note of the host's own that diagnostics of a Surface were dropped.
    pub(crate) fn suppressed(message: String) -> Self {
        Self {
            kind: DiagnosticKind::Suppressed,
            level: DiagnosticLevel::Warn,
            message: PageText {
                text: message,
                truncated: false,
            },
            source: None,
            line: None,
            column: None,
            position: None,
            asset: None,
            csp: None,
        }
    }

    /// The bytes it holds, for the per-Surface budget.
    pub(crate) fn weight(&self) -> usize {
        self.message.len()
            + self.source.as_ref().map_or(0, PageText::len)
            + self
                .csp
                .as_ref()
                .map_or(0, |c| c.directive.len() + c.blocked.len())
    }
}

impl fmt::Display for Diagnostic {
    /// One line, page text escaped: `console.warn at script.js:3:14: …`, `error at script.js:2:1: TypeError: …`,
    /// `unhandled rejection …`, or `csp violation at script.js:5:3: connect-src blocked https://…;
    /// <hint>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            DiagnosticKind::Console => write!(f, "console.{}", self.level)?,
            DiagnosticKind::Rejection => f.write_str("unhandled rejection")?,
            DiagnosticKind::Csp => f.write_str("csp violation")?,
            kind => write!(f, "{kind}")?,
        }
        match (&self.position, self.line) {
            (Some(position), _) => write!(f, " at {position}")?,
            (None, Some(line)) if self.asset.is_some() => {
                let asset = self
                    .asset
                    .as_ref()
                    .map(PageText::as_str)
                    .unwrap_or_default();
                write!(f, " at {asset}:{line}")?;
                if let Some(column) = self.column {
                    write!(f, ":{column}")?;
                }
            }
            (None, Some(line)) => {
                write!(f, " at document line {line}")?;
                if let Some(column) = self.column {
                    write!(f, ":{column}")?;
                }
            }
            (None, None) => {}
        }
        if let Some(csp) = &self.csp {
            write!(f, ": {} blocked {}", csp.directive, csp.blocked)?;
            if !self.message.is_empty() {
                write!(f, " ({})", self.message)?;
            }
            write!(f, "; {}", csp.hint)
        } else {
            write!(f, ": {}", self.message)
        }
    }
}

/// The fields of a `diagnostic` bridge message, as strings and numbers already read.
pub(crate) struct RawDiagnostic {
    pub(crate) kind: String,
    pub(crate) level: Option<String>,
    pub(crate) message: String,
    pub(crate) source: Option<String>,
    pub(crate) line: Option<u32>,
    pub(crate) column: Option<u32>,
    pub(crate) directive: Option<String>,
    pub(crate) blocked: Option<String>,
}

/// How long the short fields (source, directive, blocked URL) may be, in bytes.
const SHORT_FIELD_BYTES: usize = 512;

impl RawDiagnostic {
    /// Checks the kind and level and caps every text at `max_text` bytes (the short fields at
    /// 512); `Err` names what is wrong.
    pub(crate) fn check(self, max_text: usize) -> Result<Diagnostic, String> {
        let kind = DiagnosticKind::from_page(&self.kind).ok_or_else(|| {
            format!(
                "diagnostic kind {:?} is not console, error, rejection or csp",
                crate::ids::shorten(&self.kind, 40)
            )
        })?;
        let level = match self.level.as_deref() {
            None if kind == DiagnosticKind::Console => DiagnosticLevel::Log,
            None => DiagnosticLevel::Error,
            Some(name) => DiagnosticLevel::from_wire(name).ok_or_else(|| {
                format!(
                    "diagnostic level {:?} is not debug, log, info, warn or error",
                    crate::ids::shorten(name, 40)
                )
            })?,
        };
        let short = |s: Option<String>| s.map(|s| PageText::capped(&s, SHORT_FIELD_BYTES));
        let csp = if kind == DiagnosticKind::Csp {
            let directive = self
                .directive
                .ok_or_else(|| "a csp diagnostic must name its directive".to_owned())?;
            let blocked = self.blocked.unwrap_or_default();
            Some(CspViolation {
                hint: csp_hint(&directive, &blocked),
                directive: PageText::capped(&directive, SHORT_FIELD_BYTES),
                blocked: PageText::capped(&blocked, SHORT_FIELD_BYTES),
            })
        } else {
            None
        };
        Ok(Diagnostic {
            kind,
            level,
            message: PageText::capped(&self.message, max_text),
            source: short(self.source),
            line: self.line,
            column: self.column,
            position: None,
            asset: None,
            csp,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r_diag_1_page_text_cannot_forge_log_lines_or_drive_a_terminal() {
        let text = PageText::capped("ok\nsurface w1#1: forged\u{1b}]0;title\u{7}\u{202e}", 1024);
        let shown = text.to_string();
        assert!(!shown.contains('\n') && !shown.contains('\u{1b}') && !shown.contains('\u{202e}'));
        assert!(shown.contains("\\n") && shown.contains("\\u{1b}") && shown.contains("\\u{202e}"));
        // Positive control: the text itself holds them.
        assert!(text.as_str().contains('\n') && text.as_str().contains('\u{1b}'));
        // Debug, which reaches logs by accident, shows a fingerprint.
        assert!(!format!("{text:?}").contains("forged"));
    }

    #[test]
    fn r_diag_1_csp_hints_name_the_rule_for_each_directive() {
        for (directive, blocked, needle) in [
            ("connect-src", "https://example.com/", "R-SEC-3"),
            (
                "script-src-elem",
                "https://cdn.example/x.js",
                "inline script",
            ),
            ("script-src", "eval", "eval"),
            ("img-src", "https://example.com/a.png", "data:"),
            ("frame-src", "https://example.com/", "R-SEC-2"),
            ("sandbox", "", "stricter"),
        ] {
            let hint = csp_hint(directive, blocked);
            assert!(hint.contains(needle), "{directive}: {hint}");
        }
    }
}
