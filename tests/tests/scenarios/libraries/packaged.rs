//! The libraries too large for an inline bundle, shipped as an installed app: a package whose
//! manifest lists the library as a script asset (`.js` classic, `.mjs` or `.js` module), signed,
//! verified, installed in a store that is the host's app center, and opened by app id (R-UI-9).
//! The Surface's html loads the asset by relative URL from its own `lineup-surface://<token>/`
//! host (R-SEC-3a as amended by issue 26); its own html + css + js stays within R-UI-2's 160 KiB.
//! A package the host's rules refuse (no script assets, a code limit passed) fails its case
//! with [`REFUSED`] and the refusal's own text.

use std::rc::Rc;

use lineup_host::HostBuilder;
use lineup_packages::{ManifestLimits, Package, PackageFiles, PackageLimits, SecretKey};
use lineup_store::Store;
use lineup_tests::ensure;
use lineup_tests::host_harness::{HostHarness, TestHost};
use lineup_tests::runner::Outcome;
use serde_json::{json, Value};

use super::cache::Libraries;
use super::evidence::{number, open_and_draw, snapshot_shows, Ink, WINDOW};
use super::inline::{AFTER_PAINT, INK};

/// How a case whose package was refused says so (script assets: R-SEC-3a as amended by
/// issue 26).
pub(crate) const REFUSED: &str = "PACKAGE WITH SCRIPT ASSETS REFUSED (R-SEC-3a)";

/// One app package of a single Surface `main` declaring the `drawn` event.
struct App {
    /// `com.lineup.lib.<name>`.
    name: &'static str,
    html: String,
    css: String,
    js: String,
    /// Every asset, by its path in the package, scripts included.
    assets: Vec<(String, Vec<u8>)>,
}

impl App {
    fn id(&self) -> String {
        format!("com.lineup.lib.{}", self.name)
    }

    /// The package: its files read from memory and its manifest checked as an installer
    /// checks them (R-SEC-3a: the script assets among the assets).
    fn package(&self) -> Result<Package, String> {
        let mut surface = json!({"html": "index.html", "events": ["drawn"]});
        if !self.css.is_empty() {
            surface["css"] = json!("style.css");
        }
        if !self.js.is_empty() {
            surface["js"] = json!("app.js");
        }
        let manifest = json!({
            "id": self.id(),
            "name": self.name,
            "version": "1.0.0",
            "surfaces": {"main": surface},
            "assets": self.assets.iter().map(|(path, _)| path.clone()).collect::<Vec<_>>(),
        });
        let mut files: Vec<(&str, Vec<u8>)> = vec![
            ("manifest.json", manifest.to_string().into_bytes()),
            ("index.html", self.html.clone().into_bytes()),
        ];
        if !self.css.is_empty() {
            files.push(("style.css", self.css.clone().into_bytes()));
        }
        if !self.js.is_empty() {
            files.push(("app.js", self.js.clone().into_bytes()));
        }
        files.extend(self.assets.iter().map(|(p, b)| (p.as_str(), b.clone())));
        let code: usize = self
            .assets
            .iter()
            .filter(|(p, _)| p.ends_with(".js") || p.ends_with(".mjs"))
            .map(|(_, b)| b.len())
            .sum();
        println!(
            "    {}: package with {} assets, {code} bytes of script assets",
            self.name,
            self.assets.len()
        );
        let files = PackageFiles::from_memory(files, &PackageLimits::default())
            .map_err(|e| format!("{REFUSED}: the package's files: {e}"))?;
        Package::from_files(files, &ManifestLimits::default())
            .map_err(|e| format!("{REFUSED}: the manifest: {e}"))
    }

    /// Signs the package with a new key, checks the signature as `lineup apps install` does,
    /// installs it in a fresh store under the group's private data directory, and builds a host
    /// whose app center that store is.
    fn install(&self, h: &mut HostHarness) -> Result<TestHost, String> {
        let package = self.package()?;
        let secret = SecretKey::generate().map_err(|e| e.to_string())?;
        let public = secret.public_key();
        secret
            .sign(&package.digest())
            .verify(&package.digest(), &[public])
            .map_err(|e| format!("the signature: {e}"))?;
        let data = std::env::var_os("XDG_DATA_HOME").ok_or("no XDG_DATA_HOME")?;
        let dir = std::path::Path::new(&data).join(format!("apps-{}", self.name));
        let store = Store::open(&dir).map_err(|e| format!("store: {e}"))?;
        store
            .apps()
            .install(&package, Some(&public))
            .map_err(|e| format!("{REFUSED}: the install: {e}"))?;
        h.host(
            HostBuilder::new()
                .window_size(WINDOW.0, WINDOW.1)
                .app_center(Rc::new(store)),
        )
    }

    /// Installs the app, opens its Surface by id with `state` and returns the host and the
    /// page's evidence, once drawn (see [`open_and_draw`]).
    fn open(
        &self,
        h: &mut HostHarness,
        state: Value,
    ) -> Result<(TestHost, lineup_host_core::SurfaceKey, Value), String> {
        let mut t = self.install(h)?;
        let app = json!({"id": self.id(), "surface": "main"});
        let (key, evidence) = open_and_draw(h, &mut t, self.name, app, state)?;
        Ok((t, key, evidence))
    }
}

/// A classic script asset `lib/<file>` from the cache's `path`, and the tag that loads it.
fn classic(
    libs: &Libraries,
    path: &str,
    file: &str,
) -> Result<((String, Vec<u8>), String), String> {
    let asset = (format!("lib/{file}"), libs.bytes(path)?);
    Ok((asset, format!("<script src=\"lib/{file}\"></script>")))
}

const CHART_GLUE: &str = "
LineUpSurface.onState(function (s) {
  var canvas = document.getElementById('chart');
  var chart = new Chart(canvas, { type: 'bar',
    data: { labels: s.labels, datasets: [{ data: s.values, backgroundColor: '#1e8cc8' }] },
    options: { animation: false, responsive: false, devicePixelRatio: 1,
      plugins: { legend: { display: false } } } });
  afterPaint(function () {
    var result = ink(canvas, [30, 140, 200]);
    result.bars = chart.getDatasetMeta(0).data.length;
    result.version = Chart.version;
    return result;
  });
});
";

const BAR_BLUE: Ink = Ink {
    what: "bars",
    rgb: [0x1e, 0x8c, 0xc8],
    tolerance: 30,
    min: 5000,
};

fn bars() -> Value {
    json!({"labels": ["a", "b", "c", "d", "e", "f"], "values": [3, 7, 4, 9, 6, 8]})
}

/// Chart.js's UMD build (`dist/chart.umd.js`, 212 KB) as a classic script asset draws a bar
/// chart on a canvas the page reads back.
pub(crate) fn chart_js(h: &mut HostHarness, libs: &Libraries) -> Outcome {
    let (asset, tag) = classic(
        libs,
        "node_modules/chart.js/dist/chart.umd.js",
        "chart.umd.js",
    )?;
    let app = App {
        name: "chartjs",
        html: format!(
            "<div id=\"stage\"><canvas id=\"chart\" width=\"400\" height=\"300\"></canvas></div>{tag}"
        ),
        css: super::evidence::BASE_CSS.to_owned(),
        js: format!("{AFTER_PAINT}{INK}{CHART_GLUE}"),
        assets: vec![asset],
    };
    let (mut t, key, e) = app.open(h, bars())?;
    ensure!(
        e["bars"] == 6 && number(&e, "near") >= 5000.0,
        "Chart.js {}: {e}",
        libs.version("chart.js")
    );
    snapshot_shows(h, &mut t, &key, "Chart.js", &e, 5000, &[BAR_BLUE])?;
    h.shut_down(t)
}

const D3_GLUE: &str = "
LineUpSurface.onState(function (s) {
  var svg = d3.select('#stage');
  var x = d3.scaleBand().domain(d3.range(s.values.length)).range([30, 390]).padding(0.2);
  var y = d3.scaleLinear().domain([0, d3.max(s.values)]).range([270, 10]);
  svg.append('g').attr('transform', 'translate(0,270)').call(d3.axisBottom(x));
  svg.append('g').attr('transform', 'translate(30,0)').call(d3.axisLeft(y));
  svg.selectAll('rect.bar').data(s.values).join('rect').attr('class', 'bar')
    .attr('x', function (d, i) { return x(i); }).attr('y', function (d) { return y(d); })
    .attr('width', x.bandwidth()).attr('height', function (d) { return 270 - y(d); })
    .attr('fill', '#e07a1e');
  afterPaint(function () {
    var rects = document.querySelectorAll('#stage rect.bar');
    var heights = [];
    for (var i = 0; i < rects.length; i++) {
      heights.push(Math.round(rects[i].getBoundingClientRect().height));
    }
    return { bars: rects.length, heights: heights,
      ticks: document.querySelectorAll('#stage .tick').length, version: d3.version };
  });
});
";

const D3_ORANGE: Ink = Ink {
    what: "bars",
    rgb: [0xe0, 0x7a, 0x1e],
    tolerance: 30,
    min: 5000,
};

/// d3 (`dist/d3.min.js`, 280 KB) as a classic script asset draws an SVG bar chart with scales
/// and axes; the bars' heights follow the values.
pub(crate) fn d3(h: &mut HostHarness, libs: &Libraries) -> Outcome {
    let (asset, tag) = classic(libs, "node_modules/d3/dist/d3.min.js", "d3.min.js")?;
    let app = App {
        name: "d3",
        html: format!("<svg id=\"stage\" width=\"400\" height=\"300\"></svg>{tag}"),
        css: super::evidence::BASE_CSS.to_owned(),
        js: format!("{AFTER_PAINT}{D3_GLUE}"),
        assets: vec![asset],
    };
    let (mut t, key, e) = app.open(h, bars())?;
    let heights: Vec<i64> = e["heights"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_i64).collect())
        .unwrap_or_default();
    // The values 3 7 4 9 6 8 on a 0..9 scale of 260 px.
    let expected = [87, 202, 116, 260, 173, 231];
    ensure!(
        e["bars"] == 6
            && heights.len() == 6
            && heights
                .iter()
                .zip(expected)
                .all(|(h, want)| (h - want).abs() <= 2)
            && number(&e, "ticks") >= 10.0,
        "d3 {}: {e}",
        libs.version("d3")
    );
    snapshot_shows(h, &mut t, &key, "d3", &e, 5000, &[D3_ORANGE])?;
    h.shut_down(t)
}

const ECHARTS_GLUE: &str = "
LineUpSurface.onState(function (s) {
  var stage = document.getElementById('stage');
  var chart = echarts.init(stage, null, { renderer: 'canvas', width: 400, height: 300,
    devicePixelRatio: 1 });
  var reported = false;
  chart.on('finished', function () {
    if (reported) { return; }
    reported = true;
    afterPaint(function () {
      var result = ink(stage.querySelector('canvas'), [42, 184, 122]);
      result.version = echarts.version;
      return result;
    });
  });
  chart.setOption({ animation: false, grid: { left: 40, right: 10, top: 10, bottom: 30 },
    xAxis: { type: 'category', data: s.labels }, yAxis: { type: 'value' },
    series: [{ type: 'bar', data: s.values, itemStyle: { color: '#2ab87a' } }] });
});
";

const ECHARTS_GREEN: Ink = Ink {
    what: "bars",
    rgb: [0x2a, 0xb8, 0x7a],
    tolerance: 30,
    min: 5000,
};

/// ECharts (`dist/echarts.min.js`, 1.1 MB) as a classic script asset, canvas renderer: a bar
/// chart read back from its canvas.
pub(crate) fn echarts(h: &mut HostHarness, libs: &Libraries) -> Outcome {
    let (asset, tag) = classic(
        libs,
        "node_modules/echarts/dist/echarts.min.js",
        "echarts.min.js",
    )?;
    let app = App {
        name: "echarts",
        html: format!("<div id=\"stage\"></div>{tag}"),
        css: super::evidence::BASE_CSS.to_owned(),
        js: format!("{AFTER_PAINT}{INK}{ECHARTS_GLUE}"),
        assets: vec![asset],
    };
    let (mut t, key, e) = app.open(h, bars())?;
    ensure!(
        number(&e, "near") >= 5000.0 && e["width"] == 400,
        "ECharts {}: {e}",
        libs.version("echarts")
    );
    snapshot_shows(h, &mut t, &key, "ECharts", &e, 5000, &[ECHARTS_GREEN])?;
    h.shut_down(t)
}

const KATEX_GLUE: &str = "
LineUpSurface.onState(function (s) {
  var stage = document.getElementById('stage');
  katex.render(s.tex, stage, { displayMode: true, throwOnError: true });
  document.fonts.ready.then(function () {
    afterPaint(function () {
      var box = stage.querySelector('.katex-display').getBoundingClientRect();
      var loaded = [], failed = [];
      document.fonts.forEach(function (f) {
        if (f.status === 'loaded' && loaded.indexOf(f.family) < 0) { loaded.push(f.family); }
        if (f.status === 'error') { failed.push(f.family); }
      });
      return { katex: stage.querySelectorAll('.katex').length,
        mathml: stage.querySelectorAll('math').length,
        spans: stage.querySelectorAll('span').length, width: Math.round(box.width),
        height: Math.round(box.height), fonts: loaded, failed: failed,
        version: katex.version };
    });
  });
});
";

/// KaTeX (`katex.min.js`, 273 KB) as a classic script asset renders math in the page; its CSS
/// is the Surface's css, and its fonts are package assets (`fonts/KaTeX_*.woff2`) that the
/// CSS's relative URLs reach on the Surface's own host.
pub(crate) fn katex(h: &mut HostHarness, libs: &Libraries) -> Outcome {
    let (asset, tag) = classic(libs, "node_modules/katex/dist/katex.min.js", "katex.min.js")?;
    let mut assets = vec![asset];
    let css = libs.module("katex/dist/katex.min.css")?;
    let mut fonts: Vec<&str> = css
        .split("url(fonts/")
        .skip(1)
        .filter_map(|rest| rest.split(')').next())
        .filter(|name| name.ends_with(".woff2"))
        .collect();
    fonts.sort_unstable();
    fonts.dedup();
    for font in &fonts {
        assets.push((
            format!("fonts/{font}"),
            libs.bytes(&format!("node_modules/katex/dist/fonts/{font}"))?,
        ));
    }
    let app = App {
        name: "katex",
        html: format!("<div id=\"stage\"></div>{tag}"),
        css: format!(
            "{}{css}\n#stage {{ font-size: 20px; color: #000; }}",
            super::evidence::BASE_CSS
        ),
        js: format!("{AFTER_PAINT}{KATEX_GLUE}"),
        assets,
    };
    let tex = r"\int_0^\infty e^{-x^2}\,dx = \frac{\sqrt{\pi}}{2} \qquad \sum_{n=1}^\infty \frac{1}{n^2} = \frac{\pi^2}{6}";
    let (mut t, key, e) = app.open(h, json!({"tex": tex}))?;
    let fonts_loaded: Vec<&str> = e["fonts"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    ensure!(
        e["katex"] == 1
            && e["mathml"] == 1
            && number(&e, "spans") >= 40.0
            && number(&e, "width") >= 200.0
            && number(&e, "height") >= 40.0
            && ["KaTeX_Main", "KaTeX_Math"]
                .iter()
                .all(|f| fonts_loaded.contains(f))
            && e["failed"] == json!([]),
        "KaTeX {} ({} fonts as assets): {e}",
        libs.version("katex"),
        fonts.len()
    );
    snapshot_shows(h, &mut t, &key, "KaTeX", &e, 800, &[])?;
    h.shut_down(t)
}

const CODEMIRROR_GLUE: &str = "
LineUpSurface.onState(function (s) {
  var view = new CM.EditorView({ doc: s.doc, extensions: [CM.basicSetup],
    parent: document.getElementById('stage') });
  afterPaint(function () {
    var editor = document.querySelector('#stage .cm-editor').getBoundingClientRect();
    return { lines: document.querySelectorAll('#stage .cm-line').length,
      doc_lines: view.state.doc.lines,
      gutters: document.querySelectorAll('#stage .cm-lineNumbers .cm-gutterElement').length,
      width: Math.round(editor.width), height: Math.round(editor.height) };
  });
});
";

/// CodeMirror 6, ES modules only across many packages, made one IIFE by the pinned esbuild
/// (`scripts/libraries.sh`), as a classic script asset: an editor with line numbers shows the
/// state's document. Nothing is typed.
pub(crate) fn codemirror(h: &mut HostHarness, libs: &Libraries) -> Outcome {
    let (asset, tag) = classic(libs, "bundles/codemirror.iife.min.js", "codemirror.js")?;
    let app = App {
        name: "codemirror",
        html: format!("<div id=\"stage\"></div>{tag}"),
        css: super::evidence::BASE_CSS.to_owned(),
        js: format!("{AFTER_PAINT}{CODEMIRROR_GLUE}"),
        assets: vec![asset],
    };
    let doc: Vec<String> = (1..=12)
        .map(|i| format!("let line{i} = {i} * 2;"))
        .collect();
    let (mut t, key, e) = app.open(h, json!({"doc": doc.join("\n")}))?;
    ensure!(
        e["lines"] == 12
            && e["doc_lines"] == 12
            && number(&e, "gutters") >= 12.0
            && number(&e, "height") >= 150.0,
        "CodeMirror {}: {e}",
        libs.version("@codemirror/view")
    );
    snapshot_shows(h, &mut t, &key, "CodeMirror 6", &e, 2000, &[])?;
    h.shut_down(t)
}

const LIT_MAIN: &str = "
import { LitElement, html, css } from './lib/lit.min.mjs';

class LineupList extends LitElement {
  static properties = { items: { type: Array } };
  static styles = css`ul { margin: 0; padding: 0; list-style: none; }
    li { height: 24px; margin: 0 0 4px; background: #c8781e; color: #fff; font: 14px sans-serif; }`;
  constructor() { super(); this.items = []; }
  render() { return html`<ul>${this.items.map((item) => html`<li>${item.label}</li>`)}</ul>`; }
}
customElements.define('lineup-list', LineupList);

const list = document.getElementById('stage');
LineUpSurface.onState(async (s) => {
  list.items = s.items;
  await list.updateComplete;
  requestAnimationFrame(() => requestAnimationFrame(() => {
    const items = list.shadowRoot.querySelectorAll('li');
    LineUpSurface.event('drawn', { li: items.length, last: items[items.length - 1].textContent,
      height: Math.round(list.shadowRoot.querySelector('ul').getBoundingClientRect().height) });
  }));
});
";

const LIT_ITEM: Ink = Ink {
    what: "list items",
    rgb: [0xc8, 0x78, 0x1e],
    tolerance: 30,
    min: 7 * 24 * 300,
};

/// Lit, ES modules only, made one ES module by the pinned esbuild (`scripts/libraries.sh`): the
/// Surface's module script asset `main.mjs` imports it by relative URL and defines a custom
/// element that renders the state's items in its shadow root.
pub(crate) fn lit(h: &mut HostHarness, libs: &Libraries) -> Outcome {
    let app = App {
        name: "lit",
        html: "<lineup-list id=\"stage\"></lineup-list>\
               <script type=\"module\" src=\"main.mjs\"></script>"
            .to_owned(),
        css: format!("{}#stage {{ display: block; }}", super::evidence::BASE_CSS),
        js: String::new(),
        assets: vec![
            (
                "lib/lit.min.mjs".to_owned(),
                libs.bytes("bundles/lit.min.mjs")?,
            ),
            ("main.mjs".to_owned(), LIT_MAIN.as_bytes().to_vec()),
        ],
    };
    let items: Vec<Value> = (1..=7)
        .map(|i| json!({"id": i, "label": format!("entry {i}")}))
        .collect();
    let (mut t, key, e) = app.open(h, json!({"items": items}))?;
    ensure!(
        e["li"] == 7 && e["last"] == "entry 7" && number(&e, "height") >= 190.0,
        "Lit {}: {e}",
        libs.version("lit")
    );
    snapshot_shows(h, &mut t, &key, "Lit", &e, 20_000, &[LIT_ITEM])?;
    h.shut_down(t)
}

const THREE_MAIN: &str = "
import * as THREE from './lib/three.module.js';

const stage = document.getElementById('stage');
LineUpSurface.onState(() => {
  const probe = document.createElement('canvas');
  let reason = null;
  probe.addEventListener('webglcontextcreationerror', (e) => { reason = e.statusMessage; });
  const probed = probe.getContext('webgl2');
  if (!probed) {
    LineUpSurface.event('drawn', { webgl: false, reason, revision: THREE.REVISION });
    return;
  }
  const renderer = new THREE.WebGLRenderer({ antialias: false, preserveDrawingBuffer: true });
  renderer.setPixelRatio(1);
  renderer.setSize(400, 300);
  renderer.setClearColor(0x1e3cc8);
  stage.appendChild(renderer.domElement);
  const scene = new THREE.Scene();
  const camera = new THREE.PerspectiveCamera(50, 400 / 300, 0.1, 100);
  camera.position.z = 4;
  const cube = new THREE.Mesh(new THREE.BoxGeometry(1.6, 1.6, 1.6),
    new THREE.MeshBasicMaterial({ color: 0xc81e1e }));
  cube.rotation.set(0.5, 0.7, 0);
  scene.add(cube);
  renderer.render(scene, camera);
  const gl = renderer.getContext();
  const px = new Uint8Array(400 * 300 * 4);
  gl.readPixels(0, 0, 400, 300, gl.RGBA, gl.UNSIGNED_BYTE, px);
  let red = 0, blue = 0;
  for (let i = 0; i < px.length; i += 4) {
    if (px[i] > 150 && px[i + 1] < 80 && px[i + 2] < 80) { red++; }
    if (px[i] < 80 && px[i + 1] < 100 && px[i + 2] > 150) { blue++; }
  }
  requestAnimationFrame(() => requestAnimationFrame(() => {
    LineUpSurface.event('drawn', { webgl: true, renderer: gl.getParameter(gl.RENDERER),
      revision: THREE.REVISION, red, blue });
  }));
});
";

const THREE_CUBE: Ink = Ink {
    what: "cube",
    rgb: [0xc8, 0x1e, 0x1e],
    tolerance: 40,
    min: 5000,
};

/// three.js (`build/three.module.js`, which imports `./three.core.js`: 2.1 MB of module script
/// assets) renders a cube with WebGL, which works in the Surface's sandboxed web process under
/// Xvfb: the page reads the drawing buffer back with `readPixels`. Should WebGL be unavailable
/// (no context), the page reports why and the case fails naming it as a platform limit.
pub(crate) fn three(h: &mut HostHarness, libs: &Libraries) -> Outcome {
    let app = App {
        name: "three",
        html: "<div id=\"stage\"></div><script type=\"module\" src=\"main.mjs\"></script>"
            .to_owned(),
        css: super::evidence::BASE_CSS.to_owned(),
        js: String::new(),
        assets: vec![
            (
                "lib/three.module.js".to_owned(),
                libs.bytes("node_modules/three/build/three.module.js")?,
            ),
            (
                "lib/three.core.js".to_owned(),
                libs.bytes("node_modules/three/build/three.core.js")?,
            ),
            ("main.mjs".to_owned(), THREE_MAIN.as_bytes().to_vec()),
        ],
    };
    let (mut t, key, e) = app.open(h, json!({}))?;
    ensure!(
        e["webgl"] == true,
        "PLATFORM LIMIT: no WebGL 2 context in the Surface's web process: {e}"
    );
    ensure!(
        number(&e, "red") >= 5000.0 && number(&e, "blue") >= 20_000.0,
        "three.js r{}: the drawing buffer read back: {e}",
        e["revision"]
    );
    snapshot_shows(h, &mut t, &key, "three.js", &e, 20_000, &[THREE_CUBE])?;
    h.shut_down(t)
}
