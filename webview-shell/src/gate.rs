//! The document gate of R-SEC-8 with a concurrent probe: a Surface view may be created (its
//! context, window and sandboxed web process started) while the isolation probe still runs, so
//! that the first Surface does not wait for the probe and then for its own process, one after the
//! other. What it may not do is load a byte of its document: every request of the Surface scheme
//! is held at the gate until the probe's verdict, then served if the probe passed and refused if
//! it failed. A gate opened or refused stays so.

use std::cell::RefCell;
use std::rc::Rc;

/// A request waiting at the gate; called with `true` to serve it, `false` to refuse it.
pub(crate) type Held = Box<dyn FnOnce(bool)>;

#[derive(Debug, Default)]
enum State {
    /// The probe is still running: requests wait.
    #[default]
    Held,
    /// The probe passed: requests are served at once.
    Open,
    /// The probe failed: requests are refused.
    Refused,
}

/// Whether a view's document requests may be served yet, and the requests waiting meanwhile
/// (kept apart from the state, so that a request is called with nothing borrowed).
pub(crate) struct Gate {
    state: RefCell<State>,
    waiting: RefCell<Vec<Held>>,
}

impl std::fmt::Debug for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gate")
            .field("state", &self.state.borrow())
            .field("waiting", &self.waiting.borrow().len())
            .finish()
    }
}

impl Gate {
    /// A gate for a view opened after the probe passed: every request is served.
    pub(crate) fn open() -> Rc<Self> {
        Rc::new(Self {
            state: RefCell::new(State::Open),
            waiting: RefCell::new(Vec::new()),
        })
    }

    /// A gate for a view opened while the probe runs: requests wait for the verdict.
    pub(crate) fn held() -> Rc<Self> {
        Rc::new(Self {
            state: RefCell::new(State::Held),
            waiting: RefCell::new(Vec::new()),
        })
    }

    /// Serves `request` now if the probe passed, refuses it now if it failed, and otherwise keeps
    /// it until [`Gate::pass`] or [`Gate::refuse`].
    pub(crate) fn admit(&self, request: Held) {
        let open = match &*self.state.borrow() {
            State::Open => true,
            State::Refused => false,
            State::Held => {
                self.waiting.borrow_mut().push(request);
                return;
            }
        };
        request(open);
    }

    /// The probe passed: the waiting requests are served, in order, and every later one at once.
    pub(crate) fn pass(&self) {
        self.settle(State::Open, true);
    }

    /// The probe failed: the waiting requests are refused, and every later one. Final.
    pub(crate) fn refuse(&self) {
        self.settle(State::Refused, false);
    }

    fn settle(&self, to: State, open: bool) {
        {
            let mut state = self.state.borrow_mut();
            // A refused gate never opens (fail closed); an open one is not closed again.
            if !matches!(*state, State::Held) {
                return;
            }
            *state = to;
        }
        let waiting = std::mem::take(&mut *self.waiting.borrow_mut());
        for request in waiting {
            request(open);
        }
    }

    /// How many requests wait at the gate.
    #[cfg(test)]
    pub(crate) fn waiting(&self) -> usize {
        self.waiting.borrow().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    /// Which request was answered, and whether it was served.
    type Answers = Rc<RefCell<Vec<(u32, bool)>>>;

    fn recorder() -> (Answers, impl Fn(u32) -> Held) {
        let log = Rc::new(RefCell::new(Vec::new()));
        let l = Rc::clone(&log);
        let make = move |n: u32| -> Held {
            let l = Rc::clone(&l);
            Box::new(move |open| l.borrow_mut().push((n, open)))
        };
        (log, make)
    }

    #[test]
    fn r_sec_8_held_requests_are_served_only_after_the_probe_passed() {
        let (log, req) = recorder();
        let gate = Gate::held();
        gate.admit(req(1));
        gate.admit(req(2));
        assert!(log.borrow().is_empty(), "nothing served before the verdict");
        assert_eq!(gate.waiting(), 2);
        gate.pass();
        assert_eq!(*log.borrow(), vec![(1, true), (2, true)]);
        gate.admit(req(3));
        assert_eq!(log.borrow().last(), Some(&(3, true)));
        assert_eq!(gate.waiting(), 0);
    }

    #[test]
    fn r_sec_8_a_failed_probe_refuses_held_and_later_requests_for_good() {
        let (log, req) = recorder();
        let gate = Gate::held();
        gate.admit(req(1));
        gate.refuse();
        gate.pass();
        gate.admit(req(2));
        assert_eq!(*log.borrow(), vec![(1, false), (2, false)]);
    }

    #[test]
    fn an_open_gate_serves_at_once() {
        let (log, req) = recorder();
        let gate = Gate::open();
        gate.admit(req(1));
        gate.refuse();
        gate.admit(req(2));
        assert_eq!(*log.borrow(), vec![(1, true), (2, true)]);
    }
}
