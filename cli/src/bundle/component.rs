//! `lineup bundle FILE.json` of a standard component: FILE holds a `ui.open` payload (or a whole
//! envelope) that carries `component` (R-STD-1). It is checked as the host checks an agent's open
//! (R-STD-3, with the whole v1 catalog offered), and printed as a ready `lineup.v1.ui.open`
//! envelope with the ids the options give; a refusal names the field, the value and the limit.

use std::path::Path;
use std::time::{Duration, Instant};

use lineup_host_core::{
    Clock, ComponentSet, Effect, Envelope, Message, PartyId, Session, SessionConfig,
};
use serde_json::{json, Value};

use super::BundleArgs;

struct Monotonic(Instant);

impl Clock for Monotonic {
    fn monotonic(&self) -> Duration {
        self.0.elapsed()
    }
}

/// The `ui.open` payload in `path`, when it is a file that opens a standard component; an
/// error when it is a file that does not.
pub(super) fn read(path: &Path) -> Result<Option<Value>, Box<dyn std::error::Error>> {
    if path.is_dir() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot be read: {e}", path.display()))?;
    let value: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: is not JSON: {e}", path.display()))?;
    let payload = match value.get("payload") {
        Some(payload) => payload.clone(),
        None => value,
    };
    if payload.get("component").is_none() {
        return Err(format!(
            "{}: has no `component`; give a bundle folder, or a ui.open payload with a \
             component (R-STD-1)",
            path.display()
        )
        .into());
    }
    Ok(Some(payload))
}

/// The checked envelope of `payload`, as one line of JSON.
pub(super) fn envelope(
    mut payload: Value,
    path: &Path,
    args: &BundleArgs,
) -> Result<String, Box<dyn std::error::Error>> {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let fallback: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._:-".contains(c) {
                c
            } else {
                '-'
            }
        })
        .take(128)
        .collect();
    let instance = match &args.instance_id {
        Some(id) => id.clone(),
        None => match payload.get("instance_id").and_then(Value::as_str) {
            Some(id) => id.to_owned(),
            None if fallback.trim_matches('-').is_empty() => "component".to_owned(),
            None => fallback,
        },
    };
    if let Some(object) = payload.as_object_mut() {
        object.insert("instance_id".to_owned(), json!(instance));
    }
    let conversation = args.conversation.as_deref().unwrap_or("conv-1");
    let sender = args.sender.as_deref().unwrap_or("agent");
    let open = json!({"v": 1, "id": "m-1", "type": "lineup.v1.ui.open",
        "conversation_id": conversation, "sender": {"kind": "agent", "id": sender},
        "payload": payload});
    let line = open.to_string();
    let mut config = SessionConfig::new(PartyId::try_from("lineup-bundle")?, conversation);
    config.standard_components = ComponentSet::all_v1();
    let mut session = Session::new(config, Box::new(Monotonic(Instant::now())))?;
    let effects = session.handle_inbound(line.as_bytes());
    for effect in &effects {
        if let Effect::Send(Message::ClientError(Envelope { payload: e, .. })) = effect {
            let mut text = format!("{}: {}", e.code, e.message);
            if let Some(field) = e.field.as_ref().filter(|f| !e.message.contains(f.as_str())) {
                text.push_str(&format!(" (field {field})"));
            }
            if let Some(limit) = e.limit.filter(|l| !e.message.contains(&l.to_string())) {
                text.push_str(&format!(" (limit {limit})"));
            }
            return Err(text.into());
        }
    }
    let opened = effects.iter().any(|e| matches!(e, Effect::Component(_)));
    if !opened {
        return Err("the host would not open this component".into());
    }
    tracing::info!(
        "component {}: {} bytes, checked against the v1 catalog",
        path.display(),
        line.len()
    );
    Ok(line)
}
