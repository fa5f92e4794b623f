//! The `lineup` command: thin commands over the lineup-host library.
//!
//! `lineup host --stdio` lets an agent in any language drive the host: one `lineup.v1` envelope
//! per line on stdin (agent → client), one per line on stdout (client → agent), logs on stderr.

use std::io::Read;
use std::process::ExitCode;
use std::thread;

use clap::{Args, Parser, Subcommand};
use lineup_host_core::{Frame, LineFramer, PartyId};
use lineup_webview_shell::{HostBuilder, HostHandle, ProtocolStdout};

mod log;

/// Show LineUp UI Surfaces in isolated webviews.
#[derive(Debug, Parser)]
#[command(name = "lineup", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Host Surfaces for an agent that speaks lineup.v1 over a stream.
    Host(HostArgs),
}

#[derive(Debug, Args)]
struct HostArgs {
    /// Read envelopes from stdin and write envelopes to stdout, one per line.
    #[arg(long, required = true)]
    stdio: bool,
    /// The client id written as `sender.id` of every outbound envelope.
    #[arg(long, default_value = "lineup-host")]
    client_id: String,
    /// Open the web inspector of each Surface (for Surface authors; weakens nothing else).
    #[arg(long)]
    devtools: bool,
    /// How many Surfaces may be open at once.
    #[arg(long, default_value_t = 16)]
    max_surfaces: usize,
    /// How many outbound lines may wait for a slow reader before lines are dropped.
    #[arg(long, default_value_t = 4096)]
    outbound_queue: usize,
}

fn main() -> ExitCode {
    log::init();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Host(args) => host_stdio(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e}");
            ExitCode::FAILURE
        }
    }
}

fn host_stdio(args: HostArgs) -> Result<(), Box<dyn std::error::Error>> {
    // Before any web process exists: only the protocol writer may reach the real stdout.
    let writer = ProtocolStdout::take()?.spawn_writer(args.outbound_queue)?;
    let client_id = PartyId::try_from(args.client_id)?;
    let mut limits = lineup_host_core::Limits::default();
    limits.max_surfaces = args.max_surfaces;
    let event_loop = lineup_webview_shell::event_loop()?;
    let mut builder = HostBuilder::new().client_id(client_id).limits(limits);
    if args.devtools {
        builder = builder.dangerous().with_devtools();
    }
    let host = builder
        .on_outbound(move |message| {
            if let Err(e) = writer.send_line(message.to_json()) {
                tracing::error!("{e}");
            }
        })
        .delegate(log::StderrDelegate)
        .build(&event_loop)?;
    let handle = host.handle();
    let max_line = host.limits().max_envelope_bytes;
    thread::Builder::new()
        .name("lineup-stdin".into())
        .spawn(move || read_stdin(handle, max_line))?;
    host.run(event_loop)?;
    Ok(())
}

/// Reads stdin in chunks, frames it into bounded lines and forwards them into the event loop;
/// at end of input asks the host to close everything and exit.
fn read_stdin(handle: HostHandle, max_line: usize) {
    let mut framer = LineFramer::new(max_line);
    let mut stdin = std::io::stdin().lock();
    let mut chunk = vec![0u8; 64 * 1024];
    let forward = |frame: Frame| match frame {
        Frame::Line { bytes, .. } if bytes.iter().all(u8::is_ascii_whitespace) => true,
        Frame::Line { number, bytes } => handle.send_inbound_line(number, bytes).is_ok(),
        Frame::TooLong { number, len, .. } => handle.send_oversized_line(number, len).is_ok(),
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
    tracing::info!("stdin closed; closing every surface");
    let _ = handle.shutdown();
}
