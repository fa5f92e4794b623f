//! The capability driver on the fake view port (`rig_tests.rs`), with no display (#50 item 4):
//! what reaches the consent prompt and when, what runs and how often, and each way a call
//! ends, through the host's own session factory, driver and sink over a memory store.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use lineup_host_core::{Risk, Timestamp};
use serde_json::{json, Value};

use super::rig_tests::{Driven, NoWindows, Rig, Setup};

fn rig(risk: Risk, prompt: bool) -> Rig {
    Rig::new(Setup {
        driven: Some(Driven { risk, prompt }),
        ..Setup::default()
    })
}

/// Seconds since the epoch, on the wall clock the kernel reads.
fn now_seconds() -> i64 {
    let since = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    i64::try_from(since.as_secs()).unwrap()
}

/// The agent's `app.call` of `test.count` with `call_id`, due `seconds` from now.
fn call(rig: &mut Rig, call_id: &str, seconds: i64) {
    let expires_at = Timestamp::from_unix_seconds(now_seconds() + seconds).unwrap();
    rig.agent(
        "app.call",
        json!({"call_id": call_id, "capability": "test.count", "reason": "count the rows",
               "expires_at": expires_at.to_string(), "arguments": {"tag": call_id}}),
    );
}

fn runs(rig: &Rig) -> Vec<Value> {
    rig.runs.lock().unwrap().clone()
}

#[test]
fn a_consented_call_runs_once_after_the_users_yes_and_its_call_id_is_answered_again_unchanged() {
    let mut rig = rig(Risk::UserConfirmation, true);
    call(&mut rig, "k1", 60);
    // The prompt waits for the user; nothing ran, nothing was answered.
    assert_eq!(rig.prompts.borrow().len(), 1);
    let request = rig.prompts.borrow()[0].request().clone();
    assert_eq!(
        request.conversation().map(|c| c.id.as_str().to_owned()),
        Some("c1".to_owned()),
        "the prompt says which conversation asks (#49 item 4)"
    );
    assert!(runs(&rig).is_empty() && rig.results().is_empty());

    let pending = rig.prompts.borrow_mut().remove(0);
    pending.allow();
    rig.pump_until("the handler's result", |r| !r.results().is_empty());
    assert_eq!(runs(&rig), [json!({"tag": "k1"})]);
    let results = rig.results();
    assert_eq!(results.len(), 1, "{results:?}");
    assert_eq!(results[0]["call_id"], "k1");
    assert_eq!(results[0]["status"], "completed");
    assert_eq!(results[0]["result"], json!({"counted": "k1"}));

    // R-CAP-5: the same call_id again gets the same answer: no prompt, no second run.
    call(&mut rig, "k1", 60);
    rig.pump();
    assert!(rig.prompts.borrow().is_empty());
    assert_eq!(runs(&rig).len(), 1);
    let results = rig.results();
    assert_eq!(results.len(), 2, "{results:?}");
    assert_eq!(results[1]["status"], "completed");
    assert_eq!(results[1]["result"], json!({"counted": "k1"}));
}

#[test]
fn each_way_the_user_or_the_host_declines_ends_the_call_with_its_own_status_and_nothing_runs() {
    // (what happens to the prompt, whether there is one, the status the agent reads)
    let table: [(&str, bool, &str); 4] = [
        ("deny", true, "rejected"),
        ("cancel", true, "cancelled"),
        ("drop", true, "cancelled"),
        ("no prompt", false, "failed"),
    ];
    for (answer, prompt, status) in table {
        let mut rig = rig(Risk::UserConfirmation, prompt);
        call(&mut rig, "k1", 60);
        if prompt {
            let pending = rig.prompts.borrow_mut().remove(0);
            match answer {
                "deny" => pending.deny(),
                "cancel" => pending.cancel(),
                _ => drop(pending),
            }
        }
        rig.pump_until(answer, |r| !r.results().is_empty());
        let results = rig.results();
        assert_eq!(results.len(), 1, "{answer}: {results:?}");
        assert_eq!(results[0]["status"], status, "{answer}: {results:?}");
        assert!(runs(&rig).is_empty(), "{answer}: the handler ran");
    }
}

#[test]
fn a_display_only_call_runs_without_a_prompt() {
    let mut rig = rig(Risk::DisplayOnly, true);
    call(&mut rig, "k1", 60);
    rig.pump_until("the handler's result", |r| !r.results().is_empty());
    assert!(rig.prompts.borrow().is_empty());
    assert_eq!(runs(&rig).len(), 1);
    assert_eq!(rig.results()[0]["status"], "completed");
}

#[test]
fn a_prompt_still_open_at_the_calls_deadline_is_withdrawn_and_the_call_expires() {
    let mut rig = rig(Risk::UserConfirmation, true);
    call(&mut rig, "k1", 1);
    assert_eq!(rig.prompts.borrow().len(), 1);
    // The kernel's clock: what is due once the deadline passed (the wall clock is real).
    let due = Timestamp::from_unix_seconds(now_seconds() + 1).unwrap();
    while Timestamp::from_unix_seconds(now_seconds()).unwrap() <= due {
        std::thread::sleep(Duration::from_millis(50));
    }
    rig.engine.handle_timeout(None, &NoWindows);
    rig.pump();
    assert!(
        rig.prompts.borrow()[0].is_withdrawn(),
        "the prompt still asks"
    );
    let results = rig.results();
    assert_eq!(results.len(), 1, "{results:?}");
    assert_eq!(results[0]["status"], "expired");
    // A yes after the deadline changes nothing.
    let pending = rig.prompts.borrow_mut().remove(0);
    pending.allow();
    rig.pump();
    assert!(runs(&rig).is_empty());
    assert_eq!(rig.results().len(), 1);
}

#[test]
fn at_shutdown_a_waiting_prompt_is_withdrawn_and_nothing_is_sent_or_run() {
    let mut rig = rig(Risk::UserConfirmation, true);
    call(&mut rig, "k1", 60);
    assert_eq!(rig.prompts.borrow().len(), 1);
    assert!(
        !rig.prompts.borrow()[0].is_withdrawn(),
        "positive control: it asks"
    );
    rig.engine.close_all();
    rig.pump();
    assert!(
        rig.prompts.borrow()[0].is_withdrawn(),
        "the prompt still asks after shutdown"
    );
    assert!(rig.results().is_empty(), "the agent is gone: nothing sent");
    // A yes that comes anyway runs nothing.
    let pending = rig.prompts.borrow_mut().remove(0);
    pending.allow();
    rig.pump();
    assert!(runs(&rig).is_empty());
}
