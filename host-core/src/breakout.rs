//! The R-UI-6a scanner: finds the sequences in a bundle's `css` or `js` that would end their
//! element early or keep it from ending, following the HTML Standard's tokenizer states.

use std::fmt;

use crate::source::{SourcePart, SourcePosition};

/// A sequence in `css` or `js` that would end its element early or keep it from ending at its
/// closing tag (R-UI-6a), with where it is and how to write it instead.
///
/// `css` goes into a `<style>` element, which the HTML parser reads as raw text until
/// `</style`: every `</style`, in any ASCII case, is refused.
///
/// `js` goes into a `<script>` element, which the parser reads in the *script data* states of
/// the HTML Standard (§ 13.2.5.4 and 13.2.5.15–13.2.5.31). Two things are refused:
///
/// - every `</script`, in any ASCII case. This is stricter than the tokenizer, which ends the
///   element only at `</script` followed by whitespace, `/` or `>`, and not at all inside a
///   double-escaped section; refusing every `</script` keeps the rule one sequence long, and its
///   fix (`<\/script`) never changes what a string or regex means;
/// - a `<!--` followed by `<script` and whitespace, `/` or `>` (any ASCII case) with no `-->`
///   after that `<script`: the tokenizer is then in the *script data double escaped* state at
///   the end of `js`, where the host's closing `</script>` only leaves the double escape and the
///   element never ends. This check follows the tokenizer exactly: a `<!--` alone, a `<!-->`, or
///   a `<!-- <script> -->` passes, as in the regexes of marked, DOMPurify and highlight.js.
///
/// Nothing is rewritten: a rewrite could change what a regex or string means.
///
/// ```
/// use lineup_host_core::{Breakout, SourcePart};
/// let found = Breakout::find("", "x = '</SCRIPT>'").unwrap();
/// assert_eq!((found.part, found.offset, found.sequence), (SourcePart::Js, 5, "</script"));
/// assert_eq!((found.at.line, found.at.column), (1, 6));
/// assert!(Breakout::find("", "if (/^<!--/.test(s)) {}").is_none());
/// let found = Breakout::find("", "s = '<!--<script>'").unwrap();
/// assert_eq!(found.sequence, "<!-- then <script");
/// assert_eq!(found.to_string(), "contains \"<!--\" at 1:6 followed by \"<script\" at 1:10 \
///     with no \"-->\" after it (line:column, columns in characters), which would keep the \
///     script element from ending at its closing tag: the HTML parser reads the rest as a \
///     double-escaped script (R-UI-6a); write '\\x3c!--' or '\\x3cscript' inside strings and \
///     regexes, or close the '<!--' with '-->'");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Breakout {
    /// The part it is in.
    pub part: SourcePart,
    /// Its byte offset in that part (always on a character boundary); for `<!--` then
    /// `<script`, the offset of the `<!--`.
    pub offset: usize,
    /// The sequence, lowercase: `</style`, `</script` or `<!-- then <script`.
    pub sequence: &'static str,
    /// How to write it instead.
    pub hint: &'static str,
    /// Its line and column, from 1; columns count characters (Unicode scalar values), lines
    /// end at `\n` ([`SourcePosition::of_offset`]).
    pub at: SourcePosition,
    /// For `<!--` then `<script`, where the `<script` is.
    pub script_at: Option<SourcePosition>,
}

const STYLE_END: &str = "</style";
const SCRIPT_END: &str = "</script";
const DOUBLE_ESCAPE: &str = "<!-- then <script";

impl Breakout {
    /// The first breakout of `css`, then of `js`, if any.
    pub fn find(css: &str, js: &str) -> Option<Self> {
        if let Some(offset) = find_ascii_lowercase(css, STYLE_END) {
            return Some(Self::at(
                SourcePart::Css,
                css,
                offset,
                STYLE_END,
                "write '<\\/style' inside strings, or split the sequence",
            ));
        }
        if let Some(offset) = find_ascii_lowercase(js, SCRIPT_END) {
            return Some(Self::at(
                SourcePart::Js,
                js,
                offset,
                SCRIPT_END,
                "write '<\\/script' inside strings, regexes and comments",
            ));
        }
        match script_data_end(js.as_bytes()) {
            ScriptEnd::DoubleEscaped { comment, script } => Some(Self {
                script_at: Some(SourcePosition::of_offset(SourcePart::Js, js, script)),
                ..Self::at(
                    SourcePart::Js,
                    js,
                    comment,
                    DOUBLE_ESCAPE,
                    "write '\\x3c!--' or '\\x3cscript' inside strings and regexes, or close \
                     the '<!--' with '-->'",
                )
            }),
            // An appropriate end tag needs `</script`, refused above.
            ScriptEnd::EndTag(offset) => Some(Self::at(
                SourcePart::Js,
                js,
                offset,
                SCRIPT_END,
                "write '<\\/script' inside strings, regexes and comments",
            )),
            ScriptEnd::Open => None,
        }
    }

    fn at(
        part: SourcePart,
        text: &str,
        offset: usize,
        sequence: &'static str,
        hint: &'static str,
    ) -> Self {
        Self {
            part,
            offset,
            sequence,
            hint,
            at: SourcePosition::of_offset(part, text, offset),
            script_at: None,
        }
    }
}

impl fmt::Display for Breakout {
    /// `contains "<sequence>" at <line>:<column> …, which would …; <hint>`, without the part.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: &str = "(line:column, columns in characters)";
        let (line, column) = (self.at.line, self.at.column);
        match &self.script_at {
            Some(script) => write!(
                f,
                "contains \"<!--\" at {line}:{column} followed by \"<script\" at {}:{} with no \
                 \"-->\" after it {UNITS}, which would keep the script element from ending at \
                 its closing tag: the HTML parser reads the rest as a double-escaped script \
                 (R-UI-6a); {}",
                script.line, script.column, self.hint
            ),
            None => write!(
                f,
                "contains {:?} at {line}:{column} {UNITS}, which would end the {} element \
                 early (R-UI-6a); {}",
                self.sequence,
                if self.part == SourcePart::Css {
                    "style"
                } else {
                    "script"
                },
                self.hint
            ),
        }
    }
}

/// The byte offset of the first `needle` (lowercase ASCII) in `text`, in any ASCII case.
fn find_ascii_lowercase(text: &str, needle: &str) -> Option<usize> {
    text.as_bytes()
        .windows(needle.len())
        .position(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
}

/// How a `<script>` element's content leaves the tokenizer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ScriptEnd {
    /// An appropriate end tag (`</script` and whitespace, `/` or `>`) at this offset ends the
    /// element there.
    EndTag(usize),
    /// The content ends in a double-escaped section, opened by the `<!--` at `comment` and the
    /// `<script` at `script`: a closing `</script>` after it does not end the element.
    DoubleEscaped { comment: usize, script: usize },
    /// A closing `</script>` after the content ends the element.
    Open,
}

/// The tokenizer states a `<script>` element's content passes through, named as in the HTML
/// Standard (§ 13.2.5, "script data … state"). The end tag name states keep how far the name
/// matches `script`; so does the temporary buffer of the double escape states.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    ScriptData,
    LessThanSign,
    EndTagOpen,
    EndTagName(Name),
    EscapeStart,
    EscapeStartDash,
    Escaped,
    EscapedDash,
    EscapedDashDash,
    EscapedLessThanSign,
    EscapedEndTagOpen,
    EscapedEndTagName(Name),
    DoubleEscapeStart(Name),
    DoubleEscaped,
    DoubleEscapedDash,
    DoubleEscapedDashDash,
    DoubleEscapedLessThanSign,
    DoubleEscapeEnd(Name),
}

/// ASCII letters seen so far of a tag name (or the temporary buffer), as whether they still
/// spell `script` and how many there are: enough to tell whether the name *is* `script`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Name {
    len: usize,
    script_so_far: bool,
}

impl Name {
    const EMPTY: Name = Name {
        len: 0,
        script_so_far: true,
    };

    fn push(self, letter: u8) -> Name {
        let script_so_far =
            self.script_so_far && b"script".get(self.len) == Some(&letter.to_ascii_lowercase());
        Name {
            len: self.len.saturating_add(1),
            script_so_far,
        }
    }

    fn is_script(self) -> bool {
        self.script_so_far && self.len == b"script".len()
    }
}

/// Tab, line feed, form feed, space, and carriage return (which the input stream preprocessing
/// turns into a line feed).
fn is_whitespace(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | b'\x0c' | b' ' | b'\r')
}

/// Runs the script data states of the HTML tokenizer over `js`, as if it followed `<script>`.
///
/// Bytes rather than characters: every byte that changes the state is ASCII, and each byte of a
/// multi-byte UTF-8 character falls under "anything else", as the character would. A `\r\n`
/// counts as two whitespace bytes where preprocessing leaves one line feed; the second never
/// changes the state, since a line feed leaves every state it can be read in unchanged.
fn script_data_end(js: &[u8]) -> ScriptEnd {
    use State::*;
    let mut state = ScriptData;
    // Where the `<` of the current `<!--` and of the current `<script` are.
    let (mut less_than, mut comment, mut script) = (0, 0, 0);
    let mut i = 0;
    while i < js.len() {
        let b = js[i];
        // `None`: reconsume this byte in the state set; `Some`: go on with the next byte.
        let next = match state {
            ScriptData => Some(if b == b'<' {
                less_than = i;
                LessThanSign
            } else {
                ScriptData
            }),
            LessThanSign => match b {
                b'/' => Some(EndTagOpen),
                b'!' => Some(EscapeStart),
                _ => {
                    state = ScriptData;
                    None
                }
            },
            EndTagOpen | EscapedEndTagOpen => {
                state = match (b.is_ascii_alphabetic(), state) {
                    (true, EndTagOpen) => EndTagName(Name::EMPTY),
                    (true, _) => EscapedEndTagName(Name::EMPTY),
                    (false, EndTagOpen) => ScriptData,
                    (false, _) => Escaped,
                };
                None
            }
            EndTagName(name) | EscapedEndTagName(name) => {
                if b.is_ascii_alphabetic() {
                    Some(match state {
                        EndTagName(_) => EndTagName(name.push(b)),
                        _ => EscapedEndTagName(name.push(b)),
                    })
                } else if (is_whitespace(b) || b == b'/' || b == b'>') && name.is_script() {
                    return ScriptEnd::EndTag(i - "</script".len());
                } else {
                    state = if matches!(state, EndTagName(_)) {
                        ScriptData
                    } else {
                        Escaped
                    };
                    None
                }
            }
            EscapeStart => {
                if b == b'-' {
                    Some(EscapeStartDash)
                } else {
                    state = ScriptData;
                    None
                }
            }
            EscapeStartDash => {
                if b == b'-' {
                    comment = less_than;
                    Some(EscapedDashDash)
                } else {
                    state = ScriptData;
                    None
                }
            }
            Escaped | EscapedDash | EscapedDashDash => Some(match b {
                b'-' if state == Escaped => EscapedDash,
                b'-' => EscapedDashDash,
                b'<' => {
                    less_than = i;
                    EscapedLessThanSign
                }
                b'>' if state == EscapedDashDash => ScriptData,
                _ => Escaped,
            }),
            EscapedLessThanSign => {
                if b == b'/' {
                    Some(EscapedEndTagOpen)
                } else {
                    state = if b.is_ascii_alphabetic() {
                        DoubleEscapeStart(Name::EMPTY)
                    } else {
                        Escaped
                    };
                    None
                }
            }
            DoubleEscapeStart(name) | DoubleEscapeEnd(name) => {
                let start = matches!(state, DoubleEscapeStart(_));
                if is_whitespace(b) || b == b'/' || b == b'>' {
                    Some(match (start, name.is_script()) {
                        (true, true) => {
                            script = less_than;
                            DoubleEscaped
                        }
                        (true, false) | (false, true) => Escaped,
                        (false, false) => DoubleEscaped,
                    })
                } else if b.is_ascii_alphabetic() {
                    Some(if start {
                        DoubleEscapeStart(name.push(b))
                    } else {
                        DoubleEscapeEnd(name.push(b))
                    })
                } else {
                    state = if start { Escaped } else { DoubleEscaped };
                    None
                }
            }
            DoubleEscaped | DoubleEscapedDash | DoubleEscapedDashDash => Some(match b {
                b'-' if state == DoubleEscaped => DoubleEscapedDash,
                b'-' => DoubleEscapedDashDash,
                b'<' => DoubleEscapedLessThanSign,
                b'>' if state == DoubleEscapedDashDash => ScriptData,
                _ => DoubleEscaped,
            }),
            DoubleEscapedLessThanSign => {
                if b == b'/' {
                    Some(DoubleEscapeEnd(Name::EMPTY))
                } else {
                    state = DoubleEscaped;
                    None
                }
            }
        };
        if let Some(next) = next {
            state = next;
            i += 1;
        }
    }
    match state {
        DoubleEscaped
        | DoubleEscapedDash
        | DoubleEscapedDashDash
        | DoubleEscapedLessThanSign
        | DoubleEscapeEnd(_) => ScriptEnd::DoubleEscaped { comment, script },
        _ => ScriptEnd::Open,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn end(js: &str) -> ScriptEnd {
        script_data_end(js.as_bytes())
    }

    #[test]
    fn r_ui_6a_the_states_follow_the_html_standard() {
        use ScriptEnd::*;
        for (js, expected) in [
            ("", Open),
            ("<!--", Open),
            ("<!-->", Open),
            ("<!--->", Open),
            ("<!-- <scripts>", Open),
            ("<!-- <script", Open),
            ("<!-- <script> -->", Open),
            ("<!-- <script> --->", Open),
            (
                "<!-- <script> -- >",
                DoubleEscaped {
                    comment: 0,
                    script: 5,
                },
            ),
            (
                "<!--<script>",
                DoubleEscaped {
                    comment: 0,
                    script: 4,
                },
            ),
            (
                "a<!-- b <SCRIPT\n",
                DoubleEscaped {
                    comment: 1,
                    script: 8,
                },
            ),
            (
                "<!--<script/",
                DoubleEscaped {
                    comment: 0,
                    script: 4,
                },
            ),
            (
                "<!--<script\r",
                DoubleEscaped {
                    comment: 0,
                    script: 4,
                },
            ),
            (
                "<!--<script\x0c",
                DoubleEscaped {
                    comment: 0,
                    script: 4,
                },
            ),
            (
                "<!--<script\t",
                DoubleEscaped {
                    comment: 0,
                    script: 4,
                },
            ),
            (
                "<!--<script>-",
                DoubleEscaped {
                    comment: 0,
                    script: 4,
                },
            ),
            (
                "<!--<script><",
                DoubleEscaped {
                    comment: 0,
                    script: 4,
                },
            ),
            (
                "<!--<script></",
                DoubleEscaped {
                    comment: 0,
                    script: 4,
                },
            ),
            (
                "<!--<script></scripx>",
                DoubleEscaped {
                    comment: 0,
                    script: 4,
                },
            ),
            ("<!--<script></script>", Open),
            (
                "<!--<script></script><script>",
                DoubleEscaped {
                    comment: 0,
                    script: 21,
                },
            ),
            ("<!-- --> <script>", Open),
            ("<! --<script>", Open),
            ("<!-<script>", Open),
            ("x</script>", EndTag(1)),
            ("x</script ", EndTag(1)),
            ("x</script/", EndTag(1)),
            ("x</scripts>", Open),
            ("<!--</script>", EndTag(4)),
            ("<!--<script>--></script>", EndTag(15)),
            (
                "é<!--<script>",
                DoubleEscaped {
                    comment: 2,
                    script: 6,
                },
            ),
        ] {
            assert_eq!(end(js), expected, "{js:?}");
        }
    }

    #[test]
    fn r_ui_6a_every_break_out_form_is_refused_at_its_position() {
        for (css, js, sequence, at, script_at) in [
            ("", "x='</script>'", SCRIPT_END, (1, 4), None),
            ("", "x\n  '</SCRIPT '", SCRIPT_END, (2, 4), None),
            ("", "'</script/'", SCRIPT_END, (1, 2), None),
            ("", "// </sCrIpTs are refused too", SCRIPT_END, (1, 4), None),
            ("", "s='<!--<script>'", DOUBLE_ESCAPE, (1, 4), Some((1, 8))),
            (
                "",
                "s='<!--'\n+'<script '\n",
                DOUBLE_ESCAPE,
                (1, 4),
                Some((2, 3)),
            ),
            (
                "",
                "'天气' + '<!-- <SCRIPT/'",
                DOUBLE_ESCAPE,
                (1, 9),
                Some((1, 14)),
            ),
            ("a{}</STYLE>", "", STYLE_END, (1, 4), None),
            ("\n\np{content:'</style'}", "", STYLE_END, (3, 12), None),
        ] {
            let found = Breakout::find(css, js).unwrap_or_else(|| panic!("{css:?} {js:?}"));
            assert_eq!(found.sequence, sequence, "{js:?}");
            assert_eq!((found.at.line, found.at.column), at, "{css:?} {js:?}");
            assert_eq!(
                found.script_at.as_ref().map(|p| (p.line, p.column)),
                script_at,
                "{js:?}"
            );
            let text = found.to_string();
            assert!(
                text.contains(&format!("at {}:{}", at.0, at.1)) && text.contains("R-UI-6a"),
                "{text}"
            );
            assert!(text.contains(found.hint), "{text}");
        }
    }

    #[test]
    fn r_ui_6a_a_bare_comment_opener_passes() {
        for js in [
            "x='<!--'",
            "x='<!--' + '-->' + '<script>'",
            "<!-- an old-style comment line\nf()",
            "s.replace(/<!--[\\s\\S]*?-->/g, '')",
            "x='<script>'; y='<!--'",
            "x='<\\/script>'",
            "x='<!--<scripts>'",
            "x='<!--<script'",
        ] {
            assert_eq!(Breakout::find("", js), None, "{js:?}");
        }
        assert_eq!(Breakout::find("/* <!-- <script> */", ""), None);
    }
}
