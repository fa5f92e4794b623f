//! What a hostile Surface could leak below the page's policy (R-SEC-3, R-SEC-5, R-UI-12): network
//! traffic that CSP does not cover (speculative connections, host-name lookups), processes left
//! behind by closed Surfaces or a dropped host, the system clipboard, and memory. Each negative
//! check has its positive control in the same run: the same page with the protection turned off
//! through `dangerous()` does reach the canary, or the test process itself uses the channel.
//!
//! The group's process runs itself again in a private mount namespace whose `/etc/resolv.conf`
//! names a DNS stub of its own (see `lineup_tests::dns`), so it sees every host name the engine
//! looks up.
#![allow(clippy::print_stdout, clippy::unwrap_used, missing_docs)]

use std::time::{Duration, Instant};

use lineup_host::HostBuilder;
use lineup_host_core::{CloseReason, GoneReason, Limits};
use lineup_tests::canary::Canary;
use lineup_tests::dns::{private_resolver, DnsStub};
use lineup_tests::ensure;
use lineup_tests::home::private_home;
use lineup_tests::host_harness::{open_network, test_app, HostHarness, Note, TestHost};
use lineup_tests::procs::{self, descendants, web_processes};
use lineup_tests::runner::Outcome;
use lineup_tests::x11::{xid_of, X11};

pub(crate) fn run() {
    let home = private_home("leaks");
    let dns = match private_resolver(&home) {
        Ok(stub) => stub,
        Err(e) => {
            println!("no private resolver for the DNS scenario: {e}");
            std::process::exit(1);
        }
    };
    let mut h = HostHarness::start();
    let x = match X11::connect() {
        Ok(x) => x,
        Err(e) => {
            println!("no X display for the input scenarios: {e}");
            std::process::exit(1);
        }
    };
    h.run(
        "r_sec_3_static_and_dynamic_preconnect_reach_no_canary_unless_the_proxy_is_off",
        preconnect,
    );
    h.run(
        "r_sec_3_xtest_clicks_on_self_blank_and_ping_links_reach_no_canary_unless_the_proxy_is_off",
        |h| link_clicks(h, &x),
    );
    h.run(
        "r_sec_3_no_page_chosen_name_reaches_a_resolver_unless_the_proxy_is_off",
        |h| resolver(h, &x, &dns),
    );
    h.run(
        "r_sec_5_clicks_and_keys_neither_write_nor_read_the_system_clipboard",
        |h| clipboard(h, &x),
    );
    h.run(
        "closing_a_surface_ends_all_of_its_processes_after_20_cycles",
        process_cycles,
    );
    h.run(
        "dropping_the_host_in_an_own_loop_ends_every_process_it_started",
        dropped_host,
    );
    h.run(
        "r_ui_12_an_array_buffer_bomb_past_256_mib_closes_its_surface_as_memory_and_another_keeps_answering",
        memory_ceiling,
    );
    h.finish();
}

/// The host every negative check runs against: the defaults.
fn hardened() -> HostBuilder {
    HostBuilder::new()
}

/// The positive control: the same host without the refusing proxy.
fn unproxied() -> HostBuilder {
    HostBuilder::new().dangerous().without_network_proxy()
}

/// How long a negative check lets a page try: speculative connections start within
/// milliseconds of the parse or the click.
const TRY: Duration = Duration::from_millis(1500);

/// Four link blocks of 220 × 80 in a 2 × 2 grid, for the clicks.
const LINK_CSS: &str = "html, body { margin: 0; padding: 0; }
a { position: absolute; display: block; width: 220px; height: 80px; background: #ddd; }
#l0 { left: 0; top: 0; } #l1 { left: 240px; top: 0; }
#l2 { left: 0; top: 100px; } #l3 { left: 240px; top: 100px; }";

/// The centre of link block `i` of [`LINK_CSS`], relative to the window.
fn link_centre(i: usize) -> (i16, i16) {
    let (col, row) = (i % 2, i / 2);
    (110 + 240 * col as i16, 40 + 100 * row as i16)
}

/// An app whose html is `html` and whose script is `js`, laid out with [`LINK_CSS`].
fn link_app(name: &str, html: &str, js: &str) -> serde_json::Value {
    let mut app = test_app(name, html, js);
    app["css"] = serde_json::Value::String(LINK_CSS.to_owned());
    app
}

/// Opens `app` in a fresh host from `builder`, waits for `armed`, clicks each of `clicks` link
/// blocks with real X input, lets the page try for [`TRY`] (or until `reached` holds) and shuts
/// the host down.
fn try_page(
    h: &mut HostHarness,
    x: Option<&X11>,
    builder: HostBuilder,
    app: serde_json::Value,
    clicks: &[usize],
    reached: impl Fn() -> bool,
) -> Outcome {
    let mut t = h.host(builder)?;
    let key = h.open(&mut t, "leak", app, None)?;
    ensure!(
        h.wait(&mut t, |_, rec| rec.count("leak", "armed") > 0),
        "the page did not arm: {:?}",
        t.rec.notes()
    );
    if let Some(x) = x {
        // Mapped, laid out and painted before any input goes to it.
        h.settle(&mut t, Duration::from_millis(400));
        let xid = xid_of(
            t.host
                .view(&key)
                .and_then(|v| v.window())
                .ok_or("the Surface has no window")?,
        )?;
        for i in clicks {
            let (cx, cy) = link_centre(*i);
            x.click_in(xid, cx, cy)?;
            h.settle(&mut t, Duration::from_millis(150));
        }
    }
    h.wait_until(&mut t, Instant::now() + TRY, |_, _| reached());
    ensure!(
        t.key("leak").is_some(),
        "the Surface went away while trying: {:?}",
        t.rec.notes()
    );
    h.shut_down(t)
}

fn preconnect(h: &mut HostHarness) -> Outcome {
    let run = |h: &mut HostHarness, builder: HostBuilder| -> Result<(usize, usize), String> {
        let (stat, dynamic) = (
            Canary::start().map_err(|e| e.to_string())?,
            Canary::start().map_err(|e| e.to_string())?,
        );
        let html = format!(
            "<link rel=\"preconnect\" href=\"{}\"><p>preconnect</p>",
            stat.url("")
        );
        let js = format!(
            "var l = document.createElement('link'); l.rel = 'preconnect'; l.href = '{}';
             document.head.appendChild(l);
             setTimeout(function () {{ post('armed'); }}, 50);",
            dynamic.url("")
        );
        try_page(
            h,
            None,
            builder,
            link_app("preconnect", &html, &js),
            &[],
            || stat.connections() > 0 && dynamic.connections() > 0,
        )?;
        Ok((stat.connections(), dynamic.connections()))
    };
    let (stat, dynamic) = run(h, hardened())?;
    ensure!(
        stat == 0 && dynamic == 0,
        "preconnect reached the loopback canaries: static {stat}, dynamic {dynamic} connections"
    );
    // Positive control: the same page without the refusing proxy reaches both.
    let (stat, dynamic) = run(h, unproxied())?;
    ensure!(
        stat > 0 && dynamic > 0,
        "control: without the proxy, preconnect reached static {stat}, dynamic {dynamic}"
    );
    Ok(())
}

fn link_clicks(h: &mut HostHarness, x: &X11) -> Outcome {
    let run = |h: &mut HostHarness, builder: HostBuilder| -> Result<[usize; 4], String> {
        let c: Vec<Canary> = (0..4)
            .map(|_| Canary::start())
            .collect::<Result<_, _>>()
            .map_err(|e| e.to_string())?;
        let html = format!(
            "<a id=\"l0\" href=\"{}\" target=\"_self\">self</a>
             <a id=\"l1\" href=\"{}\" target=\"_blank\">blank</a>
             <a id=\"l2\" href=\"{}\" ping=\"{}\">ping</a>",
            c[0].url("self"),
            c[1].url("blank"),
            c[2].url("pinged-link"),
            c[3].url("ping"),
        );
        let js = "setTimeout(function () { post('armed'); }, 50);";
        try_page(
            h,
            Some(x),
            builder,
            link_app("clicks", &html, js),
            &[0, 1, 2],
            || c.iter().take(3).all(|c| c.connections() > 0),
        )?;
        Ok([0, 1, 2, 3].map(|i| c[i].connections()))
    };
    let seen = run(h, hardened())?;
    ensure!(
        seen == [0; 4],
        "clicks reached the canaries (self, blank, ping link, ping): {seen:?}"
    );
    // The CSP alone refuses the ping (connect-src 'none'); without it, the proxy still does.
    let seen = run(h, HostBuilder::new().dangerous().without_csp())?;
    ensure!(
        seen == [0; 4],
        "without the CSP, clicks reached the canaries (self, blank, ping link, ping): {seen:?}"
    );
    // Positive control: without the CSP and the proxy, every click and the ping arrive.
    let seen = run(h, open_network())?;
    println!("  control connections (self, blank, ping link, ping): {seen:?}");
    ensure!(
        seen.iter().all(|n| *n > 0),
        "control: without the CSP and the proxy the clicks reached (self, blank, ping link, ping) {seen:?}"
    );
    Ok(())
}

fn resolver(h: &mut HostHarness, x: &X11, dns: &DnsStub) -> Outcome {
    let run = |h: &mut HostHarness, builder: HostBuilder, nonce: &str| -> Outcome {
        let name = |what: &str| format!("{what}-{nonce}.lineup-leak.test");
        let html = format!(
            "<link rel=\"dns-prefetch\" href=\"//{}\">
             <link rel=\"preconnect\" href=\"http://{}/\">
             <a id=\"l0\" href=\"http://{}/\" target=\"_self\">self</a>
             <a id=\"l1\" href=\"http://{}/\" target=\"_blank\">blank</a>",
            name("dns-prefetch"),
            name("preconnect"),
            name("click-self"),
            name("click-blank"),
        );
        let js = format!(
            "var l = document.createElement('link'); l.rel = 'dns-prefetch'; l.href = '//{}';
             document.head.appendChild(l);
             setTimeout(function () {{ post('armed'); }}, 50);",
            name("dynamic-dns-prefetch")
        );
        try_page(
            h,
            Some(x),
            builder,
            link_app("names", &html, &js),
            &[0, 1],
            || dns.asked_for(nonce).len() >= 4,
        )
    };
    let control_before = dns.names().len();
    run(h, hardened(), "n1")?;
    let leaked = dns.asked_for("-n1.lineup-leak.test");
    ensure!(
        leaked.is_empty(),
        "page-chosen names reached the resolver: {leaked:?}"
    );
    // Positive control: without the proxy the same page's names reach the stub.
    run(h, unproxied(), "n2")?;
    let asked = dns.asked_for("-n2.lineup-leak.test");
    println!("  control lookups: {asked:?}");
    ensure!(
        !asked.is_empty(),
        "control: the stub saw no page-chosen name without the proxy; it saw {:?}",
        &dns.names()[control_before..]
    );
    Ok(())
}

/// Whether `now` runs no process beyond `baseline`, counting each name.
fn within(now: &[String], baseline: &[String]) -> bool {
    now.iter().all(|name| {
        now.iter().filter(|n| *n == name).count() <= baseline.iter().filter(|n| *n == name).count()
    })
}

/// The names of this process's descendants, sorted: web and network processes, the sandbox's
/// helpers.
fn processes() -> Vec<String> {
    let mut names: Vec<String> = descendants().into_values().collect();
    names.sort();
    names
}

fn process_cycles(h: &mut HostHarness) -> Outcome {
    // Surfaces' processes only: without the standard components' warm board, which starts at an
    // idle turn and stays, on purpose, in a web process of its own.
    let mut t: TestHost = h.host(hardened().builtin_components(None))?;
    // The probe's processes end once its view is closed; its sandbox's `bwrap` can outlive its
    // web process by a moment, so the baseline waits for that too (and is whatever runs if
    // something else stays).
    h.wait(&mut t, |_, _| {
        !processes()
            .iter()
            .any(|n| n.starts_with("WebKit") || n == "bwrap")
    });
    let baseline = processes();
    let mut while_open = Vec::new();
    for i in 0..20 {
        let instance = format!("cycle{i}");
        h.open(
            &mut t,
            &instance,
            test_app("cycle", "<p>cycle</p>", ""),
            None,
        )?;
        if i == 0 {
            while_open = processes();
        }
        t.send(t.agent.close(&instance, "done"))?;
        ensure!(
            h.wait(&mut t, |host, _| host.surfaces().is_empty()),
            "surface {instance} did not close"
        );
    }
    // Control: an open Surface does run processes of its own, so counting them sees them.
    ensure!(
        while_open.iter().filter(|n| n.starts_with("WebKitNetworkPr")).count()
            > baseline.iter().filter(|n| n.starts_with("WebKitNetworkPr")).count()
            && while_open.iter().any(|n| n.starts_with("WebKitWebProces")),
        "control: no web and network process seen while a Surface was open: {while_open:?} (baseline {baseline:?})"
    );
    // Nothing beyond the baseline stays: a baseline process that ends meanwhile is no leak.
    let settled = h.wait(&mut t, |_, _| within(&processes(), &baseline));
    println!(
        "  processes: baseline {baseline:?}, one Surface open {while_open:?}, after 20 cycles {:?}",
        processes()
    );
    ensure!(
        settled,
        "after 20 opens and closes the host runs {:?}, beyond its baseline {baseline:?}",
        processes()
    );
    h.shut_down(t)
}

/// An embedder driving the host from its own loop tears down by dropping it (`Drop for Host`,
/// `Host::close_all`): with two Surfaces and a standard component open, every web, network and
/// sandbox process the host started ends, and no close goes upstream.
fn dropped_host(h: &mut HostHarness) -> Outcome {
    let mut t: TestHost =
        h.host(hardened().builtin_components(Some(lineup_host::ComponentOptions::default())))?;
    h.wait(&mut t, |_, _| {
        !processes()
            .iter()
            .any(|n| n.starts_with("WebKit") || n == "bwrap")
    });
    let baseline = processes();
    h.open(&mut t, "a", test_app("a", "<p>a</p>", ""), None)?;
    h.open(&mut t, "b", test_app("b", "<p>b</p>", ""), None)?;
    t.send(t.agent.envelope(
        "lineup.v1.ui.open",
        serde_json::json!({"instance_id": "k", "component": {"id": "confirm", "version": "1",
                           "props": {"title": "Stay?"}}}),
    ))?;
    ensure!(
        h.wait(&mut t, |host, _| !host.shown_components().is_empty()),
        "the component was not shown"
    );
    let while_open = processes();
    // Control: the open Surfaces and the component do run processes of their own.
    ensure!(
        while_open
            .iter()
            .filter(|n| n.starts_with("WebKitWebProces"))
            .count()
            >= 3,
        "control: fewer than three web processes while open: {while_open:?}"
    );
    // The recorder outlives the host: what the drop sent, if anything, is seen.
    let rec = t.rec.clone();
    drop(t);
    let deadline = Instant::now() + Duration::from_secs(20);
    while !within(&processes(), &baseline) && Instant::now() < deadline {
        h.discard(Duration::from_millis(100));
    }
    println!(
        "  processes: baseline {baseline:?}, open {while_open:?}, after the drop {:?}",
        processes()
    );
    ensure!(
        within(&processes(), &baseline),
        "after the host was dropped {:?} run, beyond the baseline {baseline:?}",
        processes()
    );
    ensure!(
        rec.events_named("close").is_empty(),
        "the teardown told the agent of a close: {:?}",
        rec.ui_events()
    );
    Ok(())
}

/// Allocates and fills 32 MiB ArrayBuffers, every 50 ms, up to `mib`, reporting its progress.
fn allocating_js(mib: u32) -> String {
    format!(
        "LineUpSurface.onState(function (s) {{ post('echo', s); }});
         var held = [], mib = 0;
         function grow() {{
           if (mib >= {mib}) {{ post('allocated', {{ mib: mib, done: true }}); return; }}
           var b = new Uint8Array(32 * 1024 * 1024); b.fill(7); held.push(b); mib += 32;
           post('allocated', {{ mib: mib }});
           setTimeout(grow, 50);
         }}
         setTimeout(grow, 50);"
    )
}

/// Resident memory of `pid` in MiB.
fn rss_mib(pid: u32) -> u64 {
    procs::rss_kib(pid) / 1024
}

fn memory_ceiling(h: &mut HostHarness) -> Outcome {
    let mut limits = Limits::default();
    limits.surface_memory_limit_mib = 256;
    let mut t = h.host(hardened().limits(limits))?;
    // Control: a page that stays well under the ceiling (64 MiB) keeps running and answering.
    let survivor = h.open(
        &mut t,
        "survivor",
        test_app("survivor", "<p>s</p>", &allocating_js(64)),
        None,
    )?;
    ensure!(
        h.wait(&mut t, |_, rec| rec
            .data("survivor", "allocated")
            .iter()
            .any(|d| d["done"] == true)),
        "control: the survivor did not finish its 64 MiB: {:?}",
        t.rec.data("survivor", "allocated")
    );
    let before = web_processes();
    let bomb = h.open(
        &mut t,
        "bomb",
        test_app("bomb", "<p>b</p>", &allocating_js(1536)),
        None,
    )?;
    let bomb_pids: Vec<u32> = web_processes().difference(&before).copied().collect();
    ensure!(!bomb_pids.is_empty(), "no web process found for the bomb");
    let mut peak = 0;
    let gone = h.wait_until(
        &mut t,
        Instant::now() + Duration::from_secs(30),
        |_, rec| {
            peak = peak.max(bomb_pids.iter().map(|p| rss_mib(*p)).sum::<u64>());
            rec.closed(&bomb)
                .contains(&CloseReason::Gone(GoneReason::Memory))
        },
    );
    let reached = t
        .rec
        .data("bomb", "allocated")
        .iter()
        .filter_map(|d| d["mib"].as_u64())
        .max()
        .unwrap_or(0);
    println!("  bomb: allocated {reached} MiB by its own count, peak resident {peak} MiB, ceiling 256 MiB");
    ensure!(
        gone,
        "the bomb was not closed as memory: {:?}",
        t.rec
            .notes_since(0)
            .iter()
            .filter(|n| !matches!(n, Note::Outbound(_)))
            .collect::<Vec<_>>()
    );
    ensure!(
        reached > 256,
        "the bomb never passed the ceiling by its own count ({reached} MiB)"
    );
    ensure!(
        t.rec.crashed(&bomb) == 0,
        "the memory kill was reported as a crash"
    );
    let upstream = t.rec.data("bomb", "close");
    ensure!(
        upstream == vec![serde_json::json!({ "reason": "memory" })],
        "upstream close of the bomb: {upstream:?}"
    );
    // Never reopened.
    h.settle(&mut t, Duration::from_millis(1500));
    ensure!(t.key("bomb").is_none(), "the bomb's Surface is open again");
    let reopened = t
        .rec
        .notes()
        .iter()
        .filter(|n| matches!(n, Note::Opened(k) if k.instance.as_str() == "bomb"))
        .count();
    ensure!(reopened == 1, "the bomb was opened {reopened} times");
    // The other Surface still answers: patch → onState → event.
    ensure!(
        t.key("survivor") == Some(survivor.clone()),
        "the survivor is gone"
    );
    t.send(
        t.agent
            .patch("survivor", serde_json::json!({ "after": "kill" })),
    )?;
    ensure!(
        h.wait(&mut t, |_, rec| rec
            .data("survivor", "echo")
            .contains(&serde_json::json!({ "after": "kill" }))),
        "the survivor did not answer the patch after the kill: {:?}",
        t.rec.data("survivor", "echo")
    );
    h.shut_down(t)
}

/// The page of the clipboard scenario: four blocks laid out by [`LINK_CSS`] (`l0`..`l3`) and a
/// sandboxed `srcdoc` subframe below them with its own copy button.
const CLIPBOARD_HTML: &str = r#"<a id="l0" href="">writeText</a>
<a id="l1" href="">execCommand copy</a>
<a id="l2" href="">select me: PAGE-SELECTION-TEXT</a>
<a id="l3" href="">execCommand paste</a>
<textarea id="t" style="position:absolute;left:0;top:300px;width:200px;height:20px"></textarea>
<span id="hidden">page-wrote-exec</span>"#;

const CLIPBOARD_JS: &str = r#"
function select(el) { var r = document.createRange(); r.selectNodeContents(el);
  var s = getSelection(); s.removeAllRanges(); s.addRange(r); }
document.addEventListener('copy', function (e) {
  e.clipboardData.setData('text/plain', 'page-wrote-oncopy'); e.preventDefault(); post('oncopy'); });
function on(id, f) { document.getElementById(id).addEventListener('click', function (e) { e.preventDefault(); f(); }); }
on('l0', function () {
  if (!navigator.clipboard) { post('async', { outcome: 'unavailable' }); return; }
  navigator.clipboard.writeText('page-wrote-async').then(
    function () { post('async', { outcome: 'resolved' }); },
    function (e) { post('async', { outcome: 'rejected', error: String(e) }); });
});
on('l1', function () { select(document.getElementById('hidden'));
  var ok = false; try { ok = document.execCommand('copy'); } catch (e) { ok = 'threw'; }
  post('exec-copy', { result: ok }); });
on('l2', function () { select(document.getElementById('l2')); post('selected'); });
on('l3', function () { var t = document.getElementById('t'); t.focus();
  var ok = false; try { ok = document.execCommand('paste'); } catch (e) { ok = 'threw'; }
  post('exec-paste', { result: ok, value: t.value }); });
var f = document.createElement('iframe');
f.style.cssText = 'position:absolute;left:0;top:200px;width:220px;height:80px;border:0';
f.srcdoc = '<button id=b style="width:200px;height:60px">frame copy</button><span id=s>page-wrote-frame</span><script>' +
  'b.onclick=function(){var r=document.createRange();r.selectNodeContents(s);getSelection().removeAllRanges();getSelection().addRange(r);' +
  'var ok=document.execCommand("copy");parent.postMessage({frameCopy:ok},"*");};<\/script>';
window.addEventListener('message', function (e) { if (e.data && 'frameCopy' in e.data) { post('frame-copy', { result: e.data.frameCopy }); } });
document.body.appendChild(f);
var ta = document.getElementById('t');
ta.addEventListener('paste', function () { post('onpaste'); });
ta.addEventListener('input', function () { post('input', { value: ta.value }); });
setTimeout(function () { post('armed'); }, 100);
"#;

/// The text on the system clipboard (`CLIPBOARD`), as this process's GTK sees it.
fn clipboard_text() -> Option<String> {
    gtk::Clipboard::get(&gtk::gdk::SELECTION_CLIPBOARD)
        .wait_for_text()
        .map(|t| t.to_string())
}

fn clipboard(h: &mut HostHarness, x: &X11) -> Outcome {
    // Positive control: the test process can set and read the system clipboard.
    let sentinel = format!("host-sentinel-{}", std::process::id());
    gtk::Clipboard::get(&gtk::gdk::SELECTION_CLIPBOARD).set_text(&sentinel);
    ensure!(
        clipboard_text().as_deref() == Some(sentinel.as_str()),
        "control: the test process cannot set and read the clipboard: {:?}",
        clipboard_text()
    );
    let mut t = h.host(hardened())?;
    let key = h.open(
        &mut t,
        "clip",
        link_app("clip", CLIPBOARD_HTML, CLIPBOARD_JS),
        None,
    )?;
    ensure!(
        h.wait(&mut t, |_, rec| rec.count("clip", "armed") > 0),
        "the page did not arm"
    );
    h.settle(&mut t, Duration::from_millis(400));
    let xid = xid_of(
        t.host
            .view(&key)
            .and_then(|v| v.window())
            .ok_or("the Surface has no window")?,
    )?;
    let click_and_wait =
        |h: &mut HostHarness, t: &mut TestHost, (cx, cy): (i16, i16), event: &str| -> Outcome {
            x.click_in(xid, cx, cy)?;
            ensure!(
                h.wait(t, |_, rec| rec.count("clip", event) > 0),
                "the click at ({cx}, {cy}) did not run the page's handler for {event}: {:?}",
                t.rec.ui_events()
            );
            Ok(())
        };
    // A button that calls navigator.clipboard.writeText: the outcome comes back through the
    // bridge, and the clipboard is unchanged.
    click_and_wait(h, &mut t, link_centre(0), "async")?;
    let outcome = t.rec.data("clip", "async");
    println!("  writeText outcome: {outcome:?}");
    ensure!(
        outcome.iter().all(|o| o["outcome"] != "resolved"),
        "navigator.clipboard.writeText resolved: {outcome:?}"
    );
    // A button that selects text and calls execCommand('copy').
    click_and_wait(h, &mut t, link_centre(1), "exec-copy")?;
    // The same in a srcdoc subframe.
    click_and_wait(h, &mut t, (110, 230), "frame-copy")?;
    // A user's Ctrl+C inside a selection, with a copy handler that would put its own text.
    click_and_wait(h, &mut t, link_centre(2), "selected")?;
    x.key_chord(&[0xffe3, 0x63])?; // Control_L + c
    h.settle(&mut t, Duration::from_millis(500));
    // Reading: execCommand('paste') into a textarea, and a user's Ctrl+V there.
    click_and_wait(h, &mut t, link_centre(3), "exec-paste")?;
    x.key_chord(&[0xffe3, 0x76])?; // Control_L + v
    h.settle(&mut t, Duration::from_millis(500));
    let now = clipboard_text();
    println!(
        "  exec copy {:?}, frame copy {:?}, oncopy fired {}, exec paste {:?}",
        t.rec.data("clip", "exec-copy"),
        t.rec.data("clip", "frame-copy"),
        t.rec.count("clip", "oncopy"),
        t.rec.data("clip", "exec-paste"),
    );
    ensure!(
        now.as_deref() == Some(sentinel.as_str()),
        "the page changed the system clipboard to {now:?}"
    );
    let pasted = t.rec.data("clip", "exec-paste");
    ensure!(
        pasted.iter().all(|p| !p["value"]
            .as_str()
            .unwrap_or_default()
            .contains("host-sentinel")),
        "the page read the clipboard: {pasted:?}"
    );
    ensure!(
        t.rec.count("clip", "oncopy") == 0,
        "a copy event reached the page"
    );
    // The page read the textarea back after Ctrl+V? Ask it.
    h.shut_down(t)
}
