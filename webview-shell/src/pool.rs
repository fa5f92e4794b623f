//! The warm pool (#12): blank, isolated webviews started ahead of the Surfaces that will use
//! them, so that an open does not wait for a web context and a sandboxed web process to start.
//!
//! A pool view is a Surface view like any other ([`PlatformView`], same context hardening, same
//! sandbox, same bridge, same policy handlers), created hidden under a fresh random token and
//! already loading its own future document URL. Its scheme handler serves nothing yet: the
//! request waits at a [`Gate`] that is held until a Surface takes the view, binds its server (a
//! document assembled for that very token) and, once the isolation probe passed, opens the gate
//! (R-SEC-8). Until then no Surface's bytes can reach it. A view is taken once and never goes
//! back: when its Surface closes, it is destroyed like a cold-opened one.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use crate::windows::WindowMaker;
use lineup_host_core::InlineBundle;
use lineup_surface_runtime::{DocumentOptions, SurfaceDocument, SurfaceServer, SurfaceToken};

use crate::config::{Placement, Rect, ViewConfig};
use crate::error::ShellError;
use crate::event::ViewEvent;
use crate::gate::Gate;
use crate::platform::PlatformView;
use crate::view_start::ViewStart;

/// Where a pool view's events go once a Surface took it; before that they are dropped.
type SinkSlot = Rc<RefCell<Option<Box<dyn Fn(ViewEvent)>>>>;

/// One started, untaken view.
pub(crate) struct Pooled {
    pub(crate) view: PlatformView,
    pub(crate) token: SurfaceToken,
    pub(crate) gate: Rc<Gate>,
    sink: SinkSlot,
    /// Its web process ended before it was taken: it is never handed out.
    lost: Rc<Cell<bool>>,
}

impl Pooled {
    /// Starts a hidden view under a fresh token, its document request held: in a window of
    /// its own, or, with `parent`, as a hidden child view of that window (the embedder's).
    pub(crate) fn start(
        target: &dyn WindowMaker,
        config: &ViewConfig,
        parent: Option<&tao::window::Window>,
    ) -> Result<Self, ShellError> {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes)
            .map_err(|e| ShellError::Platform(format!("no random source: {e}")))?;
        let token = SurfaceToken::from_random_bytes(bytes);
        // Never served: the gate stays held until a Surface's own server replaces it.
        let blank = InlineBundle::new("", "", "")
            .map_err(|e| ShellError::Platform(format!("blank bundle: {e}")))?;
        let placeholder = SurfaceServer::new(
            token.clone(),
            SurfaceDocument::assemble(&blank, &DocumentOptions::default()),
        );
        let sink: SinkSlot = Rc::new(RefCell::new(None));
        let lost = Rc::new(Cell::new(false));
        let (forward, lost_flag) = (Rc::clone(&sink), Rc::clone(&lost));
        let gate = Gate::held();
        let view = PlatformView::new(
            target,
            placeholder,
            config,
            match parent {
                Some(parent) => Placement::Child {
                    parent,
                    bounds: Rect {
                        x: 0,
                        y: 0,
                        width: 1,
                        height: 1,
                    },
                },
                None => Placement::Window {
                    title: String::new(),
                    width: 480,
                    height: 360,
                },
            },
            ViewStart::HiddenSurface,
            Box::new(move |event| match forward.borrow().as_ref() {
                Some(sink) => sink(event),
                None => {
                    if matches!(
                        event,
                        ViewEvent::Crashed | ViewEvent::MemoryExceeded | ViewEvent::Unresponsive
                    ) {
                        lost_flag.set(true);
                    }
                }
            }),
            Rc::clone(&gate),
        )?;
        Ok(Self {
            view,
            token,
            gate,
            sink,
            lost,
        })
    }

    /// Whether the view can still be handed out.
    pub(crate) fn usable(&self) -> bool {
        !self.lost.get()
    }

    /// Whether the view was started as a child view.
    pub(crate) fn is_child(&self) -> bool {
        self.view.is_child()
    }

    /// Gives the view to a Surface: its events go to `events`, `server` answers its scheme, its
    /// window is titled, sized and shown, or, for a child view, it is placed at its bounds and
    /// shown. The caller settles the gate.
    pub(crate) fn bind(
        self,
        server: SurfaceServer,
        placement: &Placement<'_>,
        events: Box<dyn Fn(ViewEvent)>,
    ) -> Result<(PlatformView, Rc<Gate>), ShellError> {
        match placement {
            Placement::Window {
                title,
                width,
                height,
            } if !self.is_child() => {
                *self.sink.borrow_mut() = Some(events);
                self.view.bind(server, title, *width, *height)?;
            }
            Placement::Child { bounds, .. } if self.is_child() => {
                *self.sink.borrow_mut() = Some(events);
                self.view.bind_child(server, *bounds)?;
            }
            Placement::Window { .. } | Placement::Child { .. } => {
                return Err(ShellError::Platform(
                    "a pool view serves only the placement it was started for".to_owned(),
                ))
            }
        }
        Ok((self.view, self.gate))
    }
}
