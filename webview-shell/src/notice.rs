//! The activity notice (original §5.3): when a call runs with nothing of it visible to the user
//! (`display_only`, or a grant remembered earlier), the host shows a small, host-owned,
//! non-blocking notice naming the capability, the agent and the reason. It takes no focus and no
//! input, and goes away by itself after [`NOTICE_DURATION`]; a newer notice replaces it. The
//! text here; the window (or, with a standby screen, the overlay in its colours) in `platform/`.

use std::time::Duration;

use lineup_host_core::{display_line, Activity};

/// How long a notice stays on screen.
pub const NOTICE_DURATION: Duration = Duration::from_secs(8);

/// The title of the notice's own window (desktop hosts): the host's, never a page's. The
/// capability's name follows it.
pub const NOTICE_TITLE: &str = "LineUp activity";

/// The longest reason a notice shows, in characters (grapheme clusters); a longer one is cut
/// with `…`.
const MAX_REASON_CHARS: usize = 160;

/// The longest agent identity a notice shows.
const MAX_AGENT_CHARS: usize = 64;

/// What a notice says, as plain text lines (never markup): the agent's reason is escaped and
/// capped (R-SEC-6).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActivityNotice {
    /// `clipboard.write ran`.
    pub heading: String,
    /// `for agent a1 · a remembered grant`.
    pub detail: String,
    /// The agent's reason, one line.
    pub reason: String,
}

impl ActivityNotice {
    /// What the notice of `activity` says.
    pub fn of(activity: &Activity) -> Self {
        Self::new(
            activity.capability.as_str(),
            activity.agent.as_ref().map(|a| a.as_str()),
            activity.grant(),
            &activity.reason,
        )
    }

    fn new(capability: &str, agent: Option<&str>, grant: &str, reason: &str) -> Self {
        let agent = match agent {
            Some(agent) => format!("agent {}", display_line(agent, MAX_AGENT_CHARS)),
            None => "the agent".to_owned(),
        };
        Self {
            heading: format!("{capability} ran"),
            detail: format!("for {agent} · {grant}"),
            reason: display_line(reason, MAX_REASON_CHARS),
        }
    }

    /// The notice window's title: [`NOTICE_TITLE`] and the capability.
    pub fn window_title(&self) -> String {
        format!("{NOTICE_TITLE}: {}", self.heading)
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
        let notice = ActivityNotice::new("test.count", Some("a1"), "display_only", &reason);
        assert_eq!(notice.heading, "test.count ran");
        assert_eq!(notice.detail, "for agent a1 · display_only");
        assert!(!notice.reason.contains('\n') && !notice.reason.contains('\u{202E}'));
        assert!(notice.reason.chars().count() <= MAX_REASON_CHARS + 1);
        assert!(notice.reason.ends_with('…'), "{}", notice.reason);
        assert_eq!(notice.window_title(), "LineUp activity: test.count ran");
        let unvouched = ActivityNotice::new("x.y", None, "a remembered grant", "r");
        assert_eq!(unvouched.detail, "for the agent · a remembered grant");
    }
}
