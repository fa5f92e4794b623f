//! The JavaScript libraries Surface authors reach for, unmodified, in real Surfaces of a real
//! host on WebKitGTK under Xvfb (issue 26). The releases are pinned in
//! `tests/libraries/package.json` and its lock file (integrity hashes checked), fetched from the
//! npm registry by `scripts/libraries.sh` into a cache outside the work tree; a missing cache
//! fails every scenario with the command to run.
//!
//! Each library draws from the state its Surface is opened with and is proved drawn three
//! ways: (1) by the evidence its page reports in one `drawn` event (canvas pixels read back with
//! `getImageData`, node counts, element sizes), (2) by the host's own WebKit snapshot of the view,
//! decoded and its drawn pixels counted where the library draws, and (3) by no page error,
//! unhandled rejection or CSP violation among the Surface's diagnostics (R-DIAG-1). Positive
//! controls: a blank Surface fails the snapshot check, and plain Alpine's `eval` is seen by the
//! diagnostics check as the CSP violation it is (R-SEC-3).
//!
//! The inline cases fit the 160 KiB of R-UI-2 with the library text in the bundle's `js`. The
//! installed-app cases ship the library as a script asset of a signed package, loaded from the
//! Surface's own `lineup-surface://<token>/` host (R-SEC-3a as amended by issue 26), within the
//! per-package code limit; they run last, and one whose package is refused (a host without
//! script assets, a code limit passed) fails naming the refusal.
//!
//! The process runs under `LANG=C.UTF-8`, set before the first web context.
#![allow(clippy::print_stdout, clippy::unwrap_used, missing_docs)]

pub(crate) mod cache;
mod evidence;
mod inline;
mod packaged;

use lineup_tests::home::private_home;
use lineup_tests::host_harness::HostHarness;
use lineup_tests::runner::Outcome;

use cache::Libraries;

/// A scenario of this group: the harness and the located cache.
type Scenario = fn(&mut HostHarness, &Libraries) -> Outcome;

/// The inline scenarios, in the order they run.
const INLINE: &[(&str, Scenario)] = &[
    (
        "marked_renders_markdown_and_dompurify_sanitises_it_inline",
        inline::marked_and_dompurify,
    ),
    (
        "highlight_js_common_build_colours_javascript_inline",
        inline::highlight_js,
    ),
    (
        "leaflet_draws_a_local_geojson_layer_as_svg_paths_inline",
        inline::leaflet,
    ),
    ("uplot_draws_a_line_on_its_canvas_inline", inline::uplot),
    (
        "preact_umd_with_hooks_renders_a_list_inline",
        inline::preact,
    ),
    (
        "alpine_csp_build_renders_x_for_without_eval_inline",
        inline::alpine_csp,
    ),
    (
        "control_plain_alpine_eval_is_reported_as_a_csp_violation",
        inline::plain_alpine_is_seen_failing,
    ),
    (
        "control_a_blank_surface_fails_the_snapshot_check",
        inline::blank_surface_fails_the_snapshot_check,
    ),
];

/// The installed-app scenarios (script assets, R-SEC-3a), run after the inline ones.
const PACKAGED: &[(&str, Scenario)] = &[
    (
        "chart_js_umd_draws_bars_as_an_installed_app_with_a_script_asset",
        packaged::chart_js,
    ),
    (
        "d3_draws_an_svg_bar_chart_as_an_installed_app_with_a_script_asset",
        packaged::d3,
    ),
    (
        "echarts_draws_on_canvas_as_an_installed_app_with_a_script_asset",
        packaged::echarts,
    ),
    (
        "katex_renders_math_with_its_fonts_as_an_installed_app",
        packaged::katex,
    ),
    (
        "codemirror_6_esbuild_bundle_shows_an_editor_as_an_installed_app",
        packaged::codemirror,
    ),
    (
        "lit_renders_a_custom_element_from_a_module_script_asset",
        packaged::lit,
    ),
    (
        "three_js_module_asset_renders_a_cube_with_webgl_as_an_installed_app",
        packaged::three,
    ),
];

pub(crate) fn run() {
    // The cache is found through HOME, so before the private one replaces it.
    let libraries = Libraries::locate();
    let home = private_home("libraries");
    // Before any thread or web context exists.
    std::env::remove_var("LC_ALL");
    std::env::remove_var("LC_MESSAGES");
    std::env::set_var("LANG", "C.UTF-8");
    let mut h = HostHarness::start();
    for (name, scenario) in INLINE.iter().chain(PACKAGED) {
        let libraries = &libraries;
        h.run(name, |h| {
            scenario(h, libraries.as_ref().map_err(Clone::clone)?)
        });
    }
    drop(home);
    h.finish();
}
