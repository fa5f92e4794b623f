//! What the bench measures, in which order, and the child modes that measure a fresh process.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, ExitCode, Stdio};
use std::rc::Rc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use lineup_host_core::InlineBundle;
use lineup_surface_runtime::{DocumentOptions, SurfaceDocument};
use lineup_webview_shell::HostBuilder;
use serde_json::{json, Value};

use crate::child;
use crate::lab::{envelope, Lab};
use crate::markdown;
use crate::phases;
use crate::procs;
use crate::raw::{Kind, RawView};
use crate::report::{self, round, Figure};

/// The bench page: acknowledges every state with its `seq`; `busy` ms of work per state (a page
/// slower than the agent), `ping` timestamped events 10 ms apart, `flood` ms of events posted as
/// fast as the page can.
const APP_JS: &str = r#"LineUpSurface.onState(function (s) {
  if (s.busy) { var end = performance.now() + s.busy; while (performance.now() < end) {} }
  if (s.ping) {
    var i = 0, n = s.ping;
    (function next() {
      if (i >= n) { return; }
      LineUpSurface.event('t', { i: i, t: performance.timeOrigin + performance.now() });
      i += 1;
      setTimeout(next, 10);
    })();
  }
  if (s.flood) {
    var until = performance.now() + s.flood, k = 0;
    (function burst() {
      for (var j = 0; j < 100; j += 1) { LineUpSurface.event('f', { k: k }); k += 1; }
      if (performance.now() < until) { setTimeout(burst, 0); } else { LineUpSurface.event('fdone', { k: k }); }
    })();
  }
  LineUpSurface.event('ack', { seq: s.seq });
});
"#;
const APP_HTML: &str = "<main><h1>lineup bench</h1><p id=\"v\">waiting</p></main>";
const APP_CSS: &str = "main { font: 14px sans-serif; padding: 8px; }";

/// How many samples of each kind.
#[derive(Clone, Copy, Debug)]
struct Plan {
    quick: bool,
    opens: usize,
    sized_opens: usize,
    patches: usize,
    pings: usize,
    firsts: usize,
    patch_flood: usize,
    event_flood_ms: u64,
    memory_counts: &'static [usize],
}

const FULL: Plan = Plan {
    quick: false,
    opens: 30,
    sized_opens: 10,
    patches: 200,
    pings: 100,
    firsts: 5,
    patch_flood: 1000,
    event_flood_ms: 2000,
    memory_counts: &[1, 10, 16],
};

const QUICK: Plan = Plan {
    quick: true,
    opens: 3,
    sized_opens: 1,
    patches: 10,
    pings: 10,
    firsts: 1,
    patch_flood: 50,
    event_flood_ms: 300,
    memory_counts: &[1, 2],
};

/// The bench app's bundle, padded (in a script comment) to `total` bytes of html + css + js.
fn bundle_parts(total: usize) -> (String, String, String) {
    let base = APP_HTML.len() + APP_CSS.len() + APP_JS.len();
    let pad = total.saturating_sub(base + 6);
    let js = if pad > 0 {
        format!("/*{}*/\n{APP_JS}", "x".repeat(pad))
    } else {
        APP_JS.to_owned()
    };
    (APP_HTML.to_owned(), APP_CSS.to_owned(), js)
}

/// The app as a `ui.open` payload's `app`.
pub(crate) fn app_json(total: usize) -> Value {
    let (html, css, js) = bundle_parts(total);
    json!({ "id": "com.lineup.bench", "name": "bench", "version": "1.0.0",
            "html": html, "css": css, "js": js })
}

/// The document bytes the host serves for this app (default options): what the raw views load.
pub(crate) fn document_bytes(total: usize) -> Result<Rc<Vec<u8>>, String> {
    let (html, css, js) = bundle_parts(total);
    let bundle = InlineBundle::new(html, css, js).map_err(|e| e.to_string())?;
    let document = SurfaceDocument::assemble(&bundle, &DocumentOptions::default());
    Ok(Rc::new(document.html().as_bytes().to_vec()))
}

pub(crate) fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn progress(text: &str) {
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    let start = START.get_or_init(Instant::now);
    eprintln!(
        "[lineup-bench {:6.1}s] {text}",
        start.elapsed().as_secs_f64()
    );
}

/// The default bench bundle size.
pub(crate) const SMALL: usize = 1024;

pub(crate) fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--child") {
        return match child::run(&args[1..]) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("lineup-bench child: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let mut out = None;
    let mut md = None;
    let mut from: Option<String> = None;
    let mut plan = FULL;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--quick" => plan = QUICK,
            "--out" => out = it.next().cloned(),
            "--md" => md = it.next().cloned(),
            "--from-json" => from = it.next().cloned(),
            "--help" | "-h" => {
                println!(
                    "lineup-bench [--quick] [--out BENCHMARKS.json] [--md BENCHMARKS.md]\n\
                     Run under a display (xvfb-run -a); see scripts/bench.sh."
                );
                return ExitCode::SUCCESS;
            }
            other => {
                eprintln!("lineup-bench: unknown argument {other}");
                return ExitCode::FAILURE;
            }
        }
    }
    // Re-renders BENCHMARKS.md from a run's JSON, measuring nothing.
    if let Some(from) = from {
        let rendered = std::fs::read_to_string(&from)
            .map_err(|e| e.to_string())
            .and_then(|t| serde_json::from_str::<Value>(&t).map_err(|e| e.to_string()))
            .map(|document| markdown::render_markdown(&document));
        return match (rendered, md) {
            (Ok(text), Some(path)) => match std::fs::write(&path, markdown::keep_tail(&path, text))
            {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("lineup-bench: cannot write {path}: {e}");
                    ExitCode::FAILURE
                }
            },
            (Ok(text), None) => {
                println!("{text}");
                ExitCode::SUCCESS
            }
            (Err(e), _) => {
                eprintln!("lineup-bench: {from}: {e}");
                ExitCode::FAILURE
            }
        };
    }
    match run(plan) {
        Ok((figures, extra)) => {
            let text = report::table(&figures);
            println!("{text}");
            let document = json!({
                "bench": "lineup-bench",
                "mode": if plan.quick { "quick" } else { "full" },
                "machine": machine(),
                "figures": figures.iter().map(Figure::to_json).collect::<Vec<_>>(),
                "details": extra,
            });
            if let Some(path) = out {
                let pretty = serde_json::to_string_pretty(&document).unwrap_or_default();
                if let Err(e) = std::fs::write(&path, pretty + "\n") {
                    eprintln!("lineup-bench: cannot write {path}: {e}");
                    return ExitCode::FAILURE;
                }
                if let Err(e) = check_written(&path, figures.len()) {
                    eprintln!("lineup-bench: {path}: {e}");
                    return ExitCode::FAILURE;
                }
            }
            if let Some(path) = md {
                let text = markdown::keep_tail(&path, markdown::render_markdown(&document));
                if let Err(e) = std::fs::write(&path, text) {
                    eprintln!("lineup-bench: cannot write {path}: {e}");
                    return ExitCode::FAILURE;
                }
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("lineup-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Reads the written JSON back: it must parse and hold `count` figures, each with ours.
fn check_written(path: &str, count: usize) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let value: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let figures = value["figures"].as_array().ok_or("no figures")?;
    if figures.len() != count || count == 0 || figures.iter().any(|f| f["ours"].is_null()) {
        return Err(format!(
            "{} figures written, {count} measured",
            figures.len()
        ));
    }
    Ok(())
}

/// The machine the numbers were taken on.
fn machine() -> Value {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .and_then(|l| l.split(':').nth(1))
        .map(|s| s.trim().to_owned())
        .unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let memory = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .map(|s| s.trim().to_owned())
        .unwrap_or_default();
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    json!({
        "cpu": model,
        "cores": cores,
        "memory": memory,
        "kernel": kernel.trim(),
        "webkitgtk": webkitgtk_version(),
        "build": if cfg!(debug_assertions) { "debug" } else { "release" },
    })
}

/// The WebKitGTK version, as pkg-config knows it.
fn webkitgtk_version() -> String {
    Command::new("pkg-config")
        .args(["--modversion", "webkit2gtk-4.1"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_else(|| "?".to_owned())
}

type Measured = (Vec<Figure>, Value);

fn run(plan: Plan) -> Result<Measured, String> {
    let started = Instant::now();
    let mut figures = Vec::new();
    let mut details = serde_json::Map::new();
    let mut lab = Lab::new()?;
    progress("starting the host and its isolation probe");
    lab.start_host(HostBuilder::new())?;
    let probe_start = Instant::now();
    lab.wait_probe()?;
    details.insert(
        "probe_ms_in_running_host".to_owned(),
        json!(round(ms(probe_start.elapsed()))),
    );

    // Open → ready, cold, one Surface at a time.
    progress("open → ready, cold");
    let small = document_bytes(SMALL)?;
    let app = app_json(SMALL);
    let (ours, plain, hardened) = open_samples(&mut lab, plan.opens, &app, &small)?;
    figures.push(Figure::samples(
        "open → ready, cold",
        &["p50", "p95"],
        &ours,
        Some(&plain),
        Some(&hardened),
    ));

    let cold_samples = (ours.clone(), plain.clone(), hardened.clone());
    let cold_baselines = (plain.clone(), hardened.clone());
    let cold_profile = std::mem::take(&mut lab.profile);

    // Patch → onState → event back, in process, by state size.
    let max_state = max_state_pad(&mut lab);
    for (label, pad) in [
        ("1 KiB", 1024),
        ("16 KiB", 16 * 1024),
        ("256 KiB", 256 * 1024),
        ("max", max_state),
    ] {
        progress(&format!("patch → onState → event, {label}"));
        let n = if pad > 100_000 {
            plan.patches / 4
        } else {
            plan.patches
        }
        .max(3);
        let ((ours, plain, hardened), profile) = patch_samples(&mut lab, n, pad, &small, &app)?;
        if label == "1 KiB" {
            details.insert("patch_profile_1kib".to_owned(), profile);
        }
        let name = format!("patch → onState → event back, {label} state");
        let figure = Figure::samples(&name, &["p50", "p99"], &ours, Some(&plain), Some(&hardened));
        figures.push(if label == "max" {
            figure.with_note(format!(
                "state padded to {pad} bytes: the largest that fits the default 1 MiB envelope"
            ))
        } else {
            figure
        });
    }

    // Page event → outbound envelope.
    progress("page event → outbound");
    let ((ours, plain, hardened), in_host) = event_samples(&mut lab, plan.pings, &small, &app)?;
    figures.push(
        Figure::samples(
            "page event → agent, in the host (IPC handler → outbound callback)",
            &["p50", "p99"],
            &in_host,
            None,
            None,
        )
        .with_note(
            "the part of the figure below spent in the host: from the bridge message reaching \
             the IPC handler to the outbound envelope, on the host's monotonic clock",
        ),
    );
    figures.push(
        Figure::samples(
            "page event → agent",
            &["p50", "p99"],
            &ours,
            Some(&plain),
            Some(&hardened),
        )
        .with_note(
            "the page's performance.timeOrigin + now() against the host's wall clock at the \
             outbound callback (raw: at the IPC handler); WebKit coarsens the page's clock",
        ),
    );

    // Open latency by bundle size; the cold opens above are of the 1 KiB bundle already.
    for (label, size) in [
        ("1 KiB", SMALL),
        ("40 KiB", 40 * 1024),
        ("160 KiB", 160 * 1024 - 64),
    ] {
        let (ours, plain, hardened) = if size == SMALL {
            cold_samples.clone()
        } else {
            progress(&format!("open → ready, {label} bundle"));
            let bytes = document_bytes(size)?;
            let app = app_json(size);
            open_samples(&mut lab, plan.sized_opens, &app, &bytes)?
        };
        let figure = Figure::samples(
            &format!("open → ready, {label} bundle"),
            &["p50"],
            &ours,
            Some(&plain),
            Some(&hardened),
        );
        figures.push(if size == SMALL {
            figure.with_note("the cold opens above: their bundle is this size")
        } else {
            figure
        });
    }

    // Floods.
    progress("flood: agent patches faster than the page renders");
    let (flood, flood_details) = patch_flood(&mut lab, plan.patch_flood, &small, &app)?;
    figures.push(flood);
    details.insert("patch_flood".to_owned(), flood_details);
    progress("flood: page posts events as fast as it can");
    let (flood, flood_details) = event_flood(&mut lab, plan.event_flood_ms, &small, &app)?;
    figures.extend(flood);
    details.insert("event_flood".to_owned(), flood_details);

    // Through `lineup host --stdio`.
    progress("patch → onState → event back through lineup host --stdio");
    match stdio_samples(plan.patches) {
        Ok(Some(samples)) => {
            let in_process = figures
                .iter()
                .find(|f| f.name.starts_with("patch → onState → event back, 1 KiB"))
                .map(|f| f.hardened.clone());
            let mut figure = Figure::samples(
                "patch → onState → event back, lineup host --stdio, 1 KiB",
                &["p50", "p99"],
                &samples,
                None,
                None,
            );
            figure.hardened = in_process.flatten();
            figures.push(figure.with_note(
                "through pipes and a separate process; baseline: raw hardened in process",
            ));
        }
        Ok(None) => {
            details.insert(
                "stdio".to_owned(),
                json!("not measured: no `lineup` binary next to lineup-bench"),
            );
        }
        Err(e) => {
            details.insert("stdio".to_owned(), json!(format!("failed: {e}")));
        }
    }
    // Open → ready from the warm pool: a host with one pool view, refilled between opens.
    progress("open → ready, warm (pool)");
    let warm = warm_samples(&mut lab, plan.opens, &app)?;
    figures.insert(
        1,
        Figure::samples(
            "open → ready, warm pool",
            &["p50", "p95"],
            &warm,
            Some(&cold_baselines.0),
            Some(&cold_baselines.1),
        )
        .with_note("baselines: raw cold opens (raw wry has no pool)"),
    );
    // The raw form of a pool view: a hardened view started with its document request held,
    // released at the open; and the same with the host's bridge script added.
    progress("open → ready, pre-started raw views");
    let bytes = document_bytes(SMALL)?;
    let mut held = Vec::new();
    for _ in 0..plan.opens {
        held.push(ms(lab.open_raw_held(Kind::Hardened, &bytes)?.0));
    }
    let mut held_bridge = Vec::new();
    let mut bridge_script = Vec::new();
    for _ in 0..plan.sized_opens {
        let (elapsed, script) = lab.open_raw_held(Kind::HardenedWithBridge, &bytes)?;
        held_bridge.push(ms(elapsed));
        bridge_script.extend(script);
    }
    figures.insert(
        2,
        Figure::samples(
            "open → ready, warm pool against a pre-started raw view",
            &["p50", "p95"],
            &warm,
            None,
            Some(&held),
        )
        .with_note(
            "baseline: a raw hardened view started with its document request held, released \
             at the open (what a pool view is, without the host)",
        ),
    );
    details.insert(
        "pre_started_hardened_with_bridge_ready_ms".to_owned(),
        json!({
            "p50": report::percentile(&held_bridge, 50.0),
            "p95": report::percentile(&held_bridge, 95.0),
            "samples": held_bridge.len(),
            "bridge_script_p50": report::percentile(&bridge_script, 50.0),
        }),
    );
    let warm_profile = std::mem::take(&mut lab.warm_profile);
    drop(lab);

    // Fresh processes: first Surface after start, and memory.
    progress("first Surface after process start");
    let mut firsts: [Vec<f64>; 4] = Default::default();
    let mut phases = Vec::new();
    for _ in 0..plan.firsts {
        for (i, variant) in ["ours", "plain", "hardened", "hardened-pair"]
            .iter()
            .enumerate()
        {
            let (elapsed, child) = child::first_after_start(variant)?;
            firsts[i].push(elapsed);
            if *variant == "ours" {
                phases.push(child);
            }
        }
    }
    // The probe runs in a sandboxed web process of its own beside the first Surface's: two
    // raw hardened views started together are what that costs without any host code.
    details.insert(
        "first_two_hardened_views_ready_ms".to_owned(),
        json!({
            "p50": report::percentile(&firsts[3], 50.0),
            "p95": report::percentile(&firsts[3], 95.0),
            "samples": firsts[3].len(),
        }),
    );
    figures.push(
        Figure::samples(
            "first Surface after process start",
            &["p50", "p95"],
            &firsts[0],
            Some(&firsts[1]),
            Some(&firsts[2]),
        )
        .with_note("spawn of a fresh bench process → its first Surface's ready"),
    );
    details.insert("first_surface_phases".to_owned(), json!(phases));

    progress("memory (PSS of the process tree)");
    let mut memory = serde_json::Map::new();
    let mut per: Vec<(usize, [f64; 3])> =
        plan.memory_counts.iter().map(|&n| (n, [0.0; 3])).collect();
    for (i, variant) in ["ours", "plain", "hardened"].iter().enumerate() {
        let results = child::memory_child(variant, plan.memory_counts)?;
        for ((count, row), result) in per.iter_mut().zip(results) {
            row[i] = result["pss_kib"].as_f64().unwrap_or(0.0) / 1024.0;
            memory.insert(format!("{variant}_{count}"), result);
        }
    }
    for (count, row) in &per {
        figures.push(Figure::values(
            &format!("PSS, host + descendants, {count} Surfaces"),
            "MiB",
            row[0],
            Some(row[1]),
            Some(row[2]),
        ));
    }
    if let (Some((lo, a)), Some((hi, b))) = (per.first(), per.last()) {
        if hi > lo {
            let each = |i: usize| (b[i] - a[i]) / (*hi - *lo) as f64;
            figures.push(
                Figure::values(
                    "memory per Surface (PSS slope)",
                    "MiB",
                    each(0),
                    Some(each(1)),
                    Some(each(2)),
                )
                .with_note(format!("(PSS at {hi} − PSS at {lo}) / {}", hi - lo)),
            );
        }
    }
    if let (Some((lo, _)), Some((hi, _))) = (per.first(), per.last()) {
        if hi > lo {
            details.insert(
                "memory_per_surface_by_process".to_owned(),
                slopes_by_process(&memory, *lo, *hi),
            );
            // What the bridge's user script alone costs: raw hardened with it added.
            let mut total = [0.0; 2];
            let results = child::memory_child("hardened-bridge", &[*lo, *hi])?;
            for ((slot, count), result) in [(0, *lo), (1, *hi)].into_iter().zip(results) {
                total[slot] = result["pss_kib"].as_f64().unwrap_or(0.0) / 1024.0;
                memory.insert(format!("hardened-bridge_{count}"), result);
            }
            details.insert(
                "memory_per_surface_hardened_with_bridge_mib".to_owned(),
                json!(round((total[1] - total[0]) / (*hi - *lo) as f64)),
            );
        }
    }
    // What one idle pool view costs: the same single Surface with and without warm_pool(1).
    let pooled = child::memory_child("ours-pool", &[1])?.remove(0);
    let pooled_mib = pooled["pss_kib"].as_f64().unwrap_or(0.0) / 1024.0;
    if let Some((_, row)) = per.first() {
        figures.push(
            Figure::values(
                "warm pool: idle cost of one pool view",
                "MiB",
                pooled_mib - row[0],
                None,
                None,
            )
            .with_note("PSS with warm_pool(1) − PSS without, one Surface open in both"),
        );
    }
    memory.insert("ours-pool_1".to_owned(), pooled);
    details.insert("memory".to_owned(), Value::Object(memory));
    details.insert(
        "open_profile_cold".to_owned(),
        phases::profile_summary(&cold_profile),
    );
    details.insert(
        "open_profile_warm".to_owned(),
        phases::profile_summary(&warm_profile),
    );
    details.insert(
        "total_seconds".to_owned(),
        json!(round(started.elapsed().as_secs_f64())),
    );
    Ok((figures, Value::Object(details)))
}

/// Samples of ours, raw plain and raw hardened.
type Triple = (Vec<f64>, Vec<f64>, Vec<f64>);

/// Cold opens of ours, plain and hardened, one at a time, each closed before the next.
fn open_samples(
    lab: &mut Lab,
    n: usize,
    app: &Value,
    bytes: &Rc<Vec<u8>>,
) -> Result<Triple, String> {
    let (mut ours, mut plain, mut hardened) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..n {
        let instance = format!("open{i}");
        lab.phases.take();
        let start = Instant::now();
        ours.push(ms(lab.open_ours(&instance, app, None)?));
        lab.profile
            .push(phases::phase_offsets(lab, start, &instance, true));
        lab.close_ours(&instance)?;
        lab.settle(Duration::from_millis(150));
        for (kind, out) in [(Kind::Plain, &mut plain), (Kind::Hardened, &mut hardened)] {
            let (view, took) = lab.open_raw(kind, bytes)?;
            out.push(ms(took));
            drop(view);
            lab.settle(Duration::from_millis(150));
        }
    }
    Ok((ours, plain, hardened))
}

/// Opens from the warm pool of a host of its own (`warm_pool(1)`), each once the pool view has
/// been started and has settled, each closed before the next.
fn warm_samples(lab: &mut Lab, n: usize, app: &Value) -> Result<Vec<f64>, String> {
    // The pool-less host goes; its Surfaces are all closed by now.
    lab.host = None;
    lab.settle(Duration::from_millis(300));
    lab.start_host(HostBuilder::new().warm_pool(1))?;
    lab.wait_probe()?;
    let mut out = Vec::new();
    for i in 0..n {
        let refilled = lab.pump(Duration::from_secs(30), |h, _, _| {
            h.is_some_and(|h| h.pooled_views() >= 1)
        });
        if !refilled {
            return Err("the warm pool was not refilled".to_owned());
        }
        lab.settle(Duration::from_millis(400));
        let instance = format!("warm{i}");
        lab.phases.take();
        let start = Instant::now();
        out.push(ms(lab.open_ours(&instance, app, None)?));
        lab.warm_profile
            .push(phases::phase_offsets(lab, start, &instance, false));
        lab.close_ours(&instance)?;
    }
    Ok(out)
}

/// The largest `pad` for which a patch `{seq, pad}` fits the default envelope limit.
fn max_state_pad(lab: &mut Lab) -> usize {
    let limit = crate::lab::bench_limits().max_envelope_bytes;
    let probe = lab.envelope(
        "lineup.v1.ui.patch",
        json!({ "instance_id": "patch", "state": { "seq": 999_999, "pad": "" } }),
    );
    limit.saturating_sub(probe.len() + 16)
}

fn acked(seen: &[crate::lab::Seen], instance: &str, seq: u64) -> bool {
    seen.iter()
        .any(|s| s.instance == instance && s.event == "ack" && s.data["seq"] == seq)
}

fn raw_acked(inbox: &crate::raw::Inbox, view: u64, seq: u64) -> bool {
    let needle = format!("\"event\":\"ack\",\"data\":{{\"seq\":{seq}}}");
    inbox
        .messages
        .borrow()
        .iter()
        .any(|m| m.view == view && m.body.contains(&needle))
}

/// Patch → onState → event back, `n` times with a state of `pad` bytes: ours, plain, hardened,
/// and where the time of ours goes, leg by leg.
fn patch_samples(
    lab: &mut Lab,
    n: usize,
    pad: usize,
    bytes: &Rc<Vec<u8>>,
    app: &Value,
) -> Result<(Triple, Value), String> {
    let padding = "p".repeat(pad);
    let warmup = 3;
    lab.open_ours("patch", app, None)?;
    let mut ours = Vec::new();
    let mut legs: Vec<Vec<f64>> = Vec::new();
    for seq in 0..(n + warmup) as u64 {
        let bytes = lab.envelope(
            "lineup.v1.ui.patch",
            json!({ "instance_id": "patch", "state": { "seq": seq, "pad": padding } }),
        );
        lab.rec.events.borrow_mut().clear();
        lab.phases.take();
        let start = Instant::now();
        lab.send(bytes)?;
        if !lab.pump(Duration::from_secs(10), |_, rec, _| {
            acked(&rec.events.borrow(), "patch", seq)
        }) {
            return Err(format!("patch {seq} was not acknowledged"));
        }
        let at = lab
            .rec
            .events
            .borrow()
            .iter()
            .find(|s| s.event == "ack")
            .map(|s| s.at);
        let at = at.unwrap_or_else(Instant::now);
        if seq >= warmup as u64 {
            ours.push(ms(at.duration_since(start)));
            legs.extend(phases::patch_legs(&lab.phases.take(), start, at));
        }
    }
    lab.close_ours("patch")?;
    let mut raws = Vec::new();
    for kind in [Kind::Plain, Kind::Hardened] {
        let (view, _) = lab.open_raw(kind, bytes)?;
        raws.push(raw_patches(lab, &view, n, warmup, &padding)?);
        drop(view);
        lab.settle(Duration::from_millis(100));
    }
    let hardened = raws.pop().unwrap_or_default();
    let plain = raws.pop().unwrap_or_default();
    let profile = phases::patch_profile(&legs, &ours, &hardened);
    Ok(((ours, plain, hardened), profile))
}

fn raw_patches(
    lab: &mut Lab,
    view: &RawView,
    n: usize,
    warmup: usize,
    padding: &str,
) -> Result<Vec<f64>, String> {
    let mut out = Vec::new();
    let id = view.id;
    for seq in 0..(n + warmup) as u64 {
        let state = json!({ "seq": seq, "pad": padding }).to_string();
        lab.inbox.messages.borrow_mut().clear();
        let start = Instant::now();
        view.deliver(&state)?;
        if !lab.pump(Duration::from_secs(10), |_, _, inbox| {
            raw_acked(inbox, id, seq)
        }) {
            return Err(format!("raw patch {seq} was not acknowledged"));
        }
        let at = lab.inbox.messages.borrow().last().map(|m| m.at);
        if seq >= warmup as u64 {
            out.push(ms(at.unwrap_or_else(Instant::now).duration_since(start)));
        }
    }
    Ok(out)
}

/// Page event → outbound: the page stamps each event; the host's wall clock at arrival.
fn event_samples(
    lab: &mut Lab,
    n: usize,
    bytes: &Rc<Vec<u8>>,
    app: &Value,
) -> Result<(Triple, Vec<f64>), String> {
    lab.open_ours("ping", app, None)?;
    lab.rec.events.borrow_mut().clear();
    lab.phases.take();
    let ping = lab.envelope(
        "lineup.v1.ui.patch",
        json!({ "instance_id": "ping", "state": { "seq": 1, "ping": n } }),
    );
    lab.send(ping)?;
    let count = |seen: &[crate::lab::Seen]| seen.iter().filter(|s| s.event == "t").count();
    lab.pump(Duration::from_secs(30), |_, rec, _| {
        count(&rec.events.borrow()) >= n
    });
    let ours: Vec<f64> = lab
        .rec
        .events
        .borrow()
        .iter()
        .filter(|s| s.event == "t")
        .filter_map(|s| s.data["t"].as_f64().map(|t| s.epoch_ms - t))
        .collect();
    // The page posts only to this Surface meanwhile, in order: its `ack`, then the `t` events,
    // so the last bridge messages are the `t` events' arrivals at the IPC handler.
    let arrivals: Vec<Instant> = lab
        .phases
        .take()
        .into_iter()
        .filter(|(_, name, _)| name == "bridge_message")
        .map(|(at, _, _)| at)
        .collect();
    let outbound: Vec<Instant> = lab
        .rec
        .events
        .borrow()
        .iter()
        .filter(|s| s.event == "t")
        .map(|s| s.at)
        .collect();
    let skip = arrivals.len().saturating_sub(outbound.len());
    let in_host: Vec<f64> = arrivals[skip..]
        .iter()
        .zip(&outbound)
        .map(|(arrived, sent)| ms(sent.saturating_duration_since(*arrived)))
        .collect();
    lab.close_ours("ping")?;
    let mut raws = Vec::new();
    for kind in [Kind::Plain, Kind::Hardened] {
        let (view, _) = lab.open_raw(kind, bytes)?;
        lab.inbox.messages.borrow_mut().clear();
        view.deliver(&json!({ "seq": 1, "ping": n }).to_string())?;
        let id = view.id;
        let is_t = |b: &str| b.starts_with(r#"{"type":"event","event":"t""#);
        lab.pump(Duration::from_secs(30), |_, _, inbox| {
            inbox
                .messages
                .borrow()
                .iter()
                .filter(|m| m.view == id && is_t(&m.body))
                .count()
                >= n
        });
        let samples: Vec<f64> = lab
            .inbox
            .messages
            .borrow()
            .iter()
            .filter(|m| m.view == id && is_t(&m.body))
            .filter_map(|m| {
                let v: Value = serde_json::from_str(&m.body).ok()?;
                Some(m.epoch_ms - v["data"]["t"].as_f64()?)
            })
            .collect();
        raws.push(samples);
        drop(view);
        lab.settle(Duration::from_millis(100));
    }
    let hardened = raws.pop().unwrap_or_default();
    let plain = raws.pop().unwrap_or_default();
    Ok(((ours, plain, hardened), in_host))
}

/// The agent patches `n` times back to back a page that works 2 ms per state: time until the
/// last state is acknowledged, and the host's delivery coalescing.
fn patch_flood(
    lab: &mut Lab,
    n: usize,
    bytes: &Rc<Vec<u8>>,
    app: &Value,
) -> Result<(Figure, Value), String> {
    lab.open_ours("flood", app, None)?;
    lab.rec.events.borrow_mut().clear();
    let last = n as u64 - 1;
    let envelopes: Vec<Vec<u8>> = (0..n as u64)
        .map(|seq| {
            lab.envelope(
                "lineup.v1.ui.patch",
                json!({ "instance_id": "flood", "state": { "seq": seq, "busy": 2 } }),
            )
        })
        .collect();
    let start = Instant::now();
    for bytes in envelopes {
        lab.send(bytes)?;
    }
    lab.pump(Duration::from_secs(60), |_, rec, _| {
        acked(&rec.events.borrow(), "flood", last)
    });
    let ours = start.elapsed();
    let acks = lab
        .rec
        .events
        .borrow()
        .iter()
        .filter(|s| s.event == "ack")
        .count();
    let stats = lab
        .rec
        .keys
        .borrow()
        .get("flood")
        .and_then(|k| lab.host.as_ref().and_then(|h| h.view(k)))
        .map(|v| v.delivery_stats());
    lab.close_ours("flood")?;
    let mut raws = Vec::new();
    for kind in [Kind::Plain, Kind::Hardened] {
        let (view, _) = lab.open_raw(kind, bytes)?;
        lab.inbox.messages.borrow_mut().clear();
        let start = Instant::now();
        for seq in 0..n as u64 {
            view.deliver(&json!({ "seq": seq, "busy": 2 }).to_string())?;
        }
        let id = view.id;
        lab.pump(Duration::from_secs(60), |_, _, inbox| {
            raw_acked(inbox, id, last)
        });
        raws.push(ms(start.elapsed()));
        drop(view);
        lab.settle(Duration::from_millis(100));
    }
    let details = json!({
        "patches": n,
        "page_work_ms_per_state": 2,
        "ours_states_acknowledged": acks,
        "delivered": stats.map(|s| s.delivered),
        "coalesced": stats.map(|s| s.coalesced),
        "high_water": stats.map(|s| s.high_water),
    });
    let figure = Figure::values(
        &format!("patch flood: {n} patches → last state acknowledged"),
        "ms",
        ms(ours),
        raws.first().copied(),
        raws.get(1).copied(),
    )
    .with_note(format!(
        "ours coalesces: {acks} states reached onState, delivery stats {stats:?}; raw delivers all {n}"
    ));
    Ok((figure, details))
}

/// A page posts events as fast as it can for `flood_ms`: events per second reaching the agent,
/// and the host's RSS at the end.
fn event_flood(
    lab: &mut Lab,
    flood_ms: u64,
    bytes: &Rc<Vec<u8>>,
    app: &Value,
) -> Result<(Vec<Figure>, Value), String> {
    lab.open_ours("events", app, None)?;
    lab.rec.floods.set(0);
    lab.rec.events.borrow_mut().clear();
    let go = lab.envelope(
        "lineup.v1.ui.patch",
        json!({ "instance_id": "events", "state": { "seq": 1, "flood": flood_ms } }),
    );
    let start = Instant::now();
    lab.send(go)?;
    let timeout = Duration::from_millis(flood_ms + 5000);
    lab.pump(timeout, |_, rec, _| {
        rec.events.borrow().iter().any(|s| s.event == "fdone")
    });
    lab.settle(Duration::from_millis(300));
    let elapsed = start.elapsed().as_secs_f64();
    let ours_count = lab.rec.floods.get();
    let ours_rss = procs::own_rss_kib();
    let posted = lab
        .rec
        .events
        .borrow()
        .iter()
        .find(|s| s.event == "fdone")
        .and_then(|s| s.data["k"].as_u64());
    lab.close_ours("events")?;
    let mut raw_rates = Vec::new();
    let mut raw_rss = Vec::new();
    for kind in [Kind::Plain, Kind::Hardened] {
        let (view, _) = lab.open_raw(kind, bytes)?;
        lab.inbox.floods.set(0);
        lab.inbox.messages.borrow_mut().clear();
        let start = Instant::now();
        view.deliver(&json!({ "seq": 1, "flood": flood_ms }).to_string())?;
        lab.pump(timeout, |_, _, inbox| {
            inbox
                .messages
                .borrow()
                .iter()
                .any(|m| m.body.contains("\"fdone\""))
        });
        lab.settle(Duration::from_millis(300));
        raw_rates.push(lab.inbox.floods.get() as f64 / start.elapsed().as_secs_f64());
        raw_rss.push(procs::own_rss_kib() as f64 / 1024.0);
        drop(view);
        lab.settle(Duration::from_millis(100));
    }
    let rate = ours_count as f64 / elapsed;
    let figures = vec![
        Figure::values(
            "event flood: events/s reaching the agent",
            "1/s",
            rate,
            raw_rates.first().copied(),
            raw_rates.get(1).copied(),
        )
        .with_note(format!(
            "ours: {ours_count} of {} posted reached the agent (the rest cut at the bridge backlog)",
            posted.map_or("?".to_owned(), |p| p.to_string())
        )),
        Figure::values(
            "event flood: host RSS at the end",
            "MiB",
            ours_rss as f64 / 1024.0,
            raw_rss.first().copied(),
            raw_rss.get(1).copied(),
        )
        .with_note("the bench process's own RSS (the host and the raw views share it)"),
    ];
    let details = json!({
        "flood_ms": flood_ms,
        "ours_reached_agent": ours_count,
        "ours_posted_by_page": posted,
        "ours_rss_kib": ours_rss,
    });
    Ok((figures, details))
}

/// Patch latency through `lineup host --stdio`, if the `lineup` binary is beside this one.
fn stdio_samples(n: usize) -> Result<Option<Vec<f64>>, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let Some(lineup) = exe
        .parent()
        .map(|d| d.join("lineup"))
        .filter(|p| p.exists())
    else {
        return Ok(None);
    };
    let mut child = Command::new(lineup)
        .args(["host", "--stdio"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start lineup: {e}"))?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let (tx, rx) = mpsc::channel::<(Instant, String)>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send((Instant::now(), line)).is_err() {
                break;
            }
        }
    });
    let wait_ack = |seq: u64, timeout: Duration| -> Option<Instant> {
        let needle = format!("\"seq\":{seq}}}");
        let deadline = Instant::now() + timeout;
        while let Ok((at, line)) =
            rx.recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            if line.contains("\"event\":\"ack\"") && line.contains(&needle) {
                return Some(at);
            }
        }
        None
    };
    let mut write = |bytes: Vec<u8>| -> Result<(), String> {
        stdin.write_all(&bytes).map_err(|e| e.to_string())?;
        stdin.write_all(b"\n").map_err(|e| e.to_string())?;
        stdin.flush().map_err(|e| e.to_string())
    };
    let mut next = 0;
    let mut env = |kind: &str, payload: Value| {
        next += 1;
        envelope(next, kind, payload)
    };
    let result = (|| {
        write(env(
            "lineup.v1.ui.open",
            json!({ "instance_id": "s", "app": app_json(SMALL), "state": { "seq": 0 } }),
        ))?;
        wait_ack(0, Duration::from_secs(30)).ok_or("the stdio host's Surface never acked")?;
        let pad = "p".repeat(1024);
        let mut samples = Vec::new();
        for seq in 1..=(n as u64 + 3) {
            let bytes = env(
                "lineup.v1.ui.patch",
                json!({ "instance_id": "s", "state": { "seq": seq, "pad": pad } }),
            );
            let start = Instant::now();
            write(bytes)?;
            let at = wait_ack(seq, Duration::from_secs(10))
                .ok_or_else(|| format!("stdio patch {seq} not acknowledged"))?;
            if seq > 3 {
                samples.push(ms(at.duration_since(start)));
            }
        }
        Ok::<_, String>(samples)
    })();
    // End of input: the host closes its Surfaces and exits.
    drop(stdin);
    let deadline = Instant::now() + Duration::from_secs(2);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    result.map(Some)
}

/// Per Surface, the PSS slope of each kind of process (the bench process itself, web, network,
/// bwrap, D-Bus proxy) for ours and raw hardened, MiB: where a Surface's memory goes and where
/// ours differs.
fn slopes_by_process(memory: &serde_json::Map<String, Value>, lo: usize, hi: usize) -> Value {
    let kib = |variant: &str, count: usize, name: &str| {
        memory
            .get(&format!("{variant}_{count}"))
            .and_then(|r| r["pss_kib_by_process"][name].as_f64())
            .unwrap_or(0.0)
    };
    let mut names: Vec<String> = Vec::new();
    for variant in ["ours", "hardened"] {
        for count in [lo, hi] {
            if let Some(map) = memory
                .get(&format!("{variant}_{count}"))
                .and_then(|r| r["pss_kib_by_process"].as_object())
            {
                for name in map.keys() {
                    if !names.contains(name) {
                        names.push(name.clone());
                    }
                }
            }
        }
    }
    names.sort();
    let slope = |variant: &str, name: &str| {
        round((kib(variant, hi, name) - kib(variant, lo, name)) / 1024.0 / (hi - lo) as f64)
    };
    let part = |variant: &str, count: usize, name: &str, i: usize| {
        memory
            .get(&format!("{variant}_{count}"))
            .and_then(|r| r["pss_anon_file_shmem_kib_by_process"][name][i].as_f64())
            .unwrap_or(0.0)
    };
    // Ours minus hardened, per Surface, of the anonymous, file-backed and shared parts.
    let part_difference = |name: &str| {
        [0, 1, 2].map(|i| {
            let each = |variant: &str| part(variant, hi, name, i) - part(variant, lo, name, i);
            round((each("ours") - each("hardened")) / 1024.0 / (hi - lo) as f64)
        })
    };
    Value::Array(
        names
            .iter()
            .map(|name| {
                json!({
                    "process": name,
                    "ours_mib": slope("ours", name),
                    "hardened_mib": slope("hardened", name),
                    "difference_anon_file_shmem_mib": part_difference(name),
                })
            })
            .collect(),
    )
}
