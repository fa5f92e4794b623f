//! The libraries that fit an inline bundle (R-UI-2, 160 KiB for html + css + js): each library
//! file unmodified at the top of the `js`, a newline after it, then a little glue that draws
//! from the state and reports `drawn` with what the page measured.

use lineup_host::HostBuilder;
use lineup_tests::ensure;
use lineup_tests::host_harness::{HostHarness, TestHost};
use lineup_tests::runner::Outcome;
use serde_json::{json, Value};

use super::cache::Libraries;
use super::evidence::{
    clean, failures, inline_app, number, open_and_draw, snapshot_shows, Ink, DRAW_WAIT, WINDOW,
};

/// Glue every library Surface starts with: `afterPaint(measure)` reports `measure()` as
/// `drawn` once two animation frames have passed (the page has painted).
pub(crate) const AFTER_PAINT: &str = "
function afterPaint(measure) {
  requestAnimationFrame(function () { requestAnimationFrame(function () {
    LineUpSurface.event('drawn', measure());
  }); });
}
";

/// Glue of the canvas Surfaces: `ink(canvas, rgb)` reads a 2D canvas back with
/// `getImageData`: how many pixels are painted at all, and how many are within 30 of `rgb`.
pub(crate) const INK: &str = "
function ink(canvas, rgb) {
  var d = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
  var painted = 0, near = 0;
  for (var i = 0; i < d.length; i += 4) {
    if (d[i + 3] > 0) { painted++; }
    if (d[i + 3] > 200 && Math.abs(d[i] - rgb[0]) < 30 && Math.abs(d[i + 1] - rgb[1]) < 30
        && Math.abs(d[i + 2] - rgb[2]) < 30) { near++; }
  }
  return { painted: painted, near: near, width: canvas.width, height: canvas.height };
}
";

/// A host for one library Surface.
pub(crate) fn library_host(h: &mut HostHarness) -> Result<TestHost, String> {
    h.host(HostBuilder::new().window_size(WINDOW.0, WINDOW.1))
}

const MARKDOWN_GLUE: &str = "
LineUpSurface.onState(function (s) {
  var stage = document.getElementById('stage');
  var raw = marked.parse(s.markdown);
  stage.innerHTML = DOMPurify.sanitize(raw);
  afterPaint(function () {
    var all = stage.querySelectorAll('*');
    var handlers = 0;
    for (var i = 0; i < all.length; i++) {
      for (var j = 0; j < all[i].attributes.length; j++) {
        if (/^on/i.test(all[i].attributes[j].name)) { handlers++; }
      }
    }
    return {
      nodes: all.length,
      h1: stage.querySelectorAll('h1').length,
      li: stage.querySelectorAll('li').length,
      td: stage.querySelectorAll('td').length,
      code: stage.querySelectorAll('code').length,
      strong: stage.querySelectorAll('strong').length,
      raw_script: raw.indexOf('<script') >= 0,
      scripts: stage.querySelectorAll('script').length,
      handlers: handlers,
      js_links: stage.querySelectorAll('a[href^=\"javascript\"]').length,
      removed: DOMPurify.removed.length,
      height: Math.round(stage.scrollHeight)
    };
  });
});
";

const MARKDOWN: &str = "# Release notes\n\nSome **bold**, _em_ and `code`, and a [link](https://example.com/).\n\n\
- one\n- two\n- three\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n\
<script>LineUpSurface.event('pwned', {})</script>\n\n\
<div onclick=\"LineUpSurface.event('pwned', {})\">click</div> <a href=\"javascript:alert(1)\">bad</a>\n";

/// marked renders Markdown to HTML (raw `<script>` and handlers included, as it does), DOMPurify
/// takes those out, and the page holds the sanitised tree.
pub(crate) fn marked_and_dompurify(h: &mut HostHarness, libs: &Libraries) -> Outcome {
    let app = inline_app(
        "markdown",
        "<div id=\"stage\" class=\"md\"></div>",
        ".md { font: 15px sans-serif; color: #111; padding: 0 8px; box-sizing: border-box; }\n\
         .md td, .md th { border: 1px solid #333; padding: 1px 6px; }\n\
         .md h1 { margin: 4px 0; } .md p, .md ul, .md table { margin: 4px 0; }",
        &[
            &libs.module("marked/lib/marked.umd.js")?,
            &libs.module("dompurify/dist/purify.min.js")?,
        ],
        &format!("{AFTER_PAINT}{MARKDOWN_GLUE}"),
    )?;
    let mut t = library_host(h)?;
    let (key, e) = open_and_draw(h, &mut t, "markdown", app, json!({"markdown": MARKDOWN}))?;
    ensure!(
        e["h1"] == 1
            && e["li"] == 3
            && e["td"] == 2
            && e["strong"] == 1
            && number(&e, "code") >= 1.0
            && number(&e, "nodes") >= 15.0,
        "marked {}: the tree is not the Markdown's: {e}",
        libs.version("marked")
    );
    ensure!(
        e["raw_script"] == true
            && e["scripts"] == 0
            && e["handlers"] == 0
            && e["js_links"] == 0
            && number(&e, "removed") >= 3.0,
        "DOMPurify {}: what marked let through was not all taken out: {e}",
        libs.version("dompurify")
    );
    snapshot_shows(h, &mut t, &key, "marked + DOMPurify", &e, 1500, &[])?;
    ensure!(
        t.rec.count("markdown", "pwned") == 0,
        "a script or handler of the Markdown ran"
    );
    h.shut_down(t)
}

const HIGHLIGHT_GLUE: &str = "
LineUpSurface.onState(function (s) {
  var code = document.getElementById('code');
  code.innerHTML = hljs.highlight(s.code, { language: 'javascript' }).value;
  afterPaint(function () {
    return {
      spans: code.querySelectorAll('[class^=\"hljs-\"]').length,
      keywords: code.querySelectorAll('.hljs-keyword').length,
      strings: code.querySelectorAll('.hljs-string').length,
      languages: hljs.listLanguages().length,
      auto: hljs.highlightAuto(s.python).language,
      version: hljs.versionString
    };
  });
});
";

const JS_SNIPPET: &str = "// Sum the values\nfunction total(values) {\n  let sum = 0;\n  \
for (const v of values) {\n    if (typeof v === 'number') { sum += v; }\n  }\n  \
return `total: ${sum}`;\n}\nconst label = \"done\";\nexport default total;\n";

/// GitHub theme's keyword colour, `#d73a49`.
const HLJS_KEYWORD: Ink = Ink {
    what: "keyword colour",
    rgb: [0xd7, 0x3a, 0x49],
    tolerance: 40,
    min: 30,
};

/// highlight.js's common build (the release's `highlight.min.js`) marks a JavaScript snippet up
/// with `.hljs-*` spans, the GitHub theme colours them, and auto-detection names Python.
pub(crate) fn highlight_js(h: &mut HostHarness, libs: &Libraries) -> Outcome {
    let app = inline_app(
        "highlight",
        "<pre id=\"stage\"><code id=\"code\" class=\"hljs language-javascript\"></code></pre>",
        &format!(
            "{}\n#stage {{ margin: 0; font: 14px monospace; }}",
            libs.module("@highlightjs/cdn-assets/styles/github.min.css")?
        ),
        &[&libs.module("@highlightjs/cdn-assets/highlight.min.js")?],
        &format!("{AFTER_PAINT}{HIGHLIGHT_GLUE}"),
    )?;
    let mut t = library_host(h)?;
    let state = json!({
        "code": JS_SNIPPET,
        "python": "def greet(name):\n    print(f\"hello {name}\")\n\nclass Greeter:\n    pass\n",
    });
    let (key, e) = open_and_draw(h, &mut t, "highlight", app, state)?;
    ensure!(
        number(&e, "spans") >= 15.0
            && number(&e, "keywords") >= 8.0
            && number(&e, "strings") >= 2.0
            && number(&e, "languages") >= 30.0
            && e["auto"] == "python",
        "highlight.js {}: {e}",
        libs.version("@highlightjs/cdn-assets")
    );
    snapshot_shows(h, &mut t, &key, "highlight.js", &e, 1500, &[HLJS_KEYWORD])?;
    h.shut_down(t)
}

const LEAFLET_GLUE: &str = "
LineUpSurface.onState(function (s) {
  var map = L.map('stage', { zoomControl: false, attributionControl: false, fadeAnimation: false,
    zoomAnimation: false, markerZoomAnimation: false });
  var layer = L.geoJSON(s.geo, { style: function () {
    return { color: '#c81e1e', weight: 3, fillColor: '#1e3cc8', fillOpacity: 1 }; } }).addTo(map);
  map.fitBounds(layer.getBounds(), { padding: [20, 20], animate: false });
  afterPaint(function () {
    var o = document.getElementById('stage').getBoundingClientRect();
    var paths = document.querySelectorAll('#stage .leaflet-overlay-pane svg path');
    var boxes = [];
    for (var i = 0; i < paths.length; i++) {
      var r = paths[i].getBoundingClientRect();
      boxes.push([Math.round(r.left - o.left), Math.round(r.top - o.top),
        Math.round(r.width), Math.round(r.height)]);
    }
    return { paths: paths.length, boxes: boxes, zoom: map.getZoom(), tiles: document.querySelectorAll('#stage img').length };
  });
});
";

/// Two polygons and a line around Berlin, in GeoJSON (lon, lat).
fn berlin() -> Value {
    let polygon = |c: [[f64; 2]; 4]| {
        json!({"type": "Feature", "properties": {}, "geometry": {"type": "Polygon",
            "coordinates": [[c[0], c[1], c[2], c[3], c[0]]]}})
    };
    json!({"type": "FeatureCollection", "features": [
        polygon([[13.30, 52.48], [13.40, 52.48], [13.40, 52.54], [13.30, 52.54]]),
        polygon([[13.44, 52.50], [13.52, 52.50], [13.52, 52.56], [13.44, 52.56]]),
        {"type": "Feature", "properties": {}, "geometry": {"type": "LineString",
            "coordinates": [[13.30, 52.46], [13.41, 52.47], [13.52, 52.46]]}}
    ]})
}

/// Leaflet's fill and stroke in the glue.
const LEAFLET_FILL: Ink = Ink {
    what: "polygons' fill",
    rgb: [0x1e, 0x3c, 0xc8],
    tolerance: 30,
    min: 3000,
};
const LEAFLET_STROKE: Ink = Ink {
    what: "paths' stroke",
    rgb: [0xc8, 0x1e, 0x1e],
    tolerance: 30,
    min: 300,
};

/// Leaflet (`leaflet.js` + `leaflet.css`) draws a local GeoJSON layer as SVG paths inside the
/// map, fitted to the stage; there is no tile layer, since a Surface has no network.
pub(crate) fn leaflet(h: &mut HostHarness, libs: &Libraries) -> Outcome {
    let app = inline_app(
        "leaflet",
        "<div id=\"stage\"></div>",
        &format!(
            "{}\n#stage.leaflet-container {{ background: #fff; }}",
            libs.module("leaflet/dist/leaflet.css")?
        ),
        &[&libs.module("leaflet/dist/leaflet.js")?],
        &format!("{AFTER_PAINT}{LEAFLET_GLUE}"),
    )?;
    let mut t = library_host(h)?;
    let (key, e) = open_and_draw(h, &mut t, "leaflet", app, json!({"geo": berlin()}))?;
    let boxes = e["boxes"].as_array().cloned().unwrap_or_default();
    let inside = |b: &Value| {
        let n = |i: usize| b[i].as_i64().unwrap_or(-1);
        n(0) >= 0 && n(1) >= 0 && n(0) + n(2) <= 400 && n(1) + n(3) <= 300 && n(2) >= 40
    };
    ensure!(
        e["paths"] == 3 && boxes.len() == 3 && boxes.iter().all(inside) && e["tiles"] == 0,
        "Leaflet {}: three paths inside the stage, none smaller than 40 px wide: {e}",
        libs.version("leaflet")
    );
    snapshot_shows(
        h,
        &mut t,
        &key,
        "Leaflet",
        &e,
        3000,
        &[LEAFLET_FILL, LEAFLET_STROKE],
    )?;
    h.shut_down(t)
}

const UPLOT_GLUE: &str = "
LineUpSurface.onState(function (s) {
  var stage = document.getElementById('stage');
  var chart = new uPlot({ width: 400, height: 300, legend: { show: false },
    cursor: { show: false }, scales: { x: { time: false } },
    series: [{}, { stroke: '#e0281e', width: 3 }] }, [s.x, s.y], stage);
  afterPaint(function () {
    var result = ink(stage.querySelector('canvas'), [224, 40, 30]);
    result.series = chart.series.length;
    return result;
  });
});
";

/// uPlot's line colour in the glue.
const UPLOT_LINE: Ink = Ink {
    what: "line",
    rgb: [0xe0, 0x28, 0x1e],
    tolerance: 40,
    min: 300,
};

/// uPlot (`uPlot.iife.min.js` + `uPlot.min.css`) draws a line on its canvas; the page reads the
/// canvas back with `getImageData`.
pub(crate) fn uplot(h: &mut HostHarness, libs: &Libraries) -> Outcome {
    let app = inline_app(
        "uplot",
        "<div id=\"stage\"></div>",
        &libs.module("uplot/dist/uPlot.min.css")?,
        &[&libs.module("uplot/dist/uPlot.iife.min.js")?],
        &format!("{AFTER_PAINT}{INK}{UPLOT_GLUE}"),
    )?;
    let x: Vec<f64> = (0..40).map(f64::from).collect();
    let y: Vec<f64> = x.iter().map(|x| (x / 4.0).sin() * 10.0).collect();
    let mut t = library_host(h)?;
    let (key, e) = open_and_draw(h, &mut t, "uplot", app, json!({"x": x, "y": y}))?;
    ensure!(
        number(&e, "near") >= 300.0 && number(&e, "painted") >= 1000.0,
        "uPlot {}: the canvas read back holds too little of the line: {e}",
        libs.version("uplot")
    );
    snapshot_shows(h, &mut t, &key, "uPlot", &e, 1000, &[UPLOT_LINE])?;
    h.shut_down(t)
}

const PREACT_GLUE: &str = "
var h = preact.h;
function List(props) {
  var count = preactHooks.useState(props.items.length)[0];
  preactHooks.useEffect(function () {
    afterPaint(function () {
      var items = document.querySelectorAll('#stage li');
      return { li: items.length, count: count, first: items[0] && items[0].textContent,
        height: Math.round(document.getElementById('list').getBoundingClientRect().height) };
    });
  }, []);
  return h('ul', { id: 'list' }, props.items.map(function (item) {
    return h('li', { key: item.id }, item.label);
  }));
}
LineUpSurface.onState(function (s) {
  preact.render(h(List, { items: s.items }), document.getElementById('stage'));
});
";

/// Preact's list colour in the css.
const PREACT_ITEM: Ink = Ink {
    what: "list items",
    rgb: [0x2a, 0x8a, 0x4a],
    tolerance: 30,
    min: 8 * 24 * 300,
};

/// Preact (`preact.umd.js` + `hooks.umd.js`) renders a list from the state with a hook.
pub(crate) fn preact(h: &mut HostHarness, libs: &Libraries) -> Outcome {
    let app = inline_app(
        "preact",
        "<div id=\"stage\"></div>",
        "#stage ul { margin: 0; padding: 0; list-style: none; }\n\
         #stage li { height: 24px; margin: 0 0 4px; background: #2a8a4a; color: #fff; \
         font: 14px sans-serif; }",
        &[
            &libs.module("preact/dist/preact.umd.js")?,
            &libs.module("preact/hooks/dist/hooks.umd.js")?,
        ],
        &format!("{AFTER_PAINT}{PREACT_GLUE}"),
    )?;
    let items: Vec<Value> = (1..=8)
        .map(|i| json!({"id": i, "label": format!("item {i}")}))
        .collect();
    let mut t = library_host(h)?;
    let (key, e) = open_and_draw(h, &mut t, "preact", app, json!({"items": items}))?;
    ensure!(
        e["li"] == 8 && e["count"] == 8 && e["first"] == "item 1" && number(&e, "height") >= 200.0,
        "Preact {}: {e}",
        libs.version("preact")
    );
    snapshot_shows(h, &mut t, &key, "Preact", &e, 20_000, &[PREACT_ITEM])?;
    h.shut_down(t)
}

const ALPINE_HTML: &str = "<ul id=\"stage\" x-data=\"list\"><template x-for=\"item in items\" \
    :key=\"item.id\"><li x-text=\"item.label\"></li></template></ul>";

const ALPINE_GLUE: &str = "
Alpine.data('list', function () {
  return {
    items: [],
    init: function () {
      var self = this;
      LineUpSurface.onState(function (s) {
        self.items = s.items;
        self.$nextTick(function () {
          afterPaint(function () {
            var items = document.querySelectorAll('#stage li');
            return { li: items.length, last: items[items.length - 1].textContent,
              version: Alpine.version };
          });
        });
      });
    }
  };
});
";

const ALPINE_CSS: &str = "#stage { margin: 0; padding: 0; list-style: none; }\n\
    #stage li { height: 24px; margin: 0 0 4px; background: #7a2ab8; color: #fff; \
    font: 14px sans-serif; }";

/// Alpine's list colour in the css.
const ALPINE_ITEM: Ink = Ink {
    what: "list items",
    rgb: [0x7a, 0x2a, 0xb8],
    tolerance: 30,
    min: 6 * 24 * 300,
};

/// `@alpinejs/csp`, the build of Alpine that evaluates no strings as code: a component with
/// `x-data` and `x-for` renders the state's items, within `script-src` without `unsafe-eval`
/// (R-SEC-3).
pub(crate) fn alpine_csp(h: &mut HostHarness, libs: &Libraries) -> Outcome {
    let app = inline_app(
        "alpine",
        ALPINE_HTML,
        ALPINE_CSS,
        &[&libs.module("@alpinejs/csp/dist/cdn.min.js")?],
        &format!("{AFTER_PAINT}{ALPINE_GLUE}"),
    )?;
    let items: Vec<Value> = (1..=6)
        .map(|i| json!({"id": i, "label": format!("task {i}")}))
        .collect();
    let mut t = library_host(h)?;
    let (key, e) = open_and_draw(h, &mut t, "alpine", app, json!({"items": items}))?;
    ensure!(
        e["li"] == 6 && e["last"] == "task 6",
        "@alpinejs/csp {}: {e}",
        libs.version("@alpinejs/csp")
    );
    snapshot_shows(h, &mut t, &key, "@alpinejs/csp", &e, 20_000, &[ALPINE_ITEM])?;
    h.shut_down(t)
}

/// The positive control of the diagnostics check: plain `alpinejs`, which compiles its
/// expressions with `new Function`, is stopped by the policy (no `unsafe-eval`, R-SEC-3), and
/// the check sees the CSP violation the host reports (R-DIAG-1).
pub(crate) fn plain_alpine_is_seen_failing(h: &mut HostHarness, libs: &Libraries) -> Outcome {
    let app = inline_app(
        "alpine-eval",
        "<div id=\"stage\" x-data=\"{ open: true }\"><p x-show=\"open\">shown</p></div>",
        "",
        &[&libs.module("alpinejs/dist/cdn.min.js")?],
        "",
    )?;
    let mut t = library_host(h)?;
    let key = h.open(&mut t, "alpine-eval", app, Some(json!({})))?;
    let seen = h.wait_until(&mut t, std::time::Instant::now() + DRAW_WAIT, |_, rec| {
        rec.diagnostics(&key)
            .iter()
            .any(|d| d.kind == lineup_host_core::DiagnosticKind::Csp)
    });
    let failures = failures(&t, &key);
    println!(
        "    alpinejs {}: the diagnostics check sees {failures:?}",
        libs.version("alpinejs")
    );
    ensure!(
        seen && clean(&t, &key).is_err(),
        "no CSP violation reported for plain Alpine's eval: {failures:?}"
    );
    let csp = t
        .rec
        .diagnostics(&key)
        .into_iter()
        .find_map(|d| d.csp)
        .ok_or("no violation")?;
    ensure!(
        csp.directive.as_str().starts_with("script-src"),
        "the violation is not script-src's: {csp:?}"
    );
    h.shut_down(t)
}

/// The positive control of the snapshot check: a Surface that draws nothing reports `drawn`
/// like the others, and the same check, with the smallest threshold any library case uses,
/// fails on its snapshot.
pub(crate) fn blank_surface_fails_the_snapshot_check(
    h: &mut HostHarness,
    _libs: &Libraries,
) -> Outcome {
    let app = inline_app(
        "blank",
        "<div id=\"stage\"></div>",
        "",
        &[],
        &format!("{AFTER_PAINT}LineUpSurface.onState(function () {{ afterPaint(function () {{ return {{ blank: true }}; }}); }});"),
    )?;
    let mut t = library_host(h)?;
    let (key, e) = open_and_draw(h, &mut t, "blank", app, json!({}))?;
    let result = snapshot_shows(h, &mut t, &key, "blank control", &e, 1000, &[]);
    ensure!(
        result.is_err(),
        "the snapshot check passed a Surface that drew nothing"
    );
    h.shut_down(t)
}
