//! What a Surface's author sees, in a real WebKitGTK webview under Xvfb: the page's console
//! messages, errors, rejections and CSP violations reach the embedder with the author's own line
//! and never the agent (R-DIAG-1), capped by a budget of their own; the Surface follows the
//! host's language, time zone, text zoom and theme (R-UI-11); and a child view's `resize`
//! reaches the embedder and changes its height. Every negative check has a positive control.
//!
//! The process runs under `LANG=C.UTF-8` and `TZ=Asia/Shanghai`, set before the first web
//! context, as a host under systemd or in CI would.
#![allow(clippy::print_stdout, clippy::unwrap_used, missing_docs)]

use std::rc::Rc;

use lineup_host::{Contrast, HostBuilder, Theme};
use lineup_host_core::{Diagnostic, DiagnosticKind, Limits, SurfaceKey};
use lineup_tests::ensure;
use lineup_tests::home::private_home;
use lineup_tests::host_harness::{test_app, HostHarness, TestHost, PRELUDE};
use lineup_tests::runner::Outcome;
use serde_json::{json, Value};
use tao::dpi::LogicalSize;
use tao::window::WindowBuilder;

pub(crate) fn run() {
    let _home = private_home("authors");
    // Before any thread or web context exists.
    std::env::remove_var("LC_ALL");
    std::env::remove_var("LC_MESSAGES");
    std::env::set_var("LANG", "C.UTF-8");
    std::env::set_var("TZ", "Asia/Shanghai");
    let mut h = HostHarness::start();
    h.run(
        "r_diag_1_console_errors_rejections_and_csp_violations_reach_the_delegate_with_the_authors_lines_and_never_the_agent",
        diagnostics,
    );
    h.run(
        "r_diag_1_a_flooding_console_is_capped_by_its_own_budget_and_events_still_arrive",
        flood,
    );
    h.run(
        "r_ui_11_under_the_posix_locale_the_surface_language_is_en_and_intl_works",
        language,
    );
    h.run("r_ui_11_the_time_zone_is_the_hosts", time_zone);
    h.run("r_ui_11_text_zoom_scales_text", text_zoom);
    h.run(
        "r_ui_11_dark_theme_matches_prefers_color_scheme_and_custom_properties_live",
        theme,
    );
    h.run(
        "r_ui_11_high_contrast_at_open_sets_the_properties_and_the_root_marker",
        contrast,
    );
    h.run(
        "child_view_resize_reaches_the_delegate_and_changes_the_views_height_clamped",
        child_resize,
    );
    h.finish();
}

/// The 1-based line of the guest's `js` (PRELUDE included) that contains `needle`.
fn js_line(js: &str, needle: &str) -> u32 {
    let full = format!("{PRELUDE}{js}");
    let at = full.find(needle).unwrap();
    full[..at].matches('\n').count() as u32 + 1
}

fn of_kind(diagnostics: &[Diagnostic], kind: DiagnosticKind) -> Vec<Diagnostic> {
    diagnostics
        .iter()
        .filter(|d| d.kind == kind)
        .cloned()
        .collect()
}

fn position(d: &Diagnostic) -> String {
    d.position
        .as_ref()
        .map(|p| p.to_string())
        .unwrap_or_default()
}

const DIAG_JS: &str = "
console.warn('diag-marker', {n: 1});
setTimeout(function () { var o = null; o.boom = 1; }, 0);
var handled = document.createElement('button');
handled.onclick = function () { var h = null; h.handlerBoom = 1; };
setTimeout(function () { handled.click(); }, 0);
fetch('https://example.com/blocked').catch(function () {});
Promise.reject(new Error('rejected-marker'));
post('visible', {m: 'visible-marker'});
null.top;
";

fn diagnostics(h: &mut HostHarness) -> Outcome {
    let mut t = h.host(HostBuilder::new())?;
    let key = h.open(&mut t, "d", test_app("diag", "<p>diag</p>", DIAG_JS), None)?;
    let all_kinds = |t: &TestHost, key: &SurfaceKey| {
        let d = t.rec.diagnostics(key);
        of_kind(&d, DiagnosticKind::Console).len() == 1
            && of_kind(&d, DiagnosticKind::Error).len() == 3
            && of_kind(&d, DiagnosticKind::Rejection).len() == 1
            && of_kind(&d, DiagnosticKind::Csp).len() == 1
    };
    let done = h.wait(&mut t, |_, rec| {
        let d = rec.diagnostics(&key);
        d.len() >= 6 && rec.count("d", "visible") == 1
    });
    ensure!(
        done && all_kinds(&t, &key),
        "diagnostics: {:?}",
        t.rec
            .diagnostics(&key)
            .iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
    );
    let d = t.rec.diagnostics(&key);
    let console = &of_kind(&d, DiagnosticKind::Console)[0];
    let warn_line = js_line(DIAG_JS, "console.warn");
    ensure!(
        console.message.as_str() == "diag-marker {\"n\":1}"
            && console.level == lineup_host_core::DiagnosticLevel::Warn
            && position(console).starts_with(&format!("script.js:{warn_line}:")),
        "console: {console} ({})",
        console.message.as_str()
    );
    let errors = of_kind(&d, DiagnosticKind::Error);
    let thrown_line = js_line(DIAG_JS, "o.boom");
    let thrown = errors
        .iter()
        .find(|e| e.message.as_str().contains("TypeError") && e.message.as_str().contains("o.boom"))
        .ok_or_else(|| format!("no TypeError among {errors:?}"))?;
    ensure!(
        position(thrown).starts_with(&format!("script.js:{thrown_line}:")),
        "the thrown error is at {thrown}, expected script.js:{thrown_line}"
    );
    // An `on…` property handler is wrapped too: its error keeps its message and line, where
    // WebKit would report a muted "Script error." for a sandboxed document.
    let handler_line = js_line(DIAG_JS, "h.handlerBoom");
    let in_handler = errors
        .iter()
        .find(|e| e.message.as_str().contains("handlerBoom"))
        .ok_or_else(|| format!("no error of the onclick handler among {errors:?}"))?;
    ensure!(
        position(in_handler).starts_with(&format!("script.js:{handler_line}:")),
        "the handler's error is at {in_handler}, expected script.js:{handler_line}"
    );
    // WebKit hides a top-level error of a sandboxed document; the diagnostic says so.
    let muted = errors
        .iter()
        .find(|e| e.message.as_str().contains("Script error"))
        .ok_or_else(|| format!("no muted top-level error among {errors:?}"))?;
    ensure!(
        muted.position.is_none() && muted.message.as_str().contains("console.error"),
        "muted error: {muted}"
    );
    let rejection = &of_kind(&d, DiagnosticKind::Rejection)[0];
    let reject_line = js_line(DIAG_JS, "Promise.reject");
    ensure!(
        rejection.message.as_str().contains("rejected-marker")
            && position(rejection).starts_with(&format!("script.js:{reject_line}:")),
        "rejection: {rejection}"
    );
    let csp = &of_kind(&d, DiagnosticKind::Csp)[0];
    let fetch_line = js_line(DIAG_JS, "fetch(");
    let violation = csp
        .csp
        .as_ref()
        .ok_or("a csp diagnostic without its violation")?;
    ensure!(
        violation.directive.as_str() == "connect-src"
            && violation.blocked.as_str() == "https://example.com/blocked"
            && violation.hint.contains("R-SEC-3")
            && position(csp).starts_with(&format!("script.js:{fetch_line}:")),
        "csp: {csp}"
    );
    ensure!(
        d.iter().all(Diagnostic::page_supplied),
        "every one of these is the page's word"
    );
    // Never to the agent; positive control: the page's own event with a marker does go out.
    let sent = serde_json::to_string(&t.rec.sent()).unwrap();
    ensure!(
        sent.contains("visible-marker"),
        "the positive control event did not reach the agent: {sent}"
    );
    for marker in [
        "diag-marker",
        "rejected-marker",
        "example.com/blocked",
        "Script error",
    ] {
        ensure!(!sent.contains(marker), "{marker} reached the agent: {sent}");
    }
    h.shut_down(t)
}

fn flood(h: &mut HostHarness) -> Outcome {
    let mut limits = Limits::default();
    limits.max_diagnostics_per_window = 10;
    let mut t = h.host(HostBuilder::new().limits(limits))?;
    let js =
        "for (var i = 0; i < 500; i += 1) { console.log('flood ' + i); }\npost('after', {n: 1});";
    let key = h.open(&mut t, "f", test_app("flood", "<p>flood</p>", js), None)?;
    ensure!(
        h.wait(&mut t, |_, rec| rec.count("f", "after") == 1),
        "the event after the flood never arrived: {:?}",
        t.rec.ui_events()
    );
    let d = t.rec.diagnostics(&key);
    let page = d.iter().filter(|d| d.page_supplied()).count();
    let notes = of_kind(&d, DiagnosticKind::Suppressed).len();
    let stats = t.host.stats().clone();
    ensure!(
        page == 10 && notes == 1,
        "{page} page diagnostics and {notes} suppressed notes; expected 10 and 1"
    );
    ensure!(
        stats.diagnostics == 10 && stats.diagnostics + stats.diagnostics_suppressed == 500,
        "every console call is passed or counted: {stats:?}"
    );
    h.shut_down(t)
}

const CONTEXT_JS: &str = "
post('context', {
  language: navigator.language,
  languages: navigator.languages,
  lang: document.documentElement.lang,
  intl: new Intl.NumberFormat().resolvedOptions().locale,
  formatted: new Intl.NumberFormat(navigator.language).format(1234.5),
  zone: Intl.DateTimeFormat().resolvedOptions().timeZone,
  offset: new Date(0).getTimezoneOffset()
});
";

fn context_of(h: &mut HostHarness, builder: HostBuilder) -> Result<Value, String> {
    let mut t = h.host(builder)?;
    h.open(
        &mut t,
        "c",
        test_app("context", "<p>c</p>", CONTEXT_JS),
        None,
    )?;
    ensure!(
        h.wait(&mut t, |_, rec| rec.count("c", "context") == 1),
        "no context report: {:?}",
        t.rec.notes()
    );
    let context = t.rec.data("c", "context")[0].clone();
    h.shut_down(t)?;
    Ok(context)
}

fn language(h: &mut HostHarness) -> Outcome {
    let posix = context_of(h, HostBuilder::new())?;
    ensure!(
        posix["language"] == "en"
            && posix["languages"] == json!(["en"])
            && posix["lang"] == "en"
            && posix["intl"].as_str().is_some_and(|l| l.starts_with("en"))
            && posix["formatted"] == "1,234.5",
        "under LANG=C.UTF-8: {posix}"
    );
    // Positive control: the embedder's choice is what the page sees.
    let german = context_of(
        h,
        HostBuilder::new().language("de-DE".try_into().map_err(|e| format!("{e}"))?),
    )?;
    ensure!(
        german["language"]
            .as_str()
            .is_some_and(|l| l.eq_ignore_ascii_case("de-DE"))
            && german["lang"] == "de-DE"
            && german["formatted"] == "1.234,5",
        "with language de-DE: {german}"
    );
    Ok(())
}

fn time_zone(h: &mut HostHarness) -> Outcome {
    let context = context_of(h, HostBuilder::new())?;
    ensure!(
        context["zone"] == "Asia/Shanghai" && context["offset"] == -480,
        "under TZ=Asia/Shanghai: {context}"
    );
    Ok(())
}

fn text_height(h: &mut HostHarness, zoom: f64) -> Result<f64, String> {
    let mut t = h.host(HostBuilder::new().text_zoom(zoom))?;
    let html = "<p id='t' style='margin:0;font-size:20px'>Zoom</p>";
    let js = "post('height', {h: document.getElementById('t').getBoundingClientRect().height});";
    h.open(&mut t, "z", test_app("zoom", html, js), None)?;
    ensure!(
        h.wait(&mut t, |_, rec| rec.count("z", "height") == 1),
        "no height report"
    );
    let height = t.rec.data("z", "height")[0]["h"].as_f64().unwrap_or(0.0);
    h.shut_down(t)?;
    Ok(height)
}

fn text_zoom(h: &mut HostHarness) -> Outcome {
    let normal = text_height(h, 1.0)?;
    let doubled = text_height(h, 2.0)?;
    ensure!(
        normal > 0.0 && (1.8..=2.2).contains(&(doubled / normal)),
        "text height {normal} at 1.0 and {doubled} at 2.0"
    );
    Ok(())
}

const THEME_JS: &str = "
var query = matchMedia('(prefers-color-scheme: dark)');
function report(name) {
  post(name, {
    dark: query.matches,
    bg: getComputedStyle(document.documentElement).getPropertyValue('--lineup-color-bg').trim(),
    radius: getComputedStyle(document.documentElement).getPropertyValue('--lineup-radius').trim()
  });
}
report('theme');
query.addEventListener('change', function () { report('change'); });
";

fn theme(h: &mut HostHarness) -> Outcome {
    let mut t = h.host(HostBuilder::new().theme(Theme::Dark))?;
    h.open(&mut t, "t", test_app("theme", "<p>t</p>", THEME_JS), None)?;
    ensure!(
        h.wait(&mut t, |_, rec| rec.count("t", "theme") == 1),
        "no theme report"
    );
    let dark = t.rec.data("t", "theme")[0].clone();
    ensure!(
        dark == json!({"dark": true, "bg": "#1e1f22", "radius": "6px"}),
        "with Theme::Dark: {dark}"
    );
    // Positive control, live: the light theme is not dark, and the properties follow.
    t.host.set_theme(Theme::Light);
    ensure!(
        h.wait(&mut t, |_, rec| rec.count("t", "change") >= 1),
        "no live change after Theme::Light"
    );
    let light = t
        .rec
        .data("t", "change")
        .last()
        .cloned()
        .unwrap_or(Value::Null);
    ensure!(
        light == json!({"dark": false, "bg": "#ffffff", "radius": "6px"}),
        "after Theme::Light: {light}"
    );
    h.shut_down(t)
}

const CONTRAST_JS: &str = "
var root = getComputedStyle(document.documentElement);
post('contrast', {
  marker: document.documentElement.getAttribute('data-lineup-contrast'),
  fg: root.getPropertyValue('--lineup-color-fg').trim(),
  accent: root.getPropertyValue('--lineup-color-accent').trim()
});
";

fn contrast_of(h: &mut HostHarness, contrast: Contrast) -> Result<Value, String> {
    let mut t = h.host(HostBuilder::new().theme(Theme::Light).contrast(contrast))?;
    h.open(
        &mut t,
        "k",
        test_app("contrast", "<p>k</p>", CONTRAST_JS),
        None,
    )?;
    ensure!(
        h.wait(&mut t, |_, rec| rec.count("k", "contrast") == 1),
        "no contrast report"
    );
    let seen = t.rec.data("k", "contrast")[0].clone();
    h.shut_down(t)?;
    Ok(seen)
}

fn contrast(h: &mut HostHarness) -> Outcome {
    let high = json!({"marker": "more", "fg": "#000000", "accent": "#0000c0"});
    let normal = json!({"marker": null, "fg": "#1f2328", "accent": "#0a66d8"});
    let seen = contrast_of(h, Contrast::High)?;
    ensure!(seen == high, "with Contrast::High: {seen}");
    // Positive control: the regular values without it.
    let seen = contrast_of(h, Contrast::Normal)?;
    ensure!(seen == normal, "with Contrast::Normal: {seen}");
    // The desktop's choice, read at open: a high-contrast GTK theme, then none.
    std::env::set_var("GTK_THEME", "HighContrast");
    let seen = contrast_of(h, Contrast::System);
    std::env::remove_var("GTK_THEME");
    let seen = seen?;
    ensure!(seen == high, "with GTK_THEME=HighContrast: {seen}");
    let seen = contrast_of(h, Contrast::System)?;
    ensure!(seen == normal, "with the desktop's default theme: {seen}");
    Ok(())
}

const RESIZE_JS: &str = "
function size() { post('size', { h: innerHeight }); }
size();
addEventListener('resize', size);
LineUpSurface.onState(function (s) { if (s.h) { LineUpSurface.resize(s.h); } });
";

fn child_resize(h: &mut HostHarness) -> Outcome {
    let parent = Rc::new(
        WindowBuilder::new()
            .with_title("lineup embedder")
            .with_inner_size(LogicalSize::new(600, 400))
            .build(&h.event_loop)
            .map_err(|e| e.to_string())?,
    );
    let mut t = h.host(
        HostBuilder::new()
            .child_views_in(Rc::clone(&parent))
            .resize_bounds(40, 500),
    )?;
    let key = h.open(&mut t, "r", test_app("resize", "<p>r</p>", RESIZE_JS), None)?;
    let height = |rec: &lineup_tests::host_harness::Recorder| {
        rec.data("r", "size").last().map(|s| s["h"].clone())
    };
    // Positive control: before any request the view is as tall as the parent.
    ensure!(
        h.wait(&mut t, |_, rec| height(rec) == Some(json!(400))),
        "not 400 tall at first: {:?}",
        t.rec.data("r", "size")
    );
    t.send(t.agent.patch("r", json!({"h": 300})))?;
    ensure!(
        h.wait(&mut t, |_, rec| height(rec) == Some(json!(300))),
        "resize(300) did not make the view 300 tall: {:?}",
        t.rec.data("r", "size")
    );
    t.send(t.agent.patch("r", json!({"h": 5000})))?;
    ensure!(
        h.wait(&mut t, |_, rec| height(rec) == Some(json!(500))),
        "resize(5000) was not clamped to 500: {:?}",
        t.rec.data("r", "size")
    );
    ensure!(
        t.rec.resizes(&key) == vec![300, 500],
        "the delegate heard {:?}",
        t.rec.resizes(&key)
    );
    let result = h.shut_down(t);
    drop(parent);
    result
}
