//! The sandbox exactly as strict as the spec (R-SEC-3, R-SEC-3a, R-UI-5) over a real
//! `lineup host --stdio` and a real WebKitGTK webview: an inline Surface loads no font and plays
//! no media, not even from `data:` URLs, which the engine reports as CSP violations of `font-src`
//! and `media-src`; the positive control is an `http:` font, refused under every policy the host
//! ever served. (An installed app's own-host font loading is covered by `app_center`'s
//! `r_sec_3a_an_apps_image_and_font_load_and_another_surfaces_do_not`.) And `lineup host` has no
//! `--devtools`: the inspector belongs to `lineup preview` alone.
//!
//! Run with `xvfb-run -a cargo test -p lineup-cli --test sandbox_strict`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr,
    missing_docs
)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// Reports every CSP violation it sees, as `[effectiveDirective, blockedURI scheme]`, after it
/// tried a `data:` font, an `http:` font and `data:` audio.
const PROBE_JS: &str = r#"
var seen = [];
document.addEventListener('securitypolicyviolation', function (e) {
  seen.push([e.effectiveDirective, String(e.blockedURI).split(':')[0]]);
});
LineUpSurface.onState(function () {
  new FontFace('Inline', 'url(data:font/ttf;base64,AAEAAAAKAIAAAwAgT1MvMg==)').load().catch(function () {});
  new FontFace('Remote', 'url(http://127.0.0.1:9/remote.ttf)').load().catch(function () {});
  var audio = document.createElement('audio');
  audio.src = 'data:audio/wav;base64,UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=';
  document.body.appendChild(audio);
  audio.load();
  setTimeout(function () { LineUpSurface.event('violations', {seen: seen}); }, 1500);
});
"#;

#[test]
fn r_sec_3_an_inline_surface_loads_no_data_font_or_media_and_no_http_font() {
    assert!(
        std::env::var_os("DISPLAY").is_some(),
        "no DISPLAY: run under `xvfb-run -a`"
    );
    let home = std::env::temp_dir().join(format!("lineup-sandbox-strict-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&home);
    for sub in ["home", "data", "cache", "config"] {
        std::fs::create_dir_all(home.join(sub)).unwrap();
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_lineup"))
        .args(["host", "--stdio"])
        .env("HOME", home.join("home"))
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel::<Value>();
    thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Ok(v) = serde_json::from_str(&line) {
                if tx.send(v).is_err() {
                    break;
                }
            }
        }
    });
    let open = json!({
        "v": 1,
        "id": "open_probe",
        "type": "lineup.v1.ui.open",
        "conversation_id": "conv_01",
        "sender": {"kind": "agent", "id": "agent_hermes_main"},
        "payload": {
            "instance_id": "probe",
            "app": {
                "id": "com.lineup.cspprobe",
                "name": "CSP probe",
                "version": "1.0.0",
                "html": "<main>probe</main>",
                "css": "",
                "js": PROBE_JS,
            },
            "state": {"go": true},
        },
    });
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{open}").unwrap();
    stdin.flush().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut seen = Vec::new();
    let report = loop {
        assert!(Instant::now() < deadline, "no report; seen: {seen:#?}");
        let Ok(m) = rx.recv_timeout(Duration::from_millis(200)) else {
            continue;
        };
        if m["type"] == "lineup.v1.ui.event" && m["payload"]["event"] == "violations" {
            break m["payload"]["data"]["seen"].clone();
        }
        seen.push(m);
    };
    drop(stdin);
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&home);

    let pairs: Vec<(String, String)> = report
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p[0].as_str().unwrap().to_owned(),
                p[1].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let has =
        |directive: &str, scheme: &str| pairs.iter().any(|(d, s)| d == directive && s == scheme);
    // Positive control: the http: font is refused (under the old policy too).
    assert!(
        has("font-src", "http"),
        "the http: font is refused: {pairs:?}"
    );
    // R-SEC-3: no data: font and no data: media for an inline Surface.
    assert!(
        has("font-src", "data"),
        "the data: font is refused: {pairs:?}"
    );
    assert!(
        has("media-src", "data"),
        "the data: audio is refused: {pairs:?}"
    );
}

/// R-UI-5: `lineup host` refuses `--devtools` as an unknown flag; `lineup preview` keeps it
/// (the positive control).
#[test]
fn r_ui_5_lineup_host_has_no_devtools_and_preview_keeps_it() {
    let host = Command::new(env!("CARGO_BIN_EXE_lineup"))
        .args(["host", "--stdio", "--devtools"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(host.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&host.stderr);
    assert!(stderr.contains("--devtools"), "{stderr}");
    let preview = Command::new(env!("CARGO_BIN_EXE_lineup"))
        .args(["preview", "--help"])
        .output()
        .unwrap();
    assert!(preview.status.success());
    assert!(String::from_utf8_lossy(&preview.stdout).contains("--devtools"));
}
