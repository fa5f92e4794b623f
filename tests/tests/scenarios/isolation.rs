//! A Surface's isolation in a real WebKitGTK webview (R-SEC-2, R-SEC-2a, R-SEC-3, R-SEC-4,
//! R-UI-3, R-UI-5). Every negative check has a positive control: the same page proves the
//! channel works (a message posted after the refused action), or the same page served without
//! its CSP shows that the shell itself reports the attempt.
#![allow(clippy::print_stdout, clippy::unwrap_used, missing_docs)]

use std::path::Path;
use std::time::Duration;

use lineup_host::platform::{Shell, ViewEvent};
use lineup_host::{ProbeStatus, ShellError, ViewConfig};
use lineup_tests::canary::Canary;
use lineup_tests::ensure;
use lineup_tests::home::{files_containing, private_home};
use lineup_tests::procs::{kill, web_processes};
use lineup_tests::runner::Outcome;
use lineup_tests::view_harness::{pump, Harness, Log, Page};
use serde_json::json;

pub(crate) fn run() {
    let home = private_home("isolation");
    let mut h = Harness::start(ViewConfig::default());
    h.run(
        "r_sec_3_csp_header_applied_origin_null_eval_and_network_blocked",
        csp_applied,
    );
    h.run("r_sec_4_ipc_attributed_to_the_receiving_view", ipc_identity);
    h.run(
        "r_sec_2a_srcdoc_subframe_post_is_its_own_views",
        srcdoc_subframe,
    );
    h.run(
        "r_sec_2a_navigation_of_any_frame_refused",
        navigation_refused,
    );
    h.run("r_sec_2_window_open_refused", window_open_refused);
    h.run("r_sec_2_download_refused_nothing_written", |h| {
        downloads_refused(h, &home)
    });
    h.run("r_sec_2_permission_requests_denied", permissions_denied);
    h.run(
        "r_ui_5_window_close_from_the_page_destroys_nothing",
        window_close,
    );
    h.run("alert_confirm_prompt_do_not_block", dialogs);
    h.run("r_sec_2_devtools_off_in_debug_profile", devtools_off);
    h.run(
        "r_ui_3_state_reaches_on_state_only_as_an_object",
        state_delivery,
    );
    h.run("r_sec_2_two_surfaces_share_no_storage", storage_separate);
    h.run("ipc_message_over_the_limit_dropped", oversized_ipc);
    h.run("web_process_termination_reported_as_crashed", crash);
    h.run(
        "closed_view_reports_nothing_and_its_web_process_exits",
        closed_view_silent,
    );
    h.finish();
}

fn posted(log: &Log, name: &str) -> impl Fn() -> bool {
    let log = log.clone();
    let name = name.to_owned();
    move || !log.posts(&name).is_empty()
}

fn csp_applied(h: &mut Harness) -> Outcome {
    let canary = Canary::start().map_err(|e| e.to_string())?;
    let url = canary.url("leak");
    let js = format!(
        "var r = {{ origin: String(self.origin) }};
         try {{ eval('1'); r.eval = 'allowed'; }} catch (e) {{ r.eval = 'blocked'; }}
         try {{ void localStorage.length; r.storage = 'allowed'; }} catch (e) {{ r.storage = 'blocked'; }}
         post('policy', r);
         fetch('{url}').then(
           function () {{ post('fetch', {{ rejected: false }}); }},
           function () {{ post('fetch', {{ rejected: true }}); }});"
    );

    let (view, log) = h.open(&Page::new("<p>csp</p>", &js))?;
    ensure!(
        h.wait(&[], posted(&log, "fetch")),
        "no fetch report: {:?}",
        log.events()
    );
    h.settle(Duration::from_millis(300));
    let policy = log.first_post("policy").unwrap_or_default();
    ensure!(
        policy["origin"] == "null",
        "origin must be \"null\": {policy}"
    );
    ensure!(
        policy["eval"] == "blocked",
        "eval must be blocked: {policy}"
    );
    ensure!(
        policy["storage"] == "blocked",
        "localStorage must throw: {policy}"
    );
    ensure!(
        log.first_post("fetch") == Some(json!({ "rejected": true })),
        "fetch must be rejected: {:?}",
        log.posts("fetch")
    );
    ensure!(
        canary.connections() == 0,
        "the loopback listener was reached under the CSP"
    );
    view.close();

    // Positive control: the same bundle without the CSP header, in a shell without the refusing
    // network proxy (R-SEC-3, which refuses the fetch too), reaches the listener.
    let strict = h.swap_shell(ViewConfig::default().dangerous().without_network_proxy())?;
    let control = h.open(&Page::new("<p>csp</p>", &js).without_csp());
    h.shell = strict;
    let (control, control_log) = control?;
    let reached = h.wait(&[], || canary.connections() > 0);
    let policy = control_log.first_post("policy").unwrap_or_default();
    ensure!(reached, "control: the listener saw nothing without the CSP");
    ensure!(
        policy["eval"] == "allowed",
        "control: eval ran without the CSP: {policy}"
    );
    ensure!(
        policy["origin"] != "null",
        "control: origin is not opaque: {policy}"
    );
    control.close();
    Ok(())
}

fn ipc_identity(h: &mut Harness) -> Outcome {
    let page = |marker: &str| {
        Page::new(
            "<p>who</p>",
            &format!(
                "post('whoami', {{ marker: '{marker}' }});
                 setTimeout(function () {{ post('whoami', {{ marker: '{marker}' }}); }}, 100);"
            ),
        )
    };
    let (a, log_a) = h.open(&page("A"))?;
    let (b, log_b) = h.open(&page("B"))?;
    let both = h.wait(&[], || {
        log_a.posts("whoami").len() == 2 && log_b.posts("whoami").len() == 2
    });
    ensure!(
        both,
        "messages missing: A {:?} B {:?}",
        log_a.events(),
        log_b.events()
    );
    ensure!(
        log_a.posts("whoami").iter().all(|m| m["marker"] == "A"),
        "A's handler got B's message: {:?}",
        log_a.posts("whoami")
    );
    ensure!(
        log_b.posts("whoami").iter().all(|m| m["marker"] == "B"),
        "B's handler got A's message: {:?}",
        log_b.posts("whoami")
    );
    a.close();
    b.close();
    Ok(())
}

const SUBFRAME_JS: &str = r#"
window.addEventListener('message', function (e) {
  if (e.data === 'subframe-ran') { post('subframe-ran', {}); }
});
var f = document.createElement('iframe');
f.setAttribute('sandbox', 'allow-scripts');
f.srcdoc = '<script>' +
  'window.webkit.messageHandlers.ipc.postMessage(JSON.stringify({namespace: "lineup.surface.v1", type: "event", event: "from-subframe", data: {origin: String(self.origin), instance_id: "someone-else"}}));' +
  'parent.postMessage("subframe-ran", "*");' +
  '<\/script>';
document.body.appendChild(f);
"#;

fn srcdoc_subframe(h: &mut Harness) -> Outcome {
    let (other, other_log) = h.open(&Page::new("<p>other</p>", ""))?;
    let (view, log) = h.open(&Page::new("<p>frames</p>", SUBFRAME_JS))?;
    let arrived = h.wait(&[], || {
        !log.posts("from-subframe").is_empty() && !log.posts("subframe-ran").is_empty()
    });
    ensure!(
        arrived,
        "subframe post or control missing: {:?}",
        log.events()
    );
    let from = log.first_post("from-subframe").unwrap_or_default();
    ensure!(
        from["origin"] == "null",
        "the subframe is sandboxed too: {from}"
    );
    ensure!(
        other_log.posts("from-subframe").is_empty(),
        "the other view received the subframe's post"
    );
    ensure!(
        log.refused_navigations().is_empty(),
        "about:srcdoc must be allowed: {:?}",
        log.refused_navigations()
    );
    view.close();
    other.close();
    Ok(())
}

fn navigation_script(other: &str) -> String {
    format!(
        r#"
        setTimeout(function () {{ location.href = 'https://example.com/'; }}, 50);
        setTimeout(function () {{ location.href = '{other}'; }}, 250);
        setTimeout(function () {{
          var a = document.createElement('a');
          a.href = 'https://example.org/'; a.target = '_top';
          document.body.appendChild(a); a.click();
        }}, 450);
        setTimeout(function () {{
          var f = document.createElement('iframe');
          f.setAttribute('sandbox', 'allow-scripts');
          f.srcdoc = '<script>' +
            'window.webkit.messageHandlers.ipc.postMessage(JSON.stringify({{namespace: "lineup.surface.v1", type: "event", event: "subframe-navigating", data: {{}}}}));' +
            'location.href = "https://example.net/";<\/script>';
          document.body.appendChild(f);
        }}, 650);
        setTimeout(function () {{ post('still-here', {{ href: location.href }}); }}, 1100);
        "#
    )
}

fn navigation_refused(h: &mut Harness) -> Outcome {
    let other = format!("lineup-surface://{}/", "ab".repeat(16));
    let js = navigation_script(&other);
    let (view, log) = h.open(&Page::new("<p>nav</p>", &js))?;
    let done = h.wait(&[], || {
        !log.posts("still-here").is_empty() && !log.posts("subframe-navigating").is_empty()
    });
    ensure!(done, "page gone or subframe silent: {:?}", log.events());
    let refused = log.refused_navigations();
    for target in [
        "https://example.com/",
        other.as_str(),
        "https://example.org/",
    ] {
        ensure!(
            refused.iter().any(|r| r == target),
            "navigation to {target} not reported refused; refused: {refused:?}"
        );
    }
    let here = log.first_post("still-here").unwrap_or_default();
    ensure!(here["href"] == view.url(), "the document changed: {here}");
    ensure!(
        log.count(|e| *e == ViewEvent::LoadFinished) == 1,
        "a second document loaded: {:?}",
        log.events()
    );
    view.close();

    // Under the CSP, frame-src 'none' stops the subframe's navigation inside WebKit. Without it
    // the navigation reaches the shell's policy, which refuses it as well (R-SEC-2a).
    let (control, control_log) = h.open(&Page::new("<p>nav</p>", &js).without_csp())?;
    let refused = h.wait(&[], || {
        control_log
            .refused_navigations()
            .iter()
            .any(|r| r == "https://example.net/")
            && !control_log.posts("still-here").is_empty()
    });
    ensure!(
        refused,
        "control: the subframe navigation was not refused by the shell: {:?}",
        control_log.events()
    );
    let here = control_log.first_post("still-here").unwrap_or_default();
    ensure!(
        here["href"] == control.url(),
        "control: the document changed: {here}"
    );
    control.close();
    Ok(())
}

fn toplevel_windows() -> usize {
    gtk::Window::list_toplevels().len()
}

fn window_open_refused(h: &mut Harness) -> Outcome {
    let js = r#"
      setTimeout(function () {
        var w = window.open('https://example.com/');
        var a = document.createElement('a');
        a.href = 'https://example.org/'; a.target = '_blank';
        document.body.appendChild(a); a.click();
        setTimeout(function () { post('opened', { isNull: w === null }); }, 300);
      }, 300);
    "#;
    let (view, log) = h.open(&Page::new("<p>open</p>", js))?;
    let before = toplevel_windows();
    ensure!(
        h.wait(&[], posted(&log, "opened")),
        "no report: {:?}",
        log.events()
    );
    ensure!(
        log.first_post("opened") == Some(json!({ "isNull": true })),
        "window.open returned a window: {:?}",
        log.posts("opened")
    );
    ensure!(
        toplevel_windows() == before,
        "a window other than the view's own appeared"
    );
    view.close();
    Ok(())
}

const DOWNLOAD_JS: &str = r#"
var a = document.createElement('a');
a.href = 'data:application/octet-stream,secret-download-payload'; a.download = 'x.bin';
document.body.appendChild(a); a.click();
var b = document.createElement('a');
b.href = URL.createObjectURL(new Blob(['secret-download-payload'], { type: 'application/octet-stream' }));
b.download = 'y.bin'; document.body.appendChild(b);
setTimeout(function () { b.click(); }, 100);
setTimeout(function () { post('after-download', {}); }, 600);
"#;

fn is_download_refusal(e: &ViewEvent) -> bool {
    match e {
        ViewEvent::DownloadRefused(_) => true,
        ViewEvent::NavigationRefused(uri) => uri.starts_with("data:") || uri.starts_with("blob:"),
        _ => false,
    }
}

fn downloads_refused(h: &mut Harness, home: &Path) -> Outcome {
    let (view, log) = h.open(&Page::new("<p>dl</p>", DOWNLOAD_JS))?;
    ensure!(
        h.wait(&[], posted(&log, "after-download")),
        "page stuck: {:?}",
        log.events()
    );
    view.close();

    // Positive control: without the CSP sandbox the attempts reach the shell, which refuses them.
    let (control, control_log) = h.open(&Page::new("<p>dl</p>", DOWNLOAD_JS).without_csp())?;
    ensure!(
        h.wait(&[], || control_log.count(is_download_refusal) >= 2
            && !control_log.posts("after-download").is_empty()),
        "control: the shell did not report both download attempts: {:?}",
        control_log.events()
    );
    control.close();
    h.settle(Duration::from_millis(500));
    let written = files_containing(home, b"secret-download-payload");
    ensure!(written.is_empty(), "a download was written: {written:?}");
    Ok(())
}

const PERMISSION_JS: &str = r#"
navigator.geolocation.getCurrentPosition(
  function () { post('geo', { granted: true }); },
  function (e) { post('geo', { granted: false, code: e.code }); });
Notification.requestPermission().then(function (r) { post('notification', { result: r }); });
"#;

fn permissions_denied(h: &mut Harness) -> Outcome {
    let (view, log) = h.open(&Page::new("<p>perm</p>", PERMISSION_JS))?;
    let done = h.wait(&[], || {
        !log.posts("geo").is_empty() && !log.posts("notification").is_empty()
    });
    ensure!(done, "no permission reports: {:?}", log.events());
    let geo = log.first_post("geo").unwrap_or_default();
    ensure!(geo["granted"] == false, "geolocation granted: {geo}");
    let notification = log.first_post("notification").unwrap_or_default();
    ensure!(
        notification["result"] != "granted",
        "notifications granted: {notification}"
    );
    view.close();

    // Positive control: without the CSP the geolocation request reaches the shell, which denies it.
    let (control, control_log) = h.open(&Page::new("<p>perm</p>", PERMISSION_JS).without_csp())?;
    let denied = h.wait(&[], || {
        control_log.has(|e| *e == ViewEvent::PermissionDenied)
            && !control_log.posts("geo").is_empty()
    });
    ensure!(
        denied,
        "control: no PermissionDenied: {:?}",
        control_log.events()
    );
    let geo = control_log.first_post("geo").unwrap_or_default();
    ensure!(
        geo == json!({ "granted": false, "code": 1 }),
        "control: geolocation not denied: {geo}"
    );
    control.close();
    Ok(())
}

fn window_close(h: &mut Harness) -> Outcome {
    let js = r#"
      setTimeout(function () {
        window.close();
        setTimeout(function () { post('after-close', {}); }, 300);
      }, 50);
    "#;
    let (view, log) = h.open(&Page::new("<p>close</p>", js))?;
    let survived = h.wait(&[], || {
        log.has(|e| *e == ViewEvent::PageCloseAttempt) && !log.posts("after-close").is_empty()
    });
    ensure!(
        survived,
        "window.close() destroyed the view or went unreported: {:?}",
        log.events()
    );
    view.deliver_state("{}").map_err(|e| e.to_string())?;
    view.close();
    Ok(())
}

const DIALOG_JS: &str = r#"
setTimeout(function () {
  alert('a');
  var c = confirm('c');
  var p = prompt('p', 'default');
  post('dialogs', { confirm: c, prompt: p });
}, 50);
"#;

fn dialogs(h: &mut Harness) -> Outcome {
    let (view, log) = h.open(&Page::new("<p>dialogs</p>", DIALOG_JS))?;
    ensure!(
        h.wait(&[], posted(&log, "dialogs")),
        "a dialog blocked the page: {:?}",
        log.events()
    );
    ensure!(
        log.first_post("dialogs") == Some(json!({ "confirm": false, "prompt": null })),
        "dialogs answered unexpectedly: {:?}",
        log.posts("dialogs")
    );
    view.close();

    // Positive control: without the CSP sandbox the dialogs reach the shell, which answers them.
    let (control, control_log) = h.open(&Page::new("<p>dialogs</p>", DIALOG_JS).without_csp())?;
    let answered = h.wait(&[], posted(&control_log, "dialogs"));
    ensure!(
        answered,
        "control: a dialog blocked the page: {:?}",
        control_log.events()
    );
    ensure!(
        control_log.count(|e| *e == ViewEvent::DialogSuppressed) == 3,
        "control: expected three suppressed dialogs: {:?}",
        control_log.events()
    );
    ensure!(
        control_log.first_post("dialogs") == Some(json!({ "confirm": false, "prompt": null })),
        "control: dialogs answered unexpectedly: {:?}",
        control_log.posts("dialogs")
    );
    control.close();
    Ok(())
}

fn devtools_off(h: &mut Harness) -> Outcome {
    ensure!(
        cfg!(debug_assertions),
        "this check is meant for the debug profile"
    );
    let (view, _) = h.open(&Page::new("<p>devtools</p>", ""))?;
    let hardening = view.hardening();
    ensure!(!hardening.devtools, "devtools on by default: {hardening:?}");
    ensure!(
        hardening.own_context && hardening.ephemeral && hardening.web_sandbox,
        "view not isolated: {hardening:?}"
    );
    ensure!(
        hardening.media_requires_gesture
            && !hardening.popups_without_gesture
            && !hardening.clipboard_access,
        "view not hardened: {hardening:?}"
    );
    view.close();

    // Positive control: the same check sees devtools when the embedder asks for them.
    let config = ViewConfig::default().dangerous().with_devtools();
    let shell = Shell::start(&h.event_loop, config).map_err(|e| e.to_string())?;
    pump(&mut h.event_loop, &[], Duration::from_secs(30), || {
        shell.probe_status() != ProbeStatus::Pending
    });
    ensure!(
        shell.probe_status() == ProbeStatus::Passed,
        "{:?}",
        shell.probe_status()
    );
    let page = Page::new("<p>devtools</p>", "");
    let preview = shell
        .open(&h.event_loop, h.server(&page), support_window(), |_| {})
        .map_err(|e| e.to_string())?;
    ensure!(
        preview.hardening().devtools,
        "control: devtools asked for but off"
    );
    preview.close();
    Ok(())
}

fn support_window() -> lineup_host::platform::Placement<'static> {
    lineup_host::platform::Placement::Window {
        title: "preview".to_owned(),
        width: 200,
        height: 100,
    }
}

fn state_delivery(h: &mut Harness) -> Outcome {
    let js = "LineUpSurface.onState(function (s) { post('state', s); });";
    let (view, log) = h.open(&Page::new("<p>state</p>", js))?;
    view.deliver_state(r#"{"city":"上海","n":1}"#)
        .map_err(|e| e.to_string())?;
    ensure!(
        h.wait(&[], posted(&log, "state")),
        "state never reached onState: {:?}",
        log.events()
    );
    ensure!(
        log.first_post("state") == Some(json!({ "city": "上海", "n": 1 })),
        "wrong state: {:?}",
        log.posts("state")
    );
    for bad in ["[1]", "\"s\"", "{}); post('injected', {}); ({"] {
        ensure!(
            matches!(
                view.deliver_state(bad),
                Err(ShellError::InvalidState { .. })
            ),
            "{bad} must be refused"
        );
    }
    h.settle(Duration::from_millis(200));
    ensure!(
        log.posts("injected").is_empty(),
        "a non-object state ran as script"
    );
    ensure!(
        log.posts("state").len() == 1,
        "a refused state was delivered"
    );
    view.close();
    Ok(())
}

fn storage_separate(h: &mut Harness) -> Outcome {
    let token = [0x5e; 16];
    let writer = Page::new(
        "<p>w</p>",
        "localStorage.setItem('k', 'lineup-storage-marker');
         sessionStorage.setItem('k', 'lineup-storage-marker');
         post('stored', { local: localStorage.getItem('k'), session: sessionStorage.getItem('k') });",
    )
    .without_csp()
    .with_token(token);
    let reader = Page::new(
        "<p>r</p>",
        "post('peek', { local: localStorage.getItem('k'), session: sessionStorage.getItem('k') });",
    )
    .without_csp()
    .with_token(token);
    let (a, log_a) = h.open(&writer)?;
    ensure!(
        h.wait(&[], posted(&log_a, "stored")),
        "writer silent: {:?}",
        log_a.events()
    );
    ensure!(
        log_a.first_post("stored")
            == Some(
                json!({ "local": "lineup-storage-marker", "session": "lineup-storage-marker" })
            ),
        "control: the writer cannot read its own storage: {:?}",
        log_a.posts("stored")
    );
    let (b, log_b) = h.open(&reader)?;
    ensure!(
        h.wait(&[], posted(&log_b, "peek")),
        "reader silent: {:?}",
        log_b.events()
    );
    ensure!(
        log_b.first_post("peek") == Some(json!({ "local": null, "session": null })),
        "the same origin in another view sees the first one's storage: {:?}",
        log_b.posts("peek")
    );
    a.close();
    b.close();
    Ok(())
}

fn oversized_ipc(h: &mut Harness) -> Outcome {
    let js = "window.webkit.messageHandlers.ipc.postMessage('x'.repeat(100 * 1024));
              post('after-big', {});";
    let (view, log) = h.open(&Page::new("<p>big</p>", js))?;
    ensure!(
        h.wait(&[], posted(&log, "after-big")),
        "no message after the big one: {:?}",
        log.events()
    );
    ensure!(
        log.has(|e| *e == ViewEvent::IpcTooLarge { len: 100 * 1024 }),
        "the oversized message was not reported: {:?}",
        log.count(|e| matches!(e, ViewEvent::Ipc(_)))
    );
    ensure!(
        !log.has(|e| matches!(e, ViewEvent::Ipc(body) if body.len() > 64 * 1024)),
        "the oversized message was forwarded"
    );
    view.close();
    Ok(())
}

fn crash(h: &mut Harness) -> Outcome {
    let echo = "LineUpSurface.onState(function (s) { post('echo', s); });";
    let (survivor, survivor_log) = h.open(&Page::new("<p>b</p>", echo))?;
    let before = web_processes();
    let (victim, victim_log) = h.open(&Page::new("<p>a</p>", echo))?;
    let victims: Vec<u32> = web_processes().difference(&before).copied().collect();
    ensure!(!victims.is_empty(), "no web process found for the view");
    for pid in &victims {
        kill(*pid)?;
    }
    let crashed = h.wait(&[], || victim_log.has(|e| *e == ViewEvent::Crashed));
    ensure!(
        crashed,
        "killing {victims:?} was not reported: {:?}",
        victim_log.events()
    );
    ensure!(
        !survivor_log.has(|e| *e == ViewEvent::Crashed),
        "the other view reported a crash"
    );
    survivor
        .deliver_state(r#"{"alive":true}"#)
        .map_err(|e| e.to_string())?;
    ensure!(
        h.wait(&[], posted(&survivor_log, "echo")),
        "the other view stopped working: {:?}",
        survivor_log.events()
    );
    victim.close();
    survivor.close();
    Ok(())
}

fn closed_view_silent(h: &mut Harness) -> Outcome {
    let js = "setInterval(function () { post('tick', {}); }, 30);";
    let before = web_processes();
    let (view, log) = h.open(&Page::new("<p>tick</p>", js))?;
    let own: Vec<u32> = web_processes().difference(&before).copied().collect();
    ensure!(!own.is_empty(), "no web process found for the view");
    ensure!(
        h.wait(&[], || log.posts("tick").len() >= 3),
        "control: no ticks: {:?}",
        log.events()
    );
    view.close();
    let after_close = log.events().len();
    h.settle(Duration::from_millis(400));
    ensure!(
        log.events().len() == after_close,
        "events after close: {:?}",
        &log.events()[after_close..]
    );
    let gone = h.wait(&[], || {
        let now = web_processes();
        own.iter().all(|pid| !now.contains(pid))
    });
    ensure!(
        gone,
        "the closed view's web processes {own:?} are still running"
    );
    Ok(())
}
