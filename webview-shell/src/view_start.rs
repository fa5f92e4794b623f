//! How a webview starts: which kind of page it holds and whether it is shown at once.

/// How a view starts: one way to build every hardened view, whatever its page.
///
/// A Surface's view gets the `LineUpSurface` bridge as a user script of its top frame and wry's
/// `ipc` message handler in the page world. An MCP App view gets neither: no page-world message
/// handler at all (WebKitGTK shows those to every frame), only the relay of a script world of
/// the host's own (R-MCP-7). Everything else, the context, the hardening, the policy handlers,
/// is the same.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ViewStart {
    /// A Surface's view, shown at once.
    Surface,
    /// A Surface's view, hidden: a warm-pool view until a Surface takes it, or the probe's.
    HiddenSurface,
    /// An MCP App view behind its relay, shown at once (R-MCP-7).
    McpApp,
}

impl ViewStart {
    /// Whether the view is shown when it is made.
    pub(crate) fn visible(self) -> bool {
        self != Self::HiddenSurface
    }

    /// Whether the view is an MCP App view.
    pub(crate) fn is_mcp_app(self) -> bool {
        self == Self::McpApp
    }
}
