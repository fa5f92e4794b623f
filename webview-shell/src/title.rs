//! Window titles the user can trust (R-SEC-5): every Surface window carries a host-owned marker
//! after the name the agent chose, and no Surface title equals or imitates the consent prompt's
//! title, compared after [`display_title`]'s cleaning, ignoring case, spacing, punctuation and
//! confusable characters (the UTS #39 skeleton of the `unicode-security` crate).

use lineup_host_core::{display_title, glance};

/// The consent prompt's window title; no Surface window may show it or an imitation of it.
pub use lineup_host_core::CONSENT_PROMPT_TITLE;

/// The host-owned marker every Surface window title ends with. The agent's name always comes
/// before it, so a name cannot move it or stand in for the whole title.
pub const SURFACE_TITLE_MARKER: &str = " — LineUp Surface";

/// What a Surface window shows when neither its name nor its app id is fit to show.
const FALLBACK_NAME: &str = "Untitled";

/// The title of a Surface window: the app's `name` (else its `id`) as [`display_title`] cleans
/// it, then [`SURFACE_TITLE_MARKER`]. A name that imitates the consent prompt's title
/// ([`imitates_consent_prompt`]) is replaced by the app id, and an id that does too by
/// `Untitled` (R-SEC-5).
///
/// ```
/// use lineup_webview_shell::surface_window_title;
/// assert_eq!(surface_window_title(Some("Weather"), "com.x.weather"), "Weather — LineUp Surface");
/// assert_eq!(
///     surface_window_title(Some("Permission request"), "com.x.p"),
///     "com.x.p — LineUp Surface"
/// );
/// ```
pub fn surface_window_title(name: Option<&str>, id: &str) -> String {
    let mut shown = display_title(name, id);
    if imitates_consent_prompt(&shown) {
        tracing::warn!("a Surface named like the consent prompt is titled by its app id (R-SEC-5)");
        shown = display_title(None, id);
        if imitates_consent_prompt(&shown) {
            shown = FALLBACK_NAME.to_owned();
        }
    }
    format!("{shown}{SURFACE_TITLE_MARKER}")
}

/// Whether `title` equals or contains the consent prompt's title, ignoring case, spacing,
/// punctuation and confusable characters (`Реrmission Request` with Cyrillic letters,
/// `PERMISSION-REQUEST`, `Permission  request!`, `Permissionrequest`).
///
/// ```
/// use lineup_webview_shell::imitates_consent_prompt;
/// assert!(imitates_consent_prompt("Permission request"));
/// assert!(imitates_consent_prompt("\u{420}ermission re\u{51B}uest"));
/// assert!(!imitates_consent_prompt("Weather"));
/// ```
pub fn imitates_consent_prompt(title: &str) -> bool {
    glance(&display_title(Some(title), "")).contains(&glance(CONSENT_PROMPT_TITLE))
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
            let shown = surface_window_title(Some(title), "com.x.app");
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
                surface_window_title(Some(name), "com.x.app"),
                format!("{name}{SURFACE_TITLE_MARKER}")
            );
        }
        assert_eq!(
            surface_window_title(None, "permission.request"),
            format!("Untitled{SURFACE_TITLE_MARKER}")
        );
        assert!(!imitates_consent_prompt(&surface_window_title(
            Some("Weather"),
            "com.x.app"
        )));
    }
}
