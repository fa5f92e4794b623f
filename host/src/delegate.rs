//! What the host tells the embedder: one delegate trait with default methods named by intent.

use std::fmt;

use lineup_host_core::{
    Activity, CloseReason, ComponentKind, Diagnostic, InlineApp, McpViewOpen, Message,
    ProtocolError, SurfaceKey,
};

use lineup_webview_shell::page_text;
use lineup_webview_shell::Rect;

/// Something a Surface's page tried that its webview refused (R-SEC-2, R-UI-5).
///
/// `Debug` shows a refused URL as a length and a digest, as [`ViewEvent`](crate::platform::ViewEvent)
/// does: the page chose it, it may carry agent state or event data, and logs reach journald.
/// `Display` writes the URL out, for the Surface's author (`lineup preview`); a log that may
/// reach journald takes the `Debug` form.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// A navigation of some frame, to this URL.
    Navigation(String),
    /// A new window, for this URL.
    NewWindow(String),
    /// A download, of this URL.
    Download(String),
    /// A permission request (geolocation, notifications, camera, …).
    Permission,
    /// `window.close()` from the page; nothing was closed (R-UI-5).
    PageClose,
    /// An `alert`, `confirm` or `prompt`, answered without being shown.
    Dialog,
    /// A drop of files from outside.
    Drop,
    /// A file chooser.
    FileChooser,
    /// The page replaced its document (a `javascript:` URL); the Surface's own document was
    /// loaded again (R-SEC-2a).
    DocumentReplaced,
}

impl fmt::Debug for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Navigation(url) => page_text("Navigation", url, f),
            Refusal::NewWindow(url) => page_text("NewWindow", url, f),
            Refusal::Download(url) => page_text("Download", url, f),
            Refusal::Permission => f.write_str("Permission"),
            Refusal::PageClose => f.write_str("PageClose"),
            Refusal::Dialog => f.write_str("Dialog"),
            Refusal::Drop => f.write_str("Drop"),
            Refusal::FileChooser => f.write_str("FileChooser"),
            Refusal::DocumentReplaced => f.write_str("DocumentReplaced"),
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Navigation(url) => write!(f, "a navigation to {url}"),
            Refusal::NewWindow(url) => write!(f, "a new window for {url}"),
            Refusal::Download(url) => write!(f, "a download of {url}"),
            Refusal::Permission => f.write_str("a permission request"),
            Refusal::PageClose => f.write_str("window.close() from the page"),
            Refusal::Dialog => f.write_str("a script dialog"),
            Refusal::Drop => f.write_str("a drop from outside"),
            Refusal::FileChooser => f.write_str("a file chooser"),
            Refusal::DocumentReplaced => f.write_str("a document replaced by a javascript: url"),
        }
    }
}

/// One child view to place, for [`HostDelegate::request_child_placement`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ChildSlot<'a> {
    /// The Surface.
    pub key: &'a SurfaceKey,
    /// Its place among the open Surfaces, in instance order.
    pub index: usize,
    /// How many Surfaces are open.
    pub count: usize,
    /// The width of the host's container in the parent window
    /// ([`HostContainer`](crate::platform::HostContainer)), in logical pixels: the area the
    /// returned [`Rect`](crate::Rect) is measured in.
    pub width: u32,
    /// The height of the host's container, in logical pixels.
    pub height: u32,
    /// The height the page last asked for with `LineUpSurface.resize`, clamped to
    /// `HostBuilder::resize_bounds`; `None` until it asks.
    pub requested_height: Option<u32>,
}

/// One standard component to place in the window of the child views, for
/// [`HostDelegate::request_component_placement`] (R-STD-13). Components sit in a layer over the
/// Surfaces' views: never under a Surface's pixels, whatever area they get.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ComponentSlot<'a> {
    /// The component instance.
    pub key: &'a SurfaceKey,
    /// Which component it is.
    pub kind: ComponentKind,
    /// The width of the host's container in the window
    /// ([`HostContainer`](crate::platform::HostContainer)), in logical pixels: the area the
    /// returned [`Rect`](crate::Rect) is measured in.
    pub width: u32,
    /// The height of the host's container, in logical pixels.
    pub height: u32,
}

/// The gap between two components in the default column, in logical pixels.
pub const COMPONENT_GAP: u32 = 8;

/// The width of the default column of components, in logical pixels (narrower windows: all of
/// their width less the margins).
pub const COMPONENT_COLUMN_WIDTH: u32 = 420;

impl ComponentSlot<'_> {
    /// The default area: a column at the right edge of the window, [`COMPONENT_COLUMN_WIDTH`]
    /// wide, [`COMPONENT_GAP`] from its edges, as tall as the window less the gaps. The
    /// conversation's components are boxes in it from its top, in open order, the column as
    /// tall as they are (then it scrolls).
    pub fn column(&self) -> Rect {
        let width = COMPONENT_COLUMN_WIDTH.min(self.width.saturating_sub(2 * COMPONENT_GAP));
        let x = self.width.saturating_sub(width + COMPONENT_GAP);
        Rect {
            x: i32::try_from(x).unwrap_or(0),
            y: i32::try_from(COMPONENT_GAP).unwrap_or(0),
            width: width.max(1),
            height: self.height.saturating_sub(2 * COMPONENT_GAP).max(1),
        }
    }
}

/// Receives the host's notifications. Every method has a default that does nothing, so an
/// embedder implements only what it needs. The host calls these on the event-loop thread, holding
/// no lock, after the engine's callback has returned.
pub trait HostDelegate {
    /// A message for the agent. (The host's outbound callback gets it too.)
    fn notify_outbound(&mut self, message: &Message) {
        let _ = message;
    }

    /// A Surface's webview was created.
    fn notify_opened(&mut self, key: &SurfaceKey, app: &InlineApp) {
        let _ = (key, app);
    }

    /// An MCP App view's webview was created (R-MCP-7): the server, the resource's `_meta.ui`
    /// (`prefersBorder` is a hint for the embedder) and the tool whose result it shows. It is
    /// laid out, hidden, shown and closed as a Surface is, and never hibernates.
    fn notify_mcp_opened(&mut self, key: &SurfaceKey, view: &McpViewOpen) {
        let _ = (key, view);
    }

    /// A Surface's page ran its script and received its state; for an MCP App view, the host
    /// answered its `ui/initialize` (R-MCP-8).
    fn notify_ready(&mut self, key: &SurfaceKey) {
        let _ = key;
    }

    /// A Surface's page loaded a new document of its own (R-UI-10); it gets its state again
    /// after its `ready`.
    fn notify_reloaded(&mut self, key: &SurfaceKey) {
        let _ = key;
    }

    /// A capability call's handler starts ([`Activity`]: what, when, for whom, under which
    /// grant). The session keeps the list ([`Host::sessions`](crate::Host::sessions), then
    /// `Session::capabilities().activity()`); when nothing of the call was visible
    /// ([`Activity::unseen`]) the host also shows its own notice, unless
    /// [`HostBuilder::activity_notices`](crate::HostBuilder::activity_notices) turned it off,
    /// and then this is where the embedder shows it (original §5.3).
    fn notify_capability_ran(&mut self, activity: &Activity) {
        let _ = activity;
    }

    /// A Surface was closed, and why.
    fn notify_closed(&mut self, key: &SurfaceKey, reason: &CloseReason) {
        let _ = (key, reason);
    }

    /// A Surface's web process ended (crash, out of memory, killed). Next the Surface is
    /// reopened in place with its last state ([`notify_closed`](HostDelegate::notify_closed)
    /// with [`CloseReason::Reopened`], then [`notify_opened`](HostDelegate::notify_opened) of
    /// the new generation), or, past `Limits::max_reopens_per_window` or with
    /// `HostBuilder::reopen_lost_surfaces(false)`, closed with
    /// [`CloseReason::Gone`]`(`[`GoneReason::Crashed`](lineup_host_core::GoneReason::Crashed)`)`
    /// while the agent gets `close` with reason `crashed` (R-UI-12).
    fn notify_crashed(&mut self, key: &SurfaceKey) {
        let _ = key;
    }

    /// A Surface's page stopped answering for longer than the hang watchdog's deadline
    /// (`HostBuilder::hang_deadline`, or `HostBuilder::first_ready_deadline` before its first
    /// `ready`); its web process is being terminated. Then it is reopened or closed as after
    /// [`notify_crashed`](HostDelegate::notify_crashed), with reason `unresponsive` (R-UI-12).
    fn notify_unresponsive(&mut self, key: &SurfaceKey) {
        let _ = key;
    }

    /// An inbound envelope was refused; `line` is the number the caller gave it, if any. Its
    /// answer (`client.error` or `app.result`) went out as an outbound message.
    fn notify_rejected(&mut self, error: &ProtocolError, line: Option<u64>) {
        let _ = (error, line);
    }

    /// A message from a Surface's page was dropped and counted, never forwarded (R-UI-7).
    fn notify_dropped(&mut self, key: &SurfaceKey, error: &ProtocolError) {
        let _ = (key, error);
    }

    /// A Surface's webview refused something its page tried.
    fn notify_refused(&mut self, key: &SurfaceKey, refusal: &Refusal) {
        let _ = (key, refusal);
    }

    /// A Surface's page reported a console message, an uncaught error, an unhandled rejection or
    /// a CSP violation (R-DIAG-1), within its diagnostic budget
    /// (`Limits::max_diagnostics_per_window`). Everything in it but the CSP hint and the host's
    /// `suppressed` notes is **page-supplied**: a hostile page can forge any of it. It is for the
    /// embedder and the Surface's author; the agent never gets it.
    fn notify_diagnostic(&mut self, key: &SurfaceKey, diagnostic: &Diagnostic) {
        let _ = (key, diagnostic);
    }

    /// A Surface's page asked for a height with `LineUpSurface.resize(height)`; `height` is
    /// clamped to `HostBuilder::resize_bounds`, in logical pixels.
    ///
    /// In window placement the host has already set the window's inner height. In child-view
    /// placement the host lays the views out again right after this, and
    /// [`HostDelegate::request_child_placement`] gives the view that height by default.
    fn notify_resize(&mut self, key: &SurfaceKey, height: u32) {
        let _ = (key, height);
    }

    /// A page's `LineUpSurface.resize(requested)` and the `height` it got after clamping to
    /// `HostBuilder::resize_bounds`; `clamped` says whether the bounds changed it (beyond
    /// rounding). The default hands `height` to [`HostDelegate::notify_resize`].
    fn notify_resize_request(&mut self, key: &SurfaceKey, height: u32, clamped: bool) {
        let _ = clamped;
        self.notify_resize(key, height);
    }

    /// Where a child view goes. The default takes
    /// [`HostDelegate::request_child_bounds`] and gives the view the height its page asked for
    /// (`slot.requested_height`), so a page's `LineUpSurface.resize` changes its height; override
    /// this to place views by key or to ignore page requests.
    fn request_child_placement(&mut self, slot: &ChildSlot<'_>) -> Rect {
        let mut bounds = self.request_child_bounds(slot.index, slot.count, slot.width, slot.height);
        if let Some(height) = slot.requested_height {
            bounds.height = height;
        }
        bounds
    }

    /// The area of the window of the child views
    /// ([`HostBuilder::child_views_in`](crate::HostBuilder::child_views_in)) that a standard
    /// component drawn by the built-in renderer goes in, over the Surfaces (R-STD-13). The
    /// components of one conversation given the same area are boxes of one view there, from its
    /// top in open order, the view as tall as they are (at most the area, then it scrolls); an
    /// instance keeps the area it opened in. The default is [`ComponentSlot::column`]; a kiosk
    /// answers by instance id. Asked when a component opens and, for each area in use, when the
    /// window is resized.
    fn request_component_placement(&mut self, slot: &ComponentSlot<'_>) -> Rect {
        slot.column()
    }

    /// The isolation probe failed: no Surface will be served (R-SEC-8).
    fn notify_probe_failed(&mut self, reason: &str) {
        let _ = reason;
    }

    /// Where child view `index` of `count` goes inside a parent whose content area is
    /// `width` × `height` logical pixels. The default lays the views out in equal columns.
    fn request_child_bounds(
        &mut self,
        index: usize,
        count: usize,
        width: u32,
        height: u32,
    ) -> Rect {
        columns(index, count, width, height)
    }
}

/// Equal columns, left to right.
pub(crate) fn columns(index: usize, count: usize, width: u32, height: u32) -> Rect {
    let count = u32::try_from(count.max(1)).unwrap_or(u32::MAX);
    let index = u32::try_from(index).unwrap_or(0).min(count - 1);
    let column = width / count;
    Rect {
        x: i32::try_from(column * index).unwrap_or(i32::MAX),
        y: 0,
        width: column,
        height,
    }
}

/// A delegate that does nothing.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoDelegate;

impl HostDelegate for NoDelegate {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_split_the_width() {
        assert_eq!(
            columns(0, 2, 800, 600),
            Rect {
                x: 0,
                y: 0,
                width: 400,
                height: 600
            }
        );
        assert_eq!(
            columns(1, 2, 800, 600),
            Rect {
                x: 400,
                y: 0,
                width: 400,
                height: 600
            }
        );
        assert_eq!(
            columns(5, 0, 800, 600),
            Rect {
                x: 0,
                y: 0,
                width: 800,
                height: 600
            }
        );
    }
}
