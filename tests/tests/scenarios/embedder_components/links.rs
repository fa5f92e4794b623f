//! R-STD-11 through a real host (§5 check 3): a link in a component the built-in renderer shows
//! reaches the desktop only after a real input event in that view and the host's link confirm,
//! which names the link's punycode host; the host follows only a link of the kernel's own tree,
//! even with a real input event behind the report; a refusal opens nothing; each answer is in
//! the audit (R-CAP-6) as a `link` record.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;
use std::time::Duration;

use lineup_host::platform::COMPONENT_STACK_TITLE;
use lineup_host::{ComponentOptions, DesktopCall, HostBuilder, PendingConsent, RecordingDesktop};
use lineup_tests::ensure;
use lineup_tests::host_harness::{HostHarness, TestHost};
use lineup_tests::runner::Outcome;
use lineup_tests::x11::X11;
use serde_json::{json, Value};

const TEXT: &str = "Read [the guide](https://Bücher.example/guide) or [this](javascript:alert(1)).";
const URL: &str = "https://xn--bcher-kva.example/guide";

/// Keysyms: Shift (a key that does nothing in the page but is a real input event), Tab, space.
const SHIFT: u32 = 0xffe1;
const TAB: u32 = 0xff09;
const SPACE: u32 = 0x20;

type Prompts = Rc<RefCell<VecDeque<PendingConsent>>>;

/// Waits for the link confirm; checks what it shows.
fn confirm(
    h: &mut HostHarness,
    t: &mut TestHost,
    prompts: &Prompts,
) -> Result<PendingConsent, String> {
    ensure!(
        h.wait(t, |_, _| !prompts.borrow().is_empty()),
        "no link confirm was shown"
    );
    let pending = prompts.borrow_mut().pop_front().ok_or("no prompt")?;
    let shown = pending.request();
    ensure!(
        shown.link_host() == Some("xn--bcher-kva.example")
            && shown.capability().as_str() == "app.open_url"
            && shown.headline().contains("link")
            && shown.agent() == "a1",
        "the link confirm shows {:?} {:?} {:?} {:?}",
        shown.link_host(),
        shown.capability(),
        shown.headline(),
        shown.agent()
    );
    Ok(pending)
}

pub(super) fn followed_after_the_confirm(h: &mut HostHarness) -> Outcome {
    let x = X11::connect().map_err(|e| e.to_string())?;
    let dir = std::env::temp_dir().join(format!("lineup-links-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let store = lineup_store::Store::open(&dir).map_err(|e| e.to_string())?;
    let desktop = RecordingDesktop::new();
    let prompts: Prompts = Rc::default();
    let queue = Rc::clone(&prompts);
    let mut t = h.host(
        HostBuilder::new()
            .builtin_components(Some(ComponentOptions::default()))
            .desktop(desktop.clone())
            .capability_store(store)
            .consent_prompt(move |p: PendingConsent| queue.borrow_mut().push_back(p)),
    )?;
    t.send(t.agent.envelope(
        "lineup.v1.ui.open",
        json!({"instance_id": "m1", "component": {"id": "markdown", "version": "1"},
               "state": {"text": TEXT}}),
    ))?;
    let mut key = None;
    ensure!(
        h.wait(&mut t, |host, _| {
            key = host
                .shown_components()
                .into_iter()
                .find(|k| k.instance.as_str() == "m1");
            key.is_some()
        }),
        "the markdown was never shown"
    );
    let key = key.ok_or("no key")?;
    let xid = x
        .find_window_by_title(COMPONENT_STACK_TITLE)
        .ok_or("no component window")?;
    x.focus(xid).map_err(|e| e.to_string())?;
    h.settle(&mut t, Duration::from_millis(900));
    let page = |t: &TestHost, url: &str| {
        t.host.post_from_component_page_for_test(
            &key,
            &json!({"type": "link", "url": url}).to_string(),
        );
    };

    // The user tabs to the link: its box holds the focus, so its keys count for it.
    x.key(TAB).map_err(|e| e.to_string())?;
    h.settle(&mut t, Duration::from_millis(100));
    // With a real key behind it, a URL the kernel's tree does not hold is not followed...
    x.key(SHIFT).map_err(|e| e.to_string())?;
    page(&t, "https://evil.example/");
    h.settle(&mut t, Duration::from_millis(700));
    ensure!(
        prompts.borrow().is_empty(),
        "a URL of the page's own was offered"
    );
    // ...while the tree's own link is (the positive control): the confirm, then a refusal.
    x.key(SHIFT).map_err(|e| e.to_string())?;
    page(&t, URL);
    confirm(h, &mut t, &prompts)?.deny();
    h.settle(&mut t, Duration::from_millis(300));
    ensure!(desktop.calls().is_empty(), "a refused link was opened");

    // The page's own report with no input event behind it: nothing.
    h.settle(&mut t, Duration::from_millis(1200));
    page(&t, URL);
    h.settle(&mut t, Duration::from_millis(700));
    ensure!(
        prompts.borrow().is_empty(),
        "a page-made report was offered"
    );

    // The user: Space on the link; the confirm; allowed, the desktop opens it.
    x.key(SPACE).map_err(|e| e.to_string())?;
    confirm(h, &mut t, &prompts)?.allow();
    let opened = DesktopCall::OpenUri(URL.to_owned());
    ensure!(
        h.wait(&mut t, |_, _| desktop.calls().contains(&opened)),
        "the allowed link was not opened: {:?}",
        desktop.calls()
    );
    ensure!(desktop.calls().len() == 1, "{:?}", desktop.calls());
    ensure!(
        t.rec.ui_events().is_empty(),
        "the agent heard of a link: {:?}",
        t.rec.ui_events()
    );

    // The audit holds both answers as `link` records.
    let mut lines = Vec::new();
    lineup_store::Store::open(&dir)
        .and_then(|s| s.audit().export(&mut lines))
        .map_err(|e| e.to_string())?;
    let records: Vec<Value> = String::from_utf8_lossy(&lines)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .filter(|r: &Value| r["kind"] == "link")
        .collect();
    let seen: Vec<(String, String, String)> = records
        .iter()
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap_or_default().to_owned();
            (s("call_id"), s("decision"), s("status"))
        })
        .collect();
    ensure!(
        seen == [
            (
                "link:m1:1".to_owned(),
                "denied".to_owned(),
                "rejected".to_owned()
            ),
            (
                "link:m1:2".to_owned(),
                "allowed".to_owned(),
                "completed".to_owned()
            ),
        ],
        "audit: {seen:?}"
    );
    ensure!(
        records
            .iter()
            .all(|r| r["capability"] == "app.open_url" && r["decision_source"] == "prompt"),
        "{records:?}"
    );
    drop(t);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
