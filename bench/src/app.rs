//! The bench app: one page that acknowledges states, pings and floods, as a `ui.open` payload
//! for the host and as the document bytes the raw views load.

use std::rc::Rc;

use lineup_host_core::InlineBundle;
use lineup_surface_runtime::{DocumentOptions, SurfaceDocument};
use serde_json::{json, Value};

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

/// The default bench bundle size.
pub(crate) const SMALL: usize = 1024;

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

/// The standard component the bench opens (R-STD-1): a Markdown message, what a chat shows
/// most, with the state it shows.
pub(crate) fn component_json() -> (Value, Value) {
    (
        json!({ "id": "markdown", "version": "1" }),
        json!({ "text": "**Deploy** finished: 3 services, no migrations.\n\n- api\n- web\n- worker" }),
    )
}
