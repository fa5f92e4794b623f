//! The JSON Schemas in `schemas/` and the Rust decoder judged on one corpus (`tests/corpus/`):
//! every valid message passes both and re-encodes to equivalent JSON, every invalid row is refused
//! by both, and the refusals only Rust can make (listed in `schemas/README.md`) are pinned apart.
#![allow(clippy::unwrap_used)]

#[path = "schemas/agreement.rs"]
mod agreement;
#[path = "schemas/generated.rs"]
mod generated;
#[path = "schemas/invalid.rs"]
mod invalid;

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use jsonschema::{Draft, Registry, Validator};
use lineup_host_core::{
    decode, BridgeMessage, DocumentId, ErrorCode, InlineBundle, Limits, McpForwarded, Message,
    ProtocolError, Risk, Status, SurfaceSource,
};
use serde_json::{json, Value};

/// The `$id` of every schema is this base plus its file name; nothing is served there.
const BASE: &str = "https://lineup.invalid/schemas/lineup.v1/";

/// Every schema file, registered under its `$id` so that no `$ref` is ever fetched.
const SCHEMA_FILES: [&str; 19] = [
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
    "mcp.resource.json",
    "mcp.tool.json",
    "mcp.answer.json",
    "mcp.progress.json",
    "mcp.request.json",
    "mcp.notify.json",
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
