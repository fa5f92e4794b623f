//! A view's events, delivered from the main loop after the engine's callback has returned.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::{Rc, Weak};

use gtk::glib;

use crate::event::ViewEvent;

/// The view's events, delivered from the main loop after the engine's callback has returned,
/// so that the owner may close the view from its event handler.
pub(super) struct EventQueue {
    pending: RefCell<VecDeque<ViewEvent>>,
    scheduled: Cell<bool>,
    open: Cell<bool>,
    sink: Box<dyn Fn(ViewEvent)>,
}

impl EventQueue {
    pub(super) fn new(sink: Box<dyn Fn(ViewEvent)>) -> Rc<Self> {
        Rc::new(Self {
            pending: RefCell::new(VecDeque::new()),
            scheduled: Cell::new(false),
            open: Cell::new(true),
            sink,
        })
    }

    pub(super) fn push(self: &Rc<Self>, event: ViewEvent) {
        if !self.open.get() {
            return;
        }
        self.pending.borrow_mut().push_back(event);
        if !self.scheduled.replace(true) {
            let queue = Rc::downgrade(self);
            glib::idle_add_local_full(glib::Priority::DEFAULT, move || {
                if let Some(queue) = queue.upgrade() {
                    queue.deliver();
                }
                glib::ControlFlow::Break
            });
        }
    }

    fn deliver(&self) {
        self.scheduled.set(false);
        loop {
            if !self.open.get() {
                self.pending.borrow_mut().clear();
                return;
            }
            // The borrow ends before the sink runs, so the sink may push or close.
            let next = self.pending.borrow_mut().pop_front();
            match next {
                Some(event) => {
                    if matches!(event, ViewEvent::Ipc(_)) {
                        // For `lineup-bench`'s patch profile: the queue's hop is done.
                        tracing::debug!(target: "lineup_phase", phase = "bridge_message_delivered");
                    }
                    (self.sink)(event)
                }
                None => return,
            }
        }
    }

    pub(super) fn close(&self) {
        self.open.set(false);
        self.pending.borrow_mut().clear();
    }
}

pub(super) fn push(queue: &Weak<EventQueue>, event: ViewEvent) {
    if let Some(queue) = queue.upgrade() {
        queue.push(event);
    }
}
