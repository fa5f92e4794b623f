//! Issue 30 item 11 (R-UI-11): `--theme` and `--contrast` of `lineup preview` and `lineup host`
//! reach the Surface's `prefers-color-scheme`, custom properties and root marker; an inverse
//! high-contrast desktop theme gives the dark high-contrast values; the guide's resize example
//! can shrink a Surface.

use super::stdio_host::StdioHost;
use super::*;
use serde_json::{json, Value};

/// A Surface that reports what it sees as the event `look`.
fn look_folder(name: &str) -> PathBuf {
    folder(
        name,
        &[
            ("index.html", "<p>look</p>"),
            (
                "script.js",
                "LineUpSurface.onState(function () {\n\
                   var root = getComputedStyle(document.documentElement);\n\
                   var v = function (n) { return root.getPropertyValue(n).trim(); };\n\
                   LineUpSurface.event('look', {bg: v('--lineup-color-bg'),\n\
                     accent: v('--lineup-color-accent'), on: v('--lineup-color-on-accent'),\n\
                     dark: matchMedia('(prefers-color-scheme: dark)').matches,\n\
                     marker: document.documentElement.getAttribute('data-lineup-contrast')});\n\
                 });\n",
            ),
        ],
    )
}

/// What the Surface saw under `lineup preview ARGS` with `gtk_theme` as `GTK_THEME`.
fn look(dir: &Path, args: &[&str], gtk_theme: Option<&str>) -> Value {
    let mut command = Command::new(LINEUP);
    command
        .arg("preview")
        .arg(dir)
        .args(["--check", "--wait-event", "look"])
        .args(args)
        .env_remove("GTK_THEME");
    if let Some(theme) = gtk_theme {
        command.env("GTK_THEME", theme);
    }
    let run = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert_eq!(run.status.code(), Some(0), "{args:?}: {stdout}");
    let data = stdout
        .lines()
        .find_map(|l| l.split_once("] event look ").map(|(_, d)| d.to_owned()))
        .unwrap_or_else(|| panic!("no look event: {stdout}"));
    serde_json::from_str(&data).unwrap()
}

fn seen(bg: &str, accent: &str, on: &str, dark: bool, more: bool) -> Value {
    json!({"bg": bg, "accent": accent, "on": on, "dark": dark,
           "marker": if more { json!("more") } else { Value::Null }})
}

#[test]
fn r_ui_11_preview_theme_and_contrast_flags_reach_the_surface() {
    display();
    let dir = look_folder("look-preview");
    let cases: [(&[&str], Value); 4] = [
        (
            &["--theme", "light", "--contrast", "normal"],
            seen("#ffffff", "#0a66d8", "#ffffff", false, false),
        ),
        (
            &["--theme", "dark", "--contrast", "normal"],
            seen("#1e1f22", "#5ea1ff", "#000000", true, false),
        ),
        (
            &["--theme", "light", "--contrast", "more"],
            seen("#ffffff", "#0000c0", "#ffffff", false, true),
        ),
        (
            &["--theme", "dark", "--contrast", "more"],
            seen("#000000", "#ffff00", "#000000", true, true),
        ),
    ];
    for (args, expected) in cases {
        assert_eq!(look(&dir, args, None), expected, "{args:?}");
    }
}

/// `GTK_THEME=HighContrastInverse` is a dark high-contrast desktop: the dark high-contrast
/// values and `prefers-color-scheme: dark`. Negative control: `HighContrast` is the light one;
/// an explicit `--theme light` wins over the desktop.
#[test]
fn r_ui_11_high_contrast_inverse_gives_the_dark_high_contrast_values() {
    display();
    let dir = look_folder("look-inverse");
    let dark_high = seen("#000000", "#ffff00", "#000000", true, true);
    let light_high = seen("#ffffff", "#0000c0", "#ffffff", false, true);
    assert_eq!(look(&dir, &[], Some("HighContrastInverse")), dark_high);
    assert_eq!(look(&dir, &[], Some("HighContrast")), light_high);
    assert_eq!(
        look(&dir, &["--theme", "light"], Some("HighContrastInverse")),
        light_high
    );
}

#[test]
fn r_ui_11_host_theme_and_contrast_flags_reach_the_surface() {
    display();
    let dir = look_folder("look-host");
    let open = Command::new(LINEUP)
        .arg("bundle")
        .arg(&dir)
        .output()
        .unwrap();
    assert!(open.status.success());
    let open = String::from_utf8(open.stdout).unwrap();
    let home = dir.with_file_name("look-host-home");
    for (args, expected) in [
        (
            ["--theme", "dark", "--contrast", "more"],
            seen("#000000", "#ffff00", "#000000", true, true),
        ),
        (
            ["--theme", "light", "--contrast", "normal"],
            seen("#ffffff", "#0a66d8", "#ffffff", false, false),
        ),
    ] {
        let mut host = StdioHost::start(&home, &args);
        host.send(open.trim_end());
        let event = host.expect("the look event", |v| {
            v["type"] == "lineup.v1.ui.event" && v["payload"]["event"] == "look"
        });
        assert_eq!(event["payload"]["data"], expected, "{args:?}");
    }
}

/// The guide's resize line, measured after the content grew and after it shrank.
#[test]
fn r_ui_11_the_guides_resize_example_can_shrink_a_surface() {
    display();
    let guide =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/authoring.md"))
            .unwrap();
    let resize = guide
        .lines()
        .find(|l| l.trim_start().starts_with("LineUpSurface.resize("))
        .expect("the guide's resize example");
    let script = format!(
        "function fit() {{\n{resize}\n}}\n\
         var box = document.getElementById('box');\n\
         LineUpSurface.onState(function () {{\n\
           box.style.height = '900px'; fit();\n\
           requestAnimationFrame(function () {{\n\
             box.style.height = '100px'; fit();\n\
             LineUpSurface.event('fitted', {{}});\n\
           }});\n\
         }});\n"
    );
    let dir = folder(
        "resize-guide",
        &[("index.html", "<div id=box></div>"), ("script.js", &script)],
    );
    let (code, stdout) = run_preview(&dir, &["--check", "--wait-event", "fitted"]);
    assert_eq!(code, Some(0), "{stdout}");
    let heights: Vec<u32> = stdout
        .lines()
        .filter_map(|l| {
            l.split_once("] resize ")?
                .1
                .split_once(": ")?
                .1
                .split(' ')
                .next()?
                .parse()
                .ok()
        })
        .collect();
    assert_eq!(heights.len(), 2, "{stdout}");
    assert!(heights[0] >= 900, "grown: {heights:?}");
    assert!(heights[1] < 300, "shrunk below the window: {heights:?}");
}
