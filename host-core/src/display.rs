//! Making untrusted strings safe to show in trusted host chrome (R-SEC-6, R-SEC-8).

/// The longest title [`display_title`] returns, in characters (before the ellipsis).
pub const MAX_TITLE_CHARS: usize = 64;

/// A window title from an untrusted app name (R-SEC-8): control, bidi-override, isolate and
/// zero-width format characters are removed, runs of white space fold to one space, and the
/// result is capped at [`MAX_TITLE_CHARS`] characters with `…`. An empty result falls back to
/// `fallback` (typically the app id), sanitised the same way.
///
/// ```
/// use lineup_host_core::display_title;
/// assert_eq!(display_title(Some("天气\u{202E}面板\n"), "com.x.y"), "天气面板");
/// assert_eq!(display_title(Some(" \u{200B} "), "com.x.y"), "com.x.y");
/// ```
pub fn display_title(name: Option<&str>, fallback: &str) -> String {
    let title = clean(name.unwrap_or_default());
    if title.is_empty() {
        clean(fallback)
    } else {
        title
    }
}

fn clean(s: &str) -> String {
    let mut out = String::new();
    let mut count = 0;
    let mut pending_space = false;
    for c in s.chars() {
        if c.is_whitespace() {
            pending_space = !out.is_empty();
            continue;
        }
        if is_hidden(c) {
            continue;
        }
        if count == MAX_TITLE_CHARS {
            out.push('…');
            return out;
        }
        if pending_space {
            out.push(' ');
            pending_space = false;
            count += 1;
            if count == MAX_TITLE_CHARS {
                out.push('…');
                return out;
            }
        }
        out.push(c);
        count += 1;
    }
    out
}

/// Characters that are invisible or reorder text: C0/C1 controls, bidi embeddings, overrides and
/// isolates, marks, zero-width and other format characters.
fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{00AD}'
            | '\u{061C}'
            | '\u{180E}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{206F}'
            | '\u{FEFF}'
            | '\u{FFF9}'..='\u{FFFB}'
            | '\u{E0000}'..='\u{E007F}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r_sec_8_title_strips_bidi_and_controls() {
        assert_eq!(
            display_title(Some("a\u{202E}b\u{2066}c\u{7}d\u{200D}e"), "f.g"),
            "abcde"
        );
        assert_eq!(display_title(Some("  a \t\n b  "), "f.g"), "a b");
    }

    #[test]
    fn r_sec_8_title_is_capped() {
        let long = "界".repeat(100);
        let t = display_title(Some(&long), "f.g");
        assert_eq!(t.chars().count(), MAX_TITLE_CHARS + 1);
        assert!(t.ends_with('…'));
        let exact = "x".repeat(MAX_TITLE_CHARS);
        assert_eq!(display_title(Some(&exact), "f.g"), exact);
    }

    #[test]
    fn r_sec_8_empty_title_falls_back() {
        assert_eq!(display_title(None, "com.a.b"), "com.a.b");
        assert_eq!(display_title(Some("\u{202E}"), "com.a.b"), "com.a.b");
    }
}
