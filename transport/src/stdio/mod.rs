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
            | Message::ComponentOpen(_)
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
mod tests;
