//! The JSON Schemas in `schemas/` and the Rust decoder judged on one corpus (`tests/corpus/`):
//! every valid message passes both and re-encodes to equivalent JSON, every invalid row is refused
//! by both, and the refusals only Rust can make (listed in `schemas/README.md`) are pinned apart.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use jsonschema::{Draft, Registry, Validator};
use lineup_host_core::{
    decode, BridgeMessage, DocumentId, ErrorCode, InlineBundle, Limits, Message, ProtocolError,
    Risk, Status, SurfaceSource,
};
use serde_json::{json, Value};

/// The `$id` of every schema is this base plus its file name; nothing is served there.
const BASE: &str = "https://lineup.invalid/schemas/lineup.v1/";

/// Every schema file, registered under its `$id` so that no `$ref` is ever fetched.
const SCHEMA_FILES: [&str; 13] = [
    "defs.json",
    "envelope.json",
    "ui.open.json",
    "ui.patch.json",
    "ui.close.json",
    "ui.event.json",
    "client.inventory.json",
    "app.list.json",
    "app.call.json",
    "app.result.json",
    "client.error.json",
    "message.json",
    "bridge.json",
];

const AGENT: &str = r#"{"kind":"agent","id":"agent_hermes_main"}"#;
const CLIENT: &str = r#"{"kind":"client","id":"desktop_01"}"#;
const NAMESPACE: &str = "lineup.surface.v1";

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn corpus_dir(kind: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus")
        .join(kind)
}

fn read_json(path: &Path) -> Value {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The files of `dir` whose names end with `ext`, sorted.
fn files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(ext))
        .collect();
    out.sort();
    out
}

struct Schemas {
    documents: Vec<(String, Value)>,
    message: Validator,
    bridge: Validator,
    /// One validator per message type, keyed by the type its schema pins.
    by_type: Vec<(String, Validator)>,
}

fn schemas() -> &'static Schemas {
    static SCHEMAS: OnceLock<Schemas> = OnceLock::new();
    SCHEMAS.get_or_init(load_schemas)
}

fn load_schemas() -> Schemas {
    let dir = repo_root().join("schemas");
    let documents: Vec<(String, Value)> = SCHEMA_FILES
        .iter()
        .map(|name| (name.to_string(), read_json(&dir.join(name))))
        .collect();
    for (name, doc) in &documents {
        assert_eq!(
            doc["$id"],
            json!(format!("{BASE}{name}")),
            "schemas/{name}: $id must be the base plus the file name"
        );
        assert_eq!(
            doc["$schema"],
            json!("https://json-schema.org/draft/2020-12/schema"),
            "schemas/{name}: draft 2020-12"
        );
    }
    let registry = Registry::new()
        .extend(
            documents
                .iter()
                .map(|(name, doc)| (format!("{BASE}{name}"), doc.clone())),
        )
        .expect("schema ids are URIs")
        .prepare()
        .expect("the schemas form a registry without retrieval");
    let build = |name: &str| -> Validator {
        let doc = &documents
            .iter()
            .find(|(n, _)| n == name)
            .expect("listed schema")
            .1;
        jsonschema::options()
            .with_draft(Draft::Draft202012)
            // Draft 2020-12 treats `format` as an annotation unless asked: `expires_at` relies on
            // `date-time` being checked.
            .should_validate_formats(true)
            .offline()
            .with_registry(&registry)
            .build(doc)
            .unwrap_or_else(|e| panic!("schemas/{name} does not compile: {e}"))
    };
    let by_type = SCHEMA_FILES
        .iter()
        .filter(|n| {
            !matches!(
                **n,
                "defs.json" | "envelope.json" | "message.json" | "bridge.json"
            )
        })
        .map(|name| {
            (
                format!("lineup.v1.{}", name.trim_end_matches(".json")),
                build(name),
            )
        })
        .collect();
    Schemas {
        message: build("message.json"),
        bridge: build("bridge.json"),
        by_type,
        documents,
    }
}

impl Schemas {
    fn document(&self, name: &str) -> &Value {
        &self
            .documents
            .iter()
            .find(|(n, _)| n == name)
            .expect("listed schema")
            .1
    }

    fn for_type(&self, message_type: &str) -> Option<&Validator> {
        self.by_type
            .iter()
            .find(|(t, _)| t == message_type)
            .map(|(_, v)| v)
    }
}

/// The schema's verdict: `Ok` or the first few errors with their locations.
fn schema_verdict(validator: &Validator, instance: &Value) -> Result<(), String> {
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .take(4)
        .map(|e| format!("{} at '{}'", e, e.instance_path()))
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("; "))
    }
}

fn show_schema(verdict: &Result<(), String>) -> String {
    match verdict {
        Ok(()) => "schema ACCEPTS".into(),
        Err(e) => format!("schema REFUSES ({})", shorten(e)),
    }
}

fn show_rust<T>(verdict: &Result<T, ProtocolError>) -> String {
    show_refusal(verdict.as_ref().err())
}

fn show_refusal(refusal: Option<&ProtocolError>) -> String {
    match refusal {
        None => "rust ACCEPTS".into(),
        Some(e) => format!(
            "rust REFUSES ({}, field {:?}: {e})",
            e.code,
            e.field.as_deref().unwrap_or("-")
        ),
    }
}

fn shorten(s: &str) -> String {
    match s.char_indices().nth(300) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_owned(),
    }
}

/// Whether a corpus entry is a page-to-host bridge message rather than an envelope.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Envelope,
    Bridge,
}

/// Checks one valid message against the schema and the Rust types; returns what went wrong.
fn check_valid(name: &str, kind: Kind, bytes: &[u8]) -> Vec<String> {
    let s = schemas();
    let mut failures = Vec::new();
    let value: Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        Err(e) => return vec![format!("{name}: not JSON: {e}")],
    };
    match kind {
        Kind::Bridge => {
            let schema = schema_verdict(&s.bridge, &value);
            let text = std::str::from_utf8(bytes).expect("corpus files are UTF-8");
            let rust = BridgeMessage::decode(text, &Limits::default());
            if schema.is_err() || rust.is_err() {
                failures.push(format!(
                    "{name}: valid bridge message: {} / {}",
                    show_schema(&schema),
                    show_rust(&rust)
                ));
            }
            if let Ok(decoded) = rust {
                let expected = match value["type"].as_str() {
                    Some("ready") => Some(BridgeMessage::Ready {
                        document: DocumentId::parse(value["document"].as_str().unwrap()).unwrap(),
                    }),
                    Some("event") => Some(BridgeMessage::Event {
                        event: value["event"].as_str().unwrap().try_into().unwrap(),
                        data: value["data"].clone().try_into().unwrap(),
                    }),
                    Some("resize") => Some(BridgeMessage::Resize {
                        height: value["height"].as_f64().unwrap(),
                    }),
                    // R-DIAG-1: the decoded diagnostic carries the page's fields as sent.
                    Some("diagnostic") => match &decoded {
                        BridgeMessage::Diagnostic(d)
                            if d.kind.as_str() == value["kind"]
                                && d.message.as_str() == value["message"]
                                && d.line.map(u64::from) == value["line"].as_u64()
                                && d.column.map(u64::from) == value["column"].as_u64()
                                && d.csp.as_ref().map(|c| c.directive.as_str())
                                    == value["directive"].as_str() =>
                        {
                            Some(decoded.clone())
                        }
                        _ => None,
                    },
                    _ => None,
                };
                if expected.as_ref() != Some(&decoded) {
                    failures.push(format!(
                        "{name}: decoded as {decoded:?}, expected {expected:?}"
                    ));
                }
            }
        }
        Kind::Envelope => {
            let schema = schema_verdict(&s.message, &value);
            let rust = decode(bytes, &Limits::default());
            if schema.is_err() || rust.is_err() {
                failures.push(format!(
                    "{name}: valid message: {} / {}",
                    show_schema(&schema),
                    show_rust(&rust)
                ));
            }
            let message_type = value["type"].as_str().unwrap_or_default();
            match s.for_type(message_type) {
                Some(v) => {
                    if let Err(e) = schema_verdict(v, &value) {
                        failures.push(format!("{name}: schemas/{message_type}.json REFUSES ({e})"));
                    }
                }
                None => failures.push(format!("{name}: no schema for type {message_type:?}")),
            }
            if let Ok(message) = rust {
                failures.extend(check_round_trip(name, &message, &value));
                failures.extend(check_integrity(name, &message));
            }
        }
    }
    failures
}

/// `decode(..).to_json()` re-parsed equals the input as a JSON value.
fn check_round_trip(name: &str, message: &Message, input: &Value) -> Option<String> {
    let encoded = message.to_json();
    let reparsed: Value = match serde_json::from_str(&encoded) {
        Ok(v) => v,
        Err(e) => return Some(format!("{name}: to_json is not JSON ({e}): {encoded}")),
    };
    (reparsed != *input).then(|| {
        format!(
            "{name}: round trip differs\n  input:  {}\n  output: {}",
            shorten(&input.to_string()),
            shorten(&encoded)
        )
    })
}

/// A valid inline open that declares `integrity` declares the digest of its own bundle (R-UI-2a).
fn check_integrity(name: &str, message: &Message) -> Option<String> {
    let Message::UiOpen(env) = message else {
        return None;
    };
    let SurfaceSource::Inline(app) = &env.payload.app else {
        return None;
    };
    let declared = app.integrity?;
    let actual = app.bundle.digest();
    (declared != actual).then(|| {
        format!("{name}: integrity {declared} is not the bundle digest {actual} (R-UI-2a)")
    })
}

fn fail_on(failures: Vec<String>, what: &str) {
    assert!(
        failures.is_empty(),
        "{} {what} disagreement(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn valid_corpus_passes_the_schemas_and_the_rust_types_and_round_trips() {
    let files = files(&corpus_dir("valid"), ".json");
    let names: BTreeSet<String> = files
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    // R-ENV-6: each of the spec's eight examples, wrapped in a full envelope.
    for example in [
        "ui.open",
        "ui.patch",
        "ui.close",
        "ui.event",
        "client.inventory",
        "app.list",
        "app.call",
        "app.result",
    ] {
        assert!(
            names.contains(&format!("{example}.spec.json")),
            "corpus/valid lacks the spec's {example} example"
        );
    }
    let mut failures = Vec::new();
    for path in &files {
        let name = format!("valid/{}", path.file_name().unwrap().to_string_lossy());
        let kind = if name.starts_with("valid/bridge.") {
            Kind::Bridge
        } else {
            Kind::Envelope
        };
        failures.extend(check_valid(&name, kind, &fs::read(path).unwrap()));
    }
    fail_on(failures, "valid-corpus");
}

#[test]
fn r_ui_2a_the_spec_example_carries_the_real_digest_of_its_bundle() {
    let weather = InlineBundle::new(
        "<main><button id='refresh'>刷新</button></main>",
        "main { padding: 16px }",
        "document.querySelector('#refresh').onclick=()=>LineUpSurface.event('refresh',{unit:'c'})",
    )
    .unwrap();
    let example = read_json(&corpus_dir("valid").join("ui.open.spec.json"));
    assert_eq!(
        example["payload"]["app"]["integrity"],
        json!(weather.digest().to_string())
    );
    // The README's worked example.
    let readme = fs::read_to_string(repo_root().join("schemas/README.md")).unwrap();
    let empty = InlineBundle::new("", "", "").unwrap().digest().to_string();
    assert_eq!(empty, "sha256-tRCo0UfTHXSE5K8fJr+wLJs5jyyvCnbNUVvHHXaiDkM=");
    assert!(
        readme.contains(&empty),
        "schemas/README.md must show {empty}"
    );
}

fn envelope(id: &str, message_type: &str, sender: &str, payload: Value) -> Value {
    json!({
        "v": 1, "id": id, "type": format!("lineup.v1.{message_type}"), "conversation_id": "conv_01",
        "sender": serde_json::from_str::<Value>(sender).unwrap(), "payload": payload
    })
}

fn inline_app(html: &str, css: &str, js: &str) -> Value {
    let digest = InlineBundle::new(html, css, js)
        .unwrap()
        .digest()
        .to_string();
    json!({"id": "com.example.gen", "version": "1.0.0", "integrity": digest,
           "html": html, "css": css, "js": js})
}

/// `len` characters cycling through `alphabet`, after `first`.
fn cycled(first: &str, alphabet: &str, len: usize) -> String {
    let mut out = first.to_owned();
    out.extend(alphabet.chars().cycle().take(len - first.chars().count()));
    out
}

const ID_CHARS: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:-";

const ALL_RISKS: [Risk; 4] = [
    Risk::DisplayOnly,
    Risk::UserConfirmation,
    Risk::SystemPermission,
    Risk::Restricted,
];

const ALL_STATUSES: [Status; 6] = [
    Status::Completed,
    Status::Rejected,
    Status::Cancelled,
    Status::Expired,
    Status::Unsupported,
    Status::Failed,
];

/// Fails to compile when a risk is added without extending [`ALL_RISKS`].
#[allow(dead_code)]
fn every_risk_is_listed(risk: Risk) {
    match risk {
        Risk::DisplayOnly | Risk::UserConfirmation | Risk::SystemPermission | Risk::Restricted => {}
    }
}

/// Fails to compile when a status is added without extending [`ALL_STATUSES`].
#[allow(dead_code)]
fn every_status_is_listed(status: Status) {
    match status {
        Status::Completed
        | Status::Rejected
        | Status::Cancelled
        | Status::Expired
        | Status::Unsupported
        | Status::Failed => {}
    }
}

/// The wire names of every `ErrorCode`, read from `ErrorCode::as_str` in `src/error.rs` so that a
/// code added there without a schema update fails `schema_enums_match_the_rust_types`.
fn error_codes_in_rust() -> BTreeSet<String> {
    let source = include_str!("../src/error.rs");
    let codes: BTreeSet<String> = source
        .lines()
        .filter_map(|line| {
            let (left, right) = line.trim().split_once(" => \"")?;
            left.starts_with("ErrorCode::")
                .then(|| right.trim_end_matches("\",").to_owned())
        })
        .collect();
    assert!(
        codes.len() >= 19,
        "could not read ErrorCode::as_str: {codes:?}"
    );
    codes
}

fn wire(value: impl serde::Serialize) -> String {
    serde_json::to_value(value)
        .unwrap()
        .as_str()
        .unwrap()
        .to_owned()
}

/// `depth` levels of nested objects, the innermost empty.
fn nested(depth: usize) -> Value {
    (1..depth).fold(json!({}), |inner, _| json!({ "a": inner }))
}

/// Valid messages built here: every enum value and each bound from the inside.
fn generated_valid() -> Vec<(String, Kind, Value)> {
    let mut out: Vec<(String, Kind, Value)> = Vec::new();
    let mut add = |name: String, value: Value| out.push((name, Kind::Envelope, value));

    for status in ALL_STATUSES {
        let mut payload = json!({"call_id": "call_01", "status": status});
        if status == Status::Completed {
            payload["result"] = json!({"ok": true});
        } else {
            payload["message"] = json!(format!("the call was {}", wire(status)));
        }
        add(
            format!("app.result status {}", wire(status)),
            envelope("m", "app.result", CLIENT, payload),
        );
    }
    for risk in ALL_RISKS {
        let capability = json!({"name": "x.y", "version": "1", "risk": risk, "input_schema": {}});
        add(
            format!("app.list risk {}", wire(risk)),
            envelope(
                "m",
                "app.list",
                CLIENT,
                json!({"capabilities": [capability]}),
            ),
        );
        add(
            format!("client.inventory risk {}", wire(risk)),
            envelope(
                "m",
                "client.inventory",
                CLIENT,
                json!({"revision": "r1",
                "standard_components": [], "applications": [], "capabilities": [capability]}),
            ),
        );
    }
    for code in error_codes_in_rust() {
        // R-ENV-5: a malformed app.call is answered `failed` with the client.error codes.
        add(
            format!("app.result failed with error code {code}"),
            envelope(
                "m",
                "app.result",
                CLIENT,
                json!({"call_id": "call_01", "status": "failed", "message": "refused",
                    "error": {"code": code, "field": "payload.arguments", "limit": 0}}),
            ),
        );
        add(
            format!("client.error code {code}"),
            envelope(
                "m",
                "client.error",
                CLIENT,
                json!({"in_reply_to": "m0", "code": code,
                "message": "refused", "field": "payload", "limit": 0}),
            ),
        );
    }
    add(
        "client.error limit u64::MAX".into(),
        envelope(
            "m",
            "client.error",
            CLIENT,
            json!({"in_reply_to": null, "code": "too_large",
            "message": "refused", "limit": u64::MAX}),
        ),
    );

    // R-UI-1: instance ids of 1 and 128 characters, using every allowed character.
    for len in [1, 2, 66, 128] {
        let id = cycled("", ID_CHARS, len);
        let app = inline_app("<p></p>", "", "");
        add(
            format!("ui.open instance_id of {len}"),
            envelope(
                "m",
                "ui.open",
                AGENT,
                json!({"instance_id": id, "app": app, "state": {"n": len}}),
            ),
        );
        add(
            format!("ui.patch instance_id of {len}"),
            envelope(
                "m",
                "ui.patch",
                AGENT,
                json!({"instance_id": id, "state": {}}),
            ),
        );
        add(
            format!("ui.close instance_id of {len}"),
            envelope("m", "ui.close", AGENT, json!({"instance_id": id})),
        );
        add(
            format!("ui.event instance_id of {len}"),
            envelope(
                "m",
                "ui.event",
                CLIENT,
                json!({"instance_id": id, "event": "go", "data": {}}),
            ),
        );
    }
    for id in ["-", ".", ":", "_", "0", "..", "a:b"] {
        add(
            format!("ui.close instance_id {id:?}"),
            envelope("m", "ui.close", AGENT, json!({"instance_id": id})),
        );
    }
    // R-UI-7: event names of 1 and 64 characters.
    let mut events = Vec::new();
    for (first, len) in [("a", 1), ("Z", 1), ("e", 2), ("e", 64), ("Q", 64)] {
        let event = cycled(first, ID_CHARS, len);
        add(
            format!("ui.event name of {len} starting {first}"),
            envelope(
                "m",
                "ui.event",
                CLIENT,
                json!({"instance_id": "w1", "event": event,
                    "data": {"k": [1, "two", null, true, 2.5]}}),
            ),
        );
        events.push(event);
    }
    add(
        "client.inventory declaring boundary events".into(),
        envelope(
            "m",
            "client.inventory",
            CLIENT,
            json!({"revision": "catalog-44",
            "standard_components": [{"id": "choice", "version": "1"}],
            "applications": [{"id": "com.lineup.svg-canvas", "version": "2.0.0-rc.1",
                "surfaces": [{"id": "canvas", "events": events.clone()},
                    {"id": "empty", "events": []}]}],
            "capabilities": []}),
        ),
    );
    // R-UI-2: app ids at their bounds.
    let label63 = format!("{}z", cycled("a", "bcdefghij-klmnop0123456789", 62));
    let long_id = format!("{label63}.{label63}.{label63}.{}", cycled("z", "y", 63));
    assert_eq!(long_id.len(), 255);
    for id in [
        "a.b",
        "com.lineup.svg-canvas",
        "A.1",
        "x1.2y.z-3",
        &format!("com.{label63}"),
        &long_id,
    ] {
        let mut app = inline_app("", "", "");
        app["id"] = json!(id);
        add(
            format!("ui.open app.id {id}"),
            envelope(
                "m",
                "ui.open",
                AGENT,
                json!({"instance_id": "w1", "app": app}),
            ),
        );
    }
    // R-UI-2: SemVer 2.0 versions from the SemVer specification.
    for version in [
        "0.0.0",
        "1.2.3-alpha",
        "1.0.0-alpha.1",
        "1.0.0-0.3.7",
        "1.0.0-x.7.z.92",
        "1.0.0-x-y-z.--",
        "1.0.0+20130313144700",
        "1.0.0-beta+exp.sha.5114f85",
        "1.0.0+21AF26D3----117B344092BD",
        "1.0.0+001",
        "1.0.0-0A.is.legal",
        "18446744073709551615.0.0",
    ] {
        let mut app = inline_app("", "", "");
        app["version"] = json!(version);
        add(
            format!("ui.open app.version {version}"),
            envelope(
                "m",
                "ui.open",
                AGENT,
                json!({"instance_id": "w1", "app": app}),
            ),
        );
        add(
            format!("ui.open installed app.version {version}"),
            envelope(
                "m",
                "ui.open",
                AGENT,
                json!({"instance_id": "w1",
                    "app": {"id": "com.lineup.svg-canvas", "version": version,
                        "surface": "canvas"}}),
            ),
        );
    }
    // R-UI-2a: integrity equal to the digest of assorted bundles, and a name of 256 characters.
    for (i, (html, css, js)) in [
        (
            "<p>é</p>",
            "p::after { content: '</scrip' }",
            "let x = 1 < 2; // <\\/script>",
        ),
        ("</script></style>", "", ""),
        ("", "", "a"),
        ("ab", "c", ""),
        ("a", "bc", ""),
    ]
    .into_iter()
    .enumerate()
    {
        let mut app = inline_app(html, css, js);
        app["name"] = json!(cycled("名", "天气面板 ", 256));
        add(
            format!("ui.open integrity of bundle {i}"),
            envelope(
                "m",
                "ui.open",
                AGENT,
                json!({"instance_id": "w1", "app": app}),
            ),
        );
    }
    // R-UI-2: a bundle of exactly the 160 KiB limit.
    let html = "x".repeat(160 * 1024 - 4);
    add(
        "ui.open bundle of exactly 160 KiB".into(),
        envelope(
            "m",
            "ui.open",
            AGENT,
            json!({"instance_id": "w1", "app": inline_app(&html, "a{}", "1")}),
        ),
    );
    // R-ENV-4: nesting exactly at the 32-level limit (envelope, payload, state and 29 more).
    add(
        "ui.patch nesting depth 32".into(),
        envelope(
            "m",
            "ui.patch",
            AGENT,
            json!({"instance_id": "w1", "state": nested(30)}),
        ),
    );
    // R-ENV-1: opaque ids at their bounds, and a target.
    for id in ["x", "会话 01 with spaces", &"i".repeat(256)] {
        let mut value = envelope(id, "ui.close", AGENT, json!({"instance_id": "w1"}));
        value["conversation_id"] = json!(id);
        value["target"] = json!({"kind": id, "id": id});
        add(
            format!("ui.close with opaque ids of {} chars", id.chars().count()),
            value,
        );
    }
    // R-CAP-2, R-CAP-4: capability names, versions and timestamps.
    for (capability, version, expires_at) in [
        ("a", "1", "2026-08-02T12:10:00Z"),
        ("A.b-c_d.0", "2024-01 build", "2026-08-02T12:10:00-05:30"),
        (
            &*cycled("c", "apability_", 128),
            &*"v".repeat(64),
            "1999-12-31T23:59:59+14:00",
        ),
    ] {
        add(
            format!("app.call capability {capability}"),
            envelope(
                "m",
                "app.call",
                AGENT,
                json!({"call_id": "c1", "capability": capability, "reason": "",
                    "expires_at": expires_at, "arguments": {"nested": {"list": []}}}),
            ),
        );
        add(
            format!("app.list capability version {version}"),
            envelope(
                "m",
                "app.list",
                CLIENT,
                json!({"capabilities": [
                    {"name": capability, "version": version, "risk": "restricted"}]}),
            ),
        );
    }

    // Bridge (R-UI-6, R-UI-7): event names at their bounds, data just under 16 KiB, heights.
    for event in &events {
        out.push((
            format!("bridge event {event}"),
            Kind::Bridge,
            json!({"namespace": NAMESPACE, "type": "event", "event": event, "data": {}}),
        ));
    }
    let filler = "d".repeat(16 * 1024 - 1 - r#"{"s":""}"#.len());
    out.push((
        "bridge event data of 16 KiB - 1".into(),
        Kind::Bridge,
        json!({"namespace": NAMESPACE, "type": "event", "event": "big", "data": {"s": filler}}),
    ));
    for height in [json!(0), json!(1), json!(99999.75), json!(1e300)] {
        out.push((
            format!("bridge resize {height}"),
            Kind::Bridge,
            json!({"namespace": NAMESPACE, "type": "resize", "height": height}),
        ));
    }
    out.push((
        "bridge ready with an ignored instance_id".into(),
        Kind::Bridge,
        json!({"namespace": NAMESPACE, "type": "ready", "instance_id": "other",
               "document": "0123456789abcdef0123456789abcdef"}),
    ));
    out
}

#[test]
fn generated_valid_messages_pass_the_schemas_and_the_rust_types_and_round_trip() {
    let generated = generated_valid();
    assert!(generated.len() > 100, "{} generated", generated.len());
    let mut failures = Vec::new();
    for (name, kind, value) in &generated {
        let bytes = serde_json::to_vec(value).unwrap();
        failures.extend(check_valid(&format!("generated: {name}"), *kind, &bytes));
    }
    fail_on(failures, "generated-valid");
}

/// One row of `corpus/invalid/*.jsonl`.
struct Row {
    at: String,
    rule: String,
    kind: Kind,
    message: Value,
}

fn invalid_rows() -> Vec<Row> {
    let mut rows = Vec::new();
    for path in files(&corpus_dir("invalid"), ".jsonl") {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let kind = if file.starts_with("bridge") {
            Kind::Bridge
        } else {
            Kind::Envelope
        };
        for (i, line) in fs::read_to_string(&path).unwrap().lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let row: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("invalid/{file}:{}: {e}", i + 1));
            let rule = row["rule"].as_str().unwrap_or_default().to_owned();
            let reason = row["reason"].as_str().unwrap_or_default();
            assert!(
                rule.starts_with("R-") && !reason.is_empty(),
                "invalid/{file}:{}: each row has a rule and a reason",
                i + 1
            );
            rows.push(Row {
                at: format!("invalid/{file}:{} ({rule}: {reason})", i + 1),
                rule,
                kind,
                message: row["message"].clone(),
            });
        }
    }
    rows
}

/// A field path as the Rust decoder names it (`payload.capabilities[0].risk`), as a JSON pointer.
fn pointer(field: &str) -> String {
    field
        .split(['.', '['])
        .map(|segment| format!("/{}", segment.trim_end_matches(']')))
        .collect()
}

/// Whether the schema error at `schema_at` and the Rust refusal of `rust_at` (JSON pointers) are
/// about the same member: equal, or one inside the other. The document root counts only for a
/// top-level member, since a root error is how a schema reports a missing member.
fn same_place(schema_at: &str, rust_at: &str) -> bool {
    if schema_at.is_empty() {
        return rust_at.matches('/').count() == 1;
    }
    schema_at == rust_at
        || rust_at.starts_with(&format!("{schema_at}/"))
        || schema_at.starts_with(&format!("{rust_at}/"))
}

#[test]
fn invalid_corpus_is_refused_by_the_schemas_and_the_rust_types() {
    let s = schemas();
    let rows = invalid_rows();
    assert!(rows.len() > 100, "{} invalid rows", rows.len());
    let mut failures = Vec::new();
    for row in &rows {
        let bytes = serde_json::to_vec(&row.message).unwrap();
        // The schema that names the member at fault: the one of the message's own type when it
        // has one (message.json reports a failed `oneOf` at the root).
        let precise = match row.kind {
            Kind::Bridge => &s.bridge,
            Kind::Envelope => row.message["type"]
                .as_str()
                .and_then(|t| s.for_type(t))
                .unwrap_or(&s.message),
        };
        let (schema, rust) = match row.kind {
            Kind::Envelope => {
                let rust = decode(&bytes, &Limits::default());
                // R-ENV-6: a bare fragment is refused naming the first missing field.
                if row.rule == "R-ENV-6" {
                    if let Err(e) = &rust {
                        if e.field.as_deref() != Some("v") {
                            failures.push(format!("{}: names field {:?}, not v", row.at, e.field));
                        }
                    }
                }
                (schema_verdict(&s.message, &row.message), rust.err())
            }
            Kind::Bridge => {
                let text = String::from_utf8(bytes).unwrap();
                let rust = BridgeMessage::decode(&text, &Limits::default());
                (schema_verdict(&s.bridge, &row.message), rust.err())
            }
        };
        if schema.is_ok() || rust.is_none() {
            failures.push(format!(
                "{}: {} / {}",
                row.at,
                show_schema(&schema),
                show_refusal(rust.as_ref())
            ));
            continue;
        }
        // Both refuse; they must also agree on which member is at fault.
        if let Some(field) = rust.as_ref().and_then(|e| e.field.as_deref()) {
            let rust_at = pointer(field);
            let schema_at: Vec<String> = precise
                .iter_errors(&row.message)
                .map(|e| e.instance_path().to_string())
                .collect();
            if !schema_at.iter().any(|at| same_place(at, &rust_at)) {
                failures.push(format!(
                    "{}: both refuse, but the schema blames {schema_at:?} and rust {rust_at:?}",
                    row.at
                ));
            }
        }
    }
    fail_on(failures, "invalid-corpus");
}

/// Parses `text` into the value the schema sees; duplicate keys keep the last.
fn lenient(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

/// The raw text of a minimal envelope of `message_type` whose payload is the raw `payload`, with
/// `v` written as `v`: for inputs a `Value` cannot carry (duplicate keys, `1.0`).
fn raw_envelope(v: &str, message_type: &str, payload: &str) -> String {
    format!(r#"{{"v":{v},"id":"m","type":"lineup.v1.{message_type}","conversation_id":"c","#)
        + &format!(r#""sender":{{"kind":"agent","id":"a"}},"payload":{payload}}}"#)
}

/// Refusals only the Rust decoder can make. The schema sees a parsed value, so it cannot see
/// duplicate keys, nesting depth, byte sizes, sums over several strings, the HTML Standard's
/// script-data states or the difference between `1` and `1.0`; each row checks that the schema does accept the message (the gap is real and
/// listed in `schemas/README.md`) and that Rust refuses it with the expected code.
#[test]
fn rust_only_refusals() {
    let s = schemas();
    let limits = Limits::default();
    let close = r#"{"instance_id":"w1"}"#;
    let open = |app: Value| {
        envelope(
            "m",
            "ui.open",
            AGENT,
            json!({"instance_id": "w1", "app": app}),
        )
    };
    let cases: Vec<(&str, String, ErrorCode)> =
        vec![
        (
            "duplicate key in the envelope",
            raw_envelope("1", "ui.close", close).replace(r#""id":"m""#, r#""id":"m","id":"m2""#),
            ErrorCode::InvalidJson,
        ),
        (
            "duplicate key inside state",
            raw_envelope("1", "ui.patch", r#"{"instance_id":"w1","state":{"a":1,"a":2}}"#),
            ErrorCode::InvalidJson,
        ),
        (
            "nesting depth 33, one over the limit",
            envelope("m", "ui.patch", AGENT, json!({"instance_id": "w1", "state": nested(31)}))
                .to_string(),
            ErrorCode::TooDeep,
        ),
        (
            "envelope over 1 MiB",
            envelope(
                "m",
                "ui.patch",
                AGENT,
                json!({"instance_id": "w1", "state": {"s": "x".repeat(limits.max_envelope_bytes)}}),
            )
            .to_string(),
            ErrorCode::TooLarge,
        ),
        (
            "bundle one byte over 160 KiB, counted in UTF-8 bytes across html, css and js",
            open(json!({"id": "com.example.w", "version": "1.0.0",
                "html": "x".repeat(limits.max_bundle_bytes - 1), "css": "é", "js": ""}))
            .to_string(),
            ErrorCode::BundleTooLarge,
        ),
        (
            "js with a <!-- followed by <script and no --> after it (script-data states)",
            open(json!({"id": "com.example.w", "version": "1.0.0",
                "html": "", "css": "", "js": "x = '<!--<script>'"}))
            .to_string(),
            ErrorCode::InvalidField,
        ),
        ("v written 1.0", raw_envelope("1.0", "ui.close", close), ErrorCode::UnsupportedVersion),
        ("v written 1e0", raw_envelope("1e0", "ui.close", close), ErrorCode::UnsupportedVersion),
        (
            "client.error limit written 5.0",
            raw_envelope(
                "1",
                "client.error",
                r#"{"in_reply_to":null,"code":"too_large","message":"x","limit":5.0}"#,
            ),
            ErrorCode::InvalidField,
        ),
        (
            "app.version major beyond u64",
            open(json!({"id": "com.example.w", "version": "18446744073709551616.0.0",
                "surface": "s"}))
            .to_string(),
            ErrorCode::InvalidField,
        ),
        (
            "expires_at a leap second that is not at the end of a month",
            envelope("m", "app.call", AGENT, json!({"call_id": "c1", "capability": "a",
                "reason": "", "expires_at": "2026-08-02T23:59:60Z", "arguments": {}}))
            .to_string(),
            ErrorCode::InvalidField,
        ),
    ];
    let mut failures = Vec::new();
    for (name, text, code) in &cases {
        let schema = schema_verdict(&s.message, &lenient(text));
        let rust = decode(text.as_bytes(), &limits);
        let refused_as_expected = matches!(&rust, Err(e) if e.code == *code);
        if schema.is_err() || !refused_as_expected {
            failures.push(format!(
                "{name}: {} / {} (expected schema ACCEPTS / rust REFUSES with {code})",
                show_schema(&schema),
                show_rust(&rust)
            ));
        }
    }

    let bridge = |event: &str, data: Value| {
        json!({"namespace": NAMESPACE, "type": "event", "event": event, "data": data}).to_string()
    };
    let data_at_limit = "d".repeat(limits.max_event_data_bytes - r#"{"s":""}"#.len());
    let padding = "p".repeat(limits.max_bridge_message_bytes);
    let bridge_cases: Vec<(&str, String)> = vec![
        (
            "bridge event data of exactly 16 KiB of JSON (must be smaller)",
            bridge("big", json!({ "s": data_at_limit })),
        ),
        (
            "bridge message over 20 KiB",
            json!({"namespace": NAMESPACE, "type": "ready",
                   "document": "0123456789abcdef0123456789abcdef", "pad": padding})
            .to_string(),
        ),
        (
            "bridge duplicate key",
            bridge("a", json!({})).replace(r#""event":"a""#, r#""event":"a","event":"b""#),
        ),
        ("bridge nesting depth 33", bridge("deep", nested(32))),
    ];
    for (name, text) in &bridge_cases {
        let schema = schema_verdict(&s.bridge, &lenient(text));
        let rust = BridgeMessage::decode(text, &limits);
        let refused_as_expected =
            matches!(&rust, Err(e) if e.code == ErrorCode::InvalidBridgeMessage);
        if schema.is_err() || !refused_as_expected {
            failures.push(format!(
                "{name}: {} / {} (expected schema ACCEPTS / rust REFUSES)",
                show_schema(&schema),
                show_rust(&rust)
            ));
        }
    }
    fail_on(failures, "rust-only");
}

/// Messages the schemas refuse and the Rust decoder accepts today. Each is a leniency of the
/// Rust types, not of the protocol: the schemas follow the spec. When Rust starts refusing one,
/// move it to `corpus/invalid/`.
#[test]
fn schema_is_stricter_than_rust_here() {
    let s = schemas();
    let close = envelope(
        "m",
        "ui.close",
        AGENT,
        json!({"instance_id": "w1", "reason": "done"}),
    );
    let with = |mut value: Value, pointer: &str, member: Value| {
        let (parent, key) = pointer.rsplit_once('/').unwrap();
        value.pointer_mut(parent).unwrap()[key] = member;
        value
    };
    let open = envelope(
        "m",
        "ui.open",
        AGENT,
        json!({"instance_id": "w1",
        "app": {"id": "com.example.w", "version": "1.0.0", "html": "", "css": "", "js": ""}}),
    );
    let call = envelope(
        "m",
        "app.call",
        AGENT,
        json!({"call_id": "c1", "capability": "app.open_url",
        "reason": "r", "expires_at": "2026-08-02T12:10:00Z", "arguments": {}}),
    );
    let error = envelope(
        "m",
        "client.error",
        CLIENT,
        json!({"in_reply_to": "m0", "code": "too_large", "message": "x"}),
    );
    let mut no_reply = error.clone();
    no_reply["payload"]
        .as_object_mut()
        .unwrap()
        .remove("in_reply_to");
    let cases: Vec<(&str, Value)> = vec![
        // R-ENV-1: target is optional, but when present it is {kind, id}.
        (
            "target is null",
            with(close.clone(), "/target", Value::Null),
        ),
        // R-UI-5: reason is a string.
        (
            "ui.close reason is null",
            with(close, "/payload/reason", Value::Null),
        ),
        // R-UI-2: integrity and name are strings when present.
        (
            "app.integrity is null",
            with(open.clone(), "/payload/app/integrity", Value::Null),
        ),
        (
            "app.name is null",
            with(open.clone(), "/payload/app/name", Value::Null),
        ),
        // R-UI-9: a member of the other form, even null, makes the app ambiguous.
        (
            "inline app with surface null",
            with(open, "/payload/app/surface", Value::Null),
        ),
        // R-CAP-4: RFC 3339's date-time has 'T' between date and time; Rust's parser takes any
        // single byte there.
        (
            "expires_at with a space separator",
            with(
                call.clone(),
                "/payload/expires_at",
                json!("2026-08-02 12:10:00Z"),
            ),
        ),
        (
            "expires_at with an x separator",
            with(call, "/payload/expires_at", json!("2026-08-02x12:10:00Z")),
        ),
        // R-ENV-5: in_reply_to is the id or null, never absent.
        ("client.error without in_reply_to", no_reply),
        (
            "client.error limit is null",
            with(error, "/payload/limit", Value::Null),
        ),
    ];
    let mut failures = Vec::new();
    for (name, value) in &cases {
        let schema = schema_verdict(&s.message, value);
        let rust = decode(&serde_json::to_vec(value).unwrap(), &Limits::default());
        if schema.is_ok() {
            failures.push(format!(
                "{name}: {} (expected REFUSES)",
                show_schema(&schema)
            ));
        }
        if rust.is_err() {
            failures.push(format!(
                "{name}: {}: Rust now refuses it; move it to corpus/invalid",
                show_rust(&rust)
            ));
        }
    }
    fail_on(failures, "schema-stricter");
}

#[test]
fn schema_enums_match_the_rust_types() {
    let s = schemas();
    let defs = &s.document("defs.json")["$defs"];
    let set = |value: &Value| -> BTreeSet<String> {
        value
            .as_array()
            .expect("an enum")
            .iter()
            .map(|v| v.as_str().expect("a string").to_owned())
            .collect()
    };

    let codes = set(&defs["errorCode"]["enum"]);
    assert_eq!(
        codes,
        error_codes_in_rust(),
        "defs.json errorCode vs ErrorCode::as_str"
    );
    for code in &codes {
        let parsed: ErrorCode = serde_json::from_value(json!(code)).unwrap();
        assert_eq!(parsed.as_str(), code);
    }

    let risks: BTreeSet<String> = ALL_RISKS.iter().map(wire).collect();
    assert_eq!(set(&defs["risk"]["enum"]), risks, "defs.json risk vs Risk");
    let statuses: BTreeSet<String> = ALL_STATUSES.iter().map(wire).collect();
    assert_eq!(
        set(&defs["status"]["enum"]),
        statuses,
        "defs.json status vs Status"
    );

    let types: BTreeSet<String> = Message::TYPES.iter().map(|(t, _)| t.to_string()).collect();
    let message = s.document("message.json");
    assert_eq!(
        set(&message["properties"]["type"]["enum"]),
        types,
        "message.json type enum"
    );
    let referenced: BTreeSet<String> = message["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            format!(
                "lineup.v1.{}",
                r["$ref"].as_str().unwrap().trim_end_matches(".json")
            )
        })
        .collect();
    assert_eq!(referenced, types, "message.json oneOf");
    for message_type in &types {
        let file = format!("{}.json", message_type.trim_start_matches("lineup.v1."));
        assert_eq!(
            s.document(&file)["properties"]["type"]["const"],
            json!(message_type),
            "schemas/{file} pins its type"
        );
    }
}

#[test]
fn every_schema_file_is_registered_and_documented() {
    let s = schemas();
    let on_disk: BTreeSet<String> = files(&repo_root().join("schemas"), ".json")
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    let listed: BTreeSet<String> = SCHEMA_FILES.iter().map(|f| f.to_string()).collect();
    assert_eq!(on_disk, listed, "schemas/*.json vs SCHEMA_FILES");
    for (name, doc) in &s.documents {
        for key in ["title", "description"] {
            assert!(
                doc[key].as_str().is_some_and(|t| !t.is_empty()),
                "schemas/{name} lacks a {key}"
            );
        }
        assert!(
            name == "defs.json" || doc["description"].as_str().unwrap().contains("R-"),
            "schemas/{name}: the description cites the rules it encodes"
        );
    }
}
