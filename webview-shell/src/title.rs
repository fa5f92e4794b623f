//! Window titles the user can trust (R-SEC-5): every Surface window carries a host-owned marker
//! after the name the agent chose, and no Surface title equals or imitates the consent prompt's
//! title, compared after [`display_title`]'s cleaning, ignoring case, spacing, punctuation and
//! confusable characters (the UTS #39 skeleton of the `unicode-security` crate).

use lineup_host_core::{display_title, glance, host_word, host_word_everywhere, LanguageTag};

/// The consent prompt's window title; no Surface window may show it or an imitation of it.
pub use lineup_host_core::CONSENT_PROMPT_TITLE;

/// The host-owned marker every Surface window title ends with, in English (the host's words
/// table has it in every language). The agent's name always comes before it, so a name cannot
/// move it or stand in for the whole title.
pub const SURFACE_TITLE_MARKER: &str = " — LineUp Surface";

/// The title of a Surface window: the app's `name` (else its `id`) as [`display_title`] cleans
/// it, then the host's marker in `language` ([`SURFACE_TITLE_MARKER`] in English). A name that
/// imitates the consent prompt's title in any language of the host's words
/// ([`imitates_consent_prompt`]) is replaced by the app id, and an id that does too by
/// `Untitled` in `language` (R-SEC-5).
///
/// ```
/// use lineup_host_core::LanguageTag;
/// use lineup_webview_shell::surface_window_title;
/// let en = LanguageTag::english();
/// assert_eq!(surface_window_title(Some("Weather"), "com.x.weather", &en), "Weather — LineUp Surface");
/// assert_eq!(
///     surface_window_title(Some("Permission request"), "com.x.p", &en),
///     "com.x.p — LineUp Surface"
/// );
/// let zh = LanguageTag::try_from("zh-CN").unwrap();
/// assert_eq!(surface_window_title(Some("权限请求"), "com.x.p", &zh), "com.x.p — LineUp 界面");
/// ```
pub fn surface_window_title(name: Option<&str>, id: &str, language: &LanguageTag) -> String {
    let mut shown = display_title(name, id);
    if imitates_consent_prompt(&shown) {
        tracing::warn!("a Surface named like the consent prompt is titled by its app id (R-SEC-5)");
        shown = display_title(None, id);
        if imitates_consent_prompt(&shown) {
            shown = host_word(language, "untitled")
                .unwrap_or_default()
                .to_owned();
        }
    }
    let marker = host_word(language, "surface_marker").unwrap_or(SURFACE_TITLE_MARKER);
    format!("{shown}{marker}")
}

/// Whether `title` equals or contains the consent prompt's title in any language of the host's
/// words, ignoring case, spacing, punctuation and confusable characters (`Реrmission Request`
/// with Cyrillic letters, `PERMISSION-REQUEST`, `Permission  request!`, `Permissionrequest`,
/// `权限请求`).
///
/// ```
/// use lineup_webview_shell::imitates_consent_prompt;
/// assert!(imitates_consent_prompt("Permission request"));
/// assert!(imitates_consent_prompt("\u{420}ermission re\u{51B}uest"));
/// assert!(imitates_consent_prompt("紧急：权限请求"));
/// assert!(!imitates_consent_prompt("Weather"));
/// ```
pub fn imitates_consent_prompt(title: &str) -> bool {
    let seen = glance(&display_title(Some(title), ""));
    host_word_everywhere("prompt_title").any(|prompt| seen.contains(&glance(prompt)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r_sec_5_imitations_of_the_prompt_title_are_caught() {
        for title in [
            "Permission request",
            "permission REQUEST",
            "Permission  request",
            "Permission-request!",
            "Permissionrequest",
            "\u{420}ermission request",           // Cyrillic Er
            "Permissi\u{43E}n request",           // Cyrillic o
            "Perm\u{456}ssion request",           // Cyrillic i
            "Permission r\u{435}quest",           // Cyrillic ie
            "Permission\u{200B} request",         // zero-width space
            "Permission\u{202E} request",         // bidi override
            "\u{FF30}ermission request",          // fullwidth P
            "Urgent: Permission request pending", // contains it
        ] {
            assert!(imitates_consent_prompt(title), "{title:?}");
            let shown = surface_window_title(Some(title), "com.x.app", &LanguageTag::english());
            assert_eq!(
                shown,
                format!("com.x.app{SURFACE_TITLE_MARKER}"),
                "{title:?}"
            );
        }
    }

    #[test]
    fn r_sec_5_ordinary_names_keep_their_title_with_the_marker_positive_control() {
        for name in ["Weather", "天气面板", "Permissions", "Request a ride"] {
            assert!(!imitates_consent_prompt(name), "{name:?}");
            assert_eq!(
                surface_window_title(Some(name), "com.x.app", &LanguageTag::english()),
                format!("{name}{SURFACE_TITLE_MARKER}")
            );
        }
        assert_eq!(
            surface_window_title(None, "permission.request", &LanguageTag::english()),
            format!("Untitled{SURFACE_TITLE_MARKER}")
        );
        assert!(!imitates_consent_prompt(&surface_window_title(
            Some("Weather"),
            "com.x.app",
            &LanguageTag::english()
        )));
    }

    #[test]
    fn r_sec_5_r_std_9_the_prompt_title_in_chinese_is_refused_too_and_titles_speak_the_language() {
        let zh = LanguageTag::try_from("zh-CN").unwrap_or_else(|_| LanguageTag::english());
        for title in ["权限请求", "紧急 权限 请求！"] {
            assert!(imitates_consent_prompt(title), "{title:?}");
            assert_eq!(
                surface_window_title(Some(title), "com.x.app", &zh),
                "com.x.app — LineUp 界面"
            );
        }
        assert_eq!(
            surface_window_title(None, "权限请求", &zh),
            "未命名 — LineUp 界面"
        );
        // Positive control: a Chinese name that is not the prompt's keeps its title.
        assert_eq!(
            surface_window_title(Some("天气面板"), "com.x.app", &zh),
            "天气面板 — LineUp 界面"
        );
    }
}
