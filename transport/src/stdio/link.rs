//! `lineup host --stdio` as a library: the agent on stdin and stdout, for the `lineup` command
//! and any program that hosts Surfaces for an agent on its standard streams (the Servo engine's
//! `lineup-servo host --stdio`).

use std::io::Read;
use std::thread;
use std::time::Duration;

use lineup_host::platform::ProtocolStdout;
use lineup_host::{HostBuilder, HostHandle};
use lineup_host_core::{Frame, LineFramer};

use super::{LineWriter, WriteError};
use crate::outbound::OutboundLimits;

/// How long, at exit, the writer is given to hand the last lines to the reader of stdout.
const EXIT_FLUSH: Duration = Duration::from_secs(5);

/// The agent on stdin and stdout: the protocol writer (fd 1 taken before any web process
/// starts), and the stdin reader with its back-pressure (R-ENV-4).
pub struct StdioLink {
    writer: LineWriter,
    limits: OutboundLimits,
    /// At end of input: wait for the last Surface to close instead of closing them all.
    until_closed: bool,
}

impl StdioLink {
    /// Takes stdout for the protocol, with the default writer limits.
    pub fn take() -> Result<Self, Box<dyn std::error::Error>> {
        Self::take_with(OutboundLimits::default())
    }

    /// Takes stdout for the protocol.
    pub fn take_with(limits: OutboundLimits) -> Result<Self, Box<dyn std::error::Error>> {
        let writer = LineWriter::on_stdout(ProtocolStdout::take()?, limits)?;
        Ok(Self {
            writer,
            limits,
            until_closed: false,
        })
    }

    /// With `true`, end of input leaves the open Surfaces up and the host exits when the last
    /// one closes (`--until-closed`).
    pub fn until_closed(self, until_closed: bool) -> Self {
        Self {
            until_closed,
            ..self
        }
    }

    /// Builds the host with `builder` (its delegate already set), feeds it from stdin until end
    /// of input, and writes what it sends to stdout.
    pub fn run(
        self,
        builder: HostBuilder,
        event_loop: lineup_host::HostEventLoop,
    ) -> Result<(), Box<dyn std::error::Error>> {
        let Self {
            writer,
            limits,
            until_closed,
        } = self;
        let outbound = writer.clone();
        let mut closed_logged = false;
        let host = builder
            .on_outbound(move |message| match outbound.send(message) {
                Ok(()) => {}
                // Counted per Surface and reported once the reader caught up: no line per event.
                Err(e @ WriteError::EventDropped { .. }) => tracing::debug!("{e}"),
                Err(e) => {
                    if !closed_logged {
                        closed_logged = true;
                        tracing::error!("{e}");
                    }
                }
            })
            .build(&event_loop)?;
        let handle = host.handle();
        let reporter = host.handle();
        // The writer thread hands each Surface's count to the event loop, where the session
        // builds the `client.error` `events_dropped` like every other outbound envelope (R-ENV-5).
        writer.on_events_dropped(move |instance, count| {
            let _ = reporter.report_events_dropped(instance, count);
        });
        let max_line = host.limits().max_envelope_bytes;
        let gate = InputGate {
            writer: writer.clone(),
            max_inbound_waiting: limits.answers_high_water,
        };
        thread::Builder::new()
            .name("lineup-stdin".into())
            .spawn(move || read_stdin(handle, gate, max_line, until_closed))?;
        host.run(event_loop)?;
        // Answers queued just before the end (say, to the last lines before end of input) are
        // still written, unless the reader is gone or stays stuck.
        if !writer.flush(EXIT_FLUSH) {
            tracing::warn!("exiting with outbound lines unwritten: the reader did not take them");
        }
        Ok(())
    }
}

/// Back-pressure on stdin (R-ENV-4): the reader thread waits here before it hands a line to
/// the event loop, so that answers waiting for a slow reader of stdout, and lines waiting for
/// the loop, stay bounded. The event loop itself never waits on stdout.
struct InputGate {
    writer: LineWriter,
    /// How many lines may wait for the event loop.
    max_inbound_waiting: usize,
}

impl InputGate {
    /// Returns once a line may go to the host.
    fn wait(&self, handle: &HostHandle) {
        if self.writer.backpressure() {
            tracing::warn!(
                "{} answers are waiting for the reader of stdout; stopped reading stdin until fewer than {} wait (R-ENV-4)",
                self.writer.answers_waiting(),
                self.writer.limits().answers_low_water
            );
            self.writer.wait_for_room();
            tracing::info!("the reader of stdout caught up; reading stdin again");
        }
        // The loop handles lines far faster than a pipe brings them; this only waits when it
        // is busy, say with a flooding page, and never for long.
        while handle.inbound_waiting() >= self.max_inbound_waiting {
            thread::sleep(Duration::from_millis(1));
        }
    }
}

/// Reads stdin in chunks, frames it into bounded lines and forwards them into the event loop;
/// at end of input asks the host to close everything and exit, or with `until_closed` to exit
/// once the last Surface has closed.
fn read_stdin(handle: HostHandle, gate: InputGate, max_line: usize, until_closed: bool) {
    let mut framer = LineFramer::new(max_line);
    let mut stdin = std::io::stdin().lock();
    let mut chunk = vec![0u8; 64 * 1024];
    let forward = |frame: Frame| match frame {
        Frame::Line { bytes, .. } if bytes.iter().all(u8::is_ascii_whitespace) => true,
        Frame::Line { number, bytes } => {
            gate.wait(&handle);
            handle.send_inbound_line(number, bytes).is_ok()
        }
        Frame::TooLong { number, len, .. } => {
            gate.wait(&handle);
            handle.send_oversized_line(number, len).is_ok()
        }
    };
    loop {
        match stdin.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => {
                if !framer.push(&chunk[..n]).into_iter().all(forward) {
                    return;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                tracing::error!("cannot read stdin: {e}");
                break;
            }
        }
    }
    if let Some(frame) = framer.finish() {
        forward(frame);
    }
    if until_closed {
        tracing::info!("stdin closed; exiting when the last surface closes (--until-closed)");
        let _ = handle.shutdown_when_last_closed();
    } else {
        tracing::info!("stdin closed; closing every surface");
        let _ = handle.shutdown();
    }
}
