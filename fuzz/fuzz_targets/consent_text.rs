//! Fuzzes the text of a consent prompt (R-SEC-6, R-SEC-8): the one path by which agent- and
//! page-supplied strings reach host chrome, `display_line`, `display_text` and `display_title`
//! (host-core), with the caps the prompt uses, and `open_url_host` and `safe_link`, which give
//! the host an `app.open_url` prompt shows.
//!
//! The prompt itself (`PromptContent::new`, in lineup-webview-shell, a GTK crate this workspace
//! does not build) is these functions applied to the agent name (64 graphemes), the reason
//! (`display_text`, 1000), each argument's key (40) and string or number value (160), and the
//! capability's headline (120); the rest of it is fixed words and counts.
//!
//! Input: the first byte picks a cap for a fifth run (0 to 255 graphemes); the rest, as lossy
//! UTF-8, is the text.
//!
//! Checks: no panic; no output holds a control or format character, a default-ignorable or
//! bidi control (a ZERO WIDTH JOINER only right before a pictograph, VS16 only right after an
//! emoji), a line break (one-line outputs) or white space other than a single space (and `\n`
//! in `display_text`), nor white space at either end or doubled; each is at most its cap in
//! grapheme clusters plus the `…`; cleaning is idempotent (without a cap); a title is never
//! empty when its fallback is not; a link host is plain lowercase ASCII (punycode) with no
//! white space, `@`, `/` or control character.
#![no_main]

use icu_properties::props::{
    BidiControl, DefaultIgnorableCodePoint, Emoji, ExtendedPictographic, GeneralCategory,
};
use icu_properties::{CodePointMapData, CodePointSetData};
use lineup_host_core::{
    display_line, display_text, display_title, open_url_host, safe_link, LinkPolicy,
    MAX_TITLE_GRAPHEMES,
};
use unicode_segmentation::UnicodeSegmentation as _;

const ZWJ: char = '\u{200D}';
const VS16: char = '\u{FE0F}';

/// The caps of a prompt (`webview-shell/src/consent/mod.rs`).
const AGENT: usize = 64;
const REASON: usize = 1000;
const KEY: usize = 40;
const VALUE: usize = 160;
const HEADLINE: usize = 120;

fn hidden(c: char) -> bool {
    matches!(
        CodePointMapData::<GeneralCategory>::new().get(c),
        GeneralCategory::Control
            | GeneralCategory::Format
            | GeneralCategory::LineSeparator
            | GeneralCategory::ParagraphSeparator
    ) || CodePointSetData::new::<DefaultIgnorableCodePoint>().contains(c)
        || CodePointSetData::new::<BidiControl>().contains(c)
}

/// One line of shown text: only visible characters, single inner spaces.
fn check_line(line: &str, what: &str) {
    let chars: Vec<char> = line.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let next = chars.get(i + 1).copied();
        let before = i.checked_sub(1).map(|j| chars[j]);
        let allowed = match c {
            ZWJ => {
                next.is_some_and(|n| CodePointSetData::new::<ExtendedPictographic>().contains(n))
            }
            VS16 => before.is_some_and(|b| CodePointSetData::new::<Emoji>().contains(b)),
            ' ' => i > 0 && i + 1 < chars.len() && next != Some(' '),
            c if c.is_whitespace() => false,
            c => !hidden(c),
        };
        assert!(allowed, "{what}: U+{:04X} at {i} in {line:?}", u32::from(c));
    }
}

fn check_capped(shown: &str, max: usize, what: &str) {
    let graphemes = shown.graphemes(true).count();
    assert!(
        graphemes <= max.saturating_add(1),
        "{what}: {graphemes} graphemes over the cap {max}"
    );
}

fn one_line(text: &str, max: usize, what: &str) -> String {
    let shown = display_line(text, max);
    assert!(!shown.contains('\n'), "{what}: a line break");
    check_line(&shown, what);
    check_capped(&shown, max, what);
    shown
}

fn lines(text: &str, max: usize) -> String {
    let shown = display_text(text, max);
    assert!(
        !shown.starts_with('\n') && !shown.ends_with('\n'),
        "{shown:?}"
    );
    assert!(
        !shown.contains("\n\n\n"),
        "more than one blank line: {shown:?}"
    );
    for line in shown.split('\n') {
        check_line(line, "display_text");
    }
    check_capped(&shown, max, "display_text");
    shown
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let [cap, rest @ ..] = data else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    for (max, what) in [
        (AGENT, "agent"),
        (KEY, "argument key"),
        (VALUE, "argument value"),
        (HEADLINE, "headline"),
        (usize::from(*cap), "fuzzed cap"),
    ] {
        one_line(&text, max, what);
    }
    lines(&text, REASON);
    lines(&text, usize::from(*cap));

    // Cleaning what is already clean changes nothing.
    let once = display_line(&text, usize::MAX);
    assert_eq!(
        display_line(&once, usize::MAX),
        once,
        "display_line is not idempotent"
    );
    let once = display_text(&text, usize::MAX);
    assert_eq!(
        display_text(&once, usize::MAX),
        once,
        "display_text is not idempotent"
    );

    let title = display_title(Some(&text), "com.example.app");
    check_line(&title, "title");
    check_capped(&title, MAX_TITLE_GRAPHEMES, "title");
    assert!(!title.is_empty(), "an empty title");
    let fallback = display_title(None, &text);
    check_line(&fallback, "fallback title");

    let host = open_url_host(&text);
    let link = safe_link(&text, LinkPolicy::Confirm);
    assert_eq!(
        host.as_ref().ok(),
        link.as_ref().map(|l| &l.host),
        "two link rules"
    );
    assert!(safe_link(&text, LinkPolicy::Off).is_none());
    if let Ok(host) = host {
        assert!(!host.is_empty(), "an empty host from {text:?}");
        assert!(
            host.bytes().all(|b| b.is_ascii_graphic()
                && !b.is_ascii_uppercase()
                && !matches!(b, b'@' | b'/' | b'\\')),
            "host {host:?} from {text:?}"
        );
    }
    if let Some(link) = link {
        assert!(
            link.url.starts_with("http://") || link.url.starts_with("https://"),
            "{}",
            link.url
        );
    }
});
