//! The isolation probe while it runs (R-SEC-8): its view, what its page reported, the network
//! check's listeners (R-SEC-3), and the bounded retry of an attempt that learned nothing.

use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::rc::Rc;
use std::time::{Duration, Instant};

use crate::windows::WindowMaker;

use crate::config::{Placement, ViewConfig};
use crate::error::ShellError;
use crate::event::ViewEvent;
use crate::gate::Gate;
use crate::platform::{check_web_processes_sandboxed, web_processes, PlatformView};
use crate::probe::{network_verdict, probe_server, verdict, ProbeReport, SandboxCheck};
use crate::view_start::ViewStart;

/// How many times the probe page is loaded at most: an attempt whose web process ended before
/// it reported, or before its sandbox could be read, learned nothing and is tried again, up to
/// this many attempts in all, within the one [`ViewConfig::probe_timeout`].
pub(crate) const MAX_PROBE_ATTEMPTS: u32 = 3;

/// How long after the report the probe waits for its page's preconnect to show at either
/// listener before it judges on what it has: the page preconnects before its script runs, but
/// the network process connects on its own schedule.
const NETWORK_GRACE: Duration = Duration::from_millis(300);

/// How long a retry waits at most for WebKit to report the previous attempt's web process
/// ended before it loads the page again; the report comes within a turn or two of the loop.
const RESTART_WAIT: Duration = Duration::from_secs(2);

/// A probe that has not decided yet.
///
/// Invariants: `attempt` counts the loads of the probe page, from 1, and never passes
/// [`MAX_PROBE_ATTEMPTS`]; `seen` holds only what the current attempt's page reported; the
/// verdict is `Ok` only after a report and a sandbox check that read at least one web process,
/// each one read in a mount namespace of its own.
pub(crate) struct RunningProbe {
    view: PlatformView,
    seen: Rc<RefCell<ProbeSeen>>,
    deadline: Instant,
    processes_before: HashSet<u32>,
    attempt: Cell<u32>,
    /// Set while a retry waits for the previous web process's end to be reported (its event
    /// is delivered on a later turn of the loop): the page is loaded again only after it, so
    /// that the old process's end is never taken for the new attempt's.
    restarting: Cell<Option<Instant>>,
    /// With the refusing proxy on, the network check's two listeners.
    network: Option<NetworkCheck>,
    /// Runs between the listing of the probe's web processes and the read of their namespaces.
    #[cfg(feature = "test-controls")]
    hold: RefCell<Option<ProbeHold>>,
    /// A test's verdict: `Some(None)` holds the probe undecided, `Some(Some(reason))` fails it.
    #[cfg(feature = "test-controls")]
    forced: RefCell<Option<Option<String>>>,
}

/// A test's hold on the probe between the listing of its web processes and the check.
#[cfg(feature = "test-controls")]
pub(crate) type ProbeHold = Box<dyn FnMut(&mut HashSet<u32>)>;

/// What the probe page of the current attempt did.
#[derive(Default)]
struct ProbeSeen {
    report: Option<(ProbeReport, Instant)>,
    crashed: bool,
}

/// Why an attempt learned nothing.
enum Inconclusive {
    /// The page's web process ended before it reported.
    Crashed,
    /// Every web process listed ended before its namespace was read (or none was found).
    Vanished(Vec<u32>),
}

/// The probe's network check (R-SEC-3): its page preconnects to `canary`, and its view's proxy
/// is `witness` instead of the refusing endpoint. The proxy honoured shows as a connection at the
/// witness and none at the canary; the check settles as soon as the witness has seen one, so the
/// first Surface does not wait out a fixed delay.
struct NetworkCheck {
    canary: TcpListener,
    canary_addr: SocketAddr,
    witness: TcpListener,
    witness_port: u16,
    /// Connections that reached each, so far.
    at_canary: Cell<usize>,
    at_witness: Cell<usize>,
}

impl RunningProbe {
    /// Starts the probe: its page loads in a hidden window configured as every Surface's view
    /// is, but for its proxy, the network check's witness.
    pub(crate) fn start(target: &dyn WindowMaker, config: &ViewConfig) -> Result<Self, ShellError> {
        let network = if config.network_proxy() {
            Some(NetworkCheck::new()?)
        } else {
            None
        };
        let server = probe_server(network.as_ref().map(|n| n.canary_addr))?;
        let probe_config = match &network {
            Some(network) => config.clone().with_probe_proxy(network.witness_port),
            None => config.clone(),
        };
        let seen = Rc::new(RefCell::new(ProbeSeen::default()));
        let recorder = Rc::clone(&seen);
        let processes_before = web_processes();
        let placement = Placement::Window {
            title: "lineup isolation probe".to_owned(),
            width: 320,
            height: 200,
        };
        let view = PlatformView::new(
            target,
            server,
            &probe_config,
            placement,
            ViewStart::HiddenSurface,
            Box::new(move |event| record(&recorder, event)),
            Gate::open(),
        )
        .map_err(|e| ShellError::ProbeFailed {
            reason: format!("the probe view could not be created: {e}"),
        })?;
        Ok(Self {
            view,
            seen,
            deadline: Instant::now() + config.probe_timeout(),
            processes_before,
            attempt: Cell::new(1),
            restarting: Cell::new(None),
            network,
            #[cfg(feature = "test-controls")]
            hold: RefCell::new(None),
            #[cfg(feature = "test-controls")]
            forced: RefCell::new(None),
        })
    }

    /// Holds every attempt between the listing of its web processes and the read of their
    /// namespaces, with `hold` given the pids listed.
    #[cfg(feature = "test-controls")]
    pub(crate) fn hold(&self, hold: ProbeHold) {
        *self.hold.borrow_mut() = Some(hold);
    }

    /// Holds the verdict (`None`) or makes it `failure`, whatever the probe page does.
    #[cfg(feature = "test-controls")]
    pub(crate) fn force(&self, failure: Option<String>) {
        *self.forced.borrow_mut() = Some(failure);
    }

    /// The verdict, or `None` while undecided; an attempt that learned nothing starts the next
    /// one here, and only the last one's failure is a verdict.
    pub(crate) fn outcome(&self, now: Instant, config: &ViewConfig) -> Option<Result<(), String>> {
        #[cfg(feature = "test-controls")]
        if let Some(forced) = &*self.forced.borrow() {
            return forced.clone().map(Err);
        }
        if let Some(network) = &self.network {
            network.poll();
            // A connection at the canary fails the probe at once, report or not.
            if let Err(reason) = network_verdict(network.at_canary.get()) {
                return Some(Err(reason));
            }
        }
        if let Some(since) = self.restarting.get() {
            let ended = self.seen.borrow().crashed;
            if !ended && now < since + RESTART_WAIT && now < self.deadline {
                return None;
            }
            self.restarting.set(None);
            return self.reload();
        }
        let (report, crashed) = {
            let seen = self.seen.borrow();
            (seen.report.clone(), seen.crashed)
        };
        let inconclusive = if let Some((report, at)) = report {
            let settled = self
                .network
                .as_ref()
                .is_none_or(|n| n.at_witness.get() > 0 || now >= at + NETWORK_GRACE);
            if !settled {
                return None;
            }
            match self.check(&report, config) {
                Ok(Some(inconclusive)) => inconclusive,
                Ok(None) => return Some(Ok(())),
                Err(reason) => return Some(Err(reason)),
            }
        } else if crashed {
            Inconclusive::Crashed
        } else if now >= self.deadline {
            return Some(Err(format!(
                "the probe page did not report within {:?}",
                config.probe_timeout()
            )));
        } else {
            return None;
        };
        self.retry(inconclusive)
    }

    /// Starts the next attempt after one that learned nothing, or, after the last, fails
    /// saying what happened each time.
    fn retry(&self, inconclusive: Inconclusive) -> Option<Result<(), String>> {
        let attempt = self.attempt.get();
        let what = match &inconclusive {
            Inconclusive::Crashed => "the probe's web process ended before it reported; with \
                 the web-process sandbox on, check that bubblewrap (bwrap) can run here"
                .to_owned(),
            Inconclusive::Vanished(pids) if pids.is_empty() => {
                "no web process of the probe was found to check its sandbox".to_owned()
            }
            Inconclusive::Vanished(pids) => format!(
                "the probe's web process{} {} ended before {} sandbox could be read, so it was \
                 neither confirmed nor refuted",
                if pids.len() == 1 { "" } else { "es" },
                pids.iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", "),
                if pids.len() == 1 { "its" } else { "their" },
            ),
        };
        if attempt >= MAX_PROBE_ATTEMPTS {
            return Some(Err(format!(
                "{what} (attempt {attempt} of {MAX_PROBE_ATTEMPTS})"
            )));
        }
        tracing::warn!(
            attempt,
            "isolation probe learned nothing: {what}; loading the probe page again"
        );
        self.attempt.set(attempt + 1);
        let reported_ended = std::mem::take(&mut *self.seen.borrow_mut()).crashed;
        if reported_ended {
            return self.reload();
        }
        // WebKit may not have seen the old process end yet: it is ended here (a no-op when
        // WebKit already knows), and the page loads again once that end has been reported, so
        // that the new load never goes to the old process and its end never counts against
        // the new attempt.
        self.view.terminate_web_process();
        self.restarting.set(Some(Instant::now()));
        None
    }

    /// Loads the probe page again for the next attempt, with nothing seen of it yet.
    fn reload(&self) -> Option<Result<(), String>> {
        *self.seen.borrow_mut() = ProbeSeen::default();
        match self.view.restore_document() {
            Ok(()) => None,
            Err(e) => Some(Err(format!(
                "the probe page could not be loaded again: {e}"
            ))),
        }
    }

    /// What the network check saw, for the log.
    pub(crate) fn network_seen(&self) -> String {
        self.network.as_ref().map_or_else(
            || "not checked (proxy off)".to_owned(),
            |n| {
                format!(
                    "{} connection(s) at the proxy, {} at the listener",
                    n.at_witness.get(),
                    n.at_canary.get()
                )
            },
        )
    }

    /// Closes the probe's view.
    pub(crate) fn close(self) {
        self.view.close();
    }

    /// The checks after a report: `Ok(None)` passed, `Ok(Some(_))` learned nothing.
    fn check(
        &self,
        report: &ProbeReport,
        config: &ViewConfig,
    ) -> Result<Option<Inconclusive>, String> {
        verdict(report, &self.view.hardening(), config)?;
        if config.web_sandbox() {
            #[cfg_attr(not(feature = "test-controls"), allow(unused_mut))]
            let mut started: HashSet<u32> = web_processes()
                .difference(&self.processes_before)
                .copied()
                .collect();
            #[cfg(feature = "test-controls")]
            if let Some(hold) = self.hold.borrow_mut().as_mut() {
                hold(&mut started);
            }
            match check_web_processes_sandboxed(&started) {
                SandboxCheck::Isolated { isolated, vanished } => {
                    if !vanished.is_empty() {
                        tracing::debug!(
                            isolated,
                            ?vanished,
                            "web processes that ended before the sandbox check were skipped"
                        );
                    }
                }
                SandboxCheck::Vanished(pids) => return Ok(Some(Inconclusive::Vanished(pids))),
                SandboxCheck::Failed(reason) => return Err(reason),
            }
        }
        if let Some(network) = &self.network {
            network.poll();
            network_verdict(network.at_canary.get())?;
            if network.at_witness.get() == 0 {
                tracing::debug!(
                    "the probe page's preconnect reached neither its proxy nor its listener \
                     within {NETWORK_GRACE:?}"
                );
            }
        }
        Ok(None)
    }
}

impl NetworkCheck {
    fn new() -> Result<Self, ShellError> {
        let (canary, canary_addr) = loopback_listener()?;
        let (witness, witness_addr) = loopback_listener()?;
        Ok(Self {
            canary,
            canary_addr,
            witness,
            witness_port: witness_addr.port(),
            at_canary: Cell::new(0),
            at_witness: Cell::new(0),
        })
    }

    /// Takes the connections waiting on both listeners (the kernel completes them without an
    /// accept) and closes them: the witness refuses, as the refusing endpoint would.
    fn poll(&self) {
        self.at_canary
            .set(self.at_canary.get() + accept_all(&self.canary));
        self.at_witness
            .set(self.at_witness.get() + accept_all(&self.witness));
    }
}

/// A non-blocking loopback listener for the network check, and its address.
fn loopback_listener() -> Result<(TcpListener, SocketAddr), ShellError> {
    let failed = |e: std::io::Error| ShellError::ProbeFailed {
        reason: format!("cannot listen on loopback for the network check: {e}"),
    };
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).map_err(failed)?;
    listener.set_nonblocking(true).map_err(failed)?;
    let addr = listener.local_addr().map_err(failed)?;
    Ok((listener, addr))
}

/// Accepts and closes every connection waiting on `listener`; returns how many there were.
fn accept_all(listener: &TcpListener) -> usize {
    let mut count = 0;
    while count < 1024 && listener.accept().is_ok() {
        count += 1;
    }
    count
}

fn record(seen: &RefCell<ProbeSeen>, event: ViewEvent) {
    match event {
        ViewEvent::Ipc(body) => {
            if let Some(report) = ProbeReport::from_ipc(&body) {
                seen.borrow_mut()
                    .report
                    .get_or_insert_with(|| (report, Instant::now()));
            }
        }
        ViewEvent::Crashed | ViewEvent::MemoryExceeded | ViewEvent::Unresponsive => {
            seen.borrow_mut().crashed = true
        }
        other => tracing::debug!(?other, "isolation probe view event"),
    }
}
