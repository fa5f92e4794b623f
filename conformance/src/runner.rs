//! Runs one case against a host command: spawns it, speaks `lineup.v1` over its stdin/stdout,
//! drives the steps, checks expectations, forbidden envelopes, the canaries and a final probe.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::canary::HttpCanary;
use crate::case::{fill, fill_text, CanaryExpect, Case, Engine, ExpectedFailure, Step, Vars};
use crate::dns::DnsStub;
use crate::host::{Host, Seen};
use crate::shared::Worker;

/// The verbs this host adapter provides beyond the wire.
pub(crate) const ADAPTER_VERBS: &[&str] = &["start", "kill", "restart"];

/// How a case ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Every check held.
    Pass,
    /// A check failed, with why.
    Fail(String),
    /// Failed as its `xfail` expected, with why.
    ExpectedFail(String),
    /// Passed though marked as an expected failure: the run fails (strict).
    UnexpectedPass,
    /// Needs a verb the adapter lacks, or a canary this run has not got.
    Skip(String),
}

impl Outcome {
    /// Whether this outcome fails the run.
    pub(crate) fn is_unexpected(&self) -> bool {
        matches!(self, Outcome::Fail(_) | Outcome::UnexpectedPass)
    }
}

/// Runs one case. `dns` is the run's DNS canary, or why it has none (a case that needs it is then
/// skipped with that reason).
pub(crate) fn run_case(
    case: &Case,
    worker: &mut Worker,
    engine: Engine,
    dns: Result<&DnsStub, &str>,
) -> Outcome {
    if let Some(verb) = case
        .needs
        .iter()
        .find(|v| !ADAPTER_VERBS.contains(&v.as_str()))
    {
        return Outcome::Skip(format!("the host adapter has no verb {verb:?}"));
    }
    let dns = match dns {
        Ok(stub) => Some(stub),
        Err(why) if case.uses_dns() => return Outcome::Skip(format!("no DNS canary: {why}")),
        Err(_) => None,
    };
    let canary = match HttpCanary::start() {
        Ok(canary) => canary,
        Err(e) => return Outcome::Fail(format!("cannot start the case's HTTP canary: {e}")),
    };
    if !worker.shares(case) {
        let mut seen = Seen::everything();
        let command = worker.command().to_vec();
        let result = Host::spawn(&command).and_then(|mut host| {
            let mut run = Run {
                host: &mut host,
                seen: &mut seen,
                command: &command,
            };
            let result = check(case, &mut run, &canary, dns, engine, "c1");
            await_documented(&result, case, engine, &mut host, &mut seen);
            result
        });
        return judge(result, case.xfail_on(engine), seen.messages());
    }
    let renamed = worker.rename(case);
    let mut seen = Seen::accepting(renamed.conversations.clone());
    let command = worker.command().to_vec();
    let result = worker.host().and_then(|host| {
        let mut run = Run {
            host,
            seen: &mut seen,
            command: &command,
        };
        let result = check(
            &renamed.case,
            &mut run,
            &canary,
            dns,
            engine,
            &renamed.probe_conversation,
        );
        await_documented(&result, &renamed.case, engine, host, &mut seen);
        result
    });
    let passed = result.is_ok();
    let outcome = judge(result, renamed.case.xfail_on(engine), seen.messages());
    worker.finish(&renamed, passed);
    outcome
}

/// A case's host and what it has sent so far.
struct Run<'a> {
    host: &'a mut Host,
    seen: &'a mut Seen,
    /// The host command, for an adapter's restart.
    command: &'a [String],
}

/// When a case with an expected failure failed before the host sent what that failure documents,
/// listens for it up to the case's timeout more: the documented envelope may still be on its way
/// (a crashed web process is reported when the engine notices, later on a loaded machine).
/// Nothing else is judged meanwhile; a case that passed, or has no expected failure, is left as
/// it is.
fn await_documented(
    result: &Result<(), String>,
    case: &Case,
    engine: Engine,
    host: &mut Host,
    seen: &mut Seen,
) {
    let (Err(_), Some(xfail)) = (result, case.xfail_on(engine)) else {
        return;
    };
    let within = xfail.seen_within_ms.unwrap_or(case.timeout_ms);
    let deadline = Instant::now() + Duration::from_millis(within);
    seen.wait_for(host, deadline, |m| xfail.seen.matches(m));
}

/// The outcome of a case whose checks ended in `result`, having seen `messages`: an expected
/// failure counts as one only when the host sent what its `seen` documents; any other failure of
/// such a case is a failure of the run, naming both.
fn judge(
    result: Result<(), String>,
    xfail: Option<&ExpectedFailure>,
    messages: &[Value],
) -> Outcome {
    match (result, xfail) {
        (Ok(()), None) => Outcome::Pass,
        (Ok(()), Some(_)) => Outcome::UnexpectedPass,
        (Err(why), None) => Outcome::Fail(why),
        (Err(why), Some(x)) if messages.iter().any(|m| x.seen.matches(m)) => {
            Outcome::ExpectedFail(format!("{}: {why}", x.why))
        }
        (Err(why), Some(x)) => Outcome::Fail(format!(
            "failed otherwise than its expected failure documents (no envelope matched {}; {}): {why}",
            x.seen.pattern, x.why
        )),
    }
}

/// Runs `case`'s steps on `run`'s host and checks what it sent; `conversation` is the one of the
/// final probe.
fn check(
    case: &Case,
    run: &mut Run<'_>,
    canary: &HttpCanary,
    dns: Option<&DnsStub>,
    engine: Engine,
    conversation: &str,
) -> Result<(), String> {
    let vars = Vars {
        http: canary.url_for(&case.id),
        ws: canary.ws_url_for(&case.id),
        dns: crate::dns::name_for(&case.id),
        engine,
    };
    let Run {
        host,
        seen,
        command,
    } = run;
    for step in &case.steps {
        match step {
            Step::Send(envelope) => {
                let line = serde_json::to_string(&fill(envelope, &vars))
                    .map_err(|e| format!("step envelope: {e}"))?;
                host.send(&line)?;
            }
            Step::SendRaw(text) => host.send(&fill_text(text, &vars))?,
            Step::SendBig(big) => {
                let line = big
                    .line()
                    .ok_or("send_big: template longer than total_bytes")?;
                host.send(&line)?;
            }
            Step::HttpGet(url) => crate::canary::get(&fill_text(url, &vars))?,
            Step::WebsocketHandshake(url) => {
                crate::canary::websocket_handshake(&fill_text(url, &vars))?;
            }
            Step::DnsLookup(name) => crate::dns::lookup(&fill_text(name, &vars)),
            Step::WaitMs(ms) => seen.drain(host, Instant::now() + Duration::from_millis(*ms)),
            Step::WaitFor(predicate) => {
                let deadline = Instant::now() + Duration::from_millis(case.timeout_ms);
                if !seen.wait_for(host, deadline, |m| predicate.matches(m)) {
                    return Err(format!(
                        "wait_for {} not seen; saw {}",
                        predicate.pattern,
                        summary(seen.messages())
                    ));
                }
            }
            Step::Adapter(verb) => match verb.as_str() {
                "kill" => host.kill(),
                "restart" => {
                    host.kill();
                    **host = Host::spawn(command)?;
                }
                other => return Err(format!("unknown adapter verb {other}")),
            },
        }
    }
    // Expectations, in any order, within the timeout.
    let deadline = Instant::now() + Duration::from_millis(case.timeout_ms);
    while !case
        .expect
        .iter()
        .all(|p| seen.messages().iter().any(|m| p.matches(m)))
        && Instant::now() < deadline
    {
        seen.drain(
            host,
            (Instant::now() + Duration::from_millis(100)).min(deadline),
        );
    }
    if let Some(missing) = case
        .expect
        .iter()
        .find(|p| !seen.messages().iter().any(|m| p.matches(m)))
    {
        return Err(format!(
            "expected {} not seen; saw {}",
            missing.pattern,
            summary(seen.messages())
        ));
    }
    seen.drain(host, Instant::now() + Duration::from_millis(case.settle_ms));
    if let Some((p, m)) = case.forbid.iter().find_map(|p| {
        seen.messages()
            .iter()
            .find(|m| p.matches(m))
            .map(|m| (p, m))
    }) {
        return Err(format!("forbidden {} seen: {m}", p.pattern));
    }
    let hits = canary.hits();
    expect_seen("HTTP canary", case.canary.http, &hits)?;
    let upgrades: Vec<_> = hits.iter().filter(|h| h.websocket).collect();
    expect_seen("WebSocket canary", case.canary.websocket, &upgrades)?;
    if let Some(stub) = dns {
        let asked = stub.asked_for(&vars.dns);
        let kind = format!("DNS canary ({} on {}:53)", vars.dns, stub.address());
        expect_seen(&kind, case.canary.dns, &asked)?;
    }
    if case.probe {
        probe(host, seen, &case.id, conversation)?;
    }
    Ok(())
}

/// Whether a canary saw what the case expects of it: nothing, or something (a positive control).
fn expect_seen<T: std::fmt::Debug>(
    kind: &str,
    expect: Option<CanaryExpect>,
    seen: &[T],
) -> Result<(), String> {
    match expect {
        Some(CanaryExpect::None) if !seen.is_empty() => {
            Err(format!("the {kind} was reached: {seen:?}"))
        }
        Some(CanaryExpect::Hit) if seen.is_empty() => {
            Err(format!("the {kind} saw nothing (positive control)"))
        }
        _ => Ok(()),
    }
}

/// The host still answers: a `ui.patch` for an instance that does not exist is answered with a
/// `client.error` naming it (R-ENV-5).
fn probe(
    host: &mut Host,
    seen: &mut Seen,
    case_id: &str,
    conversation: &str,
) -> Result<(), String> {
    let id = format!("probe-{case_id}");
    let envelope = json!({
        "v": 1, "id": id, "type": "lineup.v1.ui.patch", "conversation_id": conversation,
        "sender": {"kind": "agent", "id": "agent"},
        "payload": {"instance_id": "conformance-probe-absent", "state": {}}
    });
    host.send(&envelope.to_string())?;
    let deadline = Instant::now() + Duration::from_secs(10);
    let answered = |s: &Seen| {
        s.messages()
            .iter()
            .any(|m| m["payload"]["in_reply_to"] == id)
    };
    while !answered(seen) && Instant::now() < deadline {
        seen.drain(
            host,
            (Instant::now() + Duration::from_millis(100)).min(deadline),
        );
    }
    if answered(seen) {
        Ok(())
    } else {
        Err("the host did not answer the final probe".into())
    }
}

fn summary(messages: &[Value]) -> String {
    let parts: Vec<String> = messages
        .iter()
        .map(|m| {
            let t = m["type"]
                .as_str()
                .unwrap_or("?")
                .trim_start_matches("lineup.v1.");
            match (
                m["payload"]["code"].as_str(),
                m["payload"]["status"].as_str(),
            ) {
                // A failure the case did not expect is read from this line alone: its
                // message says why (a refusal's field, a platform failure's cause).
                (Some(c), _) if c == "surface_failed" => format!(
                    "{t}({c}: {})",
                    m["payload"]["message"]
                        .as_str()
                        .unwrap_or_default()
                        .chars()
                        .take(300)
                        .collect::<String>()
                ),
                (Some(c), _) => format!("{t}({c})"),
                (_, Some(s)) => format!("{t}({s})"),
                _ => match m["payload"]["event"].as_str() {
                    Some(e) => format!("{t}({e} {})", m["payload"]["data"]),
                    None => t.to_owned(),
                },
            }
        })
        .collect();
    format!("[{}]", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A case expecting an envelope `{"type":"wanted"}` that no fake host sends, with an
    /// expected failure documented by `{"type":"limited"}`.
    fn xfail_case() -> Case {
        serde_json::from_value(json!({
            "id": "runner-xfail", "group": "runner", "rules": ["R-ENV-1"],
            "steps": [{"wait_ms": 50}],
            "expect": [{"match": {"type": "wanted"}}],
            "timeout_ms": 300, "settle_ms": 0, "probe": false, "fresh_host": true,
            "xfail": {"why": "issue 0: sends limited", "seen": {"match": {"type": "limited"}}}
        }))
        .expect("the case reads")
    }

    fn outcome_against(case: &Case, script: &str) -> Outcome {
        let command = ["sh".to_owned(), "-c".to_owned(), script.to_owned()];
        let mut worker = Worker::new(&command, true);
        run_case(
            case,
            &mut worker,
            Engine::Webkit,
            Err("no DNS canary in this test"),
        )
    }

    #[test]
    fn an_expected_failure_counts_only_when_the_documented_behaviour_is_seen() {
        let case = xfail_case();
        let documented = outcome_against(&case, r#"echo '{"type":"limited"}'; sleep 2"#);
        assert!(
            matches!(&documented, Outcome::ExpectedFail(why) if why.starts_with("issue 0")),
            "{documented:?}"
        );
        assert!(!documented.is_unexpected());
        // The same case failing another way (a host that sends nothing, or something else) is
        // a failure of the run.
        for script in ["sleep 2", r#"echo '{"type":"other"}'; sleep 2"#] {
            let other = outcome_against(&case, script);
            assert!(
                matches!(&other, Outcome::Fail(why) if why.contains("failed otherwise than its expected failure documents")),
                "{script}: {other:?}"
            );
            assert!(other.is_unexpected());
        }
        // And a pass of an expected failure fails the run (strict).
        let passed = outcome_against(&case, r#"echo '{"type":"wanted"}'; sleep 2"#);
        assert_eq!(passed, Outcome::UnexpectedPass);
        assert!(passed.is_unexpected());
    }
}
