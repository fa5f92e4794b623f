//! App Capabilities through a real [`Host`](lineup_host::Host) under Xvfb: the agent
//! learns what the host offers (`client.inventory`, `app.list`), asks with `app.call`, the user
//! decides in the built-in trusted prompt with a real XTEST click, the handler runs once on its
//! own thread, and exactly one `app.result` answers (R-SEC-5, R-INV-1, R-CAP-1..5).
#![allow(clippy::print_stdout, clippy::unwrap_used, missing_docs)]

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use lineup_host::platform::PromptSnapshot;
use lineup_host::{HostBuilder, PromptContent, PromptOptions, PromptQueue};
use lineup_host_core::{Capability, CapabilityName, HandlerError, JsonObject, OpaqueVersion, Risk};
use lineup_tests::ensure;
use lineup_tests::home::private_home;
use lineup_tests::host_harness::{HostHarness, TestHost};
use lineup_tests::prompt::button;
use lineup_tests::runner::Outcome;
use lineup_tests::x11::X11;
use serde_json::{json, Value};

const TITLE: &str = "Permission request";

pub(crate) fn run() {
    let _home = private_home("app_call");
    let mut h = HostHarness::start();
    let x = match X11::connect() {
        Ok(x) => x,
        Err(e) => {
            println!("no X display for the prompt scenarios: {e}");
            std::process::exit(1);
        }
    };
    h.run(
        "r_inv_1_r_cap_5_inventory_first_display_only_runs_once_and_a_repeat_gets_the_stored_result",
        display_only,
    );
    h.run(
        "r_cap_2_r_cap_4_user_confirmation_asks_in_the_trusted_prompt_and_a_real_click_decides",
        |h| confirmation(h, &x),
    );
    h.run(
        "an_async_handler_runs_on_the_embedders_tokio_runtime",
        async_handler,
    );
    h.finish();
}

fn schema(value: Value) -> JsonObject {
    serde_json::from_value(value).unwrap()
}

fn capability(name: &str, risk: Risk, input: Value) -> Capability {
    Capability::new(
        CapabilityName::try_from(name).unwrap(),
        OpaqueVersion::try_from("1.0").unwrap(),
        risk,
        schema(input),
    )
    .unwrap()
}

/// A handler that counts its runs and echoes `text`.
fn counting(runs: &Arc<AtomicUsize>) -> impl Fn(JsonObject) -> Result<JsonObject, HandlerError> {
    let runs = Arc::clone(runs);
    move |arguments: JsonObject| {
        runs.fetch_add(1, Ordering::SeqCst);
        let text = arguments
            .as_map()
            .get("text")
            .cloned()
            .unwrap_or(Value::Null);
        Ok(schema(json!({ "echo": text })))
    }
}

/// An RFC 3339 time `secs` seconds from now.
fn in_seconds(secs: u64) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + secs;
    time_of(now)
}

fn time_of(unix: u64) -> String {
    // Days since the epoch to a civil date (Howard Hinnant's algorithm).
    let days = (unix / 86_400) as i64;
    let secs = unix % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

fn call(t: &TestHost, call_id: &str, capability: &str, arguments: Value) -> Vec<u8> {
    t.agent.envelope(
        "lineup.v1.app.call",
        json!({
            "call_id": call_id,
            "capability": capability,
            "reason": "the user asked for it",
            "expires_at": in_seconds(120),
            "arguments": arguments,
        }),
    )
}

/// R-INV-1, R-CAP-1, R-CAP-5: the session's first messages are `client.inventory` and `app.list`
/// naming the capability; a `display_only` call runs once without a prompt; the same `call_id`
/// again gets the same result without a second run; the same `call_id` with other arguments is
/// refused.
fn display_only(h: &mut HostHarness) -> Outcome {
    let runs = Arc::new(AtomicUsize::new(0));
    let builder = HostBuilder::new().capability(
        capability(
            "test.echo",
            Risk::DisplayOnly,
            json!({ "type": "object", "required": ["text"],
                    "properties": { "text": { "type": "string", "maxLength": 64 } } }),
        ),
        counting(&runs),
    );
    let mut t = h.host(builder)?;
    t.send(call(&t, "c1", "test.echo", json!({ "text": "北京" })))?;
    ensure!(
        h.wait(&mut t, |_, rec| rec
            .sent()
            .iter()
            .any(|m| m["type"] == "lineup.v1.app.result")),
        "no app.result: {:?}",
        t.rec.sent()
    );
    let sent = t.rec.sent();
    let types: Vec<&str> = sent.iter().filter_map(|m| m["type"].as_str()).collect();
    ensure!(
        types.first() == Some(&"lineup.v1.client.inventory")
            && types.get(1) == Some(&"lineup.v1.app.list"),
        "the inventory must come first: {types:?}"
    );
    let inventory = &sent[0]["payload"];
    ensure!(
        inventory["capabilities"].as_array().is_some_and(|c| c
            .iter()
            .any(|c| c["name"] == "test.echo" && c["risk"] == "display_only")),
        "the inventory does not declare test.echo: {inventory}"
    );
    let first = results_of(&t.rec.sent(), "c1");
    ensure!(
        first.len() == 1
            && first[0]["status"] == "completed"
            && first[0]["result"] == json!({ "echo": "北京" }),
        "expected one completed result: {first:?}"
    );
    ensure!(
        runs.load(Ordering::SeqCst) == 1,
        "the handler ran {runs:?} times"
    );

    // R-CAP-5: the same call again is answered from its record.
    t.send(call(&t, "c1", "test.echo", json!({ "text": "北京" })))?;
    h.wait(&mut t, |_, rec| {
        rec.sent()
            .iter()
            .filter(|m| m["type"] == "lineup.v1.app.result")
            .count()
            >= 2
    });
    let again = results_of(&t.rec.sent(), "c1");
    ensure!(
        again.len() == 2
            && again[1]["status"] == "completed"
            && again[1]["result"] == first[0]["result"],
        "a repeated call_id should get the stored result: {again:?}"
    );
    ensure!(
        runs.load(Ordering::SeqCst) == 1,
        "a repeated call_id ran the handler again"
    );
    // Other arguments under the same call_id: refused, never run.
    t.send(call(&t, "c1", "test.echo", json!({ "text": "上海" })))?;
    h.wait(&mut t, |_, rec| {
        rec.sent()
            .iter()
            .filter(|m| m["type"] == "lineup.v1.app.result")
            .count()
            >= 3
    });
    let reused = results_of(&t.rec.sent(), "c1");
    ensure!(
        reused.len() == 3 && reused[2]["status"] == "failed",
        "a reused call_id with other arguments must fail: {reused:?}"
    );
    // Invalid arguments: failed, naming the path; the handler never ran.
    t.send(call(&t, "c2", "test.echo", json!({ "text": 5 })))?;
    h.wait(&mut t, |_, rec| {
        rec.sent()
            .iter()
            .any(|m| m["type"] == "lineup.v1.app.result" && m["payload"]["call_id"] == "c2")
    });
    let invalid = results_of(&t.rec.sent(), "c2");
    ensure!(
        invalid.len() == 1
            && invalid[0]["status"] == "failed"
            && invalid[0]["error"]["field"]
                .as_str()
                .is_some_and(|f| f.contains("text")),
        "invalid arguments should fail naming the field: {invalid:?}"
    );
    ensure!(
        runs.load(Ordering::SeqCst) == 1,
        "the handler ran for invalid arguments"
    );
    h.shut_down(t)
}

/// Reads what the prompt shows: its buttons' boxes among it.
fn snapshot(
    h: &mut HostHarness,
    t: &mut TestHost,
    q: &PromptQueue,
) -> Result<PromptSnapshot, String> {
    let slot: Rc<RefCell<Option<Option<PromptSnapshot>>>> = Rc::default();
    let fill = Rc::clone(&slot);
    q.snapshot(move |s| *fill.borrow_mut() = Some(s));
    h.wait(t, |_, _| slot.borrow().is_some());
    let taken = slot.borrow_mut().take();
    taken
        .flatten()
        .ok_or_else(|| "the prompt page could not be read".to_owned())
}

/// Clicks `id` in the prompt once it takes input.
fn answer_prompt(
    h: &mut HostHarness,
    t: &mut TestHost,
    x: &X11,
    q: &PromptQueue,
    id: &str,
) -> Outcome {
    let mut window = None;
    ensure!(
        h.wait(t, |_, _| {
            window = x.find_window_by_title(TITLE).filter(|w| x.is_viewable(*w));
            window.is_some()
        }),
        "the prompt window was not mapped"
    );
    let window = window.ok_or("no prompt window")?;
    ensure!(
        h.wait(t, |_, _| q.accepts_input()),
        "the prompt never took input"
    );
    let s = snapshot(h, t, q)?;
    let at = button(x, window, &s, id)?;
    x.click(at.0, at.1)?;
    Ok(())
}

/// R-CAP-2, R-CAP-4: a `user_confirmation` call waits for the user in the built-in trusted
/// prompt; a real click on Allow runs it once (`completed`), a real click on Deny answers
/// `rejected` and never runs it. `PromptQueue::on_shown` reports each prompt once, with the
/// capability, risk, reason and the call's `expires_at`.
fn confirmation(h: &mut HostHarness, x: &X11) -> Outcome {
    let runs = Arc::new(AtomicUsize::new(0));
    let queue =
        PromptQueue::new(&h.event_loop, PromptOptions::default()).map_err(|e| e.to_string())?;
    let shown: Rc<RefCell<Vec<PromptContent>>> = Rc::default();
    let sink = Rc::clone(&shown);
    queue.on_shown(move |request| sink.borrow_mut().push(request.clone()));
    let builder = HostBuilder::new()
        .capability(
            capability(
                "test.confirm",
                Risk::UserConfirmation,
                json!({ "type": "object", "properties": { "text": { "type": "string" } } }),
            ),
            counting(&runs),
        )
        .consent_prompt(queue.clone());
    let mut t = h.host(builder)?;
    t.send(call(
        &t,
        "k1",
        "test.confirm",
        json!({ "text": "allow me" }),
    ))?;
    let asked_at = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    answer_prompt(h, &mut t, x, &queue, "allow")?;
    ensure!(
        h.wait(&mut t, |_, rec| !results_of(&rec.sent(), "k1").is_empty()),
        "no result after Allow"
    );
    {
        let shown = shown.borrow();
        ensure!(shown.len() == 1, "reported shown {} times", shown.len());
        let r = &shown[0];
        let left = r
            .expires_at()
            .map(|at| at.unix_seconds() - i64::try_from(asked_at).unwrap());
        ensure!(
            r.capability().as_str() == "test.confirm"
                && r.risk() == Risk::UserConfirmation
                && r.reason() == "the user asked for it"
                && left.is_some_and(|s| (118..=121).contains(&s)),
            "reported {r:?}, expiring {left:?} s after the call"
        );
    }
    let allowed = results_of(&t.rec.sent(), "k1");
    ensure!(
        allowed[0]["status"] == "completed"
            && allowed[0]["result"] == json!({ "echo": "allow me" }),
        "Allow should complete the call: {allowed:?}"
    );
    ensure!(runs.load(Ordering::SeqCst) == 1, "ran {runs:?} times");

    t.send(call(&t, "k2", "test.confirm", json!({ "text": "deny me" })))?;
    answer_prompt(h, &mut t, x, &queue, "deny")?;
    ensure!(
        h.wait(&mut t, |_, rec| !results_of(&rec.sent(), "k2").is_empty()),
        "no result after Deny"
    );
    let denied = results_of(&t.rec.sent(), "k2");
    ensure!(
        denied[0]["status"] == "rejected",
        "Deny should reject the call: {denied:?}"
    );
    ensure!(
        shown.borrow().len() == 2,
        "reported shown {} times",
        shown.borrow().len()
    );
    ensure!(runs.load(Ordering::SeqCst) == 1, "a denied call ran");
    h.shut_down(t)
}

/// The `app.result` payloads for `call_id` among `sent`, in order.
fn results_of(sent: &[Value], call_id: &str) -> Vec<Value> {
    sent.iter()
        .filter(|m| m["type"] == "lineup.v1.app.result" && m["payload"]["call_id"] == call_id)
        .map(|m| m["payload"].clone())
        .collect()
}

/// An async handler for tokio embedders: the call runs on the embedder's runtime (its worker
/// thread, not the GUI thread nor the handler thread) and its result is the `app.result`.
fn async_handler(h: &mut HostHarness) -> Outcome {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("embedder-runtime")
        .enable_time()
        .build()
        .map_err(|e| e.to_string())?;
    let handler =
        lineup_host::tokio_handler(runtime.handle().clone(), |args: JsonObject| async move {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            let thread = std::thread::current().name().unwrap_or_default().to_owned();
            let text = args.as_map().get("text").cloned().unwrap_or(Value::Null);
            Ok::<_, HandlerError>(schema(json!({ "echo": text, "thread": thread })))
        });
    let builder = HostBuilder::new().capability(
        capability("test.async", Risk::DisplayOnly, json!({ "type": "object" })),
        handler,
    );
    let mut t = h.host(builder)?;
    t.send(call(&t, "a1", "test.async", json!({ "text": "async" })))?;
    ensure!(
        h.wait(&mut t, |_, rec| !results_of(&rec.sent(), "a1").is_empty()),
        "no result from the async handler"
    );
    let result = results_of(&t.rec.sent(), "a1");
    ensure!(
        result[0]["status"] == "completed"
            && result[0]["result"] == json!({ "echo": "async", "thread": "embedder-runtime" }),
        "the async handler should complete on the embedder's runtime: {result:?}"
    );
    h.shut_down(t)
}
