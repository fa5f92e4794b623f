//! The three proofs that a library drew in a real Surface: (1) the evidence its page reports in
//! one `drawn` event, (2) the host's own WebKit snapshot of the view
//! ([`HostHandle::snapshot_png`](lineup_host::HostHandle::snapshot_png)), decoded and its drawn
//! pixels counted in the area the library draws, and (3) no page error, unhandled rejection or
//! CSP violation among the Surface's diagnostics (R-DIAG-1).

use std::time::{Duration, Instant};

use lineup_host_core::{Diagnostic, DiagnosticKind, DiagnosticLevel, SurfaceKey};
use lineup_tests::host_harness::{HostHarness, Note, TestHost};
use serde_json::{json, Value};

/// How long a Surface has to draw and report, from its open.
pub(crate) const DRAW_WAIT: Duration = Duration::from_secs(15);

/// The most an inline Surface's html + css + js may weigh, in UTF-8 bytes (R-UI-2: 160 KiB).
pub(crate) const INLINE_LIMIT: usize = 160 * 1024;

/// The event every library Surface sends once it has drawn, with its evidence.
pub(crate) const DRAWN: &str = "drawn";

/// The page's background, set by [`BASE_CSS`]: what a pixel that nothing drew shows.
pub(crate) const BACKGROUND: [u8; 3] = [255, 255, 255];

/// The CSS every library Surface starts with: a white page without margins, and the
/// `#stage` where the library draws at a known place, [`STAGE`].
pub(crate) const BASE_CSS: &str = "html, body { margin: 0; padding: 0; background: #fff; }\n\
    #stage { position: absolute; left: 0; top: 0; width: 400px; height: 300px; \
    overflow: hidden; }\n";

/// Where `#stage` is in the snapshot: x, y, width, height, in pixels (the device scale is 1
/// under Xvfb).
pub(crate) const STAGE: Rect = Rect {
    x: 0,
    y: 0,
    width: 400,
    height: 300,
};

/// The window every library host gives its Surfaces, larger than [`STAGE`].
pub(crate) const WINDOW: (u32, u32) = (480, 360);

/// A rectangle of a snapshot.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rect {
    pub(crate) x: u32,
    pub(crate) y: u32,
    pub(crate) width: u32,
    pub(crate) height: u32,
}

/// An inline app `com.lineup.lib.<name>` whose `js` is each of `libraries` followed by a
/// newline (so a trailing `//# sourceMappingURL=…` cannot swallow what follows, as
/// `lineup bundle` joins `scripts/*.js`), then `glue`; refused here, with its size, if it is
/// over [`INLINE_LIMIT`].
pub(crate) fn inline_app(
    name: &str,
    html: &str,
    css: &str,
    libraries: &[&str],
    glue: &str,
) -> Result<Value, String> {
    let mut js = String::new();
    for library in libraries {
        js.push_str(library);
        js.push('\n');
    }
    js.push_str(glue);
    let css = format!("{BASE_CSS}{css}");
    let size = html.len() + css.len() + js.len();
    if size > INLINE_LIMIT {
        return Err(format!(
            "{name}: the bundle is {size} bytes, over the {INLINE_LIMIT} of R-UI-2"
        ));
    }
    println!("    {name}: inline bundle of {size} bytes (limit {INLINE_LIMIT})");
    Ok(json!({
        "id": format!("com.lineup.lib.{name}"),
        "name": name,
        "version": "1.0.0",
        "html": html,
        "css": css,
        "js": js,
    }))
}

/// Whether `d` says the page failed: an uncaught error, an unhandled rejection, a CSP
/// violation or a `console.error`.
pub(crate) fn is_failure(d: &Diagnostic) -> bool {
    matches!(
        d.kind,
        DiagnosticKind::Error | DiagnosticKind::Rejection | DiagnosticKind::Csp
    ) || (d.kind == DiagnosticKind::Console && d.level == DiagnosticLevel::Error)
}

/// The failures among Surface `key`'s diagnostics so far, one line each.
pub(crate) fn failures(t: &TestHost, key: &SurfaceKey) -> Vec<String> {
    t.rec
        .diagnostics(key)
        .iter()
        .filter(|d| is_failure(d))
        .map(ToString::to_string)
        .collect()
}

/// Proof (3): no failure among Surface `key`'s diagnostics (R-DIAG-1).
pub(crate) fn clean(t: &TestHost, key: &SurfaceKey) -> Result<(), String> {
    let failures = failures(t, key);
    if failures.is_empty() {
        Ok(())
    } else {
        Err(format!("the page reported {failures:?}"))
    }
}

/// Sends `ui.open` of `app` as `instance` with `state`, waits for the Surface's `ready` and then
/// its [`DRAWN`] event (at most [`DRAW_WAIT`]); returns its key and proof (1), the event's
/// data. Fails early on a closed Surface or a failure diagnostic, naming what the page said.
pub(crate) fn open_and_draw(
    h: &mut HostHarness,
    t: &mut TestHost,
    instance: &str,
    app: Value,
    state: Value,
) -> Result<(SurfaceKey, Value), String> {
    let mark = t.rec.mark();
    t.send(t.agent.open(instance, app, Some(state)))?;
    let deadline = Instant::now() + DRAW_WAIT;
    let ended = |notes: &[Note]| {
        notes.iter().any(|n| match n {
            Note::Closed(k, _) => k.instance.as_str() == instance,
            Note::Diagnostic(k, d) => k.instance.as_str() == instance && is_failure(d),
            _ => false,
        })
    };
    h.wait_until(t, deadline, |_, rec| {
        rec.count(instance, DRAWN) > 0 || ended(&rec.notes_since(mark))
    });
    let notes = t.rec.notes_since(mark);
    let key = t.rec.key(instance);
    let Some(key) = key.filter(|k| t.rec.is_ready(k)) else {
        return Err(format!(
            "{instance} never became ready: {}",
            summary(&notes, &t.rec.sent())
        ));
    };
    // Let a failure that came with the event arrive too.
    h.settle(t, Duration::from_millis(100));
    clean(t, &key)?;
    let Some(evidence) = t.rec.data(instance, DRAWN).into_iter().next() else {
        return Err(format!(
            "{instance} was ready but never reported `{DRAWN}` within {DRAW_WAIT:?}: {}",
            summary(&t.rec.notes_since(mark), &t.rec.sent())
        ));
    };
    Ok((key, evidence))
}

/// What happened since a mark, for a failure message: refusals, closes, diagnostics, and the
/// `client.error`s the agent got.
fn summary(notes: &[Note], sent: &[Value]) -> String {
    let mut lines: Vec<String> = notes
        .iter()
        .filter_map(|n| match n {
            Note::Diagnostic(_, d) => Some(d.to_string()),
            Note::Closed(_, reason) => Some(format!("closed {reason:?}")),
            Note::Refused(_, refusal) => Some(format!("refused {refusal:?}")),
            Note::Rejected(error, _) => Some(format!("rejected {error:?}")),
            Note::Dropped(_, error) => Some(format!("dropped {error:?}")),
            _ => None,
        })
        .collect();
    lines.extend(
        sent.iter()
            .filter(|m| m["type"] == "lineup.v1.client.error")
            .map(|m| format!("client.error {}", m["payload"])),
    );
    if lines.is_empty() {
        "nothing reported".to_owned()
    } else {
        lines.join("; ")
    }
}

/// A decoded snapshot, RGBA.
pub(crate) struct Picture {
    pub(crate) width: u32,
    pub(crate) height: u32,
    rgba: Vec<u8>,
}

impl Picture {
    /// Decodes PNG bytes.
    fn decode(png: &[u8]) -> Result<Self, String> {
        let mut decoder = png::Decoder::new(std::io::Cursor::new(png));
        decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
        let mut reader = decoder.read_info().map_err(|e| format!("png: {e}"))?;
        let mut buf = vec![0; reader.output_buffer_size()];
        let info = reader
            .next_frame(&mut buf)
            .map_err(|e| format!("png: {e}"))?;
        let channels = info.color_type.samples();
        let pixels = (info.width * info.height) as usize;
        let mut rgba = Vec::with_capacity(pixels * 4);
        for px in buf[..pixels * channels].chunks(channels) {
            match channels {
                4 => rgba.extend_from_slice(px),
                3 => rgba.extend_from_slice(&[px[0], px[1], px[2], 255]),
                2 => rgba.extend_from_slice(&[px[0], px[0], px[0], px[1]]),
                _ => rgba.extend_from_slice(&[px[0], px[0], px[0], 255]),
            }
        }
        Ok(Self {
            width: info.width,
            height: info.height,
            rgba,
        })
    }

    /// The pixels of `area` (clipped to the picture), as RGB.
    fn pixels(&self, area: Rect) -> impl Iterator<Item = [u8; 3]> + '_ {
        let right = (area.x + area.width).min(self.width);
        let bottom = (area.y + area.height).min(self.height);
        (area.y..bottom).flat_map(move |y| {
            (area.x..right).map(move |x| {
                let at = ((y * self.width + x) * 4) as usize;
                [self.rgba[at], self.rgba[at + 1], self.rgba[at + 2]]
            })
        })
    }

    /// How many pixels of `area` differ from [`BACKGROUND`] by more than 40 in some channel:
    /// what something drew there.
    pub(crate) fn drawn(&self, area: Rect) -> usize {
        self.pixels(area)
            .filter(|p| distance(*p, BACKGROUND) > 40)
            .count()
    }

    /// How many pixels of `area` are within `tolerance` of `colour` in every channel.
    pub(crate) fn near(&self, area: Rect, colour: [u8; 3], tolerance: u8) -> usize {
        self.pixels(area)
            .filter(|p| distance(*p, colour) <= tolerance)
            .count()
    }
}

/// The largest difference of one channel.
fn distance(a: [u8; 3], b: [u8; 3]) -> u8 {
    (0..3).map(|i| a[i].abs_diff(b[i])).max().unwrap_or(0)
}

/// Proof (2): the host's own WebKit snapshot of Surface `key`'s whole document, decoded.
pub(crate) fn snapshot(
    h: &mut HostHarness,
    t: &mut TestHost,
    key: &SurfaceKey,
) -> Result<Picture, String> {
    let png = h.snapshot(t, key, DRAW_WAIT)?.map_err(|e| e.to_string())?;
    Picture::decode(&png)
}

/// A colour a library draws in, to be found in the snapshot: at least `min` pixels of
/// [`STAGE`] within `tolerance` of `rgb` in every channel.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ink {
    /// What is drawn in it, for the messages.
    pub(crate) what: &'static str,
    pub(crate) rgb: [u8; 3],
    pub(crate) tolerance: u8,
    pub(crate) min: usize,
}

/// Proofs (2) and (3) after [`open_and_draw`]: the snapshot shows at least `min_drawn` drawn
/// pixels in [`STAGE`] and each of `inks`, and the Surface reported no failure meanwhile.
/// Prints one line of what was proved.
pub(crate) fn snapshot_shows(
    h: &mut HostHarness,
    t: &mut TestHost,
    key: &SurfaceKey,
    library: &str,
    evidence: &Value,
    min_drawn: usize,
    inks: &[Ink],
) -> Result<(), String> {
    let picture = snapshot(h, t, key)?;
    let drawn = picture.drawn(STAGE);
    let found: Vec<(Ink, usize)> = inks
        .iter()
        .map(|ink| (*ink, picture.near(STAGE, ink.rgb, ink.tolerance)))
        .collect();
    let colours: String = found
        .iter()
        .map(|(ink, n)| format!(", {n} of the {}", ink.what))
        .collect();
    println!(
        "    {library}: page evidence {evidence}; snapshot {}x{}, {drawn} drawn pixels in the \
         stage{colours}",
        picture.width, picture.height
    );
    if drawn < min_drawn {
        return Err(format!(
            "{library}: the host's snapshot shows {drawn} drawn pixels in the stage, \
             fewer than {min_drawn}; the page said {evidence}"
        ));
    }
    for (ink, n) in found {
        if n < ink.min {
            return Err(format!(
                "{library}: the host's snapshot shows {n} pixels of the {}, fewer than {}",
                ink.what, ink.min
            ));
        }
    }
    clean(t, key)
}

/// The number `evidence[field]`, or 0.
pub(crate) fn number(evidence: &Value, field: &str) -> f64 {
    evidence[field].as_f64().unwrap_or(0.0)
}
