//! What the host tells an MCP App view about itself in its `ui/initialize` answer (R-MCP-8):
//! its name and version, its look, its language and time zone ([`McpFacts`]); the answer itself is host-core's pure
//! [`host_reply`](lineup_host_core::mcp_host::host_reply).

use lineup_host_core::mcp_host::{HostFacts, McpTheme};
use lineup_host_core::LanguageTag;
use lineup_webview_shell::Theme;

/// `hostInfo.name` and the start of `hostContext.userAgent`.
const HOST_NAME: &str = "lineup-host";

/// What the host knows of itself for its MCP App views: the builder's theme (the desktop's is
/// read at each answer), the time zone read at start, and whether the agent declared sampling.
pub(super) struct McpFacts {
    theme: Theme,
    time_zone: Option<String>,
    sampling: bool,
}

impl McpFacts {
    /// The facts of a host of `theme` whose agent declared sampling or not; the time zone is
    /// read now ([`time_zone`]).
    pub(super) fn new(theme: Theme, sampling: bool) -> Self {
        Self {
            theme,
            time_zone: time_zone(),
            sampling,
        }
    }

    /// The facts of a `ui/initialize` answer now, in `language`.
    pub(super) fn facts(&self, language: &LanguageTag) -> HostFacts {
        let mut facts = HostFacts::new(HOST_NAME, env!("CARGO_PKG_VERSION"));
        facts.theme = if lineup_webview_shell::theme_is_dark(self.theme) {
            McpTheme::Dark
        } else {
            McpTheme::Light
        };
        facts.locale = language.as_str().to_owned();
        facts.time_zone.clone_from(&self.time_zone);
        facts.sampling = self.sampling;
        facts
    }
}

/// The system's IANA time zone: `TZ` when it names one, else `/etc/timezone`, else where
/// `/etc/localtime` links into a `zoneinfo` folder; `None` when none says.
fn time_zone() -> Option<String> {
    let named = |text: &str| {
        let text = text.trim().trim_start_matches(':');
        let name = match text.rsplit_once("zoneinfo/") {
            Some((_, name)) => name,
            None => text,
        };
        let iana = !name.is_empty()
            && !name.starts_with('/')
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "/_-+".contains(c));
        iana.then(|| name.to_owned())
    };
    std::env::var("TZ")
        .ok()
        .and_then(|tz| named(&tz))
        .or_else(|| {
            let text = std::fs::read_to_string("/etc/timezone").ok()?;
            named(text.lines().next()?)
        })
        .or_else(|| {
            let link = std::fs::read_link("/etc/localtime").ok()?;
            let link = link.to_string_lossy();
            link.contains("zoneinfo/").then(|| named(&link)).flatten()
        })
}
