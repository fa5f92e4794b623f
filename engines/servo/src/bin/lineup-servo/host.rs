//! `lineup-servo host --stdio`: the host of `lineup host --stdio` (sessions, validation,
//! lifecycle, the watchdog, standard components) with Servo showing each Surface in a window of
//! its own. App Capabilities stay off: their call records and grants live in the store, whose
//! SQLite cannot be linked beside Servo's (decision 0029), so every `app.call` is answered
//! `unsupported`, as by any host built without them.

use std::rc::Rc;
use std::time::Duration;

use lineup_host::{ComponentOptions, HostBuilder};
use lineup_host_core::{ConversationId, Limits, PartyId};
use lineup_servo::{EngineConfig, ServoHostEngine};
use lineup_transport::StdioLink;

/// The flags of `lineup-servo host`, the subset of `lineup host`'s that a host without the
/// store takes.
#[derive(Debug, clap::Args)]
pub(crate) struct HostArgs {
    /// Read envelopes from stdin and write envelopes to stdout, one per line (the only link).
    #[arg(long, required = true)]
    stdio: bool,
    /// Servo's isolation is weaker than WebKitGTK's (one process and one storage profile for
    /// every Surface, no process sandbox): this flag says the caller knows.
    #[arg(long, required = true)]
    dangerous_weaker_isolation: bool,
    /// At end of input keep the host up until the last Surface closes.
    #[arg(long)]
    until_closed: bool,
    /// The client id written as `sender.id` of every outbound envelope.
    #[arg(long, default_value = "lineup-host")]
    client_id: String,
    /// How many Surfaces may be open at once, in one conversation and over all of them.
    #[arg(long, default_value_t = 256)]
    max_surfaces: usize,
    /// How many Surfaces may be shown at once; one more open is refused
    /// `too_many_live_surfaces`.
    #[arg(long, default_value_t = 16)]
    max_live_surfaces: usize,
    /// How many conversations may have a session at once.
    #[arg(long, default_value_t = 64)]
    max_sessions: usize,
    /// End a conversation's session after this many seconds without an accepted envelope.
    #[arg(long, default_value_t = 3600, value_parser = clap::value_parser!(u64).range(1..))]
    session_idle_secs: u64,
    /// Open a session for this conversation at start.
    #[arg(long, value_name = "ID")]
    conversation: Option<String>,
    /// Render the standard components in the host's own trusted windows (WebKitGTK's, as with
    /// `lineup host`: they are the host's UI, not a Surface).
    #[arg(long)]
    builtin_components: bool,
}

/// Runs the host until end of input.
pub(crate) fn run(args: HostArgs) -> Result<(), String> {
    let fail = |e: &dyn std::fmt::Display| e.to_string();
    // Before Servo starts a thread: only the protocol writer may reach the real stdout.
    let link = StdioLink::take()
        .map_err(|e| fail(&e))?
        .until_closed(args.until_closed);
    let mut limits = Limits::default();
    limits.max_surfaces = args.max_surfaces;
    limits.max_live_surfaces = args.max_live_surfaces;
    limits.max_sessions = args.max_sessions;
    let mut builder = HostBuilder::new()
        .client_id(PartyId::try_from(args.client_id.as_str()).map_err(|e| fail(&e))?)
        .limits(limits)
        .end_idle_sessions_after(Duration::from_secs(args.session_idle_secs))
        .warm_pool(0);
    // Off unless asked: `lineup host --engine servo` passes the flag unless
    // `--no-builtin-components`.
    builder = builder.builtin_components(
        args.builtin_components
            .then(ComponentOptions::default),
    );
    if let Some(conversation) = &args.conversation {
        builder = builder.conversation_id(
            ConversationId::try_from(conversation.as_str()).map_err(|e| fail(&e))?,
        );
    }
    let event_loop = lineup_host::event_loop().map_err(|e| fail(&e))?;
    let servo = ServoHostEngine::start(EngineConfig::default()).map_err(|e| fail(&e))?;
    let builder = builder.dangerous().engine(Rc::new(servo));
    link.run(builder, event_loop).map_err(|e| fail(&e))
}
