//! The protocol stream on the process's standard output, protected from everything else in the
//! process and its children, and written from its own thread so that a slow or gone reader never
//! blocks the GUI event loop; when the reader is slow, page events give way and answers never do.

use std::collections::{BTreeMap, VecDeque};
use std::io::Write;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use lineup_host_core::{InstanceId, Message};

use lineup_webview_shell::{ProtocolStdout, ShellError};

/// How much may wait for a slow reader in a [`LineWriter`].
///
/// | bound | default |
/// | --- | --- |
/// | `max_waiting_events`: page events waiting; one more is dropped and counted | 4096 |
/// | `answers_high_water`: answers waiting when [`LineWriter::backpressure`] engages | 1024 |
/// | `answers_low_water`: answers waiting below which it releases | 512 |
///
/// Answers are never dropped, so their queue has no hard cap: the high-water mark asks whoever
/// feeds the host (the stdin reader of `lineup host --stdio`) to stop reading input until the
/// reader has caught up below the low-water mark (R-ENV-4). Answers made without input (a user
/// close) are bounded by the number of Surfaces and may pass the mark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct WriterLimits {
    /// How many page events may wait to be written; the newest beyond it is dropped.
    pub max_waiting_events: usize,
    /// How many answers may wait before [`LineWriter::backpressure`] engages.
    pub answers_high_water: usize,
    /// How few answers must wait before it releases again (kept below the high-water mark).
    pub answers_low_water: usize,
}

impl Default for WriterLimits {
    fn default() -> Self {
        Self {
            max_waiting_events: 4096,
            answers_high_water: 1024,
            answers_low_water: 512,
        }
    }
}

impl WriterLimits {
    /// The high-water mark at least 1, the low-water mark at least 1 and at most the high.
    fn normalized(self) -> Self {
        let high = self.answers_high_water.max(1);
        Self {
            max_waiting_events: self.max_waiting_events,
            answers_high_water: high,
            answers_low_water: self.answers_low_water.clamp(1, high),
        }
    }
}

/// What an outbound line is to the writer: whether it may give way to a slow reader.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LineKind {
    /// Never dropped: every `client.error`, `app.result`, `client.inventory`, `app.list`, and the
    /// user's `ui.event` `close` (R-ENV-5, R-UI-5).
    Answer,
    /// A page's `ui.event` other than `close`: dropped when `max_waiting_events` page events are
    /// waiting, and counted per Surface.
    PageEvent(InstanceId),
}

impl LineKind {
    /// The kind of `message`. A page cannot send an event named `close` (the host drops it,
    /// R-UI-5), so a `ui.event` `close` is always the user's and is an answer. Every type is
    /// named, with no fallback: a new one gets its kind by decision, not by default.
    pub fn of(message: &Message) -> Self {
        match message {
            Message::UiEvent(env) if env.payload.event.as_str() != "close" => {
                Self::PageEvent(env.payload.instance_id.clone())
            }
            // The user's close (R-UI-5).
            Message::UiEvent(_) => Self::Answer,
            // What the agent may use: one it lost would leave it on a stale revision (R-INV-1,
            // R-INV-2, R-CAP-1).
            Message::ClientInventory(_) | Message::AppList(_) => Self::Answer,
            // Answers to the agent's envelopes (R-ENV-5, R-CAP-4).
            Message::AppResult(_) | Message::ClientError(_) => Self::Answer,
            // Agent → client types: the host never sends them, and would not drop one if it did.
            Message::UiOpen(_)
            | Message::UiPatch(_)
            | Message::UiClose(_)
            | Message::AppCall(_) => Self::Answer,
        }
    }
}

/// Why a line was not queued for writing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    /// The reader is not keeping up: `capacity` page events are waiting, so this page event of
    /// Surface `instance` was dropped and counted. Answers never get this error.
    #[error(
        "the protocol reader is not keeping up: {capacity} page events are waiting; an event of surface {instance} was dropped"
    )]
    EventDropped {
        /// The Surface whose event was dropped.
        instance: InstanceId,
        /// [`WriterLimits::max_waiting_events`].
        capacity: usize,
    },
    /// The stream is closed (the reader went away); nothing more can be written.
    #[error("the protocol stream is closed: {0}")]
    Closed(String),
}

/// Called on the writer thread with `(instance, count)` for each Surface that lost page events,
/// once the queue has drained.
type DropReporter = Box<dyn FnMut(InstanceId, u64) + Send>;

/// What the writer thread and the senders share, under one lock.
struct State {
    /// One FIFO of everything kept, in the order it was sent.
    queue: VecDeque<(String, LineKind)>,
    /// Page events queued or being written.
    events_waiting: usize,
    /// Answers queued or being written.
    answers_waiting: usize,
    /// Whether back-pressure is engaged (between the high- and the low-water marks).
    throttled: bool,
    /// Page events dropped since the last report, per Surface.
    dropped: BTreeMap<InstanceId, u64>,
    /// Page events dropped since the writer started.
    dropped_total: u64,
    /// Why the stream closed, once it has.
    closed: Option<String>,
    /// Every [`LineWriter`] is gone: write what is queued, then end.
    finishing: bool,
    /// Nothing queued and nothing being written.
    idle: bool,
    reporter: Option<DropReporter>,
}

struct Shared {
    limits: WriterLimits,
    state: Mutex<State>,
    /// Wakes the writer thread: a line was queued, or the writers are gone.
    work: Condvar,
    /// Wakes those waiting for back-pressure to release or for the queue to drain.
    room: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing panics while holding the lock; a poisoned lock still holds consistent counts.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Ends the writer thread (after it has written what is queued) once the last clone of a
/// [`LineWriter`] is dropped.
struct Owner(Arc<Shared>);

impl Drop for Owner {
    fn drop(&mut self) {
        self.0.lock().finishing = true;
        self.0.work.notify_all();
    }
}

/// Writes lines to a stream from a dedicated thread. Cloning shares the thread.
///
/// Everything kept goes through one FIFO, so the reader sees it in the order it was sent. Sending
/// never blocks. When the reader is slow, page events give way: a page event sent while
/// [`WriterLimits::max_waiting_events`] of them are waiting is dropped and counted per Surface,
/// and once the queue has drained each Surface's count goes to the reporter set with
/// [`LineWriter::on_events_dropped`]. Answers ([`LineKind::Answer`]) are never dropped; past
/// [`WriterLimits::answers_high_water`] of them [`LineWriter::backpressure`] asks the input side
/// to stop reading (R-ENV-4).
#[derive(Clone)]
pub struct LineWriter {
    shared: Arc<Shared>,
    _owner: Arc<Owner>,
}

impl std::fmt::Debug for LineWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.shared.lock();
        f.debug_struct("LineWriter")
            .field("limits", &self.shared.limits)
            .field("events_waiting", &state.events_waiting)
            .field("answers_waiting", &state.answers_waiting)
            .field("dropped_total", &state.dropped_total)
            .field("closed", &state.closed)
            .finish_non_exhaustive()
    }
}

impl LineWriter {
    /// Starts the writer thread of the protocol stream on the process's standard output, taken
    /// with [`ProtocolStdout::take`].
    ///
    /// # Errors
    /// [`ShellError::Platform`] when the thread cannot start.
    pub fn on_stdout(stdout: ProtocolStdout, limits: WriterLimits) -> Result<Self, ShellError> {
        Self::spawn(stdout.into_file(), limits)
    }

    /// Starts a writer thread on `sink`.
    pub fn spawn<W: Write + Send + 'static>(
        sink: W,
        limits: WriterLimits,
    ) -> Result<Self, ShellError> {
        let shared = Arc::new(Shared {
            limits: limits.normalized(),
            state: Mutex::new(State {
                queue: VecDeque::new(),
                events_waiting: 0,
                answers_waiting: 0,
                throttled: false,
                dropped: BTreeMap::new(),
                dropped_total: 0,
                closed: None,
                finishing: false,
                idle: true,
                reporter: None,
            }),
            work: Condvar::new(),
            room: Condvar::new(),
        });
        let for_thread = Arc::clone(&shared);
        thread::Builder::new()
            .name("lineup-protocol-writer".into())
            .spawn(move || write_loop(&for_thread, sink))
            .map_err(|e| ShellError::Platform(format!("cannot start the writer thread: {e}")))?;
        Ok(Self {
            _owner: Arc::new(Owner(Arc::clone(&shared))),
            shared,
        })
    }

    /// The bounds in force.
    pub fn limits(&self) -> WriterLimits {
        self.shared.limits
    }

    /// Queues `message`, classified by [`LineKind::of`]; never blocks.
    pub fn send(&self, message: &Message) -> Result<(), WriteError> {
        let kind = LineKind::of(message);
        self.send_line(message.to_json(), kind)
    }

    /// Queues one line (without its `\n`) of kind `kind`; never blocks. An answer is always
    /// queued while the stream is open; a page event is dropped and counted when
    /// [`WriterLimits::max_waiting_events`] page events are waiting.
    pub fn send_line(&self, line: String, kind: LineKind) -> Result<(), WriteError> {
        let limits = self.shared.limits;
        let mut state = self.shared.lock();
        if let Some(why) = state.closed.as_ref() {
            return Err(WriteError::Closed(why.clone()));
        }
        match &kind {
            LineKind::PageEvent(instance) => {
                if state.events_waiting >= limits.max_waiting_events {
                    *state.dropped.entry(instance.clone()).or_default() += 1;
                    state.dropped_total += 1;
                    return Err(WriteError::EventDropped {
                        instance: instance.clone(),
                        capacity: limits.max_waiting_events,
                    });
                }
                state.events_waiting += 1;
            }
            LineKind::Answer => {
                state.answers_waiting += 1;
                if state.answers_waiting >= limits.answers_high_water {
                    state.throttled = true;
                }
            }
        }
        state.queue.push_back((line, kind));
        state.idle = false;
        drop(state);
        self.shared.work.notify_one();
        Ok(())
    }

    /// Sets the function the writer thread calls with `(instance, count)` for each Surface that
    /// lost page events, once the queue has drained (the reader caught up). It runs on the
    /// writer thread: hand the count to the event loop (`HostHandle::report_events_dropped`)
    /// rather than write anything from it. Counts dropped before it was set are kept for it.
    pub fn on_events_dropped(&self, f: impl FnMut(InstanceId, u64) + Send + 'static) {
        self.shared.lock().reporter = Some(Box::new(f));
        // The queue may be idle with counts waiting for a reporter.
        self.shared.work.notify_one();
    }

    /// Whether back-pressure is engaged: it engages when [`WriterLimits::answers_high_water`]
    /// answers are waiting and releases once fewer than [`WriterLimits::answers_low_water`] wait
    /// (or the stream closes). While it is engaged, whoever feeds the host should stop reading
    /// input (R-ENV-4).
    pub fn backpressure(&self) -> bool {
        self.shared.lock().throttled
    }

    /// Blocks the calling thread while [`LineWriter::backpressure`] is engaged; returns at once
    /// when it is not, and when the stream closes. Never call it on the event-loop thread: only
    /// the writer thread releases it.
    pub fn wait_for_room(&self) {
        let mut state = self.shared.lock();
        while state.throttled && state.closed.is_none() {
            state = self
                .shared
                .room
                .wait(state)
                .unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Waits until everything queued has been written, the stream closed, or `timeout` passed;
    /// returns whether the queue drained. For an orderly exit: answers queued just before it are
    /// still written.
    pub fn flush(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut state = self.shared.lock();
        loop {
            if state.idle {
                return true;
            }
            if state.closed.is_some() {
                return false;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            state = match self.shared.room.wait_timeout(state, deadline - now) {
                Ok((state, _)) => state,
                Err(p) => p.into_inner().0,
            };
        }
    }

    /// How many answers are waiting to be written (including one being written).
    pub fn answers_waiting(&self) -> usize {
        self.shared.lock().answers_waiting
    }

    /// How many page events are waiting to be written (including one being written).
    pub fn events_waiting(&self) -> usize {
        self.shared.lock().events_waiting
    }

    /// How many page events were dropped since the writer started, over every Surface.
    pub fn dropped(&self) -> u64 {
        self.shared.lock().dropped_total
    }
}

/// The writer thread: writes the FIFO's head with the lock released; when the queue is empty,
/// hands the drop counts to the reporter.
fn write_loop<W: Write>(shared: &Shared, mut sink: W) {
    let limits = shared.limits;
    let mut state = shared.lock();
    loop {
        let Some((line, kind)) = state.queue.pop_front() else {
            state.idle = true;
            shared.room.notify_all();
            if !state.dropped.is_empty() {
                if let Some(mut report) = state.reporter.take() {
                    let counts = std::mem::take(&mut state.dropped);
                    drop(state);
                    for (instance, count) in counts {
                        tracing::warn!(
                            "surface {instance}: {count} events dropped while the protocol reader was behind"
                        );
                        report(instance, count);
                    }
                    state = shared.lock();
                    if state.reporter.is_none() {
                        state.reporter = Some(report);
                    }
                    continue;
                }
            }
            if state.finishing {
                return;
            }
            state = shared.work.wait(state).unwrap_or_else(|p| p.into_inner());
            continue;
        };
        drop(state);
        let written = sink
            .write_all(line.as_bytes())
            .and_then(|()| sink.write_all(b"\n"))
            .and_then(|()| sink.flush());
        state = shared.lock();
        match kind {
            LineKind::PageEvent(_) => state.events_waiting = state.events_waiting.saturating_sub(1),
            LineKind::Answer => {
                state.answers_waiting = state.answers_waiting.saturating_sub(1);
                if state.throttled && state.answers_waiting < limits.answers_low_water {
                    state.throttled = false;
                    shared.room.notify_all();
                }
            }
        }
        if let Err(e) = written {
            tracing::error!("protocol stream closed: {e}");
            state.closed = Some(e.to_string());
            state.queue.clear();
            state.events_waiting = 0;
            state.answers_waiting = 0;
            state.throttled = false;
            state.idle = true;
            shared.room.notify_all();
            return;
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;
    use std::io;
    use std::sync::mpsc;

    use lineup_host_core::{
        AppList, ClientError, ClientInventory, ConversationId, Envelope, ErrorCode, EventName,
        JsonObject, MessageId, Party, PartyId, Revision, UiEvent,
    };

    /// Long enough for any step of a passing test; only there so that a failing one cannot hang.
    const DEADLINE: Duration = Duration::from_secs(20);

    struct Broken;
    impl Write for Broken {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::Error::from(io::ErrorKind::BrokenPipe))
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    struct Stuck;
    impl Write for Stuck {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            thread::sleep(Duration::from_secs(3600));
            Ok(0)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// A reader the test controls: each line (one flush) waits for a permit, then is recorded.
    #[derive(Clone, Default)]
    struct Gate(Arc<(Mutex<GateState>, Condvar)>);

    #[derive(Default)]
    struct GateState {
        permits: usize,
        open: bool,
        partial: Vec<u8>,
        lines: Vec<String>,
    }

    impl Gate {
        fn state(&self) -> MutexGuard<'_, GateState> {
            self.0 .0.lock().unwrap()
        }

        /// Lets `n` more lines through.
        fn allow(&self, n: usize) {
            self.state().permits += n;
            self.0 .1.notify_all();
        }

        /// Lets every line through from now on.
        fn open(&self) {
            self.state().open = true;
            self.0 .1.notify_all();
        }

        fn lines(&self) -> Vec<String> {
            self.state().lines.clone()
        }

        /// Waits until `n` lines were written.
        fn wait_for_lines(&self, n: usize) -> Vec<String> {
            let deadline = Instant::now() + DEADLINE;
            let mut state = self.state();
            while state.lines.len() < n {
                let now = Instant::now();
                assert!(
                    now < deadline,
                    "only {} of {n} lines written",
                    state.lines.len()
                );
                state = self.0 .1.wait_timeout(state, deadline - now).unwrap().0;
            }
            state.lines.clone()
        }
    }

    impl Write for Gate {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.state().partial.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            let mut state = self.state();
            while !state.open && state.permits == 0 {
                state = self.0 .1.wait(state).unwrap();
            }
            if !state.open {
                state.permits -= 1;
            }
            let line = String::from_utf8(std::mem::take(&mut state.partial)).unwrap();
            state.lines.push(line.trim_end_matches('\n').to_owned());
            drop(state);
            self.0 .1.notify_all();
            Ok(())
        }
    }

    fn limits(events: usize, high: usize, low: usize) -> WriterLimits {
        WriterLimits {
            max_waiting_events: events,
            answers_high_water: high,
            answers_low_water: low,
        }
    }

    fn instance(id: &str) -> InstanceId {
        InstanceId::try_from(id).unwrap()
    }

    fn event(id: &str) -> LineKind {
        LineKind::PageEvent(instance(id))
    }

    /// Polls `f` until it holds; the deadline only keeps a failing test from hanging.
    fn wait_until(what: &str, f: impl Fn() -> bool) {
        let deadline = Instant::now() + DEADLINE;
        while !f() {
            assert!(Instant::now() < deadline, "never: {what}");
            thread::sleep(Duration::from_millis(2));
        }
    }

    fn envelope<P>(payload: P) -> Envelope<P> {
        Envelope {
            id: MessageId::try_from("m1").unwrap(),
            conversation_id: ConversationId::try_from("c1").unwrap(),
            sender: Party {
                kind: PartyId::try_from("client").unwrap(),
                id: PartyId::try_from("lineup-host").unwrap(),
            },
            target: None,
            payload,
        }
    }

    fn ui_event(name: &str) -> Message {
        Message::UiEvent(envelope(UiEvent {
            instance_id: instance("w1"),
            event: EventName::try_from(name).unwrap(),
            data: JsonObject::new(),
        }))
    }

    #[test]
    fn r_ui_5_only_page_events_may_give_way_and_a_user_close_never_does() {
        assert_eq!(LineKind::of(&ui_event("refresh")), event("w1"));
        assert_eq!(LineKind::of(&ui_event("close")), LineKind::Answer);
        let error = Message::ClientError(envelope(ClientError {
            in_reply_to: None,
            code: ErrorCode::EventsDropped,
            message: "m".into(),
            field: None,
            limit: None,
            instance_id: Some(instance("w1")),
            count: Some(3),
        }));
        assert_eq!(LineKind::of(&error), LineKind::Answer);
    }

    fn inventory() -> Message {
        Message::ClientInventory(envelope(ClientInventory {
            revision: Revision::try_from("catalog-42").unwrap(),
            standard_components: Vec::new(),
            applications: Vec::new(),
            capabilities: Vec::new(),
        }))
    }

    fn app_list() -> Message {
        Message::AppList(envelope(AppList {
            capabilities: Vec::new(),
        }))
    }

    #[test]
    fn r_inv_1_r_cap_1_inventory_and_app_list_are_answers_never_page_events() {
        assert_eq!(LineKind::of(&inventory()), LineKind::Answer);
        assert_eq!(LineKind::of(&app_list()), LineKind::Answer);
    }

    /// `client.inventory` and `app.list`, classified by [`LineKind::of`], are kept however full
    /// the queue is: past the page-event capacity and past the answers' high-water mark.
    #[test]
    fn r_inv_1_r_cap_1_a_full_queue_never_drops_an_inventory_or_an_app_list() {
        let gate = Gate::default();
        let w = LineWriter::spawn(gate.clone(), limits(1, 4, 2)).unwrap();
        // The reader reads nothing: one page event waits, the next is dropped.
        assert_eq!(w.send_line("e1".into(), event("a")), Ok(()));
        assert!(
            w.send_line("e2".into(), event("a")).is_err(),
            "the queue is full"
        );
        for _ in 0..100 {
            for message in [inventory(), app_list()] {
                assert_eq!(
                    w.send_line(message.to_json(), LineKind::of(&message)),
                    Ok(()),
                    "{}",
                    message.to_json()
                );
            }
        }
        assert!(w.backpressure(), "past the high-water mark");
        assert_eq!(w.answers_waiting(), 200);
        assert_eq!(w.dropped(), 1);
        gate.open();
        let lines = gate.wait_for_lines(201);
        for kind in ["lineup.v1.client.inventory", "lineup.v1.app.list"] {
            let written = lines.iter().filter(|l| l.contains(kind)).count();
            assert_eq!(written, 100, "{kind}");
        }
    }

    #[test]
    fn r_env_5_answers_are_never_dropped_while_page_events_are() {
        let gate = Gate::default();
        let w = LineWriter::spawn(gate.clone(), limits(2, 10_000, 5_000)).unwrap();
        // The reader reads nothing: two page events wait, the rest are dropped...
        assert_eq!(w.send_line("e1".into(), event("a")), Ok(()));
        assert_eq!(w.send_line("e2".into(), event("a")), Ok(()));
        assert_eq!(
            w.send_line("e3".into(), event("a")),
            Err(WriteError::EventDropped {
                instance: instance("a"),
                capacity: 2
            })
        );
        // ...while every answer is kept, however many wait.
        for i in 0..1000 {
            assert_eq!(w.send_line(format!("answer {i}"), LineKind::Answer), Ok(()));
            assert!(w.send_line(format!("e {i}"), event("b")).is_err());
        }
        assert_eq!(w.answers_waiting(), 1000);
        assert_eq!(w.events_waiting(), 2);
        assert_eq!(w.dropped(), 1001);
        gate.open();
        let lines = gate.wait_for_lines(1002);
        assert_eq!(
            lines.iter().filter(|l| l.starts_with("answer")).count(),
            1000
        );
        assert_eq!(lines.iter().filter(|l| l.starts_with('e')).count(), 2);
    }

    #[test]
    fn r_env_5_kept_lines_are_written_in_the_order_they_were_sent() {
        let gate = Gate::default();
        let w = LineWriter::spawn(gate.clone(), limits(3, 10_000, 5_000)).unwrap();
        let mut kept = Vec::new();
        for i in 0..50 {
            let kind = if i % 4 == 0 {
                LineKind::Answer
            } else {
                event(if i % 2 == 0 { "a" } else { "b" })
            };
            let line = format!("line {i}");
            if w.send_line(line.clone(), kind).is_ok() {
                kept.push(line);
            }
            // Let the reader take one line now and then, so that room opens mid-stream.
            if i % 10 == 9 {
                gate.allow(1);
            }
        }
        assert!(kept.len() < 50, "the test must make events give way");
        gate.open();
        assert_eq!(gate.wait_for_lines(kept.len()), kept);
    }

    #[test]
    fn r_env_4_dropped_events_are_reported_per_surface_once_the_queue_drains() {
        let gate = Gate::default();
        let w = LineWriter::spawn(gate.clone(), limits(1, 10_000, 5_000)).unwrap();
        let (tx, reports) = mpsc::channel();
        w.on_events_dropped(move |instance, count| {
            let _ = tx.send((instance, count));
        });
        w.send_line("kept".into(), event("a")).unwrap();
        for _ in 0..3 {
            assert!(w.send_line("lost".into(), event("a")).is_err());
        }
        assert!(w.send_line("lost".into(), event("b")).is_err());
        w.send_line("answer".into(), LineKind::Answer).unwrap();
        // Nothing is reported while the reader is behind: the queue has not drained.
        assert!(reports.try_recv().is_err());
        gate.open();
        let mut got = vec![
            reports.recv_timeout(DEADLINE).unwrap(),
            reports.recv_timeout(DEADLINE).unwrap(),
        ];
        got.sort();
        // One count per Surface, never merged.
        assert_eq!(got, [(instance("a"), 3), (instance("b"), 1)]);
        assert_eq!(gate.lines(), ["kept", "answer"]);
        // A report empties the counts: a later drain reports nothing more.
        w.send_line("after".into(), LineKind::Answer).unwrap();
        gate.wait_for_lines(3);
        assert!(w.flush(DEADLINE));
        assert!(reports.try_recv().is_err());
    }

    #[test]
    fn r_env_4_counts_dropped_before_a_reporter_is_set_are_kept_for_it() {
        let gate = Gate::default();
        let w = LineWriter::spawn(gate.clone(), limits(0, 10_000, 5_000)).unwrap();
        assert!(w.send_line("lost".into(), event("a")).is_err());
        gate.open();
        assert!(w.flush(DEADLINE));
        let (tx, reports) = mpsc::channel();
        w.on_events_dropped(move |instance, count| {
            let _ = tx.send((instance, count));
        });
        assert_eq!(reports.recv_timeout(DEADLINE).unwrap(), (instance("a"), 1));
    }

    #[test]
    fn r_env_4_backpressure_engages_at_the_high_mark_and_releases_below_the_low_mark() {
        let gate = Gate::default();
        let w = LineWriter::spawn(gate.clone(), limits(8, 4, 2)).unwrap();
        for i in 0..3 {
            w.send_line(format!("a{i}"), LineKind::Answer).unwrap();
            assert!(!w.backpressure(), "engaged below the high-water mark");
        }
        // Page events do not count towards it.
        w.send_line("e".into(), event("a")).unwrap();
        assert!(!w.backpressure());
        w.send_line("a3".into(), LineKind::Answer).unwrap();
        assert!(w.backpressure(), "not engaged at the high-water mark");

        let waiter = {
            let w = w.clone();
            let (tx, rx) = mpsc::channel();
            thread::spawn(move || {
                w.wait_for_room();
                let _ = tx.send(w.answers_waiting());
            });
            rx
        };
        // The reader takes two answers: 3, then 2 wait; still engaged (hysteresis).
        gate.allow(2);
        gate.wait_for_lines(2);
        wait_until("two answers waiting", || w.answers_waiting() == 2);
        assert!(w.backpressure(), "released before the low-water mark");
        assert!(waiter.try_recv().is_err(), "the waiter went on too early");
        // One more: 1 waits, below the low-water mark.
        gate.allow(1);
        let left = waiter.recv_timeout(DEADLINE).unwrap();
        assert!(left < 2, "released with {left} answers waiting");
        assert!(!w.backpressure());
        // Still nothing was dropped.
        gate.open();
        assert!(w.flush(DEADLINE));
        assert_eq!(gate.lines(), ["a0", "a1", "a2", "e", "a3"]);
    }

    #[test]
    fn dropping_every_writer_still_writes_what_was_queued() {
        let gate = Gate::default();
        let w = LineWriter::spawn(gate.clone(), WriterLimits::default()).unwrap();
        w.send_line("one".into(), LineKind::Answer).unwrap();
        w.send_line("two".into(), event("a")).unwrap();
        drop(w);
        gate.open();
        assert_eq!(gate.wait_for_lines(2), ["one", "two"]);
    }

    #[test]
    fn a_gone_reader_closes_the_writer_without_blocking() {
        let w = LineWriter::spawn(Broken, limits(4, 4, 2)).unwrap();
        let _ = w.send_line("a".into(), LineKind::Answer);
        let deadline = Instant::now() + DEADLINE;
        loop {
            match w.send_line("b".into(), LineKind::Answer) {
                Err(WriteError::Closed(why)) => {
                    assert!(why.contains("pipe"), "{why}");
                    break;
                }
                _ if Instant::now() > deadline => panic!("writer never reported the broken pipe"),
                _ => thread::sleep(Duration::from_millis(10)),
            }
        }
        // A closed stream releases back-pressure, so that nothing waits on it forever.
        assert!(!w.backpressure());
        w.wait_for_room();
    }

    #[test]
    fn a_slow_reader_never_blocks_the_sender() {
        let w = LineWriter::spawn(Stuck, limits(2, 4, 2)).unwrap();
        let start = Instant::now();
        let events: Vec<_> = (0..10)
            .map(|i| w.send_line(format!("{i}"), event("a")))
            .collect();
        let answers: Vec<_> = (0..10)
            .map(|i| w.send_line(format!("{i}"), LineKind::Answer))
            .collect();
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "send_line blocked"
        );
        assert!(events
            .iter()
            .any(|r| matches!(r, Err(WriteError::EventDropped { capacity: 2, .. }))));
        assert!(answers.iter().all(Result::is_ok));
        assert!(w.backpressure());
        assert!(w.dropped() > 0);
    }
}
