//! The protocol stream on the process's standard output, protected from everything else in the
//! process and its children, and written from its own thread so that a slow or gone reader never
//! blocks the GUI event loop; when the reader is slow, page events give way and answers never do.

use std::io::Write;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use lineup_host_core::{InstanceId, Message};

use lineup_webview_shell::{ProtocolStdout, ShellError};

use crate::outbound::{LineKind, OutboundLimits, OutboundQueue};

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
        /// [`OutboundLimits::max_waiting_events`].
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
    /// The outbound policy: everything kept, in the order it was sent, the line being written
    /// included, with its counts and back-pressure.
    queue: OutboundQueue,
    /// Why the stream closed, once it has.
    closed: Option<String>,
    /// Every [`LineWriter`] is gone: write what is queued, then end.
    finishing: bool,
    reporter: Option<DropReporter>,
}

struct Shared {
    limits: OutboundLimits,
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

/// Writes lines to a stream from a dedicated thread, draining an [`OutboundQueue`]. Cloning
/// shares the thread.
///
/// Everything kept goes through one FIFO, so the reader sees it in the order it was sent. Sending
/// never blocks. When the reader is slow, page events give way: a page event sent while
/// [`OutboundLimits::max_waiting_events`] of them are waiting is dropped and counted per Surface,
/// and once the queue has drained each Surface's count goes to the reporter set with
/// [`LineWriter::on_events_dropped`]. Answers ([`LineKind::Answer`]) are never dropped; past
/// [`OutboundLimits::answers_high_water`] of them [`LineWriter::backpressure`] asks the input
/// side to stop reading (R-ENV-4).
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
            .field("events_waiting", &state.queue.events_waiting())
            .field("answers_waiting", &state.queue.answers_waiting())
            .field("dropped_total", &state.queue.dropped_total())
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
    pub fn on_stdout(stdout: ProtocolStdout, limits: OutboundLimits) -> Result<Self, ShellError> {
        Self::spawn(stdout.into_file(), limits)
    }

    /// Starts a writer thread on `sink`.
    pub fn spawn<W: Write + Send + 'static>(
        sink: W,
        limits: OutboundLimits,
    ) -> Result<Self, ShellError> {
        let queue = OutboundQueue::new(limits);
        let shared = Arc::new(Shared {
            limits: queue.limits(),
            state: Mutex::new(State {
                queue,
                closed: None,
                finishing: false,
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
    pub fn limits(&self) -> OutboundLimits {
        self.shared.limits
    }

    /// Queues `message`, classified by [`LineKind::of`]; never blocks.
    pub fn send(&self, message: &Message) -> Result<(), WriteError> {
        let kind = LineKind::of(message);
        self.send_line(message.to_json(), kind)
    }

    /// Queues one line (without its `\n`) of kind `kind`; never blocks. An answer is always
    /// queued while the stream is open; a page event is dropped and counted when
    /// [`OutboundLimits::max_waiting_events`] page events are waiting.
    pub fn send_line(&self, line: String, kind: LineKind) -> Result<(), WriteError> {
        let mut state = self.shared.lock();
        if let Some(why) = state.closed.as_ref() {
            return Err(WriteError::Closed(why.clone()));
        }
        state
            .queue
            .offer(line, kind)
            .map_err(|dropped| WriteError::EventDropped {
                instance: dropped.instance,
                capacity: dropped.capacity,
            })?;
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

    /// Whether back-pressure is engaged: it engages when [`OutboundLimits::answers_high_water`]
    /// answers are waiting and releases once fewer than [`OutboundLimits::answers_low_water`] wait
    /// (or the stream closes). While it is engaged, whoever feeds the host should stop reading
    /// input (R-ENV-4).
    pub fn backpressure(&self) -> bool {
        self.shared.lock().queue.backpressure()
    }

    /// Blocks the calling thread while [`LineWriter::backpressure`] is engaged; returns at once
    /// when it is not, and when the stream closes. Never call it on the event-loop thread: only
    /// the writer thread releases it.
    pub fn wait_for_room(&self) {
        let mut state = self.shared.lock();
        while state.queue.backpressure() && state.closed.is_none() {
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
            if state.queue.is_empty() {
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
        self.shared.lock().queue.answers_waiting()
    }

    /// How many page events are waiting to be written (including one being written).
    pub fn events_waiting(&self) -> usize {
        self.shared.lock().queue.events_waiting()
    }

    /// How many page events were dropped since the writer started, over every Surface.
    pub fn dropped(&self) -> u64 {
        self.shared.lock().queue.dropped_total()
    }
}

/// The writer thread: writes the FIFO's head with the lock released and removes it once
/// written; when the queue is empty, hands the drop counts to the reporter.
fn write_loop<W: Write>(shared: &Shared, mut sink: W) {
    let mut state = shared.lock();
    loop {
        let Some(line) = state.queue.front().map(str::to_owned) else {
            shared.room.notify_all();
            if let Some(mut report) = state.reporter.take() {
                let reports = state.queue.take_drop_reports();
                if !reports.is_empty() {
                    drop(state);
                    for dropped in reports {
                        let (instance, count) = (dropped.instance, dropped.counts.total());
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
                state.reporter = Some(report);
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
        let throttled = state.queue.backpressure();
        state.queue.pop_sent();
        if throttled && !state.queue.backpressure() {
            shared.room.notify_all();
        }
        if let Err(e) = written {
            tracing::error!("protocol stream closed: {e}");
            state.closed = Some(e.to_string());
            state.queue.clear();
            shared.room.notify_all();
            return;
        }
    }
}

mod link;

pub use link::StdioLink;

#[cfg(test)]
mod tests;
