//! The hang watchdog (R-UI-12): whether each Surface's page still answers the host, decided from
//! signs of life the page cannot give for itself.
//!
//! Two signals, either of which counts once it has lasted the deadline:
//!
//! - the completion of a no-op script the host evaluates in the view, in a script world of the
//!   host's own ([`SurfaceView::ping`]): it completes only when the web process's main thread
//!   runs it, so a page spinning in `while (true) {}` never completes it, and nothing the page
//!   does makes it complete sooner;
//! - the engine's own view of its web process ([`SurfaceView::web_process_responsive`]).
//!
//! Before a page's first `ready`, the first-ready deadline applies instead (a page spinning in
//! its top-level script never says `ready`). A verdict of *hung* needs two checks in a row that
//! find the page overdue, with the event loop running between them, so that a host whose own
//! thread was busy does not take an answer still queued for it as a hang.
//!
//! This module only keeps time and decides; the host terminates the web process
//! ([`SurfaceView::terminate_web_process`]) and runs the crash path.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::{Duration, Instant};

use lineup_host_core::SurfaceKey;

use crate::port::PortView;

/// The hang deadline by default.
pub(crate) const DEFAULT_DEADLINE: Duration = Duration::from_secs(10);
/// The first-ready deadline by default: a first load includes starting a sandboxed web process.
pub(crate) const DEFAULT_FIRST_READY: Duration = Duration::from_secs(20);
/// The shortest deadline the watchdog takes; shorter ones are raised to it.
pub(crate) const MIN_DEADLINE: Duration = Duration::from_millis(100);
/// How long the host waits for the engine to report a termination it asked for before it ends
/// the Surface itself.
pub(crate) const TERMINATION_GRACE: Duration = Duration::from_secs(5);

/// How the watchdog is set up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WatchdogConfig {
    /// Whether views are watched at all.
    pub(crate) enabled: bool,
    /// How long a page that said `ready` may show no sign of life.
    pub(crate) deadline: Duration,
    /// How long a new page (a first open or a reopen) may take to say `ready`.
    pub(crate) first_ready: Duration,
}

impl Default for WatchdogConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            deadline: DEFAULT_DEADLINE,
            first_ready: DEFAULT_FIRST_READY,
        }
    }
}

impl WatchdogConfig {
    /// How often a watched page is asked for a sign of life: a twentieth of the deadline, within
    /// 50 ms ..= 500 ms, so a hang is found within the deadline plus about a tenth of it.
    pub(crate) fn period(&self) -> Duration {
        (self.deadline / 20).clamp(Duration::from_millis(50), Duration::from_millis(500))
    }
}

/// What one check asks of the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Nothing now.
    Wait,
    /// Evaluate the no-op script; its completion is a sign of life.
    Ping,
    /// The page is past its deadline: terminate its web process.
    Terminate,
    /// The engine never reported the termination the host asked for: end the Surface anyway.
    TerminationLost,
}

/// One view's watch.
#[derive(Debug)]
pub(crate) struct Watch {
    opened: Instant,
    ready: bool,
    /// When the page last showed a sign of life: its `ready`, or an answered ping.
    alive: Instant,
    /// When the last ping was sent.
    pinged: Option<Instant>,
    /// Whether a ping waits for its completion.
    outstanding: bool,
    /// When the last ping completed; set by the completion, taken by the next check.
    answered: Rc<Cell<Option<Instant>>>,
    /// Since when the engine reports the web process unresponsive.
    engine_unresponsive: Option<Instant>,
    /// Whether the previous check found the page overdue.
    overdue: bool,
    /// When the host asked the engine to terminate the web process.
    terminated: Option<Instant>,
}

impl Watch {
    /// Starts watching a view created at `now`.
    pub(crate) fn new(now: Instant) -> Self {
        Self {
            opened: now,
            ready: false,
            alive: now,
            pinged: None,
            outstanding: false,
            answered: Rc::new(Cell::new(None)),
            engine_unresponsive: None,
            overdue: false,
            terminated: None,
        }
    }

    /// The page said `ready` at `now`: from now on the hang deadline applies.
    pub(crate) fn ready(&mut self, now: Instant) {
        if !self.ready {
            self.ready = true;
            self.alive = self.alive.max(now);
            self.overdue = false;
        }
    }

    /// The view's main frame committed a new document at `now`: the web process is alive, and a
    /// ping sent to the document before it may never be answered, so none is awaited.
    pub(crate) fn committed(&mut self, now: Instant) {
        self.alive = self.alive.max(now);
        self.outstanding = false;
        self.overdue = false;
    }

    /// Where a ping's completion goes: the time it completed.
    pub(crate) fn answer_slot(&self) -> Rc<Cell<Option<Instant>>> {
        Rc::clone(&self.answered)
    }

    /// Checks the view at `now`; `engine_responsive` is the engine's own view of the web
    /// process. A [`Verdict::Ping`] counts as sent, a [`Verdict::Terminate`] as asked for.
    pub(crate) fn check(
        &mut self,
        now: Instant,
        engine_responsive: bool,
        config: &WatchdogConfig,
    ) -> Verdict {
        if let Some(asked) = self.terminated {
            return if now.saturating_duration_since(asked) >= TERMINATION_GRACE {
                self.terminated = Some(now);
                Verdict::TerminationLost
            } else {
                Verdict::Wait
            };
        }
        if let Some(at) = self.answered.take() {
            self.outstanding = false;
            self.alive = self.alive.max(at);
            self.overdue = false;
        }
        let past = |since: Instant, limit: Duration| now.saturating_duration_since(since) >= limit;
        let overdue = if self.ready {
            self.engine_unresponsive = match (engine_responsive, self.engine_unresponsive) {
                (true, _) => None,
                (false, since) => Some(since.unwrap_or(now)),
            };
            let engine_hung = self
                .engine_unresponsive
                .is_some_and(|since| past(since, config.deadline));
            // Silence counts from the last sign of life, but from no earlier than one period
            // before the ping went out: checked regularly that is the same, and a ping sent
            // late (the loop was not run for a while) still gets nearly the whole deadline.
            let period = config.period();
            let silent_since = self.pinged.map_or(self.alive, |at| {
                self.alive.max(at.checked_sub(period).unwrap_or(at))
            });
            engine_hung || (self.outstanding && past(silent_since, config.deadline))
        } else {
            past(self.opened, config.first_ready)
        };
        if overdue {
            if std::mem::replace(&mut self.overdue, true) {
                self.terminated = Some(now);
                return Verdict::Terminate;
            }
            return Verdict::Wait;
        }
        self.overdue = false;
        let due = self.pinged.is_none_or(|at| past(at, config.period()));
        if self.ready && !self.outstanding && due {
            self.outstanding = true;
            self.pinged = Some(now);
            return Verdict::Ping;
        }
        Verdict::Wait
    }

    /// When this watch next needs a check, at the latest.
    pub(crate) fn next_check(&self, now: Instant, config: &WatchdogConfig) -> Instant {
        if let Some(asked) = self.terminated {
            return asked + TERMINATION_GRACE;
        }
        if self.overdue {
            return now + config.period();
        }
        if self.ready {
            now + config.period()
        } else {
            self.opened + config.first_ready
        }
    }
}

/// The watches of every open Surface view, by key.
#[derive(Debug, Default)]
pub(crate) struct Watchdog {
    config: WatchdogConfig,
    watches: BTreeMap<SurfaceKey, Watch>,
}

impl Watchdog {
    /// A watchdog set up by `config`, watching nothing yet.
    pub(crate) fn new(config: WatchdogConfig) -> Self {
        Self {
            config,
            watches: BTreeMap::new(),
        }
    }

    /// Starts watching the view of `key`, created now.
    pub(crate) fn watch(&mut self, key: &SurfaceKey) {
        if self.config.enabled {
            self.watches.insert(key.clone(), Watch::new(Instant::now()));
        }
    }

    /// The page of `key` said `ready`.
    pub(crate) fn ready(&mut self, key: &SurfaceKey) {
        if let Some(watch) = self.watches.get_mut(key) {
            watch.ready(Instant::now());
        }
    }

    /// The main frame of `key` committed a new document.
    pub(crate) fn committed(&mut self, key: &SurfaceKey) {
        if let Some(watch) = self.watches.get_mut(key) {
            watch.committed(Instant::now());
        }
    }

    /// Stops watching the view of `key` (it closed).
    pub(crate) fn forget(&mut self, key: &SurfaceKey) {
        self.watches.remove(key);
    }

    /// Checks every watched view: pings those that are due, and returns the keys of those whose
    /// web process must be terminated or whose termination was never reported, with the time
    /// of the next check. `view` finds the open view of a key.
    pub(crate) fn check<'v>(
        &mut self,
        view: impl Fn(&SurfaceKey) -> Option<&'v dyn PortView>,
    ) -> (Vec<(SurfaceKey, Verdict)>, Option<Instant>) {
        let now = Instant::now();
        let mut act = Vec::new();
        let mut next: Option<Instant> = None;
        for (key, watch) in &mut self.watches {
            let Some(view) = view(key) else {
                continue;
            };
            match watch.check(now, view.web_process_responsive(), &self.config) {
                Verdict::Wait => {}
                Verdict::Ping => {
                    let slot = watch.answer_slot();
                    view.ping(Box::new(move || slot.set(Some(Instant::now()))));
                }
                verdict => act.push((key.clone(), verdict)),
            }
            let at = watch.next_check(now, &self.config);
            next = Some(next.map_or(at, |n| n.min(at)));
        }
        (act, next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn config(deadline: u64, first_ready: u64) -> WatchdogConfig {
        WatchdogConfig {
            enabled: true,
            deadline: ms(deadline),
            first_ready: ms(first_ready),
        }
    }

    /// Checks `watch` every `step` from `from` until `until`, answering pings at once while
    /// `answering(t)` holds; returns the time of the first `Terminate`.
    fn run(
        watch: &mut Watch,
        c: &WatchdogConfig,
        t0: Instant,
        (from, until, step): (u64, u64, u64),
        answering: impl Fn(u64) -> bool,
    ) -> Option<u64> {
        let mut t = from;
        while t <= until {
            match watch.check(t0 + ms(t), true, c) {
                Verdict::Terminate => return Some(t),
                Verdict::Ping if answering(t) => watch.answer_slot().set(Some(t0 + ms(t))),
                _ => {}
            }
            t += step;
        }
        None
    }

    #[test]
    fn r_ui_12_a_page_that_answers_is_never_terminated() {
        let c = config(2000, 5000);
        let t0 = Instant::now();
        let mut watch = Watch::new(t0);
        watch.ready(t0 + ms(300));
        assert_eq!(run(&mut watch, &c, t0, (300, 60_000, 10), |_| true), None);
    }

    #[test]
    fn r_ui_12_a_page_that_stops_answering_is_terminated_within_the_deadline_and_a_tenth() {
        let c = config(2000, 5000);
        assert_eq!(c.period(), ms(100));
        let t0 = Instant::now();
        let mut watch = Watch::new(t0);
        watch.ready(t0);
        // It answers until 1 s (its last answer is the ping of 900 ms), then spins.
        let at = run(&mut watch, &c, t0, (0, 10_000, 10), |t| t < 1000);
        let at = at.expect("terminated");
        assert!(
            at >= 900 + 2000,
            "terminated at {at} ms, before the deadline"
        );
        assert!(
            at <= 1000 + 2000 + 200,
            "terminated at {at} ms, later than the deadline and a tenth after the hang began"
        );
        // Asked once: later checks wait for the engine's report.
        assert_eq!(watch.check(t0 + ms(at + 10), true, &c), Verdict::Wait);
    }

    #[test]
    fn r_ui_12_one_overdue_check_is_not_enough() {
        let c = config(1000, 5000);
        let t0 = Instant::now();
        let mut watch = Watch::new(t0);
        watch.ready(t0);
        assert_eq!(watch.check(t0, true, &c), Verdict::Ping);
        // The host's own thread was busy for 5 s; the answer is still queued for it.
        assert_eq!(watch.check(t0 + ms(5000), true, &c), Verdict::Wait);
        // The loop ran and delivered it: no hang.
        watch.answer_slot().set(Some(t0 + ms(5001)));
        assert_ne!(watch.check(t0 + ms(5002), true, &c), Verdict::Terminate);
        // Control: without the answer the second overdue check terminates.
        let mut watch = Watch::new(t0);
        watch.ready(t0);
        watch.check(t0, true, &c);
        assert_eq!(watch.check(t0 + ms(5000), true, &c), Verdict::Wait);
        assert_eq!(watch.check(t0 + ms(5002), true, &c), Verdict::Terminate);
    }

    #[test]
    fn r_ui_12_before_ready_the_first_ready_deadline_applies() {
        let c = config(1000, 4000);
        let t0 = Instant::now();
        let mut watch = Watch::new(t0);
        // No pings before ready, and no hang before the first-ready deadline.
        for t in (0..4000).step_by(50) {
            assert_eq!(watch.check(t0 + ms(t), true, &c), Verdict::Wait, "at {t}");
        }
        assert_eq!(watch.next_check(t0, &c), t0 + ms(4000));
        assert_eq!(watch.check(t0 + ms(4000), true, &c), Verdict::Wait);
        assert_eq!(watch.check(t0 + ms(4050), true, &c), Verdict::Terminate);
        // Control: a page ready in time is pinged, not terminated.
        let mut watch = Watch::new(t0);
        watch.ready(t0 + ms(3900));
        assert_eq!(watch.check(t0 + ms(4000), true, &c), Verdict::Ping);
    }

    #[test]
    fn r_ui_12_the_engine_reporting_unresponsive_for_the_deadline_is_a_hang() {
        let c = config(1000, 4000);
        let t0 = Instant::now();
        let mut watch = Watch::new(t0);
        watch.ready(t0);
        // Pings are answered, yet the engine says the process is unresponsive.
        let mut terminated = None;
        for t in (0..3000).step_by(50) {
            let verdict = watch.check(t0 + ms(t), false, &c);
            if verdict == Verdict::Ping {
                watch.answer_slot().set(Some(t0 + ms(t)));
            }
            if verdict == Verdict::Terminate {
                terminated = Some(t);
                break;
            }
        }
        assert_eq!(terminated, Some(1050));
        // Control: a short spell of unresponsiveness is forgiven.
        let mut watch = Watch::new(t0);
        watch.ready(t0);
        for t in (0..3000).step_by(50) {
            let responsive = !(500..1200).contains(&t);
            let verdict = watch.check(t0 + ms(t), responsive, &c);
            assert_ne!(verdict, Verdict::Terminate, "at {t}");
            if verdict == Verdict::Ping {
                watch.answer_slot().set(Some(t0 + ms(t)));
            }
        }
    }

    #[test]
    fn r_ui_12_an_unreported_termination_ends_the_surface_after_the_grace() {
        let c = config(1000, 4000);
        let t0 = Instant::now();
        let mut watch = Watch::new(t0);
        watch.check(t0 + ms(4000), true, &c);
        assert_eq!(watch.check(t0 + ms(4001), true, &c), Verdict::Terminate);
        assert_eq!(
            watch.next_check(t0 + ms(4001), &c),
            t0 + ms(4001) + TERMINATION_GRACE
        );
        assert_eq!(
            watch.check(t0 + ms(4001) + TERMINATION_GRACE - ms(1), true, &c),
            Verdict::Wait
        );
        assert_eq!(
            watch.check(t0 + ms(4001) + TERMINATION_GRACE, true, &c),
            Verdict::TerminationLost
        );
    }

    #[test]
    fn a_commit_is_a_sign_of_life_and_forgets_the_ping_of_the_document_before() {
        let c = config(1000, 4000);
        let t0 = Instant::now();
        let mut watch = Watch::new(t0);
        watch.ready(t0);
        assert_eq!(watch.check(t0, true, &c), Verdict::Ping);
        // The page reloads; the ping sent to the old document is never answered.
        watch.committed(t0 + ms(500));
        assert_eq!(watch.check(t0 + ms(1200), true, &c), Verdict::Ping);
        // Control: that new ping unanswered is a hang once the deadline has passed.
        assert_eq!(watch.check(t0 + ms(2100), true, &c), Verdict::Wait);
        assert_eq!(watch.check(t0 + ms(2150), true, &c), Verdict::Wait);
        assert_eq!(watch.check(t0 + ms(2160), true, &c), Verdict::Terminate);
    }

    #[test]
    fn a_ping_sent_late_gets_the_deadline_less_one_period() {
        let c = config(1000, 4000);
        assert_eq!(c.period(), ms(50));
        let t0 = Instant::now();
        let mut watch = Watch::new(t0);
        watch.ready(t0);
        watch.check(t0, true, &c);
        watch.answer_slot().set(Some(t0 + ms(5)));
        // The loop was not run for 30 s: the next ping goes out only then.
        assert_eq!(watch.check(t0 + ms(30_000), true, &c), Verdict::Ping);
        assert_eq!(watch.check(t0 + ms(30_010), true, &c), Verdict::Wait);
        assert_eq!(watch.check(t0 + ms(30_900), true, &c), Verdict::Wait);
        // From 50 ms before that ping, the deadline passes at 30 950 ms; a second check confirms.
        assert_eq!(watch.check(t0 + ms(30_950), true, &c), Verdict::Wait);
        assert_eq!(watch.check(t0 + ms(30_960), true, &c), Verdict::Terminate);
    }

    #[test]
    fn the_period_is_a_twentieth_of_the_deadline_within_bounds() {
        assert_eq!(config(10_000, 1).period(), ms(500));
        assert_eq!(config(60_000, 1).period(), ms(500));
        assert_eq!(config(2000, 1).period(), ms(100));
        assert_eq!(config(100, 1).period(), ms(50));
    }
}
