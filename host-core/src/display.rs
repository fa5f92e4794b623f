//! Making untrusted strings safe to show in trusted host chrome (R-SEC-6, R-SEC-8), by the
//! Unicode character properties and extended grapheme clusters rather than by hand-picked lists.

use icu_properties::props::{
    BidiControl, DefaultIgnorableCodePoint, Emoji, EmojiModifier, ExtendedPictographic,
    GeneralCategory, GraphemeExtend,
};
use icu_properties::{CodePointMapData, CodePointSetData};
use unicode_segmentation::UnicodeSegmentation as _;

/// The longest text [`display_title`] returns, in extended grapheme clusters (user-perceived
/// characters), before the `…` it appends to a cut text.
pub const MAX_TITLE_GRAPHEMES: usize = 64;

/// ZERO WIDTH JOINER: kept only where it joins two pictographs into one emoji.
const ZWJ: char = '\u{200D}';
/// VARIATION SELECTOR-16 (emoji presentation): kept only right after an emoji.
const VS16: char = '\u{FE0F}';

/// Plain text safe to show in host chrome, made from an untrusted string; `fallback` (typically
/// the app id, sanitised the same way) when nothing visible is left.
///
/// This is the one path by which the host shows agent- or page-supplied text in its own UI: the
/// window title from `app.name` (R-SEC-8), and the app name, `reason` and arguments in a consent
/// prompt (R-SEC-6). It
/// - removes every character of general category Cc (controls) or Cf (format), every
///   `Default_Ignorable_Code_Point` (fillers such as U+115F, U+3164, U+FFA0, the combining
///   grapheme joiner, variation selectors, tag characters) and every `Bidi_Control` character
///   (embeddings, overrides, isolates, marks), so text can neither hide nor reorder itself;
/// - keeps U+200D ZERO WIDTH JOINER only between two `Extended_Pictographic` characters (the
///   first possibly followed by its modifiers and VS16), so emoji sequences such as 👨‍👩‍👧 stay
///   whole, and U+FE0F VS16 only right after an `Emoji` character (❤️, keycaps);
/// - folds each run of white space (line breaks and tabs included) to one space and trims both
///   ends;
/// - caps the result at [`MAX_TITLE_GRAPHEMES`] extended grapheme clusters and then appends `…`,
///   never cutting inside a cluster (no half emoji sequence, no base without its combining mark).
///
/// The result is plain text, not markup: a host UI built from HTML must still insert it as text.
///
/// ```
/// use lineup_host_core::display_title;
/// assert_eq!(display_title(Some("天气\u{202E}面板\n"), "com.x.y"), "天气面板");
/// assert_eq!(display_title(Some(" \u{200B}\u{3164} "), "com.x.y"), "com.x.y");
/// assert_eq!(display_title(Some("👨\u{200D}👩\u{200D}👧 a\u{200D}b"), "com.x.y"), "👨\u{200D}👩\u{200D}👧 ab");
/// ```
pub fn display_title(name: Option<&str>, fallback: &str) -> String {
    let title = clean(name.unwrap_or_default());
    if title.is_empty() {
        clean(fallback)
    } else {
        title
    }
}

/// One line of plain text safe to show in host UI, made from an untrusted string and capped at
/// `max_graphemes` extended grapheme clusters plus `…`: [`display_title`]'s cleaning with a
/// cap of the caller's choosing, for short agent strings such as a consent prompt's agent name
/// or an argument's key and value (R-SEC-6). Empty when nothing visible is left.
///
/// ```
/// use lineup_host_core::display_line;
/// assert_eq!(display_line("<b>x</b>\u{202E}\n y", 64), "<b>x</b> y");
/// assert_eq!(display_line("abcdef", 3), "abc…");
/// ```
pub fn display_line(text: &str, max_graphemes: usize) -> String {
    cap(strip(text), max_graphemes)
}

/// Multi-line plain text safe to show in host UI, made from an untrusted string such as an
/// `app.call`'s `reason` (R-SEC-6): each line is cleaned as by [`display_line`] (hidden, control
/// and bidi characters removed, runs of white space folded to one space), line breaks (`\n`,
/// `\r\n`, `\r`, U+2028, U+2029, U+0085, vertical tab, form feed) become `\n`, runs of blank
/// lines become one, blank lines at both ends go, and the whole is capped at `max_graphemes`
/// extended grapheme clusters (a line break counts as one) plus `…`.
///
/// The result is plain text, not markup: insert it as text (`textContent`, a label's text).
///
/// ```
/// use lineup_host_core::display_text;
/// assert_eq!(display_text("\n a \u{202E}b\r\n\r\n\r\nc \n", 100), "a b\n\nc");
/// assert_eq!(display_text("ab\ncd", 4), "ab\nc…");
/// ```
pub fn display_text(text: &str, max_graphemes: usize) -> String {
    let normalized = text.replace("\r\n", "\n");
    let mut lines: Vec<String> = Vec::new();
    for line in normalized.split(is_line_break) {
        let line = strip(line);
        let blank_before = lines.last().is_some_and(String::is_empty);
        if line.is_empty() && (lines.is_empty() || blank_before) {
            continue;
        }
        lines.push(line);
    }
    while lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    cap(lines.join("\n"), max_graphemes)
}

/// The characters [`display_text`] takes as line breaks.
fn is_line_break(c: char) -> bool {
    matches!(
        c,
        '\n' | '\r' | '\u{2028}' | '\u{2029}' | '\u{85}' | '\u{B}' | '\u{C}'
    )
}

/// Removes hidden characters, folds white space, then caps by grapheme clusters.
fn clean(s: &str) -> String {
    cap(strip(s), MAX_TITLE_GRAPHEMES)
}

/// `visible` cut after `max` extended grapheme clusters, white space at the cut removed and `…`
/// appended; unchanged when it is no longer.
fn cap(visible: String, max: usize) -> String {
    let mut graphemes = visible.grapheme_indices(true);
    match graphemes.nth(max) {
        None => visible,
        Some((cut, _)) => {
            let mut out = visible[..cut].trim_end().to_owned();
            out.push('…');
            out
        }
    }
}

/// The characters of `s` that may be shown, with white space folded to single spaces.
fn strip(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut pending_space = false;
    // Whether `out` ends with an Extended_Pictographic character and its extenders: a ZWJ here
    // joins it to a following pictograph.
    let mut after_pictograph = false;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_whitespace() {
            pending_space = !out.is_empty();
            after_pictograph = false;
            continue;
        }
        let keep = match c {
            ZWJ => after_pictograph && chars.peek().is_some_and(|&n| is_pictograph(n)),
            // Not after white space: the space it would follow is written before it.
            VS16 => !pending_space && out.chars().next_back().is_some_and(is_emoji),
            _ => !is_hidden(c),
        };
        if !keep {
            continue;
        }
        if pending_space {
            out.push(' ');
            pending_space = false;
        }
        out.push(c);
        after_pictograph = is_pictograph(c) || (after_pictograph && extends_pictograph(c));
    }
    out
}

/// Invisible characters and those that reorder text: general categories Cc and Cf,
/// `Default_Ignorable_Code_Point` and `Bidi_Control`.
pub(crate) fn is_hidden(c: char) -> bool {
    matches!(
        CodePointMapData::<GeneralCategory>::new().get(c),
        GeneralCategory::Control | GeneralCategory::Format
    ) || CodePointSetData::new::<DefaultIgnorableCodePoint>().contains(c)
        || CodePointSetData::new::<BidiControl>().contains(c)
}

fn is_pictograph(c: char) -> bool {
    CodePointSetData::new::<ExtendedPictographic>().contains(c)
}

fn is_emoji(c: char) -> bool {
    CodePointSetData::new::<Emoji>().contains(c)
}

/// What may stand between a pictograph and the ZWJ that joins it to the next (Unicode's grapheme
/// rule GB11: `Extend*`): VS16, skin-tone modifiers, combining marks.
fn extends_pictograph(c: char) -> bool {
    c == VS16
        || CodePointSetData::new::<EmojiModifier>().contains(c)
        || CodePointSetData::new::<GraphemeExtend>().contains(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Wraps `hidden` between two letters: it must vanish and leave them joined.
    fn between(hidden: &str) -> String {
        display_title(Some(&format!("a{hidden}b")), "f.g")
    }

    /// R-SEC-8, R-SEC-6: every invisible, filler, format, control and bidi character the Unicode
    /// tables know is removed, not only a hand-picked list.
    #[test]
    fn r_sec_8_hidden_characters_are_removed_by_their_unicode_properties() {
        let mut hidden: Vec<(&str, char)> = vec![
            ("combining grapheme joiner", '\u{034F}'),
            ("hangul choseong filler", '\u{115F}'),
            ("hangul jungseong filler", '\u{1160}'),
            ("hangul filler", '\u{3164}'),
            ("halfwidth hangul filler", '\u{FFA0}'),
            ("zero width space", '\u{200B}'),
            ("zero width non-joiner", '\u{200C}'),
            ("left-to-right mark", '\u{200E}'),
            ("right-to-left mark", '\u{200F}'),
            ("arabic letter mark", '\u{061C}'),
            ("byte order mark", '\u{FEFF}'),
            ("soft hyphen", '\u{00AD}'),
            ("mongolian vowel separator", '\u{180E}'),
            ("word joiner", '\u{2060}'),
            ("invisible times", '\u{2062}'),
            ("interlinear annotation anchor", '\u{FFF9}'),
            ("variation selector 1", '\u{FE00}'),
            ("text presentation selector", '\u{FE0E}'),
            ("variation selector 17", '\u{E0100}'),
            ("language tag", '\u{E0001}'),
            ("tag cancel", '\u{E007F}'),
            ("nul", '\u{0}'),
            ("bell", '\u{7}'),
            ("escape", '\u{1B}'),
            ("delete", '\u{7F}'),
            ("c1 control", '\u{80}'),
            ("c1 csi", '\u{9B}'),
            ("zero width joiner between letters", ZWJ),
            ("vs16 after a letter", VS16),
        ];
        let ranges: [(&str, std::ops::RangeInclusive<u32>); 4] = [
            ("musical symbol format", 0x1D173..=0x1D17A),
            ("bidi embedding or override", 0x202A..=0x202E),
            ("bidi isolate", 0x2066..=0x2069),
            ("tag character", 0xE0020..=0xE007E),
        ];
        for (name, range) in ranges {
            hidden.extend(range.filter_map(char::from_u32).map(|c| (name, c)));
        }
        for (name, c) in hidden {
            assert_eq!(
                between(&c.to_string()),
                "ab",
                "{name} U+{:04X} must be removed",
                u32::from(c)
            );
        }
        // All of them at once, and a title made only of them falls back.
        assert_eq!(
            display_title(Some("\u{202E}\u{3164}\u{115F}\u{200B}\u{E0041}"), "com.a.b"),
            "com.a.b"
        );
    }

    #[test]
    fn r_sec_8_emoji_sequences_keep_their_joiners_and_selectors() {
        let table: [(&str, &str, &str); 11] = [
            ("family", "👨\u{200D}👩\u{200D}👧", "👨\u{200D}👩\u{200D}👧"),
            ("red heart", "\u{2764}\u{FE0F}", "\u{2764}\u{FE0F}"),
            (
                "heart on fire",
                "❤\u{FE0F}\u{200D}🔥",
                "❤\u{FE0F}\u{200D}🔥",
            ),
            ("skin tone then zwj", "👩🏽\u{200D}💻", "👩🏽\u{200D}💻"),
            ("keycap", "1\u{FE0F}\u{20E3}", "1\u{FE0F}\u{20E3}"),
            ("flag", "🇫🇷", "🇫🇷"),
            ("zwj at the end", "👨\u{200D}", "👨"),
            ("zwj between emoji and letter", "👨\u{200D}a", "👨a"),
            ("zwj after a space", "👨 \u{200D}👩", "👨 👩"),
            // Found by fuzz/fuzz_targets/consent_text.rs: kept, it stood alone after the space.
            ("vs16 after a space", "\u{2764} \u{FE0F}x", "\u{2764} x"),
            ("vs16 after a line break", "3\n\u{FE0F}", "3"),
        ];
        for (name, input, expected) in table {
            assert_eq!(display_title(Some(input), "f.g"), expected, "{name}");
        }
        assert_eq!(between("\u{200D}"), "ab", "stray zwj between letters");
        assert_eq!(
            display_title(Some("x\u{FE0F}"), "f.g"),
            "x",
            "vs16 after a letter"
        );
    }

    #[test]
    fn r_sec_8_white_space_folds_and_trims() {
        assert_eq!(
            display_title(Some("a\u{202E}b\u{2066}c\u{7}d\u{200D}e"), "f.g"),
            "abcde"
        );
        assert_eq!(display_title(Some("  a \t\n b  "), "f.g"), "a b");
        assert_eq!(
            display_title(Some("a\u{2028}\u{A0}\u{200B} b"), "f.g"),
            "a b"
        );
    }

    #[test]
    fn r_sec_8_title_is_capped_at_whole_graphemes() {
        let long = "界".repeat(100);
        let t = display_title(Some(&long), "f.g");
        assert_eq!(t, format!("{}…", "界".repeat(MAX_TITLE_GRAPHEMES)));
        let exact = "x".repeat(MAX_TITLE_GRAPHEMES);
        assert_eq!(display_title(Some(&exact), "f.g"), exact);
        // 65 graphemes ending in a flag, a combining sequence, a family: cut at 64 whole ones.
        for last in [
            "🇫🇷",
            "e\u{301}\u{323}",
            "👨\u{200D}👩\u{200D}👧",
            "❤\u{FE0F}",
        ] {
            let head = "y".repeat(MAX_TITLE_GRAPHEMES - 1);
            for (second_to_last, expected_last) in [(last, last), ("z", "z")] {
                let title = format!("{head}{second_to_last}{last}");
                let shown = display_title(Some(&title), "f.g");
                assert_eq!(shown, format!("{head}{expected_last}…"), "{last:?}");
                assert_eq!(shown.graphemes(true).count(), MAX_TITLE_GRAPHEMES + 1);
            }
            // 64 graphemes whose last is the sequence: shown whole, no ellipsis.
            let title = format!("{head}{last}");
            assert_eq!(display_title(Some(&title), "f.g"), title, "{last:?}");
        }
        // Many combining marks on one base are one grapheme: never split from their base.
        let heavy = format!(
            "{}a{}",
            "y".repeat(MAX_TITLE_GRAPHEMES - 1),
            "\u{301}".repeat(5)
        );
        assert_eq!(
            display_title(Some(&format!("{heavy}b")), "f.g"),
            format!("{heavy}…")
        );
        // A space at the cut is not left before the ellipsis.
        let spaced = format!("{} b", "y".repeat(MAX_TITLE_GRAPHEMES - 1));
        assert_eq!(
            display_title(Some(&spaced), "f.g"),
            format!("{}…", "y".repeat(MAX_TITLE_GRAPHEMES - 1))
        );
    }

    /// R-SEC-6: the multi-line variant keeps line breaks, and only them, and cleans each line.
    #[test]
    fn r_sec_6_display_text_keeps_line_breaks_and_cleans_each_line() {
        let table: [(&str, &str, &str); 12] = [
            ("plain", "hello", "hello"),
            (
                "markup stays text",
                "<b>x</b><img src=x>",
                "<b>x</b><img src=x>",
            ),
            ("bidi override removed", "abc\u{202E}def", "abcdef"),
            ("crlf is one break", "a\r\nb", "a\nb"),
            ("lone cr", "a\rb", "a\nb"),
            (
                "unicode separators",
                "a\u{2028}b\u{2029}c\u{85}d",
                "a\nb\nc\nd",
            ),
            ("vertical tab and form feed", "a\u{B}b\u{C}c", "a\nb\nc"),
            ("blank runs fold to one", "a\n\n\n\n b", "a\n\nb"),
            ("blank ends trimmed", "\n\n a \n\n", "a"),
            ("spaces fold within a line", "a \t  b\n  c  ", "a b\nc"),
            (
                "line of hidden characters is blank",
                "a\n\u{200B}\u{202E}\nb",
                "a\n\nb",
            ),
            ("nothing visible", "\u{202E}\n\u{3164}", ""),
        ];
        for (name, input, expected) in table {
            assert_eq!(display_text(input, 1000), expected, "{name}");
        }
    }

    #[test]
    fn r_sec_6_display_text_and_line_cap_at_whole_graphemes() {
        let long = "界".repeat(10 * 1024);
        let shown = display_text(&long, 1000);
        assert_eq!(shown, format!("{}…", "界".repeat(1000)));
        assert_eq!(
            display_text("ab\ncd", 3),
            "ab…",
            "a break at the cut is trimmed"
        );
        assert_eq!(display_text("ab\ncd", 5), "ab\ncd");
        assert_eq!(
            display_text("y👨\u{200D}👩\u{200D}👧z", 2),
            "y👨\u{200D}👩\u{200D}👧…"
        );
        assert_eq!(display_line("a\nb", 64), "a b", "one line");
        assert_eq!(display_line("e\u{301}e\u{301}e", 2), "e\u{301}e\u{301}…");
        assert_eq!(display_line("\u{202E}", 8), "", "no fallback");
        assert_eq!(display_line("abc", 0), "…");
    }

    #[test]
    fn r_sec_8_empty_title_falls_back() {
        assert_eq!(display_title(None, "com.a.b"), "com.a.b");
        assert_eq!(display_title(Some("\u{202E}"), "com.a.b"), "com.a.b");
        assert_eq!(display_title(Some(" \u{FFA0} "), "com.a.b"), "com.a.b");
    }
}
