//! Issue 30 item 9 (R-SEC-3a, R-UI-9): `lineup preview` on an app package folder runs it as the
//! installed app would, without installing it: its Surface opened by id, its script from the
//! manifest, its image and font from its own host under the installed app's policy.

use super::*;

/// A copy of the example package, to edit.
fn dashboard_copy(name: &str) -> PathBuf {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/apps/dashboard");
    let copy = folder(name, &[]);
    std::fs::create_dir_all(copy.join("assets")).unwrap();
    for file in [
        "manifest.json",
        "index.html",
        "style.css",
        "app.js",
        "assets/sun.png",
        "assets/display.ttf",
    ] {
        std::fs::copy(example.join(file), copy.join(file)).unwrap();
    }
    copy
}

fn check(dir: &Path) -> (Option<i32>, String) {
    run_preview(
        dir,
        &["--check", "--wait-event", "drawn", "--timeout", "20"],
    )
}

#[test]
fn r_sec_3a_a_package_folder_previews_as_the_installed_app_with_its_assets() {
    display();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/apps/dashboard");
    let (code, stdout) = check(&example);
    assert_eq!(code, Some(0), "no page error or CSP violation: {stdout}");
    assert!(stdout.contains("opened by id"), "{stdout}");
    assert!(
        stdout.contains(r#"event drawn {"image":true,"font":true}"#),
        "the image and the font load from the package: {stdout}"
    );
    // Negative control: an image the package does not hold does not load (a page error), and
    // the page says so.
    let copy = dashboard_copy("pkg-missing");
    let html = std::fs::read_to_string(copy.join("index.html")).unwrap();
    std::fs::write(
        copy.join("index.html"),
        html.replace("assets/sun.png", "assets/moon.png"),
    )
    .unwrap();
    let (code, stdout) = check(&copy);
    assert_eq!(code, Some(3), "{stdout}");
    assert!(stdout.contains("assets/moon.png"), "{stdout}");
    assert!(
        stdout.contains(r#"event drawn {"image":false,"font":true}"#),
        "{stdout}"
    );
}

#[test]
fn r_sec_3a_a_watched_package_reopens_with_its_edited_files() {
    display();
    let copy = dashboard_copy("pkg-watch");
    let mut p = Preview::start(&copy);
    p.wait_for(&["event drawn", r#""image":true"#]);
    let js = std::fs::read_to_string(copy.join("app.js")).unwrap();
    save(
        &copy.join("app.js"),
        &js.replace("image: r[0],", "image: r[0], edited: true,"),
    );
    p.wait_for(&["event drawn", r#""edited":true"#, r#""image":true"#]);
}

/// `--surface` opens another Surface of a package; an unknown one is refused with the ones it
/// has, and a bundle folder has none to choose.
#[test]
fn r_ui_9_surface_chooses_which_surface_of_a_package_opens() {
    display();
    let dir = folder(
        "pkg-two",
        &[
            (
                "manifest.json",
                r#"{"id": "com.example.two", "name": "Two", "version": "1.0.0",
                    "surfaces": {"main": {"html": "main.html", "js": "main.js", "events": ["which"]},
                                 "side": {"html": "side.html", "js": "side.js", "events": ["which"]}}}"#,
            ),
            ("main.html", "<p>main</p>"),
            ("side.html", "<p>side</p>"),
            ("main.js", "LineUpSurface.onState(function () { LineUpSurface.event('which', {s: 'main'}); });"),
            ("side.js", "LineUpSurface.onState(function () { LineUpSurface.event('which', {s: 'side'}); });"),
        ],
    );
    let wait = ["--check", "--wait-event", "which"];
    let (code, stdout) = run_preview(&dir, &wait);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(stdout.contains(r#"event which {"s":"main"}"#), "{stdout}");
    let (code, stdout) = run_preview(&dir, &[&wait[..], &["--surface", "side"]].concat());
    assert_eq!(code, Some(0), "{stdout}");
    assert!(stdout.contains(r#"event which {"s":"side"}"#), "{stdout}");
    let (code, stdout) = run_preview(&dir, &[&wait[..], &["--surface", "nope"]].concat());
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout.contains("has no Surface nope; it has main, side"),
        "{stdout}"
    );
    let plain = folder("pkg-none", &[("index.html", "<p>x</p>")]);
    let (code, stdout) = run_preview(&plain, &["--check", "--surface", "side"]);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(stdout.contains("no manifest.json"), "{stdout}");
}

/// R-DIAG-1, R-SEC-3a: an error thrown in an installed app's script asset is reported at that
/// file's own line and column (`lib/boom.js:3:5`), and `lineup preview` reports the package's
/// code against the per-package limit.
#[test]
fn r_diag_1_an_error_in_a_script_asset_is_reported_at_that_files_line() {
    display();
    let dir = folder(
        "pkg-boom",
        &[
            (
                "manifest.json",
                r#"{"id": "com.example.boom", "name": "Boom", "version": "1.0.0",
                    "surfaces": {"main": {"html": "index.html", "js": "app.js", "events": ["armed"]}},
                    "assets": ["lib/boom.js"]}"#,
            ),
            ("index.html", "<script src=\"lib/boom.js\"></script>"),
            (
                "app.js",
                "LineUpSurface.onState(function () { setTimeout(boom, 0); LineUpSurface.event('armed', {}); });",
            ),
        ],
    );
    std::fs::create_dir_all(dir.join("lib")).unwrap();
    let boom = "// line 1\nfunction boom() {\n    null.field;\n}\n";
    std::fs::write(dir.join("lib/boom.js"), boom).unwrap();
    let (code, stdout) = run_preview(
        &dir,
        &["--check", "--wait-event", "armed", "--settle", "500"],
    );
    assert_eq!(code, Some(3), "a page error: {stdout}");
    assert!(stdout.contains("error at lib/boom.js:3:"), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "package code: {} bytes of script assets, of the per-package limit of 8388608",
            boom.len()
        )),
        "{stdout}"
    );
}

/// R-DIAG-1: an error in an installed app's own js reads at the file its manifest names
/// (`ui/main.js:2:…`), not at the bundle folder's `script.js`.
#[test]
fn r_diag_1_an_error_in_the_manifests_js_is_reported_at_that_files_name() {
    display();
    let dir = folder(
        "pkg-named-js",
        &[
            (
                "manifest.json",
                r#"{"id": "com.example.named", "name": "Named", "version": "1.0.0",
                    "surfaces": {"main": {"html": "index.html", "js": "ui/main.js", "events": ["armed"]}}}"#,
            ),
            ("index.html", "<p>named</p>"),
        ],
    );
    std::fs::create_dir_all(dir.join("ui")).unwrap();
    std::fs::write(
        dir.join("ui/main.js"),
        "LineUpSurface.onState(function () { LineUpSurface.event('armed', {}); setTimeout(function () {\n  null.field;\n}, 0); });\n",
    )
    .unwrap();
    let (code, stdout) = run_preview(
        &dir,
        &["--check", "--wait-event", "armed", "--settle", "500"],
    );
    assert_eq!(code, Some(3), "a page error: {stdout}");
    assert!(stdout.contains("error at ui/main.js:2:"), "{stdout}");
    assert!(!stdout.contains("script.js"), "{stdout}");
}
