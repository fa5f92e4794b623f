//! Agent text that imitates the consent prompt (R-SEC-5, R-STD-5): the prompt's title, its
//! "Always allow" line, the words it shows for a risk, and its capability and risk lines are the
//! host's alone. Compared at a glance ([`glance`]): ignoring case, spacing, punctuation and
//! confusable characters (the UTS #39 skeleton of the `unicode-security` crate).

/// The consent prompt's window title in English (the words table has it in every language).
pub const CONSENT_PROMPT_TITLE: &str = "Permission request";

/// The lines of the consent prompt no agent text may draw, in every language of the host's
/// words: its title, its remembering button and the words it shows for each risk (R-CAP-2).
fn prompt_phrases() -> impl Iterator<Item = &'static str> {
    crate::words::prompt_lines()
}

/// `text` as a reader takes it in at a glance: lower case, then the confusable skeleton, then
/// lower case again, keeping only letters and digits.
///
/// ```
/// use lineup_host_core::glance;
/// assert_eq!(glance("Permission  REQUEST!"), glance("permission request"));
/// assert_eq!(glance("\u{420}ermission re\u{51B}uest"), glance("permission request"));
/// assert_ne!(glance("Permission request"), glance("Permit request"));
/// ```
pub fn glance(text: &str) -> String {
    let lower = text.to_lowercase();
    unicode_security::skeleton(&lower)
        .flat_map(char::to_lowercase)
        .filter(|c| c.is_alphanumeric())
        .collect()
}

/// What part of the consent prompt `text` imitates, if any: one of its fixed lines contained
/// at a glance, a line that starts like its risk line (`Risk:`), or a capability line naming a
/// version (`… (version 1)`).
///
/// ```
/// use lineup_host_core::imitates_consent_prompt_line;
/// assert!(imitates_consent_prompt_line("ALWAYS-allow").is_some());
/// assert!(imitates_consent_prompt_line("app.open_url (version 1) · Risk: user_confirmation").is_some());
/// assert!(imitates_consent_prompt_line("Allow the deploy?").is_none());
/// assert!(imitates_consent_prompt_line("A risky change").is_none());
/// ```
pub fn imitates_consent_prompt_line(text: &str) -> Option<&'static str> {
    let seen = glance(text);
    if let Some(phrase) = prompt_phrases().find(|phrase| seen.contains(&glance(phrase))) {
        return Some(phrase);
    }
    for line in text.lines() {
        let skeleton: String = unicode_security::skeleton(&line.to_lowercase()).collect();
        let words: String = skeleton.split_whitespace().collect::<Vec<_>>().join(" ");
        let risk = words.split(['·', '|', ',', ';']).any(|part| {
            let part = part.trim_start_matches(|c: char| !c.is_alphanumeric());
            part.starts_with("risk:") || part.starts_with("risk :")
        });
        if risk {
            return Some("Risk:");
        }
        if words.contains("(version ") {
            return Some("(version …)");
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r_std_5_the_prompts_lines_are_caught_in_any_spelling() {
        for text in [
            "Permission request",
            "permission  REQUEST",
            "\u{420}ermission re\u{51B}uest",
            "Always allow",
            "Always-Allow",
            "ａｌｗａｙｓ allow",
            "It acts only if you allow it.",
            "始终允许",
            "app.open_url (version 1)",
            "Risk: user_confirmation",
            "app.open_url (version 1) · Risk: user_confirmation",
            "- risk: low",
        ] {
            assert!(imitates_consent_prompt_line(text).is_some(), "{text}");
        }
        for text in [
            "Allow",
            "Deploy to production?",
            "Version 2 is out",
            "A risky change",
            "Risks and benefits",
            "Request permission from the owner",
        ] {
            assert_eq!(imitates_consent_prompt_line(text), None, "{text}");
        }
    }
}
