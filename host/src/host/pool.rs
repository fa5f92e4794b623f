//! The host's side of the warm pool (#12): which token a Surface's document is made for, and
//! refilling the pool one view per idle turn of the event loop, never in the middle of an open;
//! with Surfaces as child views the pool's views wait hidden in the embedder's window. The
//! pool's views are the shell's; what the host decides from is the port and whether a Surface
//! opens ([`OPENING_HOLD`]).

use std::time::{Duration, Instant};

use lineup_surface_runtime::SurfaceToken;
use lineup_webview_shell::{ShellError, WindowMaker};

use crate::port::ViewPort;

/// How soon the loop comes back for the next pool view while the pool is short.
const REFILL_TURN: Duration = Duration::from_millis(20);

/// How long a Surface waiting for its first `ready` holds the refill back. Starting a view
/// (a web context, a window, a sandboxed web process) takes the GTK thread and a core for
/// tens of milliseconds; started while a taken view commits its document, it made that open
/// wait behind it (measured: the commit ~40 ms after the document was served instead of
/// ~10 ms). A page that never says `ready` holds it back no longer than this.
pub(super) const OPENING_HOLD: Duration = Duration::from_secs(2);

/// The token of the Surface about to be created through `port`: the next pool view's when one
/// waits (the document is then made for that view; the pool's views are placed as this host
/// places Surfaces, in windows of their own or as child views), else a fresh random one for a
/// cold view.
pub(super) fn surface_token(port: &dyn ViewPort) -> Result<SurfaceToken, ShellError> {
    if let Some(token) = port.shell().and_then(|shell| shell.pooled_token()) {
        return Ok(token);
    }
    fresh_token()
}

/// A fresh random token, for a cold view (an MCP App view never takes a pool view).
pub(super) fn fresh_token() -> Result<SurfaceToken, ShellError> {
    let mut token = [0u8; 16];
    getrandom::fill(&mut token)
        .map_err(|e| ShellError::Platform(format!("no random source: {e}")))?;
    Ok(SurfaceToken::from_random_bytes(token))
}

/// At an idle turn (every event of the turn handled, opens included, and no inbound envelope
/// waiting), starts one view of `port`'s pool if it is short, unless a Surface is `opening`;
/// returns when to come back while it still is.
pub(super) fn refill(
    port: &dyn ViewPort,
    opening: bool,
    idle_turn: bool,
    target: &dyn WindowMaker,
) -> Option<Instant> {
    // A port without a shell has no pool.
    let shell = port
        .shell()
        .filter(|shell| shell.config().warm_pool() > 0)?;
    if opening {
        return Some(Instant::now() + REFILL_TURN);
    }
    let short = if idle_turn {
        shell.fill_pool(target, port.parent())
    } else {
        shell.pooled() < shell.config().warm_pool()
    };
    short.then(|| Instant::now() + REFILL_TURN)
}
