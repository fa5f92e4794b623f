//! `kiosk.toml`: what a kiosk connects to, where it shows Surfaces and what it shows meanwhile.
//! Every error names the file, the line and column, and the key.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

use lineup_host::{CursorPolicy, MonitorChoice, StandbyColor, StandbyScreen};

use super::config_error::line_column;
use serde::Deserialize;
use toml::Spanned;

/// A read and checked `kiosk.toml`.
#[derive(Debug)]
pub(crate) struct KioskConfig {
    pub(crate) agent: AgentConfig,
    pub(crate) monitor: MonitorChoice,
    pub(crate) cursor: CursorPolicy,
    pub(crate) allow_close: bool,
    pub(crate) standby: StandbyScreen,
    pub(crate) regions: Vec<Region>,
    pub(crate) host: HostConfig,
}

/// The `[agent]` table: the WebSocket agent link.
#[derive(Debug)]
pub(crate) struct AgentConfig {
    pub(crate) url: String,
    pub(crate) conversation: String,
    pub(crate) agent_id: String,
    pub(crate) token_file: Option<PathBuf>,
    pub(crate) trusted_roots: Option<PathBuf>,
    pub(crate) grace: Duration,
}

/// The `[host]` table.
#[derive(Debug)]
pub(crate) struct HostConfig {
    pub(crate) client_id: String,
    pub(crate) data_dir: Option<PathBuf>,
    pub(crate) bundle_policy: String,
    pub(crate) max_surfaces: usize,
    /// Whether the host renders the standard components itself (R-STD-13), in the regions.
    pub(crate) standard_components: bool,
}

/// One `[[region]]`: a rectangle of the monitor, in percent, and which Surfaces go there.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Region {
    pub(crate) name: String,
    pub(crate) x: f64,
    pub(crate) y: f64,
    pub(crate) width: f64,
    pub(crate) height: f64,
    pub(crate) instances: Vec<String>,
    pub(crate) apps: Vec<String>,
    pub(crate) default: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    agent: Spanned<AgentTable>,
    #[serde(default)]
    display: DisplayTable,
    #[serde(default)]
    standby: StandbyTable,
    #[serde(default, rename = "region")]
    regions: Vec<Spanned<RegionTable>>,
    #[serde(default)]
    host: HostTable,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AgentTable {
    url: Spanned<String>,
    conversation: String,
    agent_id: String,
    token_file: Option<PathBuf>,
    trusted_roots: Option<PathBuf>,
    #[serde(default = "default_grace")]
    grace_secs: Spanned<u64>,
}

fn default_grace() -> Spanned<u64> {
    Spanned::new(0..0, 300)
}

#[derive(Deserialize)]
#[serde(untagged)]
enum MonitorValue {
    Index(usize),
    Name(String),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DisplayTable {
    #[serde(default = "default_monitor")]
    monitor: MonitorValue,
    #[serde(default = "default_cursor")]
    cursor: Spanned<String>,
    #[serde(default = "default_cursor_idle")]
    cursor_idle_secs: u64,
    #[serde(default)]
    allow_close: bool,
}

impl Default for DisplayTable {
    fn default() -> Self {
        Self {
            monitor: default_monitor(),
            cursor: default_cursor(),
            cursor_idle_secs: default_cursor_idle(),
            allow_close: false,
        }
    }
}

fn default_monitor() -> MonitorValue {
    MonitorValue::Index(0)
}

fn default_cursor() -> Spanned<String> {
    Spanned::new(0..0, "idle".to_owned())
}

fn default_cursor_idle() -> u64 {
    3
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct StandbyTable {
    title: Option<String>,
    message: Option<String>,
    background: Option<Spanned<String>>,
    foreground: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RegionTable {
    name: String,
    x: Spanned<f64>,
    y: Spanned<f64>,
    width: Spanned<f64>,
    height: Spanned<f64>,
    #[serde(default)]
    instances: Vec<String>,
    #[serde(default)]
    apps: Vec<String>,
    #[serde(default)]
    default: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HostTable {
    #[serde(default = "default_client_id")]
    client_id: String,
    data_dir: Option<PathBuf>,
    #[serde(default = "default_policy")]
    bundle_policy: Spanned<String>,
    #[serde(default = "default_max_surfaces")]
    max_surfaces: usize,
    #[serde(default = "default_true")]
    standard_components: bool,
}

impl Default for HostTable {
    fn default() -> Self {
        Self {
            client_id: default_client_id(),
            data_dir: None,
            bundle_policy: default_policy(),
            max_surfaces: default_max_surfaces(),
            standard_components: true,
        }
    }
}

fn default_client_id() -> String {
    "lineup-kiosk".to_owned()
}

fn default_policy() -> Spanned<String> {
    Spanned::new(0..0, "allow".to_owned())
}

fn default_true() -> bool {
    true
}

fn default_max_surfaces() -> usize {
    8
}

/// The bundle policies `[host] bundle_policy` takes (those of `lineup host --bundle-policy`
/// that need no further list).
const POLICIES: [&str; 4] = [
    "allow",
    "require-integrity",
    "signed-only",
    "app-center-only",
];

impl KioskConfig {
    /// Reads and checks `path`.
    pub(crate) fn read(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
        Self::parse(path, &text)
    }

    /// Checks `text`, the contents of `path`.
    pub(crate) fn parse(path: &Path, text: &str) -> Result<Self, String> {
        let at = |span: Range<usize>, key: &str, message: &str| {
            let (line, column) = line_column(text, span.start);
            format!("{}:{line}:{column}: {key}: {message}", path.display())
        };
        let file: File = serde_path_to_error::deserialize(toml::Deserializer::new(text))
            .map_err(|e| super::config_error::describe(path, text, &e))?;

        let agent_span = file.agent.span();
        let agent = file.agent.into_inner();
        let url = agent.url.get_ref().clone();
        if let Err(e) = lineup_transport::link::check_url(&url) {
            let e = e.strip_prefix("--connect ").unwrap_or(&e);
            return Err(at(agent.url.span(), "agent.url", e));
        }
        if *agent.grace_secs.get_ref() == 0 || *agent.grace_secs.get_ref() > 86_400 {
            let span = if agent.grace_secs.span().is_empty() {
                agent_span.clone()
            } else {
                agent.grace_secs.span()
            };
            return Err(at(
                span,
                "agent.grace_secs",
                &format!(
                    "{} is outside 1 ..= 86400 seconds",
                    agent.grace_secs.get_ref()
                ),
            ));
        }

        let display = file.display;
        let cursor = match display.cursor.get_ref().as_str() {
            "idle" => {
                CursorPolicy::HiddenWhenIdle(Duration::from_secs(display.cursor_idle_secs.max(1)))
            }
            "hidden" => CursorPolicy::Hidden,
            "visible" => CursorPolicy::Visible,
            other => {
                return Err(at(
                    display.cursor.span(),
                    "display.cursor",
                    &format!("{other:?} is not one of \"idle\", \"hidden\", \"visible\""),
                ))
            }
        };
        let monitor = match display.monitor {
            MonitorValue::Index(i) => MonitorChoice::Index(i),
            MonitorValue::Name(name) => MonitorChoice::Name(name),
        };

        let mut standby =
            StandbyScreen::new(file.standby.title.unwrap_or_else(|| "LineUp".to_owned()))
                .message(file.standby.message.unwrap_or_default());
        let color = |value: Option<Spanned<String>>, key: &str, fallback: StandbyColor| {
            value.map_or(Ok(fallback), |v| {
                v.get_ref()
                    .parse::<StandbyColor>()
                    .map_err(|e| at(v.span(), key, &e))
            })
        };
        let background = color(
            file.standby.background,
            "standby.background",
            StandbyColor::rgb(0x10, 0x24, 0x3a),
        )?;
        let foreground = color(
            file.standby.foreground,
            "standby.foreground",
            StandbyColor::rgb(0xff, 0xff, 0xff),
        )?;
        standby = standby.colors(background, foreground);

        let mut regions = Vec::new();
        for (index, spanned) in file.regions.into_iter().enumerate() {
            let span = spanned.span();
            let r = spanned.into_inner();
            let key = format!("region[{index}] ({:?})", r.name);
            for (field, value) in [
                ("x", &r.x),
                ("y", &r.y),
                ("width", &r.width),
                ("height", &r.height),
            ] {
                if !(0.0..=100.0).contains(value.get_ref()) {
                    return Err(at(
                        value.span(),
                        &format!("{key}.{field}"),
                        &format!(
                            "{} is outside 0 ..= 100 (percent of the monitor)",
                            value.get_ref()
                        ),
                    ));
                }
            }
            let region = Region {
                name: r.name,
                x: r.x.into_inner(),
                y: r.y.into_inner(),
                width: r.width.into_inner(),
                height: r.height.into_inner(),
                instances: r.instances,
                apps: r.apps,
                default: r.default,
            };
            if region.x + region.width > 100.0 || region.y + region.height > 100.0 {
                return Err(at(
                    span,
                    &key,
                    "reaches past the monitor's edge (x + width and y + height must be at most 100)",
                ));
            }
            if region.width == 0.0 || region.height == 0.0 {
                return Err(at(span, &key, "has no area"));
            }
            if regions.iter().any(|o: &Region| o.name == region.name) {
                return Err(at(span, &key, "has the name of an earlier region"));
            }
            // A Surface drawn over another is hidden from the screen: regions tile, never stack.
            if let Some((other, o)) = regions
                .iter()
                .enumerate()
                .find(|(_, o)| overlaps(o, &region))
            {
                return Err(at(
                    span,
                    &key,
                    &format!("overlaps region[{other}] ({:?})", o.name),
                ));
            }
            regions.push(region);
        }
        if regions.iter().filter(|r| r.default).count() > 1 {
            return Err(format!(
                "{}: region: more than one region has default = true",
                path.display()
            ));
        }
        if regions.is_empty() {
            regions.push(Region {
                name: "screen".to_owned(),
                x: 0.0,
                y: 0.0,
                width: 100.0,
                height: 100.0,
                instances: Vec::new(),
                apps: Vec::new(),
                default: true,
            });
        }

        let host = file.host;
        if !POLICIES.contains(&host.bundle_policy.get_ref().as_str()) {
            return Err(at(
                host.bundle_policy.span(),
                "host.bundle_policy",
                &format!(
                    "{:?} is not one of {}",
                    host.bundle_policy.get_ref(),
                    POLICIES.join(", ")
                ),
            ));
        }
        Ok(Self {
            agent: AgentConfig {
                url,
                conversation: agent.conversation,
                agent_id: agent.agent_id,
                token_file: agent.token_file,
                trusted_roots: agent.trusted_roots,
                grace: Duration::from_secs(*agent.grace_secs.get_ref()),
            },
            monitor,
            cursor,
            allow_close: display.allow_close,
            standby,
            regions,
            host: HostConfig {
                client_id: host.client_id,
                data_dir: host.data_dir,
                bundle_policy: host.bundle_policy.into_inner(),
                max_surfaces: host.max_surfaces,
                standard_components: host.standard_components,
            },
        })
    }
}

/// Whether two regions share any area (touching edges do not count).
fn overlaps(a: &Region, b: &Region) -> bool {
    a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = "[agent]\nurl = \"wss://agent.example/lineup\"\nconversation = \"lobby\"\nagent_id = \"lobby-agent\"\n";

    fn parse(text: &str) -> Result<KioskConfig, String> {
        KioskConfig::parse(Path::new("kiosk.toml"), text)
    }

    #[test]
    fn a_minimal_file_gets_the_documented_defaults() {
        let config = parse(MINIMAL).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(config.agent.grace, Duration::from_secs(300));
        assert_eq!(config.monitor, MonitorChoice::Index(0));
        assert_eq!(
            config.cursor,
            CursorPolicy::HiddenWhenIdle(Duration::from_secs(3))
        );
        assert!(!config.allow_close);
        assert_eq!(config.regions.len(), 1);
        assert_eq!(config.regions[0].width, 100.0);
        assert_eq!(config.host.bundle_policy, "allow");
    }

    /// Issue 30 item 4: regions that meet at an edge tile; a positive control for the overlap
    /// refusal.
    #[test]
    fn regions_that_only_touch_are_accepted() {
        let text = format!(
            "{MINIMAL}[[region]]\nname = \"a\"\nx = 0\ny = 0\nwidth = 100\nheight = 85\n\
             [[region]]\nname = \"b\"\nx = 0\ny = 85\nwidth = 100\nheight = 15\n"
        );
        let config = parse(&text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(config.regions.len(), 2);
    }

    #[test]
    fn the_example_file_is_valid() {
        let text = include_str!("../../../deploy/kiosk.toml");
        let config = parse(text).unwrap_or_else(|e| panic!("{e}"));
        assert!(config.regions.len() >= 2);
    }

    #[test]
    fn errors_name_the_file_line_column_and_key() {
        let cases: [(&str, &str); 13] = [
            ("[agent]\nurl = \"ws://192.0.2.1/\"\nconversation = \"c\"\nagent_id = \"a\"\n", "kiosk.toml:2:7: agent.url: ws://192.0.2.1/: plain ws:// is allowed only to a loopback host"),
            (
                "[agent]\nurl = \"wss://a\"\nconversation = \"c\"\nagent_id = \"a\"\ncolour = 1\n",
                "kiosk.toml:5:1: agent.colour: unknown key; the keys here are `url`,",
            ),
            (
                "[agent]\nurl = \"https://a\"\nconversation = \"c\"\nagent_id = \"a\"\n",
                "kiosk.toml:2:7: agent.url: https://a: the scheme must be wss://",
            ),
            (
                "[agent]\nurl = \"wss://a\"\nconversation = \"c\"\n",
                "kiosk.toml:1:1: agent.agent_id: missing",
            ),
            ("[display]\nmonitor = 0\n", "kiosk.toml:1:1: agent: missing"),
            (
                &format!("{MINIMAL}[display]\ncursor_idle_secs = -5\n"),
                "kiosk.toml:6:20: display.cursor_idle_secs: -5 is not a non-negative integer",
            ),
            (
                &format!("{MINIMAL}[display]\nmonitor = true\n"),
                "kiosk.toml:6:11: display.monitor: is neither a monitor index",
            ),
            (
                &format!(
                    "{MINIMAL}[[region]]\nname = \"a\"\nx = 0\ny = 0\nwidth = 60\nheight = 60\n\
                     [[region]]\nname = \"b\"\nx = 50\ny = 50\nwidth = 50\nheight = 50\n"
                ),
                "kiosk.toml:11:1: region[1] (\"b\"): overlaps region[0] (\"a\")",
            ),
            (
                &format!("{MINIMAL}[display]\ncursor = \"blink\"\n"),
                "kiosk.toml:6:10: display.cursor: \"blink\" is not one of",
            ),
            (
                &format!("{MINIMAL}[standby]\nbackground = \"navy\"\n"),
                "kiosk.toml:6:14: standby.background: \"navy\" is not a colour of the form #rrggbb",
            ),
            (
                &format!(
                    "{MINIMAL}[[region]]\nname = \"a\"\nx = 50\ny = 0\nwidth = 60\nheight = 10\n"
                ),
                "kiosk.toml:5:1: region[0] (\"a\"): reaches past the monitor's edge",
            ),
            (
                &format!(
                    "{MINIMAL}[[region]]\nname = \"a\"\nx = -1\ny = 0\nwidth = 60\nheight = 10\n"
                ),
                "kiosk.toml:7:5: region[0] (\"a\").x: -1 is outside 0 ..= 100",
            ),
            (
                &format!("{MINIMAL}[host]\nbundle_policy = \"allowlist\"\n"),
                "kiosk.toml:6:17: host.bundle_policy: \"allowlist\" is not one of",
            ),
        ];
        for (text, expected) in cases {
            match parse(text) {
                Ok(_) => panic!("accepted: {text}"),
                Err(e) => assert!(e.contains(expected), "{e:?} should contain {expected:?}"),
            }
        }
    }
}
