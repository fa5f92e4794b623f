//! The app center end to end (R-UI-9, R-INV-3, R-INV-4, R-UI-12): an app installed with `lineup
//! apps install` is listed in the inventory of a running `lineup host --stdio`, opened by id in
//! a real WebKitGTK webview (its declared event arrives, an undeclared one does not), and a
//! `lineup apps disable` run by a separate process closes it (`app_disabled`) and re-sends the
//! inventory; an open by id of the disabled app is then refused `revoked`.
//!
//! Run with `xvfb-run -a cargo test -p lineup-cli --test app_center`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr,
    missing_docs
)]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

#[path = "support/apps.rs"]
mod apps;

use apps::{install, verify};

const LINEUP: &str = env!("CARGO_BIN_EXE_lineup");
const STEP: Duration = Duration::from_secs(60);

struct Host {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<Value>,
    seen: Vec<Value>,
    stderr: std::sync::Arc<std::sync::Mutex<String>>,
}

impl Host {
    fn start(data: &Path) -> Self {
        Self::start_with(data, &[])
    }

    fn start_with(data: &Path, extra: &[&str]) -> Self {
        let mut child = Command::new(LINEUP)
            .args(["host", "--stdio", "--conversation", "conv_01", "--data-dir"])
            .arg(data)
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let log = child.stderr.take().unwrap();
        let sink = std::sync::Arc::clone(&stderr);
        thread::spawn(move || {
            for line in BufReader::new(log).lines() {
                let Ok(line) = line else { break };
                eprintln!("{line}");
                sink.lock().unwrap().push_str(&line);
                sink.lock().unwrap().push('\n');
            }
        });
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let Ok(value) = serde_json::from_str::<Value>(&line) else {
                    panic!("not JSON on stdout: {line}");
                };
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        Self {
            child,
            stdin,
            lines,
            seen: Vec::new(),
            stderr,
        }
    }

    fn send(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Waits for an envelope matching `pred`; panics with what came after `STEP`.
    fn expect(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(found) = self.seen.iter().find(|v| pred(v)) {
            return found.clone();
        }
        let deadline = Instant::now() + STEP;
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.lines.recv_timeout(left) {
                Ok(value) => {
                    self.seen.push(value.clone());
                    if pred(&value) {
                        return value;
                    }
                }
                Err(_) => break,
            }
        }
        panic!("no {what}; saw {:#?}", self.seen);
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn envelope(id: &str, kind: &str, payload: Value) -> String {
    json!({"v": 1, "id": id, "type": format!("lineup.v1.{kind}"), "conversation_id": "conv_01",
           "sender": {"kind": "agent", "id": "agent_a"}, "payload": payload})
    .to_string()
}

fn is(kind: &str) -> impl Fn(&Value) -> bool + '_ {
    move |v| v["type"] == format!("lineup.v1.{kind}")
}

fn package(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("manifest.json"),
        r#"{"id": "com.example.dash", "name": "Dash", "version": "1.0.0",
            "surfaces": {"main": {"html": "index.html", "js": "app.js", "events": ["shown"]}}}"#,
    )
    .unwrap();
    std::fs::write(dir.join("index.html"), "<p id=t>dash</p>").unwrap();
    // The undeclared event goes first: if it were forwarded it would be seen before `shown`.
    std::fs::write(
        dir.join("app.js"),
        "LineUpSurface.onState(function (s) {\n\
           LineUpSurface.event('leak', {secret: 1});\n\
           LineUpSurface.event('shown', {city: s.city});\n\
         });\n",
    )
    .unwrap();
}

/// `package` at another version whose page also says which version it is.
fn package_version(dir: &Path, version: &str) {
    package(dir);
    let manifest = std::fs::read_to_string(dir.join("manifest.json")).unwrap();
    std::fs::write(
        dir.join("manifest.json"),
        manifest.replace("\"1.0.0\"", &format!("\"{version}\"")),
    )
    .unwrap();
    std::fs::write(
        dir.join("app.js"),
        format!(
            "LineUpSurface.onState(function (s) {{\n\
               LineUpSurface.event('shown', {{city: s.city, version: '{version}'}});\n\
             }});\n"
        ),
    )
    .unwrap();
}

#[test]
fn an_installed_app_is_listed_opened_by_id_and_closed_when_disabled_elsewhere() {
    assert!(
        std::env::var_os("DISPLAY").is_some_and(|d| !d.is_empty()),
        "run under `xvfb-run -a`"
    );
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let pkg = tmp.path().join("dash");
    package(&pkg);
    let lineup = |args: &[&str]| {
        let run = Command::new(LINEUP)
            .args(["apps", "--data-dir"])
            .arg(&data)
            .args(args)
            .output()
            .unwrap();
        assert!(
            run.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        String::from_utf8_lossy(&run.stdout).into_owned()
    };
    install(&data, &pkg);

    let mut host = Host::start(&data);
    let inventory = host.expect("inventory", is("client.inventory"));
    let applications = &inventory["payload"]["applications"];
    assert_eq!(
        applications,
        &json!([{"id": "com.example.dash", "version": "1.0.0",
                 "surfaces": [{"id": "main", "events": ["shown"]}]}])
    );
    // R-INV-3: nothing of the machine in it.
    let text = inventory.to_string();
    assert!(!text.contains(tmp.path().to_str().unwrap()), "{text}");

    host.send(&envelope(
        "m1",
        "ui.open",
        json!({"instance_id": "d1", "app": {"id": "com.example.dash", "surface": "main"},
               "state": {"city": "Oslo"}}),
    ));
    let shown = host.expect("the declared event", |v| {
        is("ui.event")(v) && v["payload"]["event"] == "shown"
    });
    assert_eq!(shown["payload"]["data"], json!({"city": "Oslo"}));
    assert!(
        !host.seen.iter().any(|v| v["payload"]["event"] == "leak"),
        "an undeclared event reached the agent: {:#?}",
        host.seen
    );

    // Another process upgrades it, then rolls it back: each time the open Surface closes with
    // `app_upgraded`, a new inventory names the version now enabled, and an open by id serves it.
    let mut revisions = vec![inventory["payload"]["revision"].clone()];
    let v2 = tmp.path().join("dash-1.1");
    package_version(&v2, "1.1.0");
    let v2_report = verify(&v2);
    let steps: [(&str, Vec<String>, &str); 2] = [
        (
            "d1",
            vec![
                "upgrade".into(),
                v2.to_str().unwrap().into(),
                "--digest".into(),
                v2_report["digest"].as_str().unwrap().into(),
            ],
            "1.1.0",
        ),
        (
            "d3",
            vec!["rollback".into(), "com.example.dash".into()],
            "1.0.0",
        ),
    ];
    for (open_instance, args, version) in steps {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let printed = lineup(&args);
        let closed = host.expect(&format!("{open_instance} closed app_upgraded"), |v| {
            is("ui.event")(v)
                && v["payload"]["instance_id"] == open_instance
                && v["payload"]["event"] == "close"
        });
        assert_eq!(closed["payload"]["data"], json!({"reason": "app_upgraded"}));
        let inventory = host.expect(&format!("the inventory of {version}"), |v| {
            is("client.inventory")(v) && !revisions.contains(&v["payload"]["revision"])
        });
        assert_eq!(inventory["payload"]["applications"][0]["version"], version);
        // Issue 30 item 12: the inventory revision is the host's, per session (R-INV-2);
        // `lineup apps` names no revision the host does not send.
        let revision = inventory["payload"]["revision"].as_str().unwrap();
        assert!(
            !printed.contains("revision") || printed.contains(revision),
            "{printed}"
        );
        assert!(printed.contains("new client.inventory"), "{printed}");
        revisions.push(inventory["payload"]["revision"].clone());
        let next = if open_instance == "d1" { "d3" } else { "d4" };
        host.send(&envelope(
            &format!("open-{next}"),
            "ui.open",
            json!({"instance_id": next, "app": {"id": "com.example.dash", "surface": "main"},
                   "state": {"city": next}}),
        ));
        let shown = host.expect(&format!("{next} shown"), |v| {
            is("ui.event")(v)
                && v["payload"]["instance_id"] == next
                && v["payload"]["event"] == "shown"
        });
        let shown_version = shown["payload"]["data"]["version"]
            .as_str()
            .unwrap_or("1.0.0");
        assert_eq!(shown_version, version, "{shown}");
    }

    // Another process disables the app: the host notices within about a second.
    lineup(&["disable", "com.example.dash"]);
    let closed = host.expect("close app_disabled", |v| {
        is("ui.event")(v) && v["payload"]["instance_id"] == "d4" && v["payload"]["event"] == "close"
    });
    assert_eq!(closed["payload"]["data"], json!({"reason": "app_disabled"}));
    let again = host.expect("a new inventory", |v| {
        is("client.inventory")(v) && !revisions.contains(&v["payload"]["revision"])
    });
    assert_eq!(again["payload"]["applications"], json!([]));

    host.send(&envelope(
        "m2",
        "ui.open",
        json!({"instance_id": "d2", "app": {"id": "com.example.dash", "surface": "main"}}),
    ));
    let refused = host.expect("a refusal", |v| {
        is("client.error")(v) && v["payload"]["in_reply_to"] == "m2"
    });
    assert_eq!(refused["payload"]["code"], "revoked", "{refused}");
}

/// A 4×4 opaque red PNG.
fn red_png() -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut out, 4, 4);
        encoder.set_color(png::ColorType::Rgba);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().unwrap();
        writer
            .write_image_data(&[255, 0, 0, 255].repeat(16))
            .unwrap();
    }
    out
}

const FONT: &str = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";

/// Reports whether its own image and font loaded and its URL; loads `state.other` on request.
const ASSETS_JS: &str = "
var report = {url: location.href};
function done(key, value) {
  report[key] = value;
  if ('img' in report && 'font' in report) { LineUpSurface.event('assets', report); }
}
var img = new Image();
img.onload = function () { done('img', img.naturalWidth); };
img.onerror = function () { done('img', -1); };
img.src = 'assets/logo.png';
new FontFace('AppFont', 'url(assets/font.ttf)').load().then(
  function (face) { document.fonts.add(face); done('font', document.fonts.check('16px AppFont')); },
  function (e) { done('font', String(e)); });
LineUpSurface.onState(function (s) {
  if (!s.other) { return; }
  var other = new Image();
  other.onload = function () { LineUpSurface.event('other', {src: s.other, loaded: true}); };
  other.onerror = function () { LineUpSurface.event('other', {src: s.other, loaded: false}); };
  other.src = s.other;
});
";

#[test]
fn r_sec_3a_an_apps_image_and_font_load_and_another_surfaces_do_not() {
    assert!(
        std::env::var_os("DISPLAY").is_some_and(|d| !d.is_empty()),
        "run under `xvfb-run -a`"
    );
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let pkg = tmp.path().join("assets-app");
    std::fs::create_dir_all(pkg.join("assets")).unwrap();
    std::fs::write(
        pkg.join("manifest.json"),
        r#"{"id": "com.example.assets", "name": "Assets", "version": "1.0.0",
            "surfaces": {"main": {"html": "index.html", "js": "app.js",
                                  "events": ["assets", "other"]}},
            "assets": ["assets/logo.png", "assets/font.ttf"]}"#,
    )
    .unwrap();
    std::fs::write(
        pkg.join("index.html"),
        "<p style=\"font-family: AppFont\">a</p>",
    )
    .unwrap();
    std::fs::write(pkg.join("app.js"), ASSETS_JS).unwrap();
    std::fs::write(pkg.join("assets/logo.png"), red_png()).unwrap();
    std::fs::copy(FONT, pkg.join("assets/font.ttf"))
        .unwrap_or_else(|e| panic!("{FONT}: {e} (scripts/setup.sh installs fonts-dejavu-core)"));
    install(&data, &pkg);

    let mut host = Host::start(&data);
    let mut reports = Vec::new();
    for instance in ["a1", "a2"] {
        host.send(&envelope(
            &format!("open-{instance}"),
            "ui.open",
            json!({"instance_id": instance, "app": {"id": "com.example.assets", "surface": "main"}}),
        ));
        let report = host.expect("an assets report", |v| {
            is("ui.event")(v)
                && v["payload"]["instance_id"] == instance
                && v["payload"]["event"] == "assets"
        });
        reports.push(report["payload"]["data"].clone());
    }
    for report in &reports {
        assert_eq!(report["img"], 4, "its own image: {report}");
        assert_eq!(report["font"], true, "its own font: {report}");
    }
    let url = |i: usize| reports[i]["url"].as_str().unwrap().to_owned();
    assert_ne!(url(0), url(1));
    let other = |host: &mut Host, id: &str, src: String| {
        host.send(&envelope(
            id,
            "ui.patch",
            json!({"instance_id": "a2", "state": {"other": src}}),
        ));
        host.expect("an other report", |v| {
            is("ui.event")(v)
                && v["payload"]["event"] == "other"
                && v["payload"]["data"]["src"] == src
        })["payload"]["data"]["loaded"]
            .clone()
    };
    // The first Surface's asset, from the second: refused.
    let theirs = format!("{}assets/logo.png", url(0));
    assert_eq!(other(&mut host, "p1", theirs), false);
    // Positive control: the second Surface's own asset by its full URL loads.
    let own = format!("{}assets/logo.png", url(1));
    assert_eq!(other(&mut host, "p2", own), true);
}

#[test]
fn a_flipped_byte_in_the_cache_is_refused_at_start_and_at_open_and_nothing_is_served() {
    assert!(
        std::env::var_os("DISPLAY").is_some_and(|d| !d.is_empty()),
        "run under `xvfb-run -a`"
    );
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let pkg = tmp.path().join("dash");
    package(&pkg);
    let apps = |args: &[&str]| {
        Command::new(LINEUP)
            .args(["apps", "--data-dir"])
            .arg(&data)
            .args(args)
            .output()
            .unwrap()
    };
    let digest = install(&data, &pkg)["digest"].as_str().unwrap().to_owned();
    for file in std::fs::read_dir(data.join("packages")).unwrap() {
        let file = file.unwrap().path();
        let mut bytes = std::fs::read(&file).unwrap();
        let at = bytes.windows(4).position(|w| w == b"dash").unwrap();
        bytes[at] ^= 0x20;
        std::fs::write(&file, bytes).unwrap();
    }
    let mut host = Host::start(&data);
    let inventory = host.expect("inventory", is("client.inventory"));
    assert_eq!(inventory["payload"]["applications"], json!([]));
    host.send(&envelope(
        "m1",
        "ui.open",
        json!({"instance_id": "d1", "app": {"id": "com.example.dash", "surface": "main"}}),
    ));
    let refused = host.expect("a refusal", |v| {
        is("client.error")(v) && v["payload"]["in_reply_to"] == "m1"
    });
    assert_eq!(refused["payload"]["code"], "unsupported", "{refused}");
    assert!(
        refused["payload"]["message"]
            .as_str()
            .unwrap()
            .contains("failed verification"),
        "{refused}"
    );
    assert!(
        !host.seen.iter().any(|v| is("ui.event")(v)),
        "{:#?}",
        host.seen
    );
    let log = host.stderr.lock().unwrap().clone();
    assert!(
        log.contains("app com.example.dash 1.0.0 is refused until reinstalled"),
        "{log}"
    );
    // Positive control: reinstalling the verified package after removing it (and forgetting
    // the removed id, R-UI-9) serves it again.
    assert!(apps(&["remove", "com.example.dash"]).status.success());
    assert!(apps(&["forget", "com.example.dash"]).status.success());
    assert!(
        apps(&["install", pkg.to_str().unwrap(), "--digest", &digest])
            .status
            .success()
    );
    host.send(&envelope(
        "m2",
        "ui.open",
        json!({"instance_id": "d2", "app": {"id": "com.example.dash", "surface": "main"},
               "state": {"city": "Rome"}}),
    ));
    let shown = host.expect("the app's event", |v| {
        is("ui.event")(v) && v["payload"]["event"] == "shown"
    });
    assert_eq!(shown["payload"]["data"], json!({"city": "Rome"}));
}

#[test]
fn r_sec_7_signed_only_opens_only_apps_installed_with_a_trusted_signature() {
    assert!(
        std::env::var_os("DISPLAY").is_some_and(|d| !d.is_empty()),
        "run under `xvfb-run -a`"
    );
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let run = |args: &[&str]| {
        let out = Command::new(LINEUP).args(args).output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let data_dir = data.to_str().unwrap();
    // By digest: installed, but not signed.
    let unsigned = tmp.path().join("dash");
    package(&unsigned);
    let (_, report, _) = run(&["apps", "verify", unsigned.to_str().unwrap(), "--json"]);
    let digest = serde_json::from_str::<Value>(&report).unwrap()["digest"]
        .as_str()
        .unwrap()
        .to_owned();
    let (code, _, err) = run(&[
        "apps",
        "--data-dir",
        data_dir,
        "install",
        unsigned.to_str().unwrap(),
        "--digest",
        &digest,
    ]);
    assert_eq!(code, Some(0), "{err}");
    // Signed by a trusted key: another app.
    let signed = tmp.path().join("signed");
    package(&signed);
    let manifest = std::fs::read_to_string(signed.join("manifest.json")).unwrap();
    std::fs::write(
        signed.join("manifest.json"),
        manifest.replace("com.example.dash", "com.example.signed"),
    )
    .unwrap();
    let key = tmp.path().join("k");
    let (_, public, _) = run(&["apps", "keygen", "--out", key.to_str().unwrap()]);
    let public = public.trim().to_owned();
    let sig = tmp.path().join("signed.sig");
    run(&[
        "apps",
        "sign",
        signed.to_str().unwrap(),
        "--key",
        key.to_str().unwrap(),
        "--out",
        sig.to_str().unwrap(),
    ]);
    // A wrong signature (another key's) is refused at install: nothing is kept.
    let other = tmp.path().join("other");
    let (_, other_public, _) = run(&["apps", "keygen", "--out", other.to_str().unwrap()]);
    let (code, _, err) = run(&[
        "apps",
        "--data-dir",
        data_dir,
        "install",
        signed.to_str().unwrap(),
        "--signature",
        sig.to_str().unwrap(),
        "--trusted-key",
        other_public.trim(),
    ]);
    assert_eq!(code, Some(1), "{err}");
    let (code, _, err) = run(&[
        "apps",
        "--data-dir",
        data_dir,
        "install",
        signed.to_str().unwrap(),
        "--signature",
        sig.to_str().unwrap(),
        "--trusted-key",
        &public,
    ]);
    assert_eq!(code, Some(0), "{err}");

    let mut host = Host::start_with(&data, &["--bundle-policy", "signed-only"]);
    host.expect("inventory", is("client.inventory"));
    let open = |host: &mut Host, id: &str, app: &str| {
        host.send(&envelope(
            id,
            "ui.open",
            json!({"instance_id": id, "app": {"id": app, "surface": "main"}, "state": {"city": id}}),
        ));
    };
    open(&mut host, "u1", "com.example.dash");
    let refused = host.expect("a refusal", |v| {
        is("client.error")(v) && v["payload"]["in_reply_to"] == "u1"
    });
    assert_eq!(refused["payload"]["code"], "policy_violation", "{refused}");
    // An inline bundle: refused under signed-only.
    host.send(&envelope(
        "i1",
        "ui.open",
        json!({"instance_id": "i1", "app": {"id": "com.example.inline", "name": "I", "version": "1.0.0",
               "html": "<p>i</p>", "css": "", "js": ""}}),
    ));
    let refused = host.expect("a refusal", |v| {
        is("client.error")(v) && v["payload"]["in_reply_to"] == "i1"
    });
    assert_eq!(refused["payload"]["code"], "policy_violation", "{refused}");
    // Positive control: the signed app opens and runs.
    open(&mut host, "s1", "com.example.signed");
    let shown = host.expect("the signed app's event", |v| {
        is("ui.event")(v) && v["payload"]["event"] == "shown"
    });
    assert_eq!(shown["payload"]["data"], json!({"city": "s1"}));
}

/// The example package the demo installs: opened by id, its image and font load from its own
/// assets (the page says so only when both did).
#[test]
fn the_example_app_opens_by_id_with_its_image_and_font() {
    assert!(
        std::env::var_os("DISPLAY").is_some_and(|d| !d.is_empty()),
        "run under `xvfb-run -a`"
    );
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/apps/dashboard");
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let report = install(&data, &example);
    assert_eq!(
        report["assets"].as_array().map(Vec::len),
        Some(2),
        "{report}"
    );
    let mut host = Host::start(&data);
    host.send(&envelope(
        "m1",
        "ui.open",
        json!({"instance_id": "dash", "app": {"id": "com.lineup.example.dashboard", "surface": "main"},
               "state": {"city": "Oslo", "temperature": 4.5}}),
    ));
    let drawn = host.expect("drawn", |v| {
        is("ui.event")(v) && v["payload"]["event"] == "drawn"
    });
    assert_eq!(
        drawn["payload"]["data"],
        json!({"image": true, "font": true})
    );
}
