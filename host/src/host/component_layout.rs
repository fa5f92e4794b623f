//! Where the built-in renderer draws components (R-STD-13, §4 of standard-components.md): one
//! [`ComponentBoard`] per placement target, each instance a box in it. Without child views a
//! conversation's target is a window of its own; with them, the area of the window of the
//! child views that [`HostDelegate::request_component_placement`] names for an instance (the
//! default column, a kiosk region): the instances of one conversation given the same area share
//! one board there. Every board is in one web process. An instance keeps the board it opened
//! in; the boards' areas are asked again when the window is resized. One board is kept warm
//! (started at an idle turn, never while a Surface opens), so a conversation's first component
//! adds a box to a loaded view instead of starting one.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use lineup_host_core::{ComponentKind, SessionId, SurfaceKey};
use lineup_webview_shell::tao::window::Window;
use lineup_webview_shell::WindowMaker;
use lineup_webview_shell::{ComponentBoard, ComponentOptions, ComponentProcess, Rect, ShellError};

use crate::delegate::{ComponentSlot, HostDelegate};

/// One board and what it is for.
struct Placed {
    session: SessionId,
    /// Its area in the window of the child views; `None` for a window of its own.
    area: Option<Rect>,
    board: ComponentBoard,
    /// Since when it holds no box: it goes at a later turn ([`ComponentBoards::sweep`]), so that
    /// a question replaced by another (a close, then an open, in one turn) stays in its window.
    empty_since: Option<Instant>,
}

/// How long an empty board is kept for a box that comes back (a replace).
const KEEP_EMPTY: Duration = Duration::from_secs(1);

/// The boards, and which board each instance is a box of.
///
/// Invariant: a board that holds no instance of `of` has `empty_since` set, and goes at the
/// first sweep [`KEEP_EMPTY`] later.
#[derive(Default)]
pub(super) struct ComponentBoards {
    /// The web process every board shares, made with the first.
    process: Option<ComponentProcess>,
    boards: HashMap<u64, Placed>,
    next: u64,
    of: HashMap<SurfaceKey, (u64, ComponentKind)>,
    /// A board started ahead, with no box yet, and whether it has the high-contrast look: the
    /// next conversation's first component takes it instead of starting a view (§4 of
    /// standard-components.md, "one warm view").
    warm: Option<(ComponentBoard, bool)>,
}

/// Where a new instance goes.
pub(super) enum Target<'a> {
    /// Its conversation's window.
    Window,
    /// The window of the child views, where the delegate says.
    Child {
        /// The window.
        parent: &'a Window,
        /// Who places it.
        delegate: &'a mut dyn HostDelegate,
    },
}

impl ComponentBoards {
    /// The board `key` (a `kind`) goes in at `target`, made (with `options`' look) when its
    /// conversation has none there yet.
    pub(super) fn board_for(
        &mut self,
        event_loop: &dyn WindowMaker,
        key: &SurfaceKey,
        kind: ComponentKind,
        target: Target<'_>,
        options: &ComponentOptions,
        hidden: bool,
    ) -> Result<(u64, ComponentBoard), ShellError> {
        let session = key.session;
        let (area, parent) = match target {
            Target::Window => (None, None),
            Target::Child { parent, delegate } => {
                let slot = slot(parent, key, kind);
                (
                    Some(delegate.request_component_placement(&slot)),
                    Some(parent),
                )
            }
        };
        if let Some((id, placed)) = self
            .boards
            .iter_mut()
            .find(|(_, p)| p.session == session && p.area == area)
        {
            placed.empty_since = None;
            return Ok((*id, placed.board.clone()));
        }
        let board = match self.take_warm(area, options) {
            Some(board) => board,
            None => self.start(event_loop, parent, area, options)?,
        };
        // A hidden conversation's new board stays hidden until the conversation is shown.
        board.set_visible(!hidden);
        self.next += 1;
        let placed = Placed {
            session,
            area,
            board: board.clone(),
            empty_since: None,
        };
        self.boards.insert(self.next, placed);
        Ok((self.next, board))
    }

    /// Starts the warm board when there is none: in `parent` (hidden, to be moved to its area)
    /// with child views, else a window; it is in the shared process like every board.
    pub(super) fn warm_up(
        &mut self,
        event_loop: &dyn WindowMaker,
        parent: Option<&Window>,
        options: &ComponentOptions,
    ) {
        if self.warm.is_some() {
            return;
        }
        let area = parent.map(|_| Rect {
            x: 0,
            y: 0,
            width: 1,
            height: 1,
        });
        match self.start(event_loop, parent, area, options) {
            Ok(board) => self.warm = Some((board, options.high_contrast())),
            Err(e) => tracing::debug!("no warm component board: {e}"),
        }
    }

    /// Whether a warm board waits.
    pub(super) fn has_warm(&self) -> bool {
        self.warm.is_some()
    }

    /// The warm board for a new board at `area` with `options`' look, moved there; `None` when
    /// none waits or it was started for the other kind of place or look.
    fn take_warm(
        &mut self,
        area: Option<Rect>,
        options: &ComponentOptions,
    ) -> Option<ComponentBoard> {
        let (_, contrast) = self.warm.as_ref()?;
        if *contrast != options.high_contrast() {
            self.warm = None;
            return None;
        }
        let (board, _) = self.warm.take()?;
        match area {
            Some(area) if board.is_in_parent() => board.set_area(area),
            None if !board.is_in_parent() => {}
            _ => return None,
        }
        Some(board)
    }

    /// A new board at `area` of `parent` (a window of its own without them).
    fn start(
        &mut self,
        event_loop: &dyn WindowMaker,
        parent: Option<&Window>,
        area: Option<Rect>,
        options: &ComponentOptions,
    ) -> Result<ComponentBoard, ShellError> {
        let process = self.process();
        match (parent, area) {
            (Some(parent), Some(area)) => {
                ComponentBoard::in_parent(event_loop, parent, area, process.as_ref(), options)
            }
            _ => ComponentBoard::window(event_loop, process.as_ref(), options),
        }
    }

    /// Shows or hides every board of `session`.
    pub(super) fn set_session_visible(&mut self, session: SessionId, visible: bool) {
        for placed in self.boards.values().filter(|p| p.session == session) {
            placed.board.set_visible(visible);
        }
    }

    /// `key` (a `kind`) is a box of board `id` now.
    pub(super) fn placed(&mut self, key: SurfaceKey, kind: ComponentKind, id: u64) {
        self.of.insert(key, (id, kind));
    }

    /// `key` went; its board is kept a moment for a box that comes back, then goes
    /// ([`ComponentBoards::sweep`]).
    pub(super) fn removed(&mut self, key: &SurfaceKey) {
        let Some((id, _)) = self.of.remove(key) else {
            return;
        };
        if !self.of.values().any(|(other, _)| *other == id) {
            if let Some(placed) = self.boards.get_mut(&id) {
                placed.empty_since = Some(Instant::now());
            }
        }
    }

    /// Drops the boards that have held no box for [`KEEP_EMPTY`], and the shared process with
    /// the last board; returns when to look again while an empty board waits.
    pub(super) fn sweep(&mut self) -> Option<Instant> {
        self.boards.retain(|_, placed| {
            placed
                .empty_since
                .is_none_or(|since| since.elapsed() < KEEP_EMPTY)
        });
        if self.boards.is_empty() && self.warm.is_none() {
            self.process = None;
        }
        self.boards
            .values()
            .filter_map(|p| p.empty_since)
            .min()
            .map(|since| since + KEEP_EMPTY)
    }

    /// Asks `delegate` again for each board in `parent` (by one of its instances) and moves it.
    pub(super) fn relayout(&mut self, parent: &Window, delegate: &mut dyn HostDelegate) {
        for (id, placed) in &mut self.boards {
            let Some(old) = placed.area else { continue };
            let Some((key, (_, kind))) = self.of.iter().find(|(_, (b, _))| b == id) else {
                continue;
            };
            let area = delegate.request_component_placement(&slot(parent, key, *kind));
            if area != old {
                placed.area = Some(area);
                placed.board.set_area(area);
            }
        }
    }

    /// The shared process, made on first use; `None` when it cannot be made (each board then
    /// has one of its own).
    fn process(&mut self) -> Option<ComponentProcess> {
        if self.process.is_none() {
            match ComponentProcess::new() {
                Ok(process) => self.process = Some(process),
                Err(e) => tracing::warn!("no shared component process: {e}"),
            }
        }
        self.process.clone()
    }
}

/// The slot of `key` (a `kind`) in `parent`, for the delegate.
fn slot<'a>(parent: &Window, key: &'a SurfaceKey, kind: ComponentKind) -> ComponentSlot<'a> {
    // The host's container's size: areas are in its coordinates (#49 item 3).
    let size = lineup_webview_shell::child_area_size(parent);
    let (width, height) = (size.width, size.height);
    ComponentSlot {
        key,
        kind,
        width,
        height,
    }
}
