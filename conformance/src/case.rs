//! A conformance case as data: the JSON files under `conformance/cases/<group>/`, checked against
//! `conformance/case.schema.json`, templates, and the predicates outbound envelopes are matched by.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde::Deserialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The schema every case file is checked against.
pub(crate) const CASE_SCHEMA: &str = include_str!("../case.schema.json");

/// One case, as read from its file (see `conformance/README.md`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Case {
    /// Unique id, also the case's canary path.
    pub(crate) id: String,
    /// The group (the folder it lives in).
    pub(crate) group: String,
    /// Prose for the reader.
    #[serde(default)]
    #[allow(dead_code)]
    pub(crate) description: String,
    /// The spec rules it checks (R-*).
    pub(crate) rules: Vec<String>,
    /// Adapter verbs the case needs beyond the wire.
    #[serde(default)]
    pub(crate) needs: Vec<String>,
    /// What the runner does, in order.
    pub(crate) steps: Vec<Step>,
    /// Envelopes that must be seen.
    #[serde(default)]
    pub(crate) expect: Vec<Predicate>,
    /// Envelopes that must not be seen.
    #[serde(default)]
    pub(crate) forbid: Vec<Predicate>,
    /// What the case's canaries must see.
    #[serde(default)]
    pub(crate) canary: Canaries,
    /// Whether the host must answer a probe afterwards.
    #[serde(default = "yes")]
    pub(crate) probe: bool,
    /// How long expectations may take.
    #[serde(default = "default_timeout")]
    pub(crate) timeout_ms: u64,
    /// How long to keep listening after the expectations are met (for forbidden envelopes and
    /// canary hits).
    #[serde(default = "default_settle")]
    pub(crate) settle_ms: u64,
    /// Whether the case needs a host process of its own instead of its worker's shared one
    /// (see `shared.rs`).
    #[serde(default)]
    pub(crate) fresh_host: bool,
    /// An expected failure on the default engine.
    #[serde(default)]
    pub(crate) xfail: Option<ExpectedFailure>,
    /// An expected failure with `--engine servo`, in place of `xfail`.
    #[serde(default)]
    pub(crate) xfail_servo: Option<ExpectedFailure>,
}

/// A documented failure: the limited behaviour a case shows today, which the runner checks, so
/// that the case failing in another way (a worse regression) is a failure of the run.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ExpectedFailure {
    /// The issue or the engine's limit, and the behaviour, in prose.
    pub(crate) why: String,
    /// An envelope the limited behaviour sends: the case's failure is the expected one only when
    /// the host sent an envelope matching it.
    pub(crate) seen: Predicate,
    /// How long the runner waits for `seen` after the case's checks failed; the case's
    /// `timeout_ms` when absent.
    #[serde(default)]
    pub(crate) seen_within_ms: Option<u64>,
}

impl Case {
    /// Whether the case needs the DNS canary: it expects something of it or looks a name up.
    pub(crate) fn uses_dns(&self) -> bool {
        self.canary.dns.is_some() || self.steps.iter().any(|s| matches!(s, Step::DnsLookup(_)))
    }

    /// The expected failure on `engine`, if any.
    pub(crate) fn xfail_on(&self, engine: Engine) -> Option<&ExpectedFailure> {
        match engine {
            Engine::Webkit => self.xfail.as_ref(),
            Engine::Servo => self.xfail_servo.as_ref(),
        }
    }
}

/// The web engine of the host under test: what a page's raw post to the host is
/// (`{{raw_post}}`), and which expected failures apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Engine {
    /// WebKitGTK: the script message handler `ipc`.
    Webkit,
    /// Servo: the console channel, a line behind the bridge's marker (decision 0029).
    Servo,
}

impl Engine {
    /// A JavaScript function expression that posts its one argument on the engine's raw
    /// channel, as page code can without the bridge. No quote characters: cases put it inside
    /// strings of every quoting level.
    pub(crate) fn raw_post(self) -> &'static str {
        match self {
            Engine::Webkit => "(function(m){window.webkit.messageHandlers.ipc.postMessage(m)})",
            // console.debug("%s", "\u0001lineup.surface.v1\u0001" + m)
            Engine::Servo => {
                "(function(m){console.debug(String.fromCharCode(37,115),String.fromCharCode(1,108,105,110,101,117,112,46,115,117,114,102,97,99,101,46,118,49,1)+m)})"
            }
        }
    }
}

fn yes() -> bool {
    true
}
fn default_timeout() -> u64 {
    8_000
}
fn default_settle() -> u64 {
    500
}

/// What a case's canary must see.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum CanaryExpect {
    /// Nothing reaches it.
    None,
    /// At least one request reaches it (a positive control).
    Hit,
}

/// What each kind of canary must see: `canary` in a case file, either one word for the HTTP
/// canary (`"none"`) or an object naming kinds (`{"http": "none", "dns": "none"}`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(from = "CanaryField")]
pub(crate) struct Canaries {
    /// Connections to the case's HTTP canary port, of any kind.
    pub(crate) http: Option<CanaryExpect>,
    /// WebSocket handshakes on that port.
    pub(crate) websocket: Option<CanaryExpect>,
    /// Lookups of the case's DNS canary name.
    pub(crate) dns: Option<CanaryExpect>,
}

/// `canary` as written.
#[derive(Deserialize)]
#[serde(untagged)]
enum CanaryField {
    Http(CanaryExpect),
    Kinds(CanaryKinds),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CanaryKinds {
    #[serde(default)]
    http: Option<CanaryExpect>,
    #[serde(default)]
    websocket: Option<CanaryExpect>,
    #[serde(default)]
    dns: Option<CanaryExpect>,
}

impl From<CanaryField> for Canaries {
    fn from(field: CanaryField) -> Self {
        match field {
            CanaryField::Http(http) => Canaries {
                http: Some(http),
                ..Canaries::default()
            },
            CanaryField::Kinds(k) => Canaries {
                http: k.http,
                websocket: k.websocket,
                dns: k.dns,
            },
        }
    }
}

/// One step of a case.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum Step {
    /// An envelope, templates filled, sent as one line.
    Send(Value),
    /// A line sent verbatim after templates are filled.
    SendRaw(String),
    /// A line of an exact size.
    SendBig(Big),
    /// Keep listening this long.
    WaitMs(u64),
    /// Keep listening until the host has sent an envelope matching this predicate (within the
    /// case's `timeout_ms`), so a step that needs a loaded page does not guess how long loading
    /// takes.
    WaitFor(Predicate),
    /// The runner itself requests a loopback URL (a canary positive control).
    HttpGet(String),
    /// The runner itself opens a WebSocket handshake to a loopback URL, which must be answered
    /// `101` (the WebSocket canary's positive control).
    WebsocketHandshake(String),
    /// The runner itself looks a host name up, as any program does (the DNS canary's positive
    /// control).
    DnsLookup(String),
    /// A host adapter verb.
    Adapter(String),
}

/// A line of an exact byte size.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Big {
    /// The line, with one `{{fill}}`.
    pub(crate) template: String,
    /// Always `{{fill}}`.
    #[allow(dead_code)]
    pub(crate) fill: String,
    /// The line's length in bytes, without its newline.
    pub(crate) total_bytes: usize,
}

impl Big {
    /// The line, or `None` when the template alone is already longer than asked.
    pub(crate) fn line(&self) -> Option<String> {
        let base = self.template.len().checked_sub("{{fill}}".len())?;
        let pad = self.total_bytes.checked_sub(base)?;
        Some(self.template.replacen("{{fill}}", &"a".repeat(pad), 1))
    }
}

/// A predicate over outbound envelopes.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Predicate {
    /// The subset that must match.
    #[serde(rename = "match")]
    pub(crate) pattern: Value,
    /// Payload fields that must be absent.
    #[serde(default)]
    pub(crate) absent: Vec<String>,
    /// A text that must occur somewhere in the envelope's JSON (keys, values, escapes as sent).
    #[serde(default)]
    pub(crate) contains: Option<String>,
}

impl Predicate {
    /// Whether `message` satisfies it.
    pub(crate) fn matches(&self, message: &Value) -> bool {
        subset(&self.pattern, message)
            && self
                .absent
                .iter()
                .all(|field| message["payload"].get(field).is_none())
            && self
                .contains
                .as_deref()
                .is_none_or(|text| message_text(message).contains(text))
    }
}

/// The text a `contains` predicate searches: a line the host sent that was not JSON is kept as a
/// string and searched as it was; an envelope is searched as JSON text and, so that a marker is
/// found whichever way the host escaped it, in its decoded strings too.
fn message_text(message: &Value) -> String {
    fn strings(value: &Value, out: &mut String) {
        match value {
            Value::String(s) => {
                out.push_str(s);
                out.push('\n');
            }
            Value::Array(a) => a.iter().for_each(|v| strings(v, out)),
            Value::Object(o) => o.iter().for_each(|(k, v)| {
                out.push_str(k);
                out.push('\n');
                strings(v, out);
            }),
            _ => {}
        }
    }
    let mut out = message.to_string();
    out.push('\n');
    strings(message, &mut out);
    out
}

/// Whether every key of `pattern` is in `value` with an equal value, objects recursively. An empty
/// object asks nothing, so it matches any line the host sent, JSON or not.
pub(crate) fn subset(pattern: &Value, value: &Value) -> bool {
    match (pattern, value) {
        (Value::Object(p), _) if p.is_empty() => true,
        (Value::Object(p), Value::Object(v)) => p
            .iter()
            .all(|(k, pv)| v.get(k).is_some_and(|vv| subset(pv, vv))),
        _ => pattern == value,
    }
}

/// What the templates of a case's strings are filled with.
#[derive(Debug, Clone)]
pub(crate) struct Vars {
    /// `{{canary.http}}`: `http://127.0.0.1:<port>/<case id>/`.
    pub(crate) http: String,
    /// `{{canary.ws}}`: `ws://127.0.0.1:<port>/<case id>/`.
    pub(crate) ws: String,
    /// `{{canary.dns}}`: `<case id>.canary.lineup.test`.
    pub(crate) dns: String,
    /// Whose raw channel `{{raw_post}}` is.
    pub(crate) engine: Engine,
}

/// Fills the templates (see [`fill_text`]) in every string of `value`, then `{{integrity}}` in a
/// `ui.open`'s `payload.app.integrity` with the digest of its bundle (R-UI-2a).
pub(crate) fn fill(value: &Value, vars: &Vars) -> Value {
    let mut filled = fill_strings(value, vars);
    if let Some(app) = filled
        .get_mut("payload")
        .and_then(|p| p.get_mut("app"))
        .and_then(Value::as_object_mut)
    {
        if app.get("integrity").and_then(Value::as_str) == Some("{{integrity}}") {
            let part = |k: &str| app.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
            let digest = integrity(&part("html"), &part("css"), &part("js"));
            app.insert("integrity".into(), Value::String(digest));
        }
    }
    filled
}

fn fill_strings(value: &Value, vars: &Vars) -> Value {
    match value {
        Value::String(s) => Value::String(fill_text(s, vars)),
        Value::Array(a) => Value::Array(a.iter().map(|v| fill_strings(v, vars)).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| (k.clone(), fill_strings(v, vars)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Fills `{{canary.http}}`, `{{canary.ws}}`, `{{canary.dns}}` and `{{raw_post}}` (the engine's
/// raw channel) in a text, and each `{{in_secs:N}}` with the RFC 3339 UTC time N seconds from now
/// (0 ≤ N ≤ 86400).
pub(crate) fn fill_text(text: &str, vars: &Vars) -> String {
    let mut out = text
        .replace("{{canary.http}}", &vars.http)
        .replace("{{canary.ws}}", &vars.ws)
        .replace("{{canary.dns}}", &vars.dns)
        .replace("{{raw_post}}", vars.engine.raw_post());
    while let Some(start) = out.find("{{in_secs:") {
        let rest = &out[start + "{{in_secs:".len()..];
        let Some(end) = rest.find("}}") else { break };
        let secs: i64 = rest[..end].parse().unwrap_or(0).clamp(0, 86_400);
        let at = time::OffsetDateTime::now_utc() + time::Duration::seconds(secs);
        let at = at
            .replace_nanosecond(0)
            .unwrap_or(at)
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default();
        let token_len = "{{in_secs:".len() + end + 2;
        out.replace_range(start..start + token_len, &at);
    }
    out
}

/// `sha256-` + base64 of SHA-256 over `N(html) N(css) N(js)` (R-UI-2a).
pub(crate) fn integrity(html: &str, css: &str, js: &str) -> String {
    let mut hasher = Sha256::new();
    for part in [html, css, js] {
        hasher.update(format!("{}:", part.len()).as_bytes());
        hasher.update(part.as_bytes());
        hasher.update(b",");
    }
    format!(
        "sha256-{}",
        base64::engine::general_purpose::STANDARD.encode(hasher.finalize())
    )
}

/// Every case file under `dir` (`<group>/<NAME>.json`), sorted by path.
pub(crate) fn case_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for group in std::fs::read_dir(dir)? {
        let group = group?.path();
        if !group.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(&group)? {
            let file = file?.path();
            if file.extension().is_some_and(|e| e == "json") {
                files.push(file);
            }
        }
    }
    files.sort();
    Ok(files)
}

/// Reads and checks every case: schema, then types, then that `group` names its folder and ids are
/// unique. The runner reads them through `lint::load`, which also refuses weak cases.
pub(crate) fn load_cases(dir: &Path) -> Result<Vec<Case>, String> {
    let schema: Value =
        serde_json::from_str(CASE_SCHEMA).map_err(|e| format!("case.schema.json: {e}"))?;
    let validator = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .build(&schema)
        .map_err(|e| format!("case.schema.json does not compile: {e}"))?;
    let files = case_files(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut cases: Vec<Case> = Vec::new();
    for file in files {
        let text =
            std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        let value: Value =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", file.display()))?;
        if let Some(error) = validator.iter_errors(&value).next() {
            return Err(format!(
                "{}: at {}: {error}",
                file.display(),
                error.instance_path()
            ));
        }
        let case: Case =
            serde_json::from_value(value).map_err(|e| format!("{}: {e}", file.display()))?;
        let folder = file
            .parent()
            .and_then(Path::file_name)
            .and_then(|n| n.to_str())
            .unwrap_or("");
        if case.group != folder {
            return Err(format!(
                "{}: group {:?} is not its folder {folder:?}",
                file.display(),
                case.group
            ));
        }
        if cases.iter().any(|c| c.id == case.id) {
            return Err(format!("{}: duplicate id {:?}", file.display(), case.id));
        }

        cases.push(case);
    }
    Ok(cases)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn subset_matches_nested_fields_and_refuses_missing_or_different_ones() {
        let m = json!({"type": "t", "payload": {"code": "c", "x": 1}});
        assert!(subset(&json!({"payload": {"code": "c"}}), &m));
        assert!(!subset(&json!({"payload": {"code": "d"}}), &m));
        assert!(!subset(&json!({"payload": {"nope": 1}}), &m));
    }

    #[test]
    fn contains_finds_a_marker_in_keys_values_and_non_json_lines() {
        let p = |text: &str| Predicate {
            pattern: json!({}),
            absent: Vec::new(),
            contains: Some(text.into()),
        };
        let m = json!({"type": "t", "payload": {"message": "a MARKER-1 b", "k\u{7}": 1}});
        assert!(p("MARKER-1").matches(&m));
        assert!(p("k\u{7}").matches(&m));
        assert!(!p("MARKER-2").matches(&m));
        assert!(p("MARKER-3").matches(&Value::String("not json MARKER-3".into())));
    }

    #[test]
    fn r_ui_2a_integrity_is_the_netstring_digest_lineup_bundle_prints() {
        // The value `lineup bundle` printed for this bundle.
        assert_eq!(
            integrity("<p>x</p>\n", "\n", "LineUpSurface.event(\"booted\",{})\n"),
            "sha256-nUGUNFDG/Dy7BSto7B+1Qt5NKqiiJGVrRSYB+o/atWM="
        );
    }

    fn vars(engine: Engine) -> Vars {
        Vars {
            http: "http://127.0.0.1:1/c/".into(),
            ws: "ws://127.0.0.1:1/c/".into(),
            dns: "c.canary.lineup.test".into(),
            engine,
        }
    }

    #[test]
    fn canary_templates_are_filled() {
        assert_eq!(
            fill_text(
                "{{canary.http}}a {{canary.ws}}b //{{canary.dns}}/",
                &vars(Engine::Webkit)
            ),
            "http://127.0.0.1:1/c/a ws://127.0.0.1:1/c/b //c.canary.lineup.test/"
        );
    }

    #[test]
    fn canary_is_one_word_for_http_or_an_object_of_kinds() {
        let parse = |v: Value| serde_json::from_value::<Canaries>(v);
        assert_eq!(
            parse(json!("none")).ok(),
            Some(Canaries {
                http: Some(CanaryExpect::None),
                ..Canaries::default()
            })
        );
        assert_eq!(
            parse(json!({"dns": "hit", "websocket": "none"})).ok(),
            Some(Canaries {
                http: None,
                websocket: Some(CanaryExpect::None),
                dns: Some(CanaryExpect::Hit),
            })
        );
        assert!(parse(json!({"smtp": "none"})).is_err());
        assert!(parse(json!("some")).is_err());
    }

    #[test]
    fn raw_post_is_each_engines_channel_and_holds_no_quote() {
        let webkit = fill_text("try{{{raw_post}}(m)}catch(e){}", &vars(Engine::Webkit));
        assert!(webkit.contains("window.webkit.messageHandlers.ipc.postMessage(m)"));
        let servo = fill_text("{{raw_post}}('x')", &vars(Engine::Servo));
        assert!(servo.starts_with("(function(m){console.debug("), "{servo}");
        // The marker, as char codes, is the bridge's console marker.
        let codes = [
            1, 108, 105, 110, 101, 117, 112, 46, 115, 117, 114, 102, 97, 99, 101, 46, 118, 49, 1,
        ];
        let marker: String = codes.iter().map(|c| char::from(*c as u8)).collect();
        assert_eq!(marker, "\u{1}lineup.surface.v1\u{1}");
        assert!(servo.contains("String.fromCharCode(1,108,105,110,101,117,112,46,115,117,114,102,97,99,101,46,118,49,1)"));
        for engine in [Engine::Webkit, Engine::Servo] {
            assert!(!engine.raw_post().contains(['"', '\'', '\\']));
        }
    }

    #[test]
    fn big_lines_have_the_exact_size_asked() {
        let big = Big {
            template: "{\"x\":\"{{fill}}\"}".into(),
            fill: "{{fill}}".into(),
            total_bytes: 100,
        };
        assert_eq!(big.line().map(|l| l.len()), Some(100));
    }
}
