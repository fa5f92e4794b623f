//! Script assets of installed apps (R-SEC-3a as amended) over a real `lineup host --stdio` and
//! real WebKitGTK webviews: an installed app's classic and module scripts load from its own
//! `lineup-surface://<token>/` host (a module importing another), while `eval`, `new Function`
//! and string timers stay blocked in them; a media asset does not run as a script; another
//! Surface's script does not load (its own, by the same kind of URL, does: the positive
//! control). And the per-package code limit is the host's: `lineup apps verify` reports the
//! package's code against it, `--max-package-code` refuses what is over it at verify and at
//! install, and a host started with a lower limit refuses at open, `bundle_too_large`, an app
//! installed under the default, without listing it.
//!
//! Run with `xvfb-run -a cargo test -p lineup-cli --test script_assets`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr,
    missing_docs
)]

#[path = "support/stdio_host.rs"]
mod stdio_host;

use std::path::Path;

use serde_json::{json, Value};
use stdio_host::{envelope, error_for, is, lineup, lineup_status, StdioHost};

/// Defines `greet`, and records what `eval`, `new Function` and a string timer do inside a
/// script asset.
const GREET_JS: &str = "
window.greet = function (n) { return 'hello ' + n; };
window.assetEval = (function () { try { eval('1'); return 'ran'; } catch (e) { return e.name; } })();
window.assetFunction = (function () {
  try { new Function('return 1')(); return 'ran'; } catch (e) { return e.name; }
})();
setTimeout('window.assetTimerRan = true', 0);
";

const UTIL_MJS: &str = "export const twice = (x) => x * 2;\n";

/// A module script importing another by a relative URL; `</script>` in a script asset is not an
/// element's end and passes.
const MAIN_MJS: &str = "
import { twice } from './lib/util.mjs';
window.moduleResult = twice(21);
window.moduleNote = '</script>';
window.dispatchEvent(new Event('module-ran'));
";

/// Reports, once the module ran, what loaded and what was blocked; loads `state.other` as a
/// script on request.
const APP_JS: &str = "
var violations = [];
document.addEventListener('securitypolicyviolation', function (e) {
  violations.push(e.effectiveDirective);
});
function load(src, done) {
  var s = document.createElement('script');
  s.onload = function () { done(true); };
  s.onerror = function () { done(false); };
  s.src = src;
  document.head.appendChild(s);
}
window.addEventListener('module-ran', function () {
  load('assets/logo.png', function (imageRan) {
    setTimeout(function () {
      LineUpSurface.event('loaded', {
        greet: typeof greet === 'function' ? greet('x') : null,
        module: window.moduleResult || null,
        note: window.moduleNote || null,
        assetEval: window.assetEval, assetFunction: window.assetFunction,
        assetTimerRan: !!window.assetTimerRan, imageAsScript: imageRan,
        url: location.href, violations: violations
      });
    }, 300);
  });
});
LineUpSurface.onState(function (s) {
  if (!s.other) { return; }
  load(s.other, function (loaded) { LineUpSurface.event('other', {src: s.other, loaded: loaded}); });
});
";

/// The package folder of `com.example.scripts`.
fn package(dir: &Path) {
    std::fs::create_dir_all(dir.join("lib")).unwrap();
    std::fs::create_dir_all(dir.join("assets")).unwrap();
    std::fs::write(
        dir.join("manifest.json"),
        r#"{"id": "com.example.scripts", "name": "Scripts", "version": "1.0.0",
            "surfaces": {"main": {"html": "index.html", "js": "app.js",
                                  "events": ["loaded", "other"]}},
            "assets": ["lib/greet.js", "main.mjs", "lib/util.mjs", "assets/logo.png"]}"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("index.html"),
        "<p>scripts</p><script src=\"lib/greet.js\"></script>\
         <script type=\"module\" src=\"main.mjs\"></script>",
    )
    .unwrap();
    std::fs::write(dir.join("app.js"), APP_JS).unwrap();
    std::fs::write(dir.join("lib/greet.js"), GREET_JS).unwrap();
    std::fs::write(dir.join("lib/util.mjs"), UTIL_MJS).unwrap();
    std::fs::write(dir.join("main.mjs"), MAIN_MJS).unwrap();
    std::fs::write(dir.join("assets/logo.png"), b"\x89PNG\r\n\x1a\n").unwrap();
}

fn code_bytes() -> usize {
    GREET_JS.len() + UTIL_MJS.len() + MAIN_MJS.len()
}

fn open(host: &mut StdioHost, instance: &str) -> Value {
    host.send(&envelope(
        &format!("open-{instance}"),
        "ui.open",
        json!({"instance_id": instance, "app": {"id": "com.example.scripts", "surface": "main"}}),
    ));
    host.expect("a loaded report", |v| {
        is("ui.event")(v)
            && v["payload"]["instance_id"] == instance
            && v["payload"]["event"] == "loaded"
    })["payload"]["data"]
        .clone()
}

#[test]
fn r_sec_3a_an_installed_apps_scripts_load_from_its_own_host_and_eval_stays_blocked() {
    assert!(
        std::env::var_os("DISPLAY").is_some_and(|d| !d.is_empty()),
        "run under `xvfb-run -a`"
    );
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let pkg = home.join("scripts-app");
    package(&pkg);
    let pkg_arg = pkg.to_str().unwrap();
    // `lineup apps verify` reports the package's code against the limit.
    let report: Value =
        serde_json::from_str(&lineup(home, &["apps", "verify", pkg_arg, "--json"])).unwrap();
    assert_eq!(report["code_bytes"], code_bytes(), "{report}");
    assert_eq!(report["max_code_bytes"], 8 * 1024 * 1024);
    let plain = lineup(home, &["apps", "verify", pkg_arg]);
    assert!(
        plain.contains(&format!(
            "code      {} bytes of script assets, of 8388608 (R-SEC-3a)",
            code_bytes()
        )),
        "{plain}"
    );
    assert!(
        plain.contains("script    lib/greet.js (text/javascript; charset=utf-8,"),
        "{plain}"
    );
    // Over a lower limit: refused at verify and at install, naming the file, total and limit.
    let limit = (code_bytes() - 1).to_string();
    let (ok, _, err) = lineup_status(
        home,
        &["apps", "verify", pkg_arg, "--max-package-code", &limit],
    );
    assert!(!ok);
    assert!(
        err.contains(&format!(
            "brings the package's script assets to {} bytes, over the per-package code limit \
             of {limit} (R-SEC-3a)",
            code_bytes()
        )),
        "{err}"
    );
    let digest = report["digest"].as_str().unwrap();
    let (ok, _, err) = lineup_status(
        home,
        &[
            "apps",
            "install",
            pkg_arg,
            "--digest",
            digest,
            "--max-package-code",
            &limit,
        ],
    );
    assert!(
        !ok && err.contains(&format!("over the per-package code limit of {limit}")),
        "{err}"
    );
    // Positive control: under the default limit it installs.
    lineup(home, &["apps", "install", pkg_arg, "--digest", digest]);

    let mut host = StdioHost::start(home, &[]);
    let first = open(&mut host, "s1");
    assert_eq!(first["greet"], "hello x", "the classic script ran: {first}");
    assert_eq!(
        first["module"], 42,
        "the module and its import ran: {first}"
    );
    assert_eq!(first["note"], "</script>");
    assert_eq!(
        first["assetEval"], "EvalError",
        "eval is blocked in a script asset: {first}"
    );
    assert_eq!(first["assetFunction"], "EvalError", "{first}");
    assert_eq!(
        first["assetTimerRan"], false,
        "a string timer does not run: {first}"
    );
    assert_eq!(
        first["imageAsScript"], false,
        "a media asset never runs as a script: {first}"
    );
    let violations = first["violations"].as_array().unwrap();
    assert!(
        violations.iter().any(|v| v == "script-src"),
        "eval is reported as a violation: {first}"
    );
    let second = open(&mut host, "s2");
    assert_eq!(second["greet"], "hello x", "{second}");
    let url = |report: &Value| report["url"].as_str().unwrap().to_owned();
    assert_ne!(url(&first), url(&second));
    let other = |host: &mut StdioHost, id: &str, src: String| {
        host.send(&envelope(
            id,
            "ui.patch",
            json!({"instance_id": "s2", "state": {"other": src}}),
        ));
        host.expect("an other report", |v| {
            is("ui.event")(v)
                && v["payload"]["event"] == "other"
                && v["payload"]["data"]["src"] == src
        })["payload"]["data"]["loaded"]
            .clone()
    };
    // The first Surface's script, from the second: refused.
    assert_eq!(
        other(&mut host, "p1", format!("{}lib/greet.js", url(&first))),
        false
    );
    // Positive control: the second Surface's own script by its full URL loads.
    assert_eq!(
        other(&mut host, "p2", format!("{}lib/greet.js", url(&second))),
        true
    );
    host.stop();

    // A host with a lower limit: not listed, and refused at open with the limit named.
    let mut strict = StdioHost::start(home, &["--max-package-code", &limit]);
    strict.send(&envelope(
        "open-strict",
        "ui.open",
        json!({"instance_id": "s3", "app": {"id": "com.example.scripts", "surface": "main"}}),
    ));
    let inventory = strict.expect("the inventory", is("client.inventory"));
    assert!(
        !inventory.to_string().contains("com.example.scripts"),
        "{inventory}"
    );
    let refused = strict.expect("a refusal", error_for("open-strict"));
    assert_eq!(refused["payload"]["code"], "bundle_too_large", "{refused}");
    let message = refused["payload"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(&format!("over the per-package code limit of {limit}")),
        "{refused}"
    );
    strict.stop();
}

/// #26 item 3: a bundle folder whose library is over the inline limit is refused inline with a
/// pointer to `--package`; `lineup bundle --package DIR` writes it as an app package (the
/// library a script asset, loaded before `script.js`), which installs by the digest it prints
/// and opens by id with the `ui.open` it prints, and the library runs in the Surface.
#[test]
fn lineup_bundle_package_writes_an_installable_package_whose_library_runs() {
    assert!(
        std::env::var_os("DISPLAY").is_some_and(|d| !d.is_empty()),
        "run under `xvfb-run -a`"
    );
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let src = home.join("big-chart");
    std::fs::create_dir_all(src.join("scripts")).unwrap();
    std::fs::write(src.join("index.html"), "<canvas id=c></canvas>").unwrap();
    // A 200 KB library ending in a line comment without a newline, as minified ones do.
    let library = format!(
        "window.BigLib = {{ table: '{}', draw: function (n) {{ return n * 3; }} }};\n\
         //# sourceMappingURL=big.min.js.map",
        "x".repeat(200 * 1024)
    );
    std::fs::write(src.join("scripts/big.min.js"), &library).unwrap();
    std::fs::write(
        src.join("script.js"),
        "LineUpSurface.onState(function (s) {\n\
           LineUpSurface.event('drawn', {value: BigLib.draw(s.n), table: BigLib.table.length});\n\
         });\n",
    )
    .unwrap();
    std::fs::write(src.join("state.json"), r#"{"n": 14}"#).unwrap();
    let src_arg = src.to_str().unwrap();

    // Inline, it is over the limit, and the refusal points at --package.
    let (ok, _, err) = lineup_status(home, &["bundle", src_arg]);
    assert!(!ok);
    assert!(
        err.contains("the limit is 163840 bytes (R-UI-2)")
            && err.contains("lineup bundle --package DIR"),
        "{err}"
    );
    // As a package.
    let out = home.join("big-chart-pkg");
    let out_arg = out.to_str().unwrap();
    let (ok, open_line, err) = lineup_status(
        home,
        &[
            "bundle",
            src_arg,
            "--package",
            out_arg,
            "--events",
            "drawn",
            "--id",
            "com.example.bigchart",
        ],
    );
    assert!(ok, "{err}");
    assert!(
        err.contains("written to") && err.contains("bytes of script assets of 8388608"),
        "{err}"
    );
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(
        manifest["assets"],
        json!(["scripts/big.min.js"]),
        "{manifest}"
    );
    assert_eq!(manifest["surfaces"]["main"]["events"], json!(["drawn"]));
    // The library stays byte for byte what the author shipped.
    assert_eq!(
        std::fs::read_to_string(out.join("scripts/big.min.js")).unwrap(),
        library
    );
    // A second run does not overwrite it.
    let (ok, _, again) = lineup_status(home, &["bundle", src_arg, "--package", out_arg]);
    assert!(!ok && again.contains("is not an empty folder"), "{again}");
    let report: Value =
        serde_json::from_str(&lineup(home, &["apps", "verify", out_arg, "--json"])).unwrap();
    assert!(err.contains(report["digest"].as_str().unwrap()), "{err}");
    lineup(
        home,
        &[
            "apps",
            "install",
            out_arg,
            "--digest",
            report["digest"].as_str().unwrap(),
        ],
    );
    let open: Value = serde_json::from_str(open_line.trim()).unwrap();
    assert_eq!(
        open["payload"]["app"],
        json!({"id": "com.example.bigchart", "version": "0.1.0", "surface": "main"})
    );
    let mut host = StdioHost::start(home, &["--conversation", "conv-1"]);
    host.send(open_line.trim());
    let drawn = host.expect("the drawn event", |v| {
        is("ui.event")(v) && v["payload"]["event"] == "drawn"
    });
    assert_eq!(
        drawn["payload"]["data"],
        json!({"value": 42, "table": 200 * 1024}),
        "{drawn}"
    );
    host.stop();
}
