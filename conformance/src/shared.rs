//! A host per worker, not per case: consecutive cases that allow it run on one host process, each
//! in conversations of its own, so that most cases do not pay for a host's start.
//!
//! A case shares its worker's host unless it says `"fresh_host": true`, needs an adapter verb or
//! has an adapter step, or uses a conversation other than `c1` and `c2`. A shared case's `c1` and
//! `c2` are renamed, everywhere the case writes them (envelopes, raw and padded lines, expected
//! and forbidden patterns, the final probe), to two-character ids no other case on that host had,
//! so every line keeps its byte length (size-limit cases stay at their boundaries). The case sees
//! only what the host sent in its own conversations, and the refusals of lines whose conversation
//! could not be read (`"conversation_id": "unknown"`), which belong to it because the previous
//! case ended only once the host had answered everything sent before (the sync below).
//!
//! After a shared case the worker closes the Surfaces and components the case opened, then sends
//! a patch for an absent instance in a conversation of its own and waits for the answer: lines are
//! answered in order, so every answer to the case's lines has arrived. The host is dropped (the
//! next case starts a new one) after a failed case, when the sync is not answered, and after
//! [`MAX_CASES_PER_HOST`] cases.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::case::{Case, Predicate, Step};
use crate::host::{Host, Seen};

/// How many cases one shared host runs before a new one is started.
pub(crate) const MAX_CASES_PER_HOST: usize = 40;

/// How long the sync after a shared case may take.
const SYNC_TIMEOUT: Duration = Duration::from_secs(10);

/// The conversation ids a shared case may use, renamed.
const RENAMED: [&str; 2] = ["c1", "c2"];

/// First characters of the renamed ids: letters, so an id is never `c1` or `c2`.
const FIRST: &[u8] = b"defghijkmnpqrstuvwxyz";
const SECOND: &[u8] = b"0123456789abcdefghijkmnpqrstuvwxyz";

/// One worker thread's host, reused by the cases that share it.
pub(crate) struct Worker {
    command: Vec<String>,
    /// Whether cases may share `host` at all (`--fresh-hosts` says no).
    share: bool,
    host: Option<Host>,
    /// Cases run on `host` so far (0 while there is none); also numbers the renamed
    /// conversations.
    cases: usize,
}

/// A shared case as it runs: renamed, and what it opened.
pub(crate) struct Renamed {
    /// The case with its conversation ids renamed.
    pub(crate) case: Case,
    /// The renamed `c1`: the final probe's conversation.
    pub(crate) probe_conversation: String,
    /// The conversations whose envelopes the case sees.
    pub(crate) conversations: Vec<String>,
}

impl Worker {
    /// A worker that starts `command` when a case needs a host, and lets the cases that allow
    /// it share one when `share` is true.
    pub(crate) fn new(command: &[String], share: bool) -> Self {
        Self {
            command: command.to_vec(),
            share,
            host: None,
            cases: 0,
        }
    }

    /// The host command.
    pub(crate) fn command(&self) -> &[String] {
        &self.command
    }

    /// Whether `case` runs on this worker's shared host.
    pub(crate) fn shares(&self, case: &Case) -> bool {
        self.share && shares_host(case)
    }

    /// `case` renamed for the next run on the shared host.
    pub(crate) fn rename(&mut self, case: &Case) -> Renamed {
        let base = 2 * self.cases;
        let ids: Vec<String> = (base..base + RENAMED.len()).map(short_id).collect();
        let mut renamed = case.clone();
        for step in &mut renamed.steps {
            match step {
                Step::Send(envelope) => rename_value(envelope, &ids),
                Step::SendRaw(text) => *text = rename_text(text, &ids),
                Step::SendBig(big) => big.template = rename_text(&big.template, &ids),
                Step::WaitFor(predicate) => rename_predicate(predicate, &ids),
                _ => {}
            }
        }
        for predicate in renamed.expect.iter_mut().chain(renamed.forbid.iter_mut()) {
            rename_predicate(predicate, &ids);
        }
        if let Some(x) = renamed.xfail.as_mut() {
            rename_predicate(&mut x.seen, &ids);
        }
        if let Some(x) = renamed.xfail_servo.as_mut() {
            rename_predicate(&mut x.seen, &ids);
        }
        Renamed {
            case: renamed,
            probe_conversation: ids[0].clone(),
            conversations: ids,
        }
    }

    /// The shared host, started now when there is none.
    pub(crate) fn host(&mut self) -> Result<&mut Host, String> {
        if self.host.is_none() {
            self.host = Some(Host::spawn(&self.command)?);
        }
        self.host.as_mut().ok_or_else(|| "no host".to_owned())
    }

    /// Ends a shared case: closes what it opened and waits until the host answered everything
    /// sent so far; drops the host after a failure, a missing answer, or its last case.
    pub(crate) fn finish(&mut self, renamed: &Renamed, passed: bool) {
        self.cases += 1;
        let keep = passed && self.cases < MAX_CASES_PER_HOST && self.sync(renamed).is_ok();
        if !keep {
            // The next case starts a new host, whose conversations are numbered afresh.
            self.host = None;
            self.cases = 0;
        }
    }

    fn sync(&mut self, renamed: &Renamed) -> Result<(), String> {
        let host = self.host.as_mut().ok_or("no host")?;
        for (conversation, instance) in opened(&renamed.case) {
            host.send(&envelope(
                "lineup.v1.ui.close",
                "sync-close",
                &conversation,
                &instance,
            ))?;
        }
        let id = format!("sync-{}", self.cases);
        host.send(&envelope("lineup.v1.ui.patch", &id, "sync", "sync-absent"))?;
        let mut seen = Seen::accepting(vec!["sync".to_owned()]);
        let deadline = Instant::now() + SYNC_TIMEOUT;
        if seen.wait_for(host, deadline, |m| {
            m["payload"]["in_reply_to"] == id.as_str()
        }) {
            Ok(())
        } else {
            Err("the host did not answer the sync".into())
        }
    }
}

/// Whether `case` allows running on its worker's shared host.
pub(crate) fn shares_host(case: &Case) -> bool {
    !case.fresh_host
        && case.needs.is_empty()
        && !case.steps.iter().any(|s| matches!(s, Step::Adapter(_)))
        && conversations_of(case)
            .iter()
            .all(|c| RENAMED.contains(&c.as_str()))
}

/// The `n`th renamed id: two characters.
fn short_id(n: usize) -> String {
    let first = FIRST[(n / SECOND.len()) % FIRST.len()];
    let second = SECOND[n % SECOND.len()];
    String::from_utf8_lossy(&[first, second]).into_owned()
}

/// Every conversation id the case writes: in its envelopes, its raw lines and its patterns.
fn conversations_of(case: &Case) -> Vec<String> {
    let mut found = Vec::new();
    let mut texts = Vec::new();
    for step in &case.steps {
        match step {
            Step::Send(v) => collect_value(v, &mut found),
            Step::SendRaw(text) => texts.push(text.as_str()),
            Step::SendBig(big) => texts.push(big.template.as_str()),
            Step::WaitFor(p) => collect_value(&p.pattern, &mut found),
            _ => {}
        }
    }
    for p in case.expect.iter().chain(&case.forbid) {
        collect_value(&p.pattern, &mut found);
    }
    for text in texts {
        // A raw line may be anything; what it names as its conversation is read the way the
        // renaming writes it, and a line naming any other conversation keeps the case apart.
        let mut rest = text;
        while let Some(at) = rest.find("\"conversation_id\"") {
            rest = &rest[at + "\"conversation_id\"".len()..];
            let value = rest
                .trim_start()
                .strip_prefix(':')
                .map(str::trim_start)
                .and_then(|r| r.strip_prefix('"'))
                .and_then(|r| r.split('"').next());
            found.push(value.unwrap_or("?").to_owned());
        }
    }
    found
}

fn collect_value(value: &Value, found: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, v) in map {
                match (key.as_str(), v) {
                    ("conversation_id", Value::String(s)) => found.push(s.clone()),
                    ("conversation_id", _) => found.push("?".into()),
                    _ => collect_value(v, found),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_value(v, found)),
        _ => {}
    }
}

fn rename_value(value: &mut Value, ids: &[String]) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                match v {
                    Value::String(s) if key == "conversation_id" => {
                        if let Some(i) = RENAMED.iter().position(|c| c == s) {
                            *s = ids[i].clone();
                        }
                    }
                    _ => rename_value(v, ids),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| rename_value(v, ids)),
        _ => {}
    }
}

fn rename_text(text: &str, ids: &[String]) -> String {
    let mut out = text.to_owned();
    for (old, new) in RENAMED.iter().zip(ids) {
        out = out.replace(
            &format!("\"conversation_id\":\"{old}\""),
            &format!("\"conversation_id\":\"{new}\""),
        );
    }
    out
}

fn rename_predicate(predicate: &mut Predicate, ids: &[String]) {
    rename_value(&mut predicate.pattern, ids);
}

/// The (conversation, instance) of every `ui.open` the case sends as an envelope.
fn opened(case: &Case) -> Vec<(String, String)> {
    case.steps
        .iter()
        .filter_map(|step| match step {
            Step::Send(v) if v["type"] == "lineup.v1.ui.open" => Some((
                v["conversation_id"].as_str()?.to_owned(),
                v["payload"]["instance_id"].as_str()?.to_owned(),
            )),
            _ => None,
        })
        .collect()
}

/// An agent envelope of `message_type` for `instance` in `conversation`.
fn envelope(message_type: &str, id: &str, conversation: &str, instance: &str) -> String {
    let payload = if message_type == "lineup.v1.ui.patch" {
        json!({"instance_id": instance, "state": {}})
    } else {
        json!({"instance_id": instance})
    };
    json!({
        "v": 1, "id": id, "type": message_type, "conversation_id": conversation,
        "sender": {"kind": "agent", "id": "agent"}, "payload": payload
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(value: Value) -> Case {
        serde_json::from_value(value).expect("the case reads")
    }

    fn open(conversation: &str) -> Value {
        json!({"send": {"v": 1, "id": "o1", "type": "lineup.v1.ui.open",
            "conversation_id": conversation, "sender": {"kind": "agent", "id": "agent"},
            "payload": {"instance_id": "s1"}}})
    }

    #[test]
    fn renamed_ids_are_two_characters_and_never_repeat_within_a_host() {
        let ids: Vec<String> = (0..2 * MAX_CASES_PER_HOST).map(short_id).collect();
        assert!(ids
            .iter()
            .all(|id| id.len() == 2 && id != "c1" && id != "c2"));
        let mut unique = ids.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), ids.len());
    }

    #[test]
    fn a_case_is_renamed_everywhere_it_names_c1_or_c2_and_keeps_its_byte_lengths() {
        let raw = r#"{"v":1,"id":"p1","type":"lineup.v1.ui.patch","conversation_id":"c1","sender":{"kind":"agent","id":"agent"},"payload":{"instance_id":"x","state":{}}}"#;
        let c = case(json!({
            "id": "k", "group": "g", "rules": ["R-ENV-1"],
            "steps": [open("c1"), open("c2"), {"send_raw": raw}],
            "expect": [{"match": {"type": "t", "conversation_id": "c2", "payload": {"a": 1}}}],
            "forbid": [{"match": {"conversation_id": "c1"}}]
        }));
        assert!(shares_host(&c));
        let mut worker = Worker::new(&["true".to_owned()], true);
        let r = worker.rename(&c);
        let text = serde_json::to_string(&json!({
            "steps": format!("{:?}", r.case.steps),
            "expect": r.case.expect.iter().map(|p| p.pattern.clone()).collect::<Vec<_>>(),
            "forbid": r.case.forbid.iter().map(|p| p.pattern.clone()).collect::<Vec<_>>(),
        }))
        .unwrap_or_default();
        assert!(
            !text.contains("\\\"c1\\\"") && !text.contains("\\\"c2\\\""),
            "{text}"
        );
        assert_eq!(
            r.case.expect[0].pattern["conversation_id"],
            r.conversations[1]
        );
        assert_eq!(
            r.case.forbid[0].pattern["conversation_id"],
            r.conversations[0]
        );
        let Step::SendRaw(renamed_raw) = &r.case.steps[2] else {
            panic!("not raw")
        };
        assert_eq!(renamed_raw.len(), raw.len());
        assert!(renamed_raw.contains(&format!("\"conversation_id\":\"{}\"", r.conversations[0])));
        assert_eq!(
            opened(&r.case),
            vec![
                (r.conversations[0].clone(), "s1".to_owned()),
                (r.conversations[1].clone(), "s1".to_owned())
            ]
        );
    }

    #[test]
    fn cases_that_need_their_own_host_do_not_share() {
        let base = json!({"id": "k", "group": "g", "rules": ["R-ENV-1"], "steps": [open("c1")],
            "expect": [{"match": {"type": "t", "payload": {"a": 1}}}]});
        let with = |key: &str, value: Value| {
            let mut v = base.clone();
            v[key] = value;
            case(v)
        };
        assert!(shares_host(&case(base.clone())));
        assert!(!shares_host(&with("fresh_host", json!(true))));
        assert!(!shares_host(&with("needs", json!(["restart"]))));
        assert!(!shares_host(&with(
            "steps",
            json!([open("c1"), {"adapter": "kill"}])
        )));
        assert!(!shares_host(&with("steps", json!([open("conv-7")]))));
        assert!(!shares_host(&with(
            "steps",
            json!([{"send_raw": "{\"conversation_id\":\"zz\"}"}])
        )));
    }
}
