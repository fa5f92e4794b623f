//! The activity notice (original §5.3): when a call runs with nothing of it visible to the user
//! (`display_only`, or a grant remembered earlier), the host shows a small, host-owned,
//! non-blocking notice naming the capability, the agent and the reason. It takes no focus and no
//! input, and goes away by itself after [`NOTICE_DURATION`]; a newer notice replaces it. The
//! text here; the window (or, with a standby screen, the overlay in its colours) in `platform/`.

use std::time::Duration;

use lineup_host_core::{display_line, host_word, host_word_with, Activity, LanguageTag};

/// How long a notice stays on screen.
pub const NOTICE_DURATION: Duration = Duration::from_secs(8);

/// The title of the notice's own window (desktop hosts) in English: the host's, never a
/// page's; in the host context's language it comes from the host's words table. The
/// capability's name follows it.
pub const NOTICE_TITLE: &str = "LineUp activity";

/// The longest reason a notice shows, in characters (grapheme clusters); a longer one is cut
/// with `…`.
const MAX_REASON_CHARS: usize = 160;

/// The longest agent identity a notice shows.
const MAX_AGENT_CHARS: usize = 64;

/// What a notice says, as plain text lines (never markup): the agent's reason is escaped and
/// capped (R-SEC-6); the host's words are in the host context's language (R-STD-9).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActivityNotice {
    /// The notice window's title: `LineUp activity` in the notice's language.
    pub title: String,
    /// `clipboard.write ran`.
    pub heading: String,
    /// `for agent a1 · a remembered grant`.
    pub detail: String,
    /// The agent's reason, one line.
    pub reason: String,
}

impl ActivityNotice {
    /// What the notice of `activity` says in `language`.
    pub fn of(activity: &Activity, language: &LanguageTag) -> Self {
        Self::new(
            activity.capability.as_str(),
            activity.agent.as_ref().map(|a| a.as_str()),
            activity.grant_in(language),
            &activity.reason,
            language,
        )
    }

    fn new(
        capability: &str,
        agent: Option<&str>,
        grant: &str,
        reason: &str,
        language: &LanguageTag,
    ) -> Self {
        let agent = match agent {
            Some(agent) => host_word_with(
                language,
                "for_agent",
                &display_line(agent, MAX_AGENT_CHARS),
                0,
            ),
            None => host_word_with(language, "for_the_agent", "", 0),
        };
        Self {
            title: host_word(language, "notice_title")
                .unwrap_or(NOTICE_TITLE)
                .to_owned(),
            heading: host_word_with(language, "ran", capability, 0),
            detail: format!("{agent} · {grant}"),
            reason: display_line(reason, MAX_REASON_CHARS),
        }
    }

    /// The notice window's title: its [`title`](ActivityNotice::title) and the capability.
    pub fn window_title(&self) -> String {
        format!("{}: {}", self.title, self.heading)
    }

    /// The text as one block, for a single label.
    pub fn text(&self) -> String {
        format!("{}\n{}\n{}", self.heading, self.detail, self.reason)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r_sec_6_a_notice_is_plain_one_line_text_with_a_capped_reason() {
        let reason = format!("<b>bold</b>\u{202E}\n{}", "long ".repeat(100));
        let en = LanguageTag::english();
        let notice = ActivityNotice::new("test.count", Some("a1"), "display_only", &reason, &en);
        assert_eq!(notice.heading, "test.count ran");
        assert_eq!(notice.detail, "for agent a1 · display_only");
        assert!(!notice.reason.contains('\n') && !notice.reason.contains('\u{202E}'));
        assert!(notice.reason.chars().count() <= MAX_REASON_CHARS + 1);
        assert!(notice.reason.ends_with('…'), "{}", notice.reason);
        assert_eq!(notice.window_title(), "LineUp activity: test.count ran");
        let unvouched = ActivityNotice::new("x.y", None, "a remembered grant", "r", &en);
        assert_eq!(unvouched.detail, "for the agent · a remembered grant");
    }

    #[test]
    fn r_std_9_a_notice_speaks_the_host_context_language() {
        let zh = LanguageTag::try_from("zh-CN").unwrap_or_else(|_| LanguageTag::english());
        let notice = ActivityNotice::new("test.count", Some("a1"), "仅显示", "r", &zh);
        assert_eq!(notice.heading, "test.count 已执行");
        assert_eq!(notice.detail, "代表智能体 a1 · 仅显示");
        assert_eq!(notice.window_title(), "LineUp 活动: test.count 已执行");
    }
}
