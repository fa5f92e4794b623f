//! The protocol stream on the process's standard output, protected from everything else in the
//! process and its children, and written from its own thread so that a slow or gone reader never
//! blocks the GUI event loop.

use std::fs::File;
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, SyncSender, TrySendError};
use std::sync::Arc;
use std::thread;

use crate::error::ShellError;

/// The process's original standard output, moved to a private descriptor.
///
/// [`ProtocolStdout::take`] duplicates descriptor 1 to a new close-on-exec descriptor that only
/// this value owns, then points descriptor 1 at standard error. Web processes, which inherit
/// descriptors 0–2, and any stray `println!` in the process can then no longer write into the
/// protocol stream.
///
/// ## Platform-specific
/// Unix only; elsewhere [`ProtocolStdout::take`] returns [`ShellError::Unsupported`].
#[derive(Debug)]
pub struct ProtocolStdout {
    file: File,
}

impl ProtocolStdout {
    /// Takes standard output for the protocol; call once, before any web process starts.
    pub fn take() -> Result<Self, ShellError> {
        imp::take().map(|file| Self { file })
    }

    /// Starts the writer thread, with room for `capacity` lines waiting to be written.
    pub fn spawn_writer(self, capacity: usize) -> Result<LineWriter, ShellError> {
        LineWriter::spawn(self.file, capacity)
    }
}

/// Why a line was not queued for writing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    /// The reader is not keeping up and the queue is full; the line was dropped.
    #[error(
        "the protocol reader is not keeping up: {capacity} lines are waiting; a line was dropped"
    )]
    Backlogged {
        /// The queue's capacity.
        capacity: usize,
    },
    /// The stream is closed (the reader went away); nothing more can be written.
    #[error("the protocol stream is closed: {0}")]
    Closed(String),
}

/// Writes lines to a stream from a dedicated thread. Cloning shares the thread.
#[derive(Debug, Clone)]
pub struct LineWriter {
    tx: SyncSender<String>,
    capacity: usize,
    closed: Arc<std::sync::Mutex<Option<String>>>,
    dropped: Arc<AtomicU64>,
}

impl LineWriter {
    /// Starts a writer thread on `sink`.
    pub fn spawn<W: Write + Send + 'static>(
        mut sink: W,
        capacity: usize,
    ) -> Result<Self, ShellError> {
        let (tx, rx) = sync_channel::<String>(capacity.max(1));
        let closed = Arc::new(std::sync::Mutex::new(None));
        let closed_by_thread = Arc::clone(&closed);
        thread::Builder::new()
            .name("lineup-protocol-writer".into())
            .spawn(move || {
                for line in rx {
                    let written = sink
                        .write_all(line.as_bytes())
                        .and_then(|()| sink.write_all(b"\n"))
                        .and_then(|()| sink.flush());
                    if let Err(e) = written {
                        tracing::error!("protocol stream closed: {e}");
                        if let Ok(mut slot) = closed_by_thread.lock() {
                            *slot = Some(e.to_string());
                        }
                        return;
                    }
                }
            })
            .map_err(|e| ShellError::Platform(format!("cannot start the writer thread: {e}")))?;
        Ok(Self {
            tx,
            capacity,
            closed,
            dropped: Arc::new(AtomicU64::new(0)),
        })
    }

    /// Queues one line (without its `\n`); never blocks.
    pub fn send_line(&self, line: String) -> Result<(), WriteError> {
        if let Ok(slot) = self.closed.lock() {
            if let Some(why) = slot.as_ref() {
                return Err(WriteError::Closed(why.clone()));
            }
        }
        match self.tx.try_send(line) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(_)) => {
                self.dropped.fetch_add(1, Ordering::Relaxed);
                Err(WriteError::Backlogged {
                    capacity: self.capacity,
                })
            }
            Err(TrySendError::Disconnected(_)) => {
                Err(WriteError::Closed("the writer thread has stopped".into()))
            }
        }
    }

    /// How many lines were dropped because the queue was full.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

#[cfg(unix)]
mod imp {
    use std::fs::File;
    use std::os::fd::AsFd;

    use crate::error::ShellError;

    pub(super) fn take() -> Result<File, ShellError> {
        let stdout = std::io::stdout();
        let stderr = std::io::stderr();
        let private = rustix::io::fcntl_dupfd_cloexec(stdout.as_fd(), 3)
            .map_err(|e| ShellError::Platform(format!("cannot duplicate stdout: {e}")))?;
        rustix::stdio::dup2_stdout(stderr.as_fd())
            .map_err(|e| ShellError::Platform(format!("cannot redirect stdout: {e}")))?;
        Ok(File::from(private))
    }
}

#[cfg(not(unix))]
mod imp {
    use std::fs::File;

    use crate::error::ShellError;

    pub(super) fn take() -> Result<File, ShellError> {
        Err(ShellError::Unsupported(
            "protecting stdout needs a Unix platform",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;
    use std::time::{Duration, Instant};

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

    #[test]
    fn a_gone_reader_closes_the_writer_without_blocking() {
        let w = LineWriter::spawn(Broken, 4).unwrap();
        let _ = w.send_line("a".into());
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            match w.send_line("b".into()) {
                Err(WriteError::Closed(why)) => {
                    assert!(why.contains("pipe"), "{why}");
                    break;
                }
                _ if Instant::now() > deadline => panic!("writer never reported the broken pipe"),
                _ => thread::sleep(Duration::from_millis(10)),
            }
        }
    }

    #[test]
    fn a_slow_reader_never_blocks_the_sender() {
        let w = LineWriter::spawn(Stuck, 2).unwrap();
        let start = Instant::now();
        let results: Vec<_> = (0..10).map(|i| w.send_line(format!("{i}"))).collect();
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "send_line blocked"
        );
        assert!(results
            .iter()
            .any(|r| matches!(r, Err(WriteError::Backlogged { capacity: 2 }))));
        assert!(w.dropped() > 0);
    }
}
